//! Threads and messages as rows: reading them, inserting a message or a
//! note from Helm, and touching a thread. Every area that writes a message
//! or a thread inside its own transaction uses these.

use tokio_postgres::Row;

use super::super::codec::{now, parsed, ts};
use super::super::{events, failed};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    AgentId, AgentKind, Author, ChannelId, Handle, Message, MessageId, MessageStatus, ModelChoice,
    Thread, ThreadId, UserId,
};
use crate::store::postgres::prepared::Db;

/// The thread columns, prefixed with `t.`, in [`thread_at`] order.
pub(crate) const THREAD: &str = "t.id, t.channel_id, t.root_message_id, t.title, t.status, \
    t.summary, t.opened_by, t.opened_at, t.updated_at, t.external_id";

/// A thread from the [`THREAD`] columns.
pub(crate) fn thread_at(r: &Row) -> Result<Thread> {
    Ok(Thread {
        id: ThreadId(r.get(0)),
        channel_id: ChannelId(r.get(1)),
        root_message_id: r.get::<_, Option<i64>>(2).map(MessageId),
        title: r.get(3),
        status: parsed(r, 4)?,
        summary: r.get(5),
        opened_by: r.get::<_, Option<i64>>(6).map(UserId),
        opened_at: ts(r, 7)?,
        updated_at: ts(r, 8)?,
        external_id: r.get(9),
    })
}

/// The message columns, prefixed with `m.`, in [`message_at`] order.
pub(crate) const MESSAGE: &str = "m.id, m.channel_id, m.thread_id, m.author_kind, \
    m.author_user_id, m.author_agent_id, m.author_name, m.content, m.status, m.provider, \
    m.model, m.external_id, m.created";

/// How many columns [`MESSAGE`] has.
pub(crate) const MESSAGE_WIDTH: usize = 13;

/// A message from the [`MESSAGE`] columns starting at `at`.
pub(crate) fn message_at(r: &Row, at: usize) -> Result<Message> {
    let kind: &str = r.get(at + 3);
    let name: String = r.get(at + 6);
    let author = match kind {
        "human" => Author::Human {
            user_id: UserId(r.get(at + 4)),
            name,
        },
        "agent" | "skipper" => Author::Agent {
            agent_id: AgentId(r.get(at + 5)),
            handle: Handle::from_stored(name),
            agent_kind: if kind == "skipper" {
                AgentKind::Skipper
            } else {
                AgentKind::Channel
            },
        },
        "guest" => Author::Guest { name },
        _ => Author::System,
    };
    let provider: Option<String> = r.get(at + 9);
    Ok(Message {
        id: MessageId(r.get(at)),
        channel_id: ChannelId(r.get(at + 1)),
        thread_id: r.get::<_, Option<i64>>(at + 2).map(ThreadId),
        author,
        content: r.get(at + 7),
        status: parsed(r, at + 8)?,
        served_by: provider.map(|provider| ModelChoice {
            provider,
            model: r.get(at + 10),
        }),
        external_id: r.get(at + 11),
        created: ts(r, at + 12)?,
    })
}

/// A thread.
pub(crate) async fn thread(c: &impl Db, id: ThreadId) -> Result<Thread> {
    let row = c
        .query_opt(
            &format!("SELECT {THREAD} FROM threads t WHERE t.id = $1"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a thread"))?
        .ok_or_else(|| Error::not_found("thread", id))?;
    thread_at(&row)
}

/// A thread, locked until the caller's transaction ends: writes to one
/// thread (posts, status changes) take their turns on its row.
pub(crate) async fn lock_thread(c: &impl Db, id: ThreadId) -> Result<Thread> {
    let row = c
        .query_opt(
            &format!("SELECT {THREAD} FROM threads t WHERE t.id = $1 FOR UPDATE"),
            &[&id.get()],
        )
        .await
        .map_err(failed("locking a thread"))?
        .ok_or_else(|| Error::not_found("thread", id))?;
    thread_at(&row)
}

/// A message.
pub(crate) async fn message(c: &impl Db, id: MessageId) -> Result<Message> {
    let row = c
        .query_opt(
            &format!("SELECT {MESSAGE} FROM messages m WHERE m.id = $1"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a message"))?
        .ok_or_else(|| Error::not_found("message", id))?;
    message_at(&row, 0)
}

/// A message to insert.
pub(crate) struct NewMessage<'a> {
    pub channel_id: ChannelId,
    pub thread_id: Option<ThreadId>,
    pub author: &'a Author,
    pub content: &'a str,
    pub status: MessageStatus,
    pub served_by: Option<&'a ModelChoice>,
    pub external_id: Option<&'a str>,
}

/// An author as the message columns store it: kind, user, agent, name.
pub(crate) fn author_columns(author: &Author) -> (&'static str, Option<i64>, Option<i64>, String) {
    match author {
        Author::Human { user_id, name } => ("human", Some(user_id.get()), None, name.clone()),
        Author::Agent {
            agent_id,
            handle,
            agent_kind,
        } => (
            match agent_kind {
                AgentKind::Skipper => "skipper",
                AgentKind::Channel => "agent",
            },
            None,
            Some(agent_id.get()),
            handle.as_str().to_string(),
        ),
        Author::System => ("system", None, None, "helm".to_string()),
        Author::Guest { name } => ("guest", None, None, name.clone()),
    }
}

/// Inserts a message and returns it as stored. Its place in its thread
/// (`seq`) comes from the schema's trigger.
pub(crate) async fn insert_message(c: &impl Db, new: NewMessage<'_>) -> Result<Message> {
    let created = now();
    let (kind, user_id, agent_id, name) = author_columns(new.author);
    let row = c
        .query_one(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, \
             author_agent_id, author_name, content, status, provider, model, external_id, \
             created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id",
            &[
                &new.channel_id.get(),
                &new.thread_id.map(ThreadId::get),
                &kind,
                &user_id,
                &agent_id,
                &name,
                &new.content,
                &new.status.as_str(),
                &new.served_by.map(|m| m.provider.as_str()),
                &new.served_by.and_then(|m| m.model.as_deref()),
                &new.external_id,
                &created.as_millisecond(),
            ],
        )
        .await
        .map_err(failed("storing a message"))?;
    Ok(Message {
        id: MessageId(row.get(0)),
        channel_id: new.channel_id,
        thread_id: new.thread_id,
        author: new.author.clone(),
        content: new.content.to_string(),
        status: new.status,
        served_by: new.served_by.cloned(),
        external_id: new.external_id.map(str::to_string),
        created,
    })
}

/// Posts a note from Helm in a thread (or the channel), with its event.
pub(crate) async fn note(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
    text: &str,
) -> Result<Message> {
    let message = insert_message(
        c,
        NewMessage {
            channel_id: channel,
            thread_id: thread,
            author: &Author::System,
            content: text,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )
    .await?;
    events::append(
        c,
        Some(channel),
        EventBody::MessageCreated {
            message: message.clone(),
        },
    )
    .await?;
    Ok(message)
}

/// Sets a thread's status (if `status`; only while it is `only_if`, if
/// given) and its time of change, and returns it (`None`: not changed).
pub(crate) async fn touch_thread(
    c: &impl Db,
    id: ThreadId,
    status: Option<&str>,
    only_if: Option<&str>,
) -> Result<Option<Thread>> {
    let row = c
        .query_opt(
            &format!(
                "UPDATE threads t SET status = coalesce($2, t.status), updated_at = $3
                 WHERE t.id = $1 AND ($4::text IS NULL OR t.status = $4)
                 RETURNING {THREAD}"
            ),
            &[&id.get(), &status, &now().as_millisecond(), &only_if],
        )
        .await
        .map_err(failed("updating a thread"))?;
    row.map(|r| thread_at(&r)).transpose()
}
