//! Approvals and capability changes: each a visible message in its thread,
//! an event, and a row in the audit log, in one transaction. (Calls for
//! Skipper are in `escalations`; the notes and names both use are here.)

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::audit::{self, AuditInput};
use super::channels;
use super::codec::{ms, now, parsed, ts};
use super::messages::{self, NewMessage};
use super::threads;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Agent, AgentKind, Approval, ApprovalAction, ApprovalStatus, Author, CapabilityPolicy,
    ChannelId, ChannelRef, Message, MessageStatus, ThreadId, ThreadStatus, UserId,
};
use crate::store::types::{CapabilityChange, NewApproval};

/// Posts a note from Helm in a thread.
pub(super) fn note(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    thread: Option<ThreadId>,
    text: &str,
) -> Result<Message> {
    let message = messages::insert(
        tx.conn(),
        NewMessage {
            channel_id: channel,
            thread_id: thread,
            author: &Author::System,
            content: text,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )?;
    tx.emit(
        Some(channel),
        EventBody::MessageCreated {
            message: message.clone(),
        },
    )?;
    Ok(message)
}

pub(super) fn skipper(conn: &Connection) -> Result<Agent> {
    Ok(channels::home(conn)?.agent)
}

pub(super) fn user_name(conn: &Connection, id: Option<UserId>) -> Result<Option<String>> {
    match id {
        None => Ok(None),
        Some(id) => Ok(conn
            .prepare_cached("SELECT name FROM users WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?),
    }
}

const APPROVAL_COLUMNS: &str = "id, channel_id, thread_id, turn_id, agent_id, asker_id, action, \
    summary, reason, status, decided_by, decision_note, created, expires";

fn approval_from_row(r: &Row<'_>) -> rusqlite::Result<Approval> {
    Ok(Approval {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        thread_id: r.get(2)?,
        turn_id: r.get(3)?,
        agent_id: r.get(4)?,
        asker_id: r.get(5)?,
        action: parsed(r, 6)?,
        summary: r.get(7)?,
        reason: r.get(8)?,
        status: parsed(r, 9)?,
        decided_by: r.get(10)?,
        decision_note: r.get(11)?,
        created: ts(r, 12)?,
        expires: ts(r, 13)?,
    })
}

pub(super) fn approval(conn: &Connection, id: i64) -> Result<Approval> {
    conn.prepare_cached(&format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"
    ))?
    .query_row([id], approval_from_row)
    .optional()?
    .ok_or_else(|| Error::not_found("approval", id))
}

pub(super) fn approvals(conn: &Connection, pending_only: bool) -> Result<Vec<Approval>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE NOT ?1 OR status = 'pending' ORDER BY id"
    ))?;
    let rows = stmt
        .query_map([pending_only], approval_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Whether `action` needs approval in `channel`: the channel's rule, else
/// the workspace's, else yes.
pub(super) fn approval_required(
    conn: &Connection,
    channel: ChannelId,
    action: ApprovalAction,
) -> Result<bool> {
    let rule: Option<bool> = conn
        .prepare_cached(
            "SELECT required FROM approval_policy WHERE action = ?2 AND \
             (channel_id = ?1 OR channel_id IS NULL) ORDER BY channel_id IS NULL LIMIT 1",
        )?
        .query_row(params![channel, action.as_str()], |r| r.get(0))
        .optional()?;
    Ok(rule.unwrap_or(true))
}

pub(super) fn set_approval_rule(
    conn: &Connection,
    channel: Option<ChannelId>,
    action: ApprovalAction,
    required: bool,
) -> Result<()> {
    // Upsert by hand: SQLite treats NULLs in a UNIQUE constraint as distinct.
    let updated = conn.execute(
        "UPDATE approval_policy SET required = ?3 WHERE action = ?2 AND channel_id IS ?1",
        params![channel, action.as_str(), required],
    )?;
    if updated == 0 {
        conn.execute(
            "INSERT INTO approval_policy (channel_id, action, required) VALUES (?1, ?2, ?3)",
            params![channel, action.as_str(), required],
        )?;
    }
    Ok(())
}

/// Asks for approval: the request (already decided when the asker may
/// approve it themselves), a visible card in its thread, and the event.
pub(super) fn request_approval(tx: &mut Tx<'_>, new: NewApproval) -> Result<Approval> {
    let created = now();
    let (status, decided_by) = match new.approved_by {
        Some(user) => (ApprovalStatus::Approved, Some(user)),
        None => (ApprovalStatus::Pending, None),
    };
    tx.conn().execute(
        "INSERT INTO approvals (channel_id, thread_id, turn_id, agent_id, asker_id, action, summary, \
         reason, status, decided_by, decision_note, created, expires, decided) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            new.channel_id,
            new.thread_id,
            new.turn_id,
            new.agent_id,
            new.asker_id,
            new.action.as_str(),
            new.summary,
            new.reason,
            status.as_str(),
            decided_by,
            decided_by.map(|_| "asked by someone who may approve it"),
            ms(created),
            ms(created) + new.expires_in_ms,
            decided_by.map(|_| ms(created)),
        ],
    )?;
    let approval = approval(tx.conn(), tx.conn().last_insert_rowid())?;
    let card = crate::store::rules::approval_card(&approval);
    note(tx, approval.channel_id, approval.thread_id, &card)?;
    if status == ApprovalStatus::Pending
        && let Some(thread) = approval.thread_id
    {
        tx.conn().execute(
            "UPDATE threads SET status = 'waiting', updated_at = ?2 WHERE id = ?1",
            params![thread, ms(now())],
        )?;
        let thread = threads::get(tx.conn(), thread)?;
        tx.emit(Some(thread.channel_id), EventBody::ThreadUpdated { thread })?;
    }
    tx.emit(
        Some(approval.channel_id),
        EventBody::ApprovalChanged {
            approval: approval.clone(),
        },
    )?;
    let asker = user_name(tx.conn(), approval.asker_id)?;
    audit::append(
        tx.conn(),
        AuditInput {
            channel_id: Some(approval.channel_id),
            thread_id: approval.thread_id,
            agent: new.agent_handle.as_deref(),
            asker: asker.as_deref(),
            action: "approval.requested",
            input_summary: &format!("{}: {}", approval.action, approval.summary),
            outcome: approval.status.as_str(),
        },
    )?;
    Ok(approval)
}

/// Decides a pending approval (approve, deny, or expire), with a visible
/// note in its thread.
pub(super) fn decide_approval(
    tx: &mut Tx<'_>,
    id: i64,
    status: ApprovalStatus,
    by: Option<UserId>,
    note_text: Option<&str>,
) -> Result<Approval> {
    let before = approval(tx.conn(), id)?;
    if before.status != ApprovalStatus::Pending {
        return Err(Error::Conflict(format!(
            "approval {id} is already {}",
            before.status
        )));
    }
    tx.conn().execute(
        "UPDATE approvals SET status = ?2, decided_by = ?3, decision_note = ?4, decided = ?5 WHERE id = ?1",
        params![id, status.as_str(), by, note_text, ms(now())],
    )?;
    let after = approval(tx.conn(), id)?;
    let who = user_name(tx.conn(), by)?;
    let text = crate::store::rules::approval_decided_note(id, status, who.as_deref(), note_text);
    note(tx, after.channel_id, after.thread_id, &text)?;
    if let Some(thread) = after.thread_id {
        tx.conn().execute(
            "UPDATE threads SET status = 'open', updated_at = ?2 WHERE id = ?1 AND status = 'waiting'",
            params![thread, ms(now())],
        )?;
        let thread = threads::get(tx.conn(), thread)?;
        if thread.status == ThreadStatus::Open {
            tx.emit(Some(thread.channel_id), EventBody::ThreadUpdated { thread })?;
        }
    }
    tx.emit(
        Some(after.channel_id),
        EventBody::ApprovalChanged {
            approval: after.clone(),
        },
    )?;
    audit::append(
        tx.conn(),
        AuditInput {
            channel_id: Some(after.channel_id),
            thread_id: after.thread_id,
            agent: None,
            asker: who.as_deref(),
            action: &format!("approval.{status}"),
            input_summary: &format!("{}: {}", after.action, after.summary),
            outcome: note_text.unwrap_or(""),
        },
    )?;
    Ok(after)
}

/// Expires the approvals still pending for `turn`, which has ended: an
/// approval lives as long as the turn that waits for it.
pub(super) fn expire_approvals_of_turn(tx: &mut Tx<'_>, turn: crate::model::TurnId) -> Result<()> {
    let pending: Vec<i64> = tx
        .conn()
        .prepare_cached(
            "SELECT id FROM approvals WHERE turn_id = ?1 AND status = 'pending' ORDER BY id",
        )?
        .query_map([turn], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in pending {
        decide_approval(
            tx,
            id,
            ApprovalStatus::Expired,
            None,
            Some(crate::store::rules::APPROVAL_TURN_ENDED),
        )?;
    }
    Ok(())
}

/// Changes a channel's capability policy: the profile, the grant log, a
/// note in the thread that asked (and in the channel, if elsewhere), the
/// journal, the event and the audit log.
pub(super) fn change_capabilities(
    tx: &mut Tx<'_>,
    change: CapabilityChange,
) -> Result<CapabilityPolicy> {
    let record = channels::get(tx.conn(), &ChannelRef::Id(change.channel_id))?;
    if record.agent.kind != AgentKind::Channel {
        return Err(Error::Refused(format!(
            "{} is Skipper's home; its authority is Skipper's own",
            record.channel.name
        )));
    }
    let policy_json = serde_json::to_string(&change.policy)
        .map_err(|e| Error::Internal(format!("policy does not serialise: {e}")))?;
    tx.conn().execute(
        "UPDATE agent_profiles SET capability_policy = ?2, updated = ?3 WHERE agent_id = ?1",
        params![record.agent.id, policy_json, ms(now())],
    )?;
    let at = ms(now());
    let detail = serde_json::to_string(&change.detail).unwrap_or_else(|_| "{}".into());
    if change.revoke {
        tx.conn().execute(
            "INSERT INTO agent_capabilities (agent_id, capability, detail, granted_by, granted_at, revoked_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            params![record.agent.id, change.capability, detail, change.by, at],
        )?;
    } else {
        tx.conn().execute(
            "INSERT INTO agent_capabilities (agent_id, capability, detail, granted_by, granted_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![record.agent.id, change.capability, detail, change.by, at],
        )?;
    }
    let verb = if change.revoke { "revoked" } else { "granted" };
    let text = crate::store::rules::capability_note(&change, &record);
    if let Some((channel, thread)) = change.announce_in {
        note(tx, channel, Some(thread), &text)?;
        if channel != record.channel.id {
            note(tx, record.channel.id, None, &text)?;
        }
    } else {
        note(tx, record.channel.id, None, &text)?;
    }
    channels::record_journal(
        tx.conn(),
        Some(record.channel.id),
        Some(record.channel.name.as_str()),
        &crate::model::Actor::System,
        &format!("capability.{verb}"),
        &text,
    )?;
    let after = channels::get(tx.conn(), &ChannelRef::Id(record.channel.id))?;
    tx.emit(
        Some(record.channel.id),
        EventBody::ChannelUpdated {
            channel: after.channel.clone(),
        },
    )?;
    audit::append(
        tx.conn(),
        AuditInput {
            channel_id: Some(record.channel.id),
            thread_id: change.announce_in.map(|(_, t)| t),
            agent: Some(&change.by),
            asker: change.asker.as_deref(),
            action: &format!("capability.{verb}"),
            input_summary: &change.description,
            outcome: "ok",
        },
    )?;
    Ok(after.profile.capability_policy)
}
