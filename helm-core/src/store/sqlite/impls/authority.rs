//! [`AuthorityStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;

use super::super::{SqliteStore, authority, escalations, mcp_pins};
use crate::error::Result;
use crate::model::{
    Approval, ApprovalAction, ApprovalStatus, CapabilityPolicy, ChannelId, Escalation,
    EscalationId, EscalationStatus, Turn, UserId,
};
use crate::store::AuthorityStore;
use crate::store::types::{CapabilityChange, Escalated, NewApproval, NewEscalation, Resume};

#[async_trait]
impl AuthorityStore for SqliteStore {
    async fn escalate(&self, escalation: NewEscalation) -> Result<Escalated> {
        self.write(move |tx| escalations::escalate(tx, escalation))
            .await
    }

    async fn settle_escalation(
        &self,
        id: EscalationId,
        status: EscalationStatus,
        outcome: String,
        resume: Option<Resume>,
    ) -> Result<(Escalation, Option<Turn>)> {
        self.write(move |tx| escalations::settle_escalation(tx, id, status, &outcome, resume))
            .await
    }

    async fn escalation(&self, id: EscalationId) -> Result<Escalation> {
        self.read(move |c| escalations::escalation(c, id)).await
    }

    async fn escalations(&self, open_only: bool) -> Result<Vec<Escalation>> {
        self.read(move |c| escalations::escalations(c, open_only))
            .await
    }

    async fn request_approval(&self, approval: NewApproval) -> Result<Approval> {
        self.write(move |tx| authority::request_approval(tx, approval))
            .await
    }

    async fn decide_approval(
        &self,
        id: i64,
        status: ApprovalStatus,
        by: Option<UserId>,
        note: Option<String>,
    ) -> Result<Approval> {
        self.write(move |tx| authority::decide_approval(tx, id, status, by, note.as_deref()))
            .await
    }

    async fn approval(&self, id: i64) -> Result<Approval> {
        self.read(move |c| authority::approval(c, id)).await
    }

    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>> {
        self.read(move |c| authority::approvals(c, pending_only))
            .await
    }

    async fn approval_required(&self, channel: ChannelId, action: ApprovalAction) -> Result<bool> {
        self.read(move |c| authority::approval_required(c, channel, action))
            .await
    }

    async fn set_approval_rule(
        &self,
        channel: Option<ChannelId>,
        action: ApprovalAction,
        required: bool,
    ) -> Result<()> {
        self.write(move |tx| authority::set_approval_rule(tx.conn(), channel, action, required))
            .await
    }

    async fn change_capabilities(&self, change: CapabilityChange) -> Result<CapabilityPolicy> {
        self.write(move |tx| authority::change_capabilities(tx, change))
            .await
    }

    async fn mcp_pins(&self, channel: ChannelId, server: &str) -> Result<Vec<crate::mcp::McpPin>> {
        let server = server.to_string();
        self.read(move |c| mcp_pins::list(c, channel, &server))
            .await
    }

    async fn put_mcp_pin(&self, pin: crate::mcp::McpPin, by: Option<String>) -> Result<()> {
        self.write(move |tx| mcp_pins::put(tx.conn(), &pin, by.as_deref()))
            .await
    }

    async fn clear_mcp_pins(&self, channel: ChannelId, server: &str) -> Result<u64> {
        let server = server.to_string();
        self.write(move |tx| mcp_pins::clear(tx.conn(), channel, &server))
            .await
    }
}
