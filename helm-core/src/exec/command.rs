//! Commands: what to run ([`CommandSpec`]) and what came of it
//! ([`CommandResult`], [`CommandPoll`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::computer::Isolation;
use crate::error::{Error, Result};

/// The output kept per stream when a spec does not say: the tail an agent
/// reads back is bounded however much a command prints.
pub const DEFAULT_OUTPUT_LIMIT: usize = 64 * 1024;

/// How long a command may run when a spec does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a command a person runs and waits for (the server's `exec`,
/// Python's `run`) may take when they do not say.
pub const RUN_AND_WAIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest time limit a command run through a server may be given: the
/// request waits for it to end. The server refuses more, and its client
/// checks first, so a frontend's user hears it in no other frontend's words.
pub const RUN_AND_WAIT_MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// A shell command to run in a computer: `bash -lc COMMAND` (or `sh -c`
/// where there is no bash), starting in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// The command line, as a shell reads it.
    pub command: String,
    /// The directory to start in, as the agent names it (`/workspace/src` or
    /// `src`); the workspace itself when `None`.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment variables added to the scrubbed environment.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Bytes written to the command's stdin, which is then closed. `None`
    /// gives it an empty stdin for [`run`](super::Executor::run), and an
    /// open pipe for [`start`](super::Executor::start).
    #[serde(default)]
    pub stdin: Option<Vec<u8>>,
    /// The command and everything it started are killed after this long.
    /// `None`: no limit (for commands that are started and polled).
    #[serde(default, with = "millis")]
    pub timeout: Option<Duration>,
    /// Bytes kept of each of stdout and stderr (the tail).
    pub output_limit: usize,
}

impl CommandSpec {
    /// A command with the default timeout and output limit.
    pub fn new(command: impl Into<String>) -> Self {
        CommandSpec {
            command: command.into(),
            cwd: None,
            env: Vec::new(),
            stdin: None,
            timeout: Some(DEFAULT_TIMEOUT),
            output_limit: DEFAULT_OUTPUT_LIMIT,
        }
    }

    /// With a timeout (`None` for none).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// With stdin.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// With an environment variable.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Starting in `dir` (agent-visible).
    pub fn cwd(mut self, dir: impl Into<String>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Keeping `bytes` of each output stream.
    pub fn output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }

    /// Checks what the shell and the kernel would reject less clearly.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.command.trim().is_empty() {
            return Err(Error::invalid("command", "it is empty"));
        }
        if self.command.contains('\0') {
            return Err(Error::invalid("command", "it contains a NUL byte"));
        }
        for (name, value) in &self.env {
            let ok = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(Error::invalid(
                    "environment variable",
                    format!("{name:?} is not a name such as API_URL"),
                ));
            }
            if value.contains('\0') {
                return Err(Error::invalid(
                    "environment variable",
                    format!("the value of {name} contains a NUL byte"),
                ));
            }
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(Error::invalid("timeout", "it must be longer than zero"));
        }
        Ok(())
    }
}

/// What a finished command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    /// Its exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The tail of its stdout (lossy UTF-8).
    pub stdout: String,
    /// The tail of its stderr (lossy UTF-8).
    pub stderr: String,
    /// Bytes it wrote to stdout in all.
    pub stdout_bytes: u64,
    /// Bytes it wrote to stderr in all.
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

impl CommandResult {
    /// Whether it exited with 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The code a shell would report: the exit code, or 128 + the signal.
    pub fn shell_status(&self) -> i32 {
        match (self.exit_code, self.signal) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => -1,
        }
    }
}

/// What a started command has done since it was last polled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandPoll {
    /// Whether it is still running.
    pub running: bool,
    /// Stdout written since the previous poll (lossy UTF-8).
    pub stdout: String,
    /// Stderr written since the previous poll.
    pub stderr: String,
    /// Bytes written since the previous poll that fell out of the kept tail
    /// before this poll could see them.
    pub missed_bytes: u64,
    /// The outcome, once it has ended.
    pub result: Option<CommandResult>,
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_millis() as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_checked() {
        assert!(CommandSpec::new("true").validate().is_ok());
        assert!(CommandSpec::new("  ").validate().is_err());
        assert!(CommandSpec::new("true").env("A-B", "x").validate().is_err());
        assert!(CommandSpec::new("true").env("1A", "x").validate().is_err());
        assert!(
            CommandSpec::new("true")
                .timeout(Some(Duration::ZERO))
                .validate()
                .is_err()
        );
    }
}
