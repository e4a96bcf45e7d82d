//! [`TurnStore`] for [`PostgresStore`]: turns as rows (admission, claiming,
//! streaming, the one finalizer), the tool journal and artifacts, as the
//! SQLite store keeps them.
//!
//! Several nodes share the database, so a turn must start exactly once:
//! claiming is one conditional statement (`queued -> running ... RETURNING`)
//! and, of two nodes racing for a turn, the second finds it no longer
//! queued. The claim also leases the turn to its node (see
//! `migrations/004_turn_lease.sql` and [`lease`]). Every write of a turn
//! takes its row first (then its reply's), so a late chunk and the end of
//! a turn cannot interleave.

pub(crate) mod lease;
mod tools;

use crate::store::postgres::prepared::Db;
use crate::store::rules::{stored_usage, thread_status_after};
use std::collections::HashMap;

use async_trait::async_trait;
use jiff::Timestamp;
use tokio_postgres::Row;

use super::codec::ms;
use super::codec::{now, opt_ts, parsed, ts};
use super::memory::index_message;
use super::threads::reading::record_mentions;
use super::threads::rows::{self, NewMessage};
use super::{PostgresStore, events, failed};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Agent, AgentId, AgentStatus, Artifact, ArtifactKind, Author, ChannelId, EscalationId, Handle,
    Message, MessageId, MessageStatus, ModelChoice, Thread, ThreadId, ThreadStatus, ToolAction,
    ToolActionId, ToolStatus, Turn, TurnId, TurnState, User, UserId,
};
use crate::store::TurnStore;
use crate::store::types::{
    Admission, AdmissionModel, LeaseRenewal, NewToolAction, Repaired, ToolActionOutcome, TurnFinish,
};

/// The turn columns (of `t`), in [`turn_at`] order.
pub(crate) const COLUMNS: &str = "t.id, t.channel_id, t.thread_id, t.agent_id, \
    t.trigger_message_id, t.reply_message_id, t.state, t.provider, t.model, t.error, t.steps, \
    t.queued_at, t.started_at, t.finished_at, t.hop, t.escalation_id, t.requested_by, \
    t.model_level, t.input_tokens, t.output_tokens";
/// The index of the first column a query selects after [`COLUMNS`].
const AFTER_COLUMNS: usize = 20;

/// A turn from the [`COLUMNS`].
pub(crate) fn turn_at(row: &Row) -> Result<Turn> {
    let provider: Option<String> = row.get(7);
    Ok(Turn {
        id: TurnId(row.get(0)),
        channel_id: ChannelId(row.get(1)),
        thread_id: ThreadId(row.get(2)),
        agent_id: AgentId(row.get(3)),
        trigger_message_id: MessageId(row.get(4)),
        reply_message_id: MessageId(row.get(5)),
        state: parsed(row, 6)?,
        served_by: provider.map(|provider| ModelChoice {
            provider,
            model: row.get(8),
        }),
        error: row.get(9),
        steps: count(row.get(10)),
        queued_at: ts(row, 11)?,
        started_at: opt_ts(row, 12)?,
        finished_at: opt_ts(row, 13)?,
        hop: count(row.get(14)),
        escalation_id: row.get::<_, Option<i64>>(15).map(EscalationId),
        requested_by: row.get::<_, Option<i64>>(16).map(UserId),
        model_level: match row.get::<_, Option<&str>>(17) {
            Some(_) => Some(parsed(row, 17)?),
            None => None,
        },
        usage: stored_usage(row.get(18), row.get(19)),
    })
}

/// A stored count as the model's `u32`.
fn count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// A turn by id.
pub(crate) async fn get(c: &impl Db, id: TurnId) -> Result<Turn> {
    let row = c
        .query_opt(
            &format!("SELECT {COLUMNS} FROM turns t WHERE t.id = $1"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a turn"))?
        .ok_or_else(|| Error::not_found("turn", id))?;
    turn_at(&row)
}

async fn list(c: &impl Db, filter: &str, thread: Option<ThreadId>) -> Result<Vec<Turn>> {
    c.query(
        &format!("SELECT {COLUMNS} FROM turns t WHERE {filter} ORDER BY t.id"),
        &[&thread.map(ThreadId::get)],
    )
    .await
    .map_err(failed("listing turns"))?
    .iter()
    .map(turn_at)
    .collect()
}

/// Who asked for a turn, how far down an agent-to-agent chain it is, and
/// what it runs with.
pub(crate) struct Chain<'a> {
    /// The person whose message started the chain.
    pub requested_by: Option<UserId>,
    /// Agent-to-agent hops so far (0 when a person woke the agent).
    pub hop: u32,
    /// The call for Skipper the turn answers.
    pub escalation_id: Option<EscalationId>,
    /// Its model and the agent's capacity.
    pub admission: &'a Admission,
}

/// Queues `id` again (see [`TurnStore::retry_turn`]). The turn's row is
/// locked first, so of two retries at once the second finds the first's
/// turn the thread's latest and is refused.
async fn retry(c: &impl Db, id: TurnId, by: &User, admission: &Admission) -> Result<Turn> {
    c.query_opt("SELECT 1 FROM turns WHERE id = $1 FOR UPDATE", &[&id.get()])
        .await
        .map_err(failed("locking a turn"))?
        .ok_or_else(|| Error::not_found("turn", id))?;
    let turn = get(c, id).await?;
    let latest: i64 = c
        .query_one(
            "SELECT max(id) FROM turns WHERE thread_id = $1",
            &[&turn.thread_id.get()],
        )
        .await
        .map_err(failed("reading a thread's turns"))?
        .get(0);
    if let Some(refusal) = crate::store::rules::retry_refusal(&turn, TurnId(latest)) {
        return Err(Error::Conflict(refusal));
    }
    let thread = rows::thread(c, turn.thread_id).await?;
    let thread = super::threads::post::resume(c, &thread).await?;
    let record = crate::store::postgres::channels::record::get(
        c,
        &crate::model::ChannelRef::Id(turn.channel_id),
    )
    .await?;
    let agent = if record.agent.id == turn.agent_id {
        record.agent
    } else {
        crate::store::postgres::channels::record::skipper(c).await?
    };
    // A message wakes each agent once, so the note is what wakes it again.
    let text = crate::store::rules::retry_note(&by.name, &agent.handle);
    let trigger = rows::note(c, thread.channel_id, Some(thread.id), &text).await?;
    let chain = Chain {
        requested_by: Some(by.id),
        hop: turn.hop,
        escalation_id: turn.escalation_id,
        admission,
    };
    Ok(admit(c, &thread, &trigger, &agent, chain).await?.0)
}

/// Admits a turn for `trigger`: the turn row (with the model chosen for it)
/// and its pending reply, with events, in the caller's transaction. Refuses
/// when no model can serve it, or its channel is archived. Returns the turn
/// and how many turns must end before it can start.
pub(crate) async fn admit(
    c: &impl Db,
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
    // The channel's status and the agent's name in one round trip.
    let row = c
        .query_one(
            "SELECT c.status = 'archived', a.kind, a.name \
             FROM channels c LEFT JOIN agents a ON a.id = $2 WHERE c.id = $1",
            &[&thread.channel_id.get(), &agent.id.get()],
        )
        .await
        .map_err(failed("reading a channel's status and its agent"))?;
    if row.get::<_, bool>(0) {
        return Err(Error::Refused(
            "the channel is archived, so its agents start no work; restore it first".into(),
        ));
    }
    let Some(name) = row.get::<_, Option<String>>(2) else {
        return Err(Error::not_found("agent", agent.id));
    };
    let author = Author::Agent {
        agent_id: agent.id,
        handle: Handle::from_stored(name),
        agent_kind: parsed(&row, 1)?,
    };
    let reply = rows::insert_message(
        c,
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
    let row = c
        .query_one(
            &format!(
                "INSERT INTO turns AS t (channel_id, thread_id, agent_id, trigger_message_id,
                     reply_message_id, requested_by, state, queued_at, hop, escalation_id,
                     provider, model, model_level)
                 VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12)
                 RETURNING {COLUMNS}"
            ),
            &[
                &thread.channel_id.get(),
                &thread.id.get(),
                &agent.id.get(),
                &trigger.id.get(),
                &reply.id.get(),
                &chain.requested_by.map(UserId::get),
                &ms(now()),
                &i64::from(chain.hop),
                &chain.escalation_id.map(EscalationId::get),
                &model.provider,
                &model.model,
                &model.level.as_str(),
            ],
        )
        .await
        .map_err(failed("admitting a turn"))?;
    let turn = turn_at(&row)?;
    let ahead = queue_position(c, &turn, chain.admission.capacity).await?;
    events::append(
        c,
        Some(thread.channel_id),
        EventBody::MessageCreated { message: reply },
    )
    .await?;
    events::append(
        c,
        Some(thread.channel_id),
        EventBody::TurnQueued {
            turn: turn.clone(),
            ahead,
        },
    )
    .await?;
    Ok((turn, ahead))
}

/// How many turns must end before `turn` can start (as the SQLite store
/// counts: the earlier live turns of its thread, or else the places of
/// its agent's `capacity` taken before it, and one more).
async fn queue_position(c: &impl Db, turn: &Turn, capacity: u32) -> Result<u32> {
    let row = c
        .query_one(
            "SELECT
               (SELECT count(*) FROM turns WHERE thread_id = $3 AND id < $2
                  AND state IN ('queued', 'running')),
               (SELECT count(*) FROM turns WHERE agent_id = $1 AND state = 'running'),
               (SELECT count(*) FROM turns q WHERE q.agent_id = $1 AND q.state = 'queued'
                  AND q.id < $2 AND q.thread_id <> $3
                  AND q.id = (SELECT min(f.id) FROM turns f WHERE f.thread_id = q.thread_id
                      AND f.state IN ('queued', 'running')))",
            &[&turn.agent_id.get(), &turn.id.get(), &turn.thread_id.get()],
        )
        .await
        .map_err(failed("reading a turn's place in the queue"))?;
    let (same_thread, running, queued_before): (i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2));
    if same_thread > 0 {
        return Ok(count(same_thread));
    }
    let taken = running + queued_before;
    Ok(count(taken - i64::from(capacity.max(1)) + 1))
}

/// Queued turns that may start now, oldest first: the first queued turn of
/// each thread without a running turn, in an active channel, while its
/// agent has fewer than `capacity` running turns.
async fn runnable(c: &impl Db, capacity: u32) -> Result<Vec<Turn>> {
    let rows = c
        .query(
            &format!(
                "SELECT {COLUMNS},
                   (SELECT count(*) FROM turns r WHERE r.agent_id = t.agent_id
                      AND r.state = 'running')
                 FROM turns t WHERE t.state = 'queued'
                 AND NOT EXISTS (SELECT 1 FROM turns r WHERE r.thread_id = t.thread_id
                     AND r.state = 'running')
                 AND (SELECT status FROM channels c WHERE c.id = t.channel_id) = 'active'
                 AND t.id = (SELECT min(f.id) FROM turns f WHERE f.thread_id = t.thread_id
                     AND f.state = 'queued')
                 ORDER BY t.id"
            ),
            &[],
        )
        .await
        .map_err(failed("listing runnable turns"))?;
    let mut running: HashMap<AgentId, u32> = HashMap::new();
    let mut out = Vec::new();
    for row in &rows {
        let turn = turn_at(row)?;
        let used = *running
            .entry(turn.agent_id)
            .or_insert_with(|| count(row.get(AFTER_COLUMNS)));
        if used < capacity {
            running.insert(turn.agent_id, used + 1);
            out.push(turn);
        }
    }
    Ok(out)
}

/// Sets an agent's status from its running turns. The agent's row is
/// locked first, so two nodes ending two of its turns at once count each
/// other's (the count is read after the lock, in a fresh snapshot).
async fn set_agent_status(c: &impl Db, agent: AgentId, channel: ChannelId) -> Result<()> {
    let row = c
        .query_one(
            "SELECT a.status, a.kind,
                    coalesce((SELECT status = 'archived' FROM channels WHERE id = $2), false)
             FROM agents a WHERE a.id = $1 FOR UPDATE OF a",
            &[&agent.get(), &channel.get()],
        )
        .await
        .map_err(failed("reading an agent's status"))?;
    let (current, kind, archived): (String, String, bool) = (row.get(0), row.get(1), row.get(2));
    let running: i64 = c
        .query_one(
            "SELECT count(*) FROM turns WHERE agent_id = $1 AND state = 'running'",
            &[&agent.get()],
        )
        .await
        .map_err(failed("counting an agent's running turns"))?
        .get(0);
    let next = if running > 0 {
        AgentStatus::Working
    } else if archived && kind == "channel" {
        AgentStatus::Paused
    } else {
        AgentStatus::Ready
    };
    if current != next.as_str() {
        c.execute(
            "UPDATE agents SET status = $1 WHERE id = $2",
            &[&next.as_str(), &agent.get()],
        )
        .await
        .map_err(failed("setting an agent's status"))?;
        events::append(
            c,
            Some(channel),
            EventBody::AgentStatusChanged {
                agent_id: agent,
                status: next,
            },
        )
        .await?;
    }
    Ok(())
}

/// Claims a queued turn in one statement: it becomes `running`, leased to
/// this node with a new fencing token, and its reply `streaming`. `None`
/// if the turn was no longer queued (another node won it, or it was
/// cancelled), its thread already has a running turn, or its channel is
/// archived. A turn admitted with its model keeps it; `served_by` only
/// fills in turns admitted without one.
async fn start(
    c: &impl Db,
    id: TurnId,
    served_by: Option<ModelChoice>,
    lease_ms: i64,
) -> Result<Option<(Turn, i64)>> {
    let at = ms(now());
    let provider = served_by.as_ref().map(|m| m.provider.clone());
    let model = served_by.and_then(|m| m.model);
    let claimed = c
        .query_opt(
            &format!(
                "UPDATE turns t SET state = 'running', started_at = $2,
                     provider = coalesce(t.provider, $3),
                     model = CASE WHEN t.provider IS NULL THEN $4 ELSE t.model END,
                     lease_owner = $5, lease_expires = $2::BIGINT + $6::BIGINT, lease_token = t.lease_token + 1
                 WHERE t.id = $1 AND t.state = 'queued'
                 AND NOT EXISTS (SELECT 1 FROM turns r WHERE r.thread_id = t.thread_id
                     AND r.state = 'running')
                 AND (SELECT status FROM channels c WHERE c.id = t.channel_id) = 'active'
                 RETURNING {COLUMNS}, t.lease_token"
            ),
            &[
                &id.get(),
                &at,
                &provider,
                &model,
                &lease::node(),
                &lease_ms,
            ],
        )
        .await;
    let row = match claimed {
        Ok(Some(row)) => row,
        Ok(None) => return Ok(None),
        // Another node started another turn of this thread at the same
        // moment: the one-running-turn index decided, and this one waits.
        Err(e)
            if e.as_db_error()
                .and_then(|db| db.constraint())
                .is_some_and(|n| n == "turns_one_running_per_thread") =>
        {
            return Ok(None);
        }
        Err(e) => return Err(failed("starting a turn")(e)),
    };
    let turn = turn_at(&row)?;
    let token: i64 = row.get(AFTER_COLUMNS);
    let served = turn.served_by.clone();
    c.execute(
        "UPDATE messages SET status = 'streaming', provider = $2, model = $3, updated = $4
         WHERE id = $1",
        &[
            &turn.reply_message_id.get(),
            &served.as_ref().map(|m| m.provider.clone()),
            &served.and_then(|m| m.model),
            &ms(now()),
        ],
    )
    .await
    .map_err(failed("streaming a turn's reply"))?;
    events::append(
        c,
        Some(turn.channel_id),
        EventBody::TurnStarted { turn: turn.clone() },
    )
    .await?;
    set_agent_status(c, turn.agent_id, turn.channel_id).await?;
    Ok(Some((turn, token)))
}

/// The SQL condition a turn's write must meet: the turn is running and,
/// when the writer names its fencing token (`$n`), the token is current.
fn live_and_fenced(param: usize) -> String {
    format!("t.state = 'running' AND (${param}::BIGINT IS NULL OR t.lease_token = ${param})")
}

/// Appends streamed text to a running turn's reply; `false` (and nothing
/// written) once the reply is final, or when `fence` is no longer the
/// turn's token. The turn's row is taken first, as the finalizer takes it.
pub(crate) async fn append_reply(
    c: &impl Db,
    id: TurnId,
    delta: &str,
    fence: Option<i64>,
) -> Result<bool> {
    let live = c
        .query_opt(
            &format!(
                "SELECT t.channel_id, t.thread_id, t.reply_message_id, t.first_delta_seq
                 FROM turns t WHERE t.id = $1 AND {} FOR UPDATE",
                live_and_fenced(2)
            ),
            &[&id.get(), &fence],
        )
        .await
        .map_err(failed("reading a running turn"))?;
    let Some(live) = live else {
        // A missing turn is an error, as in SQLite; an ended one is not.
        get(c, id).await?;
        return Ok(false);
    };
    let channel = ChannelId(live.get(0));
    let thread = ThreadId(live.get(1));
    let reply = MessageId(live.get(2));
    let first: Option<i64> = live.get(3);
    // The length comes from the row the append wrote, so the offset is
    // where this chunk landed.
    let appended = c
        .query_opt(
            "UPDATE messages SET content = content || $2, updated = $3
             WHERE id = $1 AND status = 'streaming'
             RETURNING char_length(content)::bigint",
            &[&reply.get(), &delta, &ms(now())],
        )
        .await
        .map_err(failed("appending to a reply"))?;
    let Some(appended) = appended else {
        return Ok(false);
    };
    let length = appended.get::<_, i64>(0) as u64;
    let event = events::append(
        c,
        Some(channel),
        EventBody::MessageDelta {
            message_id: reply,
            thread_id: Some(thread),
            text: delta.to_string(),
            offset: length.saturating_sub(delta.chars().count() as u64),
        },
    )
    .await?;
    if first.is_none() {
        c.execute(
            "UPDATE turns SET first_delta_seq = $2 WHERE id = $1",
            &[&id.get(), &(event.seq as i64)],
        )
        .await
        .map_err(failed("recording a reply's first delta"))?;
    }
    Ok(true)
}

/// The one finalizer: moves a live turn to its end state with its reply,
/// thread and agent status, a visible note if any, and the events. `None`
/// if the turn had already ended (or `fence` is no longer its token). The
/// reply's deltas leave the durable log: live listeners had them, and
/// `message.completed` carries the whole text.
pub(crate) async fn finish(
    c: &impl Db,
    id: TurnId,
    finish: TurnFinish,
    fence: Option<i64>,
) -> Result<Option<Turn>> {
    if !finish.state.is_final() {
        return Err(Error::Internal(format!(
            "{} is not an end state",
            finish.state
        )));
    }
    let ended = c
        .query_opt(
            &format!(
                "UPDATE turns t SET state = $2, error = $3, steps = $4, input_tokens = $5,
                     output_tokens = $6, finished_at = $7, lease_expires = NULL
                 WHERE t.id = $1 AND (t.state = 'queued' AND $8::BIGINT IS NULL OR {})
                 AND ($8::BIGINT IS NOT NULL OR t.state = 'queued' OR t.lease_expires IS NULL
                      OR t.lease_expires <= $7)
                 RETURNING {COLUMNS}, t.first_delta_seq",
                live_and_fenced(8)
            ),
            &[
                &id.get(),
                &finish.state.as_str(),
                &finish.error,
                &i64::from(finish.steps),
                &(finish.usage.input_tokens as i64),
                &(finish.usage.output_tokens as i64),
                &ms(now()),
                &fence,
            ],
        )
        .await
        .map_err(failed("ending a turn"))?;
    let Some(row) = ended else {
        return Ok(None);
    };
    let turn = turn_at(&row)?;
    let first_delta: Option<i64> = row.get(AFTER_COLUMNS);
    let reply_status = match finish.state {
        TurnState::Completed | TurnState::Waiting => MessageStatus::Complete,
        TurnState::Failed => MessageStatus::Failed,
        TurnState::Interrupted => MessageStatus::Interrupted,
        _ => MessageStatus::Stopped,
    };
    c.execute(
        "UPDATE messages SET status = $2, content = $3, updated = $4 WHERE id = $1",
        &[
            &turn.reply_message_id.get(),
            &reply_status.as_str(),
            &finish.reply,
            &ms(now()),
        ],
    )
    .await
    .map_err(failed("ending a turn's reply"))?;
    if let Some(first) = first_delta {
        c.execute(
            "DELETE FROM events WHERE seq >= $1 AND channel_id = $2 AND type = 'message.delta'
             AND (payload::jsonb ->> 'message_id')::BIGINT = $3",
            &[&first, &turn.channel_id.get(), &turn.reply_message_id.get()],
        )
        .await
        .map_err(failed("removing a reply's deltas from the log"))?;
    }
    let reply = rows::message(c, turn.reply_message_id).await?;
    if reply.status == MessageStatus::Complete {
        index_message(c, &reply).await?;
    }
    events::append(
        c,
        Some(turn.channel_id),
        EventBody::MessageCompleted {
            message: reply.clone(),
        },
    )
    .await?;
    record_mentions(c, &reply).await?;
    if let Some(note) = &finish.note {
        rows::note(c, turn.channel_id, Some(turn.thread_id), note).await?;
    }
    // A turn that ended has no tool call still running: one cut short ends
    // with it (interrupted when Helm stopped, cancelled otherwise).
    tools::end_running_of_turn(
        c,
        turn.id,
        if finish.state == TurnState::Interrupted {
            ToolStatus::Interrupted
        } else {
            ToolStatus::Cancelled
        },
    )
    .await?;
    super::authority::expire_approvals_of_turn(c, turn.id).await?;
    // The thread's status follows its latest turn; a turn that ends after a
    // later one of its thread (which cannot happen in order) changes nothing.
    let thread = rows::thread(c, turn.thread_id).await?;
    let later_ended: bool = c
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM turns WHERE thread_id = $1 AND id > $2
             AND state NOT IN ('queued', 'running'))",
            &[&turn.thread_id.get(), &turn.id.get()],
        )
        .await
        .map_err(failed("reading a thread's turns"))?
        .get(0);
    let next_status = if later_ended {
        None
    } else {
        thread_status_after(finish.state, thread.status)
    };
    let touched =
        rows::touch_thread(c, turn.thread_id, next_status.map(|s| s.as_str()), None).await?;
    if next_status.is_some_and(|s| s != thread.status)
        && let Some(thread) = touched
    {
        events::append(
            c,
            Some(turn.channel_id),
            EventBody::ThreadUpdated { thread },
        )
        .await?;
    }
    let body = match finish.state {
        TurnState::Completed | TurnState::Waiting => {
            EventBody::TurnCompleted { turn: turn.clone() }
        }
        TurnState::Failed => EventBody::TurnFailed { turn: turn.clone() },
        _ => EventBody::TurnCancelled { turn: turn.clone() },
    };
    events::append(c, Some(turn.channel_id), body).await?;
    set_agent_status(c, turn.agent_id, turn.channel_id).await?;
    Ok(Some(turn))
}

/// Each failed thread with no live turn takes the status its latest ended
/// turn gives it. Returns how many changed.
async fn follow_latest_turns(c: &impl Db) -> Result<u64> {
    let rows = c
        .query(
            "SELECT t.id, t.status, (SELECT u.state FROM turns u WHERE u.thread_id = t.id
                 AND u.state NOT IN ('queued', 'running') ORDER BY u.id DESC LIMIT 1)
             FROM threads t WHERE t.status = 'failed'
             AND NOT EXISTS (SELECT 1 FROM turns l WHERE l.thread_id = t.id
                 AND l.state IN ('queued', 'running'))
             ORDER BY t.id",
            &[],
        )
        .await
        .map_err(failed("reading threads to repair"))?;
    let mut changed = 0;
    for row in rows {
        let Some(latest) = row.get::<_, Option<&str>>(2) else {
            continue;
        };
        let current: ThreadStatus = parsed(&row, 1)?;
        let Some(next) = thread_status_after(latest.parse()?, current) else {
            continue;
        };
        if let Some(thread) =
            rows::touch_thread(c, ThreadId(row.get(0)), Some(next.as_str()), None).await?
        {
            events::append(
                c,
                Some(thread.channel_id),
                EventBody::ThreadUpdated { thread },
            )
            .await?;
            changed += 1;
        }
    }
    Ok(changed)
}

impl PostgresStore {
    fn lock_fences(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<TurnId, i64>> {
        self.fences.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The fencing token this store holds `turn` with, if it claimed it.
    fn fence_of(&self, turn: TurnId) -> Option<i64> {
        self.lock_fences().get(&turn).copied()
    }
}

impl PostgresStore {
    /// Claims a queued turn as [`TurnStore::start_turn`] does, and also
    /// returns the fencing token this node holds it with (stage 3 passes it
    /// to [`Self::append_reply_fenced`] and [`Self::finish_turn_fenced`]).
    pub async fn claim_turn(
        &self,
        turn: TurnId,
        served_by: Option<ModelChoice>,
    ) -> Result<Option<(Turn, i64)>> {
        let lease_ms = self.lease_ms;
        let claimed = in_tx!(self, "starting a turn", |tx| start(
            tx, turn, served_by, lease_ms
        ))?;
        if let Some((_, token)) = &claimed {
            self.lock_fences().insert(turn, *token);
        }
        Ok(claimed)
    }

    /// [`TurnStore::append_reply`], accepted only while `token` is the
    /// turn's current fencing token.
    pub async fn append_reply_fenced(
        &self,
        turn: TurnId,
        token: i64,
        delta: String,
    ) -> Result<bool> {
        in_tx!(self, "appending to a reply", |tx| async move {
            append_reply(tx, turn, &delta, Some(token)).await
        })
    }

    /// [`TurnStore::finish_turn`], accepted only while `token` is the turn's
    /// current fencing token.
    pub async fn finish_turn_fenced(
        &self,
        turn: TurnId,
        token: i64,
        end: TurnFinish,
    ) -> Result<Option<Turn>> {
        in_tx!(self, "ending a turn", |tx| finish(
            tx,
            turn,
            end,
            Some(token)
        ))
    }
}

#[async_trait]
impl TurnStore for PostgresStore {
    async fn turn(&self, id: TurnId) -> Result<Turn> {
        let client = self.client().await?;
        get(&client, id).await
    }

    async fn thread_turns(&self, thread: ThreadId) -> Result<Vec<Turn>> {
        let client = self.client().await?;
        list(&client, "t.thread_id = $1", Some(thread)).await
    }

    async fn runnable_turns(&self, capacity: u32) -> Result<Vec<Turn>> {
        let client = self.client().await?;
        runnable(&client, capacity).await
    }

    async fn running_turns(&self) -> Result<Vec<Turn>> {
        let client = self.client().await?;
        list(&client, "t.state = 'running' AND $1::BIGINT IS NULL", None).await
    }

    async fn start_turn(
        &self,
        turn: TurnId,
        served_by: Option<ModelChoice>,
    ) -> Result<Option<Turn>> {
        Ok(self.claim_turn(turn, served_by).await?.map(|(t, _)| t))
    }

    async fn renew_turn_leases(&self, turns: Vec<TurnId>) -> Result<LeaseRenewal> {
        // Only turns this store claimed have a lease to renew (a live turn
        // not started yet has none).
        let held: Vec<(i64, i64)> = {
            let fences = self.lock_fences();
            turns
                .iter()
                .filter_map(|t| fences.get(t).map(|token| (t.get(), *token)))
                .collect()
        };
        if held.is_empty() {
            return Ok(LeaseRenewal::default());
        }
        let (ids, tokens): (Vec<i64>, Vec<i64>) = held.iter().copied().unzip();
        let client = self.client().await?;
        let renewed: Vec<(i64, Option<String>)> = client
            .query(
                "UPDATE turns t SET lease_expires = $3::BIGINT + $4::BIGINT
                 FROM unnest($1::BIGINT[], $2::BIGINT[]) AS l(id, token)
                 WHERE t.id = l.id AND t.lease_token = l.token AND t.state = 'running'
                 RETURNING t.id, t.stop_requested_by",
                &[&ids, &tokens, &ms(now()), &self.lease_ms],
            )
            .await
            .map_err(failed("renewing turn leases"))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let lost: Vec<TurnId> = ids
            .into_iter()
            .filter(|id| !renewed.iter().any(|(r, _)| r == id))
            .map(TurnId)
            .collect();
        let stop = renewed
            .into_iter()
            .filter_map(|(id, by)| by.map(|by| (TurnId(id), by)))
            .collect();
        let mut fences = self.lock_fences();
        for turn in &lost {
            fences.remove(turn);
        }
        Ok(LeaseRenewal { lost, stop })
    }

    async fn request_turn_stop(&self, turn: TurnId, by: &str) -> Result<bool> {
        // The first to ask is the one the stopped turn names.
        let client = self.client().await?;
        let asked = client
            .execute(
                "UPDATE turns SET stop_requested_by = COALESCE(stop_requested_by, $2)
                 WHERE id = $1 AND state = 'running' AND lease_owner IS NOT NULL",
                &[&turn.get(), &by],
            )
            .await
            .map_err(failed("asking for a turn to stop"))?;
        Ok(asked > 0)
    }

    async fn orphaned_turns(&self) -> Result<Vec<Turn>> {
        let client = self.client().await?;
        client
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM turns t
                     WHERE t.state = 'running' AND (t.lease_expires IS NULL OR t.lease_expires <= $1)
                     ORDER BY t.id"
                ),
                &[&ms(now())],
            )
            .await
            .map_err(failed("listing orphaned turns"))?
            .iter()
            .map(turn_at)
            .collect()
    }

    async fn append_reply(&self, turn: TurnId, delta: String) -> Result<bool> {
        let fence = self.fence_of(turn);
        in_tx!(self, "appending to a reply", |tx| async move {
            append_reply(tx, turn, &delta, fence).await
        })
    }

    async fn retry_turn(&self, turn: TurnId, by: User, admission: Admission) -> Result<Turn> {
        in_tx!(self, "running a turn again", |tx| async move {
            retry(tx, turn, &by, &admission).await
        })
    }

    async fn finish_turn(&self, turn: TurnId, end: TurnFinish) -> Result<Option<Turn>> {
        // This node's own turn is ended under its token; another's only
        // once its lease lapsed (or while it is still queued).
        let fence = self.fence_of(turn);
        let ended = in_tx!(self, "ending a turn", |tx| finish(tx, turn, end, fence))?;
        if ended.is_some() {
            self.lock_fences().remove(&turn);
        }
        Ok(ended)
    }

    async fn turn_counts(&self) -> Result<Vec<(TurnState, u64)>> {
        let client = self.client().await?;
        client
            .query(
                "SELECT state, count(*) FROM turns GROUP BY state ORDER BY state",
                &[],
            )
            .await
            .map_err(failed("counting turns"))?
            .iter()
            .map(|r| Ok((parsed(r, 0)?, r.get::<_, i64>(1) as u64)))
            .collect()
    }

    async fn repair_after_stop(&self) -> Result<Repaired> {
        in_tx!(self, "repairing after a stop", |tx| async move {
            Ok::<_, Error>(Repaired {
                tool_actions: tools::interrupt_orphans(tx).await?,
                threads: follow_latest_turns(tx).await?,
            })
        })
    }

    async fn turn_hops_since(
        &self,
        thread: ThreadId,
        since: Option<Timestamp>,
    ) -> Result<Vec<u32>> {
        let since = since.map(ms).unwrap_or(0);
        let client = self.client().await?;
        Ok(client
            .query(
                "SELECT hop FROM turns WHERE thread_id = $1 AND queued_at >= $2 ORDER BY id",
                &[&thread.get(), &since],
            )
            .await
            .map_err(failed("reading a thread's hops"))?
            .iter()
            .map(|r| count(r.get(0)))
            .collect())
    }

    async fn start_tool_action(&self, action: NewToolAction) -> Result<ToolAction> {
        in_tx!(self, "journaling a tool call", |tx| tools::start(
            tx, action
        ))
    }

    async fn finish_tool_action(
        &self,
        id: ToolActionId,
        outcome: ToolActionOutcome,
    ) -> Result<ToolAction> {
        in_tx!(self, "journaling a tool call's end", |tx| tools::finish(
            tx, id, outcome
        ))
    }

    async fn tool_actions(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<ToolActionId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>> {
        let client = self.client().await?;
        tools::list(&client, channel, thread, before, limit).await
    }

    async fn record_artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        kind: ArtifactKind,
        created_by: &str,
        paths: Vec<String>,
        touch: bool,
    ) -> Result<Vec<Artifact>> {
        let created_by = created_by.to_string();
        in_tx!(self, "recording artifacts", |tx| async move {
            tools::record_artifacts(tx, channel, thread, kind, &created_by, &paths, touch).await
        })
    }

    async fn artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Artifact>> {
        let client = self.client().await?;
        tools::artifacts(&client, channel, thread).await
    }
}
