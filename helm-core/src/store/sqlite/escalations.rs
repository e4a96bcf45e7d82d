//! Calls for Skipper: opening one in a thread (or adding to the one open
//! there; the database allows one), and settling it, each with a visible
//! note in the thread, an event and an audit row, in one transaction.

use crate::store::rules;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::audit::{self, AuditInput};
use super::authority::{note, skipper, user_name};
use super::channels;
use super::codec::{ms, now, opt_ts, parsed, ts};
use super::threads;
use super::turns::{self, Chain};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    AgentKind, ChannelRef, Escalation, EscalationId, EscalationStatus, Thread, Turn, User, UserId,
};
use crate::store::types::{Escalated, NewEscalation, Resume};

/// An escalation with its thread's channel (`e` joined to `t`).
const ESCALATION_SELECT: &str = "SELECT e.id, e.thread_id, t.channel_id, e.from_agent_id, \
    e.from_user_id, e.reason, e.status, e.resolved_by, e.outcome, e.created, \
    e.answered_by, e.answered_at FROM escalations e JOIN threads t ON t.id = e.thread_id";

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
        answered_by: r.get(10)?,
        answered_at: opt_ts(r, 11)?,
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
            &rules::call_added_note(&new.reason),
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
                outcome: &rules::call_added_outcome(id, turn.as_ref().map(|t| t.id)),
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
        &rules::call_opened_note(&new.reason),
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
            outcome: &rules::call_opened_outcome(escalation.id, turn.id),
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
    let text = rules::call_settled_note(status, outcome);
    let settled = note(tx, thread.channel_id, Some(thread.id), &text)?;
    if status == EscalationStatus::HandedToCaptain {
        // The question is the Captain's: she is told as a mention is.
        let captain: UserId =
            tx.conn()
                .query_row("SELECT id FROM users WHERE role = 'captain'", [], |r| {
                    r.get(0)
                })?;
        super::reading::mention(tx, &settled, captain)?;
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

/// The calls Skipper handed to the Captain in `thread` that nobody has
/// answered yet are answered by `by` (the Captain or an admin, who just
/// wrote there): each is marked, told as a change, and written to the
/// audit log, in the writing's transaction.
pub(super) fn answer_handed(tx: &mut Tx<'_>, thread: &Thread, by: &User) -> Result<()> {
    let waiting: Vec<EscalationId> = tx
        .conn()
        .prepare_cached(
            "SELECT id FROM escalations WHERE thread_id = ?1 \
             AND status = 'handed_to_captain' AND answered_by IS NULL",
        )?
        .query_map([thread.id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in waiting {
        tx.conn().execute(
            "UPDATE escalations SET answered_by = ?2, answered_at = ?3 WHERE id = ?1",
            params![id, by.name, ms(now())],
        )?;
        let answered = escalation(tx.conn(), id)?;
        tx.emit(
            Some(thread.channel_id),
            EventBody::EscalationChanged {
                escalation: answered.clone(),
            },
        )?;
        audit::append(
            tx.conn(),
            AuditInput {
                channel_id: Some(thread.channel_id),
                thread_id: Some(thread.id),
                agent: None,
                asker: Some(&by.name),
                action: "escalation.answered",
                input_summary: &answered.reason,
                outcome: &rules::call_answered_outcome(id, &by.name),
            },
        )?;
    }
    Ok(())
}
