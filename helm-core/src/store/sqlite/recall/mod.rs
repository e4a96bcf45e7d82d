//! The recall index in SQLite: the word index over messages and memory
//! records (`words`), the queue of items to embed, and the stored vectors.
//!
//! FTS rowids (and embedding keys) encode what an entry is: a message's id
//! times two, a memory record's id times two plus one.

mod english;
mod fts5;
pub(super) mod merging;
pub(super) mod migrate;
pub(super) mod words;

pub(super) use words::{lexical, remove_channel};

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::codec::{opt_ts, parsed, ts};
use crate::error::Result;
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::memory::vectors::StoredVectors;
use crate::model::{ChannelId, MemoryItem, MemoryScope, Message, MessageId, ThreadId};

/// Adds an item to its channel's word index and to the embedding queue.
pub(super) fn index(
    conn: &Connection,
    channel: ChannelId,
    key: ItemKey,
    body: &str,
    prev: &str,
) -> Result<()> {
    words::insert(conn, channel, key, body, prev, false)?;
    enqueue(conn, key, channel)
}

/// Puts an item on the queue of items to embed.
fn enqueue(conn: &Connection, key: ItemKey, channel: ChannelId) -> Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO embed_queue (key, channel_id) VALUES (?1, ?2)")?
        .execute(params![key.0, channel])?;
    Ok(())
}

/// Indexes a final message of a thread, with the thread's previous message
/// as its `prev` column.
pub(super) fn index_message(conn: &Connection, message: &Message) -> Result<()> {
    let Some(thread) = message.thread_id else {
        return Ok(());
    };
    if message.content.trim().is_empty() {
        return Ok(());
    }
    let prev = previous_message(conn, thread, message.id)?;
    index(
        conn,
        message.channel_id,
        ItemKey::message(message.id),
        &message.content,
        &prev,
    )
}

/// The text of the finished, non-system message of `thread` before `id`
/// (empty when there is none): the `prev` a message is indexed with.
fn previous_message(conn: &Connection, thread: ThreadId, id: MessageId) -> Result<String> {
    Ok(conn
        .prepare_cached(
            "SELECT content FROM messages WHERE thread_id = ?1 AND id < ?2 \
             AND status = 'complete' AND author_kind != 'system' ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![thread, id], |r| r.get(0))
        .optional()?
        .unwrap_or_default())
}

/// Indexes a memory record; one shared with the workspace is also found by
/// every channel's recall.
pub(super) fn index_memory(conn: &Connection, item: &MemoryItem) -> Result<()> {
    let key = ItemKey::memory(item.id);
    let shared = item.scope == MemoryScope::Workspace;
    words::insert(conn, item.channel_id, key, &item.content, "", shared)?;
    enqueue(conn, key, item.channel_id)
}

/// What recall needs to know about each candidate: its kind, thread, author,
/// time, status and sources; in the order of `keys`, unknown keys left out.
///
/// Two statements, each given every id at once (a JSON array read by
/// `json_each`): recall asks for a few hundred items, and a statement per
/// item cost more in running statements than in reading rows.
pub(super) fn items(conn: &Connection, keys: &[ItemKey]) -> Result<Vec<CandidateItem>> {
    let ids = |id: fn(&ItemKey) -> Option<i64>| {
        serde_json::Value::from(keys.iter().filter_map(id).collect::<Vec<i64>>()).to_string()
    };
    let mut found: HashMap<ItemKey, CandidateItem> = HashMap::with_capacity(keys.len());
    let mut message_stmt = conn.prepare_cached(
        "SELECT m.id, m.channel_id, m.thread_id, m.author_name, m.content, m.created, \
         m.external_id, t.opened_at, t.title FROM json_each(?1) j \
         JOIN messages m ON m.id = j.value \
         LEFT JOIN threads t ON t.id = m.thread_id",
    )?;
    let mut rows = message_stmt.query([ids(|k| k.message_id().map(MessageId::get))])?;
    while let Some(r) = rows.next()? {
        let id: MessageId = r.get(0)?;
        let key = ItemKey::message(id);
        found.insert(
            key,
            CandidateItem {
                key,
                channel_id: r.get(1)?,
                thread_id: r.get(2)?,
                kind: None,
                author: r.get(3)?,
                content: r.get(4)?,
                created: ts(r, 5)?,
                said_at: ts(r, 5)?,
                thread_opened: opt_ts(r, 7)?,
                thread_title: r.get(8)?,
                status: None,
                scope: None,
                turn: Some(id),
                source_external_id: r.get(6)?,
            },
        );
    }
    let mut memory_stmt = conn.prepare_cached(
        "SELECT i.id, i.channel_id, i.thread_id, i.kind, i.content, i.created, i.status, \
         i.scope, i.source_message_id, s.author_name, s.external_id, \
         coalesce(i.author_name, i.author_type), coalesce(s.created, i.created), t.opened_at, \
         t.title \
         FROM json_each(?1) j JOIN memory_items i ON i.id = j.value \
         LEFT JOIN messages s ON s.id = i.source_message_id \
         LEFT JOIN threads t ON t.id = i.thread_id",
    )?;
    let mut rows = memory_stmt.query([ids(|k| k.memory_id().map(|m| m.get()))])?;
    while let Some(r) = rows.next()? {
        let key = ItemKey::memory(r.get(0)?);
        let source: Option<MessageId> = r.get(8)?;
        let source_author: Option<String> = r.get(9)?;
        found.insert(
            key,
            CandidateItem {
                key,
                channel_id: r.get(1)?,
                thread_id: r.get(2)?,
                kind: Some(parsed(r, 3)?),
                content: r.get(4)?,
                created: ts(r, 5)?,
                said_at: ts(r, 12)?,
                thread_opened: opt_ts(r, 13)?,
                thread_title: r.get(14)?,
                status: Some(parsed(r, 6)?),
                scope: Some(parsed(r, 7)?),
                turn: source,
                source_external_id: r.get(10)?,
                author: source_author.or(r.get(11)?),
            },
        );
    }
    Ok(keys.iter().filter_map(|k| found.remove(k)).collect())
}

/// The external ids of a thread's messages, in order.
pub(super) fn thread_external_ids(conn: &Connection, thread: ThreadId) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT external_id FROM messages WHERE thread_id = ?1 AND external_id IS NOT NULL \
         ORDER BY id",
    )?;
    let ids = stmt
        .query_map([thread], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(ids)
}

/// Items waiting to be embedded (optionally of one channel), newest first,
/// with the text to embed: for a message `author: text` and, on a line
/// after it, the thread's message before it (its first 512 characters), as
/// its words are indexed with it, so an answer carries what it answers; a
/// memory record's content. With `unembedded` a model's name, only items
/// with no vector of that model yet.
pub(super) fn backlog(
    conn: &Connection,
    channel: Option<ChannelId>,
    limit: usize,
    unembedded: Option<&str>,
) -> Result<Vec<(ItemKey, ChannelId, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.key, q.channel_id, \
         CASE WHEN q.key % 2 = 0 THEN \
             (SELECT m.author_name || ': ' || m.content || coalesce(char(10) || \
                 (SELECT p.author_name || ': ' || substr(p.content, 1, 512) FROM messages p \
                  WHERE p.thread_id = m.thread_id AND p.id < m.id AND p.status = 'complete' \
                  AND p.author_kind != 'system' ORDER BY p.id DESC LIMIT 1), '') \
              FROM messages m WHERE m.id = q.key / 2) \
         ELSE (SELECT i.content FROM memory_items i WHERE i.id = q.key / 2) END \
         FROM embed_queue q WHERE (?1 IS NULL OR q.channel_id = ?1) \
         AND (?3 IS NULL OR NOT EXISTS \
             (SELECT 1 FROM embeddings e WHERE e.model = ?3 AND e.key = q.key)) \
         ORDER BY q.key DESC LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![channel, limit as i64, unembedded], |r| {
            Ok((
                ItemKey(r.get(0)?),
                r.get(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // An item deleted since it was queued has no text; it is simply dropped.
    Ok(rows
        .into_iter()
        .map(|(k, c, t)| (k, c, t.unwrap_or_default()))
        .collect())
}

/// How many items wait to be embedded.
pub(super) fn backlog_len(conn: &Connection, channel: Option<ChannelId>) -> Result<u64> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM embed_queue WHERE ?1 IS NULL OR channel_id = ?1")?
        .query_row([channel], |r| r.get::<_, i64>(0))? as u64)
}

/// Stores vectors and takes their items off the queue.
pub(super) fn put_embeddings(
    conn: &Connection,
    model: &str,
    vectors: &[(ItemKey, ChannelId, Vec<f32>)],
) -> Result<()> {
    let mut put = conn.prepare_cached(
        "INSERT OR REPLACE INTO embeddings (model, key, channel_id, vector) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut done = conn.prepare_cached("DELETE FROM embed_queue WHERE key = ?1")?;
    for (key, channel, vector) in vectors {
        if !vector.is_empty() {
            put.execute(params![
                model,
                key.0,
                channel,
                StoredVectors::encode(vector)
            ])?;
        }
        done.execute([key.0])?;
    }
    Ok(())
}

/// A channel's vectors for `model` stored after number `after` (0: all of
/// them), and the number of the newest.
pub(super) fn vectors(
    conn: &Connection,
    model: &str,
    channel: ChannelId,
    after: i64,
) -> Result<StoredVectors> {
    let mut stmt = conn.prepare_cached(
        "SELECT key, vector, seq FROM embeddings \
         WHERE model = ?1 AND channel_id = ?2 AND seq > ?3 ORDER BY seq",
    )?;
    let mut stored = StoredVectors::after(after);
    let mut rows = stmt.query(params![model, channel, after])?;
    while let Some(r) = rows.next()? {
        // Decoded from the row's own bytes, not a copy of them.
        if let rusqlite::types::ValueRef::Blob(bytes) = r.get_ref(1)? {
            stored.push_stored(ItemKey(r.get(0)?), bytes, r.get(2)?);
        }
    }
    Ok(stored)
}

/// The channels with vectors for `model`, the most recently stored first,
/// and how many each has (read from the channel index alone).
pub(super) fn vector_channels(conn: &Connection, model: &str) -> Result<Vec<(ChannelId, u64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT channel_id, count(*) FROM embeddings WHERE model = ?1 \
         GROUP BY channel_id ORDER BY max(seq) DESC",
    )?;
    let rows = stmt
        .query_map([model], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests;
