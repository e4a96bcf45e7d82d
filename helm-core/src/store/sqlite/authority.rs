//! Escalations, approvals and capability changes: each a visible message in
//! its thread, an event, and a row in the audit log, in one transaction.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::audit::{self, AuditInput};
use super::channels;
use super::codec::{ms, now, parsed, ts};
use super::messages::{self, NewMessage};
use super::threads;
use super::turns::{self, Chain};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Agent, AgentKind, Approval, ApprovalAction, ApprovalStatus, Author, CapabilityPolicy,
    ChannelId, ChannelRef, Escalation, EscalationId, EscalationStatus, Message, MessageStatus,
    ThreadId, ThreadStatus, Turn, UserId,
};
use crate::store::types::{CapabilityChange, Escalated, NewApproval, NewEscalation, Resume};

/// An escalation with its thread's channel (`e` joined to `t`).
const ESCALATION_SELECT: &str = "SELECT e.id, e.thread_id, t.channel_id, e.from_agent_id, \
    e.from_user_id, e.reason, e.status, e.resolved_by, e.outcome, e.created \
    FROM escalations e JOIN threads t ON t.id = e.thread_id";

fn escalation_from_row(r: &Row<'_>) -> rusqlite::Result<Escalation> {
    Ok(Escalation {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        channel_id: r.get(2)?,
        from_agent_id: r.get(3)?,
        from_user_id: r.get(4)?,
        reason: r.get(5)?,
        status: parsed(r, 6)?,
        resolved_by: r.get(7)?,
        outcome: r.get(8)?,
        created: ts(r, 9)?,
    })
}

pub(super) fn escalation(conn: &Connection, id: EscalationId) -> Result<Escalation> {
    conn.prepare_cached(&format!("{ESCALATION_SELECT} WHERE e.id = ?1"))?
        .query_row([id], escalation_from_row)
        .optional()?
        .ok_or_else(|| Error::not_found("escalation", id))
}

pub(super) fn escalations(conn: &Connection, open_only: bool) -> Result<Vec<Escalation>> {
    let mut stmt = conn.prepare_cached(&format!(
        "{ESCALATION_SELECT} WHERE NOT ?1 OR e.status = 'open' ORDER BY e.id"
    ))?;
    let rows = stmt
        .query_map([open_only], escalation_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

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

fn skipper(conn: &Connection) -> Result<Agent> {
    Ok(channels::home(conn)?.agent)
}

fn user_name(conn: &Connection, id: Option<UserId>) -> Result<Option<String>> {
    match id {
        None => Ok(None),
        Some(id) => Ok(conn
            .prepare_cached("SELECT name FROM users WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?),
    }
}

/// Calls Skipper into a thread. With no call open there, opens one: the
/// record, a visible "Calling @skipper" note, and Skipper's turn (queued
/// behind the thread's others). With one open, adds the reason to it and
/// says so in the thread; Skipper gets another turn only if none of its
/// turns for that call is still waiting to start (a waiting one reads the
/// whole thread, the addition included, when it starts).
pub(super) fn escalate(tx: &mut Tx<'_>, new: NewEscalation) -> Result<Escalated> {
    let thread = threads::get(tx.conn(), new.thread_id)?;
    let open: Option<EscalationId> = tx
        .conn()
        .prepare_cached("SELECT id FROM escalations WHERE thread_id = ?1 AND status = 'open'")?
        .query_row([new.thread_id], |r| r.get(0))
        .optional()?;
    let asker = user_name(tx.conn(), new.requested_by)?;
    let skipper = skipper(tx.conn())?;
    if let Some(id) = open {
        tx.conn().execute(
            "UPDATE escalations SET reason = reason || char(10) || ?2 WHERE id = ?1",
            params![id, new.reason],
        )?;
        let escalation = escalation(tx.conn(), id)?;
        let added = note(
            tx,
            thread.channel_id,
            Some(thread.id),
            &format!(
                "Also for @skipper (the call already open here): {}",
                new.reason
            ),
        )?;
        let waiting: bool = tx
            .conn()
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM turns WHERE escalation_id = ?1 \
                 AND state = 'queued')",
            )?
            .query_row([id], |r| r.get(0))?;
        let turn = if waiting {
            None
        } else {
            Some(
                turns::admit(
                    tx,
                    &thread,
                    &added,
                    &skipper,
                    Chain {
                        requested_by: new.requested_by,
                        hop: new.hop,
                        escalation_id: Some(id),
                        admission: &new.admission,
                    },
                )?
                .0,
            )
        };
        tx.emit(
            Some(thread.channel_id),
            EventBody::EscalationChanged {
                escalation: escalation.clone(),
            },
        )?;
        audit::append(
            tx.conn(),
            AuditInput {
                channel_id: Some(thread.channel_id),
                thread_id: Some(thread.id),
                agent: new.from_agent_handle.as_deref(),
                asker: asker.as_deref(),
                action: "escalation.added",
                input_summary: &new.reason,
                outcome: &match &turn {
                    Some(turn) => format!(
                        "added to escalation {id}; turn {} queued for @skipper",
                        turn.id
                    ),
                    None => format!("added to escalation {id}; @skipper's turn is still queued"),
                },
            },
        )?;
        return Ok(Escalated {
            escalation,
            turn,
            added: true,
        });
    }
    tx.conn().execute(
        "INSERT INTO escalations (thread_id, from_agent_id, from_user_id, reason, status, created) \
         VALUES (?1, ?2, ?3, ?4, 'open', ?5)",
        params![
            new.thread_id,
            new.from_agent_id,
            new.from_user_id,
            new.reason,
            ms(now())
        ],
    )?;
    let escalation = escalation(tx.conn(), EscalationId(tx.conn().last_insert_rowid()))?;
    let call = note(
        tx,
        thread.channel_id,
        Some(thread.id),
        &format!("Calling @skipper: {}", new.reason),
    )?;
    let (turn, _) = turns::admit(
        tx,
        &thread,
        &call,
        &skipper,
        Chain {
            requested_by: new.requested_by,
            hop: new.hop,
            escalation_id: Some(escalation.id),
            admission: &new.admission,
        },
    )?;
    tx.emit(
        Some(thread.channel_id),
        EventBody::EscalationChanged {
            escalation: escalation.clone(),
        },
    )?;
    audit::append(
        tx.conn(),
        AuditInput {
            channel_id: Some(thread.channel_id),
            thread_id: Some(thread.id),
            agent: new.from_agent_handle.as_deref(),
            asker: asker.as_deref(),
            action: "escalation.opened",
            input_summary: &new.reason,
            outcome: &format!(
                "escalation {} open; turn {} queued for @skipper",
                escalation.id, turn.id
            ),
        },
    )?;
    Ok(Escalated {
        escalation,
        turn: Some(turn),
        added: false,
    })
}

/// Closes a call for Skipper (resolved, or handed to the Captain) with a
/// visible note; with `resume`, wakes the channel agent that called.
pub(super) fn settle_escalation(
    tx: &mut Tx<'_>,
    id: EscalationId,
    status: EscalationStatus,
    outcome: &str,
    resume: Option<Resume>,
) -> Result<(Escalation, Option<Turn>)> {
    let before = escalation(tx.conn(), id)?;
    if before.status != EscalationStatus::Open {
        return Err(Error::Conflict(format!(
            "escalation {id} is already {}",
            before.status
        )));
    }
    tx.conn().execute(
        "UPDATE escalations SET status = ?2, outcome = ?3, resolved_by = '@skipper', resolved_at = ?4 \
         WHERE id = ?1",
        params![id, status.as_str(), outcome, ms(now())],
    )?;
    let after = escalation(tx.conn(), id)?;
    let thread = threads::get(tx.conn(), after.thread_id)?;
    let text = match status {
        EscalationStatus::HandedToCaptain => format!("@skipper asks the Captain: {outcome}"),
        _ => format!("@skipper resolved the call: {outcome}"),
    };
    let settled = note(tx, thread.channel_id, Some(thread.id), &text)?;
    if status == EscalationStatus::HandedToCaptain {
        tx.conn().execute(
            "UPDATE threads SET status = 'waiting', updated_at = ?2 WHERE id = ?1",
            params![thread.id, ms(now())],
        )?;
        let thread = threads::get(tx.conn(), thread.id)?;
        tx.emit(Some(thread.channel_id), EventBody::ThreadUpdated { thread })?;
    }
    let mut resumed = None;
    if let Some(resume) = resume {
        let record = channels::get(tx.conn(), &ChannelRef::Id(thread.channel_id))?;
        if record.agent.kind == AgentKind::Channel {
            let chain = Chain {
                requested_by: resume.requested_by,
                hop: resume.hop,
                escalation_id: None,
                admission: &resume.admission,
            };
            let (turn, _) = turns::admit(tx, &thread, &settled, &record.agent, chain)?;
            resumed = Some(turn);
        }
    }
    tx.emit(
        Some(thread.channel_id),
        EventBody::EscalationChanged {
            escalation: after.clone(),
        },
    )?;
    audit::append(
        tx.conn(),
        AuditInput {
            channel_id: Some(thread.channel_id),
            thread_id: Some(thread.id),
            agent: Some("@skipper"),
            asker: None,
            action: &format!("escalation.{status}"),
            input_summary: &before.reason,
            outcome,
        },
    )?;
    Ok((after, resumed))
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
    let card = match status {
        ApprovalStatus::Approved => format!(
            "Approval {}: {} ({}) — approved, since the person who asked may approve it.",
            approval.id, approval.summary, approval.action
        ),
        _ => format!(
            "Approval needed ({id}): {summary}\nWhy: {reason}\nThe Captain or an admin approves \
             or denies approval {id}. Undecided, it is denied at {expires}.",
            id = approval.id,
            summary = approval.summary,
            reason = approval.reason,
            expires = approval.expires.strftime("%H:%M UTC"),
        ),
    };
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
    let text = match status {
        ApprovalStatus::Approved => format!(
            "Approval {id} approved by {}.",
            who.as_deref().unwrap_or("?")
        ),
        ApprovalStatus::Denied => {
            format!("Approval {id} denied by {}.", who.as_deref().unwrap_or("?"))
        }
        _ => format!("Approval {id} expired undecided, so it is denied."),
    };
    let text = match note_text {
        Some(n) if !n.trim().is_empty() => format!("{text} Note: {n}"),
        _ => text,
    };
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
    let text = format!(
        "{} {verb} {} for {} ({}).",
        change.by, change.description, record.channel.name, record.agent.handle
    );
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
