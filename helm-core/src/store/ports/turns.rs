//! The [`TurnStore`] port: turns and the work they do: the queue, claiming,
//! streaming, ending, the tool journal and the artifacts tools leave.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::error::Result;
use crate::model::{
    Artifact, ArtifactKind, ChannelId, ModelChoice, ThreadId, ToolAction, ToolActionId, Turn,
    TurnId, TurnState, User,
};
use crate::store::types::{
    Admission, LeaseRenewal, NewToolAction, Repaired, ToolActionOutcome, TurnFinish,
};

/// Turns and the work they do: the queue, claiming, streaming, ending, the tool
/// journal and the artifacts tools leave.
#[async_trait]
pub trait TurnStore: Send + Sync + 'static {
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

    /// Keeps this node's claim on `turns` (running turns it started) for
    /// another lease period, and says which among them it no longer holds
    /// (another node found their lease lapsed and ended them, so this node
    /// stops them and its writes to them are refused) and which someone
    /// asked another node to stop ([`TurnStore::request_turn_stop`]). A
    /// store that one driver holds alone (SQLite, under the data root's
    /// driver lock) keeps no leases and finds nothing.
    async fn renew_turn_leases(&self, turns: Vec<TurnId>) -> Result<LeaseRenewal>;

    /// Asks whichever node runs `turn` to stop it, on behalf of `by`; the
    /// node sees the request when it next renews its lease. True if the
    /// turn is running and leased (the request is recorded), false if not.
    /// A store that one driver holds alone has no other node to ask: its
    /// running turns are the caller's own, and this is always false.
    async fn request_turn_stop(&self, turn: TurnId, by: &str) -> Result<bool>;

    /// Running turns no live node is running, oldest first: those whose
    /// lease lapsed (their node stopped renewing it: it died or lost the
    /// database). In a store one driver holds alone, every running turn,
    /// since a running turn the caller is not running was left by a
    /// stopped process. The caller leaves out its own live turns and marks
    /// the rest interrupted.
    async fn orphaned_turns(&self) -> Result<Vec<Turn>>;

    /// Appends streamed text to a running turn's reply; false once the reply is final.
    async fn append_reply(&self, turn: TurnId, delta: String) -> Result<bool>;

    /// Moves a live turn to its end state; `None` if it had already ended.
    async fn finish_turn(&self, turn: TurnId, finish: TurnFinish) -> Result<Option<Turn>>;

    /// Runs a failed or interrupted turn again for `by`: Helm's note in the
    /// thread that `by` asked the agent to try again, and a new turn of the
    /// same agent woken by it, queued with `admission` (a new pending reply,
    /// its events). Refused (a conflict) unless the turn ended failed or
    /// interrupted and is its thread's latest, so of two people retrying at
    /// once only one starts it.
    async fn retry_turn(&self, turn: TurnId, by: User, admission: Admission) -> Result<Turn>;

    /// How many turns are in each state.
    async fn turn_counts(&self) -> Result<Vec<(TurnState, u64)>>;

    /// Brings records a stopped process left behind in line with what
    /// happened: tool actions still `running` whose turn has ended (or that
    /// have none) end `interrupted`, and each thread's status follows its
    /// latest ended turn. Run when a driver starts, after its running turns
    /// were marked interrupted.
    async fn repair_after_stop(&self) -> Result<Repaired>;

    /// The hop of each of a thread's turns admitted at or after `since`
    /// (of all its turns with `None`), oldest first. The rails count the
    /// agent-woken ones (hop > 0) since a person last wrote.
    async fn turn_hops_since(&self, thread: ThreadId, since: Option<Timestamp>)
    -> Result<Vec<u32>>;

    /// Journals the start of a tool call.
    async fn start_tool_action(&self, action: NewToolAction) -> Result<ToolAction>;

    /// Journals how a tool call ended.
    async fn finish_tool_action(
        &self,
        id: ToolActionId,
        outcome: ToolActionOutcome,
    ) -> Result<ToolAction>;

    /// The tool journal of a channel (or a thread): the `limit` newest
    /// actions older than `before` (all when `None`), newest last.
    async fn tool_actions(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<ToolActionId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>>;

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
}
