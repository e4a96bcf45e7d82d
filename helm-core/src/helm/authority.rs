//! Approvals, escalations and the audit log, as the facade offers them. Only
//! the Captain and admins decide approvals and read the audit log.

use crate::error::{Error, Result};
use crate::model::{
    Approval, ApprovalAction, ApprovalStatus, AuditEntry, ChannelRef, Escalation, User,
};
use crate::store::{AuditRecord, AuditVerification};

use super::Helm;

fn admin_only(actor: &User, what: &str) -> Result<()> {
    if actor.role.is_admin() {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "only the Captain or an admin {what}"
        )))
    }
}

impl Helm {
    /// Approval requests: all for the Captain and admins, a member's own otherwise.
    pub async fn approvals(&self, actor: &User, pending_only: bool) -> Result<Vec<Approval>> {
        let all = self.inner.store.approvals(pending_only).await?;
        Ok(if actor.role.is_admin() {
            all
        } else {
            all.into_iter()
                .filter(|a| a.asker_id == Some(actor.id))
                .collect()
        })
    }

    /// Approves a pending request; the waiting turn goes ahead.
    pub async fn approve(&self, actor: &User, id: i64, note: Option<String>) -> Result<Approval> {
        admin_only(actor, "approves")?;
        let approval = self.inner.store.approval(id).await?;
        if approval.status == ApprovalStatus::Pending
            && let Some(turn) = approval.turn_id
            && self.inner.store.turn(turn).await?.state.is_final()
        {
            // Nothing waits for it any more (a crash or a stop ended its
            // turn): approving it would do nothing, so it expires instead.
            self.inner
                .store
                .decide_approval(
                    id,
                    ApprovalStatus::Expired,
                    None,
                    Some("the turn that asked for it ended before a decision".into()),
                )
                .await?;
            return Err(Error::Conflict(format!(
                "approval {id} can no longer be given: the turn that asked for it has ended; \
                 ask the agent again"
            )));
        }
        self.inner
            .store
            .decide_approval(id, ApprovalStatus::Approved, Some(actor.id), note)
            .await
    }

    /// Denies a pending request; the waiting turn is told no.
    pub async fn deny(&self, actor: &User, id: i64, note: Option<String>) -> Result<Approval> {
        admin_only(actor, "denies approvals")?;
        self.inner
            .store
            .decide_approval(id, ApprovalStatus::Denied, Some(actor.id), note)
            .await
    }

    /// Calls for Skipper, oldest first: all of them for the Captain and
    /// admins, otherwise those made in threads of channels the person may see
    /// (a call's reason can quote a private channel).
    pub async fn escalations(&self, actor: &User, open_only: bool) -> Result<Vec<Escalation>> {
        let all = self.inner.store.escalations(open_only).await?;
        if actor.role.is_admin() {
            return Ok(all);
        }
        let audience = self.audience(actor).await?;
        Ok(all
            .into_iter()
            .filter(|e| audience.sees_channel(e.channel_id))
            .collect())
    }

    /// Sets whether an action needs approval, workspace-wide or in one channel.
    pub async fn set_approval_rule(
        &self,
        actor: &User,
        channel: Option<&ChannelRef>,
        action: ApprovalAction,
        required: bool,
    ) -> Result<()> {
        admin_only(actor, "changes what needs approval")?;
        let channel_id = match channel {
            Some(c) => Some(self.channel(c).await?.channel.id),
            None => None,
        };
        self.inner
            .store
            .set_approval_rule(channel_id, action, required)
            .await?;
        self.inner
            .store
            .audit(AuditRecord {
                channel_id,
                asker: Some(actor.name.clone()),
                action: "approval_policy.changed".into(),
                input_summary: format!("{action} needs approval: {required}"),
                outcome: "ok".into(),
                ..Default::default()
            })
            .await
    }

    /// The newest audit rows (of one channel, or all).
    pub async fn audit_log(
        &self,
        actor: &User,
        channel: Option<&ChannelRef>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>> {
        admin_only(actor, "reads the audit log")?;
        let channel_id = match channel {
            Some(c) => Some(self.channel(c).await?.channel.id),
            None => None,
        };
        self.inner.store.audit_log(channel_id, limit).await
    }

    /// Checks the audit log's hash chain.
    pub async fn verify_audit(&self, actor: &User) -> Result<AuditVerification> {
        admin_only(actor, "verifies the audit log")?;
        crate::audit::verify(self.inner.store.as_ref()).await
    }
}
