//! The command line, as clap sees it. Global flags (`--data`, `--json`,
//! `--as`) may stand anywhere on the line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
