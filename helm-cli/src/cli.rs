//! The command line, as clap sees it. Global flags (`--data`, `--json`,
//! `--as`) may stand anywhere on the line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use helm_core::exec::IsolationChoice;

/// 1helm: create a channel for anything; it comes with an agent, a computer,
/// a workspace and a memory.
#[derive(Debug, Parser)]
#[command(name = "1helm", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,

    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// The data directory.
    #[arg(
        long = "data",
        global = true,
        env = "HELM_DATA",
        default_value = "helm-data",
        value_name = "DIR"
    )]
    pub data: PathBuf,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    /// Act as this user (default: the Captain).
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,

    /// How channel computers are isolated: auto (bubblewrap if it works
    /// here), bubblewrap, or process.
    #[arg(
        long,
        global = true,
        env = "HELM_ISOLATION",
        default_value = "auto",
        value_name = "MODE"
    )]
    pub isolation: IsolationChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the data directory, the workspace, the Captain, #main and Skipper.
    Init(InitArgs),
    /// Create, inspect, archive, restore and delete channels.
    #[command(subcommand)]
    Channel(ChannelCommand),
    /// Show what the data directory holds.
    Status,
    /// List, read and upload files in a channel's workspace.
    #[command(subcommand)]
    Files(FilesCommand),
    /// Run a command in a channel's computer, as its agent would.
    Exec(ExecArgs),
    /// Open an interactive terminal in a channel's computer.
    Term(TermArgs),
}

#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// List a directory of the workspace (the workspace itself by default).
    Ls {
        /// The channel.
        channel: String,
        /// A path such as /workspace/src or src.
        #[arg(default_value = "/workspace")]
        path: String,
    },
    /// Print a file of the workspace.
    Cat {
        /// The channel.
        channel: String,
        /// The file, such as /workspace/notes.md or notes.md.
        path: String,
    },
    /// Copy a local file into the workspace.
    Put {
        /// The channel.
        channel: String,
        /// The local file.
        local: PathBuf,
        /// Where it goes (a file, or a directory ending in /); the
        /// workspace, under the local file's name, by default.
        path: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The channel.
    pub channel: String,
    /// Kill the command (and everything it started) after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// The command; its words are joined with spaces and run by the
    /// channel's shell, as ssh does.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TermArgs {
    /// The channel.
    pub channel: String,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The workspace's name.
    #[arg(long, default_value = "Helm")]
    pub workspace: String,
    /// The Captain's user name.
    #[arg(long, default_value = "captain")]
    pub captain: String,
}

#[derive(Debug, Subcommand)]
pub enum ChannelCommand {
    /// Create a channel; it comes with its resident agent.
    Create {
        /// The channel's name, such as launch or #launch.
        name: String,
        /// What the channel is all about.
        #[arg(long, default_value = "")]
        purpose: String,
        /// Only members can see it.
        #[arg(long)]
        private: bool,
    },
    /// List channels.
    List {
        /// Include archived channels.
        #[arg(long)]
        all: bool,
    },
    /// Show a channel and its agent.
    Show {
        /// The channel (name, #name or id).
        channel: String,
    },
    /// Archive a channel: its agent pauses, everything is kept.
    Archive {
        /// The channel.
        channel: String,
    },
    /// Restore an archived channel with the same agent world.
    Restore {
        /// The channel.
        channel: String,
    },
    /// Permanently delete an archived channel and its agent world.
    Delete {
        /// The channel.
        channel: String,
        /// The channel's name again, to confirm.
        #[arg(long, value_name = "NAME")]
        confirm: Option<String>,
    },
}
