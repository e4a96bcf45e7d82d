//! MCP servers as channel capabilities.
//!
//! A channel's settings (its capability policy) list its MCP servers
//! ([`McpServer`]). Their tools join the channel's tool registry as
//! `mcp__<server>__<tool>`, filtered by each server's allow and deny lists
//! (deny last). Stdio servers run inside the channel's computer with an
//! empty environment plus only what the configuration names;
//! streamable-HTTP servers are reached by Helm with headers whose secrets it
//! reads from its own environment, so the agent never sees them.
//!
//! A tool's definition (name, description, input schema) is pinned when a
//! person first approves it ([`McpPin`], hashed with
//! [`ToolSpec::definition_hash`](crate::tool::ToolSpec::definition_hash)).
//! If the server later changes it, the model keeps seeing the approved
//! definition and the next call asks a person to approve the change (an
//! explicit decision, even when the person asking could approve it
//! themselves); until then the tool is not called. Calls of tools in `ask`
//! mode need approval every time. Every call is journaled like any tool
//! action.

pub(crate) mod client;
mod config;
pub mod server;
pub(crate) mod tools;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub use config::{
    MAX_SERVERS, McpApproval, McpServer, McpSetting, McpTransport, tool_name, validate_server_name,
};
pub use tools::{McpServerStatus, McpToolStatus, PinState};

use crate::model::{ChannelId, UserId};

/// An approved definition of one MCP tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpPin {
    /// The channel.
    pub channel_id: ChannelId,
    /// The server's name in the channel.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The digest of the approved definition.
    pub hash: String,
    /// The approved description.
    pub description: String,
    /// The approved input schema.
    pub input_schema: serde_json::Value,
    /// The approval request that approved it, if it came through one.
    pub approval_id: Option<i64>,
    /// Who approved it.
    pub approved_by: Option<UserId>,
    /// When.
    pub pinned_at: Timestamp,
}
