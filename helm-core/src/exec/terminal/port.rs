//! The terminals port: what the facade calls to open, find and close the
//! workspace's terminals. [`LocalTerminals`] (PTYs on this host, kept by a
//! [`TerminalManager`]) is the default.
//!
//! Sessions are [`TerminalSession`]s: PTYs of this process, or shells on a
//! remote computer's server ([`RemoteComputers`](crate::exec::RemoteComputers)
//! implements this port for those).

use std::sync::Arc;

use async_trait::async_trait;

use super::{Opener, TerminalInfo, TerminalManager, TerminalSession, TerminalSize};
use crate::error::Result;
use crate::exec::{Computer, LocalComputers, TerminalLimits};
use crate::model::ChannelId;

/// The open terminals of a workspace (see [`TerminalManager`] for the
/// limits the local one keeps).
#[async_trait]
pub trait Terminals: Send + Sync {
    /// Opens a login shell in `computer`'s workspace, for `opener` (within
    /// the per-person limits) or for the server itself (`None`).
    async fn open(
        &self,
        computer: &Computer,
        size: TerminalSize,
        opener: Option<Opener>,
    ) -> Result<Arc<TerminalSession>>;
    /// A running terminal by id.
    fn get(&self, id: u64) -> Result<Arc<TerminalSession>>;
    /// The running terminals, of one channel or of all (`None`).
    fn list(&self, channel: Option<ChannelId>) -> Vec<TerminalInfo>;
    /// Closes a terminal; returns once its shell has been reaped.
    async fn close(&self, id: u64) -> Result<()>;
    /// Closes every terminal of a channel (when it is archived).
    async fn close_channel(&self, channel: ChannelId) -> Result<()>;
}

/// Terminals on this host: PTYs under the local executor's isolation.
///
/// They launch through this host's [`LocalComputers`] even when commands
/// are sent elsewhere, since a PTY can only be opened here.
pub struct LocalTerminals {
    manager: TerminalManager,
    computers: Arc<LocalComputers>,
}

impl LocalTerminals {
    /// No terminals yet, with `limits`, launching through `computers`.
    pub fn new(limits: TerminalLimits, computers: Arc<LocalComputers>) -> Self {
        Self::for_node(limits, computers, 0)
    }

    /// The same, on the node numbered `node` of a shared store (see
    /// [`terminal_node`](super::terminal_node)).
    pub fn for_node(limits: TerminalLimits, computers: Arc<LocalComputers>, node: u32) -> Self {
        LocalTerminals {
            manager: TerminalManager::for_node(limits, node),
            computers,
        }
    }
}

#[async_trait]
impl Terminals for LocalTerminals {
    async fn open(
        &self,
        computer: &Computer,
        size: TerminalSize,
        opener: Option<Opener>,
    ) -> Result<Arc<TerminalSession>> {
        let executor = self.computers.local().await?;
        self.manager
            .open_as(&executor, computer, size, opener)
            .await
    }
    fn get(&self, id: u64) -> Result<Arc<TerminalSession>> {
        self.manager.get(id)
    }
    fn list(&self, channel: Option<ChannelId>) -> Vec<TerminalInfo> {
        self.manager.list(channel)
    }
    async fn close(&self, id: u64) -> Result<()> {
        self.manager.close(id).await
    }
    async fn close_channel(&self, channel: ChannelId) -> Result<()> {
        self.manager.close_channel(channel).await
    }
}
