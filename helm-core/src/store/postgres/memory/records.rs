//! Memory records as rows: adding, superseding (editing never overwrites),
//! forgetting, pinning and listing. A change to a record first locks its
//! row, so two nodes cannot both supersede (or forget) the same one.

use tokio_postgres::Row;

use super::super::codec::{now, opt_ts, parsed, ts};
use super::super::events::append;
use super::super::failed;
use super::recall::enqueue;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::memory::recall::ItemKey;
use crate::model::{Actor, ChannelId, MemoryId, MemoryItem, MemoryStatus, MessageId, ThreadId};
use crate::store::postgres::prepared::Db;
use crate::store::types::{MemoryFilter, NewMemory};

const COLUMNS: &str = "m.id, m.channel_id, m.thread_id, m.kind, m.content, \
    m.source_kind, m.source_message_id, m.author_type, m.author_name, m.scope, m.status, \
    m.superseded_by, m.confidence, m.pinned, m.created, m.forgotten_by, m.forgotten_at";

fn item_at(r: &Row) -> Result<MemoryItem> {
    Ok(MemoryItem {
        id: MemoryId(r.get(0)),
        channel_id: ChannelId(r.get(1)),
        thread_id: r.get::<_, Option<i64>>(2).map(ThreadId),
        kind: parsed(r, 3)?,
        content: r.get(4),
        source: parsed(r, 5)?,
        source_message_id: r.get::<_, Option<i64>>(6).map(MessageId),
        author_type: parsed(r, 7)?,
        author_name: r.get(8),
        scope: parsed(r, 9)?,
        status: parsed(r, 10)?,
        superseded_by: r.get::<_, Option<i64>>(11).map(MemoryId),
        confidence: r.get(12),
        pinned: r.get::<_, i16>(13) != 0,
        created: ts(r, 14)?,
        forgotten_by: r.get(15),
        forgotten_at: opt_ts(r, 16)?,
    })
}

/// A memory record.
pub(crate) async fn get(c: &impl Db, id: MemoryId) -> Result<MemoryItem> {
    read(c, id, "").await
}

/// A memory record, locked until the caller's transaction ends.
async fn lock(c: &impl Db, id: MemoryId) -> Result<MemoryItem> {
    read(c, id, " FOR UPDATE").await
}

async fn read(c: &impl Db, id: MemoryId, suffix: &str) -> Result<MemoryItem> {
    let row = c
        .query_opt(
            &format!("SELECT {COLUMNS} FROM memory_items m WHERE m.id = $1{suffix}"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a memory record"))?
        .ok_or_else(|| Error::not_found("memory", id))?;
    item_at(&row)
}

/// Inserts a record without events (imports write many at once) and queues
/// it to be embedded; its words are indexed by the schema.
pub(crate) async fn insert_row(c: &impl Db, new: &NewMemory) -> Result<MemoryId> {
    let id = MemoryId(
        c.query_one(
            "INSERT INTO memory_items (channel_id, thread_id, kind, content, source_kind, \
             source_message_id, author_type, author_name, scope, status, confidence, pinned, \
             created) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'current', $10, $11, $12) \
             RETURNING id",
            &[
                &new.channel_id.get(),
                &new.thread_id.map(ThreadId::get),
                &new.kind.as_str(),
                &new.content,
                &new.source.as_str(),
                &new.source_message_id.map(MessageId::get),
                &new.author_type.as_str(),
                &new.author_name,
                &new.scope.as_str(),
                &new.confidence,
                &i16::from(new.pinned),
                &now().as_millisecond(),
            ],
        )
        .await
        .map_err(failed("storing a memory record"))?
        .get(0),
    );
    enqueue(c, new.channel_id, ItemKey::memory(id)).await?;
    Ok(id)
}

/// The advisory lock (with the channel's id) that adding a record holds
/// ("memo" in ASCII): two nodes adding the same record at once take turns,
/// so the second finds the first's.
const ADD_LOCK: i32 = 0x6d65_6d6f;

/// Adds a record, with its event; a current record that says the same in
/// the same place (channel, thread, kind, scope, words) is returned
/// instead, so two people keeping one decision at once keep it once.
pub(crate) async fn insert(tx: &impl Db, new: NewMemory) -> Result<MemoryItem> {
    // Channel ids past i32 share a lock with another channel: they only
    // take turns needlessly.
    let channel_key = new.channel_id.get() as i32;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, $2)",
        &[&ADD_LOCK, &channel_key],
    )
    .await
    .map_err(failed("locking a channel's memory"))?;
    let same = tx
        .query_opt(
            "SELECT id FROM memory_items WHERE channel_id = $1 \
             AND thread_id IS NOT DISTINCT FROM $2 AND kind = $3 AND scope = $4 \
             AND content = $5 AND status = 'current' LIMIT 1",
            &[
                &new.channel_id.get(),
                &new.thread_id.map(ThreadId::get),
                &new.kind.as_str(),
                &new.scope.as_str(),
                &new.content,
            ],
        )
        .await
        .map_err(failed("reading a channel's memory"))?;
    if let Some(row) = same {
        return get(tx, MemoryId(row.get(0))).await;
    }
    let id = insert_row(tx, &new).await?;
    let item = get(tx, id).await?;
    append(
        tx,
        Some(item.channel_id),
        EventBody::MemoryChanged { item: item.clone() },
    )
    .await?;
    Ok(item)
}

/// Replaces a current record's content with a new record that supersedes it.
pub(crate) async fn supersede(
    tx: &impl Db,
    id: MemoryId,
    replacement: NewMemory,
) -> Result<MemoryItem> {
    let old = lock(tx, id).await?;
    if old.status != MemoryStatus::Current {
        return Err(Error::Conflict(format!(
            "memory {id} is {}; edit the record that replaced it",
            old.status
        )));
    }
    let new_id = insert_row(tx, &replacement).await?;
    tx.execute(
        "UPDATE memory_items SET status = 'superseded', superseded_by = $2 WHERE id = $1",
        &[&id.get(), &new_id.get()],
    )
    .await
    .map_err(failed("superseding a memory record"))?;
    let old = get(tx, id).await?;
    let new = get(tx, new_id).await?;
    append(
        tx,
        Some(old.channel_id),
        EventBody::MemoryChanged { item: old },
    )
    .await?;
    append(
        tx,
        Some(new.channel_id),
        EventBody::MemoryChanged { item: new.clone() },
    )
    .await?;
    Ok(new)
}

/// Marks a record forgotten (and unpinned) by `by`, now.
pub(crate) async fn forget(tx: &impl Db, id: MemoryId, by: &Actor) -> Result<MemoryItem> {
    let item = lock(tx, id).await?;
    if item.status == MemoryStatus::Forgotten {
        return Err(Error::Conflict(format!("memory {id} is already forgotten")));
    }
    tx.execute(
        "UPDATE memory_items SET status = 'forgotten', pinned = 0, forgotten_by = $2, \
         forgotten_at = $3 WHERE id = $1",
        &[&id.get(), &by.to_string(), &now().as_millisecond()],
    )
    .await
    .map_err(failed("forgetting a memory record"))?;
    changed(tx, id).await
}

/// Brings a forgotten record back to current; who forgot it is cleared.
pub(crate) async fn restore(tx: &impl Db, id: MemoryId) -> Result<MemoryItem> {
    let item = lock(tx, id).await?;
    if item.status != MemoryStatus::Forgotten {
        return Err(Error::Conflict(format!(
            "memory {id} is {}; only a forgotten record is restored",
            item.status
        )));
    }
    tx.execute(
        "UPDATE memory_items SET status = 'current', forgotten_by = NULL, \
         forgotten_at = NULL WHERE id = $1",
        &[&id.get()],
    )
    .await
    .map_err(failed("restoring a memory record"))?;
    changed(tx, id).await
}

/// Pins or unpins a record; only a current one can be pinned.
pub(crate) async fn pin(tx: &impl Db, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
    let item = lock(tx, id).await?;
    if item.status != MemoryStatus::Current && pinned {
        return Err(Error::Conflict(format!(
            "memory {id} is {}; only current records can be pinned",
            item.status
        )));
    }
    tx.execute(
        "UPDATE memory_items SET pinned = $2 WHERE id = $1",
        &[&id.get(), &i16::from(pinned)],
    )
    .await
    .map_err(failed("pinning a memory record"))?;
    changed(tx, id).await
}

/// The record as it is now, with its `memory.changed` event.
async fn changed(tx: &impl Db, id: MemoryId) -> Result<MemoryItem> {
    let item = get(tx, id).await?;
    append(
        tx,
        Some(item.channel_id),
        EventBody::MemoryChanged { item: item.clone() },
    )
    .await?;
    Ok(item)
}

/// A channel's records, pinned first, then newest first.
pub(crate) async fn list(
    c: &impl Db,
    channel: ChannelId,
    filter: &MemoryFilter,
) -> Result<Vec<MemoryItem>> {
    // LIMIT NULL is no limit.
    let n = (filter.limit > 0).then(|| i64::try_from(filter.limit).unwrap_or(i64::MAX));
    c.query(
        &format!(
            "SELECT {COLUMNS} FROM memory_items m WHERE m.channel_id = $1 \
             AND ($2::TEXT IS NULL OR m.kind = $2) AND ($3::BIGINT IS NULL OR m.thread_id = $3) \
             AND ($4 OR m.status = 'current') \
             AND ($6::BIGINT IS NULL OR (m.pinned, m.id) < \
                  (SELECT c.pinned, c.id FROM memory_items c WHERE c.id = $6)) \
             ORDER BY m.pinned DESC, m.id DESC LIMIT $5"
        ),
        &[
            &channel.get(),
            &filter.kind.map(|k| k.as_str()),
            &filter.thread.map(ThreadId::get),
            &filter.include_inactive,
            &n,
            &filter.before.map(MemoryId::get),
        ],
    )
    .await
    .map_err(failed("listing memory records"))?
    .iter()
    .map(item_at)
    .collect()
}
