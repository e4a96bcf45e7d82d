//! Writing a checked history into a channel, in one transaction.

use std::collections::HashMap;

use super::super::channels::record::record_journal;
use super::super::codec::now;
use super::super::events::append;
use super::super::failed;
use super::recall::enqueue;
use super::records::insert_row;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::memory::import::{ImportPlan, ImportReport};
use crate::memory::recall::ItemKey;
use crate::model::{
    Actor, AuthorType, ChannelId, MemoryScope, MemorySource, MessageId, ThreadId, UserId,
};
use crate::store::postgres::prepared::Db;
use crate::store::types::NewMemory;

/// See [`crate::store::MemoryStore::import_history`].
pub(crate) async fn import(
    tx: &impl Db,
    channel: ChannelId,
    plan: ImportPlan,
    actor: &Actor,
) -> Result<ImportReport> {
    let channel_name: String = tx
        .query_opt("SELECT name FROM channels WHERE id = $1", &[&channel.get()])
        .await
        .map_err(failed("reading a channel"))?
        .ok_or_else(|| Error::not_found("channel", channel))?
        .get(0);
    // Whom the history's authors may be: see `rules::importer`.
    let importer = crate::store::rules::importer(actor).map(UserId::get);
    let users: HashMap<String, i64> = tx
        .query(
            "SELECT name, id FROM users WHERE $1::BIGINT IS NULL OR id = $1 OR EXISTS \
             (SELECT 1 FROM users a WHERE a.id = $1 AND a.role IN ('captain', 'admin'))",
            &[&importer],
        )
        .await
        .map_err(failed("reading the users"))?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let started = now().as_millisecond();

    // Threads, opened when their file says (or at their first message).
    let mut first_at: HashMap<&str, i64> = HashMap::new();
    let mut last_at: HashMap<&str, i64> = HashMap::new();
    for m in &plan.messages {
        if let Some(at) = m.at.map(|t| t.as_millisecond()) {
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
    for t in &plan.threads {
        let opened = t
            .opened_at
            .map(|t| t.as_millisecond())
            .or_else(|| first_at.get(t.id.as_str()).copied())
            .unwrap_or(started);
        let updated = last_at
            .get(t.id.as_str())
            .copied()
            .unwrap_or(opened)
            .max(opened);
        let id: i64 = tx
            .query_one(
                "INSERT INTO threads (channel_id, title, status, opened_at, updated_at, \
                 external_id) VALUES ($1, $2, 'resolved', $3, $4, $5) RETURNING id",
                &[&channel.get(), &t.title, &opened, &updated, &t.id],
            )
            .await
            .map_err(|e| match failed("importing a thread")(e) {
                Error::Conflict(_) => Error::Conflict(format!(
                    "thread {:?} was already imported into #{channel_name}",
                    t.id
                )),
                other => other,
            })?
            .get(0);
        threads.insert(&t.id, ThreadId(id));
    }

    // Messages, in file order; the first of each thread becomes its root.
    let mut message_ids: HashMap<&str, MessageId> = HashMap::new();
    for m in &plan.messages {
        let thread = threads
            .get(m.thread.as_str())
            .copied()
            .ok_or_else(|| Error::Internal(format!("thread {} vanished", m.thread)))?;
        let user = users.get(&m.author).copied();
        let kind = if user.is_some() { "human" } else { "guest" };
        let at =
            m.at.map(|t| t.as_millisecond())
                .or_else(|| first_at.get(m.thread.as_str()).copied())
                .unwrap_or(started);
        let id = MessageId(
            tx.query_one(
                "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, \
                 author_name, content, status, external_id, created, updated) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'complete', $7, $8, $8) RETURNING id",
                &[
                    &channel.get(),
                    &thread.get(),
                    &kind,
                    &user,
                    &m.author,
                    &m.text,
                    &m.external_id,
                    &at,
                ],
            )
            .await
            .map_err(failed("importing a message"))?
            .get(0),
        );
        tx.execute(
            "UPDATE threads SET root_message_id = $1 WHERE id = $2 AND root_message_id IS NULL",
            &[&id.get(), &thread.get()],
        )
        .await
        .map_err(failed("setting an imported thread's first message"))?;
        if !m.text.trim().is_empty() {
            enqueue(tx, channel, ItemKey::message(id)).await?;
        }
        message_ids.insert(&m.external_id, id);
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
        insert_row(
            tx,
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
        )
        .await?;
    }

    let report = ImportReport {
        threads: plan.threads.len(),
        messages: plan.messages.len(),
        memories: plan.memories.len(),
    };
    record_journal(
        tx,
        Some(channel),
        Some(&channel_name),
        actor,
        "history.imported",
        &format!(
            "imported {} threads, {} messages and {} memory records",
            report.threads, report.messages, report.memories
        ),
    )
    .await?;
    append(
        tx,
        Some(channel),
        EventBody::HistoryImported {
            channel_id: channel,
            report,
        },
    )
    .await?;
    Ok(report)
}
