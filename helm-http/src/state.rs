//! What every handler can reach.

use std::sync::Arc;

use helm_core::Helm;
use tokio_util::sync::CancellationToken;

use crate::commands::{CommandLimits, CommandRegistry};
use crate::config::ServerConfig;
use crate::limiter::LoginLimiter;
use crate::metrics::Metrics;

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
    /// Answers of `/v1/chat/completions` by idempotency key.
    pub idempotency: Arc<crate::openai::IdempotencyCache>,
}

impl AppState {
    /// State for serving `helm` with `config`.
    pub fn new(helm: Helm, config: ServerConfig) -> Self {
        let commands = Arc::new(CommandRegistry::new(CommandLimits {
            per_channel: config.ot_commands_per_channel,
            ttl: std::time::Duration::from_secs(config.ot_command_ttl_secs),
            output_bytes: config.ot_output_bytes,
        }));
        AppState {
            commands,
            limiter: Arc::new(LoginLimiter::new(
                config.login_per_ip,
                config.login_per_account,
            )),
            helm,
            config: Arc::new(config),
            metrics: Arc::new(Metrics::default()),
            shutdown: CancellationToken::new(),
            idempotency: Arc::default(),
        }
    }
}
