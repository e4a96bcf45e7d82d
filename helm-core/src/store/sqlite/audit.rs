//! The audit log: append-only rows, each hashed together with the previous
//! row's hash, so editing or removing any row breaks the chain from there on.

use rusqlite::{Connection, OptionalExtension, Row, params};
use sha2::{Digest, Sha256};

use super::codec::{ms, now, ts};
use crate::error::Result;
use crate::model::{AuditEntry, ChannelId, ThreadId};
use crate::store::types::AuditVerification;

/// The hash before the first row.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What one audit row says.
pub(crate) struct AuditInput<'a> {
    pub channel_id: Option<ChannelId>,
    pub thread_id: Option<ThreadId>,
    pub agent: Option<&'a str>,
    pub asker: Option<&'a str>,
    pub action: &'a str,
    pub input_summary: &'a str,
    pub outcome: &'a str,
}

/// The hash of a row's fields after `prev`: SHA-256 over a JSON array, so
/// every field is delimited unambiguously.
fn row_hash(prev: &str, at: i64, input: &AuditInput<'_>) -> String {
    let canonical = serde_json::json!([
        prev,
        at,
        input.channel_id.map(|c| c.get()),
        input.thread_id.map(|t| t.get()),
        input.agent,
        input.asker,
        input.action,
        input.input_summary,
        input.outcome,
    ])
    .to_string();
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

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

/// Recomputes every row's hash and link, oldest first.
pub(crate) fn verify(conn: &Connection) -> Result<AuditVerification> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM audit_log ORDER BY id"))?;
    let mut rows = stmt.query([])?;
    let mut prev = GENESIS.to_string();
    let mut count = 0u64;
    let mut last_id = 0i64;
    while let Some(row) = rows.next()? {
        let e = from_row(row)?;
        count += 1;
        let bad = |problem: String| AuditVerification {
            rows: count,
            first_bad_row: Some(e.id),
            problem: Some(problem),
        };
        if e.id != last_id + 1 && last_id != 0 {
            return Ok(bad(format!("row {} is missing", last_id + 1)));
        }
        last_id = e.id;
        if e.prev_hash != prev {
            return Ok(bad("its link to the previous row does not match".into()));
        }
        let expected = row_hash(
            &e.prev_hash,
            e.at.as_millisecond(),
            &AuditInput {
                channel_id: e.channel_id,
                thread_id: e.thread_id,
                agent: e.agent.as_deref(),
                asker: e.asker.as_deref(),
                action: &e.action,
                input_summary: &e.input_summary,
                outcome: &e.outcome,
            },
        );
        if expected != e.hash {
            return Ok(bad(
                "its contents do not match its hash (it was edited)".into()
            ));
        }
        prev = e.hash;
    }
    // Rows removed from the end leave an intact chain behind; SQLite's
    // AUTOINCREMENT counter still remembers the highest id ever given out.
    let highest: i64 = conn
        .query_row(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'), 0)",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    if highest > last_id {
        return Ok(AuditVerification {
            rows: count,
            first_bad_row: Some(last_id + 1),
            problem: Some(format!(
                "rows {} to {highest} are missing from the end of the log",
                last_id + 1
            )),
        });
    }
    Ok(AuditVerification {
        rows: count,
        first_bad_row: None,
        problem: None,
    })
}
