//! The rows of other areas that turns and Skipper's authority write or
//! read inside their own transactions: messages (replies, notes), threads,
//! channel records, the embedding queue, mentions and the journal.
//!
//! Written here, as the SQLite store's shared modules do it, while those
//! areas land on PostgreSQL in parallel (issue 17, stage 2); once they are
//! in, these give way to the areas' own functions.

use jiff::Timestamp;
use tokio_postgres::{GenericClient, Row};

use super::super::codec::{WORKSPACE, now, parsed, ts};
use super::super::{events, failed};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, Agent, AgentId, AgentKind, AgentProfile, Author, Channel, ChannelId, ChannelName,
    Handle, Message, MessageId, MessageStatus, ModelChoice, Thread, ThreadId, UserId,
};
use crate::store::types::ChannelRecord;

/// A message to insert.
pub(crate) struct NewMessage<'a> {
    pub channel_id: ChannelId,
    pub thread_id: Option<ThreadId>,
    pub author: &'a Author,
    pub content: &'a str,
    pub status: MessageStatus,
}

/// Inserts a message and returns it as stored.
pub(crate) async fn insert_message(c: &impl GenericClient, new: NewMessage<'_>) -> Result<Message> {
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
    let id: i64 = c
        .query_one(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id,
                 author_agent_id, author_name, content, status, created, updated)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id",
            &[
                &new.channel_id.get(),
                &new.thread_id.map(ThreadId::get),
                &kind,
                &user_id,
                &agent_id,
                &name,
                &new.content,
                &new.status.as_str(),
                &created.as_millisecond(),
            ],
        )
        .await
        .map_err(failed("storing a message"))?
        .get(0);
    Ok(Message {
        id: MessageId(id),
        channel_id: new.channel_id,
        thread_id: new.thread_id,
        author: new.author.clone(),
        content: new.content.to_string(),
        status: new.status,
        served_by: None,
        external_id: None,
        created,
    })
}

/// Posts a note from Helm in a thread (or the channel), with its event.
pub(crate) async fn note(
    c: &impl GenericClient,
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

const MESSAGE: &str = "m.id, m.channel_id, m.thread_id, m.author_kind, m.author_user_id, \
    m.author_agent_id, m.author_name, m.content, m.status, m.provider, m.model, m.external_id, \
    m.created";

fn message_at(row: &Row) -> Result<Message> {
    let kind: &str = row.get(3);
    let name: String = row.get(6);
    let author = match kind {
        "human" => Author::Human {
            user_id: UserId(row.get(4)),
            name,
        },
        "agent" | "skipper" => Author::Agent {
            agent_id: AgentId(row.get(5)),
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
    let provider: Option<String> = row.get(9);
    Ok(Message {
        id: MessageId(row.get(0)),
        channel_id: ChannelId(row.get(1)),
        thread_id: row.get::<_, Option<i64>>(2).map(ThreadId),
        author,
        content: row.get(7),
        status: parsed(row, 8)?,
        served_by: provider.map(|provider| ModelChoice {
            provider,
            model: row.get(10),
        }),
        external_id: row.get(11),
        created: ts(row, 12)?,
    })
}

/// A message by id.
pub(crate) async fn message(c: &impl GenericClient, id: MessageId) -> Result<Message> {
    let row = c
        .query_opt(
            &format!("SELECT {MESSAGE} FROM messages m WHERE m.id = $1"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a message"))?
        .ok_or_else(|| Error::not_found("message", id))?;
    message_at(&row)
}

const THREAD: &str = "t.id, t.channel_id, t.root_message_id, t.title, t.status, t.summary, \
    t.opened_by, t.opened_at, t.updated_at, t.external_id";

fn thread_at(row: &Row) -> Result<Thread> {
    Ok(Thread {
        id: ThreadId(row.get(0)),
        channel_id: ChannelId(row.get(1)),
        root_message_id: row.get::<_, Option<i64>>(2).map(MessageId),
        title: row.get(3),
        status: parsed(row, 4)?,
        summary: row.get(5),
        opened_by: row.get::<_, Option<i64>>(6).map(UserId),
        opened_at: ts(row, 7)?,
        updated_at: ts(row, 8)?,
        external_id: row.get(9),
    })
}

/// A thread by id.
pub(crate) async fn thread(c: &impl GenericClient, id: ThreadId) -> Result<Thread> {
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

/// Sets a thread's status (if `status`) and its time of change, and
/// returns it.
pub(crate) async fn touch_thread(
    c: &impl GenericClient,
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

/// A channel joined with its agent (Skipper for the home channel) and profile.
const RECORD_SELECT: &str = "SELECT c.id, c.name, c.purpose, c.kind, c.status, c.visibility, \
    c.created_by, c.created, \
    a.id, a.kind, a.name, a.display_name, a.status, a.created, \
    p.purpose, p.instructions, p.workspace_ref, p.memory_namespace, p.capability_policy \
    FROM channels c \
    LEFT JOIN agent_channels b ON b.channel_id = c.id \
    JOIN agents a ON a.id = CASE WHEN c.kind = 'home' \
        THEN (SELECT s.id FROM agents s WHERE s.workspace_id = c.workspace_id AND s.kind = 'skipper') \
        ELSE b.agent_id END \
    JOIN agent_profiles p ON p.agent_id = a.id";

fn record_at(row: &Row) -> Result<ChannelRecord> {
    let agent_id = AgentId(row.get(8));
    let policy: &str = row.get(18);
    Ok(ChannelRecord {
        channel: Channel {
            id: ChannelId(row.get(0)),
            name: ChannelName::from_stored(row.get(1)),
            purpose: row.get(2),
            kind: parsed(row, 3)?,
            status: parsed(row, 4)?,
            visibility: parsed(row, 5)?,
            created_by: UserId(row.get(6)),
            created: ts(row, 7)?,
        },
        agent: Agent {
            id: agent_id,
            kind: parsed(row, 9)?,
            handle: Handle::from_stored(row.get(10)),
            display_name: row.get(11),
            status: parsed(row, 12)?,
            created: ts(row, 13)?,
        },
        profile: AgentProfile {
            agent_id,
            purpose: row.get(14),
            instructions: row.get(15),
            workspace_ref: row.get(16),
            memory_namespace: row.get(17),
            capability_policy: serde_json::from_str(policy)
                .map_err(|e| Error::store("a stored capability policy", e))?,
        },
    })
}

/// A channel with its agent.
pub(crate) async fn channel(c: &impl GenericClient, id: ChannelId) -> Result<ChannelRecord> {
    let row = c
        .query_opt(&format!("{RECORD_SELECT} WHERE c.id = $1"), &[&id.get()])
        .await
        .map_err(failed("reading a channel"))?
        .ok_or_else(|| Error::not_found("channel", id))?;
    record_at(&row)
}

/// The home channel with Skipper.
pub(crate) async fn home(c: &impl GenericClient) -> Result<ChannelRecord> {
    let row = c
        .query_opt(
            &format!("{RECORD_SELECT} WHERE c.workspace_id = {WORKSPACE} AND c.kind = 'home'"),
            &[],
        )
        .await
        .map_err(failed("reading #main"))?
        .ok_or_else(|| Error::Internal("the workspace has no #main".into()))?;
    record_at(&row)
}

/// A user's name, for the audit log.
pub(crate) async fn user_name(
    c: &impl GenericClient,
    id: Option<UserId>,
) -> Result<Option<String>> {
    let Some(id) = id else { return Ok(None) };
    Ok(
        c.query_opt("SELECT name FROM users WHERE id = $1", &[&id.get()])
            .await
            .map_err(failed("reading a user's name"))?
            .map(|r| r.get(0)),
    )
}

/// Queues a final message of a thread for embedding (word search needs
/// nothing: the GIN index over `messages.content` follows the row).
pub(crate) async fn index_message(c: &impl GenericClient, message: &Message) -> Result<()> {
    if message.thread_id.is_none() || message.content.trim().is_empty() {
        return Ok(());
    }
    let key = crate::memory::recall::ItemKey::message(message.id);
    c.execute(
        "INSERT INTO embed_queue (key, channel_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&key.0, &message.channel_id.get()],
    )
    .await
    .map_err(failed("queueing a message for embedding"))?;
    Ok(())
}

/// Records who a finished message mentions and tells each of them: the
/// people named `@name` who may see its channel, other than its author.
pub(crate) async fn record_mentions(c: &impl GenericClient, message: &Message) -> Result<()> {
    if matches!(message.author, Author::System | Author::Guest { .. })
        || message.status != MessageStatus::Complete
    {
        return Ok(());
    }
    let names = crate::runtime::wake::person_mentions(&message.content);
    if names.is_empty() {
        return Ok(());
    }
    let author = match &message.author {
        Author::Human { user_id, .. } => Some(*user_id),
        _ => None,
    };
    let mut found = Vec::new();
    for name in &names {
        let row = c
            .query_opt(
                "SELECT u.id FROM users u, channels c WHERE c.id = $1 AND u.name = $2
                 AND (c.visibility = 'public' OR u.role IN ('captain', 'admin') OR EXISTS
                 (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = u.id))",
                &[&message.channel_id.get(), name],
            )
            .await
            .map_err(failed("reading who a message mentions"))?;
        if let Some(row) = row {
            let id = UserId(row.get(0));
            if Some(id) != author && !found.contains(&id) {
                found.push(id);
            }
        }
    }
    for user in found {
        let inserted = c
            .execute(
                "INSERT INTO mentions (message_id, user_id, channel_id) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING",
                &[&message.id.get(), &user.get(), &message.channel_id.get()],
            )
            .await
            .map_err(failed("recording a mention"))?;
        if inserted > 0 {
            events::append(
                c,
                Some(message.channel_id),
                EventBody::MentionCreated {
                    user_id: user,
                    message: message.clone(),
                },
            )
            .await?;
        }
    }
    Ok(())
}

/// Appends a lifecycle record to the journal.
pub(crate) async fn record_journal(
    c: &impl GenericClient,
    channel: Option<ChannelId>,
    channel_name: Option<&str>,
    actor: &Actor,
    action: &str,
    detail: &str,
) -> Result<()> {
    let actor = serde_json::to_string(actor)
        .map_err(|e| Error::Internal(format!("actor does not serialise: {e}")))?;
    c.execute(
        "INSERT INTO journal (channel_id, channel_name, actor, action, detail, created)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &channel.map(ChannelId::get),
            &channel_name,
            &actor,
            &action,
            &detail,
            &now().as_millisecond(),
        ],
    )
    .await
    .map_err(failed("writing the journal"))?;
    Ok(())
}

/// Milliseconds of a timestamp, for parameters.
pub(crate) fn ms(t: Timestamp) -> i64 {
    t.as_millisecond()
}
