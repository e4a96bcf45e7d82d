//! What the channel's memory brings to a turn: records and earlier threads
//! that answer the message that started it, not this thread (its transcript
//! is there already).

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::Runtime;
use super::context::MEMORY_HITS;
use crate::helm::Audience;
use crate::memory::recall::{RecallHit, RecallQuery};
use crate::model::{MemoryKind, MemoryStatus, ThreadId, Turn};
use crate::store::MemoryFilter;

/// Recalled items for `turn`'s context, at most [`MEMORY_HITS`]. A
/// summarised thread speaks through its records, not its transcript: its
/// messages are replaced by its session summary, once, where the first of
/// them ranked (or where the summary itself did). Recall mostly ranks
/// messages and records (a summary lifts its thread's items, and is a hit
/// only where the words found it alone), so before this a summarised
/// thread's messages were dropped and nothing stood in for them: what it
/// decided never reached a later thread unless the agent had recorded it.
/// Recall trouble never stops a turn.
pub(super) async fn for_turn(
    rt: &Runtime,
    turn: &Turn,
    audience: &Audience,
    question: &str,
) -> Vec<RecallHit> {
    if question.trim().is_empty() {
        return Vec::new();
    }
    let mut query = RecallQuery::new(question);
    query.limit = MEMORY_HITS + 6;
    let hits = match rt.recall.recall(audience, turn.channel_id, &query).await {
        Ok(hits) => hits,
        Err(e) => {
            tracing::warn!(turn = %turn.id, error = %e, "recall for the turn's context failed");
            return Vec::new();
        }
    };
    // Hits cluster in a few threads: each thread's summary is read once.
    let mut summaries: HashMap<ThreadId, Option<RecallHit>> = HashMap::new();
    let mut kept: Vec<RecallHit> = Vec::new();
    for hit in hits {
        if kept.len() >= MEMORY_HITS {
            break;
        }
        let thread = match (&hit.thread, hit.kind.as_str()) {
            (Some(t), "message" | "summary") => t.id,
            _ => {
                kept.push(hit);
                continue;
            }
        };
        if thread == turn.thread_id {
            continue;
        }
        if let Entry::Vacant(slot) = summaries.entry(thread) {
            let summary = summary_of(rt, &hit, thread).await;
            if let Some(summary) = &summary {
                kept.push(summary.clone());
            }
            slot.insert(summary);
            if hit.kind == "summary" {
                continue;
            }
        }
        match summaries.get(&thread) {
            // Its summary is already there.
            Some(Some(_)) => {}
            // A thread not summarised yet speaks through its messages.
            _ if hit.kind == "message" => kept.push(hit),
            _ => {}
        }
    }
    kept
}

/// The newest current summary of `thread` as a hit beside `hit`, one of
/// the thread's own; `None` when it has none (or it cannot be read).
async fn summary_of(rt: &Runtime, hit: &RecallHit, thread: ThreadId) -> Option<RecallHit> {
    let filter = MemoryFilter {
        kind: Some(MemoryKind::Summary),
        thread: Some(thread),
        include_inactive: false,
        limit: 1,
        before: None,
    };
    let record = match rt.store.list_memory(hit.channel_id, filter).await {
        Ok(records) => records.into_iter().next()?,
        Err(e) => {
            tracing::warn!(thread = %thread, error = %e, "reading a thread's summary for a turn failed");
            return None;
        }
    };
    Some(RecallHit {
        kind: MemoryKind::Summary.as_str().to_string(),
        id: record.id.get(),
        score: hit.score,
        content: record.content,
        channel_id: record.channel_id,
        thread: hit.thread.clone(),
        author: record.author_name,
        created: record.created,
        status: Some(MemoryStatus::Current),
        source_message_ids: Vec::new(),
        source_external_ids: Vec::new(),
    })
}
