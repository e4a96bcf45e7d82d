//! What a post wakes, in the post's own transaction: the resident agent's
//! turn (with its pending reply) and a call for Skipper, as the SQLite
//! store admits them (`sqlite/turns.rs::admit`, `sqlite/escalations.rs`).
//!
//! The turn and escalation areas proper (claiming, finishing, settling a
//! call) are [`crate::store::TurnStore`] and
//! [`crate::store::AuthorityStore`]; this module holds only what posting
//! needs, so a post stays one transaction.

use tokio_postgres::{GenericClient, Row};

use super::super::audit;
use super::super::codec::{now, opt_ts, parsed, ts};
use super::super::events::append;
use super::super::failed;
use super::rows::{NewMessage, insert_message};
use crate::audit::AuditFields;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Agent, AgentId, AgentKind, Author, ChannelId, Escalation, EscalationId, Handle, Message,
    MessageId, MessageStatus, ModelChoice, Thread, ThreadId, Turn, TurnId, UserId,
};
use crate::store::types::{Admission, AdmissionModel, Escalated, NewEscalation};

const TURN: &str = "id, channel_id, thread_id, agent_id, trigger_message_id, \
    reply_message_id, state, provider, model, error, steps, queued_at, started_at, finished_at, \
    hop, escalation_id, requested_by, model_level";

fn turn_at(r: &Row) -> Result<Turn> {
    let provider: Option<String> = r.get(7);
    Ok(Turn {
        id: TurnId(r.get(0)),
        channel_id: ChannelId(r.get(1)),
        thread_id: ThreadId(r.get(2)),
        agent_id: AgentId(r.get(3)),
        trigger_message_id: MessageId(r.get(4)),
        reply_message_id: MessageId(r.get(5)),
        state: parsed(r, 6)?,
        served_by: provider.map(|provider| ModelChoice {
            provider,
            model: r.get(8),
        }),
        error: r.get(9),
        steps: u32::try_from(r.get::<_, i64>(10)).unwrap_or(u32::MAX),
        queued_at: ts(r, 11)?,
        started_at: opt_ts(r, 12)?,
        finished_at: opt_ts(r, 13)?,
        hop: u32::try_from(r.get::<_, i64>(14)).unwrap_or(u32::MAX),
        escalation_id: r.get::<_, Option<i64>>(15).map(EscalationId),
        requested_by: r.get::<_, Option<i64>>(16).map(UserId),
        model_level: match r.get::<_, Option<&str>>(17) {
            Some(_) => Some(parsed(r, 17)?),
            None => None,
        },
    })
}

async fn agent_author(c: &impl GenericClient, agent: AgentId) -> Result<Author> {
    let row = c
        .query_opt(
            "SELECT kind, name FROM agents WHERE id = $1",
            &[&agent.get()],
        )
        .await
        .map_err(failed("reading an agent"))?
        .ok_or_else(|| Error::not_found("agent", agent))?;
    Ok(Author::Agent {
        agent_id: agent,
        handle: Handle::from_stored(row.get::<_, String>(1)),
        agent_kind: parsed::<AgentKind>(&row, 0)?,
    })
}

/// Who asked for a turn, how far down an agent-to-agent chain it is, and
/// what it runs with.
pub(super) struct Chain<'a> {
    /// The person whose message started the chain.
    pub requested_by: Option<UserId>,
    /// Agent-to-agent hops so far (0 when a person woke the agent).
    pub hop: u32,
    /// The call for Skipper the turn answers.
    pub escalation_id: Option<EscalationId>,
    /// Its model and the agent's capacity.
    pub admission: &'a Admission,
}

/// Admits a turn for `trigger`: the turn row and its pending reply, with
/// events, in the caller's transaction. Refuses when no model can serve it,
/// or its channel is archived. Returns the turn and how many turns must end
/// before it can start.
pub(super) async fn admit(
    tx: &impl GenericClient,
    thread: &Thread,
    trigger: &Message,
    agent: &Agent,
    chain: Chain<'_>,
) -> Result<(Turn, u32)> {
    let model = match &chain.admission.model {
        AdmissionModel::Chosen(model) => model.clone(),
        AdmissionModel::Unavailable(reason) => {
            return Err(Error::ModelUnavailable(reason.clone()));
        }
    };
    let archived: bool = tx
        .query_one(
            "SELECT status = 'archived' FROM channels WHERE id = $1",
            &[&thread.channel_id.get()],
        )
        .await
        .map_err(failed("reading a channel's status"))?
        .get(0);
    if archived {
        return Err(Error::Refused(
            "the channel is archived, so its agents start no work; restore it first".into(),
        ));
    }
    let author = agent_author(tx, agent.id).await?;
    let reply = insert_message(
        tx,
        NewMessage {
            channel_id: thread.channel_id,
            thread_id: Some(thread.id),
            author: &author,
            content: "",
            status: MessageStatus::Pending,
            served_by: None,
            external_id: None,
        },
    )
    .await?;
    let row = tx
        .query_one(
            &format!(
                "INSERT INTO turns (channel_id, thread_id, agent_id, trigger_message_id, \
                 reply_message_id, requested_by, state, queued_at, hop, escalation_id, provider, \
                 model, model_level) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12) \
                 RETURNING {TURN}"
            ),
            &[
                &thread.channel_id.get(),
                &thread.id.get(),
                &agent.id.get(),
                &trigger.id.get(),
                &reply.id.get(),
                &chain.requested_by.map(UserId::get),
                &now().as_millisecond(),
                &i64::from(chain.hop),
                &chain.escalation_id.map(EscalationId::get),
                &model.provider,
                &model.model,
                &model.level.as_str(),
            ],
        )
        .await
        .map_err(failed("queueing a turn"))?;
    let turn = turn_at(&row)?;
    let ahead = queue_position(tx, &turn, chain.admission.capacity).await?;
    append(
        tx,
        Some(thread.channel_id),
        EventBody::MessageCreated { message: reply },
    )
    .await?;
    append(
        tx,
        Some(thread.channel_id),
        EventBody::TurnQueued {
            turn: turn.clone(),
            ahead,
        },
    )
    .await?;
    Ok((turn, ahead))
}

/// How many turns must end before `turn` can start: earlier live turns of
/// its thread; with none, the places among its agent's `capacity` taken by
/// running turns and by earlier queued turns of other threads, less the
/// capacity, plus one.
async fn queue_position(tx: &impl GenericClient, turn: &Turn, capacity: u32) -> Result<u32> {
    let row = tx
        .query_one(
            "SELECT \
               (SELECT count(*) FROM turns WHERE thread_id = $3 AND id < $2 \
                  AND state IN ('queued', 'running')), \
               (SELECT count(*) FROM turns WHERE agent_id = $1 AND state = 'running'), \
               (SELECT count(*) FROM turns q WHERE q.agent_id = $1 AND q.state = 'queued' \
                  AND q.id < $2 AND q.thread_id <> $3 \
                  AND q.id = (SELECT min(f.id) FROM turns f WHERE f.thread_id = q.thread_id \
                      AND f.state IN ('queued', 'running')))",
            &[&turn.agent_id.get(), &turn.id.get(), &turn.thread_id.get()],
        )
        .await
        .map_err(failed("placing a turn in its queue"))?;
    let (same_thread, running, queued_before): (i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2));
    if same_thread > 0 {
        return Ok(same_thread as u32);
    }
    let taken = running + queued_before;
    Ok((taken - i64::from(capacity.max(1)) + 1).max(0) as u32)
}

/// Posts a note from Helm, with its event.
pub(super) async fn note(
    tx: &impl GenericClient,
    channel: ChannelId,
    thread: Option<ThreadId>,
    text: &str,
) -> Result<Message> {
    let message = insert_message(
        tx,
        NewMessage {
            channel_id: channel,
            thread_id: thread,
            author: &Author::System,
            content: text,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )
    .await?;
    append(
        tx,
        Some(channel),
        EventBody::MessageCreated {
            message: message.clone(),
        },
    )
    .await?;
    Ok(message)
}

const ESCALATION: &str = "SELECT e.id, e.thread_id, t.channel_id, e.from_agent_id, \
    e.from_user_id, e.reason, e.status, e.resolved_by, e.outcome, e.created \
    FROM escalations e JOIN threads t ON t.id = e.thread_id";

fn escalation_at(r: &Row) -> Result<Escalation> {
    Ok(Escalation {
        id: EscalationId(r.get(0)),
        thread_id: ThreadId(r.get(1)),
        channel_id: ChannelId(r.get(2)),
        from_agent_id: r.get::<_, Option<i64>>(3).map(AgentId),
        from_user_id: r.get::<_, Option<i64>>(4).map(UserId),
        reason: r.get(5),
        status: parsed(r, 6)?,
        resolved_by: r.get(7),
        outcome: r.get(8),
        created: ts(r, 9)?,
    })
}

async fn escalation(tx: &impl GenericClient, id: EscalationId) -> Result<Escalation> {
    let row = tx
        .query_opt(&format!("{ESCALATION} WHERE e.id = $1"), &[&id.get()])
        .await
        .map_err(failed("reading a call for Skipper"))?
        .ok_or_else(|| Error::not_found("escalation", id))?;
    escalation_at(&row)
}

/// The workspace's Skipper.
async fn skipper(tx: &impl GenericClient) -> Result<Agent> {
    let row = tx
        .query_opt(
            &format!(
                "SELECT id, kind, name, display_name, status, created FROM agents \
                 WHERE workspace_id = {} AND kind = 'skipper'",
                super::super::codec::WORKSPACE
            ),
            &[],
        )
        .await
        .map_err(failed("reading Skipper"))?
        .ok_or_else(|| Error::Internal("the workspace has no #main".into()))?;
    Ok(Agent {
        id: AgentId(row.get(0)),
        kind: parsed(&row, 1)?,
        handle: Handle::from_stored(row.get::<_, String>(2)),
        display_name: row.get(3),
        status: parsed(&row, 4)?,
        created: ts(&row, 5)?,
    })
}

async fn user_name(tx: &impl GenericClient, id: Option<UserId>) -> Result<Option<String>> {
    let Some(id) = id else { return Ok(None) };
    Ok(tx
        .query_opt("SELECT name FROM users WHERE id = $1", &[&id.get()])
        .await
        .map_err(failed("reading a user's name"))?
        .map(|r| r.get(0)))
}

/// Calls Skipper into a thread, as `sqlite/escalations.rs::escalate` does:
/// opens a call (with a visible note and Skipper's turn), or adds to the
/// one open there (queueing Skipper again only if none of its turns for
/// that call is still waiting). The caller holds the thread's row lock, so
/// two posts cannot both open a call; the database's one-open-call index
/// refuses any other writer that tries.
pub(super) async fn escalate(tx: &impl GenericClient, new: NewEscalation) -> Result<Escalated> {
    let thread = super::rows::thread(tx, new.thread_id).await?;
    let open: Option<EscalationId> = tx
        .query_opt(
            "SELECT id FROM escalations WHERE thread_id = $1 AND status = 'open'",
            &[&new.thread_id.get()],
        )
        .await
        .map_err(failed("reading a thread's call for Skipper"))?
        .map(|r| EscalationId(r.get(0)));
    let asker = user_name(tx, new.requested_by).await?;
    let skipper = skipper(tx).await?;
    if let Some(id) = open {
        tx.execute(
            "UPDATE escalations SET reason = reason || chr(10) || $2 WHERE id = $1",
            &[&id.get(), &new.reason],
        )
        .await
        .map_err(failed("adding to a call for Skipper"))?;
        let escalation = escalation(tx, id).await?;
        let added = note(
            tx,
            thread.channel_id,
            Some(thread.id),
            &format!(
                "Also for @skipper (the call already open here): {}",
                new.reason
            ),
        )
        .await?;
        let waiting: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM turns WHERE escalation_id = $1 \
                 AND state = 'queued')",
                &[&id.get()],
            )
            .await
            .map_err(failed("reading Skipper's queued turns"))?
            .get(0);
        let turn = if waiting {
            None
        } else {
            Some(
                admit(
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
                )
                .await?
                .0,
            )
        };
        append(
            tx,
            Some(thread.channel_id),
            EventBody::EscalationChanged {
                escalation: escalation.clone(),
            },
        )
        .await?;
        let outcome = match &turn {
            Some(turn) => format!(
                "added to escalation {id}; turn {} queued for @skipper",
                turn.id
            ),
            None => format!("added to escalation {id}; @skipper's turn is still queued"),
        };
        audit::append(
            tx,
            AuditFields {
                channel_id: Some(thread.channel_id),
                thread_id: Some(thread.id),
                agent: new.from_agent_handle.as_deref(),
                asker: asker.as_deref(),
                action: "escalation.added",
                input_summary: &new.reason,
                outcome: &outcome,
            },
        )
        .await?;
        return Ok(Escalated {
            escalation,
            turn,
            added: true,
        });
    }
    let id: i64 = tx
        .query_one(
            "INSERT INTO escalations (thread_id, from_agent_id, from_user_id, reason, status, \
             created) VALUES ($1, $2, $3, $4, 'open', $5) RETURNING id",
            &[
                &new.thread_id.get(),
                &new.from_agent_id.map(AgentId::get),
                &new.from_user_id.map(UserId::get),
                &new.reason,
                &now().as_millisecond(),
            ],
        )
        .await
        .map_err(failed("opening a call for Skipper"))?
        .get(0);
    let escalation = escalation(tx, EscalationId(id)).await?;
    let call = note(
        tx,
        thread.channel_id,
        Some(thread.id),
        &format!("Calling @skipper: {}", new.reason),
    )
    .await?;
    let (turn, _) = admit(
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
    )
    .await?;
    append(
        tx,
        Some(thread.channel_id),
        EventBody::EscalationChanged {
            escalation: escalation.clone(),
        },
    )
    .await?;
    audit::append(
        tx,
        AuditFields {
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
    )
    .await?;
    Ok(Escalated {
        escalation,
        turn: Some(turn),
        added: false,
    })
}
