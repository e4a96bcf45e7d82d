//! The remote backend: a running `helm-http` server, through
//! [`helm_client::Client`] (its REST API and its event stream, with an API
//! token). The client answers helm-core's types; this adds the CLI's own
//! wording where a flag is concerned.

use async_trait::async_trait;
use helm_core::ErrorKind;
use helm_core::events::Event;
use helm_core::exec::{FileBytes, FileEntry, FileText};
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    MemoryId, MemoryItem, ModelChoice, ResolvedModel, Role, Thread, ThreadId, ThreadStatus,
    ToolAction, User,
};
use helm_core::provider::ProviderConfig;
use helm_core::store::{ChannelRecord, MemoryFilter, ThreadCursor};
use helm_core::{MemoryNote, NewChannel, NewNote, PersonChange, PostedMessage};
use helm_core::{ThreadFilter, ThreadList};

use super::{Backend, ChannelDetail, EventSource, Imported, Progress, StatusView, ThreadView};

/// A server, reached with an API token.
pub struct Remote {
    client: helm_client::Client,
}

impl Remote {
    /// A server at `url`, acting as the owner of `token`.
    pub fn new(url: &str, token: Option<&str>) -> anyhow::Result<Self> {
        let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
            return Err(helm_client::Error {
                kind: ErrorKind::Unauthenticated,
                code: "unauthenticated".into(),
                message: "--server needs an API token: pass --token TOKEN or set HELM_TOKEN \
                          (make one with POST /api/tokens after signing in)"
                    .into(),
            }
            .into());
        };
        let agent = concat!("1helm/", env!("CARGO_PKG_VERSION"));
        Ok(Remote {
            client: helm_client::Client::new(url, token, agent)?,
        })
    }
}

struct RemoteEvents(helm_client::EventStream);

#[async_trait]
impl EventSource for RemoteEvents {
    async fn next(&mut self) -> anyhow::Result<Event> {
        Ok(self.0.next().await?)
    }
}

#[async_trait]
impl Backend for Remote {
    async fn approvals(
        &self,
        pending_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Approval>> {
        Ok(self.client.approvals(pending_only).await?)
    }

    async fn decide(
        &self,
        id: i64,
        approve: bool,
        note: Option<String>,
    ) -> anyhow::Result<helm_core::model::Approval> {
        Ok(self.client.decide(id, approve, note).await?)
    }

    async fn set_approval_rule(
        &self,
        action: helm_core::model::ApprovalAction,
        required: bool,
        channel: Option<&str>,
    ) -> anyhow::Result<()> {
        Ok(self
            .client
            .set_approval_rule(action, required, channel)
            .await?)
    }

    async fn escalations(
        &self,
        open_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Escalation>> {
        Ok(self.client.escalations(open_only).await?)
    }

    async fn audit(
        &self,
        channel: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<helm_core::model::AuditEntry>> {
        Ok(self.client.audit(channel, limit).await?)
    }

    async fn verify_audit(&self) -> anyhow::Result<helm_core::store::AuditVerification> {
        Ok(self.client.verify_audit().await?)
    }

    async fn summarize_thread(
        &self,
        id: ThreadId,
    ) -> anyhow::Result<helm_core::runtime::summary::WrittenSummary> {
        Ok(self.client.summarize_thread(id).await?)
    }

    fn summarizes_resolved_threads(&self) -> bool {
        true
    }

    async fn memory(&self, channel: &str, filter: MemoryFilter) -> anyhow::Result<Vec<MemoryItem>> {
        Ok(self.client.memory(channel, filter).await?)
    }

    async fn remember(&self, channel: &str, note: MemoryNote) -> anyhow::Result<MemoryItem> {
        Ok(self.client.remember(channel, note).await?)
    }

    async fn edit_memory(&self, id: MemoryId, content: &str) -> anyhow::Result<MemoryItem> {
        Ok(self.client.edit_memory(id, content).await?)
    }

    async fn forget_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem> {
        Ok(self.client.forget_memory(id).await?)
    }

    async fn restore_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem> {
        Ok(self.client.restore_memory(id).await?)
    }

    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> anyhow::Result<MemoryItem> {
        Ok(self.client.pin_memory(id, pinned).await?)
    }

    async fn recall(&self, channel: &str, query: RecallQuery) -> anyhow::Result<Vec<RecallHit>> {
        Ok(self.client.recall(channel, query).await?)
    }

    async fn list_files(&self, channel: &str, path: &str) -> anyhow::Result<Vec<FileEntry>> {
        Ok(self.client.list_files(channel, path).await?)
    }

    async fn stat_file(&self, channel: &str, path: &str) -> anyhow::Result<FileEntry> {
        Ok(self.client.stat_file(channel, path).await?)
    }

    async fn read_text(&self, channel: &str, path: &str) -> anyhow::Result<FileText> {
        Ok(self.client.read_text(channel, path).await?)
    }

    async fn read_bytes(
        &self,
        channel: &str,
        path: &str,
        limit: usize,
    ) -> anyhow::Result<FileBytes> {
        Ok(self.client.read_bytes(channel, path, limit).await?)
    }

    async fn put_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> anyhow::Result<FileEntry> {
        Ok(self.client.put_file(channel, path, bytes, create).await?)
    }

    async fn save_note(&self, channel: &str, note: NewNote) -> anyhow::Result<FileEntry> {
        Ok(self
            .client
            .save_note(channel, &note.text, note.title.as_deref())
            .await?)
    }

    async fn status(&self) -> anyhow::Result<StatusView> {
        Ok(self.client.status().await?)
    }

    async fn create_channel(&self, request: NewChannel) -> anyhow::Result<ChannelDetail> {
        Ok(self.client.create_channel(request).await?)
    }

    async fn channels(&self, include_archived: bool) -> anyhow::Result<Vec<ChannelRecord>> {
        Ok(self.client.channels(include_archived).await?)
    }

    async fn channel(&self, channel: &str) -> anyhow::Result<ChannelDetail> {
        Ok(self.client.channel(channel).await?)
    }

    async fn archive(&self, channel: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self.client.archive(channel).await?)
    }

    async fn restore(&self, channel: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self.client.restore(channel).await?)
    }

    async fn set_channel_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> anyhow::Result<(Option<ResolvedModel>, Option<helm_core::ModelCheck>)> {
        Ok(self.client.set_channel_model(channel, choice).await?)
    }

    async fn rename_channel(&self, channel: &str, name: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self.client.rename_channel(channel, name).await?)
    }

    async fn delete_channel(&self, channel: &str, confirm: &str) -> anyhow::Result<()> {
        Ok(self.client.delete_channel(channel, confirm).await?)
    }

    async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> anyhow::Result<ThreadList> {
        Ok(self.client.threads(channel, filter, limit).await?)
    }

    async fn thread_cursor(&self, channel: &str, id: ThreadId) -> anyhow::Result<ThreadCursor> {
        Ok(self.client.thread_cursor(channel, id).await?)
    }

    async fn thread(&self, id: ThreadId) -> anyhow::Result<ThreadView> {
        Ok(self.client.thread(id).await?)
    }

    async fn thread_page(
        &self,
        id: ThreadId,
        before: Option<helm_core::model::MessageId>,
        limit: usize,
    ) -> anyhow::Result<ThreadView> {
        Ok(self
            .client
            .thread_messages_before(id, before, limit)
            .await?)
    }

    async fn set_thread_status(
        &self,
        id: ThreadId,
        status: ThreadStatus,
    ) -> anyhow::Result<Thread> {
        Ok(self.client.set_thread_status(id, status).await?)
    }

    async fn rename_thread(&self, id: ThreadId, title: &str) -> anyhow::Result<Thread> {
        Ok(self.client.rename_thread(id, title).await?)
    }

    async fn stop_thread(&self, id: ThreadId) -> anyhow::Result<()> {
        Ok(self.client.stop_thread(id).await?)
    }

    async fn retry_thread(&self, id: ThreadId) -> anyhow::Result<helm_core::model::Turn> {
        Ok(self.client.retry_thread(id).await?)
    }

    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        before: Option<helm_core::model::ToolActionId>,
        limit: usize,
    ) -> anyhow::Result<(ChannelRecord, Vec<ToolAction>)> {
        Ok(self
            .client
            .activity_before(channel, thread, before, limit)
            .await?)
    }

    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> anyhow::Result<ProviderConfig> {
        Ok(self
            .client
            .add_provider(config, make_default, replace)
            .await?)
    }

    async fn providers(&self) -> anyhow::Result<Vec<ProviderConfig>> {
        Ok(self.client.providers().await?)
    }

    async fn provider_models(&self, name: &str) -> anyhow::Result<helm_core::ProviderModels> {
        Ok(self.client.provider_models(name).await?)
    }

    async fn add_user(
        &self,
        name: &str,
        role: Role,
        password: Option<String>,
    ) -> anyhow::Result<User> {
        Ok(self.client.add_user(name, role, password).await?)
    }

    async fn users(&self) -> anyhow::Result<Vec<User>> {
        Ok(self.client.users().await?)
    }

    async fn change_person(&self, name: &str, change: PersonChange) -> anyhow::Result<User> {
        let users = self.client.users().await?;
        let user = users
            .iter()
            .find(|u| u.name == name)
            .ok_or_else(|| helm_core::Error::not_found("user", name))?;
        Ok(self.client.change_person(user.id, change).await?)
    }

    async fn import_history(
        &self,
        channel: &str,
        mut history: Box<dyn std::io::BufRead + Send>,
        _embed: bool,
        _progress: Progress<'_>,
    ) -> anyhow::Result<Imported> {
        let mut body = Vec::new();
        std::io::Read::read_to_end(&mut history, &mut body)
            .map_err(|e| helm_core::Error::invalid("history", format!("it cannot be read: {e}")))?;
        let started = std::time::Instant::now();
        let report = self.client.import_history(channel, body).await?;
        Ok(Imported {
            report,
            seconds: started.elapsed().as_secs_f64(),
            // The server embeds imported items in the background.
            embedded: 0,
            indexed_by_server: true,
        })
    }

    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> anyhow::Result<PostedMessage> {
        Ok(self.client.post_message(channel, text, thread).await?)
    }

    async fn me(&self) -> anyhow::Result<User> {
        Ok(self.client.me().await?)
    }

    async fn drive_turns(&self) -> anyhow::Result<()> {
        // The server drives every turn.
        Ok(())
    }

    fn runs_turns_here(&self) -> bool {
        false
    }

    async fn stop_driving(&self) {}

    async fn events(&self) -> anyhow::Result<Box<dyn EventSource>> {
        Ok(Box::new(RemoteEvents(self.client.events().await?)))
    }
}
