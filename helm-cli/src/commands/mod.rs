//! One module per command group; each turns parsed flags into `helm-core`
//! calls and renders the outcome.

mod activity;
mod channel;
mod exec;
mod files;
mod import;
mod init;
mod memory;
mod provider;
mod say;
mod status;
mod term;
mod thread;
mod user;

use anyhow::Result;
use helm_core::{Helm, HelmOptions, model::User};

use crate::cli::{Cli, Command, Global};
use crate::output::Output;

/// What every command needs: the global flags and the output.
pub struct Ctx {
    pub global: Global,
    pub out: Output,
}

impl Ctx {
    /// Opens the data directory (which must be initialised).
    pub async fn open(&self) -> Result<Helm> {
        let mut options = HelmOptions::new(&self.global.data);
        options.computer.isolation = self.global.isolation;
        Ok(Helm::open(options).await?)
    }

    /// Whether output is JSON.
    pub fn out_is_json(&self) -> bool {
        self.global.json
    }

    /// The acting user: `--as USER`, or the Captain.
    pub async fn actor(&self, helm: &Helm) -> Result<User> {
        Ok(match &self.global.as_user {
            Some(name) => helm.user(name).await?,
            None => helm.captain().await?,
        })
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
        Command::Exec(args) => exec::run(&ctx, args).await,
        Command::Term(args) => term::run(&ctx, args).await,
    }
}
