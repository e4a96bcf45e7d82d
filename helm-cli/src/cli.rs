//! The command line, as clap sees it. Global flags (`--data`, `--json`,
//! `--as`) may stand anywhere on the line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use helm_core::exec::IsolationChoice;
use helm_core::memory::config::EmbedderSetting;

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

    /// Act as this user (default: the Captain). Not with --server, where
    /// the token says who acts.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,

    /// How channel computers are isolated: auto (the default: bubblewrap if
    /// it works here), bubblewrap, or process. Over HELM_ISOLATION and the
    /// data directory's helm.toml (core resolves those).
    #[arg(long, global = true, value_name = "MODE")]
    pub isolation: Option<IsolationChoice>,

    /// Recall by meaning: required (refuse to work without the local
    /// embedding model), auto (the default: use it when found), or off
    /// (words only). Over HELM_EMBEDDER and helm.toml.
    #[arg(long, global = true, value_name = "SETTING")]
    pub embedder: Option<EmbedderSetting>,

    /// Work through a running helm-http server instead of a data directory.
    #[arg(long, global = true, env = "HELM_SERVER", value_name = "URL")]
    pub server: Option<String>,

    /// The API token for --server.
    #[arg(
        long,
        global = true,
        env = "HELM_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
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
    /// Register model providers and list them.
    #[command(subcommand)]
    Provider(ProviderCommand),
    /// Add and list people.
    #[command(subcommand)]
    User(UserCommand),
    /// Post a message in a channel and stream the agent's reply live.
    Say(SayArgs),
    /// List, show, resolve, archive and reopen threads (work sessions).
    #[command(subcommand)]
    Thread(ThreadCommand),
    /// Show a channel's tool journal: what its agent ran and changed.
    Activity(ActivityArgs),
    /// A channel's knowledge: decisions, facts, preferences, summaries.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// Ask a channel's memory and history a question.
    Recall(RecallArgs),
    /// Import a history (JSON Lines of threads, messages and memory) into a channel.
    Import(ImportArgs),
    /// List, read and upload files in a channel's workspace.
    #[command(subcommand)]
    Files(FilesCommand),
    /// Save a quick note as a new Markdown file in a channel's /workspace/notes.
    Note(NoteArgs),
    /// Run a command in a channel's computer, as its agent would.
    Exec(ExecArgs),
    /// Open an interactive terminal in a channel's computer.
    Term(TermArgs),
    /// Approval requests waiting for the Captain (`approvals` alone lists them).
    Approvals(ApprovalsArgs),
    /// Approve a request; the waiting agent goes ahead.
    Approve(DecideArgs),
    /// Deny a request; the waiting agent is told no.
    Deny(DecideArgs),
    /// Calls for Skipper (`escalations` alone lists the open ones).
    Escalations(EscalationsArgs),
    /// The audit log of tool calls and authority changes (`audit verify` checks it).
    Audit(AuditArgs),
    /// Serve this workspace as an MCP server over stdio (no subcommand), or
    /// manage a channel's MCP servers.
    Mcp(McpArgs),
}

/// `1helm approvals [list|require]`: listing when no subcommand is given.
#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    /// What to do; the pending requests are listed without one.
    #[command(subcommand)]
    pub command: Option<ApprovalsCommand>,
}

/// `1helm escalations [list]`: listing the open calls without a subcommand.
#[derive(Debug, Args)]
pub struct EscalationsArgs {
    /// What to do; the open calls are listed without one.
    #[command(subcommand)]
    pub command: Option<EscalationsCommand>,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// List approval requests (pending ones unless --all).
    List {
        /// Decided ones too.
        #[arg(long)]
        all: bool,
    },
    /// Set whether an action needs approval (workspace-wide, or in one channel).
    Require {
        /// host_command, install_package, grant_capability, cross_channel_read, delete_channel,
        /// tool_call, tool_definition or mcp_server.
        action: String,
        /// `yes` or `no`.
        #[arg(value_parser = ["yes", "no"])]
        required: String,
        /// Only in this channel.
        #[arg(long)]
        channel: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The approval's id.
    pub id: i64,
    /// A note for the thread.
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum EscalationsCommand {
    /// List calls for Skipper (open ones unless --all).
    List {
        /// Closed ones too.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// `verify` to check the log's hash chain.
    #[arg(value_parser = ["verify"])]
    pub verify: Option<String>,
    /// Only this channel's rows.
    #[arg(long)]
    pub channel: Option<String>,
    /// How many of the newest rows.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
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
        /// Refuse (exit 4) if the file is already there, instead of
        /// replacing it.
        #[arg(long = "new")]
        new: bool,
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

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List a channel's memory records (current ones unless --all).
    List {
        /// The channel.
        channel: String,
        /// Only this kind.
        #[arg(long, value_parser = ["summary", "decision", "fact", "preference", "artifact_ref"])]
        kind: Option<String>,
        /// Superseded and forgotten records too.
        #[arg(long)]
        all: bool,
        /// Only this thread's.
        #[arg(long, value_name = "ID")]
        thread: Option<String>,
        /// At most this many records, pinned first, then newest first (1 to 500).
        #[arg(long, default_value_t = MEMORY_PAGE)]
        limit: usize,
        /// The next page: the records listed after this one (the last
        /// record of the page before).
        #[arg(long, value_name = "MEMORY_ID")]
        before: Option<String>,
    },
    /// Add a record by hand.
    Add {
        /// The channel.
        channel: String,
        /// Its kind.
        #[arg(long, value_parser = ["decision", "fact", "preference", "artifact_ref"])]
        kind: String,
        /// Its text.
        text: String,
        /// The thread it belongs to.
        #[arg(long, value_name = "ID")]
        thread: Option<String>,
        /// Share it with every channel of the workspace.
        #[arg(long)]
        workspace: bool,
    },
    /// Replace a record's text (the old one is kept as superseded).
    Edit {
        /// The record's id.
        id: String,
        /// The new text.
        text: String,
    },
    /// Forget a record: kept for provenance (with who forgot it), never
    /// recalled. Its author and the channel's managers may.
    Forget {
        /// The record's id.
        id: String,
    },
    /// Restore a forgotten record: current and recalled again.
    Restore {
        /// The record's id.
        id: String,
    },
    /// Pin a record so the agent always sees it (--off to unpin).
    Pin {
        /// The record's id.
        id: String,
        /// Unpin instead.
        #[arg(long)]
        off: bool,
    },
}

#[derive(Debug, Args)]
pub struct RecallArgs {
    /// The channel.
    pub channel: String,
    /// The question.
    pub query: String,
    /// How many hits (1 to 50).
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Include superseded records.
    #[arg(long)]
    pub superseded: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The channel.
    pub channel: String,
    /// The JSON Lines file (`-` for standard input).
    pub file: String,
    /// Do not embed the imported items for meaning-based recall now (the
    /// server, or the next recall, does it later).
    #[arg(long = "no-embed")]
    pub no_embed: bool,
}

#[derive(Debug, Subcommand)]
pub enum ProviderCommand {
    /// Add a provider (a name already registered is refused unless --replace)
    Add {
        /// A name for it, used by model policies.
        name: String,
        /// Its wire format.
        #[arg(long, value_parser = ["openai", "anthropic"])]
        kind: String,
        /// Its base URL as its own clients take it, e.g. https://api.openai.com/v1 or
        /// http://localhost:11434/v1 (Ollama).
        #[arg(long = "base-url", value_name = "URL")]
        base_url: String,
        /// The environment variable holding its API key (the key itself is never stored).
        #[arg(long = "api-key-env", value_name = "VAR")]
        api_key_env: Option<String>,
        /// Its default model.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// An extra HTTP header, NAME=VALUE (repeatable).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// Make it the workspace's default model.
        #[arg(long)]
        default: bool,
        /// Replace the provider of that name (its address, key, model and headers); the
        /// channels it serves use the new settings from their next turn.
        #[arg(long)]
        replace: bool,
    },
    /// List providers (without secrets).
    List,
    /// Ask a provider now what it serves: its models, or why it does not
    /// answer (exit 8).
    Check {
        /// The provider's name.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a person to the workspace.
    Add {
        /// Their user name.
        name: String,
        /// Their role.
        #[arg(long, default_value = "member", value_parser = ["member", "admin"])]
        role: String,
        /// The environment variable holding a first password for them
        /// (people usually join by invitation instead).
        #[arg(long = "password-env", value_name = "VAR")]
        password_env: Option<String>,
    },
    /// List people (deactivated ones marked so).
    List,
    /// Make a person an admin or a member (the Captain only).
    SetRole {
        /// Their user name.
        name: String,
        /// The new role.
        #[arg(value_parser = ["member", "admin"])]
        role: String,
    },
    /// Deactivate a person: they cannot sign in, and their sessions and API
    /// tokens stop working at once; what they wrote stays.
    Deactivate {
        /// Their user name.
        name: String,
    },
    /// Reactivate a deactivated person.
    Reactivate {
        /// Their user name.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct SayArgs {
    /// The channel.
    pub channel: String,
    /// The message; mention the agent (e.g. @launch-agent) to wake it.
    pub text: String,
    /// Continue this thread instead of starting a new one.
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,
    /// Post and return at once, leaving the turn to the process that drives
    /// turns (a running server), instead of running and streaming it here.
    #[arg(long = "no-wait")]
    pub no_wait: bool,
}

/// `1helm note CHANNEL [TEXT]`: the web UI's Quick Note, from a shell.
#[derive(Debug, Args)]
pub struct NoteArgs {
    /// The channel.
    pub channel: String,
    /// The note's Markdown; `-` or nothing reads it from standard input.
    pub text: Option<String>,
    /// A title: the note's first line (`# title`) and its file name.
    #[arg(long)]
    pub title: Option<String>,
}

/// How many threads `thread list` shows unless told.
pub const THREAD_PAGE: usize = 50;

/// How many messages `thread show` prints unless asked.
pub const MESSAGE_PAGE: usize = 100;

/// How many records `memory list` shows unless asked.
pub const MEMORY_PAGE: usize = 100;

/// How many tool actions `activity` shows unless asked.
pub const ACTIVITY_PAGE: usize = 100;

#[derive(Debug, Subcommand)]
pub enum ThreadCommand {
    /// A channel's threads, most recently active first, a page at a time.
    List {
        /// The channel.
        channel: String,
        /// How many.
        #[arg(long, default_value_t = THREAD_PAGE)]
        limit: usize,
        /// Only threads whose title, summary or messages hold these words,
        /// best match first.
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        /// Only archived threads.
        #[arg(long, conflicts_with = "hide_archived")]
        archived: bool,
        /// All but archived threads.
        #[arg(long)]
        hide_archived: bool,
        /// The next page: the threads last active before this one (the
        /// last thread of the page before).
        #[arg(long, value_name = "THREAD_ID", conflicts_with = "search")]
        before: Option<String>,
    },
    /// A thread's transcript and turns: its newest messages, a page at a
    /// time.
    Show {
        /// The thread id.
        id: String,
        /// How many messages, the newest (1 to 500).
        #[arg(long, default_value_t = MESSAGE_PAGE, conflicts_with = "all")]
        limit: usize,
        /// The next page back: the messages just before this one (the
        /// first message of the page after).
        #[arg(long, value_name = "MESSAGE_ID", conflicts_with = "all")]
        before: Option<String>,
        /// Every message, however many.
        #[arg(long)]
        all: bool,
    },
    /// Mark a thread resolved (a new message reopens it) and summarise it.
    Resolve {
        /// The thread id.
        id: String,
        /// Do not write the session summary now.
        #[arg(long = "no-summary")]
        no_summary: bool,
    },
    /// Run a thread's failed last turn again and stream it, as say does.
    Retry {
        /// The thread id.
        id: String,
        /// Queue it and return at once, leaving it to the process that
        /// drives turns (a running server).
        #[arg(long = "no-wait")]
        no_wait: bool,
    },
    /// Give a thread a new title (one line, 1 to 200 characters).
    Rename {
        /// The thread id.
        id: String,
        /// The new title.
        title: String,
    },
    /// Archive a thread: kept, but listed apart (`thread list --archived`)
    /// until it is reopened.
    Archive {
        /// The thread id.
        id: String,
    },
    /// Reopen a resolved, failed or archived thread.
    Reopen {
        /// The thread id.
        id: String,
    },
    /// Write the thread's session summary now (goal, work, result, open
    /// items, decisions), with the model that serves it.
    Summarize {
        /// The thread id.
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct ActivityArgs {
    /// The channel.
    pub channel: String,
    /// Only this thread.
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,
    /// How many of the most recent actions (1 to 500).
    #[arg(long, default_value_t = ACTIVITY_PAGE)]
    pub limit: usize,
    /// The next page back: the actions older than this one (the first
    /// action of the page after).
    #[arg(long, value_name = "ACTION_ID")]
    pub before: Option<String>,
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
        /// What the channel is all about (required: its agent works from it).
        #[arg(long, default_value = "", hide_default_value = true)]
        purpose: String,
        /// Only members can see it.
        #[arg(long)]
        private: bool,
        /// The configured computer its agent works on (one that `1helm
        /// status` lists); default: the workspace's. Chosen once.
        #[arg(long, value_name = "NAME")]
        computer: Option<String>,
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
    /// Archive a channel: its agent pauses and its work stops (queued turns
    /// are cancelled, the running one is stopped); everything is kept.
    Archive {
        /// The channel.
        channel: String,
    },
    /// Restore an archived channel with the same agent world.
    Restore {
        /// The channel.
        channel: String,
    },
    /// Rename a channel; its agent, handle, files, memory and history stay.
    Rename {
        /// The channel.
        channel: String,
        /// Its new name (free among live channels).
        name: String,
    },
    /// Choose the model that serves this channel's agent from now on.
    SetModel {
        /// The channel.
        channel: String,
        /// The provider's name.
        #[arg(long, required_unless_present = "inherit")]
        provider: Option<String>,
        /// The model (default: the provider's default model).
        #[arg(long)]
        model: Option<String>,
        /// Clear the override and inherit the workspace default.
        #[arg(long, conflicts_with_all = ["provider", "model"])]
        inherit: bool,
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

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: Option<McpCommand>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve this workspace over stdio as an MCP server (the default): an
    /// MCP client lists channels, talks to their agents, reads threads and
    /// files, and recalls memory, as the person the command runs as.
    Serve,
    /// A channel's MCP servers and their tools.
    List {
        /// The channel.
        channel: String,
    },
    /// Add an MCP server to a channel (or replace the one with that name):
    /// a stdio program after `--`, run inside the channel's computer, or an
    /// HTTP server with --url.
    Add {
        /// The channel.
        channel: String,
        /// The server's name: its tools appear as mcp__NAME__TOOL.
        name: String,
        /// A streamable-HTTP server's endpoint.
        #[arg(long)]
        url: Option<String>,
        /// A header for an HTTP server: NAME=VALUE, or NAME=secret:VAR to
        /// send the server's $VAR (NAME="Bearer {secret}"=secret:VAR for a
        /// template).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// An environment variable for a stdio server: NAME=VALUE or NAME=secret:VAR.
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// Only these tools (names or * globs).
        #[arg(long)]
        allow: Vec<String>,
        /// Never these tools (applied last).
        #[arg(long)]
        deny: Vec<String>,
        /// Ask before every call of its tools.
        #[arg(long)]
        ask: bool,
        /// The stdio program and its arguments.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Remove a channel's MCP server.
    Remove {
        /// The channel.
        channel: String,
        /// The server.
        name: String,
    },
    /// Approve the current definitions of a server's tools (all, or --tool).
    Approve {
        /// The channel.
        channel: String,
        /// The server.
        name: String,
        /// Only this tool (repeatable).
        #[arg(long = "tool")]
        tools: Vec<String>,
    },
}
