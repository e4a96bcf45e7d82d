//! Threads (durable work sessions) and the messages in them.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::agent::{AgentKind, Handle};
use super::enums::string_enum;
use super::ids::{AgentId, ChannelId, MessageId, ThreadId, TurnId, UserId};
use super::policy::{ModelChoice, PolicyLevel};

string_enum! {
    /// Where a session stands.
    ThreadStatus as "thread status" {
        /// Work is going on or can go on.
        Open => "open",
        /// The agent waits on a person (an answer or an approval).
        Waiting => "waiting",
        /// Someone declared the work done; a new message reopens it.
        Resolved => "resolved",
        /// The last turn failed; a new message reopens it.
        Failed => "failed",
        /// Put away with its channel, or by hand; read-only until reopened.
        Archived => "archived",
    }
}

/// A thread: one focused, durable working session in a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// Its id.
    pub id: ThreadId,
    /// The channel it belongs to.
    pub channel_id: ChannelId,
    /// The message that started it.
    pub root_message_id: Option<MessageId>,
    /// Its title or goal (the start of the root message unless set).
    pub title: String,
    /// Where the session stands.
    pub status: ThreadStatus,
    /// The rolling working summary.
    pub summary: String,
    /// Who opened it, when a human did.
    pub opened_by: Option<UserId>,
    /// When it was opened.
    pub opened_at: Timestamp,
    /// When anything in it last changed.
    pub updated_at: Timestamp,
    /// An id from an imported history, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

/// Who wrote a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Author {
    /// A workspace user.
    Human {
        /// The user.
        user_id: UserId,
        /// Their name at the time.
        name: String,
    },
    /// Skipper or a resident agent.
    Agent {
        /// The agent.
        agent_id: AgentId,
        /// Its handle.
        handle: Handle,
        /// Skipper or channel agent.
        agent_kind: AgentKind,
    },
    /// Helm itself (lifecycle notes).
    System,
    /// Someone from an imported history who is not a user.
    Guest {
        /// The name the history gave.
        name: String,
    },
}

impl Author {
    /// The name to show in a transcript.
    pub fn display(&self) -> String {
        match self {
            Author::Human { name, .. } | Author::Guest { name } => name.clone(),
            Author::Agent { handle, .. } => handle.to_string(),
            Author::System => "helm".to_string(),
        }
    }

    /// The length of [`Author::display`], without building it (context
    /// budgets count it for every message read).
    pub fn display_len(&self) -> usize {
        match self {
            Author::Human { name, .. } | Author::Guest { name } => name.len(),
            Author::Agent { handle, .. } => handle.as_str().len() + 1,
            Author::System => "helm".len(),
        }
    }
}

string_enum! {
    /// Whether a message is final.
    MessageStatus as "message status" {
        /// An agent's reply admitted and waiting for its turn to start.
        Pending => "pending",
        /// Final.
        Complete => "complete",
        /// An agent is still writing it.
        Streaming => "streaming",
        /// The turn writing it failed; the text is what arrived before.
        Failed => "failed",
        /// Someone stopped the turn writing it.
        Stopped => "stopped",
        /// The process ended while it was being written.
        Interrupted => "interrupted",
    }
}

/// A message in a channel, at channel level or in a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Its id.
    pub id: MessageId,
    /// The channel.
    pub channel_id: ChannelId,
    /// The thread, unless it is a channel-level announcement.
    pub thread_id: Option<ThreadId>,
    /// Who wrote it.
    pub author: Author,
    /// Its text (Markdown).
    pub content: String,
    /// Whether it is final.
    pub status: MessageStatus,
    /// For an agent's message, the provider and model that served it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ModelChoice>,
    /// An id from an imported history, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// When it was posted.
    pub created: Timestamp,
}

string_enum! {
    /// Where an agent turn stands. `queued` and `running` are live; the rest
    /// are end states set once by the turn's finalizer.
    TurnState as "turn state" {
        /// Admitted, waiting for the thread's earlier turns or agent capacity.
        Queued => "queued",
        /// The agent is working on it.
        Running => "running",
        /// Finished with an answer.
        Completed => "completed",
        /// Ended waiting on a person (an answer or an approval).
        Waiting => "waiting",
        /// The model or a tool failed; the error is in the thread.
        Failed => "failed",
        /// Someone stopped it while it ran.
        Stopped => "stopped",
        /// Withdrawn before it finished (stopped while queued, or shut down).
        Cancelled => "cancelled",
        /// The process ended while it ran; not replayed, since its actions
        /// may already have happened.
        Interrupted => "interrupted",
    }
}

impl TurnState {
    /// Whether the turn has reached an end state.
    pub fn is_final(self) -> bool {
        !matches!(self, TurnState::Queued | TurnState::Running)
    }
}

/// One agent turn: the durable unit of agent work in a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Its id.
    pub id: TurnId,
    /// The channel.
    pub channel_id: ChannelId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The agent doing the work.
    pub agent_id: AgentId,
    /// The message that woke the agent.
    pub trigger_message_id: MessageId,
    /// The agent's reply, created at admission.
    pub reply_message_id: MessageId,
    /// Where it stands.
    pub state: TurnState,
    /// The provider and model that serve it: fixed when its message was
    /// accepted (turns admitted by older versions get them when they start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ModelChoice>,
    /// Which rule of the model policy chose `served_by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_level: Option<PolicyLevel>,
    /// Why it failed, for failed and interrupted turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Model calls made so far: while the turn runs, those whose tools have
    /// started; at its end, all of them.
    pub steps: u32,
    /// The tokens its model calls used, summed, as the provider reported
    /// them; `None` while it runs and when no call reported any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::provider::Usage>,
    /// How many agent-to-agent hops led to this turn (0 when a person woke it).
    #[serde(default)]
    pub hop: u32,
    /// The call for Skipper this turn answers, for Skipper's turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation_id: Option<super::ids::EscalationId>,
    /// The person whose message started the chain this turn belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<UserId>,
    /// When it was admitted.
    pub queued_at: Timestamp,
    /// When it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it reached its end state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AgentId, AgentKind, Handle, UserId};

    #[test]
    fn display_len_is_the_length_of_display() {
        let authors = [
            Author::Human {
                user_id: UserId(1),
                name: "mira".into(),
            },
            Author::Guest {
                name: "Ünsal".into(),
            },
            Author::Agent {
                agent_id: AgentId(2),
                handle: Handle::from_stored("launch-agent".into()),
                agent_kind: AgentKind::Channel,
            },
            Author::System,
        ];
        for author in authors {
            assert_eq!(author.display_len(), author.display().len(), "{author:?}");
        }
    }
}
