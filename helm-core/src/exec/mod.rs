//! The computer: every channel agent's shell-bearing environment.
//!
//! A channel's [`Computer`] is its workspace (`<data>/channels/<id>/workspace`
//! on the host, `/workspace` to the agent) plus the rules its commands run
//! under: the [`Isolation`] the deployment chose, network on or off from the
//! channel's [`CapabilityPolicy`](crate::model::CapabilityPolicy), and, when
//! the server runs as root, an unprivileged uid of the channel's own.
//!
//! Three things run on a computer, each usable from the agent turn and from
//! every frontend:
//!
//! - **Commands**, through the [`Executor`] port: [`Executor::run`] runs a
//!   shell command to its end and returns a [`CommandResult`] (exit code,
//!   bounded stdout/stderr tails, truncation and timeout flags, duration,
//!   isolation); [`Executor::start`] returns a [`RunningCommand`] to poll,
//!   feed, wait for or kill. Timeouts and kills end the whole process tree.
//! - **Files**, through the [`Files`] port ([`ConfinedFs`] here): list, stat, read (line ranges),
//!   write, mkdir, move, delete, grep and glob, taking agent-visible paths and
//!   never touching anything outside the workspace.
//! - **Terminals**, through the [`Terminals`] port ([`TerminalManager`]
//!   here): PTY shells in the same
//!   sandbox, with scrollback for viewers that attach later.
//!
//! ```no_run
//! # async fn demo(helm: helm_core::Helm, channel: helm_core::model::ChannelRef)
//! # -> helm_core::Result<()> {
//! use helm_core::exec::{CommandSpec, Executor};
//!
//! let computer = helm.computer(&channel).await?;
//! let result = helm
//!     .executor()
//!     .await?
//!     .run(&computer, CommandSpec::new("ls -la"))
//!     .await?;
//! println!("{} -> {}", result.shell_status(), result.stdout);
//!
//! let files = helm_core::exec::ConfinedFs::new(&computer);
//! files.write("notes/plan.md", "# Plan\n").await?;
//! let text = files.read("/workspace/notes/plan.md", None).await?;
//! # Ok(()) }
//! ```
//!
//! While a command or terminal runs it is recorded in its data root's
//! process ledger (`<data>/state/procs/`), so that a server starting after
//! a crash ends what the crash left running, and only that
//! ([`LocalExecutor::kill_leftovers`]).
//!
//! Each is a port injected through
//! [`HelmOptions::ports`](crate::HelmOptions::ports): a
//! [`ComputerProvider`] chooses each channel's executor, a
//! [`FilesProvider`] its files, and [`Terminals`] keeps the terminals.
//! [`LocalExecutor`] (through [`LocalComputers`]), [`LocalFiles`] and
//! [`LocalTerminals`] are the implementations on this host and the defaults;
//! [`RemoteComputers`] keeps channel computers (commands, files and
//! terminals) on another host, behind a computer server that speaks the
//! Open Terminal protocol. How each isolation
//! mode works, and what it does and does not prevent, is in
//! `docs/security.md`.

mod command;
mod computer;
pub(crate) mod files;
mod ledger;
mod local;
mod output;
mod port;
mod process_tree;
mod provider;
mod remote;
mod running;
mod sandbox;
mod stdio;
mod terminal;

pub use command::{
    CommandPoll, CommandResult, CommandSpec, DEFAULT_OUTPUT_LIMIT, DEFAULT_TIMEOUT,
    RUN_AND_WAIT_MAX_TIMEOUT, RUN_AND_WAIT_TIMEOUT,
};
pub use computer::{
    AGENT_ROOT, Computer, ComputerOptions, DEFAULT_SANDBOX_UID_BASE, Isolation, IsolationChoice,
    ResourceLimits, SandboxUser, TerminalLimits,
};
pub(crate) use files::files_wrapper;
pub use files::{
    ConfinedFs, FileBytes, FileEntry, FileKind, FileText, Files, FilesProvider, GlobResult,
    GrepMatch, GrepQuery, GrepResult, LineRange, LocalFiles, MAX_READ_TEXT, content_version,
};
pub use local::LocalExecutor;
pub use port::{Executor, RunningCommand};
pub use process_tree::raise_open_files_limit;
pub use provider::{ComputerProvider, LocalComputers, OneExecutor};
pub use remote::{
    ComputerRoutes, ComputerServer, MAX_REMOTE_STDIN, RemoteComputer, RemoteComputers,
    RemoteExecutor, RemoteFiles, Route,
};
pub use stdio::{STDIO_STDERR_TAIL, StdioHandle, StdioProcess, StdioSpec};
pub use terminal::{
    LocalTerminals, Opener, TerminalEvent, TerminalInfo, TerminalManager, TerminalSession,
    TerminalSize, TerminalSubscription, Terminals, terminal_node,
};
