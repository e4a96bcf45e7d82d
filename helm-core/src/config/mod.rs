//! `HelmConfig`: the configuration core resolves, whichever frontend runs it.
//!
//! It is one serde type (a TOML file's tables map onto it), resolved here,
//! in core, from layers ([`layers`]): defaults < config file < `HELM_*`
//! environment variables < the frontend's command line. Frontends only map
//! their flags onto a [`ConfigLayer`] and call [`HelmConfig::resolve`], so
//! the CLI, the server and an embedding application mean the same thing by
//! the same setting; [`ResolvedConfig::apply`] then fills [`HelmOptions`].
//!
//! ```toml
//! store = "sqlite://helm.db"  # or postgres://user@host/db; HELM_STORE
//! fallback_model = "anthropic/claude-sonnet-4"  # HELM_FALLBACK_MODEL
//!
//! [computer]
//! isolation = "bubblewrap"   # or "process", or "auto"; HELM_ISOLATION
//! at = "local"               # or a computer server's URL, `{channel}` for one per channel; HELM_COMPUTER
//! key_env = "HELM_COMPUTER_KEY"  # the variable holding a remote computer's key
//!
//! [computers.gpu]            # a computer a channel may choose when it is made
//! at = "https://gpu.internal:8000"
//! key_env = "HELM_GPU_KEY"
//!
//! [runtime]
//! max_steps = 16             # model calls in one turn; HELM_MAX_STEPS
//! capacity_per_agent = 3     # threads one agent works on at once; HELM_AGENT_CAPACITY
//! turn_lease_secs = 30       # a shared store: a dead node's turns are taken over after this; HELM_TURN_LEASE_SECS
//!
//! [replies]
//! max_tokens = 8192          # sent to the provider with every call
//! max_reply_bytes = 1048576  # a longer reply is cut and the turn says so
//!
//! [memory]
//! embedder = "auto"          # or "required" (refuse to start without it), or "off"
//! vector_cache_mb = 256      # searched channels' vectors kept in memory; HELM_VECTOR_CACHE_MB
//! read_map_mb = 0            # MiB of an SQLite store each reader maps, for faster reads; HELM_READ_MAP_MB
//!
//! public_origins = ["https://helm.example.org"]
//! ```

pub mod layers;
mod store_url;

use serde::{Deserialize, Serialize};

pub use layers::{ConfigLayer, ConfigSource, ENV_VARS, FILE_KEYS, ResolvedConfig};
pub use store_url::{BadStoreUrl, StoreUrl};

use crate::error::{Error, Result};
use crate::exec::{ComputerServer, IsolationChoice};
use crate::helm::{ComputerPlacement, HelmOptions};
use crate::memory::config::MemoryConfig;
use crate::model::ModelChoice;

/// The variable a remote computer's key is read from unless
/// `computer.key_env` names another.
pub const DEFAULT_COMPUTER_KEY_ENV: &str = "HELM_COMPUTER_KEY";

/// The variable a computer's key is read from: `key_env` if set, else
/// [`DEFAULT_COMPUTER_KEY_ENV`].
pub fn key_variable(key_env: Option<&str>) -> String {
    key_env.unwrap_or(DEFAULT_COMPUTER_KEY_ENV).to_string()
}

/// Everything core is configured with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HelmConfig {
    /// Where the workspace's state is kept; `None`: `helm.db` in the data
    /// directory.
    pub store: Option<StoreUrl>,
    /// Channel computers.
    pub computer: ComputerConfig,
    /// Computers a channel may choose when it is made, by name.
    pub computers: std::collections::BTreeMap<String, NamedComputerConfig>,
    /// Tunables of the turn engine.
    pub runtime: RuntimeConfig,
    /// Bounds on what one model call may produce.
    pub replies: ReplyLimits,
    /// Memory: whether recall by meaning is required, used when found, or off.
    pub memory: MemoryConfig,
    /// The model used when no session, channel or workspace choice is set:
    /// `provider` or `provider/model`.
    pub fallback_model: Option<String>,
    /// The origins (`scheme://host[:port]`) people reach the workspace at.
    /// Empty: loopback names only (a frontend adds its own port). A server
    /// answers only for these hosts, and a browser page from anywhere else
    /// cannot use a signed-in person's cookie.
    pub public_origins: Vec<String>,
}

/// `[computer]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ComputerConfig {
    /// `bubblewrap` (required: refuse to start without a working `bwrap`),
    /// `process` (the weaker mode), or `auto` (bubblewrap if it works here,
    /// else process with a loud warning).
    pub isolation: IsolationChoice,
    /// Where channel computers run: `local` (or unset), or the URL of a
    /// computer server on another host.
    pub at: Option<String>,
    /// The environment variable holding a remote computer's key (default
    /// [`DEFAULT_COMPUTER_KEY_ENV`]); the key itself is never in a file.
    pub key_env: Option<String>,
}

/// `[computers.<name>]`: a computer server a channel may choose by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NamedComputerConfig {
    /// The computer server's URL, `{channel}` for one server per channel.
    pub at: String,
    /// The environment variable holding its key (default
    /// [`DEFAULT_COMPUTER_KEY_ENV`]).
    pub key_env: Option<String>,
}

/// A computer's name as a channel chooses it: 1 to 32 lowercase letters,
/// digits and `-`, starting with a letter.
fn valid_computer_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Where channel computers run, as [`ComputerConfig::location`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComputerLocation {
    /// On this host.
    Local,
    /// On a computer server at `url`, authenticated with the key in the
    /// environment variable `key_env`.
    Remote {
        /// The computer server's URL.
        url: String,
        /// The variable holding its key.
        key_env: String,
    },
}

impl ComputerConfig {
    /// Where channel computers run; an `at` that is neither `local` nor an
    /// http(s) URL is refused with the reason.
    pub fn location(&self) -> std::result::Result<ComputerLocation, String> {
        match self.at.as_deref().map(str::trim) {
            None | Some("local") => Ok(ComputerLocation::Local),
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(ComputerLocation::Remote {
                    url: url.to_string(),
                    key_env: key_variable(self.key_env.as_deref()),
                })
            }
            Some(other) => Err(format!(
                "{other:?}: use \"local\" or a computer server's http(s):// URL"
            )),
        }
    }
}

/// `[runtime]`: tunables of the turn engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeConfig {
    /// The most model calls in one turn.
    pub max_steps: u32,
    /// How many threads one agent works on at once.
    pub capacity_per_agent: u32,
    /// With a store several nodes share: how long a node's claim on a
    /// running turn lasts unrenewed, so how soon a dead node's turns end
    /// interrupted and the turns queued behind them start on another node.
    pub turn_lease_secs: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        let defaults = crate::runtime::RuntimeOptions::default();
        RuntimeConfig {
            max_steps: defaults.max_steps,
            capacity_per_agent: defaults.capacity_per_agent,
            turn_lease_secs: defaults.turn_lease.as_secs(),
        }
    }
}

/// `[replies]`: bounds on a model's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplyLimits {
    /// The output token limit sent to the provider with every call.
    pub max_tokens: u32,
    /// The most bytes of text one model call may stream into a reply; the
    /// rest is dropped, the stream closed, and the turn ends with a note.
    pub max_reply_bytes: usize,
}

impl Default for ReplyLimits {
    fn default() -> Self {
        ReplyLimits {
            max_tokens: 8192,
            max_reply_bytes: 1024 * 1024,
        }
    }
}

impl HelmConfig {
    /// The defaults with the `HELM_*` variables of this process applied.
    pub fn from_env() -> Result<Self> {
        Ok(Self::resolve([ConfigLayer::process_env()?])?.config)
    }

    /// Checks the values make sense together.
    pub fn validate(&self) -> Result<()> {
        self.check()
            .map_err(|(key, reason)| Error::invalid(key, reason))
    }

    /// The first value that makes no sense: its dotted key and why.
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if self.replies.max_tokens == 0 {
            return Err(("replies.max_tokens", "it must be at least 1".into()));
        }
        if self.replies.max_reply_bytes < 1024 {
            return Err((
                "replies.max_reply_bytes",
                "it must be at least 1024 bytes".into(),
            ));
        }
        if self.runtime.max_steps == 0 {
            return Err(("runtime.max_steps", "it must be at least 1".into()));
        }
        if self.runtime.capacity_per_agent == 0 {
            return Err(("runtime.capacity_per_agent", "it must be at least 1".into()));
        }
        if !(2..=3600).contains(&self.runtime.turn_lease_secs) {
            return Err((
                "runtime.turn_lease_secs",
                "it must be between 2 and 3600 seconds (a node renews its leases every second)"
                    .into(),
            ));
        }
        if self.memory.vector_cache_mb == 0 {
            return Err((
                "memory.vector_cache_mb",
                "it must be at least 1 (MiB of vectors kept in memory)".into(),
            ));
        }
        for origin in &self.public_origins {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err((
                    "public_origins",
                    format!("{origin:?} must start with http:// or https://"),
                ));
            }
        }
        self.computer.location().map_err(|e| ("computer.at", e))?;
        if let Some(model) = &self.fallback_model {
            parse_model(model).map_err(|e| ("fallback_model", e))?;
        }
        Ok(())
    }

    /// The fallback model, parsed.
    pub fn fallback_model(&self) -> Option<ModelChoice> {
        self.fallback_model
            .as_deref()
            .and_then(|m| parse_model(m).ok())
    }
}

/// `provider` or `provider/model`.
fn parse_model(text: &str) -> std::result::Result<ModelChoice, String> {
    let (provider, model) = match text.trim().split_once('/') {
        Some((provider, model)) => (provider.trim(), Some(model.trim().to_string())),
        None => (text.trim(), None),
    };
    if provider.is_empty() || model.as_deref() == Some("") {
        return Err(format!("{text:?}: write provider or provider/model"));
    }
    Ok(ModelChoice::new(provider, model))
}

impl ResolvedConfig {
    /// A computer server of the table `table` (`computer`, or
    /// `computers.<name>`), its key read from the variable `key_env`.
    fn server(&self, table: &str, url: &str, key_env: &str) -> Result<ComputerServer> {
        let key = std::env::var(key_env).unwrap_or_default();
        if key.trim().is_empty() {
            return Err(self.error(
                &format!("{table}.key_env"),
                format!(
                    "{key_env}, which holds the key of the computer at {url}, is not set; set \
                     it to the key that computer server was started with"
                ),
            ));
        }
        ComputerServer::new(url, &key)
            .map_err(|e| self.error(&format!("{table}.at"), e.to_string()))
    }

    /// Puts the settings into `options`: where computers run
    /// ([`HelmOptions::computers`]: `computer.at` and `[computers.<name>]`,
    /// each key read from its `key_env`), the store, the turn engine's
    /// tunables, memory and the fallback model.
    /// Refuses what this build cannot run (a Postgres store in a build
    /// without the `postgres` feature), naming where it was chosen.
    pub fn apply(&self, options: &mut HelmOptions) -> Result<()> {
        let config = &self.config;
        #[cfg(not(feature = "postgres"))]
        if let Some(url @ StoreUrl::Postgres(_)) = &config.store {
            return Err(Error::NotBuiltIn(format!(
                "Postgres store (store = {url}, set by {}): this build was made without the \
                 `postgres` feature; use sqlite://PATH, or leave store unset for the data \
                 directory's helm.db",
                self.source_of("store")
            )));
        }
        let default = match config.computer.location() {
            Ok(ComputerLocation::Local) => None,
            Ok(ComputerLocation::Remote { url, key_env }) => {
                Some(self.server("computer", &url, &key_env)?)
            }
            Err(reason) => return Err(self.error("computer.at", reason)),
        };
        let mut named = std::collections::BTreeMap::new();
        for (name, computer) in &config.computers {
            let table = format!("computers.{name}");
            if !valid_computer_name(name) {
                return Err(self.error(
                    &table,
                    format!(
                        "{name:?} is not a computer name: use 1 to 32 lowercase letters, digits \
                         and -, starting with a letter"
                    ),
                ));
            }
            let key_env = key_variable(computer.key_env.as_deref());
            named.insert(name.clone(), self.server(&table, &computer.at, &key_env)?);
        }
        options.computers = ComputerPlacement { default, named };
        options.store = config.store.clone();
        options.computer.isolation = config.computer.isolation;
        options.runtime.max_steps = config.runtime.max_steps;
        options.runtime.capacity_per_agent = config.runtime.capacity_per_agent;
        options.runtime.turn_lease = std::time::Duration::from_secs(config.runtime.turn_lease_secs);
        options.runtime.max_tokens = config.replies.max_tokens;
        options.runtime.max_reply_bytes = config.replies.max_reply_bytes;
        options.memory = config.memory;
        if let Some(model) = config.fallback_model() {
            options.fallback_model = Some(model);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
