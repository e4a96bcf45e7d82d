//! The durable event log.

use rusqlite::{Connection, params};

use super::codec::{ms, now, ts};
use crate::error::{Error, Result};
use crate::events::{Event, EventBody};
use crate::model::ChannelId;

/// Appends one event and returns it with its sequence number.
pub(super) fn append(
    conn: &Connection,
    channel_id: Option<ChannelId>,
    body: EventBody,
) -> Result<Event> {
    let at = now();
    let payload = serde_json::to_string(&body)
        .map_err(|e| Error::Internal(format!("event does not serialise: {e}")))?;
    conn.prepare_cached(
        "INSERT INTO events (channel_id, type, payload, created) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![channel_id, body.type_name(), payload, ms(at)])?;
    Ok(Event {
        seq: conn.last_insert_rowid() as u64,
        at,
        channel_id,
        body,
    })
}

/// The newest event's `seq`, 0 for an empty log.
pub(super) fn head(conn: &Connection) -> Result<u64> {
    let seq: i64 = conn
        .prepare_cached("SELECT coalesce(max(seq), 0) FROM events")?
        .query_row([], |r| r.get(0))?;
    Ok(u64::try_from(seq).unwrap_or(0))
}

/// Events after `after`, oldest first.
pub(super) fn after(conn: &Connection, after: u64, limit: usize) -> Result<Vec<Event>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, created, channel_id, payload FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    decode(stmt.query_map(params![after as i64, limit as i64], columns)?)
}

/// A channel's events of `types`, newest first, before `before`.
pub(super) fn of_channel(
    conn: &Connection,
    channel: ChannelId,
    types: &[&str],
    before: Option<u64>,
    limit: usize,
) -> Result<Vec<Event>> {
    let types = serde_json::to_string(types)
        .map_err(|e| Error::Internal(format!("event types do not serialise: {e}")))?;
    let mut stmt = conn.prepare_cached(
        "SELECT seq, created, channel_id, payload FROM events
         WHERE channel_id = ?1 AND type IN (SELECT value FROM json_each(?2)) AND seq < ?3
         ORDER BY seq DESC LIMIT ?4",
    )?;
    let before = before.map_or(i64::MAX, |b| b as i64);
    decode(stmt.query_map(params![channel, types, before, limit as i64], columns)?)
}

type Columns = (i64, jiff::Timestamp, Option<ChannelId>, String);

/// `seq, created, channel_id, payload` of a row.
fn columns(row: &rusqlite::Row<'_>) -> rusqlite::Result<Columns> {
    Ok((
        row.get::<_, i64>(0)?,
        ts(row, 1)?,
        row.get::<_, Option<ChannelId>>(2)?,
        row.get::<_, String>(3)?,
    ))
}

/// Events from rows of [`columns`], their payloads read back.
fn decode(rows: impl Iterator<Item = rusqlite::Result<Columns>>) -> Result<Vec<Event>> {
    let mut out = Vec::new();
    for row in rows {
        let (seq, at, channel_id, payload) = row?;
        let body: EventBody = serde_json::from_str(&payload)
            .map_err(|e| Error::store(format_args!("event {seq} in the log cannot be read"), e))?;
        out.push(Event {
            seq: seq as u64,
            at,
            channel_id,
            body,
        });
    }
    Ok(out)
}
