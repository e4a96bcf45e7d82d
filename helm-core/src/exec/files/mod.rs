//! File operations on a computer's workspace, for agents and for people:
//! list, stat, read (with line ranges), write, mkdir, move, delete, grep and
//! glob.
//!
//! [`ConfinedFs`] takes paths as the agent names them (`/workspace/notes.md`
//! or `notes.md`) and never touches anything outside the workspace:
//!
//! - `..` that climbs out and absolute paths elsewhere are refused before
//!   any disk access ("path escapes /workspace: ../x");
//! - every path is opened relative to the workspace with the kernel refusing
//!   steps that leave it, so a symbolic link to the outside (made by the
//!   agent's shell, even while the tool runs) is refused too;
//! - regular files with more than one hard link are refused for reading and
//!   writing, since another of their names may lie outside;
//! - walks (grep, glob, recursive delete) never follow links.
//!
//! Errors are [`Error::Invalid`] (a malformed path or argument),
//! [`Error::Forbidden`] (an escape), [`Error::Refused`] (a link, a
//! read-only workspace),
//! [`Error::NotFound`] and [`Error::Conflict`] (already exists, not empty),
//! each with a message naming the agent-visible path and never a host path.
//!
//! On Skipper's host computer the same API runs unconfined: absolute host
//! paths are allowed and links are followed.

mod change;
pub(crate) mod create;
mod locked;
mod open;
pub(in crate::exec) mod path;
mod port;
mod search;
mod version;
pub(crate) mod walk;

use std::io::{BufRead, BufReader, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use jiff::Timestamp;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use serde::{Deserialize, Serialize};

pub(crate) use locked::{LockedFiles, PathLocks};
pub(crate) use port::files_wrapper;
pub use port::{Files, FilesProvider, LocalFiles};
pub use search::{GlobResult, GrepMatch, GrepQuery, GrepResult};
pub use version::content_version;

use self::open::{Root, fs_error};
use self::path::ToolPath;
use super::computer::{Computer, SandboxUser};
use crate::error::{Error, Result};

/// The most text [`ConfinedFs::read`] returns at once.
pub const MAX_READ_TEXT: usize = 1024 * 1024;

/// What kind of thing a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// A file or directory, as listings and stat show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The agent-visible path (`/workspace/...`).
    pub path: String,
    /// The last component of the path.
    pub name: String,
    /// What it is.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits, such as `0o644`.
    pub mode: u32,
    /// Number of hard links.
    pub links: u64,
    /// Last modification.
    pub modified: Option<Timestamp>,
    /// Where a symbolic link points (as written in the link).
    pub link_target: Option<String>,
}

/// Which lines to read: 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRange {
    /// The first line (1-based).
    pub start: usize,
    /// The last line, inclusive; `None` reads to the end.
    pub end: Option<usize>,
}

/// Text read from a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileText {
    /// The agent-visible path.
    pub path: String,
    /// The lines read, each with its newline.
    pub content: String,
    /// The first line returned (1-based; 0 when nothing was).
    pub start_line: usize,
    /// The last line returned.
    pub end_line: usize,
    /// Lines in the file (counted up to where reading stopped).
    pub total_lines: usize,
    /// Whether reading stopped at [`MAX_READ_TEXT`] before the range ended.
    pub truncated: bool,
}

/// Raw bytes read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBytes {
    /// The agent-visible path.
    pub path: String,
    /// The bytes (at most the limit asked for).
    pub bytes: Vec<u8>,
    /// The file's size.
    pub size: u64,
    /// Whether the file was longer than the limit.
    pub truncated: bool,
}

/// File operations on one computer's workspace; cheap to clone.
#[derive(Clone)]
pub struct ConfinedFs {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    confined: bool,
    /// Who new files belong to (when the server is root).
    owner: Option<SandboxUser>,
    /// Why writes are refused, if they are.
    read_only: Option<String>,
}

impl std::fmt::Debug for ConfinedFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfinedFs")
            .field("confined", &self.inner.confined)
            .field("read_only", &self.inner.read_only)
            .finish_non_exhaustive()
    }
}

impl ConfinedFs {
    /// The file API of `computer`'s workspace.
    pub fn new(computer: &Computer) -> Self {
        let root_user = rustix::process::geteuid().is_root();
        ConfinedFs {
            inner: Arc::new(Inner {
                root: computer.workspace.clone(),
                confined: computer.is_confined(),
                owner: computer.user.filter(|_| root_user),
                read_only: None,
            }),
        }
    }

    /// The same workspace with every change refused, saying `reason`.
    pub fn read_only(self, reason: impl Into<String>) -> Self {
        ConfinedFs {
            inner: Arc::new(Inner {
                root: self.inner.root.clone(),
                confined: self.inner.confined,
                owner: self.inner.owner,
                read_only: Some(reason.into()),
            }),
        }
    }

    /// Whether paths are confined to the workspace.
    pub fn is_confined(&self) -> bool {
        self.inner.confined
    }

    /// The entries of a directory (or the entry of a file), sorted by name.
    pub async fn list(&self, path: &str) -> Result<Vec<FileEntry>> {
        let path = path.to_string();
        self.blocking(move |fs| fs.list_now(&path)).await
    }

    /// One entry; a symbolic link is described, not followed.
    pub async fn stat(&self, path: &str) -> Result<FileEntry> {
        let path = path.to_string();
        self.blocking(move |fs| fs.stat_now(&path)).await
    }

    /// Reads text: the whole file, or `lines`. Binary files are refused.
    pub async fn read(&self, path: &str, lines: Option<LineRange>) -> Result<FileText> {
        let path = path.to_string();
        self.blocking(move |fs| fs.read_now(&path, lines)).await
    }

    /// Reads up to `limit` raw bytes.
    pub async fn read_bytes(&self, path: &str, limit: usize) -> Result<FileBytes> {
        let path = path.to_string();
        self.blocking(move |fs| fs.read_bytes_now(&path, limit))
            .await
    }

    /// Writes a file, replacing its contents, creating it and its parent
    /// directories when missing.
    pub async fn write(&self, path: &str, contents: impl Into<Vec<u8>>) -> Result<FileEntry> {
        let path = path.to_string();
        let contents = contents.into();
        self.blocking(move |fs| fs.write_now(&path, &contents))
            .await
    }

    /// Creates a directory and its missing parents; fine if it exists.
    pub async fn mkdir(&self, path: &str) -> Result<FileEntry> {
        let path = path.to_string();
        self.blocking(move |fs| fs.mkdir_now(&path)).await
    }

    /// Moves (renames) `from` to `to`; refused if `to` exists. Parents of
    /// `to` are created.
    pub async fn rename(&self, from: &str, to: &str) -> Result<FileEntry> {
        let (from, to) = (from.to_string(), to.to_string());
        self.blocking(move |fs| fs.rename_now(&from, &to)).await
    }

    /// Deletes a file, a link, or a directory (with `recursive`, and its
    /// contents). The workspace itself cannot be deleted.
    pub async fn delete(&self, path: &str, recursive: bool) -> Result<()> {
        let path = path.to_string();
        self.blocking(move |fs| fs.delete_now(&path, recursive))
            .await
    }

    /// Searches file contents for a regular expression.
    pub async fn grep(&self, query: GrepQuery) -> Result<GrepResult> {
        self.blocking(move |fs| search::grep(fs, &query)).await
    }

    /// Paths matching a glob such as `src/**/*.rs`.
    pub async fn glob(&self, pattern: &str) -> Result<GlobResult> {
        let pattern = pattern.to_string();
        self.blocking(move |fs| search::glob(fs, &pattern)).await
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Inner) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || work(&inner))
            .await
            .map_err(|e| Error::Internal(format!("a file operation failed to finish: {e}")))?
    }
}

/// Checks that `input` names a directory of `computer`'s workspace and
/// returns it relative to the workspace (absolute on a host computer).
pub(crate) async fn resolve_dir(computer: &Computer, input: &str) -> Result<PathBuf> {
    let input = input.to_string();
    ConfinedFs::new(computer)
        .blocking(move |fs| {
            let path = fs.resolve(&input)?;
            let root = fs.open_root()?;
            root.open(&path.rel, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())
                .map_err(|e| fs_error(e, "entering", &path.visible))?;
            Ok(path.rel)
        })
        .await
}

impl Inner {
    fn resolve(&self, input: &str) -> Result<ToolPath> {
        if self.confined {
            path::confined(input)
        } else {
            path::host(&self.root, input)
        }
    }

    fn open_root(&self) -> Result<Root> {
        Root::open_dir(&self.root, self.confined)
            .map_err(|e| fs_error(e, "opening the workspace", &self.visible_root()))
    }

    fn visible_root(&self) -> String {
        if self.confined {
            super::computer::AGENT_ROOT.to_string()
        } else {
            self.root.display().to_string()
        }
    }

    fn writable(&self) -> Result<()> {
        match &self.read_only {
            Some(reason) => Err(Error::Refused(reason.clone())),
            None => Ok(()),
        }
    }

    /// The error for `err` on `path`. A link the tools would not follow
    /// (writes never follow a final link) that leads out of the workspace
    /// is an escape, forbidden exactly as reading through it is; a link that
    /// stays inside is only refused.
    fn link_error(
        &self,
        root: &Root,
        path: &ToolPath,
        err: std::io::Error,
        action: &'static str,
    ) -> Error {
        let is_loop = err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error());
        if self.confined && is_loop {
            // Following it, under the same confinement, says where it leads.
            if let Err(probe) = root.open(&path.rel, OFlags::PATH, Mode::empty())
                && probe.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error())
            {
                return path::escapes(&path.visible);
            }
        }
        fs_error(err, action, &path.visible)
    }

    /// Opens a regular file for reading or writing, refusing other kinds
    /// and, when confined, files with other hard links.
    fn open_file(&self, root: &Root, path: &ToolPath, flags: OFlags) -> Result<(OwnedFd, Stat)> {
        // O_NONBLOCK: opening a FIFO must not hang the tool.
        let fd = root
            .open(
                &path.rel,
                flags | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::empty(),
            )
            .map_err(|e| self.link_error(root, path, e, "opening"))?;
        let stat =
            rustix::fs::fstat(&fd).map_err(|e| fs_error(e.into(), "reading", &path.visible))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => {
                return Err(Error::invalid(
                    "path",
                    format!("{} is a directory", path.visible),
                ));
            }
            _ => {
                return Err(Error::invalid(
                    "path",
                    format!("{} is not a regular file", path.visible),
                ));
            }
        }
        if self.confined && stat.st_nlink > 1 {
            return Err(Error::Refused(format!(
                "{} has {} hard links; another of its names may be outside /workspace, so the \
                 file tools leave it alone",
                path.visible, stat.st_nlink
            )));
        }
        // Reads and writes below are ordinary blocking I/O.
        rustix::fs::fcntl_setfl(&fd, flags & !OFlags::NONBLOCK)
            .map_err(|e| fs_error(e.into(), "opening", &path.visible))?;
        Ok((fd, stat))
    }

    fn list_now(&self, input: &str) -> Result<Vec<FileEntry>> {
        let path = self.resolve(input)?;
        let root = self.open_root()?;
        let dir = root
            .open(&path.rel, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())
            .map_err(|e| fs_error(e, "listing", &path.visible))?;
        let stat =
            rustix::fs::fstat(&dir).map_err(|e| fs_error(e.into(), "listing", &path.visible))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
            return Ok(vec![entry_of(&path, &stat, None)]);
        }
        let names = walk::names(dir.as_fd()).map_err(|e| fs_error(e, "listing", &path.visible))?;
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            let Ok(stat) = rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let child = path.child(&name.to_string_lossy());
            let target = link_target(&dir, &name, &stat);
            entries.push(entry_of(&child, &stat, target));
        }
        Ok(entries)
    }

    fn stat_now(&self, input: &str) -> Result<FileEntry> {
        let path = self.resolve(input)?;
        let root = self.open_root()?;
        if path.is_root() {
            let fd = root
                .open(&path.rel, OFlags::PATH, Mode::empty())
                .map_err(|e| fs_error(e, "reading", &path.visible))?;
            let stat =
                rustix::fs::fstat(&fd).map_err(|e| fs_error(e.into(), "reading", &path.visible))?;
            return Ok(entry_of(&path, &stat, None));
        }
        let (parent, name) = root
            .parent(&path.rel)
            .map_err(|e| fs_error(e, "reading", &path.visible))?;
        let stat = rustix::fs::statat(&parent, &name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| fs_error(e.into(), "reading", &path.visible))?;
        let target = link_target(&parent, &name, &stat);
        Ok(entry_of(&path, &stat, target))
    }

    fn read_now(&self, input: &str, lines: Option<LineRange>) -> Result<FileText> {
        let range = lines.unwrap_or(LineRange {
            start: 1,
            end: None,
        });
        if range.start == 0 || range.end.is_some_and(|end| end < range.start) {
            return Err(Error::invalid(
                "line range",
                "lines are numbered from 1 and the end may not come before the start",
            ));
        }
        let path = self.resolve(input)?;
        let root = self.open_root()?;
        let (fd, _) = self.open_file(&root, &path, OFlags::RDONLY)?;
        let mut reader = BufReader::new(std::fs::File::from(fd));
        let mut head = reader
            .fill_buf()
            .map_err(|e| fs_error(e, "reading", &path.visible))?;
        head = &head[..head.len().min(8192)];
        if head.contains(&0) {
            return Err(Error::invalid(
                "file",
                format!(
                    "{} looks binary; read it with a command instead",
                    path.visible
                ),
            ));
        }
        let mut text = FileText {
            path: path.visible.clone(),
            content: String::new(),
            start_line: 0,
            end_line: 0,
            total_lines: 0,
            truncated: false,
        };
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| fs_error(e, "reading", &path.visible))?;
            if n == 0 {
                break;
            }
            text.total_lines += 1;
            let number = text.total_lines;
            let wanted = number >= range.start && range.end.is_none_or(|end| number <= end);
            if !wanted {
                continue;
            }
            if text.content.len() + line.len() > MAX_READ_TEXT {
                text.truncated = true;
                break;
            }
            text.content.push_str(&String::from_utf8_lossy(&line));
            if text.start_line == 0 {
                text.start_line = number;
            }
            text.end_line = number;
        }
        Ok(text)
    }

    fn read_bytes_now(&self, input: &str, limit: usize) -> Result<FileBytes> {
        let path = self.resolve(input)?;
        let root = self.open_root()?;
        let (fd, stat) = self.open_file(&root, &path, OFlags::RDONLY)?;
        let mut bytes = Vec::new();
        std::fs::File::from(fd)
            .take(limit as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| fs_error(e, "reading", &path.visible))?;
        let size = stat.st_size.max(0) as u64;
        Ok(FileBytes {
            path: path.visible,
            truncated: size > bytes.len() as u64,
            bytes,
            size,
        })
    }
}

fn link_target(dir: &OwnedFd, name: &std::ffi::OsStr, stat: &Stat) -> Option<String> {
    if FileType::from_raw_mode(stat.st_mode) != FileType::Symlink {
        return None;
    }
    rustix::fs::readlinkat(dir, name, Vec::new())
        .ok()
        .map(|t| t.to_string_lossy().into_owned())
}

fn entry_of(path: &ToolPath, stat: &Stat, link_target: Option<String>) -> FileEntry {
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => FileKind::File,
        FileType::Directory => FileKind::Dir,
        FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Other,
    };
    let name = match path.file_name() {
        Some(n) => n.to_string_lossy().into_owned(),
        None => path
            .visible
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string(),
    };
    FileEntry {
        path: path.visible.clone(),
        name,
        kind,
        size: stat.st_size.max(0) as u64,
        mode: stat.st_mode & 0o7777,
        links: stat.st_nlink,
        modified: Timestamp::new(stat.st_mtime, stat.st_mtime_nsec as i32).ok(),
        link_target,
    }
}
