//! One module per command group; each turns parsed flags into `helm-core`
//! calls and renders the outcome.

mod activity;
mod authority;
mod channel;
mod exec;
mod files;
mod import;
mod init;
mod mcp;
mod memory;
mod note;
mod provider;
mod say;
mod status;
mod term;
mod thread;
mod user;

use anyhow::Result;

use crate::backend::{Backend, Local, Remote};
use crate::cli::{ApprovalsCommand, Cli, Command, EscalationsCommand, Global};
use crate::output::Output;

/// What every command needs: the global flags and the output.
pub struct Ctx {
    pub global: Global,
    pub out: Output,
}

impl Ctx {
    /// Where the command's work goes: the server named by `--server`, or
    /// the data directory (which must be initialised, and not held by a
    /// running server).
    pub async fn backend(&self) -> Result<Box<dyn Backend>> {
        match &self.global.server {
            Some(url) => {
                if self.global.as_user.is_some() {
                    return Err(helm_core::Error::invalid(
                        "--as",
                        "with --server the API token decides who acts; use that person's token",
                    )
                    .into());
                }
                Ok(Box::new(Remote::new(url, self.global.token.as_deref())?))
            }
            None => Ok(Box::new(
                Local::open_with(
                    &self.global.data,
                    self.global.as_user.as_deref(),
                    self.global.isolation,
                    self.global.embedder,
                )
                .await?,
            )),
        }
    }

    /// The data directory opened in this process, for the commands that
    /// work on a data directory only (`exec`, `term`).
    pub async fn local(&self, what: &str) -> Result<Local> {
        if self.global.server.is_some() {
            // While a server runs it holds the data directory, so --data is
            // no way around this.
            return Err(helm_core::Error::invalid(
                "--server",
                format!(
                    "`1helm {what}` through a server is not available yet; open a terminal in \
                     the channel's computer over the HTTP API (POST /api/channels/CHANNEL/terminals, \
                     as the web terminal does), or stop the server and use --data"
                ),
            )
            .into());
        }
        Local::open_with(
            &self.global.data,
            self.global.as_user.as_deref(),
            self.global.isolation,
            self.global.embedder,
        )
        .await
    }

    /// Whether output is JSON.
    pub fn out_is_json(&self) -> bool {
        self.global.json
    }
}

/// Runs the parsed command; returns the exit code.
pub async fn run(cli: Cli) -> Result<i32> {
    let ctx = Ctx {
        out: Output::new(cli.global.json),
        global: cli.global,
    };
    match cli.command {
        Command::Init(args) => init::run(&ctx, args).await,
        Command::Channel(cmd) => channel::run(&ctx, cmd).await,
        Command::Status => status::run(&ctx).await,
        Command::Provider(cmd) => provider::run(&ctx, cmd).await,
        Command::User(cmd) => user::run(&ctx, cmd).await,
        Command::Say(args) => say::run(&ctx, args).await,
        Command::Thread(cmd) => thread::run(&ctx, cmd).await,
        Command::Activity(args) => activity::run(&ctx, args).await,
        Command::Memory(cmd) => memory::run(&ctx, cmd).await,
        Command::Recall(args) => memory::recall(&ctx, args).await,
        Command::Import(args) => import::run(&ctx, args).await,
        Command::Files(cmd) => files::run(&ctx, cmd).await,
        Command::Note(args) => note::run(&ctx, args).await,
        Command::Exec(args) => exec::run(&ctx, args).await,
        Command::Term(args) => term::run(&ctx, args).await,
        Command::Approvals(args) => {
            let cmd = args
                .command
                .unwrap_or(ApprovalsCommand::List { all: false });
            authority::approvals(&ctx, cmd).await
        }
        Command::Approve(args) => authority::decide(&ctx, args, true).await,
        Command::Deny(args) => authority::decide(&ctx, args, false).await,
        Command::Escalations(args) => {
            let cmd = args
                .command
                .unwrap_or(EscalationsCommand::List { all: false });
            authority::escalations(&ctx, cmd).await
        }
        Command::Audit(args) => authority::audit(&ctx, args).await,
        Command::Mcp(args) => mcp::run(&ctx, args).await,
    }
}
