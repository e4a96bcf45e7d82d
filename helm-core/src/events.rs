//! Events: what happened, in order, for every frontend to render.
//!
//! Each event is written to the store's durable log in the same transaction as
//! the change it describes and gets the next sequence number there, so a reader
//! that saw everything up to `seq` N can resume after N and miss nothing.
//! Streaming text is coalesced into `message.delta` events (a few per second per
//! message) rather than one per token.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{
    Agent, AgentId, AgentStatus, Channel, ChannelId, MemberRole, MemoryItem, Message, MessageId,
    ModelChoice, PolicyLevel, Thread, ThreadId, ToolAction, Turn, UserId,
};

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
    /// A channel's purpose or its agent's instructions changed.
    #[serde(rename = "channel.updated")]
    ChannelUpdated {
        /// The channel as it is now.
        channel: Channel,
    },
    /// A channel was renamed; its agent, handle and everything else stay.
    #[serde(rename = "channel.renamed")]
    ChannelRenamed {
        /// The channel as it is now.
        channel: Channel,
        /// The name it had.
        previous_name: String,
    },
    /// The model choice at one level of the policy changed. The event's
    /// channel is the channel (or the session's channel); a workspace
    /// choice concerns everyone.
    #[serde(rename = "model.changed")]
    ModelChanged {
        /// Which level: `workspace`, `channel` or `session`.
        level: PolicyLevel,
        /// The thread whose session choice changed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread_id: Option<ThreadId>,
        /// The choice now; absent when the level was cleared to inherit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choice: Option<ModelChoice>,
        /// Who changed it.
        by: String,
    },
    /// A person became a member of a channel.
    #[serde(rename = "channel.member_added")]
    ChannelMemberAdded {
        /// The person.
        user_id: UserId,
        /// Their name.
        name: String,
        /// Owner or member.
        role: MemberRole,
    },
    /// A person stopped being a member of a channel.
    #[serde(rename = "channel.member_removed")]
    ChannelMemberRemoved {
        /// The person.
        user_id: UserId,
        /// Their name.
        name: String,
        /// Who removed them: themselves when they left; none when Helm did
        /// (or in events written before this was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<UserId>,
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
        /// The text added.
        text: String,
        /// Where `text` goes: the length of the message's text before it,
        /// in Unicode scalar values (characters, not bytes nor UTF-16
        /// units). A client that read the message while it streamed
        /// places the chunk by it instead of appending it a second time.
        /// Counted by the statement that appended, so it is exact however
        /// writes interleave. Deltas kept in the log before offsets existed
        /// (a reply cut short by a restart) read back as 0; their
        /// `message.completed` follows with the whole text.
        #[serde(default)]
        offset: u64,
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
    /// A thread (session) was opened.
    #[serde(rename = "thread.created")]
    ThreadCreated {
        /// The thread.
        thread: Thread,
    },
    /// A thread's status, title or summary changed.
    #[serde(rename = "thread.updated")]
    ThreadUpdated {
        /// The thread as it is now.
        thread: Thread,
    },
    /// A turn was admitted; `ahead` turns of its thread run before it.
    #[serde(rename = "turn.queued")]
    TurnQueued {
        /// The turn.
        turn: Turn,
        /// How many turns of the same thread are before it.
        ahead: u32,
    },
    /// A turn started.
    #[serde(rename = "turn.started")]
    TurnStarted {
        /// The turn.
        turn: Turn,
    },
    /// A turn finished with an answer (or waiting on a person).
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        /// The turn.
        turn: Turn,
    },
    /// A turn failed; `turn.error` says why.
    #[serde(rename = "turn.failed")]
    TurnFailed {
        /// The turn.
        turn: Turn,
    },
    /// A turn was stopped, cancelled, or interrupted by a restart.
    #[serde(rename = "turn.cancelled")]
    TurnCancelled {
        /// The turn.
        turn: Turn,
    },
    /// An agent started a tool call.
    #[serde(rename = "tool_action.started")]
    ToolActionStarted {
        /// The journaled action.
        action: ToolAction,
    },
    /// A tool call finished.
    #[serde(rename = "tool_action.finished")]
    ToolActionFinished {
        /// The journaled action.
        action: ToolAction,
    },
    /// A file or output was recorded as an artifact of a thread.
    #[serde(rename = "artifact.recorded")]
    ArtifactRecorded {
        /// The artifact.
        artifact: crate::model::Artifact,
    },
    /// A call for Skipper was opened, resolved or handed to the Captain.
    #[serde(rename = "escalation.changed")]
    EscalationChanged {
        /// The escalation as it is now.
        escalation: crate::model::Escalation,
    },
    /// An approval was requested or decided.
    #[serde(rename = "approval.changed")]
    ApprovalChanged {
        /// The approval as it is now.
        approval: crate::model::Approval,
    },
    /// A history was imported into a channel.
    #[serde(rename = "history.imported")]
    HistoryImported {
        /// The channel.
        channel_id: ChannelId,
        /// What was written.
        report: crate::memory::import::ImportReport,
    },
    /// A memory record was added, superseded, forgotten or (un)pinned.
    #[serde(rename = "memory.changed")]
    MemoryChanged {
        /// The record as it is now.
        item: MemoryItem,
    },
    /// The workspace was renamed.
    #[serde(rename = "workspace.updated")]
    WorkspaceUpdated {
        /// The workspace as it is now.
        workspace: crate::model::Workspace,
    },
    /// A person's role changed, or they were deactivated or reactivated.
    /// Everyone hears it (the people list is everyone's); a deactivated
    /// person's own event streams end when they hear it.
    #[serde(rename = "user.updated")]
    UserUpdated {
        /// The person as they are now.
        user: crate::model::User,
    },
    /// A person read a channel up to a message. Only that person hears it
    /// (their other tabs and devices clear the channel's unread count).
    #[serde(rename = "channel.read")]
    ChannelRead {
        /// Who read.
        user_id: UserId,
        /// The newest message they have seen.
        message_id: MessageId,
    },
    /// A message mentions a person (`@name`). Only that person hears it.
    #[serde(rename = "mention.created")]
    MentionCreated {
        /// Who is mentioned.
        user_id: UserId,
        /// The message, as it is now.
        message: Message,
    },
    /// A person changed a channel's workspace through Helm (the file API,
    /// an upload, a note): other people's open views of the file reload or
    /// warn, and listings refresh. The agent's writes are told by its
    /// `tool_action.*` events instead.
    #[serde(rename = "file.changed")]
    FileChanged {
        /// What happened to the path.
        change: FileChange,
        /// The agent-visible path (`/workspace/...`): where it is now.
        path: String,
        /// Where it was, for a move.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        /// The new contents' version
        /// ([`content_version`](crate::exec::content_version)), for a file
        /// saved or created.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<String>,
        /// Who changed it.
        user_id: UserId,
        /// Their name.
        by: String,
    },
    /// A person opened a terminal in the channel's computer: other
    /// people's terminal views list it at once.
    #[serde(rename = "terminal.opened")]
    TerminalOpened {
        /// The terminal's id.
        terminal_id: u64,
        /// Who opened it.
        user_id: UserId,
        /// Their name.
        by: String,
    },
    /// A terminal of the channel ended: closed by a person, or its shell
    /// exited (or was ended with the channel's computer).
    #[serde(rename = "terminal.closed")]
    TerminalClosed {
        /// The terminal's id.
        terminal_id: u64,
        /// The shell's exit code (`None` when a signal ended it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// Who closed it, when a person did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        closed_by: Option<UserId>,
    },
}

/// What a [`EventBody::FileChanged`] did to its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FileChange {
    /// Its contents were written (replaced, or made where nothing was).
    Saved,
    /// A new file was made where none was (an upload that keeps both, a
    /// note, a create-only save).
    Created,
    /// A folder was made.
    FolderCreated,
    /// It was moved or renamed from `from`.
    Moved,
    /// It was deleted.
    Deleted,
}

/// The events that tell a channel's own story, beside its messages and
/// tool calls: made, renamed, its purpose or model changed, people joining
/// and leaving, archived and restored, history imported, and turns that
/// failed or were stopped ([`Helm::channel_lifecycle`](crate::Helm::channel_lifecycle)).
pub const LIFECYCLE_EVENTS: &[&str] = &[
    "channel.created",
    "channel.renamed",
    "channel.updated",
    "model.changed",
    "channel.member_added",
    "channel.member_removed",
    "channel.archived",
    "channel.restored",
    "history.imported",
    "turn.failed",
    "turn.cancelled",
];

impl EventBody {
    /// The `type` tag, as stored in the log's index.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::ChannelCreated { .. } => "channel.created",
            EventBody::ChannelArchived { .. } => "channel.archived",
            EventBody::ChannelRestored { .. } => "channel.restored",
            EventBody::ChannelDeleted { .. } => "channel.deleted",
            EventBody::ChannelUpdated { .. } => "channel.updated",
            EventBody::ChannelRenamed { .. } => "channel.renamed",
            EventBody::ModelChanged { .. } => "model.changed",
            EventBody::ChannelMemberAdded { .. } => "channel.member_added",
            EventBody::ChannelMemberRemoved { .. } => "channel.member_removed",
            EventBody::MessageCreated { .. } => "message.created",
            EventBody::MessageDelta { .. } => "message.delta",
            EventBody::MessageCompleted { .. } => "message.completed",
            EventBody::AgentStatusChanged { .. } => "agent.status",
            EventBody::ThreadCreated { .. } => "thread.created",
            EventBody::ThreadUpdated { .. } => "thread.updated",
            EventBody::TurnQueued { .. } => "turn.queued",
            EventBody::TurnStarted { .. } => "turn.started",
            EventBody::TurnCompleted { .. } => "turn.completed",
            EventBody::TurnFailed { .. } => "turn.failed",
            EventBody::TurnCancelled { .. } => "turn.cancelled",
            EventBody::ToolActionStarted { .. } => "tool_action.started",
            EventBody::ToolActionFinished { .. } => "tool_action.finished",
            EventBody::MemoryChanged { .. } => "memory.changed",
            EventBody::HistoryImported { .. } => "history.imported",
            EventBody::ArtifactRecorded { .. } => "artifact.recorded",
            EventBody::EscalationChanged { .. } => "escalation.changed",
            EventBody::ApprovalChanged { .. } => "approval.changed",
            EventBody::WorkspaceUpdated { .. } => "workspace.updated",
            EventBody::UserUpdated { .. } => "user.updated",
            EventBody::ChannelRead { .. } => "channel.read",
            EventBody::MentionCreated { .. } => "mention.created",
            EventBody::FileChanged { .. } => "file.changed",
            EventBody::TerminalOpened { .. } => "terminal.opened",
            EventBody::TerminalClosed { .. } => "terminal.closed",
        }
    }
}

/// Follows the event log from a point: first the durable backlog after it,
/// then live events, with no gap and no duplicate. A follower that falls too
/// far behind the live feed catches up from the durable log.
pub struct Follower {
    store: std::sync::Arc<dyn crate::store::Store>,
    live: tokio::sync::broadcast::Receiver<std::sync::Arc<Event>>,
    backlog: std::collections::VecDeque<std::sync::Arc<Event>>,
    last: u64,
}

/// How many events one catch-up read takes from the log.
const CATCH_UP_BATCH: usize = 1000;

impl Follower {
    /// Starts following after `after` (0 for the beginning of the log).
    pub async fn new(
        store: std::sync::Arc<dyn crate::store::Store>,
        after: u64,
    ) -> crate::error::Result<Self> {
        // Subscribe before reading the backlog so nothing committed in
        // between is missed; duplicates are dropped by sequence number.
        let live = store.subscribe();
        let mut follower = Follower {
            store,
            live,
            backlog: Default::default(),
            last: after,
        };
        follower.catch_up().await?;
        Ok(follower)
    }

    async fn catch_up(&mut self) -> crate::error::Result<()> {
        let from = self.backlog.back().map(|e| e.seq).unwrap_or(self.last);
        let batch = self.store.events_after(from, CATCH_UP_BATCH).await?;
        self.backlog
            .extend(batch.into_iter().map(std::sync::Arc::new));
        Ok(())
    }

    /// The sequence number of the last event returned.
    pub fn position(&self) -> u64 {
        self.last
    }

    /// The next event. Cancel-safe: dropping the future before it resolves
    /// loses no event. Shared with every other follower of the live feed,
    /// so a stream per client costs no copy of the event.
    pub async fn next(&mut self) -> crate::error::Result<std::sync::Arc<Event>> {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            if self.backlog.len() == 1 {
                // The backlog may have been cut at its batch size: refill it
                // before taking its last event, so that a caller that drops
                // this future mid-read (in a `select!`) loses nothing.
                self.catch_up().await?;
            }
            if let Some(event) = self.backlog.pop_front() {
                if event.seq > self.last {
                    self.last = event.seq;
                    return Ok(event);
                }
                continue;
            }
            match self.live.recv().await {
                Ok(event) if event.seq <= self.last => continue,
                Ok(event) => {
                    self.last = event.seq;
                    return Ok(event);
                }
                Err(RecvError::Lagged(_)) => self.catch_up().await?,
                Err(RecvError::Closed) => {
                    return Err(crate::error::Error::Internal(
                        "the event feed closed".into(),
                    ));
                }
            }
        }
    }
}
