//! Messages as rows.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::codec::{ms, now, parsed, ts};
use crate::error::{Error, Result};
use crate::model::{
    AgentKind, Author, ChannelId, Handle, Message, MessageId, MessageStatus, ModelChoice, ThreadId,
};

/// The columns [`from_row`] reads, in order.
pub(super) const COLUMNS: &str = "m.id, m.channel_id, m.thread_id, m.author_kind, \
    m.author_user_id, m.author_agent_id, m.author_name, m.content, m.status, m.provider, \
    m.model, m.external_id, m.created";

/// A message to insert.
/// SQL for a new message's `seq`, its place in thread `?2`: one past the
/// thread's newest message; NULL outside a thread, and after a message
/// without one (the thread tail then counts instead).
pub(super) const NEXT_SEQ: &str = "CASE WHEN ?2 IS NULL THEN NULL ELSE nullif(coalesce(\
     (SELECT coalesce(p.seq + 1, -1) FROM messages p WHERE p.thread_id = ?2 \
     ORDER BY p.id DESC LIMIT 1), 1), -1) END";

pub(super) struct NewMessage<'a> {
    pub channel_id: ChannelId,
    pub thread_id: Option<ThreadId>,
    pub author: &'a Author,
    pub content: &'a str,
    pub status: MessageStatus,
    pub served_by: Option<&'a ModelChoice>,
    pub external_id: Option<&'a str>,
}

/// Inserts a message and returns it as stored.
pub(super) fn insert(conn: &Connection, new: NewMessage<'_>) -> Result<Message> {
    let created = now();
    let (kind, user_id, agent_id, name) = match new.author {
        Author::Human { user_id, name } => ("human", Some(user_id.0), None, name.clone()),
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
            Some(agent_id.0),
            handle.as_str().to_string(),
        ),
        Author::System => ("system", None, None, "helm".to_string()),
        Author::Guest { name } => ("guest", None, None, name.clone()),
    };
    conn.prepare_cached(&format!(
        "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, \
             author_agent_id, author_name, content, status, provider, model, external_id, \
             created, updated, seq) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, {NEXT_SEQ})"
    ))?
    .execute(params![
        new.channel_id,
        new.thread_id,
        kind,
        user_id,
        agent_id,
        name,
        new.content,
        new.status.as_str(),
        new.served_by.map(|m| m.provider.as_str()),
        new.served_by.and_then(|m| m.model.as_deref()),
        new.external_id,
        ms(created),
    ])?;
    Ok(Message {
        id: MessageId(conn.last_insert_rowid()),
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

/// Reads a message by id.
pub(super) fn get(conn: &Connection, id: MessageId) -> Result<Message> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM messages m WHERE m.id = ?1"))?
        .query_row([id], |r| from_row(r, 0))
        .optional()?
        .ok_or_else(|| Error::not_found("message", id))
}

/// Maps a row selected with [`COLUMNS`] starting at `at`.
pub(super) fn from_row(row: &Row<'_>, at: usize) -> rusqlite::Result<Message> {
    let kind = row.get_ref(at + 3)?.as_str()?;
    let name: String = row.get(at + 6)?;
    let author = match kind {
        "human" => Author::Human {
            user_id: row.get(at + 4)?,
            name,
        },
        "agent" | "skipper" => Author::Agent {
            agent_id: row.get(at + 5)?,
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
    let provider: Option<String> = row.get(at + 9)?;
    Ok(Message {
        id: row.get(at)?,
        channel_id: row.get(at + 1)?,
        thread_id: row.get(at + 2)?,
        author,
        content: row.get(at + 7)?,
        status: parsed(row, at + 8)?,
        served_by: provider.map(|p| ModelChoice {
            provider: p,
            model: row.get(at + 10).ok().flatten(),
        }),
        external_id: row.get(at + 11)?,
        created: ts(row, at + 12)?,
    })
}
