//! Session summaries: the structured row, the thread's rolling summary, and
//! the `summary` memory record that later threads recall.

use super::super::codec::now;
use super::super::events::append;
use super::super::failed;
use super::super::memory::records;
use super::reading::limit;
use super::rows::{lock_thread, thread};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{AuthorType, MemoryId, MemoryKind, MemoryScope, MemorySource, ThreadId};
use crate::store::postgres::prepared::Db;
use crate::store::types::{NewMemory, NewThreadSummary};

/// See [`crate::store::ThreadStore::put_thread_summary`]. Holds the
/// thread's row lock, so two nodes summarising one thread supersede its
/// records one after the other.
pub(super) async fn put(tx: &impl Db, new: NewThreadSummary) -> Result<MemoryId> {
    let thread_row = lock_thread(tx, new.thread_id).await?;
    let s = &new.summary;
    let json_list =
        |v: &Vec<String>| serde_json::to_string(v).map_err(|e| Error::Internal(e.to_string()));
    tx.execute(
        "INSERT INTO thread_summaries (thread_id, goal, work_done, result, open_items, decisions, \
         trigger, provider, model, created, last_message_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        &[
            &new.thread_id.get(),
            &s.goal,
            &s.work_done,
            &s.result,
            &json_list(&s.open_items)?,
            &json_list(&s.decisions)?,
            &new.trigger.as_str(),
            &new.provider,
            &new.model,
            &now().as_millisecond(),
            &new.last_message_id.get(),
        ],
    )
    .await
    .map_err(failed("storing a session summary"))?;
    let text = s.render();
    let record = NewMemory {
        channel_id: thread_row.channel_id,
        thread_id: Some(new.thread_id),
        kind: MemoryKind::Summary,
        content: format!("Session \"{}\": {text}", thread_row.title),
        source: MemorySource::Thread,
        source_message_id: None,
        author_type: AuthorType::Agent,
        author_name: Some(new.author.clone()),
        scope: MemoryScope::Channel,
        confidence: None,
        pinned: false,
    };
    // A newer summary supersedes the thread's current one.
    let current = tx
        .query_opt(
            "SELECT id FROM memory_items WHERE thread_id = $1 AND kind = 'summary' \
             AND status = 'current' ORDER BY id DESC LIMIT 1",
            &[&new.thread_id.get()],
        )
        .await
        .map_err(failed("reading a thread's summary record"))?
        .map(|r| MemoryId(r.get(0)));
    let item = match current {
        Some(id) => records::supersede(tx, id, record).await?,
        None => records::insert(tx, record).await?,
    };
    tx.execute(
        "UPDATE threads SET summary = $2 WHERE id = $1",
        &[&new.thread_id.get(), &text],
    )
    .await
    .map_err(failed("setting a thread's summary"))?;
    let updated = thread(tx, new.thread_id).await?;
    append(
        tx,
        Some(updated.channel_id),
        EventBody::ThreadUpdated { thread: updated },
    )
    .await?;
    Ok(item.id)
}

/// Threads whose summary is due: resolved, or quiet since `idle_before`,
/// with an agent reply and messages newer than their last summary, and no
/// turn in progress; oldest first.
pub(super) async fn due(c: &impl Db, idle_before: i64, n: usize) -> Result<Vec<ThreadId>> {
    Ok(c
        .query(
            "SELECT t.id FROM threads t \
             WHERE (t.status = 'resolved' OR (t.updated_at < $1 AND t.status IN ('open', 'waiting'))) \
             AND EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.id \
                 AND m.author_kind IN ('agent', 'skipper') AND m.status = 'complete') \
             AND (SELECT max(m.id) FROM messages m WHERE m.thread_id = t.id) > \
                 coalesce((SELECT max(s.last_message_id) FROM thread_summaries s \
                     WHERE s.thread_id = t.id), 0) \
             AND NOT EXISTS (SELECT 1 FROM turns u WHERE u.thread_id = t.id \
                 AND u.state IN ('queued', 'running')) \
             ORDER BY t.updated_at LIMIT $2",
            &[&idle_before, &limit(n)],
        )
        .await
        .map_err(failed("finding threads due for a summary"))?
        .iter()
        .map(|r| ThreadId(r.get(0)))
        .collect())
}
