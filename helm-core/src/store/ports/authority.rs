//! The [`AuthorityStore`] port: skipper's authority: escalations, approvals and
//! their rules, capability policy and MCP tool pins.

use async_trait::async_trait;

use crate::error::Result;
use crate::model::{
    Approval, ApprovalAction, ApprovalStatus, CapabilityPolicy, ChannelId, Escalation,
    EscalationId, EscalationStatus, Turn, UserId,
};
use crate::store::types::{CapabilityChange, Escalated, NewApproval, NewEscalation, Resume};

/// Skipper's authority: escalations, approvals and their rules, capability
/// policy and MCP tool pins.
#[async_trait]
pub trait AuthorityStore: Send + Sync + 'static {
    /// Calls Skipper into a thread: opens the call (record, visible note,
    /// Skipper's turn), or, when the thread has one open already, adds the
    /// reason to it visibly (the database allows one open call per thread).
    async fn escalate(&self, escalation: NewEscalation) -> Result<Escalated>;

    /// Resolves a call for Skipper or hands it to the Captain; with `resume`,
    /// wakes the channel agent that called (with that chain).
    async fn settle_escalation(
        &self,
        id: EscalationId,
        status: EscalationStatus,
        outcome: String,
        resume: Option<Resume>,
    ) -> Result<(Escalation, Option<Turn>)>;

    /// An escalation.
    async fn escalation(&self, id: EscalationId) -> Result<Escalation>;

    /// Escalations, oldest first; only open ones if asked.
    async fn escalations(&self, open_only: bool) -> Result<Vec<Escalation>>;

    /// Asks for an approval (approved at once when `approved_by` is set).
    async fn request_approval(&self, approval: NewApproval) -> Result<Approval>;

    /// Approves, denies or expires a pending approval.
    async fn decide_approval(
        &self,
        id: i64,
        status: ApprovalStatus,
        by: Option<UserId>,
        note: Option<String>,
    ) -> Result<Approval>;

    /// An approval.
    async fn approval(&self, id: i64) -> Result<Approval>;

    /// Approvals, oldest first; only pending ones if asked.
    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>>;

    /// Whether `action` needs approval in `channel`.
    async fn approval_required(&self, channel: ChannelId, action: ApprovalAction) -> Result<bool>;

    /// Sets whether `action` needs approval, for the workspace (`None`) or a channel.
    async fn set_approval_rule(
        &self,
        channel: Option<ChannelId>,
        action: ApprovalAction,
        required: bool,
    ) -> Result<()>;

    /// Changes a channel's capability policy, visibly and on the record.
    async fn change_capabilities(&self, change: CapabilityChange) -> Result<CapabilityPolicy>;

    /// The approved definitions of a channel's MCP server's tools.
    async fn mcp_pins(&self, channel: ChannelId, server: &str) -> Result<Vec<crate::mcp::McpPin>>;

    /// Pins an approved definition (replacing an older pin of the tool),
    /// with an audit row naming `by`, the person who approved it.
    async fn put_mcp_pin(&self, pin: crate::mcp::McpPin, by: Option<String>) -> Result<()>;

    /// Forgets the pins of a channel's server; returns how many there were.
    async fn clear_mcp_pins(&self, channel: ChannelId, server: &str) -> Result<u64>;
}
