//! [`AuthorityStore`] for [`PostgresStore`]: calls for Skipper
//! ([`escalations`]), approvals and their rules, capability changes and
//! MCP tool pins, each a visible note, an event and an audit row in one
//! transaction, as the SQLite store writes them.
//!
//! With several writers, an approval is decided once: deciding is one
//! conditional update (`WHERE status = 'pending'`), and the second of two
//! deciders gets the conflict SQLite gives for an already decided one.

pub(crate) mod escalations;

use async_trait::async_trait;
use tokio_postgres::Row;

use super::channels::record::{self, record_journal};
use super::codec::ms;
use super::codec::{now, parsed, ts};
use super::threads::rows;
use super::workspace::user_name;
use super::{PostgresStore, audit, events, failed};
use crate::audit::AuditFields;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::mcp::McpPin;
use crate::model::{
    Actor, AgentId, AgentKind, Approval, ApprovalAction, ApprovalStatus, CapabilityPolicy,
    ChannelId, ChannelRef, Escalation, EscalationId, EscalationStatus, ThreadId, ThreadStatus,
    Turn, TurnId, UserId,
};
use crate::store::AuthorityStore;
use crate::store::postgres::prepared::Db;
use crate::store::types::{CapabilityChange, Escalated, NewApproval, NewEscalation, Resume};

const APPROVAL: &str = "id, channel_id, thread_id, turn_id, agent_id, asker_id, action, \
    summary, reason, status, decided_by, decision_note, created, expires";

fn approval_at(row: &Row) -> Result<Approval> {
    Ok(Approval {
        id: row.get(0),
        channel_id: ChannelId(row.get(1)),
        thread_id: row.get::<_, Option<i64>>(2).map(ThreadId),
        turn_id: row.get::<_, Option<i64>>(3).map(TurnId),
        agent_id: row.get::<_, Option<i64>>(4).map(AgentId),
        asker_id: row.get::<_, Option<i64>>(5).map(UserId),
        action: parsed(row, 6)?,
        summary: row.get(7),
        reason: row.get(8),
        status: parsed(row, 9)?,
        decided_by: row.get::<_, Option<i64>>(10).map(UserId),
        decision_note: row.get(11),
        created: ts(row, 12)?,
        expires: ts(row, 13)?,
    })
}

async fn approval(c: &impl Db, id: i64) -> Result<Approval> {
    let row = c
        .query_opt(
            &format!("SELECT {APPROVAL} FROM approvals WHERE id = $1"),
            &[&id],
        )
        .await
        .map_err(failed("reading an approval"))?
        .ok_or_else(|| Error::not_found("approval", id))?;
    approval_at(&row)
}

/// Asks for approval: the request (already decided when the asker may
/// approve it themselves), a visible card in its thread, and the event.
async fn request_approval(c: &impl Db, new: NewApproval) -> Result<Approval> {
    let created = ms(now());
    let (status, decided_by) = match new.approved_by {
        Some(user) => (ApprovalStatus::Approved, Some(user)),
        None => (ApprovalStatus::Pending, None),
    };
    let row = c
        .query_one(
            &format!(
                "INSERT INTO approvals (channel_id, thread_id, turn_id, agent_id, asker_id,
                     action, summary, reason, status, decided_by, decision_note, created,
                     expires, decided)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
                 RETURNING {APPROVAL}"
            ),
            &[
                &new.channel_id.get(),
                &new.thread_id.map(ThreadId::get),
                &new.turn_id.map(TurnId::get),
                &new.agent_id.map(AgentId::get),
                &new.asker_id.map(UserId::get),
                &new.action.as_str(),
                &new.summary,
                &new.reason,
                &status.as_str(),
                &decided_by.map(UserId::get),
                &decided_by.map(|_| "asked by someone who may approve it"),
                &created,
                &(created + new.expires_in_ms),
                &decided_by.map(|_| created),
            ],
        )
        .await
        .map_err(failed("asking for approval"))?;
    let approval = approval_at(&row)?;
    let card = crate::store::rules::approval_card(&approval);
    rows::note(c, approval.channel_id, approval.thread_id, &card).await?;
    if status == ApprovalStatus::Pending
        && let Some(thread) = approval.thread_id
        && let Some(thread) = rows::touch_thread(c, thread, Some("waiting"), None).await?
    {
        events::append(
            c,
            Some(thread.channel_id),
            EventBody::ThreadUpdated { thread },
        )
        .await?;
    }
    events::append(
        c,
        Some(approval.channel_id),
        EventBody::ApprovalChanged {
            approval: approval.clone(),
        },
    )
    .await?;
    let asker = user_name(c, approval.asker_id).await?;
    audit::append(
        c,
        AuditFields {
            channel_id: Some(approval.channel_id),
            thread_id: approval.thread_id,
            agent: new.agent_handle.as_deref(),
            asker: asker.as_deref(),
            action: "approval.requested",
            input_summary: &format!("{}: {}", approval.action, approval.summary),
            outcome: approval.status.as_str(),
        },
    )
    .await?;
    Ok(approval)
}

/// Expires the approvals still pending for `turn`, which has ended: an
/// approval lives as long as the turn that waits for it.
pub(super) async fn expire_approvals_of_turn(c: &impl Db, turn: TurnId) -> Result<()> {
    let pending = c
        .query(
            "SELECT id FROM approvals WHERE turn_id = $1 AND status = 'pending' ORDER BY id",
            &[&turn.get()],
        )
        .await
        .map_err(failed("reading a turn's approvals"))?;
    for row in pending {
        decide_approval(
            c,
            row.get(0),
            ApprovalStatus::Expired,
            None,
            Some(crate::store::rules::APPROVAL_TURN_ENDED),
        )
        .await?;
    }
    Ok(())
}

/// Decides a pending approval (approve, deny, or expire), with a visible
/// note in its thread. One conditional update: decided once.
async fn decide_approval(
    c: &impl Db,
    id: i64,
    status: ApprovalStatus,
    by: Option<UserId>,
    note_text: Option<&str>,
) -> Result<Approval> {
    let decided = c
        .query_opt(
            &format!(
                "UPDATE approvals SET status = $2, decided_by = $3, decision_note = $4,
                     decided = $5
                 WHERE id = $1 AND status = 'pending' RETURNING {APPROVAL}"
            ),
            &[
                &id,
                &status.as_str(),
                &by.map(UserId::get),
                &note_text,
                &ms(now()),
            ],
        )
        .await
        .map_err(failed("deciding an approval"))?;
    let Some(row) = decided else {
        let current = approval(c, id).await?;
        return Err(Error::Conflict(format!(
            "approval {id} is already {}",
            current.status
        )));
    };
    let after = approval_at(&row)?;
    let who = user_name(c, by).await?;
    let text = crate::store::rules::approval_decided_note(id, status, who.as_deref(), note_text);
    rows::note(c, after.channel_id, after.thread_id, &text).await?;
    if let Some(thread) = after.thread_id {
        // Waiting on this approval ends; an open thread is announced as
        // SQLite announces it, whether or not it was waiting.
        let thread = match rows::touch_thread(c, thread, Some("open"), Some("waiting")).await? {
            Some(thread) => thread,
            None => rows::thread(c, thread).await?,
        };
        if thread.status == ThreadStatus::Open {
            events::append(
                c,
                Some(thread.channel_id),
                EventBody::ThreadUpdated { thread },
            )
            .await?;
        }
    }
    events::append(
        c,
        Some(after.channel_id),
        EventBody::ApprovalChanged {
            approval: after.clone(),
        },
    )
    .await?;
    audit::append(
        c,
        AuditFields {
            channel_id: Some(after.channel_id),
            thread_id: after.thread_id,
            agent: None,
            asker: who.as_deref(),
            action: &format!("approval.{status}"),
            input_summary: &format!("{}: {}", after.action, after.summary),
            outcome: note_text.unwrap_or(""),
        },
    )
    .await?;
    Ok(after)
}

/// Changes a channel's capability policy: the profile, the grant log, a
/// note in the thread that asked (and in the channel, if elsewhere), the
/// journal, the event and the audit log.
async fn change_capabilities(c: &impl Db, change: CapabilityChange) -> Result<CapabilityPolicy> {
    let record = record::get(c, &ChannelRef::Id(change.channel_id)).await?;
    if record.agent.kind != AgentKind::Channel {
        return Err(Error::Refused(format!(
            "{} is Skipper's home; its authority is Skipper's own",
            record.channel.name
        )));
    }
    let policy_json = serde_json::to_string(&change.policy)
        .map_err(|e| Error::Internal(format!("policy does not serialise: {e}")))?;
    c.execute(
        "UPDATE agent_profiles SET capability_policy = $2, updated = $3 WHERE agent_id = $1",
        &[&record.agent.id.get(), &policy_json, &ms(now())],
    )
    .await
    .map_err(failed("changing a capability policy"))?;
    let at = ms(now());
    let detail = serde_json::to_string(&change.detail).unwrap_or_else(|_| "{}".into());
    c.execute(
        "INSERT INTO agent_capabilities (agent_id, capability, detail, granted_by, granted_at,
             revoked_at)
         VALUES ($1, $2, $3, $4, $5::BIGINT, CASE WHEN $6::BOOLEAN THEN $5::BIGINT END)",
        &[
            &record.agent.id.get(),
            &change.capability,
            &detail,
            &change.by,
            &at,
            &change.revoke,
        ],
    )
    .await
    .map_err(failed("recording a capability change"))?;
    let verb = if change.revoke { "revoked" } else { "granted" };
    let text = crate::store::rules::capability_note(&change, &record);
    if let Some((channel, thread)) = change.announce_in {
        rows::note(c, channel, Some(thread), &text).await?;
        if channel != record.channel.id {
            rows::note(c, record.channel.id, None, &text).await?;
        }
    } else {
        rows::note(c, record.channel.id, None, &text).await?;
    }
    record_journal(
        c,
        Some(record.channel.id),
        Some(record.channel.name.as_str()),
        &Actor::System,
        &format!("capability.{verb}"),
        &text,
    )
    .await?;
    let after = record::get(c, &ChannelRef::Id(record.channel.id)).await?;
    events::append(
        c,
        Some(record.channel.id),
        EventBody::ChannelUpdated {
            channel: after.channel.clone(),
        },
    )
    .await?;
    audit::append(
        c,
        AuditFields {
            channel_id: Some(record.channel.id),
            thread_id: change.announce_in.map(|(_, t)| t),
            agent: Some(&change.by),
            asker: change.asker.as_deref(),
            action: &format!("capability.{verb}"),
            input_summary: &change.description,
            outcome: "ok",
        },
    )
    .await?;
    Ok(after.profile.capability_policy)
}

const PIN: &str = "channel_id, server, tool, hash, description, input_schema, approval_id, \
    approved_by, pinned_at";

fn pin_at(row: &Row) -> Result<McpPin> {
    let schema: &str = row.get(5);
    Ok(McpPin {
        channel_id: ChannelId(row.get(0)),
        server: row.get(1),
        tool: row.get(2),
        hash: row.get(3),
        description: row.get(4),
        input_schema: serde_json::from_str(schema).unwrap_or(serde_json::Value::Null),
        approval_id: row.get(6),
        approved_by: row.get::<_, Option<i64>>(7).map(UserId),
        pinned_at: ts(row, 8)?,
    })
}

/// Pins a definition (replacing an earlier pin of the same tool), audited.
async fn put_pin(c: &impl Db, pin: &McpPin, by: Option<&str>) -> Result<()> {
    let schema = serde_json::to_string(&pin.input_schema)
        .map_err(|e| Error::Internal(format!("a schema does not serialise: {e}")))?;
    c.execute(
        "INSERT INTO mcp_pins (channel_id, server, tool, hash, description, input_schema,
             approval_id, approved_by, pinned_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (channel_id, server, tool) DO UPDATE SET hash = excluded.hash,
             description = excluded.description, input_schema = excluded.input_schema,
             approval_id = excluded.approval_id, approved_by = excluded.approved_by,
             pinned_at = excluded.pinned_at",
        &[
            &pin.channel_id.get(),
            &pin.server,
            &pin.tool,
            &pin.hash,
            &pin.description,
            &schema,
            &pin.approval_id,
            &pin.approved_by.map(UserId::get),
            &ms(now()),
        ],
    )
    .await
    .map_err(failed("pinning an MCP tool"))?;
    audit::append(
        c,
        AuditFields {
            channel_id: Some(pin.channel_id),
            thread_id: None,
            agent: None,
            asker: by,
            action: "mcp.tool_pinned",
            input_summary: &format!("mcp__{}__{} {}", pin.server, pin.tool, pin.hash),
            outcome: "ok",
        },
    )
    .await
}

#[async_trait]
impl AuthorityStore for PostgresStore {
    async fn escalate(&self, escalation: NewEscalation) -> Result<Escalated> {
        in_tx!(self, "calling Skipper", |tx| escalations::escalate(
            tx, escalation
        ))
    }

    async fn settle_escalation(
        &self,
        id: EscalationId,
        status: EscalationStatus,
        outcome: String,
        resume: Option<Resume>,
    ) -> Result<(Escalation, Option<Turn>)> {
        in_tx!(self, "settling a call for Skipper", |tx| async move {
            escalations::settle(tx, id, status, &outcome, resume).await
        })
    }

    async fn escalation(&self, id: EscalationId) -> Result<Escalation> {
        let client = self.client().await?;
        escalations::escalation(&client, id).await
    }

    async fn escalations(&self, open_only: bool) -> Result<Vec<Escalation>> {
        let client = self.client().await?;
        escalations::escalations(&client, open_only).await
    }

    async fn request_approval(&self, new: NewApproval) -> Result<Approval> {
        in_tx!(self, "asking for approval", |tx| request_approval(tx, new))
    }

    async fn decide_approval(
        &self,
        id: i64,
        status: ApprovalStatus,
        by: Option<UserId>,
        note: Option<String>,
    ) -> Result<Approval> {
        in_tx!(self, "deciding an approval", |tx| async move {
            decide_approval(tx, id, status, by, note.as_deref()).await
        })
    }

    async fn approval(&self, id: i64) -> Result<Approval> {
        let client = self.client().await?;
        approval(&client, id).await
    }

    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>> {
        let client = self.client().await?;
        client
            .query(
                &format!(
                    "SELECT {APPROVAL} FROM approvals WHERE NOT $1 OR status = 'pending'
                     ORDER BY id"
                ),
                &[&pending_only],
            )
            .await
            .map_err(failed("listing approvals"))?
            .iter()
            .map(approval_at)
            .collect()
    }

    async fn approval_required(&self, channel: ChannelId, action: ApprovalAction) -> Result<bool> {
        // The channel's rule, else the workspace's, else yes.
        let client = self.client().await?;
        let rule = client
            .query_opt(
                "SELECT required FROM approval_policy WHERE action = $2
                 AND (channel_id = $1 OR channel_id IS NULL)
                 ORDER BY channel_id IS NULL LIMIT 1",
                &[&channel.get(), &action.as_str()],
            )
            .await
            .map_err(failed("reading an approval rule"))?;
        Ok(rule.is_none_or(|r| r.get::<_, i16>(0) != 0))
    }

    async fn set_approval_rule(
        &self,
        channel: Option<ChannelId>,
        action: ApprovalAction,
        required: bool,
    ) -> Result<()> {
        // One upsert: the unique (channel, action) counts the workspace's
        // NULL channel once, so two writers leave one rule.
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO approval_policy (channel_id, action, required) VALUES ($1, $2, $3)
                 ON CONFLICT (channel_id, action) DO UPDATE SET required = excluded.required",
                &[
                    &channel.map(ChannelId::get),
                    &action.as_str(),
                    &i16::from(required),
                ],
            )
            .await
            .map_err(failed("setting an approval rule"))?;
        Ok(())
    }

    async fn change_capabilities(&self, change: CapabilityChange) -> Result<CapabilityPolicy> {
        in_tx!(self, "changing capabilities", |tx| change_capabilities(
            tx, change
        ))
    }

    async fn mcp_pins(&self, channel: ChannelId, server: &str) -> Result<Vec<McpPin>> {
        let client = self.client().await?;
        client
            .query(
                &format!(
                    "SELECT {PIN} FROM mcp_pins WHERE channel_id = $1 AND server = $2
                     ORDER BY tool"
                ),
                &[&channel.get(), &server],
            )
            .await
            .map_err(failed("reading MCP pins"))?
            .iter()
            .map(pin_at)
            .collect()
    }

    async fn put_mcp_pin(&self, pin: McpPin, by: Option<String>) -> Result<()> {
        in_tx!(self, "pinning an MCP tool", |tx| async move {
            put_pin(tx, &pin, by.as_deref()).await
        })
    }

    async fn clear_mcp_pins(&self, channel: ChannelId, server: &str) -> Result<u64> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM mcp_pins WHERE channel_id = $1 AND server = $2",
                &[&channel.get(), &server],
            )
            .await
            .map_err(failed("forgetting MCP pins"))
    }
}
