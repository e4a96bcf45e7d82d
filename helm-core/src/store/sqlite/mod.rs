//! `SqliteStore`: the embedded default store.
//!
//! One writer connection behind a mutex serialises every transaction (SQLite
//! allows one writer anyway) and a small pool of read-only connections serves
//! reads concurrently under WAL. All SQLite work runs on tokio's blocking
//! threads, so async callers never stall the runtime. Events are published to
//! live subscribers while the writer lock is still held, which keeps the live
//! feed in exactly `seq` order.

mod artifacts;
mod audit;
mod auth;
mod authority;
mod channels;
mod codec;
mod errors;
mod escalations;
mod events;
mod import;
mod mcp_pins;
mod members;
mod memory;
mod messages;
mod ot_keys;
mod policy;
mod providers;
mod reading;
mod recall;
mod schema;
mod summaries;
mod threads;
mod tool_actions;
mod turns;
mod workspace;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use tokio::sync::broadcast;

use super::Store;
use super::types::{
    AuditRecord, AuditVerification, Bootstrap, BootstrapPlan, CapabilityChange, CaptainSetup,
    ChannelFilter, ChannelPlan, ChannelRecord, ChannelUpdate, Escalated, InviteAcceptance,
    JournalEntry, MemoryFilter, NewAgent, NewApiToken, NewApproval, NewEscalation, NewInvite,
    NewMemory, NewOtKey, NewPost, NewThreadSummary, NewToolAction, NewUser, PolicyScope, Posted,
    Repaired, Resume, StoreStats, ToolActionOutcome, TurnFinish, WorldHook,
};
use crate::auth::{ApiToken, Invite, OtKey, Session};
use crate::error::{Error, Result};
use crate::events::{Event, EventBody};
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

/// How many live events a slow subscriber may fall behind before it lags
/// (and must resume from the durable log).
const LIVE_CAPACITY: usize = 8192;
/// Idle read connections kept open.
const MAX_IDLE_READERS: usize = 8;
/// How long a connection waits for a lock held by another process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The SQLite implementation of [`Store`].
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    live: broadcast::Sender<Event>,
    /// The seq of each streaming turn's first `message.delta`: when the
    /// turn ends, its deltas are dropped from the log, which keeps the
    /// reply once (in `message.completed`). Lost with the process, so an
    /// interrupted turn keeps its deltas; they are bounded by the reply cap.
    first_delta: Mutex<std::collections::HashMap<TurnId, u64>>,
}

/// A write transaction that also collects the events it emits, to be
/// published once it commits.
pub(crate) struct Tx<'c> {
    tx: rusqlite::Transaction<'c>,
    events: Vec<Event>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and brings its schema
    /// up to date. Runs on a blocking thread.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        tokio::task::spawn_blocking(move || Self::open_blocking(path))
            .await
            .map_err(|e| Error::Internal(format!("store open task failed: {e}")))?
    }

    fn open_blocking(path: PathBuf) -> Result<Self> {
        let mut writer = Connection::open(&path).map_err(|e| {
            Error::store(format_args!("cannot open database {}", path.display()), e)
        })?;
        configure(&writer, false)?;
        schema::migrate(&mut writer)?;
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                writer: Mutex::new(writer),
                readers: Mutex::new(Vec::new()),
                live,
                first_delta: Mutex::new(std::collections::HashMap::new()),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The schema version (the number of migrations applied).
    pub async fn schema_version(&self) -> Result<i64> {
        self.read(|c| Ok(c.pragma_query_value(None, "user_version", |r| r.get(0))?))
            .await
    }

    /// Runs `f` on a read-only connection on a blocking thread.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let conn = inner.take_reader()?;
            let out = f(&conn);
            inner.return_reader(conn);
            out
        })
        .await
        .map_err(|e| Error::Internal(format!("store read task failed: {e}")))?
    }

    /// Runs `f` in one immediate write transaction on a blocking thread;
    /// commits if it returns `Ok`, then publishes the events it emitted.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = lock(&inner.writer)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut work = Tx {
                tx,
                events: Vec::new(),
            };
            let out = f(&mut work)?;
            let Tx { tx, events } = work;
            tx.commit()?;
            for event in events {
                // No receivers is fine: nobody is listening live.
                let _ = inner.live.send(event);
            }
            Ok(out)
        })
        .await
        .map_err(|e| Error::Internal(format!("store write task failed: {e}")))?
    }
}

impl Tx<'_> {
    /// The connection inside the transaction.
    pub(crate) fn conn(&self) -> &Connection {
        &self.tx
    }

    /// Appends an event to the durable log; it is published after commit.
    pub(crate) fn emit(&mut self, channel_id: Option<ChannelId>, body: EventBody) -> Result<Event> {
        let event = events::append(&self.tx, channel_id, body)?;
        self.events.push(event.clone());
        Ok(event)
    }
}

impl Inner {
    fn take_reader(&self) -> Result<Connection> {
        if let Some(conn) = lock(&self.readers)?.pop() {
            return Ok(conn);
        }
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(|e| Error::store(format_args!("cannot open {}", self.path.display()), e))?;
        configure(&conn, true)?;
        Ok(conn)
    }

    fn return_reader(&self, conn: Connection) {
        if let Ok(mut pool) = self.readers.lock()
            && pool.len() < MAX_IDLE_READERS
        {
            pool.push(conn);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> Result<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| Error::Internal("a store thread panicked while holding a connection".into()))
}

fn configure(conn: &Connection, read_only: bool) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if !read_only {
        // WAL lets readers run beside the writer; NORMAL sync is durable across
        // process crashes and loses at most the last commits on power loss.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    }
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

#[async_trait]
impl Store for SqliteStore {
    async fn bootstrap(&self, plan: BootstrapPlan, world: WorldHook) -> Result<Bootstrap> {
        self.write(move |tx| workspace::bootstrap(tx, plan, world))
            .await
    }

    async fn workspace(&self) -> Result<Option<Workspace>> {
        self.read(workspace::workspace).await
    }

    async fn insert_user(&self, user: NewUser) -> Result<User> {
        self.write(move |tx| workspace::insert_user(tx.conn(), &user))
            .await
    }

    async fn user(&self, id: UserId) -> Result<User> {
        self.read(move |c| workspace::user(c, id)).await
    }

    async fn user_by_name(&self, name: &str) -> Result<User> {
        let name = name.to_string();
        self.read(move |c| workspace::user_by_name(c, &name)).await
    }

    async fn list_users(&self) -> Result<Vec<User>> {
        self.read(workspace::list_users).await
    }

    async fn provision_channel(
        &self,
        plan: ChannelPlan,
        world: WorldHook,
    ) -> Result<ChannelRecord> {
        self.write(move |tx| channels::provision(tx, plan, world))
            .await
    }

    async fn channel(&self, channel: &ChannelRef) -> Result<ChannelRecord> {
        let channel = channel.clone();
        self.read(move |c| channels::get(c, &channel)).await
    }

    async fn list_channels(&self, filter: ChannelFilter) -> Result<Vec<ChannelRecord>> {
        self.read(move |c| channels::list(c, filter)).await
    }

    async fn set_channel_status(
        &self,
        channel: ChannelId,
        status: ChannelStatus,
        actor: Actor,
    ) -> Result<ChannelRecord> {
        self.write(move |tx| channels::set_status(tx, channel, status, &actor))
            .await
    }

    async fn delete_channel(
        &self,
        channel: ChannelId,
        actor: Actor,
        world: WorldHook,
    ) -> Result<()> {
        self.write(move |tx| channels::delete(tx, channel, &actor, world))
            .await
    }

    async fn insert_agent(&self, agent: NewAgent) -> Result<Agent> {
        self.write(move |tx| channels::insert_agent(tx.conn(), &agent))
            .await
    }

    async fn bind_agent(&self, agent: AgentId, channel: ChannelId) -> Result<Binding> {
        self.write(move |tx| channels::bind(tx.conn(), agent, channel))
            .await
    }

    async fn model_policy(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<ModelPolicy> {
        self.read(move |c| policy::get(c, channel, thread)).await
    }

    async fn set_model_policy(
        &self,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
        actor: Actor,
    ) -> Result<()> {
        self.write(move |tx| policy::set(tx, scope, choice, &actor))
            .await
    }

    async fn journal(&self, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>> {
        self.read(move |c| channels::journal(c, channel)).await
    }

    async fn put_provider(&self, config: ProviderConfig) -> Result<()> {
        config.validate()?;
        self.write(move |tx| providers::upsert(tx.conn(), &config))
            .await
    }

    async fn provider(&self, name: &str) -> Result<ProviderConfig> {
        let name = name.to_string();
        self.read(move |c| providers::get(c, &name)).await
    }

    async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        self.read(providers::list).await
    }

    async fn post_message(&self, post: NewPost) -> Result<Posted> {
        self.write(move |tx| threads::post(tx, post)).await
    }

    async fn thread(&self, id: ThreadId) -> Result<Thread> {
        self.read(move |c| threads::get(c, id)).await
    }

    async fn threads(&self, channel: ChannelId, limit: usize) -> Result<Vec<Thread>> {
        self.read(move |c| threads::list(c, channel, limit)).await
    }

    async fn thread_messages(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
    ) -> Result<Vec<Message>> {
        self.read(move |c| threads::messages(c, thread, up_to))
            .await
    }

    async fn thread_tail(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
        budget_tokens: usize,
    ) -> Result<crate::store::ThreadTail> {
        self.read(move |c| threads::tail(c, thread, up_to, budget_tokens))
            .await
    }

    async fn message(&self, id: MessageId) -> Result<Message> {
        self.read(move |c| messages::get(c, id)).await
    }

    async fn set_thread_status(
        &self,
        thread: ThreadId,
        status: ThreadStatus,
        actor: Actor,
    ) -> Result<Thread> {
        self.write(move |tx| threads::set_status(tx, thread, status, &actor))
            .await
    }

    async fn turn(&self, id: TurnId) -> Result<Turn> {
        self.read(move |c| turns::get(c, id)).await
    }

    async fn thread_turns(&self, thread: ThreadId) -> Result<Vec<Turn>> {
        self.read(move |c| turns::for_thread(c, thread)).await
    }

    async fn runnable_turns(&self, capacity: u32) -> Result<Vec<Turn>> {
        self.read(move |c| turns::runnable(c, capacity)).await
    }

    async fn running_turns(&self) -> Result<Vec<Turn>> {
        self.read(turns::running).await
    }

    async fn start_turn(
        &self,
        turn: TurnId,
        served_by: Option<ModelChoice>,
    ) -> Result<Option<Turn>> {
        self.write(move |tx| turns::start(tx, turn, served_by))
            .await
    }

    async fn append_reply(&self, turn: TurnId, delta: String) -> Result<bool> {
        let seq = self
            .write(move |tx| turns::append_reply(tx, turn, &delta))
            .await?;
        if let Some(seq) = seq {
            lock(&self.inner.first_delta)?.entry(turn).or_insert(seq);
        }
        Ok(seq.is_some())
    }

    async fn finish_turn(&self, turn: TurnId, finish: TurnFinish) -> Result<Option<Turn>> {
        let first_delta = lock(&self.inner.first_delta)?.get(&turn).copied();
        let ended = self
            .write(move |tx| turns::finish(tx, turn, finish, first_delta))
            .await?;
        if ended.is_some() {
            lock(&self.inner.first_delta)?.remove(&turn);
        }
        Ok(ended)
    }

    async fn start_tool_action(&self, action: NewToolAction) -> Result<ToolAction> {
        self.write(move |tx| tool_actions::start(tx, action)).await
    }

    async fn finish_tool_action(
        &self,
        id: ToolActionId,
        outcome: ToolActionOutcome,
    ) -> Result<ToolAction> {
        self.write(move |tx| tool_actions::finish(tx, id, outcome))
            .await
    }

    async fn tool_actions(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>> {
        self.read(move |c| tool_actions::list(c, channel, thread, limit))
            .await
    }

    async fn add_memory(&self, memory: NewMemory) -> Result<MemoryItem> {
        self.write(move |tx| memory::insert(tx, memory)).await
    }

    async fn supersede_memory(&self, id: MemoryId, replacement: NewMemory) -> Result<MemoryItem> {
        self.write(move |tx| memory::supersede(tx, id, replacement))
            .await
    }

    async fn forget_memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.write(move |tx| memory::forget(tx, id)).await
    }

    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
        self.write(move |tx| memory::pin(tx, id, pinned)).await
    }

    async fn memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.read(move |c| memory::get(c, id)).await
    }

    async fn list_memory(
        &self,
        channel: ChannelId,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>> {
        self.read(move |c| memory::list(c, channel, &filter)).await
    }

    async fn import_history(
        &self,
        channel: ChannelId,
        plan: ImportPlan,
        actor: Actor,
    ) -> Result<ImportReport> {
        self.write(move |tx| import::import(tx, channel, plan, &actor))
            .await
    }

    async fn recall_lexical(
        &self,
        channel: ChannelId,
        fts_query: &str,
        depth: usize,
    ) -> Result<Vec<(ItemKey, f64)>> {
        let fts_query = fts_query.to_string();
        self.read(move |c| recall::lexical(c, channel, &fts_query, depth))
            .await
    }

    async fn recall_items(&self, keys: Vec<ItemKey>) -> Result<Vec<CandidateItem>> {
        self.read(move |c| recall::items(c, &keys)).await
    }

    async fn thread_external_ids(&self, thread: ThreadId) -> Result<Vec<String>> {
        self.read(move |c| recall::thread_external_ids(c, thread))
            .await
    }

    async fn threads_opened_between(
        &self,
        channel: ChannelId,
        from: i64,
        to: i64,
    ) -> Result<Vec<ThreadId>> {
        self.read(move |c| threads::opened_between(c, channel, from, to))
            .await
    }

    async fn channel_authors(&self, channel: ChannelId) -> Result<Vec<String>> {
        self.read(move |c| threads::authors(c, channel)).await
    }

    async fn embed_backlog(
        &self,
        channel: Option<ChannelId>,
        limit: usize,
    ) -> Result<Vec<(ItemKey, ChannelId, String)>> {
        self.read(move |c| recall::backlog(c, channel, limit)).await
    }

    async fn embed_backlog_len(&self, channel: Option<ChannelId>) -> Result<u64> {
        self.read(move |c| recall::backlog_len(c, channel)).await
    }

    async fn put_embeddings(
        &self,
        model: &str,
        vectors: Vec<(ItemKey, ChannelId, Vec<f32>)>,
    ) -> Result<()> {
        let model = model.to_string();
        self.write(move |tx| recall::put_embeddings(tx.conn(), &model, &vectors))
            .await
    }

    async fn channel_vectors(
        &self,
        model: &str,
        channel: ChannelId,
    ) -> Result<Vec<(ItemKey, Vec<f32>)>> {
        let model = model.to_string();
        self.read(move |c| recall::vectors(c, &model, channel))
            .await
    }

    async fn record_artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        kind: ArtifactKind,
        created_by: &str,
        paths: Vec<String>,
        touch: bool,
    ) -> Result<Vec<Artifact>> {
        let created_by = created_by.to_string();
        self.write(move |tx| {
            artifacts::record(tx, channel, thread, kind, &created_by, &paths, touch)
        })
        .await
    }

    async fn artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Artifact>> {
        self.read(move |c| artifacts::list(c, channel, thread))
            .await
    }

    async fn put_thread_summary(&self, summary: NewThreadSummary) -> Result<MemoryId> {
        self.write(move |tx| summaries::put(tx, summary)).await
    }

    async fn threads_due_for_summary(
        &self,
        idle_before: i64,
        limit: usize,
    ) -> Result<Vec<ThreadId>> {
        self.read(move |c| summaries::due(c, idle_before, limit))
            .await
    }

    async fn escalate(&self, escalation: NewEscalation) -> Result<Escalated> {
        self.write(move |tx| escalations::escalate(tx, escalation))
            .await
    }

    async fn settle_escalation(
        &self,
        id: EscalationId,
        status: EscalationStatus,
        outcome: String,
        resume: Option<Resume>,
    ) -> Result<(Escalation, Option<Turn>)> {
        self.write(move |tx| escalations::settle_escalation(tx, id, status, &outcome, resume))
            .await
    }

    async fn escalation(&self, id: EscalationId) -> Result<Escalation> {
        self.read(move |c| escalations::escalation(c, id)).await
    }

    async fn escalations(&self, open_only: bool) -> Result<Vec<Escalation>> {
        self.read(move |c| escalations::escalations(c, open_only))
            .await
    }

    async fn request_approval(&self, approval: NewApproval) -> Result<Approval> {
        self.write(move |tx| authority::request_approval(tx, approval))
            .await
    }

    async fn decide_approval(
        &self,
        id: i64,
        status: ApprovalStatus,
        by: Option<UserId>,
        note: Option<String>,
    ) -> Result<Approval> {
        self.write(move |tx| authority::decide_approval(tx, id, status, by, note.as_deref()))
            .await
    }

    async fn approval(&self, id: i64) -> Result<Approval> {
        self.read(move |c| authority::approval(c, id)).await
    }

    async fn approvals(&self, pending_only: bool) -> Result<Vec<Approval>> {
        self.read(move |c| authority::approvals(c, pending_only))
            .await
    }

    async fn approval_required(&self, channel: ChannelId, action: ApprovalAction) -> Result<bool> {
        self.read(move |c| authority::approval_required(c, channel, action))
            .await
    }

    async fn set_approval_rule(
        &self,
        channel: Option<ChannelId>,
        action: ApprovalAction,
        required: bool,
    ) -> Result<()> {
        self.write(move |tx| authority::set_approval_rule(tx.conn(), channel, action, required))
            .await
    }

    async fn change_capabilities(&self, change: CapabilityChange) -> Result<CapabilityPolicy> {
        self.write(move |tx| authority::change_capabilities(tx, change))
            .await
    }

    async fn audit(&self, entry: AuditRecord) -> Result<()> {
        self.write(move |tx| {
            audit::append(
                tx.conn(),
                audit::AuditInput {
                    channel_id: entry.channel_id,
                    thread_id: entry.thread_id,
                    agent: entry.agent.as_deref(),
                    asker: entry.asker.as_deref(),
                    action: &entry.action,
                    input_summary: &entry.input_summary,
                    outcome: &entry.outcome,
                },
            )
        })
        .await
    }

    async fn audit_log(&self, channel: Option<ChannelId>, limit: usize) -> Result<Vec<AuditEntry>> {
        self.read(move |c| audit::list(c, channel, limit)).await
    }

    async fn verify_audit(&self) -> Result<AuditVerification> {
        self.read(audit::verify).await
    }

    async fn agent_turns_since_human(&self, thread: ThreadId) -> Result<u32> {
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT count(*) FROM turns WHERE thread_id = ?1 AND hop > 0 AND queued_at >= \
                 coalesce((SELECT max(created) FROM messages WHERE thread_id = ?1 \
                 AND author_kind = 'human'), 0)",
            )?
            .query_row([thread], |r| r.get(0))?)
        })
        .await
    }

    async fn post_note(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        text: String,
    ) -> Result<Message> {
        self.write(move |tx| authority::note(tx, channel, thread, &text))
            .await
    }

    async fn stats(&self) -> Result<StoreStats> {
        self.read(workspace::stats).await
    }

    async fn events_after(&self, after: u64, limit: usize) -> Result<Vec<Event>> {
        self.read(move |c| events::after(c, after, limit)).await
    }

    fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.live.subscribe()
    }

    async fn setup_done(&self) -> Result<bool> {
        self.read(auth::setup_done).await
    }

    async fn complete_setup(&self, setup: CaptainSetup) -> Result<User> {
        self.write(move |tx| auth::complete_setup(tx.conn(), &setup))
            .await
    }

    async fn user_credentials(&self, name: &str) -> Result<Option<(User, Option<String>)>> {
        let name = name.to_string();
        self.read(move |c| auth::user_credentials(c, &name)).await
    }

    async fn set_password_hash(&self, user: UserId, hash: Option<String>) -> Result<()> {
        self.write(move |tx| auth::set_password_hash(tx.conn(), user, hash.as_deref()))
            .await
    }

    async fn insert_session(
        &self,
        user: UserId,
        secret_hash: String,
        expires: jiff::Timestamp,
    ) -> Result<Session> {
        self.write(move |tx| auth::insert_session(tx.conn(), user, &secret_hash, expires))
            .await
    }

    async fn session_user(&self, secret_hash: &str) -> Result<Option<(Session, User)>> {
        let hash = secret_hash.to_string();
        self.read(move |c| auth::session_user(c, &hash)).await
    }

    async fn delete_session(&self, secret_hash: &str) -> Result<bool> {
        let hash = secret_hash.to_string();
        self.write(move |tx| auth::delete_session(tx.conn(), &hash))
            .await
    }

    async fn insert_api_token(&self, token: NewApiToken) -> Result<ApiToken> {
        self.write(move |tx| auth::insert_api_token(tx.conn(), &token))
            .await
    }

    async fn api_tokens(&self, user: UserId) -> Result<Vec<ApiToken>> {
        self.read(move |c| auth::api_tokens(c, user)).await
    }

    async fn api_token_user(&self, secret_hash: &str) -> Result<Option<(ApiToken, User)>> {
        let hash = secret_hash.to_string();
        let found = self.read(move |c| auth::api_token_user(c, &hash)).await?;
        Ok(match found {
            Some((token, user, stale)) => {
                if stale {
                    let id = token.id;
                    self.write(move |tx| auth::touch_api_token(tx.conn(), id))
                        .await?;
                }
                Some((token, user))
            }
            None => None,
        })
    }

    async fn revoke_api_token(&self, user: UserId, id: i64) -> Result<ApiToken> {
        self.write(move |tx| auth::revoke_api_token(tx.conn(), user, id))
            .await
    }

    async fn insert_invite(&self, invite: NewInvite) -> Result<Invite> {
        self.write(move |tx| auth::insert_invite(tx.conn(), &invite))
            .await
    }

    async fn invites(&self) -> Result<Vec<Invite>> {
        self.read(auth::invites).await
    }

    async fn revoke_invite(&self, id: i64) -> Result<Invite> {
        self.write(move |tx| auth::revoke_invite(tx.conn(), id))
            .await
    }

    async fn accept_invite(&self, acceptance: InviteAcceptance) -> Result<User> {
        self.write(move |tx| auth::accept_invite(tx, &acceptance))
            .await
    }

    async fn channel_members(&self, channel: ChannelId) -> Result<Vec<Member>> {
        self.read(move |c| members::list(c, channel)).await
    }

    async fn add_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        role: MemberRole,
        actor: Actor,
    ) -> Result<Member> {
        self.write(move |tx| members::add(tx, channel, user, role, &actor))
            .await
    }

    async fn remove_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        actor: Actor,
    ) -> Result<()> {
        self.write(move |tx| members::remove(tx, channel, user, &actor))
            .await
    }

    async fn visible_channel_ids(&self, user: UserId) -> Result<Vec<ChannelId>> {
        self.read(move |c| members::visible_ids(c, user)).await
    }

    async fn update_channel(
        &self,
        channel: ChannelId,
        update: ChannelUpdate,
        actor: Actor,
    ) -> Result<ChannelRecord> {
        self.write(move |tx| members::update_channel(tx, channel, &update, &actor))
            .await
    }

    async fn messages_page(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        after: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        self.read(move |c| members::messages_page(c, channel, thread, after, limit))
            .await
    }

    async fn turn_counts(&self) -> Result<Vec<(TurnState, u64)>> {
        self.read(members::turn_counts).await
    }

    async fn insert_ot_key(&self, key: NewOtKey, replace: bool) -> Result<OtKey> {
        self.write(move |tx| ot_keys::insert(tx.conn(), &key, replace))
            .await
    }

    async fn ot_key(&self, channel: ChannelId) -> Result<Option<OtKey>> {
        self.read(move |c| ot_keys::live(c, channel)).await
    }

    async fn ot_key_by_hash(&self, secret_hash: &str) -> Result<Option<OtKey>> {
        let hash = secret_hash.to_string();
        let found = self.read(move |c| ot_keys::by_hash(c, &hash)).await?;
        Ok(match found {
            Some((key, stale)) => {
                if stale {
                    let id = key.id;
                    self.write(move |tx| ot_keys::touch(tx.conn(), id)).await?;
                }
                Some(key)
            }
            None => None,
        })
    }

    async fn revoke_ot_key(&self, channel: ChannelId) -> Result<OtKey> {
        self.write(move |tx| ot_keys::revoke(tx.conn(), channel))
            .await
    }

    async fn repair_after_stop(&self) -> Result<Repaired> {
        self.write(|tx| {
            Ok(Repaired {
                tool_actions: tool_actions::interrupt_orphans(tx)?,
                threads: threads::follow_latest_turns(tx)?,
            })
        })
        .await
    }

    async fn mcp_pins(&self, channel: ChannelId, server: &str) -> Result<Vec<crate::mcp::McpPin>> {
        let server = server.to_string();
        self.read(move |c| mcp_pins::list(c, channel, &server))
            .await
    }

    async fn put_mcp_pin(&self, pin: crate::mcp::McpPin, by: Option<String>) -> Result<()> {
        self.write(move |tx| mcp_pins::put(tx.conn(), &pin, by.as_deref()))
            .await
    }

    async fn clear_mcp_pins(&self, channel: ChannelId, server: &str) -> Result<u64> {
        let server = server.to_string();
        self.write(move |tx| mcp_pins::clear(tx.conn(), channel, &server))
            .await
    }

    async fn mark_read(&self, user: UserId, message: MessageId) -> Result<ReadMarker> {
        self.write(move |tx| reading::mark_read(tx, user, message))
            .await
    }

    async fn unread(&self, user: User, channels: Vec<ChannelId>) -> Result<Vec<ChannelUnread>> {
        self.read(move |c| reading::unread(c, &user, &channels))
            .await
    }

    async fn messages_before(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        self.read(move |c| reading::messages_before(c, channel, thread, before, limit))
            .await
    }

    async fn feed(
        &self,
        channel: ChannelId,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<FeedItem>> {
        self.read(move |c| reading::feed(c, channel, before, limit))
            .await
    }

    async fn rename_workspace(&self, name: String) -> Result<Workspace> {
        self.write(move |tx| reading::rename_workspace(tx, &name))
            .await
    }
}
