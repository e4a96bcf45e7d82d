//! Authority: what needs the Captain's approval, the approvals themselves,
//! and the audit log that records every tool call and authority change.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::enums::string_enum;
use super::ids::{AgentId, ChannelId, ThreadId, TurnId, UserId};

string_enum! {
    /// Actions that may need the Captain (or an admin) to approve them.
    ApprovalAction as "approval action" {
        /// A command on the host, outside any channel's sandbox.
        HostCommand => "host_command",
        /// Installing a package into a channel's environment.
        InstallPackage => "install_package",
        /// Granting a channel a credential (or the network, or a mount).
        GrantCapability => "grant_capability",
        /// Reading another channel's threads and memory.
        CrossChannelRead => "cross_channel_read",
        /// Deleting a channel for good.
        DeleteChannel => "delete_channel",
        /// A call of a tool that asks for approval (an MCP tool in `ask`
        /// mode, an embedding application's tool).
        ToolCall => "tool_call",
        /// A new or changed definition of an MCP tool (pinned when approved).
        ToolDefinition => "tool_definition",
        /// Adding an MCP server to a channel.
        McpServer => "mcp_server",
        /// Anything else an agent asks approval for explicitly.
        Other => "other",
    }
}

string_enum! {
    /// Where an approval request stands.
    ApprovalStatus as "approval status" {
        /// Waiting for the Captain or an admin.
        Pending => "pending",
        /// Approved.
        Approved => "approved",
        /// Denied.
        Denied => "denied",
        /// Nobody decided in time; counts as denied.
        Expired => "expired",
    }
}

/// A request for the Captain's (or an admin's) approval, shown as a card in
/// its thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// Its id.
    pub id: i64,
    /// The channel it concerns.
    pub channel_id: ChannelId,
    /// The thread it was asked in.
    pub thread_id: Option<ThreadId>,
    /// The turn waiting for it.
    pub turn_id: Option<TurnId>,
    /// The agent asking.
    pub agent_id: Option<AgentId>,
    /// The person whose request led to it.
    pub asker_id: Option<UserId>,
    /// What kind of action it is.
    pub action: ApprovalAction,
    /// Exactly what would be done.
    pub summary: String,
    /// Why.
    pub reason: String,
    /// Where it stands.
    pub status: ApprovalStatus,
    /// Who decided.
    pub decided_by: Option<UserId>,
    /// Their note.
    pub decision_note: Option<String>,
    /// When it was asked.
    pub created: Timestamp,
    /// When it expires (denied if undecided).
    pub expires: Timestamp,
}

/// One row of the append-only audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Its position.
    pub id: i64,
    /// When.
    pub at: Timestamp,
    /// The channel it concerns, if any (it may no longer exist).
    pub channel_id: Option<ChannelId>,
    /// The thread, if any.
    pub thread_id: Option<ThreadId>,
    /// The agent that acted (handle), if an agent did.
    pub agent: Option<String>,
    /// The person who asked (or acted), if any.
    pub asker: Option<String>,
    /// What was done, such as `tool:write_file` or `approval.approved`.
    pub action: String,
    /// A short account of the input.
    pub input_summary: String,
    /// How it ended.
    pub outcome: String,
    /// The previous row's hash.
    pub prev_hash: String,
    /// This row's hash, over its fields and `prev_hash`.
    pub hash: String,
}
