//! The recall index in SQLite: one FTS5 table per channel over messages and
//! memory records (`body`, plus `prev`: the previous message of the thread,
//! which carries the question a reply answers), the queue of items to embed,
//! and the stored vectors.
//!
//! FTS rowids (and embedding keys) encode what an entry is: a message's id
//! times two, a memory record's id times two plus one.

use rusqlite::{Connection, OptionalExtension, params};

use super::codec::{opt_ts, parsed, ts};
use crate::error::Result;
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::model::{ChannelId, MemoryItem, MemoryScope, Message, MessageId, ThreadId};

/// The word index of records shared with the whole workspace.
const WORKSPACE_TABLE: &str = "recall_workspace";

fn table(channel: ChannelId) -> String {
    format!("recall_c{}", channel.get())
}

/// Creates a word index if it does not exist yet. Only the writer creates
/// them, so its parsed schema is current and is all it needs to ask.
fn ensure_table(conn: &Connection, name: &str) -> Result<()> {
    if !conn.table_exists(None, name)? {
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5(body, prev, content='', \
             contentless_delete=1, tokenize='porter unicode61')"
        ))?;
    }
    Ok(())
}

/// Whether the word index `name` exists. First a lookup in the connection's
/// parsed schema (`sqlite_schema` has no index on names, so a query there
/// reads every channel's tables); only when that says no, the query, which
/// also sees a table another connection created since this one last read
/// the schema.
fn has_table(conn: &Connection, name: &str) -> Result<bool> {
    if conn.table_exists(None, name)? {
        return Ok(true);
    }
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1")?
        .exists([&name])?)
}

/// Drops a deleted channel's word index.
pub(super) fn drop_index(conn: &Connection, channel: ChannelId) -> Result<()> {
    conn.execute_batch(&format!("DROP TABLE IF EXISTS {}", table(channel)))?;
    Ok(())
}

/// Adds an item to its channel's word index and to the embedding queue.
pub(super) fn index(
    conn: &Connection,
    channel: ChannelId,
    key: ItemKey,
    body: &str,
    prev: &str,
) -> Result<()> {
    let name = table(channel);
    ensure_table(conn, &name)?;
    conn.prepare_cached(&format!(
        "INSERT INTO {name} (rowid, body, prev) VALUES (?1, ?2, ?3)"
    ))?
    .execute(params![key.0, body, prev])?;
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
    let prev: String = conn
        .prepare_cached(
            "SELECT content FROM messages WHERE thread_id = ?1 AND id < ?2 \
             AND status = 'complete' AND author_kind != 'system' ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![thread, message.id], |r| r.get(0))
        .optional()?
        .unwrap_or_default();
    index(
        conn,
        message.channel_id,
        ItemKey::message(message.id),
        &message.content,
        &prev,
    )
}

/// Indexes a memory record; one shared with the workspace is also indexed
/// where every channel's recall looks.
pub(super) fn index_memory(conn: &Connection, item: &MemoryItem) -> Result<()> {
    let key = ItemKey::memory(item.id);
    index(conn, item.channel_id, key, &item.content, "")?;
    if item.scope == MemoryScope::Workspace {
        ensure_table(conn, WORKSPACE_TABLE)?;
        conn.prepare_cached(&format!(
            "INSERT INTO {WORKSPACE_TABLE} (rowid, body, prev) VALUES (?1, ?2, '')"
        ))?
        .execute(params![key.0, item.content])?;
    }
    Ok(())
}

/// An FTS5 query matching any of `terms`: each quoted (a quote inside
/// doubled), so nothing in a term is read as FTS5 syntax; `None` without
/// terms.
pub(super) fn fts5_expression(terms: &[String]) -> Option<String> {
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// The best matches of an FTS5 query in one channel, and among records
/// shared with the workspace, best first, with positive scores (negated BM25).
pub(super) fn lexical(
    conn: &Connection,
    channel: ChannelId,
    fts_query: &str,
    depth: usize,
) -> Result<Vec<(ItemKey, f64)>> {
    let mut hits = search(conn, &table(channel), fts_query, depth)?;
    let shared = search(conn, WORKSPACE_TABLE, fts_query, depth)?;
    if !shared.is_empty() {
        let own: std::collections::HashSet<ItemKey> = hits.iter().map(|(k, _)| *k).collect();
        hits.extend(shared.into_iter().filter(|(k, _)| !own.contains(k)));
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        hits.truncate(depth);
    }
    Ok(hits)
}

fn search(
    conn: &Connection,
    name: &str,
    fts_query: &str,
    depth: usize,
) -> Result<Vec<(ItemKey, f64)>> {
    if !has_table(conn, name)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid, -bm25({name}, 1.0, 1.0) FROM {name} WHERE {name} MATCH ?1 \
         ORDER BY bm25({name}, 1.0, 1.0) LIMIT ?2"
    ))?;
    let hits = stmt
        .query_map(params![fts_query, depth as i64], |r| {
            Ok((ItemKey(r.get(0)?), r.get(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(hits)
}

/// What recall needs to know about each candidate: its kind, thread, author,
/// time, status and sources.
pub(super) fn items(conn: &Connection, keys: &[ItemKey]) -> Result<Vec<CandidateItem>> {
    let mut out = Vec::with_capacity(keys.len());
    let mut message_stmt = conn.prepare_cached(
        "SELECT m.channel_id, m.thread_id, m.author_name, m.content, m.created, m.external_id, \
         t.opened_at FROM messages m LEFT JOIN threads t ON t.id = m.thread_id WHERE m.id = ?1",
    )?;
    let mut memory_stmt = conn.prepare_cached(
        "SELECT i.channel_id, i.thread_id, i.kind, i.content, i.created, i.status, i.scope, \
         i.source_message_id, s.author_name, s.external_id, coalesce(i.author_name, i.author_type), \
         coalesce(s.created, i.created), t.opened_at \
         FROM memory_items i LEFT JOIN messages s ON s.id = i.source_message_id \
         LEFT JOIN threads t ON t.id = i.thread_id WHERE i.id = ?1",
    )?;
    for key in keys {
        if let Some(id) = key.message_id() {
            let found = message_stmt
                .query_row([id], |r| {
                    Ok(CandidateItem {
                        key: *key,
                        channel_id: r.get(0)?,
                        thread_id: r.get(1)?,
                        kind: None,
                        author: r.get(2)?,
                        content: r.get(3)?,
                        created: ts(r, 4)?,
                        said_at: ts(r, 4)?,
                        thread_opened: opt_ts(r, 6)?,
                        status: None,
                        scope: None,
                        turn: Some(id),
                        source_external_id: r.get(5)?,
                    })
                })
                .optional()?;
            out.extend(found);
        } else if let Some(id) = key.memory_id() {
            let found = memory_stmt
                .query_row([id], |r| {
                    let source: Option<MessageId> = r.get(7)?;
                    let source_author: Option<String> = r.get(8)?;
                    Ok(CandidateItem {
                        key: *key,
                        channel_id: r.get(0)?,
                        thread_id: r.get(1)?,
                        kind: Some(parsed(r, 2)?),
                        content: r.get(3)?,
                        created: ts(r, 4)?,
                        said_at: ts(r, 11)?,
                        thread_opened: opt_ts(r, 12)?,
                        status: Some(parsed(r, 5)?),
                        scope: Some(parsed(r, 6)?),
                        turn: source,
                        source_external_id: r.get(9)?,
                        author: source_author.or(r.get(10)?),
                    })
                })
                .optional()?;
            out.extend(found);
        }
    }
    Ok(out)
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

/// Items waiting to be embedded (optionally of one channel), with the text to
/// embed: `author: text` for messages, the content for memory records.
pub(super) fn backlog(
    conn: &Connection,
    channel: Option<ChannelId>,
    limit: usize,
) -> Result<Vec<(ItemKey, ChannelId, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT q.key, q.channel_id, \
         CASE WHEN q.key % 2 = 0 THEN \
             (SELECT m.author_name || ': ' || m.content FROM messages m WHERE m.id = q.key / 2) \
         ELSE (SELECT i.content FROM memory_items i WHERE i.id = q.key / 2) END \
         FROM embed_queue q WHERE ?1 IS NULL OR q.channel_id = ?1 ORDER BY q.key LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![channel, limit as i64], |r| {
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
            let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
            put.execute(params![model, key.0, channel, bytes])?;
        }
        done.execute([key.0])?;
    }
    Ok(())
}

/// Every stored vector of a channel for `model`.
pub(super) fn vectors(
    conn: &Connection,
    model: &str,
    channel: ChannelId,
) -> Result<Vec<(ItemKey, Vec<f32>)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT key, vector FROM embeddings WHERE model = ?1 AND channel_id = ?2 ORDER BY key",
    )?;
    let rows = stmt
        .query_map(params![model, channel], |r| {
            let bytes: Vec<u8> = r.get(1)?;
            let vector = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Ok((ItemKey(r.get(0)?), vector))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::fts5_expression;

    #[test]
    fn terms_are_quoted_and_joined_by_or() {
        let terms: Vec<String> = ["caroline", "near", "agency"].map(String::from).to_vec();
        assert_eq!(
            fts5_expression(&terms).as_deref(),
            Some("\"caroline\" OR \"near\" OR \"agency\"")
        );
        assert_eq!(
            fts5_expression(&["a\"b".to_string()]).as_deref(),
            Some("\"a\"\"b\"")
        );
        assert_eq!(fts5_expression(&[]), None);
    }
}
