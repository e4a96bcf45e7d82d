//! Migration 010's second step: moves the entries of the per-channel word
//! indexes into the shared `recall_words` table and drops the old tables.
//!
//! The old tables were contentless, so their text cannot be read back; each
//! entry is rebuilt from what it indexed (a message's content and the
//! thread's previous finished message, or a memory record's content), the
//! same way it was indexed when written. Only the keys the old tables held
//! are moved, so what search finds is unchanged. The SQL is written out here
//! rather than borrowed from the live recall code, so this step stays what
//! it was when later migrations change that code.

use rusqlite::{Connection, OptionalExtension, params};

/// The low bits of a `recall_words` rowid that hold the item's key; the
/// channel is above them (range 0: records shared with the workspace).
const KEY_BITS: u32 = 40;

/// Moves every old per-channel (and workspace) word-index entry into
/// `recall_words`, then drops the old tables.
pub(super) fn merge_channel_tables(conn: &Connection) -> rusqlite::Result<()> {
    // The virtual tables only: their shadow tables (`recall_c1_data`, …) go
    // with them when they are dropped.
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'table' \
             AND (name GLOB 'recall_c[0-9]*' OR name = 'recall_workspace') \
             AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;

    let mut message = conn.prepare("SELECT thread_id, content FROM messages WHERE id = ?1")?;
    let mut previous = conn.prepare(
        "SELECT content FROM messages WHERE thread_id = ?1 AND id < ?2 \
         AND status = 'complete' AND author_kind != 'system' ORDER BY id DESC LIMIT 1",
    )?;
    let mut memory = conn.prepare("SELECT content FROM memory_items WHERE id = ?1")?;
    let mut insert =
        conn.prepare("INSERT INTO recall_words (rowid, body, prev) VALUES (?1, ?2, ?3)")?;
    for name in &names {
        let range = match name.strip_prefix("recall_c") {
            Some(id) => match id.parse::<i64>() {
                Ok(channel) => channel,
                Err(_) => continue,
            },
            None => 0,
        };
        let keys: Vec<i64> = conn
            .prepare(&format!("SELECT rowid FROM \"{name}\" ORDER BY rowid"))?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for key in keys {
            let id = key / 2;
            // An entry whose message or record is gone found nothing before
            // either (recall drops keys it cannot load): it is not moved.
            let entry = if key % 2 == 0 {
                let found = message
                    .query_row([id], |r| {
                        Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, String>(1)?))
                    })
                    .optional()?;
                match found {
                    Some((thread, body)) => {
                        let prev = match thread {
                            Some(t) => previous
                                .query_row(params![t, id], |r| r.get::<_, String>(0))
                                .optional()?
                                .unwrap_or_default(),
                            None => String::new(),
                        };
                        Some((body, prev))
                    }
                    None => None,
                }
            } else {
                memory
                    .query_row([id], |r| r.get::<_, String>(0))
                    .optional()?
                    .map(|body| (body, String::new()))
            };
            if let Some((body, prev)) = entry {
                insert.execute(params![(range << KEY_BITS) | key, body, prev])?;
            }
        }
    }

    for name in &names {
        conn.execute_batch(&format!("DROP TABLE \"{name}\""))?;
    }
    Ok(())
}
