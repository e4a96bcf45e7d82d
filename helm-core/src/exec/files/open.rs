//! Opening paths under a root without ever leaving it.
//!
//! The file tools run in the server, often as root, while the agent's own
//! processes may be changing the workspace at the same moment. Checking a
//! path and then opening it would race: a directory swapped for a symbolic
//! link between the two steps would lead the server outside. So every path
//! is opened relative to a descriptor of the root with `openat2` and
//! `RESOLVE_BENEATH`: the kernel itself refuses any step (a `..`, an
//! absolute or escaping symbolic link, a `/proc` magic link) that leaves the
//! root. Where `openat2` is missing (Linux before 5.6), each component is
//! opened in turn with `O_NOFOLLOW`, which refuses symbolic links altogether.
//! Every later operation is an `*at` call on a descriptor so obtained and a
//! single name, which no one can redirect.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::error::Error;

/// Whether this kernel has `openat2`: 0 unknown, 1 yes, 2 no. A fact about
/// the host, the same for every caller.
static OPENAT2: AtomicU8 = AtomicU8::new(0);

/// A directory that paths are resolved under.
pub(crate) struct Root {
    fd: OwnedFd,
    confined: bool,
}

impl Root {
    /// Opens `dir` as a root. `confined`: nothing outside it may be reached.
    pub(crate) fn open_dir(dir: &Path, confined: bool) -> io::Result<Root> {
        let fd = rustix::fs::open(
            dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root { fd, confined })
    }

    /// A directory descriptor obtained under a root, as a root of its own.
    pub(crate) fn from_fd(fd: OwnedFd, confined: bool) -> Root {
        Root { fd, confined }
    }

    /// Opens `rel` under the root. When confined, symbolic links are followed
    /// only while they stay inside.
    pub(crate) fn open(&self, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let flags = flags | OFlags::CLOEXEC;
        if OPENAT2.load(Ordering::Relaxed) != 2 {
            let resolve = if self.confined {
                ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS
            } else {
                ResolveFlags::empty()
            };
            let mut attempts = 0;
            loop {
                match rustix::fs::openat2(&self.fd, rel, flags, mode, resolve) {
                    // A rename elsewhere raced the lookup of `..`; try again.
                    Err(Errno::AGAIN) if attempts < 8 => attempts += 1,
                    // No openat2 here (or a seccomp filter that hides it).
                    Err(Errno::NOSYS) => {
                        OPENAT2.store(2, Ordering::Relaxed);
                        tracing::warn!(
                            "openat2 is unavailable; file tools refuse every symbolic link instead"
                        );
                        break;
                    }
                    other => {
                        OPENAT2.store(1, Ordering::Relaxed);
                        return other.map_err(Into::into);
                    }
                }
            }
        }
        if self.confined {
            open_without_links(&self.fd, rel, flags, mode)
        } else {
            Ok(rustix::fs::openat(&self.fd, rel, flags, mode)?)
        }
    }

    /// Opens the directory that holds `rel`'s last component, and names it.
    pub(crate) fn parent(&self, rel: &Path) -> io::Result<(OwnedFd, OsString)> {
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        let fd = self.open(parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        Ok((fd, name.to_os_string()))
    }
}

/// Opens `rel` one component at a time, refusing symbolic links everywhere.
fn open_without_links(
    root: &OwnedFd,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p),
            _ => None,
        })
        .collect();
    if rel
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::RootDir))
    {
        return Err(Errno::XDEV.into());
    }
    let Some((last, dirs)) = parts.split_last() else {
        return Ok(rustix::fs::openat(
            root,
            ".",
            flags | OFlags::NOFOLLOW,
            mode,
        )?);
    };
    let mut current: Option<OwnedFd> = None;
    for dir in dirs {
        let base = current.as_ref().unwrap_or(root);
        let next = rustix::fs::openat(
            base,
            *dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        current = Some(next);
    }
    let base = current.as_ref().unwrap_or(root);
    Ok(rustix::fs::openat(
        base,
        *last,
        flags | OFlags::NOFOLLOW,
        mode,
    )?)
}

/// A file-system error, in the terms of the path the caller gave.
pub(crate) fn fs_error(err: io::Error, action: &'static str, visible: &str) -> Error {
    let Some(code) = err.raw_os_error().map(Errno::from_raw_os_error) else {
        return Error::io(action, visible, err);
    };
    match code {
        Errno::NOENT => Error::not_found("file", visible),
        Errno::XDEV => super::path::escapes(visible),
        Errno::LOOP => Error::Refused(format!(
            "{visible} is (or passes through) a symbolic link that the file tools do not follow"
        )),
        Errno::NOTDIR => Error::invalid(
            "path",
            format!("{visible}: a part of it is not a directory"),
        ),
        Errno::ISDIR => Error::invalid("path", format!("{visible} is a directory")),
        Errno::EXIST => Error::Conflict(format!("{visible} already exists")),
        Errno::NOTEMPTY => Error::Conflict(format!("{visible} is not empty")),
        Errno::NAMETOOLONG => Error::invalid("path", format!("{visible} is too long")),
        Errno::NXIO => Error::invalid("path", format!("{visible} is not a regular file")),
        Errno::ACCESS | Errno::PERM | Errno::ROFS => {
            Error::Refused(format!("{visible}: permission denied"))
        }
        _ => Error::io(action, visible, err),
    }
}
