//! A channel's tools, as the facade offers them: the embedding
//! application registers its own [`Tool`]s for a channel's agent, and
//! anyone may list what an agent can call.

use std::sync::Arc;

use crate::error::Result;
use crate::model::{ChannelKind, ChannelRef};
use crate::tool::{RegisteredTool, Tool};

use super::Helm;

impl Helm {
    /// Adds `tool` to the tools of `channel`'s resident agent (for `#main`,
    /// Skipper's), from its next turn on. The name must not clash with the
    /// agent's built-in tools or another registered tool of the channel
    /// (`conflict`), and may not start with `mcp__` (reserved for MCP
    /// servers). The tool runs in this process, is journaled and audited
    /// like any tool, and its [`ApprovalClass`](crate::tool::ApprovalClass)
    /// is honoured before every call.
    ///
    /// Registrations live as long as this `Helm`: an application registers
    /// its tools each time it opens the workspace.
    pub async fn register_channel_tool(
        &self,
        channel: &ChannelRef,
        tool: Arc<dyn Tool>,
    ) -> Result<()> {
        let record = self.channel(channel).await?;
        self.inner.runtime.embedder_tools.register(&record, tool)?;
        tracing::info!(channel = %record.channel.name, "a tool was registered");
        Ok(())
    }

    /// Removes a tool registered with [`Helm::register_channel_tool`] and
    /// returns it; `not found` if the channel has no such tool.
    pub async fn unregister_channel_tool(
        &self,
        channel: &ChannelRef,
        name: &str,
    ) -> Result<Arc<dyn Tool>> {
        let record = self.channel(channel).await?;
        self.inner.runtime.embedder_tools.unregister(&record, name)
    }

    /// The tools `channel`'s resident agent (for `#main`, Skipper) is
    /// offered on its next turn, with where each comes from.
    pub async fn channel_tools(&self, channel: &ChannelRef) -> Result<Vec<RegisteredTool>> {
        let record = self.channel(channel).await?;
        let skipper = record.channel.kind == ChannelKind::Home;
        let registry = self.inner.runtime.registry_for(&record, skipper)?;
        Ok(registry.iter().cloned().collect())
    }

    /// The tools Skipper is offered when called into `channel`'s threads.
    pub async fn skipper_tools(&self, channel: &ChannelRef) -> Result<Vec<RegisteredTool>> {
        let record = self.channel(channel).await?;
        let registry = self.inner.runtime.registry_for(&record, true)?;
        Ok(registry.iter().cloned().collect())
    }
}
