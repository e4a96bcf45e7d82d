//! Turns as rows: admission, claiming, streaming text into the reply, and the
//! single finalizer that moves a turn to its end state.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{ms, now, parsed, ts};
use super::messages::{self, NewMessage};
use super::threads;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Agent, AgentId, AgentKind, AgentStatus, Author, Message, MessageStatus, ModelChoice, Thread,
    ThreadStatus, Turn, TurnId, TurnState, UserId,
};
use crate::store::types::TurnFinish;

const COLUMNS: &str = "id, channel_id, thread_id, agent_id, trigger_message_id, \
    reply_message_id, state, provider, model, error, steps, queued_at, started_at, finished_at, \
    hop, escalation_id, requested_by";

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

/// Admits a turn for `trigger`: the turn row and its pending reply, with
/// events, in the caller's transaction. Returns the turn and how many turns of
/// the thread are ahead of it.
/// Who asked for a turn, and how far down an agent-to-agent chain it is.
pub(super) struct Chain {
    /// The person whose message started the chain.
    pub requested_by: Option<UserId>,
    /// Agent-to-agent hops so far (0 when a person woke the agent).
    pub hop: u32,
    /// The call for Skipper the turn answers.
    pub escalation_id: Option<crate::model::EscalationId>,
}

pub(super) fn admit(
    tx: &mut Tx<'_>,
    thread: &Thread,
    trigger: &Message,
    agent: &Agent,
    chain: Chain,
) -> Result<(Turn, u32)> {
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
             reply_message_id, requested_by, state, queued_at, hop, escalation_id) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, ?9)",
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
            chain.escalation_id
        ])?;
    let turn = get(tx.conn(), TurnId(tx.conn().last_insert_rowid()))?;
    let ahead: i64 = tx
        .conn()
        .prepare_cached(
            "SELECT count(*) FROM turns WHERE thread_id = ?1 AND id < ?2 \
             AND state IN ('queued', 'running')",
        )?
        .query_row(params![thread.id, turn.id], |r| r.get(0))?;
    tx.emit(
        Some(thread.channel_id),
        EventBody::MessageCreated { message: reply },
    )?;
    tx.emit(
        Some(thread.channel_id),
        EventBody::TurnQueued {
            turn: turn.clone(),
            ahead: ahead as u32,
        },
    )?;
    Ok((turn, ahead as u32))
}

/// Queued turns that may start now, oldest first: the first queued turn of
/// each thread without a running turn, while its agent has fewer than
/// `capacity` running turns.
pub(super) fn runnable(conn: &Connection, capacity: u32) -> Result<Vec<Turn>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM turns q WHERE q.state = 'queued' \
         AND NOT EXISTS (SELECT 1 FROM turns r WHERE r.thread_id = q.thread_id \
             AND r.state = 'running') \
         AND q.id = (SELECT min(f.id) FROM turns f WHERE f.thread_id = q.thread_id \
             AND f.state = 'queued') \
         ORDER BY q.id"
    ))?;
    let candidates = stmt
        .query_map([], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
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
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM turns WHERE state = 'running' ORDER BY id"
    ))?;
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
        tx.conn().execute(
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
/// cancelled) or its thread already has a running turn.
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
            "UPDATE turns SET state = 'running', started_at = ?2, provider = ?3, model = ?4 \
             WHERE id = ?1 AND state = 'queued' AND NOT EXISTS \
             (SELECT 1 FROM turns r WHERE r.thread_id = turns.thread_id AND r.state = 'running')",
        )?
        .execute(params![id, ms(now()), provider, model])?;
    if claimed == 0 {
        return Ok(None);
    }
    let turn = get(tx.conn(), id)?;
    tx.conn().execute(
        "UPDATE messages SET status = 'streaming', provider = ?2, model = ?3, updated = ?4 \
         WHERE id = ?1",
        params![turn.reply_message_id, provider, model, ms(now())],
    )?;
    tx.emit(
        Some(turn.channel_id),
        EventBody::TurnStarted { turn: turn.clone() },
    )?;
    set_agent_status(tx, turn.agent_id, turn.channel_id)?;
    Ok(Some(turn))
}

/// Appends streamed text to a running turn's reply. Returns false (and
/// writes nothing) once the reply is final: late chunks cannot change it.
pub(super) fn append_reply(tx: &mut Tx<'_>, id: TurnId, delta: &str) -> Result<bool> {
    let turn = get(tx.conn(), id)?;
    let changed = tx
        .conn()
        .prepare_cached(
            "UPDATE messages SET content = content || ?2, updated = ?3 \
             WHERE id = ?1 AND status = 'streaming'",
        )?
        .execute(params![turn.reply_message_id, delta, ms(now())])?;
    if changed == 0 || turn.state != TurnState::Running {
        return Ok(false);
    }
    tx.emit(
        Some(turn.channel_id),
        EventBody::MessageDelta {
            message_id: turn.reply_message_id,
            thread_id: Some(turn.thread_id),
            text: delta.to_string(),
        },
    )?;
    Ok(true)
}

/// The one finalizer: moves a live turn to its end state with its reply,
/// thread and agent status, a visible note if any, and the events. Returns
/// `None` if the turn had already ended.
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
    tx.conn().execute(
        "UPDATE messages SET status = ?2, content = ?3, updated = ?4 WHERE id = ?1",
        params![
            turn.reply_message_id,
            reply_status.as_str(),
            finish.reply,
            ms(now())
        ],
    )?;
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

    let thread = threads::get(tx.conn(), turn.thread_id)?;
    let next_status = match finish.state {
        TurnState::Failed | TurnState::Interrupted => Some(ThreadStatus::Failed),
        TurnState::Waiting => Some(ThreadStatus::Waiting),
        TurnState::Completed if thread.status == ThreadStatus::Waiting => Some(ThreadStatus::Open),
        _ => None,
    };
    tx.conn().execute(
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
