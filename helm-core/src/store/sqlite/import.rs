//! Writing a checked history into a channel, in one transaction.

use std::collections::HashMap;

use rusqlite::params;

use super::Tx;
use super::channels::record_journal;
use super::codec::{ms, now};
use super::memory::insert_row;
use super::recall::index;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::memory::import::{ImportPlan, ImportReport};
use crate::memory::recall::ItemKey;
use crate::model::{
    Actor, AuthorType, ChannelId, MemoryScope, MemorySource, MessageId, ThreadId, UserId,
};
use crate::store::types::NewMemory;

pub(super) fn import(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    plan: ImportPlan,
    actor: &Actor,
) -> Result<ImportReport> {
    let conn = tx.conn();
    let channel_name: String = conn
        .prepare_cached("SELECT name FROM channels WHERE id = ?1")?
        .query_row([channel], |r| r.get(0))
        .map_err(|_| Error::not_found("channel", channel))?;
    // Whom the history's authors may be: see `rules::importer`.
    let importer = crate::store::rules::importer(actor);
    let users: HashMap<String, UserId> = {
        let mut stmt = conn.prepare_cached(
            "SELECT name, id FROM users WHERE ?1 IS NULL OR id = ?1 OR EXISTS \
             (SELECT 1 FROM users a WHERE a.id = ?1 AND a.role IN ('captain', 'admin'))",
        )?;
        stmt.query_map([importer], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let started = now();

    // Threads, opened when their file says (or at their first message).
    let mut first_at: HashMap<&str, i64> = HashMap::new();
    let mut last_at: HashMap<&str, i64> = HashMap::new();
    for m in &plan.messages {
        if let Some(at) = m.at.map(ms) {
            first_at
                .entry(&m.thread)
                .and_modify(|v| *v = (*v).min(at))
                .or_insert(at);
            last_at
                .entry(&m.thread)
                .and_modify(|v| *v = (*v).max(at))
                .or_insert(at);
        }
    }
    let mut threads: HashMap<&str, ThreadId> = HashMap::new();
    {
        let mut insert = conn.prepare_cached(
            "INSERT INTO threads (channel_id, title, status, opened_at, updated_at, external_id) \
             VALUES (?1, ?2, 'resolved', ?3, ?4, ?5)",
        )?;
        for t in &plan.threads {
            let opened = t
                .opened_at
                .map(ms)
                .or_else(|| first_at.get(t.id.as_str()).copied())
                .unwrap_or_else(|| ms(started));
            let updated = last_at
                .get(t.id.as_str())
                .copied()
                .unwrap_or(opened)
                .max(opened);
            insert
                .execute(params![channel, t.title, opened, updated, t.id])
                .map_err(|e| match Error::from(e) {
                    Error::Conflict(_) => Error::Conflict(format!(
                        "thread {:?} was already imported into #{channel_name}",
                        t.id
                    )),
                    other => other,
                })?;
            threads.insert(&t.id, ThreadId(conn.last_insert_rowid()));
        }
    }

    // Messages, in file order; the first of each thread becomes its root.
    let mut message_ids: HashMap<&str, MessageId> = HashMap::new();
    {
        let mut insert = conn.prepare_cached(&format!(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, \
             author_name, content, status, external_id, created, updated, seq) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'complete', ?7, ?8, ?8, {})",
            super::messages::NEXT_SEQ
        ))?;
        let mut root = conn.prepare_cached(
            "UPDATE threads SET root_message_id = ?1 WHERE id = ?2 AND root_message_id IS NULL",
        )?;
        // The word index pairs each message with the one before it in its thread.
        let mut previous: HashMap<ThreadId, &str> = HashMap::new();
        for m in &plan.messages {
            let thread = threads
                .get(m.thread.as_str())
                .copied()
                .ok_or_else(|| Error::Internal(format!("thread {} vanished", m.thread)))?;
            let user = users.get(&m.author).copied();
            let kind = if user.is_some() { "human" } else { "guest" };
            let at =
                m.at.map(ms)
                    .or_else(|| first_at.get(m.thread.as_str()).copied())
                    .unwrap_or_else(|| ms(started));
            insert.execute(params![
                channel,
                thread,
                kind,
                user,
                m.author,
                m.text,
                m.external_id,
                at
            ])?;
            let id = MessageId(conn.last_insert_rowid());
            root.execute(params![id, thread])?;
            let prev = previous.insert(thread, m.text.as_str()).unwrap_or("");
            index(conn, channel, ItemKey::message(id), &m.text, prev)?;
            message_ids.insert(&m.external_id, id);
        }
    }

    for memory in &plan.memories {
        let source_message_id = memory
            .source_external_id
            .as_deref()
            .and_then(|x| message_ids.get(x).copied());
        let thread_id = memory
            .thread
            .as_deref()
            .and_then(|t| threads.get(t).copied());
        let id = insert_row(
            conn,
            &NewMemory {
                channel_id: channel,
                thread_id,
                kind: memory.kind,
                content: memory.content.clone(),
                source: if source_message_id.is_some() {
                    MemorySource::Message
                } else {
                    MemorySource::Import
                },
                source_message_id,
                author_type: AuthorType::System,
                author_name: Some("import".into()),
                scope: MemoryScope::Channel,
                confidence: memory.confidence,
                pinned: false,
            },
        )?;
        index(conn, channel, ItemKey::memory(id), &memory.content, "")?;
    }

    let report = ImportReport {
        threads: plan.threads.len(),
        messages: plan.messages.len(),
        memories: plan.memories.len(),
    };
    record_journal(
        conn,
        Some(channel),
        Some(&channel_name),
        actor,
        "history.imported",
        &format!(
            "imported {} threads, {} messages and {} memory records",
            report.threads, report.messages, report.memories
        ),
    )?;
    tx.emit(
        Some(channel),
        EventBody::HistoryImported {
            channel_id: channel,
            report,
        },
    )?;
    Ok(report)
}
