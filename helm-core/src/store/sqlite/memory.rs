//! Memory records as rows: adding, superseding (editing never overwrites),
//! forgetting, pinning and listing.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{ms, now, opt_ts, parsed, ts};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{Actor, ChannelId, MemoryId, MemoryItem, MemoryStatus};
use crate::store::types::{MemoryFilter, NewMemory};

pub(super) const COLUMNS: &str = "m.id, m.channel_id, m.thread_id, m.kind, m.content, \
    m.source_kind, m.source_message_id, m.author_type, m.author_name, m.scope, m.status, \
    m.superseded_by, m.confidence, m.pinned, m.created, m.forgotten_by, m.forgotten_at";

pub(super) fn from_row(r: &Row<'_>, at: usize) -> rusqlite::Result<MemoryItem> {
    Ok(MemoryItem {
        id: r.get(at)?,
        channel_id: r.get(at + 1)?,
        thread_id: r.get(at + 2)?,
        kind: parsed(r, at + 3)?,
        content: r.get(at + 4)?,
        source: parsed(r, at + 5)?,
        source_message_id: r.get(at + 6)?,
        author_type: parsed(r, at + 7)?,
        author_name: r.get(at + 8)?,
        scope: parsed(r, at + 9)?,
        status: parsed(r, at + 10)?,
        superseded_by: r.get(at + 11)?,
        confidence: r.get(at + 12)?,
        pinned: r.get(at + 13)?,
        created: ts(r, at + 14)?,
        forgotten_by: r.get(at + 15)?,
        forgotten_at: opt_ts(r, at + 16)?,
    })
}

pub(super) fn get(conn: &Connection, id: MemoryId) -> Result<MemoryItem> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memory_items m WHERE m.id = ?1"
    ))?
    .query_row([id], |r| from_row(r, 0))
    .optional()?
    .ok_or_else(|| Error::not_found("memory", id))
}

/// The current record that says what `new` says in the same place.
fn same_current(conn: &Connection, new: &NewMemory) -> Result<Option<MemoryId>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM memory_items WHERE channel_id = ?1 AND thread_id IS ?2 \
             AND kind = ?3 AND scope = ?4 AND content = ?5 AND status = 'current' LIMIT 1",
        )?
        .query_row(
            params![
                new.channel_id,
                new.thread_id,
                new.kind.as_str(),
                new.scope.as_str(),
                new.content
            ],
            |r| r.get(0),
        )
        .optional()?)
}

/// Inserts a record without events (imports write many at once).
pub(super) fn insert_row(conn: &Connection, new: &NewMemory) -> Result<MemoryId> {
    conn.prepare_cached(
        "INSERT INTO memory_items (channel_id, thread_id, kind, content, source_kind, \
         source_message_id, author_type, author_name, scope, status, confidence, pinned, created) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'current', ?10, ?11, ?12)",
    )?
    .execute(params![
        new.channel_id,
        new.thread_id,
        new.kind.as_str(),
        new.content,
        new.source.as_str(),
        new.source_message_id,
        new.author_type.as_str(),
        new.author_name,
        new.scope.as_str(),
        new.confidence,
        new.pinned,
        ms(now())
    ])?;
    Ok(MemoryId(conn.last_insert_rowid()))
}

/// Adds a record, with its event; a current record that says the same in
/// the same place (channel, thread, kind, scope, words) is returned
/// instead, so two people keeping one decision at once keep it once.
pub(super) fn insert(tx: &mut Tx<'_>, new: NewMemory) -> Result<MemoryItem> {
    if let Some(same) = same_current(tx.conn(), &new)? {
        return get(tx.conn(), same);
    }
    let id = insert_row(tx.conn(), &new)?;
    let item = get(tx.conn(), id)?;
    super::recall::index_memory(tx.conn(), &item)?;
    tx.emit(
        Some(item.channel_id),
        EventBody::MemoryChanged { item: item.clone() },
    )?;
    Ok(item)
}

/// Replaces a current record's content with a new record that supersedes it.
pub(super) fn supersede(
    tx: &mut Tx<'_>,
    id: MemoryId,
    replacement: NewMemory,
) -> Result<MemoryItem> {
    let old = get(tx.conn(), id)?;
    if old.status != MemoryStatus::Current {
        return Err(Error::Conflict(format!(
            "memory {id} is {}; edit the record that replaced it",
            old.status
        )));
    }
    let new_id = insert_row(tx.conn(), &replacement)?;
    super::recall::index_memory(tx.conn(), &get(tx.conn(), new_id)?)?;
    tx.conn().execute(
        "UPDATE memory_items SET status = 'superseded', superseded_by = ?2 WHERE id = ?1",
        params![id, new_id],
    )?;
    let old = get(tx.conn(), id)?;
    let new = get(tx.conn(), new_id)?;
    tx.emit(Some(old.channel_id), EventBody::MemoryChanged { item: old })?;
    tx.emit(
        Some(new.channel_id),
        EventBody::MemoryChanged { item: new.clone() },
    )?;
    Ok(new)
}

/// Marks a record forgotten (and unpinned) by `by`, now.
pub(super) fn forget(tx: &mut Tx<'_>, id: MemoryId, by: &Actor) -> Result<MemoryItem> {
    let item = get(tx.conn(), id)?;
    if item.status == MemoryStatus::Forgotten {
        return Err(Error::Conflict(format!("memory {id} is already forgotten")));
    }
    tx.conn().execute(
        "UPDATE memory_items SET status = 'forgotten', pinned = 0, forgotten_by = ?2, \
         forgotten_at = ?3 WHERE id = ?1",
        params![id, by.to_string(), ms(now())],
    )?;
    changed(tx, id)
}

/// Brings a forgotten record back to current; who forgot it is cleared.
pub(super) fn restore(tx: &mut Tx<'_>, id: MemoryId) -> Result<MemoryItem> {
    let item = get(tx.conn(), id)?;
    if item.status != MemoryStatus::Forgotten {
        return Err(Error::Conflict(format!(
            "memory {id} is {}; only a forgotten record is restored",
            item.status
        )));
    }
    tx.conn().execute(
        "UPDATE memory_items SET status = 'current', forgotten_by = NULL, \
         forgotten_at = NULL WHERE id = ?1",
        [id],
    )?;
    changed(tx, id)
}

/// The record as it is now, with its `memory.changed` event.
fn changed(tx: &mut Tx<'_>, id: MemoryId) -> Result<MemoryItem> {
    let item = get(tx.conn(), id)?;
    tx.emit(
        Some(item.channel_id),
        EventBody::MemoryChanged { item: item.clone() },
    )?;
    Ok(item)
}

pub(super) fn pin(tx: &mut Tx<'_>, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
    let item = get(tx.conn(), id)?;
    if item.status != MemoryStatus::Current && pinned {
        return Err(Error::Conflict(format!(
            "memory {id} is {}; only current records can be pinned",
            item.status
        )));
    }
    tx.conn().execute(
        "UPDATE memory_items SET pinned = ?2 WHERE id = ?1",
        params![id, pinned],
    )?;
    let item = get(tx.conn(), id)?;
    tx.emit(
        Some(item.channel_id),
        EventBody::MemoryChanged { item: item.clone() },
    )?;
    Ok(item)
}

pub(super) fn list(
    conn: &Connection,
    channel: ChannelId,
    filter: &MemoryFilter,
) -> Result<Vec<MemoryItem>> {
    let limit = if filter.limit == 0 {
        -1
    } else {
        filter.limit as i64
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memory_items m WHERE m.channel_id = ?1 \
         AND (?2 IS NULL OR m.kind = ?2) AND (?3 IS NULL OR m.thread_id = ?3) \
         AND (?4 OR m.status = 'current') \
         AND (?6 IS NULL OR (m.pinned, m.id) < \
              (SELECT c.pinned, c.id FROM memory_items c WHERE c.id = ?6)) \
         ORDER BY m.pinned DESC, m.id DESC LIMIT ?5"
    ))?;
    let items = stmt
        .query_map(
            params![
                channel,
                filter.kind.map(|k| k.as_str()),
                filter.thread,
                filter.include_inactive,
                limit,
                filter.before
            ],
            |r| from_row(r, 0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(items)
}
