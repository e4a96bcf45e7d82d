//! Events: what happened, in order, for every frontend to render.
//!
//! Each event is written to the store's durable log in the same transaction as
//! the change it describes and gets the next sequence number there, so a reader
//! that saw everything up to `seq` N can resume after N and miss nothing.
//! Streaming text is coalesced into `message.delta` events (a few per second per
//! message) rather than one per token.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{Agent, AgentId, AgentStatus, Channel, ChannelId, Message, MessageId, ThreadId};

/// A durable, ordered record of one change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the workspace's event log; strictly increasing.
    pub seq: u64,
    /// When it happened.
    pub at: Timestamp,
    /// The channel it concerns, which decides who may see it; `None` for
    /// workspace-level events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<ChannelId>,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
}

/// What happened. Serialised with a `type` tag such as `"message.created"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum EventBody {
    /// A channel and its resident agent were provisioned.
    #[serde(rename = "channel.created")]
    ChannelCreated {
        /// The channel.
        channel: Channel,
        /// Its resident agent.
        agent: Agent,
    },
    /// A channel was archived; its agent is paused.
    #[serde(rename = "channel.archived")]
    ChannelArchived {
        /// The channel as it is now.
        channel: Channel,
    },
    /// An archived channel was restored with the same agent world.
    #[serde(rename = "channel.restored")]
    ChannelRestored {
        /// The channel as it is now.
        channel: Channel,
    },
    /// A channel and its agent world were permanently deleted.
    #[serde(rename = "channel.deleted")]
    ChannelDeleted {
        /// The id it had.
        id: ChannelId,
        /// The name it had.
        name: String,
    },
    /// A message was posted (an agent's reply starts out `streaming`).
    #[serde(rename = "message.created")]
    MessageCreated {
        /// The message.
        message: Message,
    },
    /// More text of a streaming message.
    #[serde(rename = "message.delta")]
    MessageDelta {
        /// The message.
        message_id: MessageId,
        /// Its thread.
        thread_id: Option<ThreadId>,
        /// The text to append.
        text: String,
    },
    /// A message reached its final state and text.
    #[serde(rename = "message.completed")]
    MessageCompleted {
        /// The message as stored.
        message: Message,
    },
    /// An agent's status changed.
    #[serde(rename = "agent.status")]
    AgentStatusChanged {
        /// The agent.
        agent_id: AgentId,
        /// Its new status.
        status: AgentStatus,
    },
}

impl EventBody {
    /// The `type` tag, as stored in the log's index.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::ChannelCreated { .. } => "channel.created",
            EventBody::ChannelArchived { .. } => "channel.archived",
            EventBody::ChannelRestored { .. } => "channel.restored",
            EventBody::ChannelDeleted { .. } => "channel.deleted",
            EventBody::MessageCreated { .. } => "message.created",
            EventBody::MessageDelta { .. } => "message.delta",
            EventBody::MessageCompleted { .. } => "message.completed",
            EventBody::AgentStatusChanged { .. } => "agent.status",
        }
    }
}
