//! Artifacts, as the facade offers them: the files a channel's work
//! produced (by the agent's tools, uploaded by people, or made in terminals
//! and found by a rescan), each with its thread and author.

use crate::error::{Error, Result};
use crate::model::{Artifact, ArtifactKind, ChannelRef, ThreadId, User};
use crate::world::scan_workspace;

use super::Helm;

/// Who files found by a rescan are recorded as made by: they were made in
/// a terminal or by a command outside any agent turn.
pub const RESCAN_AUTHOR: &str = "terminal";

impl Helm {
    /// The artifacts of a channel `actor` may see (or of one of its
    /// threads), oldest first.
    pub async fn channel_artifacts(
        &self,
        actor: &User,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Artifact>> {
        let record = self.visible_channel(actor, channel).await?;
        if let Some(thread) = thread {
            let found = self.inner.store.thread(thread).await?;
            if found.channel_id != record.channel.id {
                return Err(Error::not_found("thread", thread));
            }
        }
        self.inner.store.artifacts(record.channel.id, thread).await
    }

    /// Records a file `actor` uploaded to `channel`'s workspace (an
    /// agent-visible path) as an artifact of kind `upload`. Uploading the
    /// same path again marks it changed. Returns the artifact.
    pub async fn record_upload(
        &self,
        actor: &User,
        channel: &ChannelRef,
        path: &str,
    ) -> Result<Artifact> {
        let record = self.computer_channel(actor, channel).await?;
        let id = record.channel.id;
        self.inner
            .store
            .record_artifacts(
                id,
                None,
                ArtifactKind::Upload,
                &actor.name,
                vec![path.to_string()],
                true,
            )
            .await?;
        self.inner
            .store
            .artifacts(id, None)
            .await?
            .into_iter()
            .find(|a| a.path == path)
            .ok_or_else(|| Error::Internal(format!("upload {path} was not recorded")))
    }

    /// Records the files of `channel`'s workspace that are not artifacts
    /// yet (made in terminals, or by commands outside agent turns), as made
    /// by [`RESCAN_AUTHOR`]. Returns those added.
    pub async fn rescan_artifacts(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<Vec<Artifact>> {
        let record = self.computer_channel(actor, channel).await?;
        let computer = self.computer_of(&record).await?;
        let paths = if computer.isolation == crate::exec::Isolation::Remote {
            let files = self.inner.computer.files_of(&computer, None)?;
            crate::world::scan_files(files.as_ref()).await?
        } else {
            let workspace = self.inner.root.world(record.channel.id).workspace();
            tokio::task::spawn_blocking(move || scan_workspace(&workspace))
                .await
                .map_err(|e| Error::Internal(format!("the workspace scan failed: {e}")))?
        };
        self.inner
            .store
            .record_artifacts(
                record.channel.id,
                None,
                ArtifactKind::File,
                RESCAN_AUTHOR,
                paths,
                false,
            )
            .await
    }
}
