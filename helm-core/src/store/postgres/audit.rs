//! The audit log's rows on PostgreSQL, chained as [`crate::audit`] defines.
//!
//! Two nodes appending at once must not both chain to the same last row, so
//! an append first takes a transaction-scoped advisory lock, then reads the
//! last row (a fresh snapshot, since the lock is taken by an earlier
//! statement). Ids are the previous id + 1 and `audit_head` is a counter
//! row written in the same transaction, not a sequence: a sequence keeps
//! numbers a rolled-back transaction took, which would look exactly like
//! rows removed from the end of the log.

use jiff::Timestamp;
use tokio_postgres::Row;

use super::failed;
use crate::audit::{AuditFields, GENESIS, row_hash};
use crate::error::{Error, Result};
use crate::model::{AuditEntry, ChannelId, ThreadId};
use crate::store::postgres::prepared::Db;

/// The advisory lock key appends hold ("audt" in ASCII).
const LOCK: i64 = 0x6175_6474;

const COLUMNS: &str =
    "id, at, channel_id, thread_id, agent, asker, action, input_summary, outcome, prev_hash, hash";

/// Appends a row inside the caller's transaction, chained to the last one.
pub(crate) async fn append(tx: &impl Db, fields: AuditFields<'_>) -> Result<()> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
        .await
        .map_err(failed("waiting for the audit log"))?;
    let last = tx
        .query_opt(
            "SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1",
            &[],
        )
        .await
        .map_err(failed("reading the audit log's last row"))?;
    let (prev_id, prev) = match last {
        Some(row) => (row.get::<_, i64>(0), row.get::<_, String>(1)),
        None => (0, GENESIS.to_string()),
    };
    let at = Timestamp::now().as_millisecond();
    let hash = row_hash(&prev, at, &fields);
    let id: i64 = tx
        .query_one(
            "UPDATE audit_counter SET last = greatest(last, $1) + 1 WHERE id = 1 RETURNING last",
            &[&prev_id],
        )
        .await
        .map_err(failed("numbering an audit row"))?
        .get(0);
    tx.execute(
        "INSERT INTO audit_log (id, at, channel_id, thread_id, agent, asker, action,
                                input_summary, outcome, prev_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        &[
            &id,
            &at,
            &fields.channel_id.map(ChannelId::get),
            &fields.thread_id.map(ThreadId::get),
            &fields.agent,
            &fields.asker,
            &fields.action,
            &fields.input_summary,
            &fields.outcome,
            &prev,
            &hash,
        ],
    )
    .await
    .map_err(failed("writing an audit row"))?;
    Ok(())
}

fn from_row(row: &Row) -> Result<AuditEntry> {
    let id: i64 = row.get(0);
    Ok(AuditEntry {
        id,
        at: Timestamp::from_millisecond(row.get(1))
            .map_err(|e| Error::store(format_args!("audit row {id}'s time"), e))?,
        channel_id: row.get::<_, Option<i64>>(2).map(ChannelId),
        thread_id: row.get::<_, Option<i64>>(3).map(ThreadId),
        agent: row.get(4),
        asker: row.get(5),
        action: row.get(6),
        input_summary: row.get(7),
        outcome: row.get(8),
        prev_hash: row.get(9),
        hash: row.get(10),
    })
}

/// The newest `limit` rows (of one channel, or all), oldest first.
pub(crate) async fn list(
    client: &impl Db,
    channel: Option<ChannelId>,
    limit: i64,
) -> Result<Vec<AuditEntry>> {
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM (SELECT * FROM audit_log
                     WHERE $1::BIGINT IS NULL OR channel_id = $1
                     ORDER BY id DESC LIMIT $2) newest
                 ORDER BY id"
            ),
            &[&channel.map(ChannelId::get), &limit],
        )
        .await
        .map_err(failed("reading the audit log"))?;
    rows.iter().map(from_row).collect()
}

/// Up to `limit` rows with ids above `after`, in id order.
pub(crate) async fn chain(client: &impl Db, after: i64, limit: i64) -> Result<Vec<AuditEntry>> {
    let rows = client
        .query(
            &format!("SELECT {COLUMNS} FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2"),
            &[&after, &limit],
        )
        .await
        .map_err(failed("reading the audit chain"))?;
    rows.iter().map(from_row).collect()
}

/// The highest row id ever given out.
pub(crate) async fn head(client: &impl Db) -> Result<i64> {
    Ok(client
        .query_one("SELECT last FROM audit_counter WHERE id = 1", &[])
        .await
        .map_err(failed("reading the audit log's head"))?
        .get(0))
}
