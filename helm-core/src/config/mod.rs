//! `HelmConfig`: the configuration core resolves, whichever frontend runs it.
//!
//! It is one serde type (a TOML file's tables map onto it) with overrides
//! from `HELM_*` environment variables resolved here, in core, so the CLI,
//! the server and an embedding application mean the same thing by the same
//! setting. Frontends fill it from their own flags and files, then turn it
//! into [`HelmOptions`] with [`HelmConfig::apply`].
//!
//! ```toml
//! [computer]
//! isolation = "bubblewrap"   # or "process", or "auto"
//!
//! [replies]
//! max_tokens = 8192          # sent to the provider with every call
//! max_reply_bytes = 1048576  # a longer reply is cut and the turn says so
//!
//! [memory]
//! embedder = "auto"          # or "required" (refuse to start without it), or "off"
//!
//! public_origins = ["https://helm.example.org"]
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::exec::IsolationChoice;
use crate::helm::HelmOptions;
use crate::memory::config::MemoryConfig;

/// The environment variables [`HelmConfig::apply_env`] reads.
pub const ENV_VARS: [&str; 5] = [
    "HELM_ISOLATION",
    "HELM_MAX_TOKENS",
    "HELM_MAX_REPLY_BYTES",
    "HELM_EMBEDDER",
    "HELM_PUBLIC_ORIGINS",
];

/// Everything core is configured with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HelmConfig {
    /// Channel computers.
    pub computer: ComputerConfig,
    /// Bounds on what one model call may produce.
    pub replies: ReplyLimits,
    /// Memory: whether recall by meaning is required, used when found, or off.
    pub memory: MemoryConfig,
    /// The origins (`scheme://host[:port]`) people reach the workspace at.
    /// Empty: loopback names only (a frontend adds its own port). A server
    /// answers only for these hosts, and a browser page from anywhere else
    /// cannot use a signed-in person's cookie.
    pub public_origins: Vec<String>,
}

/// `[computer]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ComputerConfig {
    /// `bubblewrap` (required: refuse to start without a working `bwrap`),
    /// `process` (the weaker mode), or `auto` (bubblewrap if it works here,
    /// else process with a loud warning).
    pub isolation: IsolationChoice,
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
        let mut config = HelmConfig::default();
        config.apply_env(|k| std::env::var(k).ok())?;
        Ok(config)
    }

    /// Applies `HELM_ISOLATION`, `HELM_MAX_TOKENS`, `HELM_MAX_REPLY_BYTES`,
    /// `HELM_EMBEDDER` and `HELM_PUBLIC_ORIGINS` (comma-separated), read
    /// through `var`.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<()> {
        if let Some(v) = var("HELM_ISOLATION") {
            self.computer.isolation = v.parse().map_err(|_| {
                Error::invalid(
                    "HELM_ISOLATION",
                    format!("{v:?}: choose auto, bubblewrap or process"),
                )
            })?;
        }
        if let Some(v) = var("HELM_MAX_TOKENS") {
            self.replies.max_tokens = parse_number("HELM_MAX_TOKENS", &v)?;
        }
        if let Some(v) = var("HELM_MAX_REPLY_BYTES") {
            self.replies.max_reply_bytes = parse_number("HELM_MAX_REPLY_BYTES", &v)?;
        }
        if let Some(v) = var("HELM_EMBEDDER") {
            self.memory.embedder = v.parse().map_err(|_| {
                Error::invalid(
                    "HELM_EMBEDDER",
                    format!("{v:?}: choose required, auto or off"),
                )
            })?;
        }
        if let Some(v) = var("HELM_PUBLIC_ORIGINS") {
            self.public_origins = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
        }
        self.validate()
    }

    /// Checks the values make sense together.
    pub fn validate(&self) -> Result<()> {
        if self.replies.max_tokens == 0 {
            return Err(Error::invalid("max_tokens", "it must be at least 1"));
        }
        if self.replies.max_reply_bytes < 1024 {
            return Err(Error::invalid(
                "max_reply_bytes",
                "it must be at least 1024 bytes",
            ));
        }
        for origin in &self.public_origins {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err(Error::invalid(
                    "public origin",
                    format!("{origin:?} must start with http:// or https://"),
                ));
            }
        }
        Ok(())
    }

    /// Puts the settings into `options`.
    pub fn apply(&self, options: &mut HelmOptions) {
        options.computer.isolation = self.computer.isolation;
        options.runtime.max_tokens = self.replies.max_tokens;
        options.runtime.max_reply_bytes = self.replies.max_reply_bytes;
        options.memory = self.memory;
    }
}

fn parse_number<T: std::str::FromStr>(name: &'static str, value: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| Error::invalid(name, format!("{value:?} is not a number")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_and_bad_values_are_named() -> Result<()> {
        let mut config = HelmConfig::default();
        config.apply_env(|k| match k {
            "HELM_ISOLATION" => Some("bubblewrap".into()),
            "HELM_MAX_TOKENS" => Some("512".into()),
            "HELM_PUBLIC_ORIGINS" => Some("https://a.example, http://b.example:81".into()),
            _ => None,
        })?;
        assert_eq!(config.computer.isolation, IsolationChoice::Bubblewrap);
        assert_eq!(config.replies.max_tokens, 512);
        assert_eq!(config.public_origins.len(), 2);
        let bad = config.apply_env(|k| (k == "HELM_ISOLATION").then(|| "docker".into()));
        assert!(bad.is_err_and(|e| e.to_string().contains("HELM_ISOLATION")));
        let bad = config.apply_env(|k| (k == "HELM_MAX_TOKENS").then(|| "0".into()));
        assert!(bad.is_err());
        let parsed: HelmConfig = serde_json::from_str(
            r#"{"computer": {"isolation": "process"}, "replies": {"max_tokens": 64}}"#,
        )
        .map_err(|e| Error::Internal(e.to_string()))?;
        assert_eq!(parsed.computer.isolation, IsolationChoice::Process);
        assert_eq!(parsed.replies.max_reply_bytes, 1024 * 1024);
        Ok(())
    }
}
