//! The runtime: agent turns as durable operations.
//!
//! A human message that wakes an agent is admitted as a `queued` turn (with
//! its pending reply) in the message's own transaction. The scheduler starts
//! queued turns first-in first-out per thread, up to a per-agent capacity of
//! concurrent threads; each turn streams from the model, runs its tools, and
//! ends through one finalizer in an end state. Only one process drives a data
//! directory's turns at a time (a lock file); when a driver starts, turns a
//! previous driver left `running` are marked `interrupted` with a visible
//! note and never replayed, since their side effects may already have
//! happened, while turns that never started run in order.

pub(crate) mod context;
pub mod follow;
mod models;
mod recalled;
mod skipper;
pub mod summary;
pub(crate) mod tool_notes;
pub(crate) mod tools;
mod turn;
pub mod wake;

pub use models::{ModelCheck, ProviderModels, Verification};

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::helm::computer::ComputerState;
use crate::memory::engine::RecallEngine;
use crate::model::{ChannelId, ModelChoice, ThreadId, Turn, TurnId, TurnState};
use crate::provider::{ProviderRegistry, Usage};
use crate::store::{Store, TurnFinish};
use crate::tool::authority::Authority;
use crate::world::DataRoot;
use tools::EmbedderTools;

/// How often a driver renews the leases on its running turns and looks for
/// turns whose node stopped: well inside the shortest lease a shared store
/// gives (see `PostgresStore`'s lease), so a live node never loses one.
const LEASE_TICK_EVERY: Duration = Duration::from_secs(1);

/// With nodes sharing the store: how long a queued turn is left to the
/// node that holds its channel's computer before another node runs it.
/// The holder, woken by the turn's event, takes it in milliseconds; a
/// holder that is gone (or only a CLI) costs the turn this much.
const HOLDER_FIRST: Duration = Duration::from_secs(2);

/// How long a thread whose summary failed waits before another try.
const SUMMARY_RETRY_AFTER: Duration = Duration::from_secs(15 * 60);

/// Whether `turn` has been queued for `long` (by this node's clock).
fn waited(turn: &Turn, long: Duration) -> bool {
    let queued = jiff::Timestamp::now().duration_since(turn.queued_at);
    jiff::SignedDuration::try_from(long).is_ok_and(|long| queued >= long)
}

/// How long stopping a thread waits for its running turn to end. A turn
/// ends at its next check (a model chunk, a tool call's end, a cancelled
/// command killed), so this is a bound, not a pause.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// How long pausing an archived channel waits for its running turn to stop
/// (its command killed) before it goes on.
const PAUSE_WAIT: Duration = Duration::from_secs(15);

/// Tunables of the turn engine.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// How many threads one agent works on at once.
    pub capacity_per_agent: u32,
    /// The most model calls in one turn.
    pub max_steps: u32,
    /// How often streamed text is written and announced.
    pub flush_interval: Duration,
    /// The token budget of the thread transcript in a turn's context.
    pub transcript_budget_tokens: usize,
    /// How long a thread stays quiet before it is summarised.
    pub summarize_after_idle: Duration,
    /// How often resolved and quiet threads are looked for to summarise.
    pub summary_scan_every: Duration,
    /// How many messages may fall out of a turn's context, uncovered by the
    /// thread's summary, before a turn refreshes the summary first.
    pub summary_refresh_messages: usize,
    /// The longest chain of agents waking agents (a channel agent calling
    /// Skipper, Skipper handing back, …) before a person must step in.
    pub hop_limit: u32,
    /// How many agent-woken turns a thread may have since a person last
    /// wrote in it.
    pub agent_turns_without_human: u32,
    /// How long an approval waits for the Captain before it is denied.
    pub approval_timeout: Duration,
    /// The output token limit sent to the provider with every call.
    pub max_tokens: u32,
    /// The most bytes of text one model call may stream into a reply.
    pub max_reply_bytes: usize,
    /// With a store several nodes share (Postgres): how long a node's claim
    /// on a running turn lasts unless renewed (every second while it runs).
    pub turn_lease: Duration,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            capacity_per_agent: 3,
            max_steps: 16,
            flush_interval: Duration::from_millis(50),
            transcript_budget_tokens: 24_000,
            summarize_after_idle: Duration::from_secs(6 * 3600),
            summary_scan_every: Duration::from_secs(30),
            summary_refresh_messages: summary::SUMMARY_REFRESH_MESSAGES,
            hop_limit: 6,
            agent_turns_without_human: 10,
            approval_timeout: Duration::from_secs(15 * 60),
            max_tokens: crate::config::ReplyLimits::default().max_tokens,
            max_reply_bytes: crate::config::ReplyLimits::default().max_reply_bytes,
            turn_lease: Duration::from_secs(30),
        }
    }
}

/// The turn engine of one `Helm`.
pub(crate) struct Runtime {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) root: DataRoot,
    providers: Arc<ProviderRegistry>,
    fallback_model: Option<ModelChoice>,
    pub(crate) options: RuntimeOptions,
    pub(crate) computers: Arc<ComputerState>,
    pub(crate) recall: Arc<RecallEngine>,
    /// Skipper's authority over the workspace, for its tools.
    pub(crate) authority: Arc<Authority>,
    /// Tools embedding applications registered per channel.
    pub(crate) embedder_tools: EmbedderTools,
    /// Connections to channels' MCP servers.
    pub(crate) mcp: crate::mcp::client::McpClients,
    /// Where named secrets come from.
    pub(crate) secrets: Arc<dyn crate::secrets::SecretStore>,
    /// Turns this process has taken on: spawned, running, or finishing.
    live: Mutex<HashMap<TurnId, LiveTurn>>,
    wake: Notify,
    idle: Notify,
    driver: Mutex<Driver>,
    /// Threads whose summary failed lately, so they are not retried at once.
    summary_failures: Mutex<HashMap<ThreadId, std::time::Instant>>,
    /// Skipper's agent, read once: it never changes, and every turn asks.
    skipper: tokio::sync::OnceCell<crate::model::AgentId>,
    /// Held while a profile mirror is read and rewritten (see
    /// [`Runtime::mirror_profile`]).
    mirroring: tokio::sync::Mutex<()>,
}

struct LiveTurn {
    channel: ChannelId,
    thread: ThreadId,
    agent: crate::model::AgentId,
    cancel: CancellationToken,
    /// Why it was cancelled: a person stopped it, or the process shut down.
    reason: Arc<Mutex<Option<StopReason>>>,
}

/// Why a turn was cancelled.
#[derive(Debug, Clone)]
pub(crate) enum StopReason {
    /// A person stopped it.
    Stopped(String),
    /// The process is shutting down.
    Shutdown,
    /// Its channel was archived or deleted: the note says so.
    ChannelClosed(String),
}

enum Driver {
    Idle,
    Driving { _lock: File },
    Draining,
}

/// What a runtime works with, from the facade that owns it.
pub(crate) struct RuntimeParts {
    pub store: Arc<dyn Store>,
    pub root: DataRoot,
    pub providers: Arc<ProviderRegistry>,
    pub fallback_model: Option<ModelChoice>,
    pub options: RuntimeOptions,
    pub computers: Arc<ComputerState>,
    pub recall: Arc<RecallEngine>,
    /// Skipper's authority service.
    pub authority: Arc<Authority>,
    /// Where named secrets come from.
    pub secrets: Arc<dyn crate::secrets::SecretStore>,
}

impl Runtime {
    pub(crate) fn new(parts: RuntimeParts) -> Self {
        let RuntimeParts {
            store,
            root,
            providers,
            fallback_model,
            options,
            computers,
            recall,
            authority,
            secrets,
        } = parts;
        Runtime {
            store,
            root,
            providers,
            fallback_model,
            options,
            computers,
            recall,
            authority,
            embedder_tools: EmbedderTools::default(),
            mcp: crate::mcp::client::McpClients::new(secrets.clone()),
            secrets,
            live: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            idle: Notify::new(),
            driver: Mutex::new(Driver::Idle),
            summary_failures: Mutex::new(HashMap::new()),
            skipper: tokio::sync::OnceCell::new(),
            mirroring: tokio::sync::Mutex::new(()),
        }
    }

    /// Rewrites `channel`'s profile mirror from its record as the store
    /// holds it now, if its world is on this node; returns that record.
    ///
    /// A request that changed the channel and the runtime following the
    /// same change mirror it at once. One at a time, each reading the
    /// record afresh, so a rewrite from a record read before the last
    /// change never lands after one read since: the mirror ends as the
    /// store is, not a change behind. (Mirrors are rewritten only when a
    /// channel changes, so one lock for all of them costs nothing.)
    pub(crate) async fn mirror_profile(
        &self,
        channel: ChannelId,
    ) -> Result<crate::store::ChannelRecord> {
        let _one_at_a_time = self.mirroring.lock().await;
        let record = self
            .store
            .channel(&crate::model::ChannelRef::Id(channel))
            .await?;
        self.root.world(channel).mirror_profile(&record)?;
        Ok(record)
    }

    /// Skipper's agent: the home channel's resident.
    pub(crate) async fn skipper_agent(&self) -> Result<crate::model::AgentId> {
        self.skipper
            .get_or_try_init(|| async {
                let home = crate::model::ChannelName::parse(crate::model::HOME_CHANNEL)?;
                Ok(self
                    .store
                    .channel(&crate::model::ChannelRef::Name(home))
                    .await?
                    .agent
                    .id)
            })
            .await
            .copied()
    }

    fn lock_live(&self) -> std::sync::MutexGuard<'_, HashMap<TurnId, LiveTurn>> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (single inserts and removes), so recover from poisoning.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_driver(&self) -> std::sync::MutexGuard<'_, Driver> {
        self.driver.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this process drives turns.
    pub(crate) fn is_driving(&self) -> bool {
        matches!(*self.lock_driver(), Driver::Driving { .. })
    }

    /// Becomes the data directory's turn driver: takes the lock, marks turns
    /// a previous driver left running as interrupted, and starts the
    /// scheduler. Idempotent.
    pub(crate) async fn start(self: &Arc<Self>) -> Result<()> {
        {
            let mut driver = self.lock_driver();
            if matches!(*driver, Driver::Driving { .. }) {
                return Ok(());
            }
            let path = self.root.path().join("driver.lock");
            let file = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|e| Error::io("opening the driver lock", &path, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Busy(format!(
                        "another Helm process (a running server, or another command) is \
                         driving agent turns for {}; work through that server, or wait for the \
                         other command to finish",
                        self.root.path().display()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(Error::io("locking", &path, e));
                }
            }
            *driver = Driver::Driving { _lock: file };
        }
        self.recover().await?;
        let runtime = self.clone();
        tokio::spawn(async move { runtime.schedule_loop().await });
        if self.store.shared() {
            self.follow_other_nodes();
        }
        Ok(())
    }

    /// With nodes sharing the store: follows what other nodes do. Wakes the
    /// scheduler when a turn is queued or ends anywhere, so that a turn
    /// posted on another node (for a channel whose computer this node
    /// holds) or queued behind one that ended there starts at once rather
    /// than at the next poll; and when a channel changes anywhere, follows
    /// it here (see [`Runtime::follow_change`]).
    fn follow_other_nodes(self: &Arc<Self>) {
        let mut events = self.store.subscribe();
        let runtime = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let (woken, changed, archived) = match events.recv().await {
                    Ok(event) => match &event.body {
                        EventBody::TurnQueued { .. }
                        | EventBody::TurnCompleted { .. }
                        | EventBody::TurnFailed { .. }
                        | EventBody::TurnCancelled { .. } => (true, None, false),
                        EventBody::ChannelArchived { channel } => (false, Some(channel.id), true),
                        EventBody::ChannelUpdated { channel }
                        | EventBody::ChannelRenamed { channel, .. }
                        | EventBody::ChannelRestored { channel } => {
                            (false, Some(channel.id), false)
                        }
                        _ => (false, None, false),
                    },
                    // Missed some: look anyway.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => (true, None, false),
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(runtime) = runtime.upgrade() else {
                    return;
                };
                if matches!(*runtime.lock_driver(), Driver::Idle) {
                    return;
                }
                if woken {
                    runtime.wake();
                }
                if let Some(channel) = changed {
                    // Apart, as closing waits for shells to end. Doing again
                    // what the node that made the change did (when it is
                    // this one) changes nothing.
                    tokio::spawn(async move { runtime.follow_change(channel, archived).await });
                }
            }
        });
    }

    /// What a change to `channel` made on another node means here: its
    /// profile mirror rewritten, if its world is on this node; and, when it
    /// was archived, its running turn here cancelled and its terminals and
    /// MCP servers here closed.
    async fn follow_change(&self, channel: ChannelId, archived: bool) {
        let record = self.mirror_profile(channel).await;
        match &record {
            Ok(_) => {}
            Err(e) if e.kind() == crate::error::ErrorKind::NotFound => {
                tracing::debug!(channel = %channel, error = %e, "a changed channel is gone");
            }
            Err(e) => tracing::warn!(channel = %channel, error = %e, "could not mirror a profile"),
        }
        if archived {
            let name = record.map_or_else(
                |_| "the channel".to_string(),
                |r| r.channel.name.to_string(),
            );
            let by = self.archived_by(channel).await;
            self.pause_channel(channel, &name, by.as_deref()).await;
        }
    }

    /// Who archived `channel` last, as its journal says: the node that
    /// archives it and this one (hearing of it) both cancel its running
    /// turn, and whichever gets there first writes the note, which must
    /// read the same either way.
    async fn archived_by(&self, channel: ChannelId) -> Option<String> {
        let journal = match self.store.journal(Some(channel)).await {
            Ok(journal) => journal,
            Err(e) => {
                tracing::debug!(channel = %channel, error = %e, "could not read who archived a channel");
                return None;
            }
        };
        journal
            .into_iter()
            .rev()
            .find(|e| e.action == "channel.archived")
            .filter(|e| e.actor != crate::model::Actor::System)
            .map(|e| e.actor.to_string())
    }

    /// What archiving `channel` (named `name`, archived by `by` when that is
    /// known) stops on this node: its running turn, cancelled with a note
    /// (waiting until it has ended), its terminals and its MCP servers. A
    /// paused agent's computer keeps its files but runs nothing; its MCP
    /// servers start again on first use. The node that archives a channel
    /// and every node that hears of it call this.
    pub(crate) async fn pause_channel(&self, channel: ChannelId, name: &str, by: Option<&str>) {
        let by = by.map(|by| format!(" by {by}")).unwrap_or_default();
        let note = format!(
            "This turn was cancelled: {name} was archived{by} while it ran, and what it was \
             running was stopped. Restoring the channel does not run it again; ask again then."
        );
        self.close_channel(channel, &note, PAUSE_WAIT).await;
        if let Err(e) = self.computers.terminals.close_channel(channel).await {
            tracing::warn!(channel = %channel, error = %e, "could not close a terminal");
        }
        self.mcp.close(channel, None).await;
    }

    /// Marks turns left running by a previous driver as interrupted (their
    /// unfinished tool calls with them), then repairs what else the stop
    /// left behind.
    async fn recover(&self) -> Result<()> {
        self.interrupt_orphans().await?;
        // An approval is waited for by its turn; once that turn has ended
        // (interrupted above, or earlier), approving it would do nothing, so
        // it is closed as expired rather than left open to be "approved".
        for approval in self.store.approvals(true).await? {
            let Some(turn) = approval.turn_id else {
                continue;
            };
            let ended = match self.store.turn(turn).await {
                Ok(t) => t.state.is_final(),
                Err(Error::NotFound { .. }) => true,
                Err(e) => return Err(e),
            };
            if ended {
                self.store
                    .decide_approval(
                        approval.id,
                        crate::model::ApprovalStatus::Expired,
                        None,
                        Some(crate::store::rules::APPROVAL_TURN_ENDED.into()),
                    )
                    .await?;
                tracing::warn!(
                    approval = approval.id,
                    "expired an approval whose turn ended"
                );
            }
        }
        let repaired = self.store.repair_after_stop().await?;
        if repaired != crate::store::Repaired::default() {
            tracing::warn!(
                tool_actions = repaired.tool_actions,
                threads = repaired.threads,
                "repaired records a stopped process left behind"
            );
        }
        Ok(())
    }

    /// Ends as interrupted the running turns no live node is running (see
    /// [`crate::store::TurnStore::orphaned_turns`]), leaving out this
    /// process's own. The live set is read after the store answers: a turn
    /// is live here from before it starts until after it ends, so a running
    /// turn missing from it is not this process's.
    async fn interrupt_orphans(&self) -> Result<()> {
        for turn in self.store.orphaned_turns().await? {
            if self.lock_live().contains_key(&turn.id) {
                continue;
            }
            let reply = self.store.message(turn.reply_message_id).await?;
            let ended = self
                .store
                .finish_turn(
                    turn.id,
                    TurnFinish {
                        state: TurnState::Interrupted,
                        reply: reply.content,
                        error: Some("Helm stopped while this turn was running".into()),
                        note: Some(
                            "This turn was interrupted: Helm stopped while it was running. It \
                             was not restarted, because its actions may already have happened; \
                             ask again to continue."
                                .into(),
                        ),
                        steps: turn.steps,
                        usage: Usage::default(),
                    },
                )
                .await?;
            if ended.is_some() {
                tracing::warn!(turn = %turn.id, thread = %turn.thread_id, "marked an interrupted turn");
            }
        }
        Ok(())
    }

    /// Renews this node's leases on its live turns, stops those another
    /// node has taken over and those someone asked another node to stop;
    /// then ends other nodes' orphaned turns, so the turns queued behind
    /// them can start here.
    async fn keep_leases(&self) -> Result<()> {
        let live: Vec<TurnId> = self.lock_live().keys().copied().collect();
        if !live.is_empty() {
            let renewal = self.store.renew_turn_leases(live).await?;
            let live = self.lock_live();
            for lost in renewal.lost {
                if let Some(t) = live.get(&lost) {
                    tracing::warn!(turn = %lost, "lost the lease on a running turn; stopping it");
                    t.cancel.cancel();
                }
            }
            for (turn, by) in renewal.stop {
                if let Some(t) = live.get(&turn) {
                    if let Ok(mut r) = t.reason.lock() {
                        r.get_or_insert(StopReason::Stopped(by));
                    }
                    t.cancel.cancel();
                }
            }
        }
        self.interrupt_orphans().await
    }

    /// Asks the scheduler to look for work.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }

    async fn schedule_loop(self: Arc<Self>) {
        let mut last_summary_scan = std::time::Instant::now();
        let mut last_lease_tick = std::time::Instant::now();
        let indexing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        loop {
            let draining = matches!(*self.lock_driver(), Driver::Draining);
            if draining {
                if self.lock_live().is_empty() {
                    self.idle.notify_waiters();
                    *self.lock_driver() = Driver::Idle;
                    return;
                }
            } else {
                if let Err(e) = self.schedule_once().await {
                    tracing::error!(error = %e, "scheduling turns failed");
                }
                // Items waiting for meaning-based recall are embedded in the
                // background, one paced job at a time.
                if self.recall.embedding_model().is_some()
                    && !indexing.swap(true, std::sync::atomic::Ordering::AcqRel)
                {
                    let runtime = self.clone();
                    let flag = indexing.clone();
                    tokio::spawn(async move {
                        if let Err(e) = runtime.recall.embed_in_background().await {
                            tracing::warn!(error = %e, "embedding items for recall failed");
                        }
                        flag.store(false, std::sync::atomic::Ordering::Release);
                    });
                }
                if last_lease_tick.elapsed() >= LEASE_TICK_EVERY {
                    last_lease_tick = std::time::Instant::now();
                    if let Err(e) = self.keep_leases().await {
                        tracing::error!(error = %e, "keeping turn leases failed");
                    }
                }
                if last_summary_scan.elapsed() >= self.options.summary_scan_every {
                    last_summary_scan = std::time::Instant::now();
                    let runtime = self.clone();
                    tokio::spawn(async move { runtime.summarize_due().await });
                }
            }
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }

    async fn schedule_once(self: &Arc<Self>) -> Result<()> {
        let capacity = self.options.capacity_per_agent.max(1);
        let candidates = self.store.runnable_turns(u32::MAX).await?;
        for turn in candidates {
            // The node that holds the channel's computer runs its turns
            // when it can; another takes them once they have waited long
            // enough that the holder is likely gone.
            if !waited(&turn, HOLDER_FIRST) && self.computers.held_elsewhere(turn.channel_id).await
            {
                continue;
            }
            let cancel = {
                let mut live = self.lock_live();
                let busy_thread = live.values().any(|t| t.thread == turn.thread_id);
                let agent_load = live.values().filter(|t| t.agent == turn.agent_id).count() as u32;
                if live.contains_key(&turn.id) || busy_thread || agent_load >= capacity {
                    continue;
                }
                let cancel = CancellationToken::new();
                live.insert(
                    turn.id,
                    LiveTurn {
                        channel: turn.channel_id,
                        thread: turn.thread_id,
                        agent: turn.agent_id,
                        cancel: cancel.clone(),
                        reason: Arc::new(Mutex::new(None)),
                    },
                );
                cancel
            };
            let runtime = self.clone();
            tokio::spawn(async move {
                let id = turn.id;
                runtime.run(turn, cancel).await;
                runtime.lock_live().remove(&id);
                runtime.wake();
            });
        }
        Ok(())
    }

    async fn run(self: &Arc<Self>, turn: Turn, cancel: CancellationToken) {
        let reason = self
            .lock_live()
            .get(&turn.id)
            .map(|t| t.reason.clone())
            .unwrap_or_default();
        if let Err(e) = turn::drive(self, &turn, &cancel, &reason).await {
            // The engine itself failed (the store, most likely); end the turn
            // visibly rather than leaving it running.
            tracing::error!(turn = %turn.id, error = %e, "a turn failed inside Helm");
            let _ = self
                .store
                .finish_turn(
                    turn.id,
                    TurnFinish {
                        state: TurnState::Failed,
                        reply: String::new(),
                        error: Some(e.to_string()),
                        note: Some(format!("{}{e}", crate::store::rules::FAILED_INSIDE_NOTE)),
                        steps: 0,
                        usage: Usage::default(),
                    },
                )
                .await;
        }
    }

    /// Stops the work of one thread: cancels its running turn (or, when
    /// another node runs it, asks that node to) and withdraws its queued
    /// ones. Returns the turns affected, once the running turn has ended
    /// `stopped` (or after `STOP_WAIT`), so a caller that reads the thread
    /// next sees it stopped, not still streaming.
    pub(crate) async fn stop_thread(&self, thread: ThreadId, by: &str) -> Result<Vec<TurnId>> {
        let mut affected = Vec::new();
        let turns = self.store.thread_turns(thread).await?;
        // The queued turns first: a running turn cancelled first can end at
        // once, and the scheduler would then start the next one.
        for turn in turns.iter().filter(|t| t.state == TurnState::Queued) {
            let ended = self
                .store
                .finish_turn(
                    turn.id,
                    TurnFinish {
                        state: TurnState::Cancelled,
                        reply: String::new(),
                        error: None,
                        note: None,
                        steps: 0,
                        usage: Usage::default(),
                    },
                )
                .await?;
            if ended.is_some() {
                affected.push(turn.id);
            }
        }
        let mut running = Vec::new();
        {
            let live = self.lock_live();
            for (id, t) in live.iter().filter(|(_, t)| t.thread == thread) {
                if let Ok(mut r) = t.reason.lock() {
                    *r = Some(StopReason::Stopped(by.to_string()));
                }
                t.cancel.cancel();
                running.push(*id);
            }
        }
        affected.extend(&running);
        let mut elsewhere = Vec::new();
        for turn in turns.iter().filter(|t| t.state == TurnState::Running) {
            if !affected.contains(&turn.id) && self.store.request_turn_stop(turn.id, by).await? {
                elsewhere.push(turn.id);
                affected.push(turn.id);
            }
        }
        self.wait_ended(&running, STOP_WAIT).await;
        self.wait_ended_elsewhere(&elsewhere, STOP_WAIT).await?;
        Ok(affected)
    }

    /// Waits (up to `wait`) until none of `turns`, run by other nodes, is
    /// running any more in the store: they stop at their node's next lease
    /// tick (`LEASE_TICK_EVERY`).
    async fn wait_ended_elsewhere(&self, turns: &[TurnId], wait: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + wait;
        for turn in turns {
            while self.store.turn(*turn).await?.state == TurnState::Running
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Ok(())
    }

    /// Waits (up to `wait`) until none of `turns` is live any more.
    async fn wait_ended(&self, turns: &[TurnId], wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while tokio::time::Instant::now() < deadline {
            let still = {
                let live = self.lock_live();
                turns.iter().any(|id| live.contains_key(id))
            };
            if !still {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Cancels the live turns of `channel` (being archived or deleted) with
    /// `note` as their visible reason, and waits (up to `wait`) until they
    /// have ended: their running commands killed, nothing more started.
    /// Queued turns are the store's to cancel, in the same transaction that
    /// archives the channel. Returns the turns that were live.
    pub(crate) async fn close_channel(
        &self,
        channel: ChannelId,
        note: &str,
        wait: Duration,
    ) -> Vec<TurnId> {
        let cancelled: Vec<TurnId> = {
            let live = self.lock_live();
            live.iter()
                .filter(|(_, t)| t.channel == channel)
                .map(|(id, t)| {
                    // A turn already told why it stops keeps that reason:
                    // the node that archived a channel also hears its own
                    // archive from the live feed, with less to say.
                    if let Ok(mut r) = t.reason.lock() {
                        r.get_or_insert_with(|| StopReason::ChannelClosed(note.to_string()));
                    }
                    t.cancel.cancel();
                    *id
                })
                .collect()
        };
        self.wait_ended(&cancelled, wait).await;
        cancelled
    }

    /// Stops driving: with `drain`, lets running turns finish (starting no
    /// new ones); without, cancels them (they end `cancelled` with a note).
    /// Returns once no turn is live.
    pub(crate) async fn shutdown(&self, drain: bool) {
        {
            let mut driver = self.lock_driver();
            if matches!(*driver, Driver::Idle) {
                return;
            }
            *driver = Driver::Draining;
        }
        if !drain {
            for t in self.lock_live().values() {
                if let Ok(mut r) = t.reason.lock() {
                    *r = Some(StopReason::Shutdown);
                }
                t.cancel.cancel();
            }
        }
        loop {
            let idle = self.idle.notified();
            if self.lock_live().is_empty() && matches!(*self.lock_driver(), Driver::Idle) {
                return;
            }
            if drain {
                self.stop_turns_awaiting_approval().await;
            }
            self.wake();
            tokio::select! {
                _ = idle => {}
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }

    /// While draining: a turn parked on an approval waits for a person, not
    /// for work to finish, so draining would wait out the approval's whole
    /// timeout. Such a turn is stopped as a shutdown stops it; its request
    /// stays on record (approving it later says to ask the agent again).
    async fn stop_turns_awaiting_approval(&self) {
        let Ok(pending) = self.store.approvals(true).await else {
            return;
        };
        let live = self.lock_live();
        for turn in pending.iter().filter_map(|a| a.turn_id) {
            if let Some(t) = live.get(&turn) {
                if let Ok(mut r) = t.reason.lock() {
                    r.get_or_insert(StopReason::Shutdown);
                }
                t.cancel.cancel();
            }
        }
    }

    /// Says in a resolved thread that its summary could not be written yet.
    async fn note_summary_failed(&self, thread: crate::model::ThreadId, error: &Error) {
        let minutes = SUMMARY_RETRY_AFTER.as_secs() / 60;
        let text = format!(
            "The session summary of this thread could not be written yet, so it is not in the \
             channel's memory: {error}. Helm tries again in {minutes} minutes."
        );
        let noted = match self.store.thread(thread).await {
            Ok(t) => self
                .store
                .post_note(t.channel_id, Some(thread), text)
                .await
                .map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = noted {
            tracing::warn!(thread = %thread, error = %e, "could not say that a summary failed");
        }
    }

    /// Summarises resolved and long-quiet threads whose summary is stale.
    async fn summarize_due(&self) {
        let idle_before = jiff::Timestamp::now().as_millisecond()
            - self.options.summarize_after_idle.as_millis() as i64;
        let due = match self.store.threads_due_for_summary(idle_before, 4).await {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!(error = %e, "looking for threads to summarise failed");
                return;
            }
        };
        for thread in due {
            let recent_failure = self
                .summary_failures
                .lock()
                .ok()
                .and_then(|f| f.get(&thread).copied())
                .is_some_and(|at| at.elapsed() < SUMMARY_RETRY_AFTER);
            if recent_failure {
                continue;
            }
            let trigger = match self.store.thread(thread).await.map(|t| t.status) {
                Ok(crate::model::ThreadStatus::Resolved) => summary::SummaryTrigger::Resolved,
                _ => summary::SummaryTrigger::Inactivity,
            };
            match self.summarize(thread, trigger).await {
                Ok(_) => tracing::info!(thread = %thread, ?trigger, "summarised a thread"),
                Err(e) => {
                    // A person resolved it and expects its summary in memory:
                    // an operator should hear that it is missing. A quiet
                    // thread's summary is only a convenience.
                    let first = self
                        .summary_failures
                        .lock()
                        .map(|mut f| f.insert(thread, std::time::Instant::now()).is_none())
                        .unwrap_or(false);
                    if trigger == summary::SummaryTrigger::Resolved {
                        tracing::warn!(thread = %thread, error = %e, "could not summarise a resolved thread; it is tried again later");
                        // The people who resolved it were told its summary
                        // goes to memory: the thread says it did not, once.
                        if first {
                            self.note_summary_failed(thread, &e).await;
                        }
                    } else {
                        tracing::info!(thread = %thread, error = %e, "could not summarise a thread");
                    }
                }
            }
        }
    }
}
