//! `helm-http`: serve a Helm workspace.
//!
//! On first start it initialises the data directory (workspace, Captain,
//! `#main`, Skipper), so one command takes a fresh machine to a running
//! server; the Captain then completes setup at `POST /api/setup`. While it
//! runs, the server holds its data directory (see `helm_core::lock`): it
//! alone drives turns and publishes events there.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use helm_core::config::ConfigLayer;
use helm_core::lock::{DataLock, ServerInfo};
use helm_core::memory::config::RecallMode;
use helm_core::model::ChannelRef;
use helm_core::{Helm, HelmConfig, HelmOptions, InitOptions};
use helm_http::{AppState, ServerConfig};

/// Serve a Helm workspace over HTTP. The flags may come before or after a
/// subcommand (`helm-http computer --data DIR`, as the docs write it).
#[derive(Debug, Parser)]
#[command(name = "helm-http", version)]
struct Args {
    /// The data directory (created on first start); also `HELM_DATA`.
    #[arg(global = true, long, value_name = "DIR")]
    data: Option<PathBuf>,

    /// The address to listen on; also `HELM_LISTEN`. Default 127.0.0.1:7400.
    #[arg(global = true, long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,

    /// The config file (TOML); default `<data>/helm.toml` when it exists.
    #[arg(global = true, long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// The URL people reach the server at; also `HELM_PUBLIC_URL`.
    #[arg(global = true, long = "public-url", value_name = "URL")]
    public_url: Option<String>,

    /// Where the other nodes sharing this server's store reach it (its own
    /// address); also `HELM_NODE_URL`. Default `http://<listen>`.
    #[arg(global = true, long = "node-url", value_name = "URL")]
    node_url: Option<String>,

    /// How channel computers are isolated: bubblewrap (required: refuse to
    /// start without it), process, or auto; also `HELM_ISOLATION` and
    /// `[computer] isolation` in the config file.
    #[arg(global = true, long, value_name = "MODE")]
    isolation: Option<helm_core::exec::IsolationChoice>,

    /// The first-run setup code to use instead of a random one (for
    /// automation); also `HELM_SETUP_CODE`.
    #[arg(global = true, long = "setup-code", value_name = "CODE")]
    setup_code: Option<String>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the OpenAPI document and exit.
    Openapi,
    /// Serve this host as a computer for other Helm servers' channels: the
    /// Open Terminal protocol at the root, for one computer in the data
    /// directory, sandboxed as a channel's; its key in HELM_COMPUTER_KEY
    /// (or the variable `[computer] key_env` names). Point their
    /// `[computer] at` (or a `[computers.NAME]`) here.
    Computer,
}

/// The channel a computer server serves (its workspace is the computer's
/// `/workspace`).
const COMPUTER_CHANNEL: &str = "computer";

/// Flags over env over the file over defaults: the server's own keys here,
/// core's by core's resolver, with the flags mapped onto core's keys.
fn resolve(args: &Args) -> anyhow::Result<ServerConfig> {
    let env = |k: &str| std::env::var(k).ok();
    let file = match &args.config {
        Some(path) => Some(path.clone()),
        None => {
            let data = args
                .data
                .clone()
                .or_else(|| env("HELM_DATA").map(PathBuf::from))
                .unwrap_or_else(|| ServerConfig::default().data);
            Some(data.join("helm.toml")).filter(|f| f.is_file())
        }
    };
    let (mut config, file_layer) = match &file {
        Some(path) => (ServerConfig::from_file(path)?, ConfigLayer::file(path)?),
        None => (ServerConfig::default(), ConfigLayer::new()),
    };
    config.apply_env(env)?;
    if let Some(data) = &args.data {
        config.data = data.clone();
    }
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(url) = &args.public_url {
        config.public_url = Some(url.clone());
    }
    if let Some(url) = &args.node_url {
        config.node_url = Some(url.clone());
    }
    if let Some(code) = &args.setup_code {
        config.setup_code = Some(code.clone());
    }
    let mut flags = ConfigLayer::new();
    if let Some(isolation) = args.isolation {
        flags.set_flag("computer.isolation", isolation)?;
    }
    let core = HelmConfig::resolve([file_layer, ConfigLayer::process_env()?, flags])?;
    config.set_core(core)?;
    Ok(config)
}

fn init_logging(config: &ServerConfig) {
    let filter = tracing_subscriber::EnvFilter::new(&config.log);
    // Logs go to stderr (docs/operations.md): stdout is for what a command
    // prints, such as `helm-http openapi`.
    if config.log_json {
        tracing_subscriber::fmt()
            .json()
            .with_writer(std::io::stderr)
            .with_env_filter(filter)
            .init();
    } else {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(filter)
            .init();
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(Command::Openapi) = args.command {
        println!("{}", helm_http::openapi_json());
        return Ok(());
    }
    helm_http::prepare_heap();
    let mut config = resolve(&args)?;
    init_logging(&config);
    match helm_core::exec::raise_open_files_limit() {
        Ok(limit) => tracing::debug!(limit, "open files"),
        Err(e) => tracing::warn!(error = %e, "could not raise the open files limit"),
    }

    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let bound = listener.local_addr()?;
    config.listen = bound;
    let data = std::path::absolute(&config.data)
        .with_context(|| format!("resolving {}", config.data.display()))?;
    let _lock = DataLock::server(
        &data,
        &ServerInfo {
            url: config.public_url(),
            pid: std::process::id(),
            started: jiff::Timestamp::now(),
        },
        Duration::from_secs(10),
    )?;
    let mut options = HelmOptions::new(&data);
    config.core.apply(&mut options)?;
    let shared = matches!(
        options.store,
        Some(helm_core::config::StoreUrl::Postgres(_))
    );
    let computer_key = match &args.command {
        Some(Command::Computer) => Some(computer_key(&config, &options, shared)?),
        _ => None,
    };
    // Other nodes of a shared store reach the computers this one holds
    // through its Open Terminal endpoint, and pass on people's requests for
    // the terminals it keeps to its address.
    options.node.url = config.node_url();
    options.node.computer_url = options
        .node
        .url
        .as_ref()
        .map(|url| format!("{url}/api/channels/{{channel}}/ot"));
    if shared && config.node_url.is_none() && config.listen.ip().is_loopback() {
        tracing::warn!(
            listen = %config.listen,
            "this node's address for the other nodes is a loopback one: only nodes on this host \
             reach the channel computers it holds; set node_url (HELM_NODE_URL, --node-url) \
             when they run on other hosts"
        );
    }
    if options.node.computer_url.is_none() && shared {
        tracing::warn!(
            listen = %config.listen,
            "this node listens on every address and has no node URL: other nodes sharing the \
             store cannot reach the channel computers it holds; set node_url (HELM_NODE_URL, \
             --node-url) to the address they reach it at"
        );
    }
    if computer_key.is_none() {
        options
            .load_local_embedder()
            .context("loading the embedding model for recall by meaning")?;
    }
    match RecallMode::of(options.embedder.as_ref(), options.words_only_reason) {
        RecallMode::Meaning { model } => {
            tracing::info!(model = %model, "recall works by meaning and words")
        }
        mode @ RecallMode::Words { .. } => tracing::warn!(
            "recall works {}; to recall by meaning, {} (or set [memory] embedder = \"required\" \
             to refuse to start without it)",
            mode.describe(),
            helm_core::memory::embed::FETCH_HINT
        ),
    }
    let (helm, report) = Helm::init(options, InitOptions::default())
        .await
        .with_context(|| format!("opening {}", data.display()))?;
    if report.created {
        tracing::info!(data = %data.display(), "initialised a new workspace");
    }
    // The channel computers' isolation is settled now, not at first use:
    // a deployment that requires bubblewrap must not start without it, and
    // one that falls back must say so at once.
    let isolation = helm.isolation().await.map_err(|e| {
        anyhow::anyhow!(
            "{e}\nchannel computers were configured to need bubblewrap (isolation = \
             \"bubblewrap\"); install the Debian package `bubblewrap` (apt-get install \
             bubblewrap), or choose isolation \"auto\" or \"process\" knowingly"
        )
    })?;
    tracing::info!(%isolation, "channel computers are isolated");
    // Nothing an earlier server on this data root started and lost (an
    // interrupted turn's command, a terminal) may still run; what other
    // data roots and servers on the host run is theirs.
    helm.kill_leftover_commands().await?;
    if isolation == helm_core::exec::Isolation::Process {
        tracing::warn!(
            "channel computers run with PROCESS isolation, which is weaker than bubblewrap; \
             /api/status shows the mode in use"
        );
    }
    let state = AppState::new(helm.clone(), config.clone());
    if let Some(key) = computer_key {
        let served = helm.serve_computer(COMPUTER_CHANNEL, &key).await?;
        tracing::info!(
            addr = %bound,
            workspace = %helm.computer(&ChannelRef::Id(served.channel.id)).await?.workspace.display(),
            "serving this host's computer over Open Terminal"
        );
        let served = helm_http::serve_computer(
            listener,
            state,
            COMPUTER_CHANNEL.to_string(),
            shutdown_signal(),
        )
        .await;
        tracing::info!("stopped");
        served?;
        return Ok(());
    }
    if helm.setup_needed().await? {
        let path = helm_http::setup::write_code(&data, &state.setup_code)
            .with_context(|| format!("writing the setup code into {}", data.display()))?;
        tracing::warn!(
            url = %config.public_url(),
            code_file = %path.display(),
            "setup is not done: create the Captain's account with POST /api/setup and the setup code"
        );
        // The one thing printed for people: the code, where the log may not go.
        eprintln!(
            "\nHelm setup code: {}\n(also in {}; it is needed once, to create the Captain's account)\n",
            state.setup_code,
            path.display()
        );
    }
    helm.start_runtime().await?;
    // Recall's vectors are read while the server already answers.
    let preloading = helm.clone();
    tokio::spawn(async move {
        match preloading.preload_recall().await {
            Ok(0) => {}
            Ok(channels) => tracing::info!(channels, "recall's vectors read into memory"),
            Err(e) => tracing::warn!(error = %e, "reading recall's vectors ahead failed"),
        }
    });
    tracing::info!(
        addr = %bound,
        url = %config.public_url(),
        workspace = %helm.workspace().name,
        "serving"
    );
    let served = helm_http::serve(listener, state, shutdown_signal()).await;
    // Turns still running end `cancelled` with a visible note; nothing that
    // was committed is lost.
    helm.shutdown_runtime(false).await;
    tracing::info!("stopped");
    served?;
    Ok(())
}

/// A computer server's key, from the variable `[computer] key_env` names
/// (`HELM_COMPUTER_KEY`); refused when its configuration would send its
/// commands elsewhere or keep its state in a shared store.
fn computer_key(
    config: &ServerConfig,
    options: &HelmOptions,
    shared: bool,
) -> anyhow::Result<String> {
    if options.computers.default.is_some() || !options.computers.named.is_empty() {
        anyhow::bail!(
            "a computer server runs its commands on this host: remove [computer] at and \
             [computers.*] from its configuration"
        );
    }
    if shared {
        anyhow::bail!(
            "a computer server keeps its state in its own data directory: leave the store unset"
        );
    }
    let var = helm_core::config::key_variable(config.core.config.computer.key_env.as_deref());
    match std::env::var(&var) {
        Ok(key) if !key.trim().is_empty() => Ok(key.trim().to_string()),
        _ => anyhow::bail!(
            "{var} is not set: set it to the key the Helm servers that use this computer will \
             present (at least 16 random characters, such as the output of openssl rand -hex 32)"
        ),
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
