//! The embedded backend: a data directory opened in this Python process,
//! through helm-core's [`Helm`] facade. No server is involved; this process
//! drives the turns it starts.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use helm_core::config::ConfigLayer;
use helm_core::events::{Event, Follower};
use helm_core::exec::{CommandResult, CommandSpec, FileEntry};
use helm_core::lock::DataLock;
use helm_core::memory::import::ImportReport;
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    Approval, ChannelRef, MemoryId, MemoryItem, Message, ModelChoice, ResolvedModel, Role, Thread,
    ThreadId, ThreadStatus, ToolAction, User,
};
use helm_core::provider::{Provider, ProviderConfig};
use helm_core::store::{ChannelFilter, ChannelRecord, MemoryFilter, PolicyScope, ThreadCursor};
use helm_core::tool::Tool;
use helm_core::{
    ErrorKind, Helm, HelmOptions, InitOptions, MemoryNote, NewChannel, NewNote, PersonChange,
    PostedMessage,
};
use helm_core::{ThreadFilter, ThreadList};

use super::{Backend, EventFeed, MemoryChange, RunRequest};
use crate::errors::{Result, failure};

/// A deactivated person cannot act here either.
fn refuse_deactivated(actor: &User) -> Result<()> {
    if actor.is_active() {
        return Ok(());
    }
    Err(helm_core::Error::Forbidden(format!(
        "@{} is deactivated and cannot act; reactivate them first",
        actor.name
    ))
    .into())
}

/// The largest file `files.read` returns whole (a larger one is refused
/// rather than cut, so a script never mistakes a prefix for the file).
pub const MAX_READ: usize = 64 * 1024 * 1024;

/// How to open a data directory.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// The data directory.
    pub path: PathBuf,
    /// Create the workspace when the directory has none yet.
    pub create: bool,
    /// Act as this person (by name) instead of the Captain.
    pub user: Option<String>,
}

/// A data directory opened here.
pub struct Embedded {
    helm: Helm,
    actor: User,
    /// Held while the workspace is open: a server cannot start on the same
    /// directory meanwhile, and opening refuses while one runs.
    lock: Mutex<Option<DataLock>>,
    /// Set by `close()` on the handle that opened the directory: every
    /// handle of the workspace (`as_user` ones too) refuses work from then
    /// on, as the directory may already belong to a server.
    closed: Arc<AtomicBool>,
}

impl Embedded {
    /// Opens (and with `create`, initialises) a data directory.
    pub async fn open(options: OpenOptions) -> Result<Self> {
        let lock = DataLock::command(&options.path)?;
        let mut helm_options = HelmOptions::new(&options.path);
        // The same settings the CLI and the server read: the data
        // directory's helm.toml, then HELM_* (Python passes no flags).
        helm_core::HelmConfig::resolve([
            ConfigLayer::file_if_present(&options.path.join("helm.toml"))?,
            ConfigLayer::process_env()?,
        ])?
        .apply(&mut helm_options)?;
        helm_options.embedder = embedder(&options.path)?;
        let (helm, lock) = if options.create {
            let helm = Helm::init(helm_options, InitOptions::default()).await?.0;
            // A directory that did not exist needed no lock; now it does.
            (helm, DataLock::command(&options.path)?)
        } else {
            (Helm::open(helm_options).await?, lock)
        };
        let actor = match &options.user {
            Some(name) => helm.user(name).await?,
            None => helm.captain().await?,
        };
        refuse_deactivated(&actor)?;
        Ok(Embedded {
            helm,
            actor,
            lock: Mutex::new(Some(lock)),
            closed: Arc::default(),
        })
    }

    /// The same workspace, acting as another person.
    pub async fn as_user(&self, name: &str) -> Result<Self> {
        let actor = self.open_helm()?.user(name).await?;
        refuse_deactivated(&actor)?;
        Ok(Embedded {
            helm: self.helm.clone(),
            actor,
            // The first handle holds the lock for both.
            lock: Mutex::new(None),
            closed: self.closed.clone(),
        })
    }

    /// The facade, while the workspace is open.
    fn open_helm(&self) -> Result<&Helm> {
        if self.closed.load(Ordering::Acquire) {
            return Err(failure(
                ErrorKind::Unavailable,
                "closed",
                "this workspace was closed; open it again with onehelm.Helm.open(path)",
            ));
        }
        Ok(&self.helm)
    }

    /// The facade, for the benchmark and the tool bridge.
    pub fn helm(&self) -> &Helm {
        &self.helm
    }
}

#[cfg(feature = "local-embed")]
fn embedder(data: &std::path::Path) -> Result<Option<Arc<dyn helm_core::memory::embed::Embedder>>> {
    Ok(helm_core::memory::embed::local_embedder(data)?)
}

#[cfg(not(feature = "local-embed"))]
fn embedder(
    _data: &std::path::Path,
) -> Result<Option<Arc<dyn helm_core::memory::embed::Embedder>>> {
    // Built without the local embedder: recall works by words.
    Ok(None)
}

fn channel_ref(raw: &str) -> Result<ChannelRef> {
    Ok(raw.parse::<ChannelRef>()?)
}

struct LocalEvents(Follower);

#[async_trait]
impl EventFeed for LocalEvents {
    async fn next(&mut self) -> Result<Event> {
        // One consumer: the event is copied only if another follower
        // still holds it.
        Ok(std::sync::Arc::unwrap_or_clone(self.0.next().await?))
    }
}

#[async_trait]
impl Backend for Embedded {
    fn mode(&self) -> &'static str {
        "embedded"
    }

    async fn me(&self) -> Result<User> {
        Ok(self.actor.clone())
    }

    async fn create_channel(&self, request: NewChannel) -> Result<ChannelRecord> {
        Ok(self
            .open_helm()?
            .create_channel_with(&self.actor, request)
            .await?)
    }

    async fn channels(&self, archived: bool) -> Result<Vec<ChannelRecord>> {
        let filter = ChannelFilter {
            include_archived: archived,
        };
        Ok(self
            .open_helm()?
            .visible_channels(&self.actor, filter)
            .await?)
    }

    async fn channel(&self, channel: &str) -> Result<ChannelRecord> {
        Ok(self
            .open_helm()?
            .visible_channel(&self.actor, &channel_ref(channel)?)
            .await?)
    }

    async fn archive(&self, channel: &str) -> Result<ChannelRecord> {
        Ok(self
            .open_helm()?
            .archive_channel(&self.actor, &channel_ref(channel)?)
            .await?)
    }

    async fn rename(&self, channel: &str, name: &str) -> Result<ChannelRecord> {
        Ok(self
            .open_helm()?
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

    async fn restore(&self, channel: &str) -> Result<ChannelRecord> {
        Ok(self
            .open_helm()?
            .restore_channel(&self.actor, &channel_ref(channel)?)
            .await?)
    }

    async fn delete(&self, channel: &str, confirm: &str) -> Result<()> {
        Ok(self
            .open_helm()?
            .delete_channel(&self.actor, &channel_ref(channel)?, confirm)
            .await?)
    }

    async fn model(&self, channel: &str) -> Result<Option<ResolvedModel>> {
        let record = self.channel(channel).await?;
        Ok(self
            .open_helm()?
            .resolve_model(&ChannelRef::Id(record.channel.id), None)
            .await?)
    }

    async fn set_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> Result<Option<ResolvedModel>> {
        let record = self.channel(channel).await?;
        self.open_helm()?
            .set_model_policy(&self.actor, PolicyScope::Channel(record.channel.id), choice)
            .await?;
        self.model(channel).await
    }

    async fn set_workspace_model(&self, choice: Option<ModelChoice>) -> Result<()> {
        self.open_helm()?
            .set_model_policy(&self.actor, PolicyScope::Workspace, choice)
            .await?;
        Ok(())
    }

    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> Result<PostedMessage> {
        Ok(self
            .open_helm()?
            .post_message(&self.actor, &channel_ref(channel)?, text, thread)
            .await?)
    }

    async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> Result<ThreadList> {
        let record = self.channel(channel).await?;
        Ok(self
            .open_helm()?
            .list_threads(&ChannelRef::Id(record.channel.id), filter, limit)
            .await?)
    }

    async fn thread_cursor(&self, channel: &str, id: ThreadId) -> Result<ThreadCursor> {
        Ok(self
            .open_helm()?
            .thread_cursor(&self.actor, &channel_ref(channel)?, id)
            .await?)
    }

    async fn thread(&self, id: ThreadId) -> Result<Thread> {
        Ok(self.open_helm()?.visible_thread(&self.actor, id).await?.0)
    }

    async fn messages(&self, id: ThreadId) -> Result<Vec<Message>> {
        self.open_helm()?.visible_thread(&self.actor, id).await?;
        Ok(self.open_helm()?.thread_messages(id).await?)
    }

    async fn set_thread_status(&self, id: ThreadId, status: ThreadStatus) -> Result<Thread> {
        self.open_helm()?.visible_thread(&self.actor, id).await?;
        Ok(self
            .open_helm()?
            .set_thread_status(&self.actor, id, status)
            .await?)
    }

    async fn rename_thread(&self, id: ThreadId, title: &str) -> Result<Thread> {
        Ok(self
            .open_helm()?
            .rename_thread(&self.actor, id, title)
            .await?)
    }

    async fn retry_thread(&self, id: ThreadId) -> Result<helm_core::model::Turn> {
        Ok(self.open_helm()?.retry_thread(&self.actor, id).await?)
    }

    async fn stop_thread(&self, id: ThreadId) -> Result<()> {
        self.open_helm()?.visible_thread(&self.actor, id).await?;
        self.open_helm()?.stop_thread(&self.actor, id).await?;
        Ok(())
    }

    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>> {
        let record = self.channel(channel).await?;
        Ok(self
            .open_helm()?
            .activity(&ChannelRef::Id(record.channel.id), thread, limit)
            .await?
            .1)
    }

    async fn recall(&self, channel: &str, query: &str, limit: usize) -> Result<Vec<RecallHit>> {
        let record = self.channel(channel).await?;
        let channel = ChannelRef::Id(record.channel.id);
        // Items not embedded yet are embedded first, so meaning-based recall
        // sees them (a no-op without an embedder); those queued again after
        // an upgrade keep their vector until the server embeds them.
        self.open_helm()?.embed_unembedded(&channel).await?;
        let mut request = RecallQuery::new(query);
        request.limit = limit;
        Ok(self
            .open_helm()?
            .recall_as(&self.actor, &channel, request)
            .await?)
    }

    async fn remember(&self, channel: &str, note: MemoryNote) -> Result<MemoryItem> {
        Ok(self
            .open_helm()?
            .remember(&self.actor, &channel_ref(channel)?, note)
            .await?)
    }

    async fn memory(&self, channel: &str, filter: MemoryFilter) -> Result<Vec<MemoryItem>> {
        Ok(self
            .open_helm()?
            .channel_memory(&self.actor, &channel_ref(channel)?, filter)
            .await?)
    }

    async fn change_memory(&self, id: MemoryId, change: MemoryChange) -> Result<MemoryItem> {
        let helm = self.open_helm()?;
        Ok(match change {
            MemoryChange::Edit(text) => helm.edit_memory(&self.actor, id, &text).await?,
            MemoryChange::Forget => helm.forget_memory(&self.actor, id).await?,
            MemoryChange::Restore => helm.restore_memory(&self.actor, id).await?,
            MemoryChange::Pin(pinned) => helm.pin_memory(&self.actor, id, pinned).await?,
        })
    }

    async fn import_history(&self, channel: &str, history: Vec<u8>) -> Result<ImportReport> {
        Ok(self
            .open_helm()?
            .import_history(
                &self.actor,
                &channel_ref(channel)?,
                std::io::Cursor::new(history),
            )
            .await?)
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
        let files = self
            .open_helm()?
            .workspace_files(&self.actor, &channel_ref(channel)?)
            .await?;
        let read = files.read_bytes(path, MAX_READ).await?;
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
        let files = self
            .open_helm()?
            .workspace_files(&self.actor, &channel_ref(channel)?)
            .await?;
        Ok(if create {
            files.create(path, bytes).await?
        } else {
            files.write(path, bytes).await?
        })
    }

    async fn save_note(&self, channel: &str, note: NewNote) -> Result<FileEntry> {
        Ok(self
            .open_helm()?
            .save_note(&self.actor, &channel_ref(channel)?, note)
            .await?)
    }

    async fn list_files(&self, channel: &str, path: &str) -> Result<Vec<FileEntry>> {
        let files = self
            .open_helm()?
            .workspace_files(&self.actor, &channel_ref(channel)?)
            .await?;
        Ok(files.list(path).await?)
    }

    async fn run(&self, channel: &str, request: RunRequest) -> Result<CommandResult> {
        let timeout = match request.timeout_secs {
            Some(secs) => Duration::from_secs_f64(secs),
            None => helm_core::exec::RUN_AND_WAIT_TIMEOUT,
        };
        let mut spec = CommandSpec::new(request.command).timeout(Some(timeout));
        if let Some(cwd) = request.cwd {
            spec = spec.cwd(cwd);
        }
        Ok(self
            .open_helm()?
            .exec(&self.actor, &channel_ref(channel)?, spec)
            .await?)
    }

    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> Result<ProviderConfig> {
        Ok(if replace {
            self.open_helm()?
                .replace_provider(&self.actor, config, make_default)
                .await?
        } else {
            self.open_helm()?
                .add_provider(&self.actor, config, make_default)
                .await?
        })
    }

    async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        Ok(self.open_helm()?.providers().await?)
    }

    fn register_provider(&self, name: &str, provider: Arc<dyn Provider>) -> Result<()> {
        self.open_helm()?.register_provider(name, provider);
        Ok(())
    }

    async fn open_terminal(
        &self,
        channel: &str,
        rows: u16,
        cols: u16,
    ) -> Result<crate::terminal::TerminalCore> {
        crate::terminal::TerminalCore::open(
            self.open_helm()?.clone(),
            self.actor.clone(),
            channel.to_string(),
            rows,
            cols,
        )
        .await
    }

    async fn register_tool(&self, channel: &str, tool: Arc<dyn Tool>) -> Result<()> {
        // Only someone who may manage the channel gives its agent a tool.
        let record = self.channel(channel).await?;
        if !self
            .open_helm()?
            .manages_channel(&self.actor, &record.channel)
            .await?
        {
            return Err(helm_core::Error::Forbidden(format!(
                "only the Captain, an admin or an owner of {} gives its agent tools",
                record.channel.name
            ))
            .into());
        }
        Ok(self
            .open_helm()?
            .register_channel_tool(&ChannelRef::Id(record.channel.id), tool)
            .await?)
    }

    async fn unregister_tool(&self, channel: &str, name: &str) -> Result<()> {
        let record = self.channel(channel).await?;
        self.open_helm()?
            .unregister_channel_tool(&ChannelRef::Id(record.channel.id), name)
            .await?;
        Ok(())
    }

    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>> {
        Ok(self
            .open_helm()?
            .approvals(&self.actor, pending_only)
            .await?)
    }

    async fn decide(&self, id: i64, approve: bool, note: Option<String>) -> Result<Approval> {
        Ok(if approve {
            self.open_helm()?.approve(&self.actor, id, note).await?
        } else {
            self.open_helm()?.deny(&self.actor, id, note).await?
        })
    }

    async fn add_user(&self, name: &str, role: Role) -> Result<User> {
        Ok(self.open_helm()?.add_user(&self.actor, name, role).await?)
    }

    async fn change_person(&self, name: &str, change: PersonChange) -> Result<User> {
        let helm = self.open_helm()?;
        let user = helm.user(name).await?;
        Ok(helm.change_person(&self.actor, user.id, change).await?)
    }

    async fn drive_turns(&self) -> Result<()> {
        if !self.open_helm()?.is_driving() {
            self.open_helm()?.start_runtime().await?;
        }
        Ok(())
    }

    async fn events(&self) -> Result<Box<dyn EventFeed>> {
        let from = self.open_helm()?.store().event_head().await?;
        Ok(Box::new(LocalEvents(self.open_helm()?.follow(from).await?)))
    }

    async fn close(&self) {
        let lock = self.lock.lock().ok().and_then(|mut l| l.take());
        if lock.is_some() {
            self.closed.store(true, Ordering::Release);
            if self.helm.is_driving() {
                self.helm.shutdown_runtime(true).await;
            }
        }
        drop(lock);
    }
}
