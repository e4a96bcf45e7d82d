//! The local backend: the data directory opened in this process.

use std::io::BufRead;
use std::time::Instant;

use async_trait::async_trait;
use helm_core::config::ConfigLayer;
use helm_core::events::{Event, Follower};
use helm_core::exec::{FileBytes, FileEntry, FileText, IsolationChoice};
use helm_core::lock::DataLock;
use helm_core::memory::config::EmbedderSetting;
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    ChannelRef, MemoryId, MemoryItem, ModelChoice, ResolvedModel, Role, Thread, ThreadId,
    ThreadStatus, ToolAction, User,
};
use helm_core::provider::ProviderConfig;
use helm_core::store::{ChannelFilter, ChannelRecord, MemoryFilter, PolicyScope, ThreadCursor};
use helm_core::{Helm, HelmOptions, MemoryNote, NewChannel, NewNote, PersonChange, PostedMessage};
use helm_core::{ThreadFilter, ThreadList};

use super::{Backend, ChannelDetail, EventSource, Imported, Progress, StatusView, ThreadView};

/// A data directory opened here, acting as one user.
pub struct Local {
    helm: Helm,
    actor: User,
    // Held shared while this command runs: a server cannot start under it,
    // and it refused to open while a server runs.
    _lock: DataLock,
}

impl Local {
    /// Opens `data` (refusing while a server holds it) as `as_user`, or as
    /// the Captain, configured as core resolves `data/helm.toml` and
    /// `HELM_*`, with `isolation` and `embedder` (the flags, when given)
    /// over them.
    pub async fn open_with(
        data: &std::path::Path,
        as_user: Option<&str>,
        isolation: Option<IsolationChoice>,
        embedder: Option<EmbedderSetting>,
    ) -> anyhow::Result<Self> {
        let lock = DataLock::command(data)?;
        let mut options = resolved_options(data, isolation, embedder)?;
        options.load_local_embedder()?;
        let helm = Helm::open(options).await?;
        let actor = match as_user {
            Some(name) => helm.user(name).await?,
            None => helm.captain().await?,
        };
        if !actor.is_active() {
            return Err(helm_core::Error::Forbidden(format!(
                "@{} is deactivated and cannot act; reactivate them first",
                actor.name
            ))
            .into());
        }
        Ok(Local {
            helm,
            actor,
            _lock: lock,
        })
    }

    /// The opened workspace.
    pub fn helm(&self) -> &Helm {
        &self.helm
    }

    /// The acting user.
    pub fn actor(&self) -> &User {
        &self.actor
    }

    fn detail(&self, record: ChannelRecord, model: Option<ResolvedModel>) -> ChannelDetail {
        let dir = self.helm.data_root().world(record.channel.id).workspace();
        ChannelDetail {
            record,
            model,
            workspace_dir: Some(dir.display().to_string()),
        }
    }
}

fn channel_ref(raw: &str) -> anyhow::Result<ChannelRef> {
    Ok(raw.parse::<ChannelRef>()?)
}

struct LocalEvents(Follower);

/// The options a command opens `data` with: core resolves the data root's
/// helm.toml and HELM_*, and the flags given go over them. A bad setting
/// is refused here, by every command alike (`init` included).
pub fn resolved_options(
    data: &std::path::Path,
    isolation: Option<IsolationChoice>,
    embedder: Option<EmbedderSetting>,
) -> anyhow::Result<HelmOptions> {
    let mut options = HelmOptions::new(data);
    let mut flags = ConfigLayer::new();
    if let Some(isolation) = isolation {
        flags.set_flag("computer.isolation", isolation)?;
    }
    if let Some(embedder) = embedder {
        flags.set_flag("memory.embedder", embedder)?;
    }
    let config = helm_core::HelmConfig::resolve([
        ConfigLayer::file_if_present(&data.join("helm.toml"))?,
        ConfigLayer::process_env()?,
        flags,
    ])?;
    config.apply(&mut options)?;
    Ok(options)
}

#[async_trait]
impl EventSource for LocalEvents {
    async fn next(&mut self) -> anyhow::Result<Event> {
        // One consumer: the event is copied only if another follower
        // still holds it.
        Ok(std::sync::Arc::unwrap_or_clone(self.0.next().await?))
    }
}

#[async_trait]
impl Backend for Local {
    async fn approvals(
        &self,
        pending_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Approval>> {
        Ok(self.helm.approvals(&self.actor, pending_only).await?)
    }

    async fn decide(
        &self,
        id: i64,
        approve: bool,
        note: Option<String>,
    ) -> anyhow::Result<helm_core::model::Approval> {
        Ok(if approve {
            self.helm.approve(&self.actor, id, note).await?
        } else {
            self.helm.deny(&self.actor, id, note).await?
        })
    }

    async fn set_approval_rule(
        &self,
        action: helm_core::model::ApprovalAction,
        required: bool,
        channel: Option<&str>,
    ) -> anyhow::Result<()> {
        let channel = channel.map(channel_ref).transpose()?;
        Ok(self
            .helm
            .set_approval_rule(&self.actor, channel.as_ref(), action, required)
            .await?)
    }

    async fn escalations(
        &self,
        open_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Escalation>> {
        Ok(self.helm.escalations(&self.actor, open_only).await?)
    }

    async fn audit(
        &self,
        channel: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<helm_core::model::AuditEntry>> {
        let channel = channel.map(channel_ref).transpose()?;
        Ok(self
            .helm
            .audit_log(&self.actor, channel.as_ref(), limit)
            .await?)
    }

    async fn verify_audit(&self) -> anyhow::Result<helm_core::store::AuditVerification> {
        Ok(self.helm.verify_audit(&self.actor).await?)
    }

    async fn summarize_thread(
        &self,
        id: ThreadId,
    ) -> anyhow::Result<helm_core::runtime::summary::WrittenSummary> {
        Ok(self.helm.summarize_thread(&self.actor, id).await?)
    }

    async fn memory(&self, channel: &str, filter: MemoryFilter) -> anyhow::Result<Vec<MemoryItem>> {
        Ok(self
            .helm
            .channel_memory(&self.actor, &channel_ref(channel)?, filter)
            .await?)
    }

    async fn remember(&self, channel: &str, note: MemoryNote) -> anyhow::Result<MemoryItem> {
        Ok(self
            .helm
            .remember(&self.actor, &channel_ref(channel)?, note)
            .await?)
    }

    async fn edit_memory(&self, id: MemoryId, content: &str) -> anyhow::Result<MemoryItem> {
        Ok(self.helm.edit_memory(&self.actor, id, content).await?)
    }

    async fn forget_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem> {
        Ok(self.helm.forget_memory(&self.actor, id).await?)
    }

    async fn restore_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem> {
        Ok(self.helm.restore_memory(&self.actor, id).await?)
    }

    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> anyhow::Result<MemoryItem> {
        Ok(self.helm.pin_memory(&self.actor, id, pinned).await?)
    }

    async fn recall(&self, channel: &str, query: RecallQuery) -> anyhow::Result<Vec<RecallHit>> {
        // Only a channel the actor may see is touched at all.
        let record = self
            .helm
            .visible_channel(&self.actor, &channel_ref(channel)?)
            .await?;
        let channel = ChannelRef::Id(record.channel.id);
        // Items not embedded yet are embedded first, so meaning-based recall
        // sees them; those embedded once already and queued again keep
        // their vector until the server embeds them.
        self.helm.embed_unembedded(&channel).await?;
        Ok(self.helm.recall_as(&self.actor, &channel, query).await?)
    }

    async fn import_history(
        &self,
        channel: &str,
        history: Box<dyn BufRead + Send>,
        embed: bool,
        progress: Progress<'_>,
    ) -> anyhow::Result<Imported> {
        let channel = channel_ref(channel)?;
        let started = Instant::now();
        let report = self
            .helm
            .import_history(&self.actor, &channel, history)
            .await?;
        let seconds = started.elapsed().as_secs_f64();
        let embedded = if embed && self.helm.embedding_model().is_some() {
            self.helm.embed_backlog(Some(&channel), progress).await?
        } else {
            0
        };
        Ok(Imported {
            report,
            seconds,
            embedded,
            indexed_by_server: false,
        })
    }

    async fn list_files(&self, channel: &str, path: &str) -> anyhow::Result<Vec<FileEntry>> {
        let files = self.helm.files(&self.actor, &channel_ref(channel)?).await?;
        Ok(files.list(path).await?)
    }

    async fn stat_file(&self, channel: &str, path: &str) -> anyhow::Result<FileEntry> {
        let files = self.helm.files(&self.actor, &channel_ref(channel)?).await?;
        Ok(files.stat(path).await?)
    }

    async fn read_text(&self, channel: &str, path: &str) -> anyhow::Result<FileText> {
        let files = self.helm.files(&self.actor, &channel_ref(channel)?).await?;
        Ok(files.read(path, None).await?)
    }

    async fn read_bytes(
        &self,
        channel: &str,
        path: &str,
        limit: usize,
    ) -> anyhow::Result<FileBytes> {
        let files = self.helm.files(&self.actor, &channel_ref(channel)?).await?;
        Ok(files.read_bytes(path, limit).await?)
    }

    async fn put_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> anyhow::Result<FileEntry> {
        let channel = channel_ref(channel)?;
        let files = self.helm.files(&self.actor, &channel).await?;
        let entry = if create {
            files.create(path, bytes).await?
        } else {
            files.write(path, bytes).await?
        };
        // Recorded as a server records an upload, so the channel's artifacts
        // show it either way (not a host path that `#main` may be given).
        if entry
            .path
            .strip_prefix(helm_core::exec::AGENT_ROOT)
            .is_some_and(|rest| rest.starts_with('/'))
        {
            self.helm
                .record_upload(&self.actor, &channel, &entry.path)
                .await?;
        }
        Ok(entry)
    }

    async fn save_note(&self, channel: &str, note: NewNote) -> anyhow::Result<FileEntry> {
        Ok(self
            .helm
            .save_note(&self.actor, &channel_ref(channel)?, note)
            .await?)
    }

    fn recall_mode(&self) -> Option<helm_core::memory::config::RecallMode> {
        Some(self.helm.recall_mode().clone())
    }

    async fn status(&self) -> anyhow::Result<StatusView> {
        let status = self.helm.status().await?;
        Ok(StatusView {
            data_dir: Some(status.data_dir.display().to_string()),
            workspace: status.workspace,
            captain: status.captain,
            skipper: status.skipper,
            recall: Some(status.recall),
            computers: self.helm.computer_choices(),
            stats: status.stats.into(),
        })
    }

    async fn create_channel(&self, request: NewChannel) -> anyhow::Result<ChannelDetail> {
        let record = self.helm.create_channel_with(&self.actor, request).await?;
        Ok(self.detail(record, None))
    }

    async fn channels(&self, include_archived: bool) -> anyhow::Result<Vec<ChannelRecord>> {
        Ok(self
            .helm
            .visible_channels(&self.actor, ChannelFilter { include_archived })
            .await?)
    }

    async fn channel(&self, channel: &str) -> anyhow::Result<ChannelDetail> {
        let record = self
            .helm
            .visible_channel(&self.actor, &channel_ref(channel)?)
            .await?;
        let model = self
            .helm
            .resolve_model(&ChannelRef::Id(record.channel.id), None)
            .await?;
        Ok(self.detail(record, model))
    }

    async fn archive(&self, channel: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self
            .helm
            .archive_channel(&self.actor, &channel_ref(channel)?)
            .await?)
    }

    async fn restore(&self, channel: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self
            .helm
            .restore_channel(&self.actor, &channel_ref(channel)?)
            .await?)
    }

    async fn set_channel_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> anyhow::Result<(Option<ResolvedModel>, Option<helm_core::ModelCheck>)> {
        let record = self.helm.channel(&channel_ref(channel)?).await?;
        let id = record.channel.id;
        // Core checks the choice (a provider that exists, a model it serves).
        let check = self
            .helm
            .set_model_policy(&self.actor, PolicyScope::Channel(id), choice)
            .await?;
        Ok((
            self.helm.resolve_model(&ChannelRef::Id(id), None).await?,
            check,
        ))
    }

    async fn rename_channel(&self, channel: &str, name: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self
            .helm
            .update_channel(
                &self.actor,
                &channel_ref(channel)?,
                helm_core::store::ChannelUpdate {
                    name: Some(name.to_string()),
                    ..Default::default()
                },
            )
            .await?)
    }

    async fn delete_channel(&self, channel: &str, confirm: &str) -> anyhow::Result<()> {
        Ok(self
            .helm
            .delete_channel(&self.actor, &channel_ref(channel)?, confirm)
            .await?)
    }

    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> anyhow::Result<PostedMessage> {
        Ok(self
            .helm
            .post_message(&self.actor, &channel_ref(channel)?, text, thread)
            .await?)
    }

    async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> anyhow::Result<ThreadList> {
        let record = self
            .helm
            .visible_channel(&self.actor, &channel_ref(channel)?)
            .await?;
        Ok(self
            .helm
            .list_threads(&ChannelRef::Id(record.channel.id), filter, limit)
            .await?)
    }

    async fn thread_cursor(&self, channel: &str, id: ThreadId) -> anyhow::Result<ThreadCursor> {
        Ok(self
            .helm
            .thread_cursor(&self.actor, &channel_ref(channel)?, id)
            .await?)
    }

    async fn thread(&self, id: ThreadId) -> anyhow::Result<ThreadView> {
        let (thread, _) = self.helm.visible_thread(&self.actor, id).await?;
        Ok(ThreadView {
            thread,
            messages: self.helm.thread_messages(id).await?,
            turns: self.helm.thread_turns(id).await?,
        })
    }

    async fn thread_page(
        &self,
        id: ThreadId,
        before: Option<helm_core::model::MessageId>,
        limit: usize,
    ) -> anyhow::Result<ThreadView> {
        let (thread, _) = self.helm.visible_thread(&self.actor, id).await?;
        let messages = self
            .helm
            .messages_before(
                &self.actor,
                &ChannelRef::Id(thread.channel_id),
                Some(id),
                before,
                limit,
            )
            .await?;
        Ok(ThreadView {
            thread,
            messages,
            turns: self.helm.thread_turns(id).await?,
        })
    }

    async fn set_thread_status(
        &self,
        id: ThreadId,
        status: ThreadStatus,
    ) -> anyhow::Result<Thread> {
        self.helm.visible_thread(&self.actor, id).await?;
        Ok(self.helm.set_thread_status(&self.actor, id, status).await?)
    }

    async fn rename_thread(&self, id: ThreadId, title: &str) -> anyhow::Result<Thread> {
        Ok(self.helm.rename_thread(&self.actor, id, title).await?)
    }

    async fn stop_thread(&self, id: ThreadId) -> anyhow::Result<()> {
        self.helm.stop_thread(&self.actor, id).await?;
        Ok(())
    }

    async fn retry_thread(&self, id: ThreadId) -> anyhow::Result<helm_core::model::Turn> {
        Ok(self.helm.retry_thread(&self.actor, id).await?)
    }

    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        before: Option<helm_core::model::ToolActionId>,
        limit: usize,
    ) -> anyhow::Result<(ChannelRecord, Vec<ToolAction>)> {
        let record = self
            .helm
            .visible_channel(&self.actor, &channel_ref(channel)?)
            .await?;
        Ok(self
            .helm
            .activity_before(&ChannelRef::Id(record.channel.id), thread, before, limit)
            .await?)
    }

    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> anyhow::Result<ProviderConfig> {
        Ok(if replace {
            self.helm
                .replace_provider(&self.actor, config, make_default)
                .await?
        } else {
            self.helm
                .add_provider(&self.actor, config, make_default)
                .await?
        })
    }

    async fn providers(&self) -> anyhow::Result<Vec<ProviderConfig>> {
        Ok(self.helm.providers().await?)
    }

    async fn provider_models(&self, name: &str) -> anyhow::Result<helm_core::ProviderModels> {
        Ok(self.helm.provider_models(name).await?)
    }

    async fn add_user(
        &self,
        name: &str,
        role: Role,
        password: Option<String>,
    ) -> anyhow::Result<User> {
        if let Some(password) = &password {
            helm_core::auth::password::validate(password)?;
        }
        let user = self.helm.add_user(&self.actor, name, role).await?;
        if let Some(password) = password {
            self.helm
                .set_password(&self.actor, user.id, &password)
                .await?;
        }
        Ok(user)
    }

    async fn users(&self) -> anyhow::Result<Vec<User>> {
        Ok(self.helm.users().await?)
    }

    async fn change_person(&self, name: &str, change: PersonChange) -> anyhow::Result<User> {
        let user = self.helm.user(name).await?;
        Ok(self
            .helm
            .change_person(&self.actor, user.id, change)
            .await?)
    }

    async fn me(&self) -> anyhow::Result<User> {
        Ok(self.actor.clone())
    }

    async fn drive_turns(&self) -> anyhow::Result<()> {
        Ok(self.helm.start_runtime().await?)
    }

    fn runs_turns_here(&self) -> bool {
        true
    }

    async fn stop_driving(&self) {
        self.helm.shutdown_runtime(true).await;
    }

    async fn events(&self) -> anyhow::Result<Box<dyn EventSource>> {
        let from = self.helm.store().event_head().await?;
        Ok(Box::new(LocalEvents(self.helm.follow(from).await?)))
    }
}
