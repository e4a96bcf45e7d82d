//! The request and answer of running a command in a channel's computer.

use helm_core::exec as x;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A command to run in a channel's computer.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    /// The command line, as a shell reads it.
    pub command: String,
    /// Where to start, as the agent names it (`/workspace/src` or `src`);
    /// the workspace when absent.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Seconds before the command is killed (default 600, at most 3600).
    #[serde(default)]
    pub timeout_secs: Option<f64>,
}

/// The isolation a command ran under.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// bubblewrap namespaces; only `/workspace` is writable.
    Bubblewrap,
    /// A confined ordinary process.
    Process,
    /// No sandbox (Skipper's host computer).
    Host,
    /// On another host, behind a computer server.
    Remote,
}

/// What a finished command did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CommandResult {
    /// Its exit code; null when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The tail of its standard output (lossy UTF-8).
    pub stdout: String,
    /// The tail of its standard error (lossy UTF-8).
    pub stderr: String,
    /// Bytes it wrote to standard output in all.
    pub stdout_bytes: u64,
    /// Bytes it wrote to standard error in all.
    pub stderr_bytes: u64,
    /// Whether either stream was cut to its tail.
    pub truncated: bool,
    /// Whether it was killed for running past its timeout.
    pub timed_out: bool,
    /// Whether it was killed on request.
    pub killed: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The isolation it ran under.
    pub isolation: Isolation,
}

impl From<x::CommandResult> for CommandResult {
    fn from(c: x::CommandResult) -> Self {
        CommandResult {
            exit_code: c.exit_code,
            signal: c.signal,
            stdout: c.stdout,
            stderr: c.stderr,
            stdout_bytes: c.stdout_bytes,
            stderr_bytes: c.stderr_bytes,
            truncated: c.truncated,
            timed_out: c.timed_out,
            killed: c.killed,
            duration_ms: c.duration_ms,
            isolation: match c.isolation {
                x::Isolation::Bubblewrap => Isolation::Bubblewrap,
                x::Isolation::Process => Isolation::Process,
                x::Isolation::Host => Isolation::Host,
                x::Isolation::Remote => Isolation::Remote,
            },
        }
    }
}
