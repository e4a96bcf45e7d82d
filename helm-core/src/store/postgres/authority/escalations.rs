//! Calls for Skipper: opening one in a thread (or adding to the one open
//! there; the database allows one), and settling it, each with a visible
//! note in the thread, an event and an audit row, in one transaction.
//!
//! With several writers: opening takes the thread's row first, so two
//! calls in one thread at once are one call and an addition (not a
//! conflict on the one-open index); settling is one conditional update,
//! so a call is settled once and the second writer gets the conflict the
//! SQLite store gives for an already settled call.

use crate::store::postgres::prepared::Db;
use crate::store::rules;
use tokio_postgres::Row;

use super::super::channels::record;
use super::super::codec::ms;
use super::super::codec::{now, opt_ts, parsed, ts};
use super::super::threads::reading::mention;
use super::super::threads::rows;
use super::super::turns::{self, Chain};
use super::super::workspace::user_name;
use super::super::{audit, events, failed};
use crate::audit::AuditFields;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    AgentId, AgentKind, ChannelId, ChannelRef, Escalation, EscalationId, EscalationStatus, Thread,
    ThreadId, Turn, User, UserId,
};
use crate::store::types::{Escalated, NewEscalation, Resume};

/// An escalation with its thread's channel (`e` joined to `t`).
const SELECT: &str = "SELECT e.id, e.thread_id, t.channel_id, e.from_agent_id, \
    e.from_user_id, e.reason, e.status, e.resolved_by, e.outcome, e.created, \
    e.answered_by, e.answered_at FROM escalations e JOIN threads t ON t.id = e.thread_id";

fn escalation_at(row: &Row) -> Result<Escalation> {
    Ok(Escalation {
        id: EscalationId(row.get(0)),
        thread_id: ThreadId(row.get(1)),
        channel_id: ChannelId(row.get(2)),
        from_agent_id: row.get::<_, Option<i64>>(3).map(AgentId),
        from_user_id: row.get::<_, Option<i64>>(4).map(UserId),
        reason: row.get(5),
        status: parsed(row, 6)?,
        resolved_by: row.get(7),
        outcome: row.get(8),
        created: ts(row, 9)?,
        answered_by: row.get(10),
        answered_at: opt_ts(row, 11)?,
    })
}

/// An escalation.
pub(super) async fn escalation(c: &impl Db, id: EscalationId) -> Result<Escalation> {
    let row = c
        .query_opt(&format!("{SELECT} WHERE e.id = $1"), &[&id.get()])
        .await
        .map_err(failed("reading an escalation"))?
        .ok_or_else(|| Error::not_found("escalation", id))?;
    escalation_at(&row)
}

/// Escalations, oldest first; only open ones if asked.
pub(super) async fn escalations(c: &impl Db, open_only: bool) -> Result<Vec<Escalation>> {
    c.query(
        &format!("{SELECT} WHERE NOT $1 OR e.status = 'open' ORDER BY e.id"),
        &[&open_only],
    )
    .await
    .map_err(failed("listing escalations"))?
    .iter()
    .map(escalation_at)
    .collect()
}

/// Calls Skipper into a thread. With no call open there, opens one: the
/// record, a visible "Calling @skipper" note, and Skipper's turn (queued
/// behind the thread's others). With one open, adds the reason to it and
/// says so in the thread; Skipper gets another turn only if none of its
/// turns for that call is still waiting to start.
pub(crate) async fn escalate(c: &impl Db, new: NewEscalation) -> Result<Escalated> {
    // The thread's row serializes calls in it across nodes.
    c.query_opt(
        "SELECT id FROM threads WHERE id = $1 FOR UPDATE",
        &[&new.thread_id.get()],
    )
    .await
    .map_err(failed("taking a thread"))?;
    let thread = rows::thread(c, new.thread_id).await?;
    let open: Option<i64> = c
        .query_opt(
            "SELECT id FROM escalations WHERE thread_id = $1 AND status = 'open'",
            &[&new.thread_id.get()],
        )
        .await
        .map_err(failed("reading the thread's open call"))?
        .map(|r| r.get(0));
    let asker = user_name(c, new.requested_by).await?;
    let skipper = record::skipper(c).await?;
    if let Some(id) = open.map(EscalationId) {
        c.execute(
            "UPDATE escalations SET reason = reason || chr(10) || $2 WHERE id = $1",
            &[&id.get(), &new.reason],
        )
        .await
        .map_err(failed("adding to a call for Skipper"))?;
        let escalation = escalation(c, id).await?;
        let added = rows::note(
            c,
            thread.channel_id,
            Some(thread.id),
            &rules::call_added_note(&new.reason),
        )
        .await?;
        let waiting: bool = c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM turns WHERE escalation_id = $1
                 AND state = 'queued')",
                &[&id.get()],
            )
            .await
            .map_err(failed("reading Skipper's waiting turns"))?
            .get(0);
        let turn = if waiting {
            None
        } else {
            Some(
                turns::admit(
                    c,
                    &thread,
                    &added,
                    &skipper,
                    Chain {
                        requested_by: new.requested_by,
                        hop: new.hop,
                        escalation_id: Some(id),
                        admission: &new.admission,
                    },
                )
                .await?
                .0,
            )
        };
        events::append(
            c,
            Some(thread.channel_id),
            EventBody::EscalationChanged {
                escalation: escalation.clone(),
            },
        )
        .await?;
        audit::append(
            c,
            AuditFields {
                channel_id: Some(thread.channel_id),
                thread_id: Some(thread.id),
                agent: new.from_agent_handle.as_deref(),
                asker: asker.as_deref(),
                action: "escalation.added",
                input_summary: &new.reason,
                outcome: &rules::call_added_outcome(id, turn.as_ref().map(|t| t.id)),
            },
        )
        .await?;
        return Ok(Escalated {
            escalation,
            turn,
            added: true,
        });
    }
    let id: i64 = c
        .query_one(
            "INSERT INTO escalations (thread_id, from_agent_id, from_user_id, reason, status,
                 created)
             VALUES ($1, $2, $3, $4, 'open', $5) RETURNING id",
            &[
                &new.thread_id.get(),
                &new.from_agent_id.map(AgentId::get),
                &new.from_user_id.map(UserId::get),
                &new.reason,
                &ms(now()),
            ],
        )
        .await
        .map_err(failed("opening a call for Skipper"))?
        .get(0);
    let escalation = escalation(c, EscalationId(id)).await?;
    let call = rows::note(
        c,
        thread.channel_id,
        Some(thread.id),
        &rules::call_opened_note(&new.reason),
    )
    .await?;
    let (turn, _) = turns::admit(
        c,
        &thread,
        &call,
        &skipper,
        Chain {
            requested_by: new.requested_by,
            hop: new.hop,
            escalation_id: Some(escalation.id),
            admission: &new.admission,
        },
    )
    .await?;
    events::append(
        c,
        Some(thread.channel_id),
        EventBody::EscalationChanged {
            escalation: escalation.clone(),
        },
    )
    .await?;
    audit::append(
        c,
        AuditFields {
            channel_id: Some(thread.channel_id),
            thread_id: Some(thread.id),
            agent: new.from_agent_handle.as_deref(),
            asker: asker.as_deref(),
            action: "escalation.opened",
            input_summary: &new.reason,
            outcome: &rules::call_opened_outcome(escalation.id, turn.id),
        },
    )
    .await?;
    Ok(Escalated {
        escalation,
        turn: Some(turn),
        added: false,
    })
}

/// Closes a call for Skipper (resolved, or handed to the Captain) with a
/// visible note; with `resume`, wakes the channel agent that called.
pub(super) async fn settle(
    c: &impl Db,
    id: EscalationId,
    status: EscalationStatus,
    outcome: &str,
    resume: Option<Resume>,
) -> Result<(Escalation, Option<Turn>)> {
    // One conditional update: of two writers, the second finds it settled.
    let settled = c
        .query_opt(
            "UPDATE escalations e SET status = $2, outcome = $3, resolved_by = '@skipper',
                 resolved_at = $4
             WHERE e.id = $1 AND e.status = 'open'
             RETURNING e.reason",
            &[&id.get(), &status.as_str(), &outcome, &ms(now())],
        )
        .await
        .map_err(failed("settling a call for Skipper"))?;
    let Some(settled) = settled else {
        let current = escalation(c, id).await?;
        return Err(Error::Conflict(format!(
            "escalation {id} is already {}",
            current.status
        )));
    };
    let reason: String = settled.get(0);
    let after = escalation(c, id).await?;
    let thread = rows::thread(c, after.thread_id).await?;
    let text = rules::call_settled_note(status, outcome);
    let note = rows::note(c, thread.channel_id, Some(thread.id), &text).await?;
    if status == EscalationStatus::HandedToCaptain {
        // The question is the Captain's: she is told as a mention is.
        let captain = c
            .query_one("SELECT id FROM users WHERE role = 'captain'", &[])
            .await
            .map_err(failed("finding the Captain"))?;
        mention(c, &note, UserId(captain.get(0))).await?;
    }
    if status == EscalationStatus::HandedToCaptain
        && let Some(thread) = rows::touch_thread(c, thread.id, Some("waiting"), None).await?
    {
        events::append(
            c,
            Some(thread.channel_id),
            EventBody::ThreadUpdated { thread },
        )
        .await?;
    }
    let mut resumed = None;
    if let Some(resume) = resume {
        let record = record::get(c, &ChannelRef::Id(thread.channel_id)).await?;
        if record.agent.kind == AgentKind::Channel {
            let chain = Chain {
                requested_by: resume.requested_by,
                hop: resume.hop,
                escalation_id: None,
                admission: &resume.admission,
            };
            let (turn, _) = turns::admit(c, &thread, &note, &record.agent, chain).await?;
            resumed = Some(turn);
        }
    }
    events::append(
        c,
        Some(thread.channel_id),
        EventBody::EscalationChanged {
            escalation: after.clone(),
        },
    )
    .await?;
    audit::append(
        c,
        AuditFields {
            channel_id: Some(thread.channel_id),
            thread_id: Some(thread.id),
            agent: Some("@skipper"),
            asker: None,
            action: &format!("escalation.{status}"),
            input_summary: &reason,
            outcome,
        },
    )
    .await?;
    Ok((after, resumed))
}

/// The calls Skipper handed to the Captain in `thread` that nobody has
/// answered yet are answered by `by` (the Captain or an admin, who just
/// wrote there): each is marked, told as a change, and written to the
/// audit log, in the writing's transaction (which holds the thread's row).
pub(crate) async fn answer_handed(c: &impl Db, thread: &Thread, by: &User) -> Result<()> {
    let answered = c
        .query(
            "UPDATE escalations SET answered_by = $2, answered_at = $3 WHERE thread_id = $1 \
             AND status = 'handed_to_captain' AND answered_by IS NULL RETURNING id",
            &[&thread.id.get(), &by.name, &now().as_millisecond()],
        )
        .await
        .map_err(failed("answering a call for the Captain"))?;
    for row in answered {
        let id = EscalationId(row.get(0));
        let answered = escalation(c, id).await?;
        events::append(
            c,
            Some(thread.channel_id),
            EventBody::EscalationChanged {
                escalation: answered.clone(),
            },
        )
        .await?;
        audit::append(
            c,
            AuditFields {
                channel_id: Some(thread.channel_id),
                thread_id: Some(thread.id),
                agent: None,
                asker: Some(&by.name),
                action: "escalation.answered",
                input_summary: &answered.reason,
                outcome: &rules::call_answered_outcome(id, &by.name),
            },
        )
        .await?;
    }
    Ok(())
}
