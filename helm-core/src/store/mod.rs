//! The `Store` port: durable state and the event log.
//!
//! Store methods are domain operations, each one transaction: provisioning a
//! channel writes every row of the new agent world and its events at once, or
//! nothing. The port is async; an implementation must never block the caller's
//! runtime (`SqliteStore` runs SQLite on blocking threads).
//!
//! Invariants that matter (one resident agent per channel, one Skipper, unique
//! live channel names) are enforced by the database itself, not only here, so a
//! caller that goes around the facade still cannot break them.

#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;
mod types;

use async_trait::async_trait;
use jiff::Timestamp;
use tokio::sync::broadcast;

#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;
pub use types::{
    Admission, AdmissionModel, AuditRecord, AuditVerification, Bootstrap, BootstrapPlan,
    CapabilityChange, CaptainSetup, ChannelFilter, ChannelPlan, ChannelRecord, ChannelUpdate,
    Escalated, InviteAcceptance, JournalEntry, MemoryFilter, NewAgent, NewApiToken, NewApproval,
    NewEscalation, NewInvite, NewMemory, NewOtKey, NewPost, NewThreadSummary, NewToolAction,
    NewUser, PolicyScope, Posted, Repaired, Resume, StoreStats, ThreadTail, ToolActionOutcome,
    TurnFinish, WorldHook, message_tokens,
};

use crate::auth::{ApiToken, Invite, OtKey, Session};
use crate::error::Result;
use crate::events::Event;
use crate::memory::import::{ImportPlan, ImportReport};
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::model::{
    Actor, Agent, AgentId, Binding, ChannelId, ChannelRef, ChannelStatus, Member, MemberRole,
    Message, MessageId, ModelChoice, ModelPolicy, Thread, ThreadId, ThreadStatus, ToolAction,
    ToolActionId, Turn, TurnId, TurnState, User, UserId, Workspace,
};
use crate::model::{
    Approval, ApprovalAction, ApprovalStatus, Artifact, ArtifactKind, AuditEntry, CapabilityPolicy,
    Escalation, EscalationId, EscalationStatus, MemoryId, MemoryItem,
};
use crate::model::{ChannelUnread, FeedItem, ReadMarker};
use crate::provider::ProviderConfig;

/// Durable state of one workspace, and its event log.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Creates the workspace, the Captain, `#main` and Skipper if they do not
    /// exist yet; returns what exists either way. Idempotent.
    async fn bootstrap(&self, plan: BootstrapPlan, world: WorldHook) -> Result<Bootstrap>;

    /// The workspace, if bootstrapped.
    async fn workspace(&self) -> Result<Option<Workspace>>;

    /// Adds a user.
    async fn insert_user(&self, user: NewUser) -> Result<User>;

    /// A user by id.
    async fn user(&self, id: UserId) -> Result<User>;

    /// A user by name.
    async fn user_by_name(&self, name: &str) -> Result<User>;

    /// Every user, oldest first.
    async fn list_users(&self) -> Result<Vec<User>>;

    /// Provisions a channel and its whole agent world in one transaction:
    /// channel, membership, agent (with a free handle derived from the plan),
    /// profile, binding, memory namespace, inherited model policy, journal
    /// record, ready announcement and events. `world` runs inside the
    /// transaction after the rows are written; if it fails, nothing is kept.
    async fn provision_channel(&self, plan: ChannelPlan, world: WorldHook)
    -> Result<ChannelRecord>;

    /// A channel with its agent and profile.
    async fn channel(&self, channel: &ChannelRef) -> Result<ChannelRecord>;

    /// Channels, by name.
    async fn list_channels(&self, filter: ChannelFilter) -> Result<Vec<ChannelRecord>>;

    /// Archives or restores a channel, pausing or waking its agent.
    /// Archiving also cancels the channel's queued turns, each with a
    /// visible note; from then on no turn of the channel starts.
    async fn set_channel_status(
        &self,
        channel: ChannelId,
        status: ChannelStatus,
        actor: Actor,
    ) -> Result<ChannelRecord>;

    /// Permanently removes a channel's rows and its agent. `world` runs inside
    /// the transaction (to move the on-disk tree aside); if it fails, nothing
    /// is removed.
    async fn delete_channel(
        &self,
        channel: ChannelId,
        actor: Actor,
        world: WorldHook,
    ) -> Result<()>;

    /// Adds an unbound agent. Provisioning does this itself; the method exists
    /// for repair tools and for proving the binding rules.
    async fn insert_agent(&self, agent: NewAgent) -> Result<Agent>;

    /// Binds a resident agent to a channel. The database refuses a second agent
    /// for a channel, a second channel for an agent, and any Skipper binding.
    async fn bind_agent(&self, agent: AgentId, channel: ChannelId) -> Result<Binding>;

    /// The stored model choices that apply to a turn in `channel` (and
    /// `thread`, if given); the fallback level is left empty for the caller.
    async fn model_policy(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<ModelPolicy>;

    /// Sets (or with `None`, clears back to inherit) the choice at one level,
    /// with a journal record and a `model.changed` event.
    async fn set_model_policy(
        &self,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
        actor: Actor,
    ) -> Result<()>;

    /// The lifecycle journal, newest last; of one channel or of everything.
    async fn journal(&self, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>>;

    /// Adds a provider to the registry, or replaces the one of that name.
    async fn put_provider(&self, config: ProviderConfig) -> Result<()>;

    /// A provider by name.
    async fn provider(&self, name: &str) -> Result<ProviderConfig>;

    /// Every provider, by name.
    async fn providers(&self) -> Result<Vec<ProviderConfig>>;

    /// Posts a human message: opens a thread or continues one (reopening it if
    /// resolved or failed) and, if the message wakes the resident agent,
    /// admits its turn with a pending reply, all in one transaction.
    async fn post_message(&self, post: NewPost) -> Result<Posted>;

    /// A thread.
    async fn thread(&self, id: ThreadId) -> Result<Thread>;

    /// A channel's threads, most recently active first.
    async fn threads(&self, channel: ChannelId, limit: usize) -> Result<Vec<Thread>>;

    /// A thread's messages in server order, up to and including `up_to`.
    async fn thread_messages(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
    ) -> Result<Vec<Message>>;

    /// A thread's first message and its newest messages up to and
    /// including `up_to` whose [`message_tokens`] fit `budget_tokens` (the
    /// first message's cost counted first), read newest first along the
    /// thread's index so the cost follows the budget, not the thread; with
    /// how many messages were left out between them and how many of those
    /// the thread's newest summary does not cover.
    async fn thread_tail(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
        budget_tokens: usize,
    ) -> Result<ThreadTail>;

    /// A message.
    async fn message(&self, id: MessageId) -> Result<Message>;

    /// Resolves, reopens or archives a thread.
    async fn set_thread_status(
        &self,
        thread: ThreadId,
        status: ThreadStatus,
        actor: Actor,
    ) -> Result<Thread>;

    /// A turn.
    async fn turn(&self, id: TurnId) -> Result<Turn>;

    /// A thread's turns, oldest first.
    async fn thread_turns(&self, thread: ThreadId) -> Result<Vec<Turn>>;

    /// Queued turns that may start now, oldest first (one per thread, within
    /// each agent's `capacity` of running turns, never in an archived channel).
    async fn runnable_turns(&self, capacity: u32) -> Result<Vec<Turn>>;

    /// Running turns, oldest first.
    async fn running_turns(&self) -> Result<Vec<Turn>>;

    /// Claims a queued turn (it becomes running); `None` if it was not claimable.
    async fn start_turn(
        &self,
        turn: TurnId,
        served_by: Option<ModelChoice>,
    ) -> Result<Option<Turn>>;

    /// Appends streamed text to a running turn's reply; false once the reply is final.
    async fn append_reply(&self, turn: TurnId, delta: String) -> Result<bool>;

    /// Moves a live turn to its end state; `None` if it had already ended.
    async fn finish_turn(&self, turn: TurnId, finish: TurnFinish) -> Result<Option<Turn>>;

    /// Journals the start of a tool call.
    async fn start_tool_action(&self, action: NewToolAction) -> Result<ToolAction>;

    /// Journals how a tool call ended.
    async fn finish_tool_action(
        &self,
        id: ToolActionId,
        outcome: ToolActionOutcome,
    ) -> Result<ToolAction>;

    /// The tool journal of a channel (or a thread), newest last.
    async fn tool_actions(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>>;

    /// Adds a memory record.
    async fn add_memory(&self, memory: NewMemory) -> Result<MemoryItem>;

    /// Replaces a current record with a new one that supersedes it.
    async fn supersede_memory(&self, id: MemoryId, replacement: NewMemory) -> Result<MemoryItem>;

    /// Marks a record forgotten: kept for provenance, never recalled.
    async fn forget_memory(&self, id: MemoryId) -> Result<MemoryItem>;

    /// Pins or unpins a current record.
    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> Result<MemoryItem>;

    /// A memory record.
    async fn memory(&self, id: MemoryId) -> Result<MemoryItem>;

    /// A channel's memory records, pinned first, then newest first.
    async fn list_memory(
        &self,
        channel: ChannelId,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>>;

    /// Writes a checked history into a channel in one transaction.
    async fn import_history(
        &self,
        channel: ChannelId,
        plan: ImportPlan,
        actor: Actor,
    ) -> Result<ImportReport>;

    /// The best word matches of an FTS5 expression in a channel, best first.
    async fn recall_lexical(
        &self,
        channel: ChannelId,
        fts_query: &str,
        depth: usize,
    ) -> Result<Vec<(ItemKey, f64)>>;

    /// Recall's view of the given items (unknown keys are left out).
    async fn recall_items(&self, keys: Vec<ItemKey>) -> Result<Vec<CandidateItem>>;

    /// The external ids of a thread's messages.
    async fn thread_external_ids(&self, thread: ThreadId) -> Result<Vec<String>>;

    /// Threads of a channel opened within `[from, to]` (Unix milliseconds).
    async fn threads_opened_between(
        &self,
        channel: ChannelId,
        from: i64,
        to: i64,
    ) -> Result<Vec<ThreadId>>;

    /// The names that wrote in a channel (people, guests, agents).
    async fn channel_authors(&self, channel: ChannelId) -> Result<Vec<String>>;

    /// Items waiting to be embedded, with the text to embed.
    async fn embed_backlog(
        &self,
        channel: Option<ChannelId>,
        limit: usize,
    ) -> Result<Vec<(ItemKey, ChannelId, String)>>;

    /// How many items wait to be embedded.
    async fn embed_backlog_len(&self, channel: Option<ChannelId>) -> Result<u64>;

    /// Stores vectors for `model` and takes their items off the queue.
    async fn put_embeddings(
        &self,
        model: &str,
        vectors: Vec<(ItemKey, ChannelId, Vec<f32>)>,
    ) -> Result<()>;

    /// A channel's vectors for `model`.
    async fn channel_vectors(
        &self,
        model: &str,
        channel: ChannelId,
    ) -> Result<Vec<(ItemKey, Vec<f32>)>>;

    /// Records files as artifacts of a channel (and thread). New paths are
    /// added; with `touch`, known ones are marked changed. Returns those added.
    async fn record_artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        kind: ArtifactKind,
        created_by: &str,
        paths: Vec<String>,
        touch: bool,
    ) -> Result<Vec<Artifact>>;

    /// A channel's artifacts (or one thread's), oldest first.
    async fn artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Artifact>>;

    /// Stores a session summary: its row, the thread's rolling summary, and
    /// a `summary` memory record (superseding the thread's previous one).
    async fn put_thread_summary(&self, summary: NewThreadSummary) -> Result<MemoryId>;

    /// Threads whose summary is due (resolved, or quiet since `idle_before`
    /// in Unix milliseconds), oldest first.
    async fn threads_due_for_summary(
        &self,
        idle_before: i64,
        limit: usize,
    ) -> Result<Vec<ThreadId>>;

    /// Calls Skipper into a thread: opens the call (record, visible note,
    /// Skipper's turn), or, when the thread has one open already, adds the
    /// reason to it visibly (the database allows one open call per thread).
    async fn escalate(&self, escalation: NewEscalation) -> Result<Escalated>;

    /// Resolves a call for Skipper or hands it to the Captain; with `resume`,
    /// wakes the channel agent that called (with that chain).
    async fn settle_escalation(
        &self,
        id: EscalationId,
        status: EscalationStatus,
        outcome: String,
        resume: Option<Resume>,
    ) -> Result<(Escalation, Option<Turn>)>;

    /// An escalation.
    async fn escalation(&self, id: EscalationId) -> Result<Escalation>;

    /// Escalations, oldest first; only open ones if asked.
    async fn escalations(&self, open_only: bool) -> Result<Vec<Escalation>>;

    /// Asks for an approval (approved at once when `approved_by` is set).
    async fn request_approval(&self, approval: NewApproval) -> Result<Approval>;

    /// Approves, denies or expires a pending approval.
    async fn decide_approval(
        &self,
        id: i64,
        status: ApprovalStatus,
        by: Option<UserId>,
        note: Option<String>,
    ) -> Result<Approval>;

    /// An approval.
    async fn approval(&self, id: i64) -> Result<Approval>;

    /// Approvals, oldest first; only pending ones if asked.
    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>>;

    /// Whether `action` needs approval in `channel`.
    async fn approval_required(&self, channel: ChannelId, action: ApprovalAction) -> Result<bool>;

    /// Sets whether `action` needs approval, for the workspace (`None`) or a channel.
    async fn set_approval_rule(
        &self,
        channel: Option<ChannelId>,
        action: ApprovalAction,
        required: bool,
    ) -> Result<()>;

    /// Changes a channel's capability policy, visibly and on the record.
    async fn change_capabilities(&self, change: CapabilityChange) -> Result<CapabilityPolicy>;

    /// Appends to the audit log.
    async fn audit(&self, entry: AuditRecord) -> Result<()>;

    /// The newest `limit` audit rows (of one channel, or all), oldest first.
    async fn audit_log(&self, channel: Option<ChannelId>, limit: usize) -> Result<Vec<AuditEntry>>;

    /// Checks the audit log's hash chain.
    async fn verify_audit(&self) -> Result<AuditVerification>;

    /// Turns an agent woke (hop > 0) in a thread since a person last wrote there.
    async fn agent_turns_since_human(&self, thread: ThreadId) -> Result<u32>;

    /// Posts a note from Helm in a channel (and thread).
    async fn post_note(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        text: String,
    ) -> Result<Message>;

    /// Counts of what the store holds.
    async fn stats(&self) -> Result<StoreStats>;

    /// Durable events with `seq > after`, oldest first, at most `limit`.
    async fn events_after(&self, after: u64, limit: usize) -> Result<Vec<Event>>;

    /// Live events as they are committed, in `seq` order. Subscribe before
    /// reading [`Store::events_after`] to resume without a gap.
    fn subscribe(&self) -> broadcast::Receiver<Event>;

    // Signing in, membership and paging. Appended here, at the end, so
    // branches that add methods merge without conflicts.

    /// Whether first-run setup is done (the Captain has a password).
    async fn setup_done(&self) -> Result<bool>;

    /// Completes first-run setup: names the Captain and sets their password,
    /// only while the Captain has none ([`Error::Conflict`](crate::Error) after).
    async fn complete_setup(&self, setup: CaptainSetup) -> Result<User>;

    /// A user and their password hash (if they have one), by name.
    async fn user_credentials(&self, name: &str) -> Result<Option<(User, Option<String>)>>;

    /// Sets or clears a user's password hash.
    async fn set_password_hash(&self, user: UserId, hash: Option<String>) -> Result<()>;

    /// Stores a session (and drops expired ones).
    async fn insert_session(
        &self,
        user: UserId,
        secret_hash: String,
        expires: Timestamp,
    ) -> Result<Session>;

    /// The unexpired session with this secret hash, with its user.
    async fn session_user(&self, secret_hash: &str) -> Result<Option<(Session, User)>>;

    /// Ends a session; false if there was none.
    async fn delete_session(&self, secret_hash: &str) -> Result<bool>;

    /// Stores an API token.
    async fn insert_api_token(&self, token: NewApiToken) -> Result<ApiToken>;

    /// A user's API tokens, revoked ones included, oldest first.
    async fn api_tokens(&self, user: UserId) -> Result<Vec<ApiToken>>;

    /// The live (unrevoked, unexpired) API token with this secret hash, with
    /// its user; records the use.
    async fn api_token_user(&self, secret_hash: &str) -> Result<Option<(ApiToken, User)>>;

    /// Revokes one of `user`'s API tokens.
    async fn revoke_api_token(&self, user: UserId, id: i64) -> Result<ApiToken>;

    /// Stores an invitation.
    async fn insert_invite(&self, invite: NewInvite) -> Result<Invite>;

    /// Every invitation, newest first.
    async fn invites(&self) -> Result<Vec<Invite>>;

    /// Revokes an unused invitation.
    async fn revoke_invite(&self, id: i64) -> Result<Invite>;

    /// Accepts a live invitation: adds the person with the invitation's role
    /// and marks it used, in one transaction.
    async fn accept_invite(&self, acceptance: InviteAcceptance) -> Result<User>;

    /// A channel's members, oldest first.
    async fn channel_members(&self, channel: ChannelId) -> Result<Vec<Member>>;

    /// Makes a person a member of a channel.
    async fn add_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        role: MemberRole,
        actor: Actor,
    ) -> Result<Member>;

    /// Removes a person from a channel.
    async fn remove_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        actor: Actor,
    ) -> Result<()>;

    /// The channels `user` belongs to, and every public one.
    async fn visible_channel_ids(&self, user: UserId) -> Result<Vec<ChannelId>>;

    /// Changes a channel's purpose (and its agent's) or its agent's instructions.
    async fn update_channel(
        &self,
        channel: ChannelId,
        update: ChannelUpdate,
        actor: Actor,
    ) -> Result<ChannelRecord>;

    /// A page of a channel's messages (or one thread's) after a message id,
    /// oldest first.
    async fn messages_page(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        after: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>>;

    /// How many turns are in each state.
    async fn turn_counts(&self) -> Result<Vec<(TurnState, u64)>>;

    // Open Terminal keys (appended, as above).

    /// Stores a channel's Open Terminal key. With `replace`, its live key
    /// is revoked in the same transaction; without, a live key is a
    /// [`Error::Conflict`](crate::Error).
    async fn insert_ot_key(&self, key: NewOtKey, replace: bool) -> Result<OtKey>;

    /// A channel's live Open Terminal key, if any.
    async fn ot_key(&self, channel: ChannelId) -> Result<Option<OtKey>>;

    /// The live Open Terminal key with this secret hash; records the use.
    async fn ot_key_by_hash(&self, secret_hash: &str) -> Result<Option<OtKey>>;

    /// Revokes a channel's live Open Terminal key.
    async fn revoke_ot_key(&self, channel: ChannelId) -> Result<OtKey>;

    // Repair after a crash (appended, as above).

    /// Brings records a stopped process left behind in line with what
    /// happened: tool actions still `running` whose turn has ended (or that
    /// have none) end `interrupted`, and each thread's status follows its
    /// latest ended turn. Run when a driver starts, after its running turns
    /// were marked interrupted.
    async fn repair_after_stop(&self) -> Result<Repaired>;

    // MCP tool pins (appended, as above).

    /// The approved definitions of a channel's MCP server's tools.
    async fn mcp_pins(&self, channel: ChannelId, server: &str) -> Result<Vec<crate::mcp::McpPin>>;

    /// Pins an approved definition (replacing an older pin of the tool),
    /// with an audit row naming `by`, the person who approved it.
    async fn put_mcp_pin(&self, pin: crate::mcp::McpPin, by: Option<String>) -> Result<()>;

    /// Forgets the pins of a channel's server; returns how many there were.
    async fn clear_mcp_pins(&self, channel: ChannelId, server: &str) -> Result<u64>;

    // Reading: markers, unread counts, the feed (appended, as above).

    /// Moves `user`'s read marker in the message's channel forward to it
    /// (never back); emits `channel.read` when it moved.
    async fn mark_read(&self, user: UserId, message: MessageId) -> Result<ReadMarker>;

    /// What `user` has not read in each of `channels`.
    async fn unread(&self, user: User, channels: Vec<ChannelId>) -> Result<Vec<ChannelUnread>>;

    /// The newest `limit` messages of a channel (or one thread) before
    /// `before` (or the newest of all), oldest first.
    async fn messages_before(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>>;

    /// The newest `limit` entries of a channel's feed before `before`,
    /// oldest first.
    async fn feed(
        &self,
        channel: ChannelId,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<FeedItem>>;

    /// Renames the workspace; emits `workspace.updated`.
    async fn rename_workspace(&self, name: String) -> Result<Workspace>;
}
