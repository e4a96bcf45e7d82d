//! The tool journal: every tool call an agent makes, in its thread.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{ms, now, parsed, ts};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{ChannelId, ThreadId, ToolAction, ToolActionId, ToolStatus, TurnId};
use crate::store::types::{NewToolAction, ToolActionOutcome};

const COLUMNS: &str = "id, agent_id, channel_id, thread_id, turn_id, tool, input_summary, \
    result_summary, status, duration_ms, isolation, created, output";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ToolAction> {
    Ok(ToolAction {
        id: r.get(0)?,
        agent_id: r.get(1)?,
        channel_id: r.get(2)?,
        thread_id: r.get(3)?,
        turn_id: r.get(4)?,
        tool: r.get(5)?,
        input_summary: r.get(6)?,
        result_summary: r.get(7)?,
        output: r.get(12)?,
        status: parsed(r, 8)?,
        duration_ms: r.get(9)?,
        isolation: r.get(10)?,
        created: ts(r, 11)?,
    })
}

fn get(conn: &Connection, id: ToolActionId) -> Result<ToolAction> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM tool_actions WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found("tool action", id))
}

pub(super) fn start(tx: &mut Tx<'_>, new: NewToolAction) -> Result<ToolAction> {
    tx.conn()
        .prepare_cached(
            "INSERT INTO tool_actions (agent_id, channel_id, thread_id, turn_id, tool, \
             input_summary, status, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7)",
        )?
        .execute(params![
            new.agent_id,
            new.channel_id,
            new.thread_id,
            new.turn_id,
            new.tool,
            new.input_summary,
            ms(now())
        ])?;
    let action = get(tx.conn(), ToolActionId(tx.conn().last_insert_rowid()))?;
    if let Some(turn) = new.turn_id {
        super::execute_cached(
            tx.conn(),
            "UPDATE turns SET steps = max(steps, ?2) WHERE id = ?1",
            params![turn, new.step],
        )?;
    }
    tx.emit(
        Some(action.channel_id),
        EventBody::ToolActionStarted {
            action: action.clone(),
        },
    )?;
    Ok(action)
}

pub(super) fn finish(
    tx: &mut Tx<'_>,
    id: ToolActionId,
    outcome: ToolActionOutcome,
) -> Result<ToolAction> {
    let changed = tx
        .conn()
        .prepare_cached(
            "UPDATE tool_actions SET status = ?2, result_summary = ?3, duration_ms = ?4, \
             isolation = coalesce(?5, isolation), finished = ?6, output = ?7 \
             WHERE id = ?1 AND status = 'running'",
        )?
        .execute(params![
            id,
            outcome.status.as_str(),
            outcome.result_summary,
            outcome.duration_ms,
            outcome.isolation,
            ms(now()),
            outcome.output
        ])?;
    let action = get(tx.conn(), id)?;
    if changed > 0 {
        // Every tool call is audited: which agent, on whose request, where, what, and how it went.
        let (agent, asker): (Option<String>, Option<String>) = tx
            .conn()
            .prepare_cached(
                "SELECT (SELECT name FROM agents WHERE id = ?1),                  (SELECT u.name FROM turns t JOIN users u ON u.id = t.requested_by WHERE t.id = ?2)",
            )?
            .query_row(params![action.agent_id, action.turn_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        super::audit::append(
            tx.conn(),
            super::audit::AuditInput {
                channel_id: Some(action.channel_id),
                thread_id: action.thread_id,
                agent: agent.map(|a| format!("@{a}")).as_deref(),
                asker: asker.as_deref(),
                action: &format!("tool:{}", action.tool),
                input_summary: &action.input_summary,
                outcome: &format!("{}: {}", action.status, action.result_summary),
            },
        )?;
        tx.emit(
            Some(action.channel_id),
            EventBody::ToolActionFinished {
                action: action.clone(),
            },
        )?;
    }
    Ok(action)
}

/// Ends the tool calls of `turn` still journaled as running, as `status`
/// (each audited and announced like any other end). Returns how many.
pub(super) fn end_running_of_turn(
    tx: &mut Tx<'_>,
    turn: TurnId,
    status: ToolStatus,
) -> Result<u64> {
    let ids = running_ids(tx.conn(), "turn_id = ?1", Some(turn.0))?;
    end_all(tx, ids, status)
}

/// Ends every tool call journaled as running whose turn is no longer live
/// (or that has none) as interrupted: what a stopped process left behind.
pub(super) fn interrupt_orphans(tx: &mut Tx<'_>) -> Result<u64> {
    let ids = running_ids(
        tx.conn(),
        "(turn_id IS NULL OR turn_id IN (SELECT id FROM turns \
         WHERE state NOT IN ('queued', 'running'))) AND ?1 IS NULL",
        None,
    )?;
    end_all(tx, ids, ToolStatus::Interrupted)
}

fn running_ids(conn: &Connection, filter: &str, arg: Option<i64>) -> Result<Vec<ToolActionId>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id FROM tool_actions WHERE status = 'running' AND {filter} ORDER BY id"
    ))?;
    let ids = stmt
        .query_map([arg], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<ToolActionId>>>()?;
    Ok(ids)
}

fn end_all(tx: &mut Tx<'_>, ids: Vec<ToolActionId>, status: ToolStatus) -> Result<u64> {
    let summary = match status {
        ToolStatus::Interrupted => "interrupted: Helm stopped while it ran",
        _ => "cancelled with its turn",
    };
    let count = ids.len() as u64;
    for id in ids {
        // A call cancelled with its turn ends now; one a stop interrupted
        // ended at some unknown moment before.
        let duration_ms = match status {
            ToolStatus::Interrupted => None,
            _ => {
                let started: i64 = tx
                    .conn()
                    .prepare_cached("SELECT created FROM tool_actions WHERE id = ?1")?
                    .query_row([id], |r| r.get(0))?;
                Some((ms(now()) - started).max(0))
            }
        };
        finish(
            tx,
            id,
            ToolActionOutcome {
                status,
                result_summary: summary.to_string(),
                duration_ms,
                isolation: None,
                output: None,
            },
        )?;
    }
    Ok(count)
}

/// The journal of a channel (or one thread), newest last, at most `limit`.
pub(super) fn list(
    conn: &Connection,
    channel: ChannelId,
    thread: Option<ThreadId>,
    before: Option<ToolActionId>,
    limit: usize,
) -> Result<Vec<ToolAction>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM (SELECT * FROM tool_actions WHERE channel_id = ?1 \
         AND (?2 IS NULL OR thread_id = ?2) AND (?4 IS NULL OR id < ?4) \
         ORDER BY id DESC LIMIT ?3) ORDER BY id"
    ))?;
    let actions = stmt
        .query_map(params![channel, thread, limit as i64, before], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(actions)
}
