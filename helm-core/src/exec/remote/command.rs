//! Commands on a remote computer: [`RemoteExecutor`] starts them with the
//! Open Terminal protocol's `POST /execute` and a task follows each one
//! with long-polling `GET /execute/{id}/status` reads, keeping its output's
//! tail, enforcing its timeout and killing it (`DELETE /execute/{id}`) when
//! asked or when its last handle is dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::Method;
use serde::Deserialize;
use tokio::sync::{Notify, watch};

use super::Servers;
use super::client::{OtServer, resolve};
use crate::error::{Error, Result};
use crate::exec::command::{CommandPoll, CommandResult, CommandSpec};
use crate::exec::computer::{Computer, Isolation};
use crate::exec::output::{OutputTail, tail_text};
use crate::exec::port::{Executor, RunningCommand};

/// How long one status read asks the server to wait for the end.
const POLL_WAIT: Duration = Duration::from_secs(5);
/// Transport failures in a row after which a command counts as lost.
const MAX_POLL_FAILURES: u32 = 5;
/// The most stdin a command may be given up front (it travels in the
/// command line, since the protocol cannot close a command's stdin).
pub const MAX_REMOTE_STDIN: usize = 64 * 1024;

/// Ids of remote commands, unique in this process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Runs channel computers' commands on their computer servers.
pub struct RemoteExecutor {
    pub(super) servers: Arc<Servers>,
}

impl std::fmt::Debug for RemoteExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteExecutor")
            .field("at", &self.servers.describe())
            .finish()
    }
}

/// `POST /execute` and `GET /execute/{id}/status` answers.
#[derive(Debug, Deserialize)]
struct Process {
    id: String,
    status: String,
    exit_code: Option<i64>,
    #[serde(default)]
    output: Vec<Output>,
    next_offset: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Output {
    #[serde(rename = "type")]
    stream: String,
    data: String,
}

/// What every command line starts with: the server runs commands in a
/// terminal, which would echo input back and turn `\n` into `\r\n`; a
/// command's output should be its bytes.
const RAW_TERMINAL: &str = "stty -echo -onlcr 2>/dev/null; ";

/// What a command that takes input while it runs prints first, once its
/// terminal is raw: input written before would be echoed, so writes wait
/// for it, and it is taken out of the output.
const READY: &str = "\u{1}helm-ready\u{1}";
/// [`READY`] as `printf` writes it.
const PRINT_READY: &str = "printf '\\001helm-ready\\001'; ";
/// How long one status read waits while a command is not ready for input.
const READY_POLL: Duration = Duration::from_millis(50);
/// How long a write waits for a command to be ready for input.
const READY_WAIT: Duration = Duration::from_secs(30);

/// The command line that gives `spec`'s stdin, which the protocol cannot
/// close: bytes given up front are piped in from the command line, and no
/// stdin (for a run to the end) is `/dev/null`, so a command that reads
/// stdin sees its end instead of waiting forever.
fn command_line(spec: &CommandSpec, to_the_end: bool) -> Result<String> {
    let line = match &spec.stdin {
        Some(bytes) if bytes.len() > MAX_REMOTE_STDIN => Err(Error::invalid(
            "stdin",
            format!(
                "{} bytes given up front; a remote computer takes at most {MAX_REMOTE_STDIN}: \
                 write the input to a file in the workspace and read it from there",
                bytes.len()
            ),
        )),
        Some(bytes) => Ok(format!(
            "printf '%s' '{}' | base64 -d | {{ {}\n}}",
            base64(bytes),
            spec.command
        )),
        None if to_the_end => Ok(format!("{{ {}\n}} </dev/null", spec.command)),
        None => Ok(format!("{PRINT_READY}{}", spec.command)),
    }?;
    Ok(format!("{RAW_TERMINAL}{line}"))
}

/// Standard base64 (no line breaks), as `base64 -d` reads it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Input as the protocol reads it: it unescapes backslash sequences, so a
/// backslash Helm sends must be escaped.
fn protocol_input(bytes: &[u8]) -> Result<String> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        Error::invalid(
            "stdin",
            "a remote computer takes text input (UTF-8); this is binary",
        )
    })?;
    Ok(text.replace('\\', "\\\\"))
}

impl RemoteExecutor {
    async fn start_line(
        &self,
        computer: &Computer,
        spec: CommandSpec,
        to_the_end: bool,
    ) -> Result<Arc<dyn RunningCommand>> {
        spec.validate()?;
        let server = self.servers.server_for(computer)?;
        let command = command_line(&spec, to_the_end)?;
        let root = server.root().await?;
        let (_, cwd) = resolve(root, spec.cwd.as_deref().unwrap_or("."))?;
        let mut body = serde_json::json!({ "command": command, "cwd": cwd });
        if !spec.env.is_empty() {
            let env: serde_json::Map<String, serde_json::Value> = spec
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect();
            body["env"] = env.into();
        }
        let started = Instant::now();
        let process: Process = server
            .json(
                "starting a command",
                server
                    .request(Method::POST, "/execute", Duration::ZERO)
                    .query(&[("wait", "0")])
                    .json(&body),
            )
            .await?;
        let interactive = spec.stdin.is_none() && !to_the_end;
        let shared = Arc::new(Shared {
            tails: Mutex::new(Tails {
                stdout: OutputTail::new(spec.output_limit),
                stderr: OutputTail::new(spec.output_limit),
                cursors: (0, 0),
                awaiting: interactive.then(Vec::new),
            }),
            kill: Notify::new(),
            ready: watch::Sender::new(!interactive),
        });
        let offset = shared.take(&process.output, process.next_offset, 0);
        let (done_tx, done) = watch::channel(None);
        let follow = Follow {
            server: server.clone(),
            remote_id: process.id.clone(),
            shared: shared.clone(),
            timeout: spec.timeout,
            started,
            offset,
        };
        if process.status == "running" {
            tokio::spawn(follow.run(done_tx));
        } else {
            let _ = done_tx.send(Some(Ok(follow.result(&process, false, false))));
        }
        let stdin = match (&spec.stdin, to_the_end) {
            (None, false) => Stdin::Open { line_start: true },
            (Some(_), _) => Stdin::UpFront,
            (None, true) => Stdin::Closed,
        };
        Ok(Arc::new(RemoteCommand {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            remote_id: process.id,
            stdin: Mutex::new(stdin),
            server,
            shared,
            done,
        }))
    }
}

#[async_trait]
impl Executor for RemoteExecutor {
    fn channel_isolation(&self) -> Isolation {
        Isolation::Remote
    }

    async fn start(
        &self,
        computer: &Computer,
        spec: CommandSpec,
    ) -> Result<Arc<dyn RunningCommand>> {
        self.start_line(computer, spec, false).await
    }

    async fn run(&self, computer: &Computer, spec: CommandSpec) -> Result<CommandResult> {
        let running = self.start_line(computer, spec, true).await?;
        running.wait().await
    }
}

/// What a command has printed, and how far `poll` has reported.
struct Tails {
    stdout: OutputTail,
    stderr: OutputTail,
    cursors: (u64, u64),
    /// The start of stdout while [`READY`] is awaited.
    awaiting: Option<Vec<u8>>,
}

impl Tails {
    /// Takes stdout bytes, holding them back while [`READY`] is awaited;
    /// returns whether the command just became ready.
    fn stdout(&mut self, bytes: &[u8]) -> bool {
        let Some(held) = &mut self.awaiting else {
            self.stdout.push(bytes);
            return false;
        };
        held.extend_from_slice(bytes);
        let ready = READY.as_bytes();
        if held.len() < ready.len() && ready.starts_with(held) {
            return false;
        }
        let held = self.awaiting.take().unwrap_or_default();
        self.stdout
            .push(held.strip_prefix(ready).unwrap_or(held.as_slice()));
        true
    }

    /// Stops awaiting [`READY`] (the command ended), keeping what was held.
    fn flush(&mut self) {
        if let Some(held) = self.awaiting.take() {
            self.stdout.push(&held);
        }
    }
}

/// Shared by the follower task and the handles.
struct Shared {
    tails: Mutex<Tails>,
    kill: Notify,
    /// Whether the command takes input now (see [`READY`]).
    ready: watch::Sender<bool>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Tails> {
        self.tails.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps new output entries; returns the offset to read from next.
    fn take(&self, output: &[Output], next: Option<u64>, offset: u64) -> u64 {
        let mut tails = self.lock();
        for entry in output {
            if entry.stream == "stderr" {
                tails.stderr.push(entry.data.as_bytes());
            } else if tails.stdout(entry.data.as_bytes()) {
                // `stdout`, and `output` (a PTY's merged streams).
                self.ready.send_replace(true);
            }
        }
        next.unwrap_or(offset + output.len() as u64)
    }
}

/// How a command ended: its result, or why it could not be followed.
type Outcome = std::result::Result<CommandResult, String>;

/// Follows one command to its end.
struct Follow {
    server: Arc<OtServer>,
    remote_id: String,
    shared: Arc<Shared>,
    timeout: Option<Duration>,
    started: Instant,
    offset: u64,
}

impl Follow {
    async fn run(mut self, done: watch::Sender<Option<Outcome>>) {
        let deadline = self.timeout.map(|t| self.started + t);
        let mut failures = 0;
        let outcome = loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO) {
                break self.stop(true, false).await;
            }
            // A long read returns only at the end: while the command is
            // not ready for input yet, read often, so writes wait little.
            let longest = if *self.shared.ready.borrow() {
                POLL_WAIT
            } else {
                READY_POLL
            };
            let wait = left.map_or(longest, |l| l.min(longest));
            let shared = self.shared.clone();
            let read = tokio::select! {
                read = self.status(wait) => read,
                _ = shared.kill.notified() => break self.stop(false, true).await,
            };
            match read {
                Ok(process) if process.status == "running" => failures = 0,
                Ok(process) => break Ok(self.result(&process, false, false)),
                Err(e @ Error::NotFound { .. }) => break Err(e.to_string()),
                Err(e) => {
                    failures += 1;
                    if failures >= MAX_POLL_FAILURES {
                        break Err(e.to_string());
                    }
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(failures))).await;
                }
            }
        };
        let _ = done.send(Some(outcome));
    }

    /// One status read, keeping the output it brings.
    async fn status(&mut self, wait: Duration) -> Result<Process> {
        let path = format!("/execute/{}/status", self.remote_id);
        let process: Process = self
            .server
            .json(
                "reading a command's output",
                self.server
                    .request(Method::GET, &path, wait)
                    .query(&[("offset", self.offset.to_string())])
                    .query(&[("wait", format!("{:.3}", wait.as_secs_f64()))]),
            )
            .await?;
        self.offset = self
            .shared
            .take(&process.output, process.next_offset, self.offset);
        Ok(process)
    }

    /// Kills it (for its timeout or on request) and reads what it left.
    async fn stop(&mut self, timed_out: bool, killed: bool) -> Outcome {
        let path = format!("/execute/{}", self.remote_id);
        let kill = self
            .server
            .send(
                "killing a command",
                self.server
                    .request(Method::DELETE, &path, Duration::ZERO)
                    .query(&[("force", "true")]),
            )
            .await;
        if let Err(e) = kill {
            return Err(e.to_string());
        }
        match self.status(Duration::ZERO).await {
            Ok(process) => Ok(self.result(&process, timed_out, killed)),
            Err(e) => Err(e.to_string()),
        }
    }

    fn result(&self, process: &Process, timed_out: bool, killed: bool) -> CommandResult {
        let killed = killed || (!timed_out && process.status == "killed");
        // A negative code is a signal (as Python's subprocess reports it).
        let (exit_code, signal) = match process.exit_code {
            _ if timed_out || killed => (None, Some(9)),
            Some(code) if code < 0 => (None, Some((-code) as i32)),
            Some(code) => (Some(code as i32), None),
            None => (None, None),
        };
        let mut tails = self.shared.lock();
        tails.flush();
        CommandResult {
            exit_code,
            signal,
            stdout: tail_text(&tails.stdout.bytes(), tails.stdout.truncated()),
            stderr: tail_text(&tails.stderr.bytes(), tails.stderr.truncated()),
            stdout_bytes: tails.stdout.total(),
            stderr_bytes: tails.stderr.total(),
            truncated: tails.stdout.truncated() || tails.stderr.truncated(),
            timed_out,
            killed,
            duration_ms: self.started.elapsed().as_millis() as u64,
            isolation: Isolation::Remote,
        }
    }
}

/// Where a remote command's stdin stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stdin {
    /// Open, read from the server's terminal; `line_start` when what was
    /// written so far ends a line (an end of input is one Ctrl-D there,
    /// two after a partial line).
    Open { line_start: bool },
    /// Given up front, in the command line.
    UpFront,
    /// Closed.
    Closed,
}

/// Ctrl-D: the end of input, to a terminal in canonical mode.
const END_OF_INPUT: &str = "\u{4}";

/// A command on a remote computer.
struct RemoteCommand {
    id: u64,
    remote_id: String,
    stdin: Mutex<Stdin>,
    server: Arc<OtServer>,
    shared: Arc<Shared>,
    done: watch::Receiver<Option<Outcome>>,
}

impl Drop for RemoteCommand {
    fn drop(&mut self) {
        // The last handle is gone: nobody can stop it any more, so the
        // follower stops it now.
        if self.done.borrow().is_none() {
            self.shared.kill.notify_one();
        }
    }
}

impl RemoteCommand {
    fn outcome(&self) -> Option<Outcome> {
        self.done.borrow().clone()
    }

    fn stdin(&self) -> Stdin {
        *self.stdin.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_stdin(&self, stdin: Stdin) {
        *self.stdin.lock().unwrap_or_else(|p| p.into_inner()) = stdin;
    }

    /// Writes `input` (already escaped for the protocol) to its terminal.
    async fn send_input(&self, input: &str) -> Result<()> {
        let mut ready = self.shared.ready.subscribe();
        let mut done = self.done.clone();
        let waited = tokio::time::timeout(READY_WAIT, async {
            tokio::select! {
                _ = ready.wait_for(|r| *r) => {}
                _ = done.wait_for(Option::is_some) => {}
            }
        })
        .await;
        if waited.is_err() {
            return Err(self.lost("it did not get ready for input".into()));
        }
        if self.done.borrow().is_some() {
            return Err(Error::Refused("the command has ended".into()));
        }
        let path = format!("/execute/{}/input", self.remote_id);
        self.server
            .send(
                "writing to a command's stdin",
                self.server
                    .request(Method::POST, &path, Duration::ZERO)
                    .json(&serde_json::json!({ "input": input })),
            )
            .await?;
        Ok(())
    }

    fn lost(&self, reason: String) -> Error {
        Error::ComputerUnreachable(format!(
            "command {} on the computer at {}: {reason}",
            self.remote_id,
            self.server.base()
        ))
    }
}

#[async_trait]
impl RunningCommand for RemoteCommand {
    fn id(&self) -> u64 {
        self.id
    }

    fn poll(&self) -> CommandPoll {
        let result = self.outcome().and_then(|o| o.ok());
        let mut tails = self.shared.lock();
        let (out, out_next, out_missed) = tails.stdout.since(tails.cursors.0);
        let (err, err_next, err_missed) = tails.stderr.since(tails.cursors.1);
        tails.cursors = (out_next, err_next);
        CommandPoll {
            running: self.done.borrow().is_none(),
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
            missed_bytes: out_missed + err_missed,
            result,
        }
    }

    async fn write_stdin(&self, bytes: &[u8]) -> Result<()> {
        match self.stdin() {
            Stdin::Open { .. } => {}
            Stdin::UpFront => {
                return Err(Error::Refused(
                    "the command was given its stdin when it started".into(),
                ));
            }
            Stdin::Closed => return Err(Error::Refused("the command's stdin is closed".into())),
        }
        if bytes.is_empty() {
            return Ok(());
        }
        self.send_input(&protocol_input(bytes)?).await?;
        self.set_stdin(Stdin::Open {
            line_start: bytes.ends_with(b"\n"),
        });
        Ok(())
    }

    async fn close_stdin(&self) -> Result<()> {
        let Stdin::Open { line_start } = self.stdin() else {
            return Ok(());
        };
        self.set_stdin(Stdin::Closed);
        if self.done.borrow().is_some() {
            return Ok(());
        }
        let end = if line_start {
            END_OF_INPUT.to_string()
        } else {
            END_OF_INPUT.repeat(2)
        };
        self.send_input(&end).await
    }

    async fn kill(&self) -> Result<CommandResult> {
        if self.done.borrow().is_none() {
            self.shared.kill.notify_one();
        }
        self.wait().await
    }

    async fn wait(&self) -> Result<CommandResult> {
        let mut done = self.done.clone();
        let outcome = done
            .wait_for(Option::is_some)
            .await
            .map_err(|_| self.lost("its follower stopped".into()))?
            .clone();
        match outcome {
            Some(Ok(result)) => Ok(result),
            Some(Err(reason)) => Err(self.lost(reason)),
            None => Err(self.lost("it ended without a result".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"hello\n\x00\xff"), "aGVsbG8KAP8=");
    }

    #[test]
    fn stdin_goes_in_the_command_line_or_is_closed() -> Result<()> {
        let spec = CommandSpec::new("cat").stdin(b"hi".to_vec());
        assert_eq!(
            command_line(&spec, true)?,
            format!("{RAW_TERMINAL}printf '%s' 'aGk=' | base64 -d | {{ cat\n}}")
        );
        let spec = CommandSpec::new("cat");
        assert_eq!(
            command_line(&spec, true)?,
            format!("{RAW_TERMINAL}{{ cat\n}} </dev/null")
        );
        assert_eq!(
            command_line(&spec, false)?,
            format!("{RAW_TERMINAL}{PRINT_READY}cat")
        );
        let big = CommandSpec::new("cat").stdin(vec![b'x'; MAX_REMOTE_STDIN + 1]);
        assert!(matches!(
            command_line(&big, true),
            Err(Error::Invalid { what: "stdin", .. })
        ));
        Ok(())
    }

    #[test]
    fn the_ready_mark_is_held_back_and_taken_out() {
        let mut tails = Tails {
            stdout: OutputTail::new(1024),
            stderr: OutputTail::new(1024),
            cursors: (0, 0),
            awaiting: Some(Vec::new()),
        };
        assert!(!tails.stdout(b"\x01helm-"));
        assert!(tails.stdout(b"ready\x01hello"));
        assert!(!tails.stdout(b" world"));
        assert_eq!(tails.stdout.bytes(), b"hello world");
        // Output that does not start with the mark is kept whole.
        let mut other = Tails {
            awaiting: Some(Vec::new()),
            ..tails
        };
        other.stdout = OutputTail::new(1024);
        assert!(other.stdout(b"sh: stty: not found\n"));
        assert_eq!(other.stdout.bytes(), b"sh: stty: not found\n");
    }

    #[test]
    fn input_backslashes_survive_the_protocols_unescaping() -> Result<()> {
        assert_eq!(protocol_input(b"a\\nb\n")?, "a\\\\nb\n");
        assert!(protocol_input(&[0xff]).is_err());
        Ok(())
    }
}
