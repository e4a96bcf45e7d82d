//! Mirrors of helm-core's threads, messages, turns, tool actions and events.

use std::borrow::Cow;

use helm_core::model as m;
use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use super::enums::*;
use super::model::ModelChoice;

/// A thread: one focused, durable work session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Thread {
    /// Its id.
    pub id: i64,
    /// Its channel.
    pub channel_id: i64,
    /// The message that started it.
    pub root_message_id: Option<i64>,
    /// Its title or goal.
    pub title: String,
    /// Where it stands.
    pub status: ThreadStatus,
    /// The rolling working summary.
    pub summary: String,
    /// Who opened it.
    pub opened_by: Option<i64>,
    /// When.
    pub opened_at: Timestamp,
    /// When anything in it last changed.
    pub updated_at: Timestamp,
    /// An id from an imported history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Where a search (`?q=`) found it; only in search results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<ThreadHit>,
}

/// Where a thread search found a thread.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ThreadHit {
    /// `title`, `summary` or `message`.
    #[schema(value_type = String, example = "message")]
    pub r#in: &'static str,
    /// The best-matching message, when the words were in a message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<i64>,
    /// A short excerpt around the first matched word; `…` marks a cut.
    pub snippet: String,
}

impl From<helm_core::store::ThreadMatch> for Thread {
    fn from(hit: helm_core::store::ThreadMatch) -> Self {
        Thread {
            matched: Some(ThreadHit {
                r#in: hit.matched_in.as_str(),
                message_id: hit.message_id.map(|m| m.0),
                snippet: hit.snippet,
            }),
            ..hit.thread.into()
        }
    }
}

impl From<m::Thread> for Thread {
    fn from(t: m::Thread) -> Self {
        Thread {
            id: t.id.0,
            channel_id: t.channel_id.0,
            root_message_id: t.root_message_id.map(|i| i.0),
            title: t.title,
            status: t.status.into(),
            summary: t.summary,
            opened_by: t.opened_by.map(|i| i.0),
            opened_at: t.opened_at,
            updated_at: t.updated_at,
            external_id: t.external_id,
            matched: None,
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Author {
    /// A workspace user.
    Human {
        /// The user.
        user_id: i64,
        /// Their name at the time.
        name: String,
    },
    /// Skipper or a resident agent.
    Agent {
        /// The agent.
        agent_id: i64,
        /// Its handle.
        handle: String,
        /// Skipper or channel agent.
        agent_kind: AgentKind,
    },
    /// Helm itself.
    System,
    /// Someone from an imported history.
    Guest {
        /// The name the history gave.
        name: String,
    },
}

impl From<m::Author> for Author {
    fn from(a: m::Author) -> Self {
        match a {
            m::Author::Human { user_id, name } => Author::Human {
                user_id: user_id.0,
                name,
            },
            m::Author::Agent {
                agent_id,
                handle,
                agent_kind,
            } => Author::Agent {
                agent_id: agent_id.0,
                handle: handle.as_str().to_string(),
                agent_kind: agent_kind.into(),
            },
            m::Author::System => Author::System,
            m::Author::Guest { name } => Author::Guest { name },
        }
    }
}

/// A message in a channel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Message {
    /// Its id (also the pagination cursor).
    pub id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread, unless it is a channel-level announcement.
    pub thread_id: Option<i64>,
    /// Who wrote it.
    pub author: Author,
    /// Its text (Markdown).
    pub content: String,
    /// Whether it is final.
    pub status: MessageStatus,
    /// For an agent's message, the provider and model that served it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ModelChoice>,
    /// An id from an imported history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// When it was posted.
    pub created: Timestamp,
}

impl From<m::Message> for Message {
    fn from(msg: m::Message) -> Self {
        Message {
            id: msg.id.0,
            channel_id: msg.channel_id.0,
            thread_id: msg.thread_id.map(|t| t.0),
            author: msg.author.into(),
            content: msg.content,
            status: msg.status.into(),
            served_by: msg.served_by.map(Into::into),
            external_id: msg.external_id,
            created: msg.created,
        }
    }
}

/// One agent turn.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Turn {
    /// Its id.
    pub id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread.
    pub thread_id: i64,
    /// The agent doing the work.
    pub agent_id: i64,
    /// The message that woke the agent.
    pub trigger_message_id: i64,
    /// The agent's reply.
    pub reply_message_id: i64,
    /// Where it stands.
    pub state: TurnState,
    /// The provider and model that serve it, fixed when its message was
    /// accepted (a later change of model does not move it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ModelChoice>,
    /// Which rule chose that model: `session`, `channel`, `workspace` or
    /// `fallback`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_level: Option<PolicyLevel>,
    /// The person it runs for (whose message started its chain of work).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<i64>,
    /// Agent-to-agent hops that led to it (0 when a person woke the agent).
    pub hop: u32,
    /// The call for Skipper it answers, for Skipper's turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation_id: Option<i64>,
    /// Why it failed or was interrupted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Model calls made.
    pub steps: u32,
    /// The tokens its model calls used, as the provider reported them
    /// (absent while it runs, and when the provider reports none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// When it was admitted.
    pub queued_at: Timestamp,
    /// When it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
}

impl From<m::Turn> for Turn {
    fn from(t: m::Turn) -> Self {
        Turn {
            id: t.id.0,
            channel_id: t.channel_id.0,
            thread_id: t.thread_id.0,
            agent_id: t.agent_id.0,
            trigger_message_id: t.trigger_message_id.0,
            reply_message_id: t.reply_message_id.0,
            state: t.state.into(),
            served_by: t.served_by.map(Into::into),
            model_level: t.model_level.map(Into::into),
            requested_by: t.requested_by.map(|u| u.0),
            hop: t.hop,
            escalation_id: t.escalation_id.map(|e| e.0),
            error: t.error,
            steps: t.steps,
            usage: t.usage.map(Into::into),
            queued_at: t.queued_at,
            started_at: t.started_at,
            finished_at: t.finished_at,
        }
    }
}

/// Tokens used by a turn's model calls, summed.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct TokenUsage {
    /// Prompt tokens, over every model call of the turn.
    pub input_tokens: u64,
    /// Completion tokens, over every model call of the turn.
    pub output_tokens: u64,
}

impl From<helm_core::provider::Usage> for TokenUsage {
    fn from(u: helm_core::provider::Usage) -> Self {
        TokenUsage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

/// One journaled tool call.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ToolAction {
    /// Its id.
    pub id: i64,
    /// The agent.
    pub agent_id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread.
    pub thread_id: Option<i64>,
    /// The turn.
    pub turn_id: Option<i64>,
    /// The tool.
    pub tool: String,
    /// A short account of the input.
    pub input_summary: String,
    /// A short account of the result.
    pub result_summary: String,
    /// How it went.
    pub status: ToolStatus,
    /// How long it took.
    pub duration_ms: Option<i64>,
    /// What the tool gave back to the agent (a command's exit code and
    /// output), cut to 8 KiB; absent while it runs or when it said no more
    /// than `result_summary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The isolation a command ran under.
    pub isolation: Option<String>,
    /// When it started.
    pub created: Timestamp,
}

impl From<m::ToolAction> for ToolAction {
    fn from(a: m::ToolAction) -> Self {
        ToolAction {
            id: a.id.0,
            agent_id: a.agent_id.0,
            channel_id: a.channel_id.0,
            thread_id: a.thread_id.map(|t| t.0),
            turn_id: a.turn_id.map(|t| t.0),
            tool: a.tool,
            input_summary: a.input_summary,
            result_summary: a.result_summary,
            output: a.output,
            status: a.status.into(),
            duration_ms: a.duration_ms,
            isolation: a.isolation,
            created: a.created,
        }
    }
}

/// What posting a message did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PostedMessage {
    /// The stored message.
    pub message: Message,
    /// Its thread.
    pub thread: Thread,
    /// Whether the message opened the thread.
    pub thread_created: bool,
    /// The turn it woke, if it woke the agent.
    pub turn: Option<Turn>,
    /// How many turns must end before that turn can start: earlier turns of
    /// its thread, or turns its agent is busy with in other threads.
    pub ahead: u32,
    /// The call for Skipper it opened, or the open one it added its reason
    /// to, when it mentioned `@skipper`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<super::authority::Escalation>,
}

impl From<helm_core::PostedMessage> for PostedMessage {
    fn from(p: helm_core::PostedMessage) -> Self {
        PostedMessage {
            message: p.message.into(),
            thread: p.thread.into(),
            thread_created: p.thread_created,
            turn: p.turn.map(Into::into),
            ahead: p.ahead,
            escalation: p.escalation.map(Into::into),
        }
    }
}

/// One event of the durable log, as the WebSocket sends it: `seq`, `at`,
/// `channel_id` (absent for workspace-level events), `type` (such as
/// `message.created`) and the fields of that type.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Event(pub serde_json::Value);

impl utoipa::PartialSchema for Event {
    fn schema() -> RefOr<Schema> {
        super::events::event_schema()
    }
}

impl ToSchema for Event {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Event")
    }
}

impl Event {
    /// The JSON form of a core event.
    pub fn from_core(event: &helm_core::events::Event) -> Self {
        Event(serde_json::to_value(event).unwrap_or(serde_json::Value::Null))
    }
}

/// A thread with its turns.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ThreadDetail {
    /// The thread.
    pub thread: Thread,
    /// Its turns, oldest first.
    pub turns: Vec<Turn>,
}

/// The turns that stopping a thread ended.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Stopped {
    /// Their ids.
    pub turns: Vec<i64>,
}
