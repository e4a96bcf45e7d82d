//! The audit log's rows: append-only, each chained to the previous row's
//! hash as [`crate::audit`] defines it; checking the chain happens there.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::codec::{ms, now, ts};
use crate::audit::{GENESIS, row_hash};
use crate::error::Result;
use crate::model::{AuditEntry, ChannelId};

/// What one audit row says; the area modules write rows with it.
pub(crate) use crate::audit::AuditFields as AuditInput;

/// Appends a row, chained to the last one.
pub(crate) fn append(conn: &Connection, input: AuditInput<'_>) -> Result<()> {
    let prev: String = conn
        .prepare_cached("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or_else(|| GENESIS.to_string());
    let at = ms(now());
    let hash = row_hash(&prev, at, &input);
    conn.prepare_cached(
        "INSERT INTO audit_log (at, channel_id, thread_id, agent, asker, action, input_summary, \
         outcome, prev_hash, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        at,
        input.channel_id,
        input.thread_id,
        input.agent,
        input.asker,
        input.action,
        input.input_summary,
        input.outcome,
        prev,
        hash
    ])?;
    Ok(())
}

const COLUMNS: &str =
    "id, at, channel_id, thread_id, agent, asker, action, input_summary, outcome, prev_hash, hash";

fn from_row(r: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        id: r.get(0)?,
        at: ts(r, 1)?,
        channel_id: r.get(2)?,
        thread_id: r.get(3)?,
        agent: r.get(4)?,
        asker: r.get(5)?,
        action: r.get(6)?,
        input_summary: r.get(7)?,
        outcome: r.get(8)?,
        prev_hash: r.get(9)?,
        hash: r.get(10)?,
    })
}

/// The newest `limit` rows (of one channel, or all), oldest first.
pub(crate) fn list(
    conn: &Connection,
    channel: Option<ChannelId>,
    limit: usize,
) -> Result<Vec<AuditEntry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM (SELECT * FROM audit_log WHERE ?1 IS NULL OR channel_id = ?1 \
         ORDER BY id DESC LIMIT ?2) ORDER BY id"
    ))?;
    let rows = stmt
        .query_map(params![channel, limit as i64], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Up to `limit` rows with ids above `after`, in id order.
pub(crate) fn chain(conn: &Connection, after: i64, limit: usize) -> Result<Vec<AuditEntry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM audit_log WHERE id > ?1 ORDER BY id LIMIT ?2"
    ))?;
    let rows = stmt
        .query_map(params![after, limit as i64], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The highest row id ever given out: SQLite's AUTOINCREMENT counter still
/// remembers rows removed from the end, which leave an intact chain behind.
pub(crate) fn head(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'), 0), \
             coalesce((SELECT max(id) FROM audit_log), 0))",
        )?
        .query_row([], |r| r.get(0))?)
}
