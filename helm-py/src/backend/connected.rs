//! The connected backend: a running helm-http server, through
//! [`helm_client::Client`], acting as the owner of an API token. The server
//! drives every turn; this process only posts and follows events.

use std::sync::Arc;

use async_trait::async_trait;
use helm_client::Client;
use helm_core::ErrorKind;
use helm_core::events::Event;
use helm_core::exec::{CommandResult, FileEntry};
use helm_core::memory::import::ImportReport;
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    Approval, MemoryId, MemoryItem, Message, ModelChoice, ResolvedModel, Role, Thread, ThreadId,
    ThreadStatus, ToolAction, User,
};
use helm_core::provider::{Provider, ProviderConfig};
use helm_core::store::{ChannelRecord, MemoryFilter, ThreadCursor};
use helm_core::tool::Tool;
use helm_core::{MemoryNote, NewChannel, NewNote, PersonChange, PostedMessage};
use helm_core::{ThreadFilter, ThreadList};

use super::embedded::MAX_READ;
use super::{Backend, EventFeed, MemoryChange, RunRequest};
use crate::errors::{Result, failure};

/// A server, reached with an API token.
pub struct Connected {
    client: Client,
}

impl Connected {
    /// A server at `url`, acting as the owner of `token`. Nothing is sent
    /// until the first call.
    pub fn new(url: &str, token: &str) -> Result<Self> {
        let agent = concat!("onehelm/", env!("CARGO_PKG_VERSION"));
        Ok(Connected {
            client: Client::new(url, token, agent)?,
        })
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        self.client.base_url()
    }
}

struct RemoteEvents(helm_client::EventStream);

#[async_trait]
impl EventFeed for RemoteEvents {
    async fn next(&mut self) -> Result<Event> {
        self.0.next().await
    }
}

#[async_trait]
impl Backend for Connected {
    fn mode(&self) -> &'static str {
        "connected"
    }

    async fn me(&self) -> Result<User> {
        self.client.me().await
    }

    async fn create_channel(&self, request: NewChannel) -> Result<ChannelRecord> {
        Ok(self.client.create_channel(request).await?.record)
    }

    async fn channels(&self, archived: bool) -> Result<Vec<ChannelRecord>> {
        self.client.channels(archived).await
    }

    async fn channel(&self, channel: &str) -> Result<ChannelRecord> {
        Ok(self.client.channel(channel).await?.record)
    }

    async fn rename(&self, channel: &str, name: &str) -> Result<ChannelRecord> {
        self.client.rename_channel(channel, name).await
    }

    async fn archive(&self, channel: &str) -> Result<ChannelRecord> {
        self.client.archive(channel).await
    }

    async fn restore(&self, channel: &str) -> Result<ChannelRecord> {
        self.client.restore(channel).await
    }

    async fn delete(&self, channel: &str, confirm: &str) -> Result<()> {
        self.client.delete_channel(channel, confirm).await
    }

    async fn model(&self, channel: &str) -> Result<Option<ResolvedModel>> {
        self.client.channel_model(channel).await
    }

    async fn set_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> Result<Option<ResolvedModel>> {
        let (resolved, _check) = self.client.set_channel_model(channel, choice).await?;
        Ok(resolved)
    }

    async fn set_workspace_model(&self, choice: Option<ModelChoice>) -> Result<()> {
        self.client.set_workspace_model(choice).await.map(|_| ())
    }

    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> Result<PostedMessage> {
        self.client.post_message(channel, text, thread).await
    }

    async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> Result<ThreadList> {
        self.client.threads(channel, filter, limit).await
    }

    async fn thread_cursor(&self, channel: &str, id: ThreadId) -> Result<ThreadCursor> {
        self.client.thread_cursor(channel, id).await
    }

    async fn thread(&self, id: ThreadId) -> Result<Thread> {
        Ok(self.client.thread(id).await?.thread)
    }

    async fn messages(&self, id: ThreadId) -> Result<Vec<Message>> {
        Ok(self.client.thread(id).await?.messages)
    }

    async fn set_thread_status(&self, id: ThreadId, status: ThreadStatus) -> Result<Thread> {
        self.client.set_thread_status(id, status).await
    }

    async fn rename_thread(&self, id: ThreadId, title: &str) -> Result<Thread> {
        self.client.rename_thread(id, title).await
    }

    async fn stop_thread(&self, id: ThreadId) -> Result<()> {
        self.client.stop_thread(id).await
    }

    async fn retry_thread(&self, id: ThreadId) -> Result<helm_core::model::Turn> {
        self.client.retry_thread(id).await
    }

    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>> {
        Ok(self.client.activity(channel, thread, limit).await?.1)
    }

    async fn recall(&self, channel: &str, query: &str, limit: usize) -> Result<Vec<RecallHit>> {
        let mut request = RecallQuery::new(query);
        request.limit = limit;
        self.client.recall(channel, request).await
    }

    async fn remember(&self, channel: &str, note: MemoryNote) -> Result<MemoryItem> {
        self.client.remember(channel, note).await
    }

    async fn memory(&self, channel: &str, filter: MemoryFilter) -> Result<Vec<MemoryItem>> {
        self.client.memory(channel, filter).await
    }

    async fn change_memory(&self, id: MemoryId, change: MemoryChange) -> Result<MemoryItem> {
        match change {
            MemoryChange::Edit(text) => self.client.edit_memory(id, &text).await,
            MemoryChange::Forget => self.client.forget_memory(id).await,
            MemoryChange::Restore => self.client.restore_memory(id).await,
            MemoryChange::Pin(pinned) => self.client.pin_memory(id, pinned).await,
        }
    }

    async fn import_history(&self, channel: &str, history: Vec<u8>) -> Result<ImportReport> {
        self.client.import_history(channel, history).await
    }

    async fn read_text(&self, channel: &str, path: &str) -> Result<String> {
        let bytes = self.read_bytes(channel, path).await?;
        String::from_utf8(bytes).map_err(|_| {
            helm_core::Error::invalid(
                "file",
                format!("{path} is not UTF-8 text; read it with read_bytes"),
            )
            .into()
        })
    }

    async fn read_bytes(&self, channel: &str, path: &str) -> Result<Vec<u8>> {
        let read = self.client.read_bytes(channel, path, MAX_READ).await?;
        if read.truncated {
            return Err(helm_core::Error::invalid(
                "file",
                format!(
                    "{path} is {} bytes, over the {MAX_READ}-byte limit of a whole read",
                    read.size
                ),
            )
            .into());
        }
        Ok(read.bytes)
    }

    async fn write_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> Result<FileEntry> {
        match String::from_utf8(bytes) {
            Ok(text) => self.client.write_text(channel, path, &text, create).await,
            // Binary content goes up as a raw upload of that one file.
            Err(e) => {
                self.client
                    .put_file(channel, path, e.into_bytes(), create)
                    .await
            }
        }
    }

    async fn save_note(&self, channel: &str, note: NewNote) -> Result<FileEntry> {
        self.client
            .save_note(channel, &note.text, note.title.as_deref())
            .await
    }

    async fn list_files(&self, channel: &str, path: &str) -> Result<Vec<FileEntry>> {
        self.client.list_files(channel, path).await
    }

    async fn run(&self, channel: &str, request: RunRequest) -> Result<CommandResult> {
        self.client
            .exec(
                channel,
                &request.command,
                request.cwd.as_deref(),
                request.timeout_secs,
            )
            .await
    }

    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> Result<ProviderConfig> {
        self.client
            .add_provider(config, make_default, replace)
            .await
    }

    async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        self.client.providers().await
    }

    fn register_provider(&self, name: &str, _provider: Arc<dyn Provider>) -> Result<()> {
        Err(failure(
            ErrorKind::Refused,
            "python_provider_remote",
            format!(
                "a Python provider serves turns in this process, but a server at {} runs its \
                 turns itself; register provider {name:?} on a workspace opened with \
                 Helm.open(path), or add an HTTP provider with providers.add(...)",
                self.url()
            ),
        ))
    }

    async fn open_terminal(
        &self,
        _channel: &str,
        _rows: u16,
        _cols: u16,
    ) -> Result<crate::terminal::TerminalCore> {
        Err(failure(
            ErrorKind::Refused,
            "terminal_remote",
            format!(
                "onehelm opens terminals on workspaces opened with Helm.open(path); on the server \
                 at {} a terminal is POST /api/channels/{{channel}}/terminals and its WebSocket \
                 (docs/http.md), or run commands with channel.run(...)",
                self.url()
            ),
        ))
    }

    async fn register_tool(&self, _channel: &str, tool: Arc<dyn Tool>) -> Result<()> {
        Err(failure(
            ErrorKind::Refused,
            "python_tool_remote",
            format!(
                "a Python tool runs in this process, but the agent of a channel on the server at \
                 {} runs its turns there and cannot call back into this script; give {:?} to a \
                 channel of a workspace opened with Helm.open(path)",
                self.url(),
                tool.spec().name
            ),
        ))
    }

    async fn unregister_tool(&self, _channel: &str, name: &str) -> Result<()> {
        Err(failure(
            ErrorKind::NotFound,
            "not_found",
            format!("tool {name} not found: a server's channels have no Python tools"),
        ))
    }

    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>> {
        self.client.approvals(pending_only).await
    }

    async fn decide(&self, id: i64, approve: bool, note: Option<String>) -> Result<Approval> {
        self.client.decide(id, approve, note).await
    }

    async fn add_user(&self, name: &str, role: Role) -> Result<User> {
        self.client.add_user(name, role, None).await
    }

    async fn change_person(&self, name: &str, change: PersonChange) -> Result<User> {
        let users = self.client.users().await?;
        let user = users
            .iter()
            .find(|u| u.name == name)
            .ok_or_else(|| helm_core::Error::not_found("user", name))?;
        self.client.change_person(user.id, change).await
    }

    async fn drive_turns(&self) -> Result<()> {
        // The server drives every turn.
        Ok(())
    }

    async fn events(&self) -> Result<Box<dyn EventFeed>> {
        Ok(Box::new(RemoteEvents(self.client.events().await?)))
    }

    async fn close(&self) {}
}
