//! Where commands send their work: a data directory opened in this process
//! ([`Local`]) or a running server ([`Remote`], with `--server URL --token T`).
//!
//! Commands are written once, against [`Backend`]: both implementations
//! return helm-core's own types (the server's JSON reads straight into them),
//! so a command prints the same text and exits with the same code either way.

mod local;
mod remote;

use std::io::BufRead;

use async_trait::async_trait;
use helm_core::events::Event;
use helm_core::exec::{FileBytes, FileEntry, FileText};
use helm_core::memory::import::ImportReport;
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    MemoryId, MemoryItem, ModelChoice, ResolvedModel, Role, Thread, ThreadId, ThreadStatus,
    ToolAction, User,
};
use helm_core::provider::ProviderConfig;
use helm_core::store::{ChannelRecord, MemoryFilter, ThreadCursor};
use helm_core::{MemoryNote, NewChannel, NewNote, PersonChange, PostedMessage};
use helm_core::{ThreadFilter, ThreadList};

pub use helm_client::{ChannelDetail, StatusView, ThreadView};
pub use local::{Local, resolved_options};
pub use remote::Remote;

/// What a history import wrote, and how much of it was indexed for meaning.
#[derive(Debug, Clone)]
pub struct Imported {
    /// What the import wrote.
    pub report: ImportReport,
    /// How long the import itself took, in seconds (indexing not counted).
    pub seconds: f64,
    /// Items embedded for meaning-based recall here, after the import.
    pub embedded: u64,
    /// Whether a server indexes the items in the background instead.
    pub indexed_by_server: bool,
}

/// Reports `(done, total)` while imported items are embedded.
pub type Progress<'a> = &'a mut (dyn FnMut(u64, u64) + Send);

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

    /// Writes a thread's session summary now.
    async fn summarize_thread(
        &self,
        id: ThreadId,
    ) -> anyhow::Result<helm_core::runtime::summary::WrittenSummary>;

    /// Whether a resolved thread's summary is written without being asked
    /// (a server's runtime does it in the background), so resolving need
    /// not ask for one.
    fn summarizes_resolved_threads(&self) -> bool {
        false
    }

    /// A channel's memory records, newest first.
    async fn memory(&self, channel: &str, filter: MemoryFilter) -> anyhow::Result<Vec<MemoryItem>>;

    /// Adds a memory record by hand, as the acting user.
    async fn remember(&self, channel: &str, note: MemoryNote) -> anyhow::Result<MemoryItem>;

    /// Replaces a record's text; the old record is kept as superseded.
    async fn edit_memory(&self, id: MemoryId, content: &str) -> anyhow::Result<MemoryItem>;

    /// Forgets a record (kept for provenance, never recalled).
    async fn forget_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem>;

    /// Brings a forgotten record back to current.
    async fn restore_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem>;

    /// Pins or unpins a record.
    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> anyhow::Result<MemoryItem>;

    /// Recalls from a channel's memory and history. A local backend first
    /// embeds the channel's items that wait for meaning-based recall.
    async fn recall(&self, channel: &str, query: RecallQuery) -> anyhow::Result<Vec<RecallHit>>;

    /// Imports a JSON Lines history into a channel. A local backend then
    /// embeds what it wrote (unless `embed` is false), reporting progress;
    /// a server does that in the background by itself.
    async fn import_history(
        &self,
        channel: &str,
        history: Box<dyn BufRead + Send>,
        embed: bool,
        progress: Progress<'_>,
    ) -> anyhow::Result<Imported>;

    /// A directory's entries in a channel's workspace (or a file's).
    async fn list_files(&self, channel: &str, path: &str) -> anyhow::Result<Vec<FileEntry>>;

    /// One entry of a channel's workspace.
    async fn stat_file(&self, channel: &str, path: &str) -> anyhow::Result<FileEntry>;

    /// A text file of a channel's workspace.
    async fn read_text(&self, channel: &str, path: &str) -> anyhow::Result<FileText>;

    /// A file's bytes, at most `limit` of them (a server may refuse a file
    /// over its own download limit instead).
    async fn read_bytes(
        &self,
        channel: &str,
        path: &str,
        limit: usize,
    ) -> anyhow::Result<FileBytes>;

    /// Writes `bytes` to the file `path` of a channel's workspace (parents
    /// made), recorded as an upload by the acting user. With `create`, a
    /// file already there is a conflict and left as it was.
    async fn put_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> anyhow::Result<FileEntry>;

    /// Saves a quick note as a new Markdown file in a channel's
    /// `/workspace/notes`, recorded as an upload by the acting user.
    async fn save_note(&self, channel: &str, note: NewNote) -> anyhow::Result<FileEntry>;

    /// The workspace at a glance.
    async fn status(&self) -> anyhow::Result<StatusView>;

    /// How recall works, when this process knows without asking (a data
    /// directory opened here); a server reports it in its status.
    fn recall_mode(&self) -> Option<helm_core::memory::config::RecallMode> {
        None
    }
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
    /// Sets or clears a channel's model; returns what now serves it and how
    /// the new choice was checked.
    async fn set_channel_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> anyhow::Result<(Option<ResolvedModel>, Option<helm_core::ModelCheck>)>;
    /// Renames a channel; its agent keeps its handle.
    async fn rename_channel(&self, channel: &str, name: &str) -> anyhow::Result<ChannelRecord>;
    /// Deletes an archived channel for good.
    async fn delete_channel(&self, channel: &str, confirm: &str) -> anyhow::Result<()>;
    /// Posts a message as the acting user.
    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> anyhow::Result<PostedMessage>;
    /// A page of a channel's threads, with where the next one starts.
    async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> anyhow::Result<ThreadList>;
    /// Where a listing of a channel's threads resumes after thread `id`.
    async fn thread_cursor(&self, channel: &str, id: ThreadId) -> anyhow::Result<ThreadCursor>;
    /// A thread with its transcript and turns.
    async fn thread(&self, id: ThreadId) -> anyhow::Result<ThreadView>;
    /// A thread with a page of its transcript: the `limit` messages just
    /// before message `before` (its newest without it), oldest first.
    async fn thread_page(
        &self,
        id: ThreadId,
        before: Option<helm_core::model::MessageId>,
        limit: usize,
    ) -> anyhow::Result<ThreadView>;
    /// Resolves, reopens or archives a thread.
    async fn set_thread_status(&self, id: ThreadId, status: ThreadStatus)
    -> anyhow::Result<Thread>;
    /// Gives a thread a new title.
    async fn rename_thread(&self, id: ThreadId, title: &str) -> anyhow::Result<Thread>;
    /// Stops a thread's work.
    async fn stop_thread(&self, id: ThreadId) -> anyhow::Result<()>;
    /// Runs a thread's failed last turn again; the new turn, queued.
    async fn retry_thread(&self, id: ThreadId) -> anyhow::Result<helm_core::model::Turn>;
    /// A page of a channel's tool journal: the `limit` newest actions
    /// older than `before` (the newest without it), newest last.
    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        before: Option<helm_core::model::ToolActionId>,
        limit: usize,
    ) -> anyhow::Result<(ChannelRecord, Vec<ToolAction>)>;
    /// Registers a provider; with `replace`, replaces the one of that name.
    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> anyhow::Result<ProviderConfig>;
    /// The provider registry.
    async fn providers(&self) -> anyhow::Result<Vec<ProviderConfig>>;
    /// What a registered provider serves, asked of it now.
    async fn provider_models(&self, name: &str) -> anyhow::Result<helm_core::ProviderModels>;
    /// Adds a person.
    async fn add_user(
        &self,
        name: &str,
        role: Role,
        password: Option<String>,
    ) -> anyhow::Result<User>;
    /// Everyone.
    async fn users(&self) -> anyhow::Result<Vec<User>>;
    /// Changes a person's role and/or whether they are active, by name.
    async fn change_person(&self, name: &str, change: PersonChange) -> anyhow::Result<User>;
    /// The person this backend acts as.
    async fn me(&self) -> anyhow::Result<User>;
    /// Makes sure someone will run the turns a post admits: a local backend
    /// starts driving them here; a server already does.
    async fn drive_turns(&self) -> anyhow::Result<()>;
    /// Whether turns run in this process ([`Backend::drive_turns`]), so
    /// that they end when it stops following them.
    fn runs_turns_here(&self) -> bool;
    /// Stops driving turns here (letting running ones finish).
    async fn stop_driving(&self);
    /// Opens a stream of the events that happen from now on.
    async fn events(&self) -> anyhow::Result<Box<dyn EventSource>>;
}
