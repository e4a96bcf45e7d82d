//! What every handler can reach.

use std::sync::Arc;

use helm_core::Helm;
use tokio_util::sync::CancellationToken;

use crate::commands::{CommandLimits, CommandRegistry};
use crate::config::ServerConfig;
use crate::limiter::LoginLimiter;
use crate::metrics::Metrics;
use crate::ui::UiAssets;

/// The application state: cheap to clone (a handle and a few `Arc`s).
#[derive(Clone)]
pub struct AppState {
    /// The workspace being served.
    pub helm: Helm,
    /// The server's configuration.
    pub config: Arc<ServerConfig>,
    /// Sign-in rate limits.
    pub limiter: Arc<LoginLimiter>,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Cancelled when the server shuts down, which ends live streams.
    pub shutdown: CancellationToken,
    /// Commands started by Open Terminal clients.
    pub commands: Arc<CommandRegistry>,
    /// The one-time code `POST /api/setup` needs.
    pub setup_code: Arc<String>,
    /// The `Host` values this server answers for.
    pub allowed_hosts: Arc<Vec<String>>,
    /// The origins whose pages may use a session cookie.
    pub trusted_origins: Arc<Vec<String>>,
    /// Answers of `/v1/chat/completions` by idempotency key.
    pub idempotency: Arc<crate::openai::IdempotencyCache>,
    /// The web UI's files.
    pub ui: Arc<UiAssets>,
    /// The client for requests passed on to other nodes, made at the first.
    pub node_http: Arc<tokio::sync::OnceCell<reqwest::Client>>,
    /// Bumped when a credential ends on this node (sign-out, a revoked API
    /// token or Open Terminal key, a new password): live sockets re-check
    /// their credential at once instead of at their next heartbeat.
    pub credentials: Arc<tokio::sync::watch::Sender<u64>>,
}

impl AppState {
    /// State for serving `helm` with `config`.
    pub fn new(helm: Helm, config: ServerConfig) -> Self {
        let commands = Arc::new(CommandRegistry::new(CommandLimits {
            per_channel: config.ot_commands_per_channel,
            ttl: std::time::Duration::from_secs(config.ot_command_ttl_secs),
            output_bytes: config.ot_output_bytes,
        }));
        let setup_code = config
            .setup_code
            .clone()
            .unwrap_or_else(crate::setup::new_code);
        let ui = match &config.ui_dir {
            Some(dir) => UiAssets::Dir(dir.clone()),
            None => UiAssets::builtin(),
        };
        AppState {
            commands,
            ui: Arc::new(ui),
            limiter: Arc::new(LoginLimiter::new(
                config.login_per_ip,
                config.login_per_account,
            )),
            helm,
            setup_code: Arc::new(setup_code),
            allowed_hosts: Arc::new(config.allowed_hosts()),
            trusted_origins: Arc::new(config.trusted_origins()),
            config: Arc::new(config),
            metrics: Arc::new(Metrics::default()),
            shutdown: CancellationToken::new(),
            idempotency: Arc::default(),
            node_http: Arc::default(),
            credentials: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }

    /// Tells live sockets that a credential ended (see `credentials`).
    pub fn credential_ended(&self) {
        self.credentials.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The same state for a server that listens on `addr`: without a public
    /// URL, the loopback origins it answers for carry that port.
    pub fn listening_on(&self, addr: std::net::SocketAddr) -> Self {
        if self.config.listen == addr {
            return self.clone();
        }
        let mut config = (*self.config).clone();
        config.listen = addr;
        AppState {
            allowed_hosts: Arc::new(config.allowed_hosts()),
            trusted_origins: Arc::new(config.trusted_origins()),
            config: Arc::new(config),
            ..self.clone()
        }
    }
}
