//! The commands Open Terminal clients started: an id → [`RunningCommand`]
//! registry that keeps each command's output as a log of entries, so that
//! every reader pages it with its own offset (polling a `RunningCommand`
//! consumes what it returns, and there may be several readers).
//!
//! Limits: at most `ot_commands_per_channel` commands per channel (finished
//! ones are evicted first, oldest first; when all are running, a new one is
//! refused), at most `ot_output_bytes` of output kept per command (older
//! entries are dropped and readers told), and a finished command is
//! forgotten `ot_command_ttl_secs` after it ended. A forgotten or evicted
//! command that was still running is killed (dropping its last handle).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use helm_core::exec::{CommandResult, RunningCommand};
use helm_core::model::ChannelId;
use helm_core::{Error, Result};
use tokio::sync::watch;

/// How often a running command's output is collected, once it has run a
/// while.
const PUMP_INTERVAL: Duration = Duration::from_millis(50);

/// The first wait between collections, doubled up to [`PUMP_INTERVAL`]: a
/// short command (most of what a remote executor sends) is seen to end
/// within a millisecond or two of ending, not up to 50 ms later, which a
/// command run through another node or a computer server waited in full.
const FIRST_PUMP_INTERVAL: Duration = Duration::from_millis(1);

/// The registry's limits.
#[derive(Debug, Clone, Copy)]
pub struct CommandLimits {
    /// Commands kept per channel.
    pub per_channel: usize,
    /// How long a finished command stays.
    pub ttl: Duration,
    /// Output kept per command, in bytes.
    pub output_bytes: usize,
}

/// Where a command stands, in Open Terminal's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandStatus {
    /// Still running.
    Running,
    /// Ended by itself.
    Done,
    /// Killed on request or for running too long.
    Killed,
}

impl CommandStatus {
    /// `running`, `done` or `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandStatus::Running => "running",
            CommandStatus::Done => "done",
            CommandStatus::Killed => "killed",
        }
    }
}

/// One output entry: `stdout` or `stderr`, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// The text.
    pub data: String,
}

/// A page of a command's output.
#[derive(Debug, Clone)]
pub struct Page {
    /// Its status when read.
    pub status: CommandStatus,
    /// Its exit code, once done.
    pub exit_code: Option<i32>,
    /// The entries.
    pub entries: Vec<Entry>,
    /// Whether entries were left out (dropped, or cut by `tail`).
    pub truncated: bool,
    /// The offset after the last entry.
    pub next_offset: u64,
}

#[derive(Default)]
struct Log {
    /// Entries dropped from the front (their offsets are gone).
    dropped: u64,
    entries: VecDeque<Entry>,
    bytes: usize,
    result: Option<CommandResult>,
}

/// A tracked command.
pub struct Tracked {
    /// Its id.
    pub id: String,
    /// Its channel.
    pub channel: ChannelId,
    /// Its command line.
    pub command: String,
    handle: Arc<dyn RunningCommand>,
    log: Mutex<Log>,
    done: watch::Receiver<bool>,
    killed: AtomicBool,
    ended: Mutex<Option<Instant>>,
}

impl Tracked {
    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its status now.
    pub fn status(&self) -> (CommandStatus, Option<i32>) {
        let log = self.log();
        match &log.result {
            None => (CommandStatus::Running, None),
            Some(r) if r.killed || r.timed_out || self.killed.load(Ordering::Relaxed) => {
                (CommandStatus::Killed, r.exit_code)
            }
            Some(r) => (CommandStatus::Done, r.exit_code),
        }
    }

    /// Waits up to `wait` for it to end.
    pub async fn wait(&self, wait: Duration) {
        let mut done = self.done.clone();
        let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
    }

    /// The entries after `offset` (the last `tail` of them, if given).
    pub fn page(&self, offset: u64, tail: Option<usize>) -> Page {
        let (status, exit_code) = self.status();
        let log = self.log();
        let next_offset = log.dropped + log.entries.len() as u64;
        let mut truncated = offset < log.dropped;
        let skip = offset.saturating_sub(log.dropped) as usize;
        let mut entries: Vec<Entry> = log.entries.iter().skip(skip).cloned().collect();
        if let Some(tail) = tail
            && entries.len() > tail
        {
            entries.drain(..entries.len() - tail);
            truncated = true;
        }
        Page {
            status,
            exit_code,
            entries,
            truncated,
            next_offset,
        }
    }

    /// Writes to its stdin.
    pub async fn write_stdin(&self, bytes: &[u8]) -> Result<()> {
        if self.log().result.is_some() {
            return Err(Error::Refused(format!("command {} has ended", self.id)));
        }
        self.handle.write_stdin(bytes).await
    }

    /// Closes its stdin, so that a command reading it sees the end.
    pub async fn close_stdin(&self) -> Result<()> {
        if self.log().result.is_some() {
            return Ok(());
        }
        self.handle.close_stdin().await
    }

    /// Kills it (and everything it started) and waits until it is gone.
    pub async fn kill(&self) -> Result<()> {
        if self.log().result.is_none() {
            self.killed.store(true, Ordering::Relaxed);
            self.handle.kill().await?;
            self.wait(Duration::from_secs(5)).await;
        }
        Ok(())
    }
}

/// The registry.
pub struct CommandRegistry {
    limits: CommandLimits,
    commands: Mutex<BTreeMap<String, Arc<Tracked>>>,
    /// Terminals opened through Open Terminal, closed when their socket ends.
    terminals: Mutex<HashSet<u64>>,
}

impl CommandRegistry {
    /// An empty registry.
    pub fn new(limits: CommandLimits) -> Self {
        CommandRegistry {
            limits,
            commands: Mutex::new(BTreeMap::new()),
            terminals: Mutex::new(HashSet::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Arc<Tracked>>> {
        self.commands.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes room for a new command of `channel`, or refuses.
    pub fn reserve(&self, channel: ChannelId) -> Result<()> {
        let mut commands = self.lock();
        self.sweep(&mut commands);
        let mine: Vec<&Arc<Tracked>> = commands.values().filter(|t| t.channel == channel).collect();
        if mine.len() < self.limits.per_channel.max(1) {
            return Ok(());
        }
        let oldest_finished = mine
            .iter()
            .filter_map(|t| Some((t.ended.lock().ok().and_then(|e| *e)?, t.id.clone())))
            .min();
        match oldest_finished {
            Some((_, id)) => {
                commands.remove(&id);
                Ok(())
            }
            None => Err(Error::Refused(format!(
                "this channel already runs {} commands, the limit; wait for one or kill it",
                self.limits.per_channel
            ))),
        }
    }

    /// Tracks a command that was just started: its output is collected
    /// until it ends.
    pub fn track(
        &self,
        channel: ChannelId,
        command: String,
        handle: Arc<dyn RunningCommand>,
    ) -> Arc<Tracked> {
        let (done_tx, done_rx) = watch::channel(false);
        let tracked = Arc::new(Tracked {
            id: handle.id().to_string(),
            channel,
            command,
            handle,
            log: Mutex::new(Log::default()),
            done: done_rx,
            killed: AtomicBool::new(false),
            ended: Mutex::new(None),
        });
        self.lock().insert(tracked.id.clone(), tracked.clone());
        let limit = self.limits.output_bytes;
        // The pump holds only a weak reference: an evicted command is
        // dropped (and so killed) even while its pump runs.
        let weak = Arc::downgrade(&tracked);
        tokio::spawn(async move {
            let mut interval = FIRST_PUMP_INTERVAL;
            loop {
                let Some(tracked) = weak.upgrade() else {
                    return;
                };
                let poll = tracked.handle.poll();
                {
                    let mut log = tracked.log();
                    for (stream, data) in [("stdout", poll.stdout), ("stderr", poll.stderr)] {
                        if !data.is_empty() {
                            log.bytes += data.len();
                            log.entries.push_back(Entry { stream, data });
                        }
                    }
                    while log.bytes > limit && log.entries.len() > 1 {
                        if let Some(old) = log.entries.pop_front() {
                            log.bytes -= old.data.len();
                            log.dropped += 1;
                        }
                    }
                    if let Some(result) = poll.result {
                        log.result = Some(result);
                    }
                }
                if !poll.running {
                    if let Ok(mut ended) = tracked.ended.lock() {
                        *ended = Some(Instant::now());
                    }
                    let _ = done_tx.send(true);
                    return;
                }
                drop(tracked);
                tokio::time::sleep(interval).await;
                interval = (interval * 2).min(PUMP_INTERVAL);
            }
        });
        tracked
    }

    /// A command of `channel` by id.
    pub fn get(&self, channel: ChannelId, id: &str) -> Result<Arc<Tracked>> {
        let mut commands = self.lock();
        self.sweep(&mut commands);
        commands
            .get(id)
            .filter(|t| t.channel == channel)
            .cloned()
            .ok_or_else(|| Error::not_found("command", id))
    }

    /// The commands of `channel`, oldest first.
    pub fn list(&self, channel: ChannelId) -> Vec<Arc<Tracked>> {
        let mut commands = self.lock();
        self.sweep(&mut commands);
        commands
            .values()
            .filter(|t| t.channel == channel)
            .cloned()
            .collect()
    }

    /// Forgets finished commands older than the TTL.
    fn sweep(&self, commands: &mut BTreeMap<String, Arc<Tracked>>) {
        let ttl = self.limits.ttl;
        commands.retain(|_, t| {
            t.ended
                .lock()
                .ok()
                .and_then(|e| *e)
                .is_none_or(|ended| ended.elapsed() < ttl)
        });
    }

    /// Notes a terminal opened through Open Terminal.
    pub fn add_terminal(&self, id: u64) {
        if let Ok(mut t) = self.terminals.lock() {
            t.insert(id);
        }
    }

    /// Whether a terminal was opened through Open Terminal (and forgets it).
    pub fn take_terminal(&self, id: u64) -> bool {
        self.terminals.lock().is_ok_and(|mut t| t.remove(&id))
    }
}
