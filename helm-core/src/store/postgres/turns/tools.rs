//! The tool journal (every tool call an agent makes, audited when it ends)
//! and the artifacts threads produce, as the SQLite store keeps them.

use tokio_postgres::Row;

use super::super::codec::ms;
use super::super::codec::{now, parsed, ts};
use super::super::{audit, events, failed};
use crate::audit::AuditFields;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    AgentId, Artifact, ArtifactId, ArtifactKind, ChannelId, ThreadId, ToolAction, ToolActionId,
    ToolStatus, TurnId,
};
use crate::store::postgres::prepared::Db;
use crate::store::types::{NewToolAction, ToolActionOutcome};

const ACTION: &str = "a.id, a.agent_id, a.channel_id, a.thread_id, a.turn_id, a.tool, \
    a.input_summary, a.result_summary, a.status, a.duration_ms, a.isolation, a.created, a.output";

fn action_at(row: &Row) -> Result<ToolAction> {
    Ok(ToolAction {
        id: ToolActionId(row.get(0)),
        agent_id: AgentId(row.get(1)),
        channel_id: ChannelId(row.get(2)),
        thread_id: row.get::<_, Option<i64>>(3).map(ThreadId),
        turn_id: row.get::<_, Option<i64>>(4).map(TurnId),
        tool: row.get(5),
        input_summary: row.get(6),
        result_summary: row.get(7),
        output: row.get(12),
        status: parsed(row, 8)?,
        duration_ms: row.get(9),
        isolation: row.get(10),
        created: ts(row, 11)?,
    })
}

async fn action(c: &impl Db, id: ToolActionId) -> Result<ToolAction> {
    let row = c
        .query_opt(
            &format!("SELECT {ACTION} FROM tool_actions a WHERE a.id = $1"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a tool action"))?
        .ok_or_else(|| Error::not_found("tool action", id))?;
    action_at(&row)
}

/// Journals the start of a tool call.
pub(super) async fn start(c: &impl Db, new: NewToolAction) -> Result<ToolAction> {
    let row = c
        .query_one(
            &format!(
                "INSERT INTO tool_actions AS a (agent_id, channel_id, thread_id, turn_id, tool,
                     input_summary, status, created)
                 VALUES ($1, $2, $3, $4, $5, $6, 'running', $7) RETURNING {ACTION}"
            ),
            &[
                &new.agent_id.get(),
                &new.channel_id.get(),
                &new.thread_id.map(ThreadId::get),
                &new.turn_id.map(TurnId::get),
                &new.tool,
                &new.input_summary,
                &ms(now()),
            ],
        )
        .await
        .map_err(failed("journaling a tool call"))?;
    let action = action_at(&row)?;
    if let Some(turn) = new.turn_id {
        c.execute(
            "UPDATE turns SET steps = GREATEST(steps, $2) WHERE id = $1",
            &[&turn.get(), &i64::from(new.step)],
        )
        .await
        .map_err(failed("counting a turn's steps"))?;
    }
    events::append(
        c,
        Some(action.channel_id),
        EventBody::ToolActionStarted {
            action: action.clone(),
        },
    )
    .await?;
    Ok(action)
}

/// Journals how a tool call ended (once: a call already ended is returned
/// as it is, with nothing written).
pub(super) async fn finish(
    c: &impl Db,
    id: ToolActionId,
    outcome: ToolActionOutcome,
) -> Result<ToolAction> {
    let ended = c
        .query_opt(
            &format!(
                "UPDATE tool_actions a SET status = $2, result_summary = $3, duration_ms = $4,
                     isolation = coalesce($5, a.isolation), finished = $6, output = $7
                 WHERE a.id = $1 AND a.status = 'running' RETURNING {ACTION}"
            ),
            &[
                &id.get(),
                &outcome.status.as_str(),
                &outcome.result_summary,
                &outcome.duration_ms,
                &outcome.isolation,
                &ms(now()),
                &outcome.output,
            ],
        )
        .await
        .map_err(failed("journaling a tool call's end"))?;
    let Some(row) = ended else {
        return action(c, id).await;
    };
    let action = action_at(&row)?;
    // Every tool call is audited: which agent, on whose request, where,
    // what, and how it went.
    let names = c
        .query_one(
            "SELECT (SELECT name FROM agents WHERE id = $1),
                    (SELECT u.name FROM turns t JOIN users u ON u.id = t.requested_by
                     WHERE t.id = $2)",
            &[&action.agent_id.get(), &action.turn_id.map(TurnId::get)],
        )
        .await
        .map_err(failed("reading who made a tool call"))?;
    let agent: Option<String> = names.get(0);
    let asker: Option<String> = names.get(1);
    audit::append(
        c,
        AuditFields {
            channel_id: Some(action.channel_id),
            thread_id: action.thread_id,
            agent: agent.map(|a| format!("@{a}")).as_deref(),
            asker: asker.as_deref(),
            action: &format!("tool:{}", action.tool),
            input_summary: &action.input_summary,
            outcome: &format!("{}: {}", action.status, action.result_summary),
        },
    )
    .await?;
    events::append(
        c,
        Some(action.channel_id),
        EventBody::ToolActionFinished {
            action: action.clone(),
        },
    )
    .await?;
    Ok(action)
}

/// Ends the tool calls of `turn` still journaled as running, as `status`.
pub(super) async fn end_running_of_turn(
    c: &impl Db,
    turn: TurnId,
    status: ToolStatus,
) -> Result<u64> {
    let rows = c
        .query(
            "SELECT id, created FROM tool_actions WHERE status = 'running' AND turn_id = $1
             ORDER BY id",
            &[&turn.get()],
        )
        .await
        .map_err(failed("reading a turn's running tool calls"))?;
    end_all(c, &rows, status).await
}

/// Ends every tool call journaled as running whose turn is no longer live
/// (or that has none) as interrupted: what a stopped process left behind.
pub(super) async fn interrupt_orphans(c: &impl Db) -> Result<u64> {
    let rows = c
        .query(
            "SELECT id, created FROM tool_actions WHERE status = 'running'
             AND (turn_id IS NULL OR turn_id IN (SELECT id FROM turns
                  WHERE state NOT IN ('queued', 'running')))
             ORDER BY id",
            &[],
        )
        .await
        .map_err(failed("reading orphaned tool calls"))?;
    end_all(c, &rows, ToolStatus::Interrupted).await
}

async fn end_all(c: &impl Db, rows: &[Row], status: ToolStatus) -> Result<u64> {
    let summary = match status {
        ToolStatus::Interrupted => "interrupted: Helm stopped while it ran",
        _ => "cancelled with its turn",
    };
    for row in rows {
        // A call cancelled with its turn ends now; one a stop interrupted
        // ended at some unknown moment before.
        let started: i64 = row.get(1);
        let duration_ms = match status {
            ToolStatus::Interrupted => None,
            _ => Some((ms(now()) - started).max(0)),
        };
        finish(
            c,
            ToolActionId(row.get(0)),
            ToolActionOutcome {
                status,
                result_summary: summary.to_string(),
                duration_ms,
                isolation: None,
                output: None,
            },
        )
        .await?;
    }
    Ok(rows.len() as u64)
}

/// The journal of a channel (or one thread), newest last, at most `limit`.
pub(super) async fn list(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
    before: Option<ToolActionId>,
    limit: usize,
) -> Result<Vec<ToolAction>> {
    c.query(
        &format!(
            "SELECT * FROM (SELECT {ACTION} FROM tool_actions a WHERE a.channel_id = $1
               AND ($2::BIGINT IS NULL OR a.thread_id = $2)
               AND ($4::BIGINT IS NULL OR a.id < $4) ORDER BY a.id DESC LIMIT $3) n
             ORDER BY n.id"
        ),
        &[
            &channel.get(),
            &thread.map(ThreadId::get),
            &i64::try_from(limit).unwrap_or(i64::MAX),
            &before.map(|b| b.0),
        ],
    )
    .await
    .map_err(failed("listing tool actions"))?
    .iter()
    .map(action_at)
    .collect()
}

const ARTIFACT: &str = "a.id, a.channel_id, a.thread_id, a.path, a.kind, a.created_by, a.created";

fn artifact_at(row: &Row) -> Result<Artifact> {
    Ok(Artifact {
        id: ArtifactId(row.get(0)),
        channel_id: ChannelId(row.get(1)),
        thread_id: row.get::<_, Option<i64>>(2).map(ThreadId),
        path: row.get(3),
        kind: parsed(row, 4)?,
        created_by: row.get(5),
        created: ts(row, 6)?,
    })
}

/// Records artifacts: new paths are added (with their thread and author),
/// known ones only have their time of change updated, unless `touch` is
/// false (a rescan only adds what is new). Returns the artifacts added.
/// A path two nodes record at once is added once (the insert yields to
/// the unique index, and the loser treats the path as known).
pub(super) async fn record_artifacts(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
    kind: ArtifactKind,
    created_by: &str,
    paths: &[String],
    touch: bool,
) -> Result<Vec<Artifact>> {
    let at = ms(now());
    let mut added = Vec::new();
    for path in paths {
        let existing = c
            .query_opt(
                "SELECT id FROM artifacts WHERE channel_id = $1 AND path = $2",
                &[&channel.get(), path],
            )
            .await
            .map_err(failed("reading an artifact"))?;
        let inserted = match existing {
            Some(_) => None,
            None => c
                .query_opt(
                    &format!(
                        "INSERT INTO artifacts AS a (channel_id, thread_id, path, kind,
                             created_by, created, updated)
                         VALUES ($1, $2, $3, $4, $5, $6, $6)
                         ON CONFLICT (channel_id, path) DO NOTHING RETURNING {ARTIFACT}"
                    ),
                    &[
                        &channel.get(),
                        &thread.map(ThreadId::get),
                        path,
                        &kind.as_str(),
                        &created_by,
                        &at,
                    ],
                )
                .await
                .map_err(failed("recording an artifact"))?,
        };
        let Some(row) = inserted else {
            if touch {
                c.execute(
                    "UPDATE artifacts SET updated = $3 WHERE channel_id = $1 AND path = $2",
                    &[&channel.get(), path, &at],
                )
                .await
                .map_err(failed("touching an artifact"))?;
            }
            continue;
        };
        let artifact = artifact_at(&row)?;
        events::append(
            c,
            Some(channel),
            EventBody::ArtifactRecorded {
                artifact: artifact.clone(),
            },
        )
        .await?;
        added.push(artifact);
    }
    Ok(added)
}

/// A channel's artifacts (or one thread's), oldest first.
pub(super) async fn artifacts(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
) -> Result<Vec<Artifact>> {
    c.query(
        &format!(
            "SELECT {ARTIFACT} FROM artifacts a WHERE a.channel_id = $1
             AND ($2::BIGINT IS NULL OR a.thread_id = $2) ORDER BY a.id"
        ),
        &[&channel.get(), &thread.map(ThreadId::get)],
    )
    .await
    .map_err(failed("listing artifacts"))?
    .iter()
    .map(artifact_at)
    .collect()
}
