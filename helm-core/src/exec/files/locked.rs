//! One writer at a time per file, among everything that writes through
//! Helm: a person's versioned save reads, compares and writes while it
//! holds its path's lock, and the agent's file tools take the same lock
//! to write, so no write through Helm lands between the check and the
//! save. (A shell command in the workspace is not a Helm write and is not
//! held back; the check still tells a save that lost to one.)
//!
//! [`LockedFiles`] wraps whatever [`Files`] a computer has, so the rule
//! holds on every computer; [`PathLocks`] is shared by every wrapper of
//! one Helm (see `ComputerState::files_of`).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::{FileEntry, Files, files_wrapper};
use crate::error::{Error, Result};
use crate::exec::Computer;
use crate::model::ChannelId;

/// Which workspace a path is in (its channel and directory: a remote
/// computer's may be `/workspace` for every channel), and the path in it.
type Key = (Option<ChannelId>, PathBuf, PathBuf);

/// The write locks of files, by workspace and path. An entry lives while
/// someone holds or waits for it; the map drops the dead ones as it grows.
#[derive(Debug, Default)]
pub(crate) struct PathLocks {
    locks: Mutex<HashMap<Key, Weak<AsyncMutex<()>>>>,
}

impl PathLocks {
    /// Waits for and takes the lock of `path` in `workspace`.
    async fn lock(&self, workspace: &Workspace, path: &str) -> Result<OwnedMutexGuard<()>> {
        let key = (workspace.0, workspace.1.clone(), lock_name(path));
        let lock = {
            let mut locks = self
                .locks
                .lock()
                .map_err(|_| Error::Internal("the file locks were poisoned".into()))?;
            match locks.get(&key).and_then(Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    if locks.len() >= 64 {
                        locks.retain(|_, lock| lock.strong_count() > 0);
                    }
                    let lock = Arc::new(AsyncMutex::new(()));
                    locks.insert(key, Arc::downgrade(&lock));
                    lock
                }
            }
        };
        Ok(lock.lock_owned().await)
    }

    /// The locks of two paths (a move's), taken in one order whoever asks,
    /// so two moves between the same names cannot wait on each other.
    async fn lock_two(
        &self,
        workspace: &Workspace,
        a: &str,
        b: &str,
    ) -> Result<(OwnedMutexGuard<()>, Option<OwnedMutexGuard<()>>)> {
        let (first, second) = match lock_name(a).cmp(&lock_name(b)) {
            std::cmp::Ordering::Equal => return Ok((self.lock(workspace, a).await?, None)),
            std::cmp::Ordering::Less => (a, b),
            std::cmp::Ordering::Greater => (b, a),
        };
        let first = self.lock(workspace, first).await?;
        let second = self.lock(workspace, second).await?;
        Ok((first, Some(second)))
    }
}

/// The name a path is locked by: relative to `/workspace` (as the agent
/// and the file API both may write it), with `.` and empty parts dropped
/// and `..` applied, so `notes/./plan.md` and `/workspace/notes/plan.md`
/// share a lock. Paths that escape are refused later by the files
/// themselves; their lock name does not matter.
fn lock_name(path: &str) -> PathBuf {
    let path = path
        .strip_prefix("/workspace/")
        .or_else(|| (path == "/workspace").then_some(""))
        .unwrap_or(path);
    let mut out = PathBuf::new();
    for part in Path::new(path).components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            part => out.push(part),
        }
    }
    out
}

/// A workspace: its channel and directory.
#[derive(Debug)]
struct Workspace(Option<ChannelId>, PathBuf);

/// A computer's [`Files`] whose writes take their path's lock (see the
/// module's docs).
#[derive(Debug)]
pub(crate) struct LockedFiles {
    files: Arc<dyn Files>,
    locks: Arc<PathLocks>,
    workspace: Workspace,
}

impl LockedFiles {
    /// `files` of `computer`'s workspace, locking through `locks`.
    pub(crate) fn new(files: Arc<dyn Files>, locks: Arc<PathLocks>, computer: &Computer) -> Self {
        LockedFiles {
            files,
            locks,
            workspace: Workspace(computer.channel, computer.workspace.clone()),
        }
    }
}

files_wrapper!(LockedFiles {
    async fn write(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        let _held = self.locks.lock(&self.workspace, path).await?;
        self.files.write(path, contents).await
    }
    async fn create(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        let _held = self.locks.lock(&self.workspace, path).await?;
        self.files.create(path, contents).await
    }
    async fn create_numbered(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        // Never replaces a file, whatever the race: nothing to hold.
        self.files.create_numbered(path, contents).await
    }
    async fn write_unchanged(
        &self,
        path: &str,
        contents: Vec<u8>,
        base: &str,
    ) -> Result<FileEntry> {
        let _held = self.locks.lock(&self.workspace, path).await?;
        self.files.write_unchanged(path, contents, base).await
    }
    async fn mkdir(&self, path: &str) -> Result<FileEntry> {
        self.files.mkdir(path).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<FileEntry> {
        let _held = self.locks.lock_two(&self.workspace, from, to).await?;
        self.files.rename(from, to).await
    }
    async fn delete(&self, path: &str, recursive: bool) -> Result<()> {
        let _held = self.locks.lock(&self.workspace, path).await?;
        self.files.delete(path, recursive).await
    }
});

#[cfg(test)]
mod tests {
    use super::lock_name;
    use std::path::PathBuf;

    #[test]
    fn one_file_has_one_lock_name_however_it_is_written() {
        let plan = PathBuf::from("notes/plan.md");
        assert_eq!(lock_name("notes/plan.md"), plan);
        assert_eq!(lock_name("/workspace/notes/plan.md"), plan);
        assert_eq!(lock_name("./notes//x/../plan.md"), plan);
        assert_ne!(lock_name("/etc/notes/plan.md"), plan);
    }
}
