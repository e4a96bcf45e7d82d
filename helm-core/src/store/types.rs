//! The inputs and outputs of [`Store`](super::Store) operations.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::{
    Actor, Agent, AgentId, AgentKind, AgentProfile, AuthorType, CapabilityPolicy, Channel,
    ChannelId, ChannelName, Handle, MemoryId, MemoryKind, MemoryScope, MemorySource, Message,
    MessageId, Role, Thread, ThreadId, ToolStatus, Turn, TurnId, TurnModel, TurnState, User,
    UserId, Visibility, Workspace,
};
use crate::provider::Usage;

/// Work on the file system that must succeed for a store transaction to commit
/// (creating or moving a channel's on-disk tree). It runs inside the
/// transaction, after the rows are written, with the record being committed.
pub type WorldHook = Box<dyn FnOnce(&ChannelRecord) -> Result<()> + Send>;

/// What `init` asks for.
#[derive(Debug, Clone)]
pub struct BootstrapPlan {
    /// The workspace's name.
    pub workspace_name: String,
    /// The Captain's user name.
    pub captain_name: String,
    /// `#main`'s purpose.
    pub home_purpose: String,
    /// Skipper's operating instructions.
    pub skipper_instructions: String,
}

/// What exists after bootstrap.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// The workspace.
    pub workspace: Workspace,
    /// The Captain.
    pub captain: User,
    /// `#main` with Skipper.
    pub home: ChannelRecord,
    /// Whether this call created them (false when they already existed).
    pub created: bool,
}

/// A new user.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Login and mention name (validated).
    pub name: String,
    /// Shown name.
    pub display_name: String,
    /// Role.
    pub role: Role,
}

/// Everything provisioning needs to know; the store fills in ids and a free handle.
#[derive(Debug, Clone)]
pub struct ChannelPlan {
    /// The channel's name.
    pub name: ChannelName,
    /// Its purpose (validated, trimmed).
    pub purpose: String,
    /// Public or private.
    pub visibility: Visibility,
    /// The creator, who becomes its owner member.
    pub created_by: User,
    /// The handle to use if free; otherwise `-2`, `-3`, … are tried.
    pub handle: Handle,
    /// The agent's display name.
    pub display_name: String,
    /// Initial operating instructions.
    pub instructions: String,
    /// Initial capability policy.
    pub capability_policy: CapabilityPolicy,
    /// The text of Skipper's ready announcement; `{handle}` is replaced by the
    /// handle actually allocated.
    pub announcement: String,
}

/// A channel together with its agent (Skipper for `#main`) and that agent's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelRecord {
    /// The channel.
    pub channel: Channel,
    /// Its resident agent, or Skipper for `#main`.
    pub agent: Agent,
    /// The agent's profile.
    pub profile: AgentProfile,
}

/// Which channels to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelFilter {
    /// Include archived channels.
    pub include_archived: bool,
}

/// A new, unbound agent.
#[derive(Debug, Clone)]
pub struct NewAgent {
    /// Skipper or channel agent.
    pub kind: AgentKind,
    /// Its handle.
    pub handle: Handle,
    /// Its display name.
    pub display_name: String,
}

/// Where a model choice is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyScope {
    /// The workspace default.
    Workspace,
    /// A channel's override.
    Channel(ChannelId),
    /// A thread's (session's) override.
    Session(ThreadId),
}

/// One lifecycle record: what happened to a channel, by whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Its id.
    pub id: i64,
    /// The channel, which may no longer exist.
    pub channel_id: Option<ChannelId>,
    /// The channel's name at the time.
    pub channel_name: Option<String>,
    /// Who did it.
    pub actor: Actor,
    /// What happened, such as `channel.created`.
    pub action: String,
    /// Details for people.
    pub detail: String,
    /// When.
    pub created: Timestamp,
}

/// Counts for `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreStats {
    /// The schema version.
    pub schema_version: i64,
    /// People.
    pub users: u64,
    /// Active channels, `#main` included.
    pub channels_active: u64,
    /// Archived channels.
    pub channels_archived: u64,
    /// Agents, Skipper included.
    pub agents: u64,
    /// Threads.
    pub threads: u64,
    /// Messages.
    pub messages: u64,
    /// The newest event's sequence number.
    pub last_event_seq: u64,
}

/// A human message to post, with what the runtime knows about it.
#[derive(Debug, Clone)]
pub struct NewPost {
    /// The channel.
    pub channel_id: ChannelId,
    /// The thread to continue; `None` starts a new one.
    pub thread_id: Option<ThreadId>,
    /// Who writes it.
    pub author: User,
    /// The text.
    pub content: String,
    /// The channel's resident agent.
    pub resident: Agent,
    /// Whether the text mentions the resident agent's handle.
    pub mentions_resident: bool,
    /// Whether the text calls @skipper into the thread (in an agent channel).
    pub calls_skipper: bool,
    /// The model and queue of any turn the post admits.
    pub admission: Admission,
}

/// The model a turn that a change admits runs with, resolved by the runtime
/// before the store is asked (the store does not know the providers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdmissionModel {
    /// The model it runs with.
    Chosen(TurnModel),
    /// No model can serve it, and why (with what to choose). A change that
    /// would admit a turn fails with
    /// [`Error::ModelUnavailable`](crate::Error::ModelUnavailable) and
    /// stores nothing; one that admits none goes ahead.
    Unavailable(String),
}

/// How a change admits a turn: the model it runs with, and the agent's
/// capacity (so the turn's place in the queue can be told).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    /// The turn's model.
    pub model: AdmissionModel,
    /// How many threads the agent works on at once.
    pub capacity: u32,
}

/// Waking the channel agent that called Skipper, once the call is settled.
#[derive(Debug, Clone)]
pub struct Resume {
    /// The person whose message started the chain.
    pub requested_by: Option<UserId>,
    /// Agent-to-agent hops so far, counting this one.
    pub hop: u32,
    /// The resumed turn's model and queue.
    pub admission: Admission,
}

/// What a call for Skipper did.
#[derive(Debug, Clone)]
pub struct Escalated {
    /// The thread's open call, as it is now.
    pub escalation: crate::model::Escalation,
    /// Skipper's turn, if one was queued (none when a call already open
    /// had a turn waiting that will read the added reason).
    pub turn: Option<Turn>,
    /// Whether the call was added to one already open in the thread.
    pub added: bool,
}

/// What posting a message did.
#[derive(Debug, Clone)]
pub struct Posted {
    /// The stored message.
    pub message: Message,
    /// Its thread, as it is now.
    pub thread: Thread,
    /// Whether this message opened the thread.
    pub thread_created: bool,
    /// The turn it woke, if any.
    pub turn: Option<Turn>,
    /// How many turns must end before that turn can start: earlier turns
    /// of its thread, or turns the agent is busy with elsewhere.
    pub ahead: u32,
    /// The call for Skipper the message opened (or added to), if it
    /// mentioned @skipper.
    pub escalation: Option<crate::model::Escalation>,
}

/// What [`TurnStore::repair_after_stop`](super::TurnStore::repair_after_stop) changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Tool actions marked interrupted.
    pub tool_actions: u64,
    /// Threads whose status was set to follow their latest turn.
    pub threads: u64,
}

/// What [`TurnStore::renew_turn_leases`](super::TurnStore::renew_turn_leases)
/// found among the turns this node runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaseRenewal {
    /// Turns this node no longer holds: another node found their lease
    /// lapsed and ended them. Stop running them.
    pub lost: Vec<TurnId>,
    /// Turns someone asked (on another node) to stop, with the name of who
    /// asked: stop them as if asked here.
    pub stop: Vec<(TurnId, String)>,
}

/// A server node as it registers with a shared store
/// ([`NodeStore::register_node`](super::NodeStore::register_node)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRecord {
    /// The node's id, derived from the key kept in its data root.
    pub id: String,
    /// Where the other nodes reach the channel computers this node holds: a
    /// URL with `{channel}` for the channel's id; `None` if they cannot.
    pub computer_url: Option<String>,
    /// The node's own address (`http(s)://host:port`), where the other
    /// nodes pass on a person's requests for what lives in this node's
    /// memory (its open terminals); `None` if they cannot.
    pub url: Option<String>,
    /// The digest ([`secret::digest`](crate::auth::secret::digest)) of the
    /// key this node presents to the others.
    pub key_digest: String,
}

/// A node and where the others reach it, as
/// [`NodeStore::claim_computer`](super::NodeStore::claim_computer) and
/// [`NodeStore::node_numbered`](super::NodeStore::node_numbered) find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAddress {
    /// The node's id.
    pub node: String,
    /// Where the others reach its computers ([`NodeRecord::computer_url`]).
    pub computer_url: Option<String>,
    /// Its own address ([`NodeRecord::url`]).
    pub url: Option<String>,
}

/// How a turn ends, as its finalizer records it.
#[derive(Debug, Clone)]
pub struct TurnFinish {
    /// The end state.
    pub state: TurnState,
    /// The reply's final text.
    pub reply: String,
    /// Why it failed or was interrupted.
    pub error: Option<String>,
    /// A visible note Helm adds to the thread (a failure, an interruption).
    pub note: Option<String>,
    /// Model calls made.
    pub steps: u32,
    /// Token counts.
    pub usage: Usage,
}

/// A tool call to journal.
#[derive(Debug, Clone)]
pub struct NewToolAction {
    /// The agent calling the tool.
    pub agent_id: AgentId,
    /// The channel it acts in.
    pub channel_id: ChannelId,
    /// The thread.
    pub thread_id: Option<ThreadId>,
    /// The turn.
    pub turn_id: Option<TurnId>,
    /// Which of the turn's model calls asked for it (1 for the first). The
    /// turn's `steps` is brought up to it in the same write, so a running
    /// turn shows how far it has got.
    pub step: u32,
    /// The tool's name.
    pub tool: String,
    /// A short account of the input.
    pub input_summary: String,
}

/// How a journaled tool call ended.
#[derive(Debug, Clone)]
pub struct ToolActionOutcome {
    /// How it went.
    pub status: ToolStatus,
    /// A short account of the result.
    pub result_summary: String,
    /// How long it took (unknown for a call interrupted by a stop).
    pub duration_ms: Option<i64>,
    /// The isolation mode a command ran under.
    pub isolation: Option<String>,
    /// What the tool gave back, when it said more than its summary.
    pub output: Option<String>,
}

/// A memory record to add.
#[derive(Debug, Clone)]
pub struct NewMemory {
    /// The owning channel.
    pub channel_id: ChannelId,
    /// The thread it belongs to, if any.
    pub thread_id: Option<ThreadId>,
    /// Its kind.
    pub kind: MemoryKind,
    /// Its text.
    pub content: String,
    /// Where it came from.
    pub source: MemorySource,
    /// The message it came from, if any.
    pub source_message_id: Option<MessageId>,
    /// Who authored it.
    pub author_type: AuthorType,
    /// The author's name or handle.
    pub author_name: Option<String>,
    /// How widely it applies.
    pub scope: MemoryScope,
    /// For facts, how sure the author was.
    pub confidence: Option<f64>,
    /// Whether it is always offered to the agent.
    pub pinned: bool,
}

/// Which memory records to list.
#[derive(Debug, Clone, Default)]
pub struct MemoryFilter {
    /// Only this kind.
    pub kind: Option<MemoryKind>,
    /// Only this thread's.
    pub thread: Option<ThreadId>,
    /// Superseded and forgotten records too.
    pub include_inactive: bool,
    /// At most this many (newest first); 0 means all.
    pub limit: usize,
    /// The next page: only records listed after this one (the last of the
    /// page before) in the list's order, pinned first and then newest
    /// first. Keyed on the record, so records added meanwhile neither
    /// repeat nor push others past the page boundary.
    pub before: Option<MemoryId>,
}

/// A session summary to store.
#[derive(Debug, Clone)]
pub struct NewThreadSummary {
    /// The thread.
    pub thread_id: ThreadId,
    /// The summary.
    pub summary: crate::runtime::summary::SessionSummary,
    /// Why it was written.
    pub trigger: crate::runtime::summary::SummaryTrigger,
    /// The provider that wrote it.
    pub provider: String,
    /// The model that wrote it.
    pub model: String,
    /// The last message it covers.
    pub last_message_id: MessageId,
    /// The agent it is written as (its handle).
    pub author: String,
}

/// The part of a thread a turn's context is built from, read newest first
/// so its cost follows the budget, not the thread's length.
#[derive(Debug, Clone, Default)]
pub struct ThreadTail {
    /// The thread's first message (it states what the thread is for).
    pub first: Option<Message>,
    /// The newest messages that fit the budget, oldest first; never the
    /// first message.
    pub recent: Vec<Message>,
    /// How many messages lie between `first` and `recent`, left out.
    pub omitted: usize,
    /// The newest of those left out.
    pub newest_omitted: Option<MessageId>,
    /// How many of those left out are newer than the last message the
    /// thread's newest summary covers: what nothing in the context stands
    /// for.
    pub uncovered: usize,
}

impl ThreadTail {
    /// The messages read, in server order.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.first.iter().chain(self.recent.iter())
    }

    /// The messages read, in server order, taken out of the tail.
    pub fn into_messages(self) -> Vec<Message> {
        // In place: a long thread's tail is hundreds of messages.
        let mut messages = self.recent;
        if let Some(first) = self.first {
            messages.insert(0, first);
        }
        messages
    }

    /// The newest message in range, read or not (reading starts there).
    pub fn newest(&self) -> Option<MessageId> {
        self.recent
            .last()
            .map(|m| m.id)
            .or(self.newest_omitted)
            .or(self.first.as_ref().map(|m| m.id))
    }
}

/// The tokens a message costs in a model's context, estimated from above:
/// about four characters a token, its author's name as a prefix, and a
/// little for framing and a status note. Empty messages cost nothing (they
/// are not sent).
pub fn message_tokens(message: &Message) -> usize {
    if message.content.trim().is_empty() {
        return 0;
    }
    (message.content.len() + message.author.display_len() + 2).div_ceil(4) + 12
}

/// A change to a person's standing in the workspace, made in one
/// transaction: a new role, deactivation or reactivation, or both. The
/// facade decides who may make it; the store keeps the Captain's standing
/// fixed whoever asks.
#[derive(Debug, Clone)]
pub struct UserChange {
    /// A new role (`Admin` or `Member`; never `Captain`).
    pub role: Option<Role>,
    /// `Some(false)` deactivates (and ends their sessions), `Some(true)`
    /// reactivates.
    pub active: Option<bool>,
    /// Who made the change, for the journal.
    pub by: crate::model::Actor,
}

/// First-run setup: the Captain's chosen name, display name and password.
#[derive(Debug, Clone)]
pub struct CaptainSetup {
    /// The new login name (validated).
    pub name: String,
    /// The shown name.
    pub display_name: String,
    /// The argon2 PHC string of the password.
    pub password_hash: String,
}

/// A new API token's stored form.
#[derive(Debug, Clone)]
pub struct NewApiToken {
    /// Whose it is.
    pub user_id: UserId,
    /// What it is for.
    pub name: String,
    /// The SHA-256 of the secret.
    pub secret_hash: String,
    /// The secret's first characters.
    pub prefix: String,
    /// When it stops working, if ever.
    pub expires: Option<Timestamp>,
}

/// A new Open Terminal key's stored form.
#[derive(Debug, Clone)]
pub struct NewOtKey {
    /// The channel whose computer it opens.
    pub channel_id: ChannelId,
    /// The SHA-256 of the secret.
    pub secret_hash: String,
    /// The secret's first characters.
    pub prefix: String,
    /// Who made it (it acts with their authority).
    pub created_by: UserId,
}

/// A new invitation's stored form.
#[derive(Debug, Clone)]
pub struct NewInvite {
    /// The SHA-256 of the code.
    pub secret_hash: String,
    /// The role the newcomer gets (admin or member).
    pub role: Role,
    /// Who invites.
    pub created_by: UserId,
    /// When it stops working.
    pub expires: Timestamp,
}

/// What a person accepting an invitation chose.
#[derive(Debug, Clone)]
pub struct InviteAcceptance {
    /// The SHA-256 of the code.
    pub secret_hash: String,
    /// Login name (validated).
    pub name: String,
    /// Shown name.
    pub display_name: String,
    /// The argon2 PHC string of the password.
    pub password_hash: String,
}

/// Changes to a channel's name, its purpose or its agent's instructions;
/// `None` keeps the current value.
#[derive(Debug, Clone, Default)]
pub struct ChannelUpdate {
    /// The new name (unique among live channels; the agent's handle stays).
    pub name: Option<String>,
    /// The new purpose (validated, trimmed).
    pub purpose: Option<String>,
    /// The new operating instructions.
    pub instructions: Option<String>,
}

/// A call for Skipper to open.
#[derive(Debug, Clone)]
pub struct NewEscalation {
    /// The thread it is raised in.
    pub thread_id: ThreadId,
    /// The agent calling, if an agent is.
    pub from_agent_id: Option<AgentId>,
    /// That agent's handle, for the audit log.
    pub from_agent_handle: Option<String>,
    /// The person calling, if a person is.
    pub from_user_id: Option<UserId>,
    /// Why.
    pub reason: String,
    /// The person whose message started the chain.
    pub requested_by: Option<UserId>,
    /// Agent-to-agent hops so far, counting this call.
    pub hop: u32,
    /// Skipper's turn's model and queue.
    pub admission: Admission,
}

/// An approval to ask for.
#[derive(Debug, Clone)]
pub struct NewApproval {
    /// The channel it concerns.
    pub channel_id: ChannelId,
    /// The thread it is asked in.
    pub thread_id: Option<ThreadId>,
    /// The turn waiting for it.
    pub turn_id: Option<TurnId>,
    /// The agent asking.
    pub agent_id: Option<AgentId>,
    /// That agent's handle, for the audit log.
    pub agent_handle: Option<String>,
    /// The person whose request led to it.
    pub asker_id: Option<UserId>,
    /// What kind of action it is.
    pub action: crate::model::ApprovalAction,
    /// Exactly what would be done.
    pub summary: String,
    /// Why.
    pub reason: String,
    /// How long it may wait, in milliseconds.
    pub expires_in_ms: i64,
    /// Set when the asker may approve it themselves: it is approved at once.
    pub approved_by: Option<UserId>,
}

/// A change to a channel's capability policy.
#[derive(Debug, Clone)]
pub struct CapabilityChange {
    /// The channel.
    pub channel_id: ChannelId,
    /// The whole policy after the change.
    pub policy: CapabilityPolicy,
    /// Which capability (`network`, `credential`, `mount`, `package`).
    pub capability: String,
    /// Its details, for the grant log.
    pub detail: serde_json::Value,
    /// A sentence for people.
    pub description: String,
    /// Whether it narrows (revokes) rather than widens.
    pub revoke: bool,
    /// Who made the change (`@skipper`, or a person's name).
    pub by: String,
    /// The person on whose request it was made.
    pub asker: Option<String>,
    /// The thread to announce it in, with its channel.
    pub announce_in: Option<(ChannelId, ThreadId)>,
}

/// The outcome of checking the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditVerification {
    /// Rows checked.
    pub rows: u64,
    /// The first row whose hash or link does not match, if any.
    pub first_bad_row: Option<i64>,
    /// What was wrong with it.
    pub problem: Option<String>,
}

impl AuditVerification {
    /// Whether the whole chain holds.
    pub fn intact(&self) -> bool {
        self.first_bad_row.is_none()
    }
}

/// An audit row to append.
#[derive(Debug, Clone, Default)]
pub struct AuditRecord {
    /// The channel it concerns.
    pub channel_id: Option<ChannelId>,
    /// The thread.
    pub thread_id: Option<ThreadId>,
    /// The agent that acted (handle).
    pub agent: Option<String>,
    /// The person who asked or acted.
    pub asker: Option<String>,
    /// What was done.
    pub action: String,
    /// A short account of the input.
    pub input_summary: String,
    /// How it ended.
    pub outcome: String,
}

/// Where a page of a channel's threads resumes: just after the last thread
/// of the page before, in the list's order (`updated_at` then id, both
/// descending). Keyed on values, not on a position, so threads that change
/// meanwhile neither repeat nor push others past the page boundary: a thread
/// updated after its page was read moves to the head of the list (ahead of
/// every cursor), which a reader learns from its `thread.updated` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadCursor {
    /// The last listed thread's `updated_at`, as it was listed.
    pub updated_at: Timestamp,
    /// The last listed thread's id.
    pub id: ThreadId,
}

impl ThreadCursor {
    /// The cursor for the page after one ending with `thread`.
    pub fn after(thread: &Thread) -> Self {
        ThreadCursor {
            updated_at: thread.updated_at,
            id: thread.id,
        }
    }

    /// [`ThreadCursor::after`] for a listing of `channel`'s threads: a
    /// thread of another channel marks no place in it, so it is invalid
    /// input rather than a page cut at its time.
    pub fn after_in(thread: &Thread, channel: ChannelId) -> Result<Self> {
        if thread.channel_id != channel {
            return Err(crate::error::Error::invalid(
                "page",
                format!(
                    "thread {} is in another channel; page back from one of this channel's threads",
                    thread.id
                ),
            ));
        }
        Ok(ThreadCursor::after(thread))
    }
}

/// Which of a channel's threads to list, most recently active first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPage {
    /// Only threads after this one in the list's order (the next page).
    pub before: Option<ThreadCursor>,
    /// `Some(true)`: only archived threads; `Some(false)`: all but archived
    /// ones; `None`: every thread.
    pub archived: Option<bool>,
    /// When not empty, only threads whose title or summary contains any of
    /// these words (case-insensitively, as written: no stemming).
    pub titled: Vec<String>,
    /// At most this many threads.
    pub limit: usize,
}

impl ThreadPage {
    /// The first `limit` threads of every status.
    pub fn first(limit: usize) -> Self {
        ThreadPage {
            before: None,
            archived: None,
            titled: Vec::new(),
            limit,
        }
    }
}
