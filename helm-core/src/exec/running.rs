//! A command started by [`LocalExecutor`](super::LocalExecutor): the tasks
//! that read its output and supervise it to its end (timeout, kill, the
//! clean-up of what it started), and the [`RunningCommand`] handle the
//! caller holds.

use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::{Notify, watch};

use super::command::{CommandPoll, CommandResult};
use super::computer::Isolation;
use super::ledger::Entry;
use super::output::{OutputTail, tail_text};
use super::port::RunningCommand;
use super::process_tree::{self, kill_group, kill_tree, kill_tree_settled};
use crate::error::{Error, Result};

/// How long the output pipes may stay open after a command has ended (held
/// by a process that escaped its group) before Helm stops reading them.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The output a command has written, shared by its readers, its supervisor
/// and its handle.
pub(super) struct Shared {
    pub(super) stdout: Mutex<OutputTail>,
    pub(super) stderr: Mutex<OutputTail>,
    /// Stream offsets up to which `poll` has reported.
    pub(super) cursors: Mutex<(u64, u64)>,
}

impl Shared {
    fn tails(&self) -> (OutputTail, OutputTail) {
        let out = self
            .stdout
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        let err = self
            .stderr
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        (out, err)
    }
}

pub(super) async fn read_into(mut pipe: impl AsyncRead + Unpin, shared: Arc<Shared>, stdout: bool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let tail = if stdout {
                    &shared.stdout
                } else {
                    &shared.stderr
                };
                if let Ok(mut tail) = tail.lock() {
                    tail.push(&buf[..n]);
                }
            }
        }
    }
}

/// Watches one command from start to end: its timeout, kill requests, the
/// clean-up of what it started, and its result.
pub(super) struct Supervisor {
    pub(super) pid: u32,
    pub(super) child: tokio::process::Child,
    pub(super) readers: [Option<tokio::task::JoinHandle<()>>; 2],
    pub(super) shared: Arc<Shared>,
    pub(super) kill: Arc<Notify>,
    pub(super) timeout: Option<Duration>,
    pub(super) started: Instant,
    pub(super) isolation: Isolation,
    /// Its record in the process ledger, dropped once nothing of it runs.
    pub(super) record: Option<Entry>,
}

impl Supervisor {
    pub(super) async fn run(mut self, done: watch::Sender<Option<CommandResult>>) {
        let pid = self.pid;
        // If this task is dropped unfinished (the runtime shutting down), the
        // command must still not outlive it.
        let mut guard = KillOnDrop(Some(pid));
        let timeout = self.timeout;
        // Wait for the exit without reaping, so the process group id cannot
        // be reused before the group has been killed.
        let mut exited =
            tokio::task::spawn_blocking(move || process_tree::wait_exited_keep_zombie(pid));
        let deadline = async move {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let (mut timed_out, mut killed, mut ended) = (false, false, false);
        let kill = self.kill.clone();
        tokio::select! {
            _ = &mut exited => ended = true,
            _ = deadline => timed_out = true,
            _ = kill.notified() => killed = true,
        }
        if ended {
            // It is gone (not yet reaped, so its ids are still its own):
            // nothing it started may outlive it.
            kill_group(pid);
        } else if self.isolation == Isolation::Bubblewrap {
            let _ = tokio::task::spawn_blocking(move || kill_tree_settled(pid)).await;
        } else {
            kill_tree(pid);
        }
        if !ended {
            let _ = exited.await;
        }
        // A sandbox's init may still be clearing out its namespace, and an
        // interactive job may sit in a group of its own.
        let record = self.record.take();
        if process_tree::clear_session(pid, DRAIN_GRACE, false).await {
            drop(record);
        } else {
            tracing::warn!(pid, "processes of a finished command are still alive");
            // The next server start's sweep tries again.
            if let Some(record) = record {
                record.keep();
            }
        }
        let status = self.child.wait().await;
        for reader in self.readers.iter_mut().flatten() {
            if tokio::time::timeout(DRAIN_GRACE, &mut *reader)
                .await
                .is_err()
            {
                reader.abort();
            }
        }
        let (exit_code, signal) = match &status {
            Ok(s) => (s.code(), s.signal()),
            Err(_) => (None, None),
        };
        if timed_out || killed {
            tracing::debug!(pid, timed_out, killed, "command ended early");
        }
        let (out, err) = self.shared.tails();
        let result = CommandResult {
            exit_code: if timed_out || killed { None } else { exit_code },
            signal: if timed_out || killed { Some(9) } else { signal },
            stdout: tail_text(&out.bytes(), out.truncated()),
            stderr: tail_text(&err.bytes(), err.truncated()),
            stdout_bytes: out.total(),
            stderr_bytes: err.total(),
            truncated: out.truncated() || err.truncated(),
            timed_out,
            killed: killed && !timed_out,
            duration_ms: self.started.elapsed().as_millis() as u64,
            isolation: self.isolation,
        };
        guard.0 = None;
        let _ = done.send(Some(result));
    }
}

/// Kills a process tree when dropped while still armed.
struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            kill_tree(pid);
        }
    }
}

/// A command started by [`LocalExecutor`](super::LocalExecutor).
pub(super) struct LocalCommand {
    pub(super) id: u64,
    pub(super) shared: Arc<Shared>,
    pub(super) stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pub(super) kill: Arc<Notify>,
    pub(super) done: watch::Receiver<Option<CommandResult>>,
}

impl Drop for LocalCommand {
    fn drop(&mut self) {
        // The last handle is gone: nobody can stop it any more, so stop it now.
        if self.done.borrow().is_none() {
            self.kill.notify_one();
        }
    }
}

#[async_trait]
impl RunningCommand for LocalCommand {
    fn id(&self) -> u64 {
        self.id
    }

    fn poll(&self) -> CommandPoll {
        // Read the result first: output seen after it is complete.
        let result = self.done.borrow().clone();
        let (out, err) = self.shared.tails();
        let mut cursors = self
            .shared
            .cursors
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let (new_out, next_out, missed_out) = out.since(cursors.0);
        let (new_err, next_err, missed_err) = err.since(cursors.1);
        *cursors = (next_out, next_err);
        CommandPoll {
            running: result.is_none(),
            stdout: tail_text(&new_out, missed_out > 0),
            stderr: tail_text(&new_err, missed_err > 0),
            missed_bytes: missed_out + missed_err,
            result,
        }
    }

    async fn write_stdin(&self, bytes: &[u8]) -> Result<()> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(Error::Refused(format!(
                "command {}'s stdin is closed",
                self.id
            )));
        };
        let written = async {
            pipe.write_all(bytes).await?;
            pipe.flush().await
        };
        written.await.map_err(|e| {
            Error::Refused(format!("command {} is not reading its stdin: {e}", self.id))
        })
    }

    async fn close_stdin(&self) -> Result<()> {
        self.stdin.lock().await.take();
        Ok(())
    }

    async fn kill(&self) -> Result<CommandResult> {
        self.kill.notify_one();
        self.wait().await
    }

    async fn wait(&self) -> Result<CommandResult> {
        let mut done = self.done.clone();
        let result = done
            .wait_for(Option::is_some)
            .await
            .map_err(|_| Error::Internal(format!("command {} lost its supervisor", self.id)))?;
        result
            .clone()
            .ok_or_else(|| Error::Internal("a finished command has no result".into()))
    }
}
