//! The file operations that change a workspace: write, mkdir, move and
//! delete. Each opens its parent directory under the root and then acts on
//! one name with an `*at` call, never following a final link; new files
//! and directories are handed to the sandbox user.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::open::{Root, fs_error};
use super::path::ToolPath;
use super::{FileEntry, Inner, entry_of, link_target, walk};
use crate::error::{Error, Result};

impl Inner {
    pub(super) fn write_now(&self, input: &str, contents: &[u8]) -> Result<FileEntry> {
        self.writable()?;
        let path = self.resolve(input)?;
        check_new_name(&path)?;
        if path.is_root() {
            return Err(Error::invalid(
                "path",
                format!("{} is a directory", path.visible),
            ));
        }
        let root = self.open_root()?;
        let parent_rel = path.rel.parent().map(PathBuf::from).unwrap_or_default();
        self.make_dirs(&root, &parent_rel, &path)?;
        let (parent, name) = root
            .parent(&path.rel)
            .map_err(|e| fs_error(e, "writing", &path.visible))?;
        // Create it if it is new; otherwise open what is there without
        // following a link and check it before changing a byte.
        let created = rustix::fs::openat(
            &parent,
            &name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        );
        let fd = match created {
            Ok(fd) => {
                self.give_fd(&fd, &path)?;
                fd
            }
            Err(rustix::io::Errno::EXIST) => {
                let child = ToolPath {
                    rel: PathBuf::from(&name),
                    visible: path.visible.clone(),
                };
                let parent_root = Root::from_fd(parent, self.confined);
                let (fd, _) =
                    self.open_file(&parent_root, &child, OFlags::WRONLY | OFlags::NOFOLLOW)?;
                rustix::fs::ftruncate(&fd, 0)
                    .map_err(|e| fs_error(e.into(), "writing", &path.visible))?;
                fd
            }
            Err(e) => return Err(fs_error(e.into(), "writing", &path.visible)),
        };
        let mut file = std::fs::File::from(fd);
        file.write_all(contents)
            .and_then(|()| file.flush())
            .map_err(|e| fs_error(e, "writing", &path.visible))?;
        let stat =
            rustix::fs::fstat(&file).map_err(|e| fs_error(e.into(), "writing", &path.visible))?;
        Ok(entry_of(&path, &stat, None))
    }

    pub(super) fn mkdir_now(&self, input: &str) -> Result<FileEntry> {
        self.writable()?;
        let path = self.resolve(input)?;
        check_new_name(&path)?;
        let root = self.open_root()?;
        self.make_dirs(&root, &path.rel, &path)?;
        drop(root);
        self.stat_now(input)
    }

    /// Creates `rel` and its missing parents under `root`, one component at
    /// a time, each new one owned by the sandbox user.
    fn make_dirs(&self, root: &Root, rel: &std::path::Path, path: &ToolPath) -> Result<()> {
        let mut done = PathBuf::new();
        for part in rel.components() {
            let std::path::Component::Normal(part) = part else {
                if matches!(part, std::path::Component::RootDir) {
                    done.push("/");
                }
                continue;
            };
            let dir = root
                .open(&done, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())
                .map_err(|e| fs_error(e, "creating", &path.visible))?;
            match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o755)) {
                Ok(()) => {
                    if let Some(owner) = self.owner {
                        rustix::fs::chownat(
                            &dir,
                            part,
                            Some(rustix::fs::Uid::from_raw(owner.uid)),
                            Some(rustix::fs::Gid::from_raw(owner.gid)),
                            AtFlags::SYMLINK_NOFOLLOW,
                        )
                        .map_err(|e| fs_error(e.into(), "creating", &path.visible))?;
                    }
                }
                Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(fs_error(e.into(), "creating", &path.visible)),
            }
            done.push(part);
        }
        // What exists must be a directory reachable without leaving the root.
        root.open(&done, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())
            .map_err(|e| fs_error(e, "creating", &path.visible))?;
        Ok(())
    }

    pub(super) fn rename_now(&self, from: &str, to: &str) -> Result<FileEntry> {
        self.writable()?;
        let src = self.resolve(from)?;
        let dst = self.resolve(to)?;
        check_new_name(&dst)?;
        if src.is_root() || dst.is_root() {
            return Err(Error::Refused(
                "the workspace itself cannot be moved".into(),
            ));
        }
        let root = self.open_root()?;
        let (src_dir, src_name) = root
            .parent(&src.rel)
            .map_err(|e| fs_error(e, "moving", &src.visible))?;
        // The source must exist before parents of the destination appear.
        rustix::fs::statat(&src_dir, &src_name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| fs_error(e.into(), "moving", &src.visible))?;
        let dst_parent = dst.rel.parent().map(PathBuf::from).unwrap_or_default();
        self.make_dirs(&root, &dst_parent, &dst)?;
        let (dst_dir, dst_name) = root
            .parent(&dst.rel)
            .map_err(|e| fs_error(e, "moving", &dst.visible))?;
        rustix::fs::renameat_with(
            &src_dir,
            &src_name,
            &dst_dir,
            &dst_name,
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(|e| match e {
            rustix::io::Errno::EXIST => Error::Conflict(format!("{} already exists", dst.visible)),
            rustix::io::Errno::INVAL => Error::invalid(
                "path",
                format!("{} cannot be moved into itself", src.visible),
            ),
            e => fs_error(e.into(), "moving", &src.visible),
        })?;
        let stat = rustix::fs::statat(&dst_dir, &dst_name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| fs_error(e.into(), "moving", &dst.visible))?;
        let target = link_target(&dst_dir, &dst_name, &stat);
        Ok(entry_of(&dst, &stat, target))
    }

    pub(super) fn delete_now(&self, input: &str, recursive: bool) -> Result<()> {
        self.writable()?;
        let path = self.resolve(input)?;
        if path.is_root() {
            return Err(Error::Refused(
                "the workspace itself cannot be deleted".into(),
            ));
        }
        let root = self.open_root()?;
        let (parent, name) = root
            .parent(&path.rel)
            .map_err(|e| fs_error(e, "deleting", &path.visible))?;
        let stat = rustix::fs::statat(&parent, &name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| fs_error(e.into(), "deleting", &path.visible))?;
        let is_dir = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
        let outcome = if is_dir && recursive {
            walk::remove_tree(parent.as_fd(), &name, 0)
        } else if is_dir {
            rustix::fs::unlinkat(&parent, &name, AtFlags::REMOVEDIR).map_err(Into::into)
        } else {
            rustix::fs::unlinkat(&parent, &name, AtFlags::empty()).map_err(Into::into)
        };
        outcome.map_err(
            |e| match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
                Some(rustix::io::Errno::NOTEMPTY) => Error::Conflict(format!(
                    "{} is not empty; delete it recursively to remove its contents",
                    path.visible
                )),
                _ => fs_error(e, "deleting", &path.visible),
            },
        )
    }

    /// Gives a file the server just created to the sandbox user.
    fn give_fd(&self, fd: &OwnedFd, path: &ToolPath) -> Result<()> {
        if let Some(owner) = self.owner {
            rustix::fs::fchown(
                fd,
                Some(rustix::fs::Uid::from_raw(owner.uid)),
                Some(rustix::fs::Gid::from_raw(owner.gid)),
            )
            .map_err(|e| fs_error(e.into(), "writing", &path.visible))?;
        }
        Ok(())
    }
}

/// Names Helm creates hold no control characters (a newline, an escape
/// sequence), whichever way they come: uploads, the file API, an agent's
/// file tools. (A shell can still make such names; they are listed and
/// read like any other.)
fn check_new_name(path: &ToolPath) -> Result<()> {
    if path.rel.to_string_lossy().chars().any(|c| c.is_control()) {
        return Err(Error::invalid(
            "path",
            format!(
                "{:?} contains control characters (such as a newline); choose a name without them",
                path.visible
            ),
        ));
    }
    Ok(())
}
