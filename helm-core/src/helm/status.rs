//! `status`: what a data root holds, at a glance.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::memory::config::RecallMode;
use crate::model::{Agent, ChannelRef, HOME_CHANNEL, User, Workspace};
use crate::store::StoreStats;

use super::Helm;

/// A summary of the workspace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    /// The data root.
    pub data_dir: PathBuf,
    /// The workspace.
    pub workspace: Workspace,
    /// The Captain.
    pub captain: User,
    /// Skipper.
    pub skipper: Agent,
    /// How recall works: by meaning with which model, or by words and why.
    pub recall: RecallMode,
    /// Counts.
    #[serde(flatten)]
    pub stats: StoreStats,
}

impl Helm {
    /// A summary of the workspace.
    pub async fn status(&self) -> Result<Status> {
        let home = self
            .channel(&ChannelRef::Name(crate::model::ChannelName::from_stored(
                HOME_CHANNEL.to_string(),
            )))
            .await?;
        Ok(Status {
            data_dir: self.data_root().path().to_path_buf(),
            workspace: self.workspace().clone(),
            captain: self.captain().await?,
            skipper: home.agent,
            recall: self.recall_mode().clone(),
            stats: self.store().stats().await?,
        })
    }
}
