//! Moving the word tables of schema 11 (`recall_c<id>` per channel, and
//! `recall_workspace`) into the shared index, in place, as part of
//! migration 12.
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
