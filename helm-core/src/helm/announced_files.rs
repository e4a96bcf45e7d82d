//! A person's changes to a workspace, told to everyone in the channel: the
//! [`Files`] that [`Helm::files`](super::Helm::files) and
//! [`Helm::workspace_files`](super::Helm::workspace_files) hand out record
//! a `file.changed` event after each change they make, so every frontend
//! (the web UI, the CLI, Python) announces its saves alike and other
//! people's open views of the file learn of it at once.
//!
//! The event follows the change; a change whose event could not be
//! recorded still stands (and is logged), since the file is what matters.

use std::sync::Arc;

use crate::error::Result;
use crate::events::{EventBody, FileChange};
use crate::exec::{FileEntry, Files, content_version, files_wrapper};
use crate::model::{ChannelId, User, UserId};
use crate::store::Store;

/// A channel's [`Files`] on behalf of a person, announcing their changes.
pub(super) struct AnnouncedFiles {
    files: Arc<dyn Files>,
    store: Arc<dyn Store>,
    channel: ChannelId,
    user_id: UserId,
    by: String,
}

impl std::fmt::Debug for AnnouncedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnnouncedFiles")
            .field("files", &self.files)
            .field("channel", &self.channel)
            .field("user_id", &self.user_id)
            .finish_non_exhaustive()
    }
}

impl AnnouncedFiles {
    /// `files` of `channel`, changed by `actor`.
    pub(super) fn new(
        files: Arc<dyn Files>,
        store: Arc<dyn Store>,
        channel: ChannelId,
        actor: &User,
    ) -> Self {
        let by = match actor.display_name.trim() {
            "" => actor.name.clone(),
            name => name.to_string(),
        };
        AnnouncedFiles {
            files,
            store,
            channel,
            user_id: actor.id,
            by,
        }
    }

    /// Records that `path` had `change` (from `from`, to `version`).
    async fn announce(
        &self,
        change: FileChange,
        path: &str,
        from: Option<String>,
        version: Option<String>,
    ) {
        let body = EventBody::FileChanged {
            change,
            path: path.to_string(),
            from,
            version,
            user_id: self.user_id,
            by: self.by.clone(),
        };
        if let Err(e) = self.store.record_event(Some(self.channel), body).await {
            tracing::warn!(channel = %self.channel, path, error = %e,
                "a file change was made but could not be announced");
        }
    }

    /// The agent-visible path of `path` as it is now, for naming what is
    /// about to be moved or deleted (as given when it cannot be told).
    async fn visible(&self, path: &str) -> String {
        match self.files.stat(path).await {
            Ok(entry) => entry.path,
            Err(_) => path.to_string(),
        }
    }
}

files_wrapper!(AnnouncedFiles {
    async fn write(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        let version = content_version(&contents);
        let entry = self.files.write(path, contents).await?;
        self.announce(FileChange::Saved, &entry.path, None, Some(version))
            .await;
        Ok(entry)
    }
    async fn create(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        let version = content_version(&contents);
        let entry = self.files.create(path, contents).await?;
        self.announce(FileChange::Created, &entry.path, None, Some(version))
            .await;
        Ok(entry)
    }
    async fn create_numbered(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        let version = content_version(&contents);
        let entry = self.files.create_numbered(path, contents).await?;
        self.announce(FileChange::Created, &entry.path, None, Some(version))
            .await;
        Ok(entry)
    }
    async fn write_unchanged(
        &self,
        path: &str,
        contents: Vec<u8>,
        base: &str,
    ) -> Result<FileEntry> {
        let version = content_version(&contents);
        let entry = self.files.write_unchanged(path, contents, base).await?;
        self.announce(FileChange::Saved, &entry.path, None, Some(version))
            .await;
        Ok(entry)
    }
    async fn mkdir(&self, path: &str) -> Result<FileEntry> {
        let entry = self.files.mkdir(path).await?;
        self.announce(FileChange::FolderCreated, &entry.path, None, None)
            .await;
        Ok(entry)
    }
    async fn rename(&self, from: &str, to: &str) -> Result<FileEntry> {
        let was = self.visible(from).await;
        let entry = self.files.rename(from, to).await?;
        self.announce(FileChange::Moved, &entry.path, Some(was), None)
            .await;
        Ok(entry)
    }
    async fn delete(&self, path: &str, recursive: bool) -> Result<()> {
        let visible = self.visible(path).await;
        self.files.delete(path, recursive).await?;
        self.announce(FileChange::Deleted, &visible, None, None)
            .await;
        Ok(())
    }
});
