//! Session summaries: the structured row, the thread's rolling summary, and
//! the `summary` memory record that later threads recall.

use rusqlite::{Connection, OptionalExtension, params};

use super::Tx;
use super::codec::{ms, now};
use super::{memory, threads};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{AuthorType, MemoryId, MemoryKind, MemoryScope, MemorySource, ThreadId};
use crate::store::types::{NewMemory, NewThreadSummary};

pub(super) fn put(tx: &mut Tx<'_>, new: NewThreadSummary) -> Result<MemoryId> {
    let thread = threads::get(tx.conn(), new.thread_id)?;
    let s = &new.summary;
    let json_list =
        |v: &Vec<String>| serde_json::to_string(v).map_err(|e| Error::Internal(e.to_string()));
    tx.conn().execute(
        "INSERT INTO thread_summaries (thread_id, goal, work_done, result, open_items, decisions, \
         trigger, provider, model, created, last_message_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            new.thread_id,
            s.goal,
            s.work_done,
            s.result,
            json_list(&s.open_items)?,
            json_list(&s.decisions)?,
            new.trigger.as_str(),
            new.provider,
            new.model,
            ms(now()),
            new.last_message_id
        ],
    )?;
    let text = s.render();
    let record = NewMemory {
        channel_id: thread.channel_id,
        thread_id: Some(new.thread_id),
        kind: MemoryKind::Summary,
        content: format!("Session \"{}\": {text}", thread.title),
        source: MemorySource::Thread,
        source_message_id: None,
        author_type: AuthorType::Agent,
        author_name: Some(new.author.clone()),
        scope: MemoryScope::Channel,
        confidence: None,
        pinned: false,
    };
    // A newer summary supersedes the thread's current one.
    let current: Option<MemoryId> = tx
        .conn()
        .prepare_cached(
            "SELECT id FROM memory_items WHERE thread_id = ?1 AND kind = 'summary' \
             AND status = 'current' ORDER BY id DESC LIMIT 1",
        )?
        .query_row([new.thread_id], |r| r.get(0))
        .optional()?;
    let item = match current {
        Some(id) => memory::supersede(tx, id, record)?,
        None => memory::insert(tx, record)?,
    };
    tx.conn().execute(
        "UPDATE threads SET summary = ?2 WHERE id = ?1",
        params![new.thread_id, text],
    )?;
    let thread = threads::get(tx.conn(), new.thread_id)?;
    tx.emit(Some(thread.channel_id), EventBody::ThreadUpdated { thread })?;
    Ok(item.id)
}

/// Threads whose summary is due: resolved, or quiet since `idle_before`,
/// with an agent reply and messages newer than their last summary, and no
/// turn in progress.
pub(super) fn due(conn: &Connection, idle_before: i64, limit: usize) -> Result<Vec<ThreadId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id FROM threads t \
         WHERE (t.status = 'resolved' OR (t.updated_at < ?1 AND t.status IN ('open', 'waiting'))) \
         AND EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.id \
             AND m.author_kind IN ('agent', 'skipper') AND m.status = 'complete') \
         AND (SELECT max(m.id) FROM messages m WHERE m.thread_id = t.id) > \
             coalesce((SELECT max(s.last_message_id) FROM thread_summaries s WHERE s.thread_id = t.id), 0) \
         AND NOT EXISTS (SELECT 1 FROM turns u WHERE u.thread_id = t.id \
             AND u.state IN ('queued', 'running')) \
         ORDER BY t.updated_at LIMIT ?2",
    )?;
    let ids = stmt
        .query_map(params![idle_before, limit as i64], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<ThreadId>>>()?;
    Ok(ids)
}
