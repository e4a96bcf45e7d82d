//! One terminal: a shell on a PTY (and the two threads that read its output
//! and wait for its end) or on a remote computer (and the task that holds
//! its connection), its scrollback and its viewers.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use jiff::Timestamp;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc as mpsc_async, watch};

use crate::error::{Error, Result};
use crate::exec::computer::Isolation;
use crate::exec::ledger::{Entry, Ledger};
use crate::exec::output::OutputTail;
use crate::exec::process_tree::{
    clear_session, kill_tree, kill_tree_settled, wait_exited_keep_zombie,
};
use crate::exec::sandbox::Launch;
use crate::model::{ChannelId, UserId};

/// Live events buffered per viewer; a viewer further behind gets `Lagged`
/// and should subscribe again (the scrollback brings it back up to date).
const EVENT_BUFFER: usize = 1024;

/// How long closing a terminal waits for orphaned jobs to be reaped.
const ZOMBIE_WAIT: Duration = Duration::from_secs(1);

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalSize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

impl Default for TerminalSize {
    fn default() -> Self {
        TerminalSize { rows: 24, cols: 80 }
    }
}

/// What a terminal is, for listings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalInfo {
    /// Its id, unique in this process.
    pub id: u64,
    /// The channel whose computer it runs in (`None` for Skipper's host).
    pub channel: Option<ChannelId>,
    /// The isolation it runs under.
    pub isolation: Isolation,
    /// Its current size.
    pub size: TerminalSize,
    /// When it was opened.
    pub started: Timestamp,
    /// Whether its shell is still running.
    pub running: bool,
    /// The shell's exit code, once it has ended.
    pub exit_code: Option<i32>,
    /// The person who opened it, when a person did.
    #[serde(default)]
    pub opened_by: Option<UserId>,
    /// Its number among its channel's terminals since the server started
    /// (1, 2, …; never reused while the server runs): what people call it,
    /// "Shell 2". Ids are for machines, and unique across restarts.
    #[serde(default)]
    pub number: Option<u32>,
}

/// What a viewer receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TerminalEvent {
    /// Bytes the terminal printed.
    Output {
        /// The bytes, as the program wrote them (escape sequences included).
        data: Vec<u8>,
    },
    /// The shell ended; nothing follows.
    Closed {
        /// Its exit code (`None` when a signal ended it).
        exit_code: Option<i32>,
    },
}

/// A viewer's attachment: the recent output, then everything after it.
#[derive(Debug)]
pub struct TerminalSubscription {
    /// The scrollback at the moment of subscribing.
    pub scrollback: Vec<u8>,
    /// Output and the end, from that moment on, with no gap and no overlap.
    pub events: broadcast::Receiver<TerminalEvent>,
    /// Whether the shell had already ended when subscribing (then no
    /// further events come).
    pub running: bool,
}

/// Where a terminal's shell is.
enum Backend {
    /// A PTY of this process.
    Pty {
        master: Mutex<Box<dyn MasterPty + Send>>,
        writer: Arc<Mutex<Box<dyn Write + Send>>>,
    },
    /// A shell on another host, behind the task that holds its connection.
    Remote(mpsc_async::UnboundedSender<ToRemote>),
}

/// What a terminal on another host is asked to do, by its connection's task.
#[derive(Debug)]
pub(crate) enum ToRemote {
    /// Keystrokes.
    Input(Vec<u8>),
    /// A new size.
    Resize(TerminalSize),
    /// End it.
    Close,
}

/// What the task holding a remote terminal's connection feeds the session:
/// its output, then its end.
pub(crate) struct Feed {
    scrollback: Arc<Mutex<OutputTail>>,
    events: broadcast::Sender<TerminalEvent>,
    state: watch::Sender<State>,
}

impl Feed {
    /// Output the shell printed.
    pub(crate) fn output(&self, data: &[u8]) {
        let mut tail = self.scrollback.lock().unwrap_or_else(|p| p.into_inner());
        tail.push(data);
        // No viewer is not an error.
        let _ = self.events.send(TerminalEvent::Output {
            data: data.to_vec(),
        });
    }

    /// The shell ended (or its connection did).
    pub(crate) fn end(self, exit_code: Option<i32>) {
        // Under the scrollback lock, as for a PTY (see `spawn_waiter`).
        let _tail = self.scrollback.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.state.send(State {
            running: false,
            exit_code,
        });
        let _ = self.events.send(TerminalEvent::Closed { exit_code });
    }
}

#[derive(Debug, Clone, Copy)]
struct State {
    running: bool,
    exit_code: Option<i32>,
}

/// A shell on a PTY in a computer. Held by the
/// [`TerminalManager`](super::TerminalManager); viewers share it.
pub struct TerminalSession {
    id: u64,
    channel: Option<ChannelId>,
    isolation: Isolation,
    started: Timestamp,
    pid: u32,
    backend: Backend,
    size: Mutex<TerminalSize>,
    /// The scrollback; its lock also orders output against subscriptions.
    scrollback: Arc<Mutex<OutputTail>>,
    events: broadcast::Sender<TerminalEvent>,
    state: watch::Receiver<State>,
    /// The person who opened it, when a person did.
    opened_by: OnceLock<UserId>,
    /// Its number in its channel (see [`TerminalInfo::number`]).
    number: OnceLock<u32>,
    /// The person who closed it, when a person did: a viewer whose shell
    /// ends under them is told who ended it.
    closed_by: OnceLock<UserId>,
}

impl std::fmt::Debug for TerminalSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalSession")
            .field("id", &self.id)
            .field("channel", &self.channel)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl TerminalSession {
    /// Spawns the launch on a new PTY.
    ///
    /// The shell (through `bwrap --die-with-parent`) dies with the thread
    /// that spawned it, so call this from a thread that lives as long as the
    /// terminal should: an async runtime's worker, not a blocking-pool thread.
    pub(crate) fn spawn(
        id: u64,
        channel: Option<ChannelId>,
        isolation: Isolation,
        launch: Launch,
        size: TerminalSize,
        scrollback_bytes: usize,
        ledger: Option<&Ledger>,
    ) -> Result<Arc<TerminalSession>> {
        let pty_error = |what: &str, e: &dyn std::fmt::Display| {
            Error::Internal(format!("could not {what} a terminal: {e}"))
        };
        let pair = native_pty_system()
            .openpty(pty_size(size))
            .map_err(|e| pty_error("open", &e))?;
        let mut builder = CommandBuilder::from_argv(launch.argv.clone());
        builder.env_clear();
        for (k, v) in &launch.env {
            builder.env(k, v);
        }
        builder.cwd(&launch.cwd);
        let child = pair
            .slave
            .spawn_command(builder)
            .map_err(|e| pty_error("start", &e))?;
        // Only the child may hold the slave: the reader sees the end of
        // output when the last process using the terminal is gone.
        drop(pair.slave);
        let pid = child
            .process_id()
            .ok_or_else(|| Error::Internal("a terminal's shell has no process id".into()))?;
        let record = ledger.map(|l| l.record(pid));
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| pty_error("read", &e))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| pty_error("write to", &e))?;
        let scrollback = Arc::new(Mutex::new(OutputTail::new(scrollback_bytes)));
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (state_tx, state_rx) = watch::channel(State {
            running: true,
            exit_code: None,
        });
        let (reader_done_tx, reader_done_rx) = mpsc::channel();
        spawn_reader(reader, scrollback.clone(), events.clone(), reader_done_tx)?;
        spawn_waiter(
            pid,
            child,
            scrollback.clone(),
            events.clone(),
            state_tx,
            reader_done_rx,
            record,
        )?;
        tracing::debug!(id, pid, %isolation, "terminal opened");
        Ok(Arc::new(TerminalSession {
            id,
            channel,
            isolation,
            started: Timestamp::now(),
            pid,
            backend: Backend::Pty {
                master: Mutex::new(pair.master),
                writer: Arc::new(Mutex::new(writer)),
            },
            size: Mutex::new(size),
            scrollback,
            events,
            state: state_rx,
            opened_by: OnceLock::new(),
            number: OnceLock::new(),
            closed_by: OnceLock::new(),
        }))
    }

    /// A terminal whose shell is on another host (process `pid` there):
    /// the session, the feed its connection's task fills, and what the
    /// session asks that task to do.
    pub(crate) fn remote(
        id: u64,
        channel: Option<ChannelId>,
        pid: u32,
        size: TerminalSize,
        scrollback_bytes: usize,
    ) -> (
        Arc<TerminalSession>,
        Feed,
        mpsc_async::UnboundedReceiver<ToRemote>,
    ) {
        let scrollback = Arc::new(Mutex::new(OutputTail::new(scrollback_bytes)));
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (state_tx, state_rx) = watch::channel(State {
            running: true,
            exit_code: None,
        });
        let (to_remote, asked) = mpsc_async::unbounded_channel();
        let session = Arc::new(TerminalSession {
            id,
            channel,
            isolation: Isolation::Remote,
            started: Timestamp::now(),
            pid,
            backend: Backend::Remote(to_remote),
            size: Mutex::new(size),
            scrollback: scrollback.clone(),
            events: events.clone(),
            state: state_rx,
            opened_by: OnceLock::new(),
            number: OnceLock::new(),
            closed_by: OnceLock::new(),
        });
        let feed = Feed {
            scrollback,
            events,
            state: state_tx,
        };
        (session, feed, asked)
    }

    /// Its id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The channel it belongs to.
    pub fn channel(&self) -> Option<ChannelId> {
        self.channel
    }

    /// The process id of its session leader (for inspection; the shell and
    /// everything it starts are in that session).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether its shell is still running.
    pub fn is_running(&self) -> bool {
        self.state.borrow().running
    }

    /// What it is, for listings.
    pub fn info(&self) -> TerminalInfo {
        let state = *self.state.borrow();
        TerminalInfo {
            id: self.id,
            channel: self.channel,
            isolation: self.isolation,
            size: self.size.lock().map(|s| *s).unwrap_or_default(),
            started: self.started,
            running: state.running,
            exit_code: state.exit_code,
            opened_by: self.opened_by.get().copied(),
            number: self.number.get().copied(),
        }
    }

    /// Records who opened it (once; later calls change nothing).
    pub(crate) fn opened_by(&self, user: UserId) {
        let _ = self.opened_by.set(user);
    }

    /// Records its number in its channel (once).
    pub(crate) fn numbered(&self, number: u32) {
        let _ = self.number.set(number);
    }

    /// Records who is closing it, before it is closed (the first one
    /// counts), so its viewers can be told.
    pub fn closing_by(&self, user: UserId) {
        let _ = self.closed_by.set(user);
    }

    /// Who closed it, when a person did.
    pub fn closed_by(&self) -> Option<UserId> {
        self.closed_by.get().copied()
    }

    /// Waits until its shell has ended, however it ended, and returns its
    /// exit code (`None` when a signal ended it).
    pub async fn ended(&self) -> Option<i32> {
        let mut state = self.state.clone();
        // An error means the session's feed is gone, which is an end too.
        let _ = state.wait_for(|s| !s.running).await;
        state.borrow().exit_code
    }

    /// Sends keystrokes (or any bytes) to the shell.
    pub async fn write(&self, bytes: &[u8]) -> Result<()> {
        if !self.is_running() {
            return Err(Error::Refused(format!("terminal {} has ended", self.id)));
        }
        let writer = match &self.backend {
            Backend::Pty { writer, .. } => writer.clone(),
            Backend::Remote(to_remote) => {
                return to_remote
                    .send(ToRemote::Input(bytes.to_vec()))
                    .map_err(|_| Error::Refused(format!("terminal {} has ended", self.id)));
            }
        };
        let bytes = bytes.to_vec();
        let id = self.id;
        // A shell that does not read its input fills the PTY and blocks the
        // write; keep that off the async runtime.
        tokio::task::spawn_blocking(move || {
            let mut w = writer
                .lock()
                .map_err(|_| Error::Internal("a terminal writer was poisoned".into()))?;
            w.write_all(&bytes)
                .and_then(|()| w.flush())
                .map_err(|e| Error::Refused(format!("terminal {id} does not take input: {e}")))
        })
        .await
        .map_err(|e| Error::Internal(format!("writing to a terminal failed: {e}")))?
    }

    /// Changes its size (the shell gets `SIGWINCH`).
    pub fn resize(&self, size: TerminalSize) -> Result<()> {
        if size.rows == 0 || size.cols == 0 {
            return Err(Error::invalid(
                "terminal size",
                "rows and columns must be at least 1",
            ));
        }
        match &self.backend {
            Backend::Pty { master, .. } => {
                let master = master
                    .lock()
                    .map_err(|_| Error::Internal("a terminal was poisoned".into()))?;
                master.resize(pty_size(size)).map_err(|e| {
                    Error::Internal(format!("could not resize terminal {}: {e}", self.id))
                })?;
            }
            Backend::Remote(to_remote) => to_remote
                .send(ToRemote::Resize(size))
                .map_err(|_| Error::Refused(format!("terminal {} has ended", self.id)))?,
        }
        if let Ok(mut s) = self.size.lock() {
            *s = size;
        }
        Ok(())
    }

    /// The recent output (at most the scrollback limit).
    pub fn scrollback(&self) -> Vec<u8> {
        self.scrollback
            .lock()
            .map(|s| s.bytes())
            .unwrap_or_default()
    }

    /// Attaches a viewer: the scrollback now, and every event after it.
    pub fn subscribe(&self) -> TerminalSubscription {
        let guard = self.scrollback.lock().unwrap_or_else(|p| p.into_inner());
        // Taken under the lock the reader holds while it appends and
        // broadcasts, so nothing is missed or seen twice.
        let events = self.events.subscribe();
        TerminalSubscription {
            scrollback: guard.bytes(),
            events,
            running: self.is_running(),
        }
    }

    /// Kills its shell and everything started in it, and waits until the
    /// shell has been reaped.
    pub(crate) async fn kill(&self, within: Duration) -> Result<()> {
        if let Backend::Remote(to_remote) = &self.backend {
            let _ = to_remote.send(ToRemote::Close);
            let mut state = self.state.clone();
            let ended = tokio::time::timeout(within, state.wait_for(|s| !s.running))
                .await
                .is_ok_and(|r| r.is_ok());
            return if ended {
                Ok(())
            } else {
                Err(Error::ComputerUnreachable(format!(
                    "terminal {} on another host did not end when closed",
                    self.id
                )))
            };
        }
        let pid = self.pid;
        if self.isolation == Isolation::Bubblewrap {
            let _ = tokio::task::spawn_blocking(move || kill_tree_settled(pid)).await;
        } else {
            kill_tree(pid);
        }
        let mut state = self.state.clone();
        // Drop the watch's read guard at once: it must not live across an await.
        let reaped = tokio::time::timeout(within, state.wait_for(|s| !s.running))
            .await
            .is_ok_and(|r| r.is_ok());
        if !reaped || !clear_session(pid, within, false).await {
            return Err(Error::Internal(format!(
                "terminal {}'s processes did not end after being killed",
                self.id
            )));
        }
        // Jobs the shell left behind were orphaned to the host's init, which
        // reaps them; give it a moment so that nothing is left even as a
        // zombie (where init does not reap, they stay, dead).
        if !clear_session(pid, ZOMBIE_WAIT, true).await {
            tracing::debug!(
                pid,
                "the host's init has not reaped a terminal's orphans yet"
            );
        }
        Ok(())
    }

    /// Kills without waiting (when the manager goes away).
    pub(crate) fn kill_now(&self) {
        match &self.backend {
            Backend::Pty { .. } => kill_tree(self.pid),
            Backend::Remote(to_remote) => {
                let _ = to_remote.send(ToRemote::Close);
            }
        }
    }
}

fn pty_size(size: TerminalSize) -> PtySize {
    PtySize {
        rows: size.rows.max(1),
        cols: size.cols.max(1),
        pixel_width: 0,
        pixel_height: 0,
    }
}

fn spawn_reader(
    mut reader: Box<dyn Read + Send>,
    scrollback: Arc<Mutex<OutputTail>>,
    events: broadcast::Sender<TerminalEvent>,
    done: mpsc::Sender<()>,
) -> Result<()> {
    std::thread::Builder::new()
        .name("helm-term-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf) {
                    // EIO once the last holder of the PTY's other end is gone.
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut tail = scrollback.lock().unwrap_or_else(|p| p.into_inner());
                        tail.push(&buf[..n]);
                        // No viewer is not an error.
                        let _ = events.send(TerminalEvent::Output {
                            data: buf[..n].to_vec(),
                        });
                    }
                }
            }
            let _ = done.send(());
        })
        .map(|_| ())
        .map_err(|e| Error::Internal(format!("could not start a terminal reader: {e}")))
}

fn spawn_waiter(
    pid: u32,
    mut child: Box<dyn Child + Send + Sync>,
    scrollback: Arc<Mutex<OutputTail>>,
    events: broadcast::Sender<TerminalEvent>,
    state: watch::Sender<State>,
    reader_done: mpsc::Receiver<()>,
    record: Option<Entry>,
) -> Result<()> {
    std::thread::Builder::new()
        .name("helm-term-wait".into())
        .spawn(move || {
            // The shell has exited but is not reaped yet, so its session id
            // is still its own: clear out whatever it left running.
            let _ = wait_exited_keep_zombie(pid);
            kill_tree(pid);
            drop(record);
            let exit_code = match child.wait() {
                Ok(status) if status.signal().is_none() => Some(status.exit_code() as i32),
                _ => None,
            };
            // Let the reader pass on the last output before the end; a
            // process that escaped the session may keep the PTY open.
            let _ = reader_done.recv_timeout(Duration::from_secs(2));
            // Under the scrollback lock, like output, so that a viewer who
            // subscribes sees either `running` or the `Closed` event.
            let _tail = scrollback.lock().unwrap_or_else(|p| p.into_inner());
            let _ = state.send(State {
                running: false,
                exit_code,
            });
            let _ = events.send(TerminalEvent::Closed { exit_code });
            tracing::debug!(pid, ?exit_code, "terminal ended");
        })
        .map(|_| ())
        .map_err(|e| Error::Internal(format!("could not start a terminal waiter: {e}")))
}
