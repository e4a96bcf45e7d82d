//! Re-indexing the word index in place: migration 12 moves the word tables
//! of schema 11 (`recall_c<id>` per channel, and `recall_workspace`) into
//! the shared index, and migration 23 re-indexes that index with the
//! Snowball English stemmer (`english`) in place of porter.
//!
//! The old tables are contentless: their text cannot be read back, but
//! their rowids can, and a rowid names its message or record. So exactly
//! what was indexed is indexed again, from the rows it came from; an entry
//! whose message or record is gone is dropped (recall skipped it anyway).

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension};

use super::previous_message;
use super::words::insert;
use crate::error::Result;
use crate::memory::recall::ItemKey;
use crate::model::{ChannelId, ThreadId};

/// Re-indexes every old table's entries into `recall`, then drops the old
/// tables. Needs `helm_row` on `conn` (`words::prepare`).
pub(in crate::store::sqlite) fn move_channel_tables(conn: &Connection) -> Result<()> {
    super::words::prepare(conn)?;
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%' \
             AND (name GLOB 'recall_c[0-9]*' OR name = 'recall_workspace') ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let shared: HashSet<i64> = if tables.iter().any(|t| t == "recall_workspace") {
        keys(conn, "recall_workspace")?.into_iter().collect()
    } else {
        HashSet::new()
    };
    for table in &tables {
        let Some(channel) = table
            .strip_prefix("recall_c")
            .and_then(|id| id.parse::<i64>().ok())
        else {
            continue;
        };
        for key in keys(conn, table)? {
            let key = ItemKey(key);
            if let Some((body, prev)) = text_of(conn, key)? {
                let is_shared = shared.contains(&key.0);
                insert(conn, ChannelId(channel), key, &body, &prev, is_shared)?;
            }
        }
    }
    for table in &tables {
        conn.execute_batch(&format!("DROP TABLE {table}"))?;
    }
    Ok(())
}

/// Re-indexes every entry of the porter-stemmed index (renamed
/// `recall_porter` by migration 23's SQL) into the new `recall`, each under
/// the scope tokens it had, counting the scopes' figures afresh, then drops
/// the old index.
///
/// Needs `helm_english` on `conn` (`words::prepare`, as `schema` does first).
pub(in crate::store::sqlite) fn restem(conn: &Connection) -> Result<()> {
    let scopes: Vec<String> = conn
        .prepare("SELECT scope FROM recall_stats ORDER BY scope")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let shared: HashSet<i64> = old_scope(conn, "w")?.into_iter().collect();
    // `insert` counts each scope's rows and tokens again as it indexes
    // them, so an entry whose message or record is gone drops out of them.
    conn.execute_batch("DELETE FROM recall_stats")?;
    for scope in &scopes {
        let Some(channel) = scope
            .strip_prefix('c')
            .and_then(|id| id.parse::<i64>().ok())
        else {
            continue;
        };
        for key in old_scope(conn, scope)? {
            let key = ItemKey(key);
            if let Some((body, prev)) = text_of(conn, key)? {
                insert(
                    conn,
                    ChannelId(channel),
                    key,
                    &body,
                    &prev,
                    shared.contains(&key.0),
                )?;
            }
        }
    }
    conn.execute_batch("DROP TABLE recall_porter")?;
    Ok(())
}

/// The rowids the porter-stemmed index holds under a scope token.
fn old_scope(conn: &Connection, scope: &str) -> Result<Vec<i64>> {
    Ok(conn
        .prepare("SELECT rowid FROM recall_porter WHERE recall_porter MATCH ?1 ORDER BY rowid")?
        .query_map([format!("chan : \"{scope}\"")], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

fn keys(conn: &Connection, table: &str) -> Result<Vec<i64>> {
    Ok(conn
        .prepare(&format!("SELECT rowid FROM {table} ORDER BY rowid"))?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// What an entry was indexed with: a message's text and its thread's
/// previous message, or a record's text.
fn text_of(conn: &Connection, key: ItemKey) -> Result<Option<(String, String)>> {
    if let Some(id) = key.message_id() {
        let found: Option<(String, Option<ThreadId>)> = conn
            .prepare_cached("SELECT content, thread_id FROM messages WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        return match found {
            Some((body, Some(thread))) => Ok(Some((body, previous_message(conn, thread, id)?))),
            _ => Ok(None),
        };
    }
    let Some(id) = key.memory_id() else {
        return Ok(None);
    };
    Ok(conn
        .prepare_cached("SELECT content FROM memory_items WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?
        .map(|body| (body, String::new())))
}
