//! Where commands send their work: a data directory opened in this process
//! ([`Local`]) or a running server ([`Remote`], with `--server URL --token T`).
//!
//! Commands are written once, against [`Backend`]: both implementations
//! return helm-core's own types (the server's JSON reads straight into them),
//! so a command prints the same text and exits with the same code either way.

mod local;
mod remote;
mod stream;

use async_trait::async_trait;
use helm_core::events::Event;
use helm_core::model::{
    Message, ModelChoice, ResolvedModel, Role, Thread, ThreadId, ThreadStatus, ToolAction, Turn,
    User,
};
use helm_core::provider::ProviderConfig;
use helm_core::store::{ChannelRecord, StoreStats};
use helm_core::{NewChannel, PostedMessage};
use serde::{Deserialize, Serialize};

pub use local::Local;
pub use remote::{Remote, RemoteError};

/// A channel with the model that serves it and, where known, its workspace
/// directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChannelDetail {
    /// The channel, its agent and profile.
    #[serde(flatten)]
    pub record: ChannelRecord,
    /// The model that will serve the next turn.
    #[serde(default)]
    pub model: Option<ResolvedModel>,
    /// The workspace directory (on the server, for a remote one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_dir: Option<String>,
}

/// The workspace at a glance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusView {
    /// Where the workspace lives: a data directory, or a server's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// The workspace.
    pub workspace: helm_core::model::Workspace,
    /// The Captain.
    pub captain: User,
    /// Skipper.
    pub skipper: helm_core::model::Agent,
    /// Counts.
    #[serde(flatten)]
    pub stats: StoreStats,
}

/// A thread with its transcript and turns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadView {
    /// The thread.
    pub thread: Thread,
    /// Its messages in server order.
    pub messages: Vec<Message>,
    /// Its turns, oldest first.
    pub turns: Vec<Turn>,
}

/// Events as they happen, from the moment the source was opened.
#[async_trait]
pub trait EventSource: Send {
    /// The next event.
    async fn next(&mut self) -> anyhow::Result<Event>;
}

/// Everything the commands ask of a workspace.
#[async_trait]
pub trait Backend: Send + Sync {
    /// Approval requests (pending ones only, if asked).
    async fn approvals(
        &self,
        pending_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Approval>>;

    /// Approves or denies a pending request.
    async fn decide(
        &self,
        id: i64,
        approve: bool,
        note: Option<String>,
    ) -> anyhow::Result<helm_core::model::Approval>;

    /// Sets whether an action needs approval (workspace-wide, or in one channel).
    async fn set_approval_rule(
        &self,
        action: helm_core::model::ApprovalAction,
        required: bool,
        channel: Option<&str>,
    ) -> anyhow::Result<()>;

    /// Calls for Skipper (open ones only, if asked).
    async fn escalations(
        &self,
        open_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Escalation>>;

    /// The audit log's newest rows.
    async fn audit(
        &self,
        channel: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<helm_core::model::AuditEntry>>;

    /// Checks the audit log's hash chain.
    async fn verify_audit(&self) -> anyhow::Result<helm_core::store::AuditVerification>;

    /// Writes a thread's session summary now. A server summarises resolved
    /// threads by itself, so the remote backend does not offer this.
    async fn summarize_thread(
        &self,
        id: ThreadId,
    ) -> anyhow::Result<helm_core::runtime::summary::WrittenSummary> {
        let _ = id;
        Err(helm_core::Error::invalid(
            "--server",
            "a server writes a resolved thread's summary by itself; summarise on a data directory",
        )
        .into())
    }

    /// The workspace at a glance.
    async fn status(&self) -> anyhow::Result<StatusView>;
    /// Creates a channel.
    async fn create_channel(&self, request: NewChannel) -> anyhow::Result<ChannelDetail>;
    /// Channels by name.
    async fn channels(&self, include_archived: bool) -> anyhow::Result<Vec<ChannelRecord>>;
    /// One channel.
    async fn channel(&self, channel: &str) -> anyhow::Result<ChannelDetail>;
    /// Archives a channel.
    async fn archive(&self, channel: &str) -> anyhow::Result<ChannelRecord>;
    /// Restores a channel.
    async fn restore(&self, channel: &str) -> anyhow::Result<ChannelRecord>;
    /// Sets or clears a channel's model; returns what now serves it.
    async fn set_channel_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> anyhow::Result<Option<ResolvedModel>>;
    /// Deletes an archived channel for good.
    async fn delete_channel(&self, channel: &str, confirm: &str) -> anyhow::Result<()>;
    /// Posts a message as the acting user.
    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> anyhow::Result<PostedMessage>;
    /// A channel's threads.
    async fn threads(&self, channel: &str, limit: usize) -> anyhow::Result<Vec<Thread>>;
    /// A thread with its transcript and turns.
    async fn thread(&self, id: ThreadId) -> anyhow::Result<ThreadView>;
    /// Resolves or reopens a thread.
    async fn set_thread_status(&self, id: ThreadId, status: ThreadStatus)
    -> anyhow::Result<Thread>;
    /// Stops a thread's work.
    async fn stop_thread(&self, id: ThreadId) -> anyhow::Result<()>;
    /// A channel's tool journal.
    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> anyhow::Result<(ChannelRecord, Vec<ToolAction>)>;
    /// Registers a provider.
    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
    ) -> anyhow::Result<ProviderConfig>;
    /// The provider registry.
    async fn providers(&self) -> anyhow::Result<Vec<ProviderConfig>>;
    /// Adds a person.
    async fn add_user(
        &self,
        name: &str,
        role: Role,
        password: Option<String>,
    ) -> anyhow::Result<User>;
    /// Everyone.
    async fn users(&self) -> anyhow::Result<Vec<User>>;
    /// Makes sure someone will run the turns a post admits: a local backend
    /// starts driving them here; a server already does.
    async fn drive_turns(&self) -> anyhow::Result<()>;
    /// Stops driving turns here (letting running ones finish).
    async fn stop_driving(&self);
    /// Opens a stream of the events that happen from now on.
    async fn events(&self) -> anyhow::Result<Box<dyn EventSource>>;
}
