//! The server's configuration: a TOML file, then `HELM_*` environment
//! variables, then command-line flags, each overriding the one before.
//!
//! The file is `--config FILE`, or `<data>/helm.toml` when it exists. Every
//! key is optional; see `docs/operations.md` for the full list. Core's keys
//! in it (`store`, `[computer]`, `[runtime]`, `[replies]`, `[memory]`,
//! `fallback_model`) are resolved by core ([`helm_core::config`]); this
//! module reads the server's own and keeps core's result in
//! [`ServerConfig::core`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use helm_core::HelmConfig;
use helm_core::config::{FILE_KEYS, ResolvedConfig};
use serde::{Deserialize, Serialize};

/// How fast a login rate limit refills and how many attempts it allows at once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Attempts allowed at once.
    pub burst: u32,
    /// Attempts regained per minute.
    pub per_minute: u32,
}

/// Everything the server can be told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// The data directory.
    pub data: PathBuf,
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The URL people reach the server at (behind a proxy, its public URL);
    /// default `http://<listen>`. Used for invitation links, `server.json`
    /// and the allowed origin of browser requests.
    pub public_url: Option<String>,
    /// Where the other nodes sharing this server's store reach it (its own
    /// address, not a load balancer's): they reach the channel computers
    /// this node holds through it. Default `http://<listen>`, unless it
    /// listens on every address (then set it, or the others cannot).
    pub node_url: Option<String>,
    /// Mark session cookies `Secure`; default: when `public_url` is https.
    pub secure_cookies: Option<bool>,
    /// More origins whose pages may use a session cookie to change things.
    pub allowed_origins: Vec<String>,
    /// How long a session lasts, in hours.
    pub session_hours: u64,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The largest file upload accepted, in bytes.
    pub max_upload_bytes: usize,
    /// The largest file a download (or an Open Terminal read) returns, in bytes.
    pub max_download_bytes: usize,
    /// The largest history import accepted, in bytes.
    pub max_import_bytes: usize,
    /// Open Terminal commands kept per channel (running and finished).
    pub ot_commands_per_channel: usize,
    /// How long a finished Open Terminal command stays readable, in seconds.
    pub ot_command_ttl_secs: u64,
    /// Output kept per Open Terminal command, in bytes (older output is dropped).
    pub ot_output_bytes: usize,
    /// How many events may wait for one slow WebSocket client.
    pub ws_buffer: usize,
    /// How long a WebSocket client may leave its buffer full before it is
    /// told to resync and disconnected, in seconds.
    pub ws_stall_secs: u64,
    /// Sign-in attempts per client address.
    pub login_per_ip: RateLimit,
    /// Failed sign-ins per account.
    pub login_per_account: RateLimit,
    /// Log filter, such as `info` or `helm_http=debug,info`.
    pub log: String,
    /// Log as JSON lines instead of text.
    pub log_json: bool,
    /// The first-run setup code, preset (for automation); otherwise the
    /// server makes one at start, prints it and writes it to
    /// `<data>/setup-code` (0600).
    pub setup_code: Option<String>,
    /// How long a client may take to send a request's headers, in seconds.
    pub header_timeout_secs: u64,
    /// How long a client may take to send a request's body, in seconds.
    pub body_timeout_secs: u64,
    /// How long a kept-alive connection may stay idle between requests, in
    /// seconds.
    pub idle_timeout_secs: u64,
    /// Serve the web UI from this directory (a `npm run build` output)
    /// instead of the one built into the binary.
    pub ui_dir: Option<PathBuf>,
    /// What core resolved from the same file, the environment and the
    /// flags (store, computer, runtime, replies, memory, fallback model).
    #[serde(skip)]
    pub core: ResolvedConfig,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            data: PathBuf::from("helm-data"),
            listen: SocketAddr::from(([127, 0, 0, 1], 7400)),
            public_url: None,
            node_url: None,
            secure_cookies: None,
            allowed_origins: Vec::new(),
            session_hours: 24 * 30,
            max_body_bytes: 1024 * 1024,
            max_upload_bytes: 32 * 1024 * 1024,
            max_download_bytes: 64 * 1024 * 1024,
            max_import_bytes: 16 * 1024 * 1024,
            ot_commands_per_channel: 16,
            ot_command_ttl_secs: 300,
            ot_output_bytes: 1024 * 1024,
            ws_buffer: 512,
            ws_stall_secs: 30,
            login_per_ip: RateLimit {
                burst: 20,
                per_minute: 10,
            },
            login_per_account: RateLimit {
                burst: 5,
                per_minute: 1,
            },
            log: "info".to_string(),
            log_json: false,
            setup_code: None,
            header_timeout_secs: 10,
            body_timeout_secs: 60,
            idle_timeout_secs: 120,
            ui_dir: None,
            core: ResolvedConfig::default(),
        }
    }
}

/// What could not be read or understood.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl ServerConfig {
    /// Reads the server's keys of a TOML file (core reads its own).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read {}: {e}", path.display())))?;
        Self::from_toml(&text).map_err(|e| {
            ConfigError(format!(
                "{} is not a valid config file: {}",
                path.display(),
                e.0
            ))
        })
    }

    /// The server's keys of TOML text; core's keys are skipped here.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        table.retain(|key, _| !FILE_KEYS.contains(&key));
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError(e.to_string()))
    }

    /// Applies `HELM_*` variables, read through `var`.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        fn parse<T: std::str::FromStr>(name: &str, value: String) -> Result<T, ConfigError> {
            value
                .trim()
                .parse()
                .map_err(|_| ConfigError(format!("{name}={value:?} is not valid")))
        }
        if let Some(v) = var("HELM_DATA") {
            self.data = PathBuf::from(v);
        }
        if let Some(v) = var("HELM_LISTEN") {
            self.listen = parse("HELM_LISTEN", v)?;
        }
        if let Some(v) = var("HELM_PUBLIC_URL") {
            self.public_url = Some(v);
        }
        if let Some(v) = var("HELM_NODE_URL") {
            self.node_url = Some(v);
        }
        if let Some(v) = var("HELM_SECURE_COOKIES") {
            self.secure_cookies = Some(parse("HELM_SECURE_COOKIES", v)?);
        }
        if let Some(v) = var("HELM_ALLOWED_ORIGINS") {
            self.allowed_origins = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
        }
        if let Some(v) = var("HELM_SESSION_HOURS") {
            self.session_hours = parse("HELM_SESSION_HOURS", v)?;
        }
        if let Some(v) = var("HELM_MAX_BODY_BYTES") {
            self.max_body_bytes = parse("HELM_MAX_BODY_BYTES", v)?;
        }
        if let Some(v) = var("HELM_MAX_UPLOAD_BYTES") {
            self.max_upload_bytes = parse("HELM_MAX_UPLOAD_BYTES", v)?;
        }
        if let Some(v) = var("HELM_MAX_DOWNLOAD_BYTES") {
            self.max_download_bytes = parse("HELM_MAX_DOWNLOAD_BYTES", v)?;
        }
        if let Some(v) = var("HELM_MAX_IMPORT_BYTES") {
            self.max_import_bytes = parse("HELM_MAX_IMPORT_BYTES", v)?;
        }
        if let Some(v) = var("HELM_LOG") {
            self.log = v;
        }
        if let Some(v) = var("HELM_UI_DIR") {
            self.ui_dir = Some(PathBuf::from(v));
        }
        if let Some(v) = var("HELM_LOG_JSON") {
            self.log_json = parse("HELM_LOG_JSON", v)?;
        }
        if let Some(v) = var("HELM_SETUP_CODE") {
            self.setup_code = Some(v);
        }
        self.validate()
    }

    /// Takes core's resolved settings; origins core was given
    /// (`HELM_PUBLIC_ORIGINS`, `public_origins`) are allowed here too.
    pub fn set_core(&mut self, core: ResolvedConfig) -> Result<(), ConfigError> {
        self.allowed_origins
            .extend(core.config.public_origins.iter().cloned());
        self.core = core;
        self.validate()
    }

    /// Checks the values make sense together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(code) = &self.setup_code
            && (code.trim().len() < 12 || code.trim().len() > 128)
        {
            return Err(ConfigError(
                "the setup code must be 12 to 128 characters; leave it unset and the server \
                 makes one"
                    .into(),
            ));
        }
        let urls = self.public_url.iter().chain(&self.node_url);
        for origin in urls.chain(&self.allowed_origins) {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err(ConfigError(format!(
                    "{origin:?} is not an origin: it must start with http:// or https://"
                )));
            }
        }
        self.helm_config()
            .validate()
            .map_err(|e| ConfigError(e.to_string()))
    }

    /// What core is configured with, with the server's public origins.
    pub fn helm_config(&self) -> HelmConfig {
        HelmConfig {
            public_origins: self.trusted_origins(),
            ..self.core.config.clone()
        }
    }

    /// The URL people reach the server at, without a trailing `/`.
    pub fn public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("http://{}", self.listen),
        }
    }

    /// Where the other nodes of a shared store reach this one, without a
    /// trailing `/`; `None` when it listens on every address and no
    /// `node_url` says which.
    pub fn node_url(&self) -> Option<String> {
        match &self.node_url {
            Some(url) => Some(url.trim_end_matches('/').to_string()),
            None if self.listen.ip().is_unspecified() => None,
            None => Some(format!("http://{}", self.listen)),
        }
    }

    /// Whether session cookies are marked `Secure`.
    pub fn secure_cookies(&self) -> bool {
        self.secure_cookies
            .unwrap_or_else(|| self.public_url().starts_with("https://"))
    }

    /// How long a session lasts.
    pub fn session_ttl(&self) -> Duration {
        Duration::from_secs(self.session_hours.clamp(1, 24 * 365) * 3600)
    }

    /// The server's public origins: the public URL's (or, without one, the
    /// loopback names with the listening port) and the allowed origins.
    /// Pages from these may use a session cookie, and requests are answered
    /// only when their `Host` is one of these origins' hosts, which is what
    /// stops a rebound domain from reaching a server on loopback.
    pub fn trusted_origins(&self) -> Vec<String> {
        let mut origins = match &self.public_url {
            Some(url) => vec![origin_of(url)],
            None => {
                let port = self.listen.port();
                let mut own = vec![
                    format!("http://127.0.0.1:{port}"),
                    format!("http://localhost:{port}"),
                    format!("http://[::1]:{port}"),
                ];
                if !self.listen.ip().is_loopback() && !self.listen.ip().is_unspecified() {
                    own.push(format!("http://{}", self.listen));
                }
                own.iter().map(|o| origin_of(o)).collect()
            }
        };
        origins.extend(self.allowed_origins.iter().map(|o| origin_of(o)));
        // The other nodes address this one by its node URL.
        origins.extend(self.node_url.iter().map(|o| origin_of(o)));
        origins
    }

    /// The `Host` values requests may carry: each public origin's
    /// `host[:port]`, also with the scheme's default port written out.
    pub fn allowed_hosts(&self) -> Vec<String> {
        let mut hosts = Vec::new();
        for origin in self.trusted_origins() {
            let Some((scheme, host)) = origin.split_once("://") else {
                continue;
            };
            hosts.push(host.to_string());
            let default_port = if scheme == "https" { ":443" } else { ":80" };
            let has_port = host
                .rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                && !host.ends_with(']');
            match host.strip_suffix(default_port) {
                Some(bare) => hosts.push(bare.to_string()),
                None if !has_port => hosts.push(format!("{host}{default_port}")),
                None => {}
            }
        }
        hosts
    }
}

/// `scheme://host[:port]` of a URL, lowercased, without the scheme's
/// default port (so `http://localhost:80` and `http://localhost` compare equal).
pub fn origin_of(url: &str) -> String {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            let default_port = if scheme == "https" { ":443" } else { ":80" };
            let host = host.strip_suffix(default_port).unwrap_or(host);
            format!("{scheme}://{host}")
        }
        None => lower,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_env_override_defaults() -> Result<(), ConfigError> {
        let mut config: ServerConfig = toml::from_str(
            "listen = \"127.0.0.1:9000\"\npublic_url = \"https://helm.example.org/\"\n\
             [login_per_ip]\nburst = 3\nper_minute = 1\n",
        )
        .map_err(|e| ConfigError(e.to_string()))?;
        assert_eq!(config.listen.port(), 9000);
        assert!(config.secure_cookies());
        assert_eq!(config.public_url(), "https://helm.example.org");
        config.apply_env(|k| (k == "HELM_LISTEN").then(|| "127.0.0.1:9001".to_string()))?;
        assert_eq!(config.listen.port(), 9001);
        assert_eq!(config.login_per_ip.burst, 3);
        assert!(toml::from_str::<ServerConfig>("nonsense = 1").is_err());
        assert!(
            config
                .apply_env(|k| (k == "HELM_LISTEN").then(|| "nowhere".to_string()))
                .is_err()
        );
        Ok(())
    }

    #[test]
    fn the_node_url_defaults_to_the_listening_address() -> Result<(), ConfigError> {
        let mut config = ServerConfig::from_toml("listen = \"10.0.0.5:7400\"\n")?;
        assert_eq!(config.node_url().as_deref(), Some("http://10.0.0.5:7400"));
        // Listening on every address says nothing of which one the others use.
        config.listen = SocketAddr::from(([0, 0, 0, 0], 7400));
        assert_eq!(config.node_url(), None);
        config.apply_env(|k| (k == "HELM_NODE_URL").then(|| "http://10.0.0.5:7400/".into()))?;
        assert_eq!(config.node_url().as_deref(), Some("http://10.0.0.5:7400"));
        // The other nodes address it so, behind whatever public URL people use.
        config.public_url = Some("https://helm.example.org".into());
        assert!(
            config
                .allowed_hosts()
                .contains(&"10.0.0.5:7400".to_string())
        );
        assert!(
            ServerConfig::from_toml("node_url = \"10.0.0.5:7400\"\n")?
                .validate()
                .is_err(),
            "a node URL needs its scheme"
        );
        Ok(())
    }

    #[test]
    fn core_keys_in_the_file_are_left_to_core() -> Result<(), ConfigError> {
        let text = "listen = \"127.0.0.1:9002\"\n[memory]\nembedder = \"required\"\n";
        let config = ServerConfig::from_toml(text)?;
        assert_eq!(config.listen.port(), 9002);
        let core = HelmConfig::resolve([helm_core::config::ConfigLayer::toml(
            text,
            helm_core::config::ConfigSource::Application,
        )
        .map_err(|e| ConfigError(e.to_string()))?])
        .map_err(|e| ConfigError(e.to_string()))?;
        assert_eq!(
            core.config.memory.embedder,
            helm_core::memory::config::EmbedderSetting::Required
        );
        assert!(ServerConfig::from_toml("[lsiten]\nx = 1\n").is_err());
        Ok(())
    }

    /// The example in docs/operations.md is a config file both halves accept.
    #[test]
    fn the_documented_example_config_is_accepted() -> Result<(), ConfigError> {
        let doc = include_str!("../../docs/operations.md");
        let example = doc
            .split("```toml\n# /var/lib/helm/helm.toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .ok_or_else(|| ConfigError("no example config in docs/operations.md".into()))?;
        let server = ServerConfig::from_toml(example)?;
        assert_eq!(server.public_url(), "https://helm.example.org");
        let core = HelmConfig::resolve([helm_core::config::ConfigLayer::toml(
            example,
            helm_core::config::ConfigSource::Application,
        )
        .map_err(|e| ConfigError(e.to_string()))?])
        .map_err(|e| ConfigError(e.to_string()))?;
        assert_eq!(core.config.runtime.max_steps, 16);
        assert_eq!(
            core.config.store,
            Some(helm_core::config::StoreUrl::Sqlite("helm.db".into()))
        );
        Ok(())
    }
}
