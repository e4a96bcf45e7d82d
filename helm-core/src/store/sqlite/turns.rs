//! Turns as rows: admission, claiming, streaming text into the reply, and the
//! single finalizer that moves a turn to its end state.

use crate::store::rules::{stored_usage, thread_status_after};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{ms, now, parsed, ts};
use super::messages::{self, NewMessage};
use super::threads;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Agent, AgentId, AgentKind, AgentStatus, Author, Message, MessageStatus, ModelChoice, Thread,
    ToolStatus, Turn, TurnId, TurnState, UserId,
};
use crate::store::types::{Admission, AdmissionModel, TurnFinish};

const COLUMNS: &str = "id, channel_id, thread_id, agent_id, trigger_message_id, \
    reply_message_id, state, provider, model, error, steps, queued_at, started_at, finished_at, \
    hop, escalation_id, requested_by, model_level, input_tokens, output_tokens";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Turn> {
    let provider: Option<String> = r.get(7)?;
    let model: Option<String> = r.get(8)?;
    Ok(Turn {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        thread_id: r.get(2)?,
        agent_id: r.get(3)?,
        trigger_message_id: r.get(4)?,
        reply_message_id: r.get(5)?,
        state: parsed(r, 6)?,
        served_by: provider.map(|provider| ModelChoice { provider, model }),
        error: r.get(9)?,
        steps: r.get(10)?,
        queued_at: ts(r, 11)?,
        started_at: opt_ts(r, 12)?,
        finished_at: opt_ts(r, 13)?,
        hop: r.get(14)?,
        escalation_id: r.get(15)?,
        requested_by: r.get(16)?,
        model_level: match r.get::<_, Option<String>>(17)? {
            Some(_) => Some(parsed(r, 17)?),
            None => None,
        },
        usage: stored_usage(r.get(18)?, r.get(19)?),
    })
}

fn opt_ts(r: &Row<'_>, idx: usize) -> rusqlite::Result<Option<jiff::Timestamp>> {
    match r.get::<_, Option<i64>>(idx)? {
        None => Ok(None),
        Some(_) => ts(r, idx).map(Some),
    }
}

pub(super) fn get(conn: &Connection, id: TurnId) -> Result<Turn> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM turns WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found("turn", id))
}

pub(super) fn for_thread(conn: &Connection, thread: crate::model::ThreadId) -> Result<Vec<Turn>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM turns WHERE thread_id = ?1 ORDER BY id"
    ))?;
    let turns = stmt
        .query_map([thread], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(turns)
}

fn agent_author(conn: &Connection, agent: AgentId) -> Result<Author> {
    let (kind, handle): (String, String) = conn
        .prepare_cached("SELECT kind, name FROM agents WHERE id = ?1")?
        .query_row([agent], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .ok_or_else(|| Error::not_found("agent", agent))?;
    Ok(Author::Agent {
        agent_id: agent,
        handle: crate::model::Handle::from_stored(handle),
        agent_kind: kind.parse::<AgentKind>()?,
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
    pub escalation_id: Option<crate::model::EscalationId>,
    /// Its model and the agent's capacity.
    pub admission: &'a Admission,
}

/// Queues `id` again (see [`crate::store::TurnStore::retry_turn`]).
pub(super) fn retry(
    tx: &mut Tx<'_>,
    id: TurnId,
    by: &crate::model::User,
    admission: &Admission,
) -> Result<Turn> {
    let turn = get(tx.conn(), id)?;
    let latest: TurnId = tx
        .conn()
        .prepare_cached("SELECT max(id) FROM turns WHERE thread_id = ?1")?
        .query_row([turn.thread_id], |r| r.get(0))?;
    if let Some(refusal) = crate::store::rules::retry_refusal(&turn, latest) {
        return Err(Error::Conflict(refusal));
    }
    let thread = threads::get(tx.conn(), turn.thread_id)?;
    let thread = threads::resume(tx, &thread)?;
    let record = super::channels::get(tx.conn(), &crate::model::ChannelRef::Id(turn.channel_id))?;
    let agent = if record.agent.id == turn.agent_id {
        record.agent
    } else {
        super::authority::skipper(tx.conn())?
    };
    // A message wakes each agent once, so the note is what wakes it again.
    let text = crate::store::rules::retry_note(&by.name, &agent.handle);
    let trigger = super::authority::note(tx, thread.channel_id, Some(thread.id), &text)?;
    let chain = Chain {
        requested_by: Some(by.id),
        hop: turn.hop,
        escalation_id: turn.escalation_id,
        admission,
    };
    Ok(admit(tx, &thread, &trigger, &agent, chain)?.0)
}

/// Admits a turn for `trigger`: the turn row (with the model chosen for it)
/// and its pending reply, with events, in the caller's transaction. Refuses
/// when no model can serve it, or its channel is archived. Returns the turn
/// and how many turns must end before it can start.
pub(super) fn admit(
    tx: &mut Tx<'_>,
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
        .conn()
        .prepare_cached("SELECT status = 'archived' FROM channels WHERE id = ?1")?
        .query_row([thread.channel_id], |r| r.get(0))?;
    if archived {
        return Err(Error::Refused(
            "the channel is archived, so its agents start no work; restore it first".into(),
        ));
    }
    let author = agent_author(tx.conn(), agent.id)?;
    let reply = messages::insert(
        tx.conn(),
        NewMessage {
            channel_id: thread.channel_id,
            thread_id: Some(thread.id),
            author: &author,
            content: "",
            status: MessageStatus::Pending,
            served_by: None,
            external_id: None,
        },
    )?;
    tx.conn()
        .prepare_cached(
            "INSERT INTO turns (channel_id, thread_id, agent_id, trigger_message_id, \
             reply_message_id, requested_by, state, queued_at, hop, escalation_id, provider, \
             model, model_level) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, ?9, ?10, ?11, ?12)",
        )?
        .execute(params![
            thread.channel_id,
            thread.id,
            agent.id,
            trigger.id,
            reply.id,
            chain.requested_by,
            ms(now()),
            chain.hop,
            chain.escalation_id,
            model.provider,
            model.model,
            model.level.as_str(),
        ])?;
    let turn = get(tx.conn(), TurnId(tx.conn().last_insert_rowid()))?;
    let ahead = queue_position(tx.conn(), &turn, chain.admission.capacity)?;
    tx.emit(
        Some(thread.channel_id),
        EventBody::MessageCreated { message: reply },
    )?;
    tx.emit(
        Some(thread.channel_id),
        EventBody::TurnQueued {
            turn: turn.clone(),
            ahead,
        },
    )?;
    Ok((turn, ahead))
}

/// How many turns must end before `turn` can start. Earlier live turns of
/// its thread each must end first. With none, the turn waits for a free
/// place among its agent's `capacity`: every place taken by a running turn
/// or by an earlier queued turn of another thread (which will start first)
/// must free up, and one more, before it starts.
fn queue_position(conn: &Connection, turn: &Turn, capacity: u32) -> Result<u32> {
    let same_thread: i64 = conn
        .prepare_cached(SAME_THREAD_AHEAD_SQL)?
        .query_row(params![turn.thread_id, turn.id], |r| r.get(0))?;
    if same_thread > 0 {
        return Ok(same_thread as u32);
    }
    // Running turns of the agent, and the earlier queued turns of its other
    // threads that are next in their thread and start before this one.
    let (running, queued_before): (i64, i64) = conn
        .prepare_cached(AGENT_AHEAD_SQL)?
        .query_row(params![turn.agent_id, turn.id, turn.thread_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let taken = running + queued_before;
    Ok((taken - i64::from(capacity.max(1)) + 1).max(0) as u32)
}

/// The condition of the `turns_live` partial index, spelled as the index
/// spells it: SQLite uses a partial index only when the query repeats its
/// condition, and does not infer it from `state = 'queued'`. Without it the
/// scheduler's every look (each post, each turn's end) scanned every turn
/// the workspace ever ran. Both queries name the table `q`.
const LIVE: &str = "q.state IN ('queued', 'running')";

/// The same condition on a table named `f`, so a thread's live turns are
/// read from `turns_thread_live` rather than every turn of the thread.
const LIVE_F: &str = "f.state IN ('queued', 'running')";

/// The live turns of a thread before a turn (`queue_position`).
const SAME_THREAD_AHEAD_SQL: &str = "SELECT count(*) FROM turns WHERE thread_id = ?1 AND id < ?2 \
     AND state IN ('queued', 'running')";

/// The running turns of an agent, and the earlier queued turns of its
/// other threads that are first in their thread (`queue_position`).
const AGENT_AHEAD_SQL: &str = "SELECT \
       (SELECT count(*) FROM turns WHERE agent_id = ?1 AND state = 'running'), \
       (SELECT count(*) FROM turns q WHERE q.agent_id = ?1 \
          AND q.state IN ('queued', 'running') AND q.state = 'queued' \
          AND q.id < ?2 AND q.thread_id != ?3 \
          AND q.id = (SELECT min(f.id) FROM turns f WHERE f.thread_id = q.thread_id \
              AND f.state IN ('queued', 'running')))";

/// The statement of [`runnable`], before the agents' capacity. Built once:
/// the scheduler runs it on every post and every turn's end.
static RUNNABLE_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {COLUMNS} FROM turns q WHERE {LIVE} AND q.state = 'queued' \
         AND NOT EXISTS (SELECT 1 FROM turns r WHERE r.thread_id = q.thread_id \
             AND r.state = 'running') \
         AND (SELECT status FROM channels c WHERE c.id = q.channel_id) = 'active' \
         AND q.id = (SELECT min(f.id) FROM turns f WHERE f.thread_id = q.thread_id \
             AND {LIVE_F} AND f.state = 'queued') \
         ORDER BY q.id"
    )
});

/// The statement of [`running`].
static RUNNING_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("SELECT {COLUMNS} FROM turns q WHERE {LIVE} AND q.state = 'running' ORDER BY q.id")
});

/// Queued turns that may start now, oldest first: the first queued turn of
/// each thread without a running turn, in an active channel, while its
/// agent has fewer than `capacity` running turns.
pub(super) fn runnable(conn: &Connection, capacity: u32) -> Result<Vec<Turn>> {
    let mut stmt = conn.prepare_cached(&RUNNABLE_SQL)?;
    let candidates = stmt
        .query_map([], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if capacity == u32::MAX {
        // No agent limit to apply (the scheduler applies its own).
        return Ok(candidates);
    }
    let mut running = std::collections::HashMap::new();
    let mut count_stmt = conn
        .prepare_cached("SELECT count(*) FROM turns WHERE agent_id = ?1 AND state = 'running'")?;
    let mut out = Vec::new();
    for turn in candidates {
        let used = match running.get(&turn.agent_id) {
            Some(n) => *n,
            None => count_stmt.query_row([turn.agent_id], |r| r.get::<_, i64>(0))? as u32,
        };
        if used < capacity {
            running.insert(turn.agent_id, used + 1);
            out.push(turn);
        }
    }
    Ok(out)
}

/// Turns that are running, oldest first.
pub(super) fn running(conn: &Connection) -> Result<Vec<Turn>> {
    let mut stmt = conn.prepare_cached(&RUNNING_SQL)?;
    let turns = stmt
        .query_map([], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(turns)
}

fn set_agent_status(
    tx: &mut Tx<'_>,
    agent: AgentId,
    channel: crate::model::ChannelId,
) -> Result<()> {
    let (current, kind, archived): (String, String, bool) = tx
        .conn()
        .prepare_cached(
            "SELECT a.status, a.kind, \
             (SELECT status = 'archived' FROM channels WHERE id = ?2) FROM agents a WHERE a.id = ?1",
        )?
        .query_row(params![agent, channel], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, Option<bool>>(2)?.unwrap_or(false)))
        })?;
    let running: i64 = tx
        .conn()
        .prepare_cached("SELECT count(*) FROM turns WHERE agent_id = ?1 AND state = 'running'")?
        .query_row([agent], |r| r.get(0))?;
    let next = if running > 0 {
        AgentStatus::Working
    } else if archived && kind == "channel" {
        AgentStatus::Paused
    } else {
        AgentStatus::Ready
    };
    if current != next.as_str() {
        super::execute_cached(
            tx.conn(),
            "UPDATE agents SET status = ?1 WHERE id = ?2",
            params![next.as_str(), agent],
        )?;
        tx.emit(
            Some(channel),
            EventBody::AgentStatusChanged {
                agent_id: agent,
                status: next,
            },
        )?;
    }
    Ok(())
}

/// Claims a queued turn: it becomes `running` and its reply `streaming`.
/// Returns `None` if the turn was no longer queued (already claimed,
/// cancelled), its thread already has a running turn, or its channel is
/// archived. A turn admitted with its model keeps it; `served_by` only
/// fills in turns admitted without one.
pub(super) fn start(
    tx: &mut Tx<'_>,
    id: TurnId,
    served_by: Option<ModelChoice>,
) -> Result<Option<Turn>> {
    let provider = served_by.as_ref().map(|m| m.provider.clone());
    let model = served_by.as_ref().and_then(|m| m.model.clone());
    let claimed = tx
        .conn()
        .prepare_cached(
            "UPDATE turns SET state = 'running', started_at = ?2, \
             provider = coalesce(provider, ?3), model = CASE WHEN provider IS NULL THEN ?4 \
             ELSE model END \
             WHERE id = ?1 AND state = 'queued' AND NOT EXISTS \
             (SELECT 1 FROM turns r WHERE r.thread_id = turns.thread_id AND r.state = 'running') \
             AND (SELECT status FROM channels c WHERE c.id = turns.channel_id) = 'active'",
        )?
        .execute(params![id, ms(now()), provider, model])?;
    if claimed == 0 {
        return Ok(None);
    }
    let turn = get(tx.conn(), id)?;
    let served = turn.served_by.clone();
    super::execute_cached(
        tx.conn(),
        "UPDATE messages SET status = 'streaming', provider = ?2, model = ?3, updated = ?4 \
         WHERE id = ?1",
        params![
            turn.reply_message_id,
            served.as_ref().map(|m| m.provider.clone()),
            served.and_then(|m| m.model),
            ms(now())
        ],
    )?;
    tx.emit(
        Some(turn.channel_id),
        EventBody::TurnStarted { turn: turn.clone() },
    )?;
    set_agent_status(tx, turn.agent_id, turn.channel_id)?;
    Ok(Some(turn))
}

/// Appends streamed text to a running turn's reply; returns the seq of its
/// `message.delta` event, or `None` (and writes nothing) once the reply is
/// final: late chunks cannot change it.
pub(super) fn append_reply(tx: &mut Tx<'_>, id: TurnId, delta: &str) -> Result<Option<u64>> {
    let turn = get(tx.conn(), id)?;
    // The length comes from the row the append wrote, so the offset is
    // where this chunk landed. SQLite's `length` stops at a NUL character:
    // a reply holding one is counted here instead.
    let appended = tx
        .conn()
        .prepare_cached(
            "UPDATE messages SET content = content || ?2, updated = ?3 \
             WHERE id = ?1 AND status = 'streaming' \
             RETURNING length(content), \
             CASE WHEN instr(content, char(0)) > 0 THEN content END",
        )?
        .query_row(params![turn.reply_message_id, delta, ms(now())], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
        })
        .optional()?;
    let Some((length, with_nul)) = appended else {
        return Ok(None);
    };
    if turn.state != TurnState::Running {
        return Ok(None);
    }
    let length = with_nul.map_or(length as u64, |content| content.chars().count() as u64);
    let event = tx.emit(
        Some(turn.channel_id),
        EventBody::MessageDelta {
            message_id: turn.reply_message_id,
            thread_id: Some(turn.thread_id),
            text: delta.to_string(),
            offset: length.saturating_sub(delta.chars().count() as u64),
        },
    )?;
    tx.conn()
        .prepare_cached(
            "UPDATE turns SET first_delta_seq = ?2 WHERE id = ?1 AND first_delta_seq IS NULL",
        )?
        .execute(params![id, event.seq as i64])?;
    Ok(Some(event.seq))
}

/// The one finalizer: moves a live turn to its end state with its reply,
/// thread and agent status, a visible note if any, and the events. Returns
/// `None` if the turn had already ended. A reply that streamed (its turn
/// keeps the seq of its first `message.delta`) has its deltas leave the
/// durable log: live listeners had them, and `message.completed` carries
/// the whole text, so the log holds the reply once.
pub(super) fn finish(tx: &mut Tx<'_>, id: TurnId, finish: TurnFinish) -> Result<Option<Turn>> {
    if !finish.state.is_final() {
        return Err(Error::Internal(format!(
            "{} is not an end state",
            finish.state
        )));
    }
    let ended = tx
        .conn()
        .prepare_cached(
            "UPDATE turns SET state = ?2, error = ?3, steps = ?4, input_tokens = ?5, \
             output_tokens = ?6, finished_at = ?7 \
             WHERE id = ?1 AND state IN ('queued', 'running')",
        )?
        .execute(params![
            id,
            finish.state.as_str(),
            finish.error,
            finish.steps,
            finish.usage.input_tokens as i64,
            finish.usage.output_tokens as i64,
            ms(now())
        ])?;
    if ended == 0 {
        return Ok(None);
    }
    let turn = get(tx.conn(), id)?;
    let reply_status = match finish.state {
        TurnState::Completed | TurnState::Waiting => MessageStatus::Complete,
        TurnState::Failed => MessageStatus::Failed,
        TurnState::Interrupted => MessageStatus::Interrupted,
        _ => MessageStatus::Stopped,
    };
    super::execute_cached(
        tx.conn(),
        "UPDATE messages SET status = ?2, content = ?3, updated = ?4 WHERE id = ?1",
        params![
            turn.reply_message_id,
            reply_status.as_str(),
            finish.reply,
            ms(now())
        ],
    )?;
    let first_delta: Option<i64> = tx
        .conn()
        .prepare_cached("SELECT first_delta_seq FROM turns WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?;
    if let Some(first) = first_delta {
        tx.conn()
            .prepare_cached(
                "DELETE FROM events WHERE seq >= ?1 AND channel_id = ?2 \
                 AND type = 'message.delta' \
                 AND json_extract(payload, '$.message_id') = ?3",
            )?
            .execute(params![first, turn.channel_id, turn.reply_message_id])?;
    }
    let reply = messages::get(tx.conn(), turn.reply_message_id)?;
    if reply.status == MessageStatus::Complete {
        super::recall::index_message(tx.conn(), &reply)?;
    }
    tx.emit(
        Some(turn.channel_id),
        EventBody::MessageCompleted {
            message: reply.clone(),
        },
    )?;
    super::reading::record_mentions(tx, &reply)?;

    if let Some(note) = &finish.note {
        let message = messages::insert(
            tx.conn(),
            NewMessage {
                channel_id: turn.channel_id,
                thread_id: Some(turn.thread_id),
                author: &Author::System,
                content: note,
                status: MessageStatus::Complete,
                served_by: None,
                external_id: None,
            },
        )?;
        tx.emit(Some(turn.channel_id), EventBody::MessageCreated { message })?;
    }

    // A turn that ended has no tool call still running: one cut short ends
    // with it (interrupted when Helm stopped, cancelled otherwise).
    super::tool_actions::end_running_of_turn(
        tx,
        turn.id,
        if finish.state == TurnState::Interrupted {
            ToolStatus::Interrupted
        } else {
            ToolStatus::Cancelled
        },
    )?;
    super::authority::expire_approvals_of_turn(tx, turn.id)?;

    // The thread's status follows its latest turn; a turn that ends after a
    // later one of its thread (which cannot happen in order) changes nothing.
    let thread = threads::get(tx.conn(), turn.thread_id)?;
    let later_ended: bool = tx
        .conn()
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM turns WHERE thread_id = ?1 AND id > ?2 \
             AND state NOT IN ('queued', 'running'))",
        )?
        .query_row(params![turn.thread_id, turn.id], |r| r.get(0))?;
    let next_status = if later_ended {
        None
    } else {
        thread_status_after(finish.state, thread.status)
    };
    super::execute_cached(
        tx.conn(),
        "UPDATE threads SET status = coalesce(?2, status), updated_at = ?3 WHERE id = ?1",
        params![turn.thread_id, next_status.map(|s| s.as_str()), ms(now())],
    )?;
    if next_status.is_some_and(|s| s != thread.status) {
        let thread = threads::get(tx.conn(), turn.thread_id)?;
        tx.emit(Some(turn.channel_id), EventBody::ThreadUpdated { thread })?;
    }

    let body = match finish.state {
        TurnState::Completed | TurnState::Waiting => {
            EventBody::TurnCompleted { turn: turn.clone() }
        }
        TurnState::Failed => EventBody::TurnFailed { turn: turn.clone() },
        _ => EventBody::TurnCancelled { turn: turn.clone() },
    };
    tx.emit(Some(turn.channel_id), body)?;
    set_agent_status(tx, turn.agent_id, turn.channel_id)?;
    Ok(Some(turn))
}

#[cfg(test)]
mod tests {
    /// The query plan of `sql` on a fresh database, one step per line.
    fn plan(sql: &str) -> crate::error::Result<String> {
        let dir = tempfile::tempdir().map_err(|e| crate::error::Error::Internal(e.to_string()))?;
        let mut conn = rusqlite::Connection::open(dir.path().join("helm.db"))?;
        super::super::configure(&conn, false)?;
        super::super::schema::migrate(&mut conn)?;
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        // Planned with every parameter unbound (NULL), as when prepared.
        let unbound = vec![rusqlite::types::Null; stmt.parameter_count()];
        let steps = stmt
            .query_map(rusqlite::params_from_iter(unbound), |r| {
                r.get::<_, String>(3)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(steps.join("\n"))
    }

    #[test]
    fn the_scheduler_reads_only_live_turns() -> crate::error::Result<()> {
        for sql in [&*super::RUNNABLE_SQL, &*super::RUNNING_SQL] {
            let plan = plan(sql)?;
            let outer = plan.lines().next().unwrap_or_default();
            assert!(
                outer.contains("USING INDEX turns_live"),
                "the scheduler's scan must use the live-turn index, not every turn ever run: {plan}"
            );
        }
        // Every read of `turns` in the scheduler's and admission's queries
        // goes through an index of live turns only (the channels table,
        // `c`, is read by its key), so neither a long thread nor a long
        // history makes them slower.
        let sqls = [
            &*super::RUNNABLE_SQL,
            &*super::RUNNING_SQL,
            super::SAME_THREAD_AHEAD_SQL,
            super::AGENT_AHEAD_SQL,
        ];
        for sql in sqls {
            let plan = plan(sql)?;
            for step in plan.lines() {
                let reads = step.starts_with("SEARCH") || step.starts_with("SCAN");
                if !reads || step.contains("SEARCH c ") || step.contains("CONSTANT ROW") {
                    continue;
                }
                assert!(
                    [
                        "turns_live",
                        "turns_thread_live",
                        "turns_one_running_per_thread"
                    ]
                    .iter()
                    .any(|index| step.split(' ').any(|word| word == *index)),
                    "{step} (in {sql}):\n{plan}"
                );
            }
        }
        Ok(())
    }
}
