//! Where the Python objects send their work: a data directory opened in
//! this process ([`Embedded`], `Helm.open(path)`) or a running helm-http
//! server ([`Connected`], `Helm.connect(url, token)`).
//!
//! The Python classes are written once, against [`Backend`]; both
//! implementations answer helm-core's own types, so a script behaves the
//! same either way. What only one of them can do (a provider or a tool
//! that lives in this Python process) says so with a clear error on the
//! other.

mod connected;
mod embedded;

use std::sync::Arc;

use async_trait::async_trait;
use helm_core::events::Event;
use helm_core::exec::{CommandResult, FileEntry};
use helm_core::memory::import::ImportReport;
use helm_core::memory::recall::RecallHit;
use helm_core::model::{
    Approval, MemoryId, MemoryItem, Message, ModelChoice, ResolvedModel, Role, Thread, ThreadId,
    ThreadStatus, ToolAction, User,
};
use helm_core::provider::{Provider, ProviderConfig};
use helm_core::store::{ChannelRecord, MemoryFilter, ThreadCursor};
use helm_core::tool::Tool;
use helm_core::{MemoryNote, NewChannel, NewNote, PersonChange, PostedMessage};
use helm_core::{ThreadFilter, ThreadList};

pub use connected::Connected;
pub use embedded::{Embedded, OpenOptions};

use crate::errors::Result;

/// What `channel.run(command)` asks for.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The command line, as a shell reads it.
    pub command: String,
    /// Where to start (`/workspace/...`); the workspace when `None`.
    pub cwd: Option<String>,
    /// Seconds before it is killed; the backend's default when `None`.
    pub timeout_secs: Option<f64>,
}

/// The events that happen from the moment the feed was opened.
#[async_trait]
pub trait EventFeed: Send {
    /// The next event.
    async fn next(&mut self) -> Result<Event>;
}

/// Everything the Python objects ask of a workspace.
#[async_trait]
pub trait Backend: Send + Sync {
    /// `embedded` or `connected`, for messages and `repr`.
    fn mode(&self) -> &'static str;
    /// The person the calls act as.
    async fn me(&self) -> Result<User>;

    /// Creates a channel with its resident agent.
    async fn create_channel(&self, request: NewChannel) -> Result<ChannelRecord>;
    /// Channels by name (archived ones only if asked).
    async fn channels(&self, archived: bool) -> Result<Vec<ChannelRecord>>;
    /// One channel, by name or id.
    async fn channel(&self, channel: &str) -> Result<ChannelRecord>;
    /// Archives a channel.
    async fn archive(&self, channel: &str) -> Result<ChannelRecord>;
    /// Restores an archived channel.
    async fn restore(&self, channel: &str) -> Result<ChannelRecord>;
    /// Renames a channel; its agent keeps its handle, files and memory.
    async fn rename(&self, channel: &str, name: &str) -> Result<ChannelRecord>;
    /// Deletes an archived channel for good; `confirm` must name it.
    async fn delete(&self, channel: &str, confirm: &str) -> Result<()>;
    /// The model that will serve the channel's next turn.
    async fn model(&self, channel: &str) -> Result<Option<ResolvedModel>>;
    /// Sets (or clears) the channel's model; returns what now serves it.
    async fn set_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> Result<Option<ResolvedModel>>;

    /// Sets (or clears) the workspace's default model.
    async fn set_workspace_model(&self, choice: Option<ModelChoice>) -> Result<()>;

    /// Posts a message as the acting person.
    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> Result<PostedMessage>;
    /// A page of a channel's threads as `filter` asks (see
    /// `Helm::list_threads`).
    async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> Result<ThreadList>;
    /// Where a listing of a channel's threads resumes after thread `id`.
    async fn thread_cursor(&self, channel: &str, id: ThreadId) -> Result<ThreadCursor>;
    /// One thread.
    async fn thread(&self, id: ThreadId) -> Result<Thread>;
    /// A thread's messages in server order.
    async fn messages(&self, id: ThreadId) -> Result<Vec<Message>>;
    /// Resolves, reopens or archives a thread.
    async fn set_thread_status(&self, id: ThreadId, status: ThreadStatus) -> Result<Thread>;
    /// Gives a thread a new title.
    async fn rename_thread(&self, id: ThreadId, title: &str) -> Result<Thread>;
    /// Stops a thread's work.
    async fn stop_thread(&self, id: ThreadId) -> Result<()>;
    /// Runs a thread's failed last turn again; the new turn, queued.
    async fn retry_thread(&self, id: ThreadId) -> Result<helm_core::model::Turn>;
    /// The tool journal of a channel (or one thread), newest last.
    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>>;

    /// Recalls from a channel's memory and history.
    async fn recall(&self, channel: &str, query: &str, limit: usize) -> Result<Vec<RecallHit>>;
    /// Adds a memory record.
    async fn remember(&self, channel: &str, note: MemoryNote) -> Result<MemoryItem>;
    /// A channel's memory records, newest first.
    async fn memory(&self, channel: &str, filter: MemoryFilter) -> Result<Vec<MemoryItem>>;
    /// Changes one memory record: its text, forgotten, pinned or not.
    async fn change_memory(&self, id: MemoryId, change: MemoryChange) -> Result<MemoryItem>;
    /// Imports a JSON Lines history into a channel, all or nothing.
    async fn import_history(&self, channel: &str, history: Vec<u8>) -> Result<ImportReport>;

    /// A text file of the channel's workspace, whole.
    async fn read_text(&self, channel: &str, path: &str) -> Result<String>;
    /// A file's bytes, whole.
    async fn read_bytes(&self, channel: &str, path: &str) -> Result<Vec<u8>>;
    /// Writes a file (parents made), replacing it; with `create`, a file
    /// already there is a conflict and left as it was.
    async fn write_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> Result<FileEntry>;
    /// Saves a quick note as a new Markdown file in `/workspace/notes`.
    async fn save_note(&self, channel: &str, note: NewNote) -> Result<FileEntry>;
    /// A directory's entries (or a file's).
    async fn list_files(&self, channel: &str, path: &str) -> Result<Vec<FileEntry>>;
    /// Runs a command in the channel's computer and waits for it.
    async fn run(&self, channel: &str, request: RunRequest) -> Result<CommandResult>;

    /// Registers a provider configuration; with `replace`, replaces the
    /// one of that name.
    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> Result<ProviderConfig>;
    /// The provider registry.
    async fn providers(&self) -> Result<Vec<ProviderConfig>>;
    /// Serves the provider `name` with an object of this process.
    fn register_provider(&self, name: &str, provider: Arc<dyn Provider>) -> Result<()>;

    /// Opens an interactive shell in the channel's computer.
    async fn open_terminal(
        &self,
        channel: &str,
        rows: u16,
        cols: u16,
    ) -> Result<crate::terminal::TerminalCore>;

    /// Gives the channel's agent a tool that runs in this process.
    async fn register_tool(&self, channel: &str, tool: Arc<dyn Tool>) -> Result<()>;
    /// Takes a tool registered here away again.
    async fn unregister_tool(&self, channel: &str, name: &str) -> Result<()>;

    /// Approval requests (pending ones only, if asked).
    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>>;
    /// Approves or denies a pending request.
    async fn decide(&self, id: i64, approve: bool, note: Option<String>) -> Result<Approval>;
    /// Adds a person to the workspace.
    async fn add_user(&self, name: &str, role: Role) -> Result<User>;
    /// Changes a person's role and/or whether they are active, by name.
    async fn change_person(&self, name: &str, change: PersonChange) -> Result<User>;

    /// Makes sure someone runs the turns a post admits: embedded, this
    /// process starts driving them; a server already does.
    async fn drive_turns(&self) -> Result<()>;
    /// Opens a feed of the events that happen from now on.
    async fn events(&self) -> Result<Box<dyn EventFeed>>;
    /// Lets go: an embedded workspace stops driving turns (letting running
    /// ones finish) and releases the data directory.
    async fn close(&self);
}

/// A change to one memory record.
pub enum MemoryChange {
    /// New text (the old one is kept as superseded).
    Edit(String),
    /// Forgotten: kept for provenance, never recalled.
    Forget,
    /// Brought back from forgotten to current.
    Restore,
    /// Pinned (always in the agent's context) or not.
    Pin(bool),
}

/// A shared backend.
pub type SharedBackend = Arc<dyn Backend>;
