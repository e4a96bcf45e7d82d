//! The files port: what the agent's file tools, Skipper's and every
//! frontend's file API call, whatever holds the workspace. [`ConfinedFs`]
//! is the implementation on this host ([`LocalFiles`] hands it out); a
//! computer on another host would bring its own.
//!
//! An implementation keeps [`ConfinedFs`]'s contract: agent-visible paths
//! in and out, nothing outside the workspace reachable on a confined
//! computer, and the same error kinds.

use std::sync::Arc;

use async_trait::async_trait;

use super::search::{GlobResult, GrepQuery, GrepResult};
use super::{ConfinedFs, FileBytes, FileEntry, FileText, LineRange};
use crate::error::Result;
use crate::exec::Computer;

/// File operations on one computer's workspace (see [`ConfinedFs`] for
/// what each does).
#[async_trait]
pub trait Files: Send + Sync + std::fmt::Debug {
    /// Whether paths are confined to the workspace.
    fn is_confined(&self) -> bool;
    /// The entries of a directory (or the entry of a file), sorted by name.
    async fn list(&self, path: &str) -> Result<Vec<FileEntry>>;
    /// One entry; a symbolic link is described, not followed.
    async fn stat(&self, path: &str) -> Result<FileEntry>;
    /// Reads text: the whole file, or `lines`. Binary files are refused.
    async fn read(&self, path: &str, lines: Option<LineRange>) -> Result<FileText>;
    /// Reads up to `limit` raw bytes.
    async fn read_bytes(&self, path: &str, limit: usize) -> Result<FileBytes>;
    /// Writes a file, replacing its contents, creating it and its parents.
    async fn write(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry>;
    /// Creates a new file (and its parents), whole or not at all; refused
    /// with [`Error::Conflict`](crate::Error::Conflict) when `path` exists,
    /// which is left as it was.
    async fn create(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        super::create::create_new(self, path, contents).await
    }
    /// Creates a new file at `path` or, when that is taken, at the first
    /// free numbered name (`plan-2.md`, `plan-3.md`, …); never replaces one.
    async fn create_numbered(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        super::create::create_numbered(self, path, contents).await
    }
    /// Replaces a file only if its contents still have version `base`
    /// ([`content_version`](super::content_version) of what the writer
    /// read); [`Error::Conflict`](crate::Error::Conflict) when it changed or
    /// went, the file left as it is.
    async fn write_unchanged(
        &self,
        path: &str,
        contents: Vec<u8>,
        base: &str,
    ) -> Result<FileEntry> {
        super::version::write_unchanged(self, path, contents, base).await
    }
    /// Creates a directory and its missing parents; fine if it exists.
    async fn mkdir(&self, path: &str) -> Result<FileEntry>;
    /// Moves `from` to `to`; refused if `to` exists.
    async fn rename(&self, from: &str, to: &str) -> Result<FileEntry>;
    /// Deletes a file, a link, or (with `recursive`) a directory.
    async fn delete(&self, path: &str, recursive: bool) -> Result<()>;
    /// Searches file contents for a regular expression.
    async fn grep(&self, query: GrepQuery) -> Result<GrepResult>;
    /// Paths matching a glob such as `src/**/*.rs`.
    async fn glob(&self, pattern: &str) -> Result<GlobResult>;
}

/// Hands out the [`Files`] of a computer. The computer names its channel,
/// so a provider can keep some channels' files elsewhere.
pub trait FilesProvider: Send + Sync {
    /// The files of `computer`'s workspace; with `read_only`, every change
    /// is refused with that reason (an archived channel's workspace).
    fn files(&self, computer: &Computer, read_only: Option<String>) -> Result<Arc<dyn Files>>;
}

/// Implements [`Files`] for a wrapper of another (its `files` field) that
/// changes only how it writes: the reading side (listing, stat, reads and
/// search) is passed through, and the writing methods are given.
macro_rules! files_wrapper {
    ($wrapper:ty { $($writes:tt)* }) => {
        #[async_trait::async_trait]
        impl $crate::exec::files::Files for $wrapper {
            fn is_confined(&self) -> bool {
                self.files.is_confined()
            }
            async fn list(&self, path: &str) -> $crate::error::Result<Vec<$crate::exec::files::FileEntry>> {
                self.files.list(path).await
            }
            async fn stat(&self, path: &str) -> $crate::error::Result<$crate::exec::files::FileEntry> {
                self.files.stat(path).await
            }
            async fn read(
                &self,
                path: &str,
                lines: Option<$crate::exec::files::LineRange>,
            ) -> $crate::error::Result<$crate::exec::files::FileText> {
                self.files.read(path, lines).await
            }
            async fn read_bytes(&self, path: &str, limit: usize) -> $crate::error::Result<$crate::exec::files::FileBytes> {
                self.files.read_bytes(path, limit).await
            }
            async fn grep(&self, query: $crate::exec::files::GrepQuery) -> $crate::error::Result<$crate::exec::files::GrepResult> {
                self.files.grep(query).await
            }
            async fn glob(&self, pattern: &str) -> $crate::error::Result<$crate::exec::files::GlobResult> {
                self.files.glob(pattern).await
            }
            $($writes)*
        }
    };
}
pub(crate) use files_wrapper;

/// The files of this host's computers: a [`ConfinedFs`] per computer.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFiles;

impl FilesProvider for LocalFiles {
    fn files(&self, computer: &Computer, read_only: Option<String>) -> Result<Arc<dyn Files>> {
        let files = ConfinedFs::new(computer);
        Ok(Arc::new(match read_only {
            Some(reason) => files.read_only(reason),
            None => files,
        }))
    }
}

#[async_trait]
impl Files for ConfinedFs {
    fn is_confined(&self) -> bool {
        ConfinedFs::is_confined(self)
    }
    async fn list(&self, path: &str) -> Result<Vec<FileEntry>> {
        ConfinedFs::list(self, path).await
    }
    async fn stat(&self, path: &str) -> Result<FileEntry> {
        ConfinedFs::stat(self, path).await
    }
    async fn read(&self, path: &str, lines: Option<LineRange>) -> Result<FileText> {
        ConfinedFs::read(self, path, lines).await
    }
    async fn read_bytes(&self, path: &str, limit: usize) -> Result<FileBytes> {
        ConfinedFs::read_bytes(self, path, limit).await
    }
    async fn write(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        ConfinedFs::write(self, path, contents).await
    }
    async fn mkdir(&self, path: &str) -> Result<FileEntry> {
        ConfinedFs::mkdir(self, path).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<FileEntry> {
        ConfinedFs::rename(self, from, to).await
    }
    async fn delete(&self, path: &str, recursive: bool) -> Result<()> {
        ConfinedFs::delete(self, path, recursive).await
    }
    async fn grep(&self, query: GrepQuery) -> Result<GrepResult> {
        ConfinedFs::grep(self, query).await
    }
    async fn glob(&self, pattern: &str) -> Result<GlobResult> {
        ConfinedFs::glob(self, pattern).await
    }
}
