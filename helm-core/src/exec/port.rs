//! The executor port: what the agent turn and the frontends call to run
//! commands in a computer. [`LocalExecutor`](super::LocalExecutor) is the
//! implementation on this host; a remote computer would be another. Which
//! executor a channel's computer uses is chosen by a
//! [`ComputerProvider`](super::ComputerProvider).

use std::sync::Arc;

use async_trait::async_trait;

use super::command::{CommandPoll, CommandResult, CommandSpec};
use super::computer::{Computer, Isolation, SandboxUser};
use super::stdio::{StdioProcess, StdioSpec};
use crate::error::{Error, Result};
use crate::model::ChannelId;

/// Runs commands in computers, and says what those computers are like.
///
/// The facade describes a channel's [`Computer`] from what its executor
/// reports ([`channel_isolation`](Executor::channel_isolation),
/// [`sandbox_user`](Executor::sandbox_user)), so a wrapper or a remote
/// executor decides those, not the host.
#[async_trait]
pub trait Executor: Send + Sync {
    /// The isolation channel computers get from this executor.
    fn channel_isolation(&self) -> Isolation;

    /// The unprivileged identity `channel`'s commands run as, if they run
    /// as another user than the server's. Default: none.
    fn sandbox_user(&self, channel: ChannelId) -> Result<Option<SandboxUser>> {
        let _ = channel;
        Ok(None)
    }

    /// Kills what an earlier process started through this executor and
    /// lost (a server at start calls it); returns how many processes were
    /// killed. Default: nothing to kill.
    async fn kill_leftovers(&self) -> usize {
        0
    }

    /// Starts a command and returns at once with a handle to poll it, feed
    /// its stdin, wait for it or kill it. The spec's timeout still applies.
    /// Dropping the last handle kills the command.
    async fn start(
        &self,
        computer: &Computer,
        spec: CommandSpec,
    ) -> Result<Arc<dyn RunningCommand>>;

    /// Runs a command to its end (or its timeout) and returns what it did.
    async fn run(&self, computer: &Computer, spec: CommandSpec) -> Result<CommandResult> {
        let running = self.start(computer, spec).await?;
        running.wait().await
    }

    /// Starts a long-running program (an MCP server) in the computer, as a
    /// command would start, with its stdin and stdout as a byte stream and
    /// no timeout. Dropping the returned handle kills it. Executors that
    /// cannot keep such a program refuse.
    async fn spawn_stdio(&self, computer: &Computer, spec: StdioSpec) -> Result<StdioProcess> {
        let _ = (computer, spec);
        Err(Error::Refused(
            "this computer cannot run programs that speak over stdin and stdout".into(),
        ))
    }
}

/// A command that was started and may still be running.
#[async_trait]
pub trait RunningCommand: Send + Sync {
    /// Its id, unique in this process.
    fn id(&self) -> u64;

    /// What it wrote since the previous poll, and whether it has ended.
    fn poll(&self) -> CommandPoll;

    /// Writes to its stdin (refused when stdin was given up front or closed).
    async fn write_stdin(&self, bytes: &[u8]) -> Result<()>;

    /// Closes its stdin, so that a command reading it sees the end.
    async fn close_stdin(&self) -> Result<()>;

    /// Kills it and everything it started; returns once it is gone.
    async fn kill(&self) -> Result<CommandResult>;

    /// Waits for it to end (by itself, by its timeout or by a kill).
    async fn wait(&self) -> Result<CommandResult>;
}
