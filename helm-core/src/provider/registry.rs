//! The provider registry: named provider configurations (kind, base URL, key
//! reference, default model, extra headers) and the live adapters built from
//! them. A key is only ever a *reference* (such as `env:OPENAI_API_KEY`); the
//! secret itself is read at request time and never stored, returned, logged
//! or placed in a model's context.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::anthropic::Anthropic;
use super::openai::OpenAiCompatible;
use super::{HttpOptions, ModelInfo, Provider};
use crate::error::{Error, ProviderFailure, Result};

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI's chat completions API and everything compatible with it.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
}

impl ProviderKind {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "openai" | "openai-compatible" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            _ => Err(Error::invalid(
                "provider kind",
                format!("{s:?} is not one of: openai, anthropic"),
            )),
        }
    }
}

/// Where an API key lives. Only the reference is stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ApiKeyRef {
    /// An environment variable of the process that talks to the provider.
    Env(String),
}

impl ApiKeyRef {
    /// Reads the secret. A reference to an unset variable is an
    /// `Unconfigured` provider error that names the variable, not its value.
    pub fn resolve(&self, provider: &str) -> Result<String> {
        match self {
            ApiKeyRef::Env(var) => std::env::var(var).map_err(|_| {
                Error::provider(
                    provider,
                    ProviderFailure::Unconfigured,
                    format!("its API key variable {var} is not set in the server's environment"),
                )
            }),
        }
    }
}

impl fmt::Display for ApiKeyRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiKeyRef::Env(var) => write!(f, "env:{var}"),
        }
    }
}

impl FromStr for ApiKeyRef {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let var = s.strip_prefix("env:").unwrap_or(s);
        let valid = !var.is_empty()
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !var.starts_with(|c: char| c.is_ascii_digit());
        if valid {
            Ok(ApiKeyRef::Env(var.to_string()))
        } else {
            Err(Error::invalid(
                "API key reference",
                format!("{s:?} is not an environment variable name such as OPENAI_API_KEY"),
            ))
        }
    }
}

impl Serialize for ApiKeyRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ApiKeyRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A named provider in the registry. Holds no secret, so it is safe to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderConfig {
    /// Its unique name, used by model policies.
    pub name: String,
    /// Its wire format.
    pub kind: ProviderKind,
    /// The base URL as the vendor's own clients take it (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`, `https://api.anthropic.com`).
    pub base_url: String,
    /// Where its API key lives, if it needs one.
    pub api_key: Option<ApiKeyRef>,
    /// The model used when a policy names none.
    pub default_model: Option<String>,
    /// Extra HTTP headers sent with every request (such as OpenRouter's `HTTP-Referer`).
    #[serde(default)]
    pub extra_headers: BTreeMap<String, String>,
}

impl ProviderConfig {
    /// Checks the name and base URL.
    pub fn validate(&self) -> Result<()> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !name_ok {
            return Err(Error::invalid(
                "provider name",
                format!(
                    "{:?} must be 1 to 64 letters, digits, '-', '_' or '.'",
                    self.name
                ),
            ));
        }
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(Error::invalid(
                "base URL",
                format!(
                    "{:?} is not an http(s) URL such as https://api.openai.com/v1",
                    self.base_url
                ),
            ));
        }
        for (name, value) in &self.extra_headers {
            let bad = |c: char| c.is_control() || c == ':' || c.is_whitespace();
            if name.is_empty() || name.chars().any(bad) || value.chars().any(char::is_control) {
                return Err(Error::invalid(
                    "extra header",
                    format!("{name:?} is not a valid HTTP header"),
                ));
            }
        }
        Ok(())
    }
}

/// An adapter built from a configuration, kept with that configuration so a
/// change rebuilds it.
type BuiltAdapter = (ProviderConfig, Arc<dyn Provider>);

/// What a provider listed, and when, for the configuration it was listed
/// with (`None` for a custom provider).
#[derive(Clone)]
struct CachedList {
    config: Option<ProviderConfig>,
    at: Instant,
    listed: Listed,
}

/// What asking a provider for its models gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    /// The models it serves.
    Models(Vec<ModelInfo>),
    /// It keeps no list.
    Unlisted,
    /// Asking failed (unreachable, a refused key), and why.
    Failed(String),
}

/// Builds and caches adapters for configured providers; embedding apps and
/// tests may register their own [`Provider`] under a name instead.
#[derive(Default)]
pub struct ProviderRegistry {
    http: HttpOptions,
    custom: Mutex<HashMap<String, Arc<dyn Provider>>>,
    built: Mutex<HashMap<String, BuiltAdapter>>,
    lists: Mutex<HashMap<String, CachedList>>,
}

impl ProviderRegistry {
    /// A registry whose adapters use `http` for timeouts and retries.
    pub fn new(http: HttpOptions) -> Self {
        ProviderRegistry {
            http,
            ..ProviderRegistry::default()
        }
    }

    /// Registers `provider` under `name`; it takes precedence over any stored
    /// configuration of that name.
    pub fn register(&self, name: impl Into<String>, provider: Arc<dyn Provider>) {
        if let Ok(mut custom) = self.custom.lock() {
            custom.insert(name.into(), provider);
        }
    }

    /// Whether `name` is a registered custom provider.
    pub fn is_registered(&self, name: &str) -> bool {
        self.custom
            .lock()
            .map(|c| c.contains_key(name))
            .unwrap_or(false)
    }

    /// The names of the custom providers.
    pub fn custom_names(&self) -> Vec<String> {
        self.custom
            .lock()
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The custom provider registered as `name`, if any.
    pub fn custom(&self, name: &str) -> Option<Arc<dyn Provider>> {
        self.custom.lock().ok().and_then(|c| c.get(name).cloned())
    }

    /// What the provider `name` (built from `config`, or custom without one)
    /// lists, reusing an answer younger than `max_age` for the same
    /// configuration. Failures are remembered too, so a provider that does
    /// not answer is not asked again on every message.
    pub async fn models(
        &self,
        name: &str,
        config: Option<&ProviderConfig>,
        adapter: &Arc<dyn Provider>,
        max_age: Duration,
    ) -> Listed {
        let cached = self
            .lists
            .lock()
            .ok()
            .and_then(|lists| lists.get(name).cloned());
        if let Some(cached) = cached
            && cached.config.as_ref() == config
            && cached.at.elapsed() < max_age
        {
            return cached.listed;
        }
        let listed = match adapter.list_models().await {
            Ok(Some(models)) => Listed::Models(models),
            Ok(None) => Listed::Unlisted,
            Err(e) => Listed::Failed(e.to_string()),
        };
        if let Ok(mut lists) = self.lists.lock() {
            lists.insert(
                name.to_string(),
                CachedList {
                    config: config.cloned(),
                    at: Instant::now(),
                    listed: listed.clone(),
                },
            );
        }
        listed
    }

    /// The adapter for a stored configuration, rebuilt when the configuration changes.
    pub fn adapter(&self, config: &ProviderConfig) -> Result<Arc<dyn Provider>> {
        if let Some(custom) = self.custom(&config.name) {
            return Ok(custom);
        }
        self.build(config)
    }

    /// A fresh adapter for `config`, not kept: for trying a configuration
    /// before it is saved.
    pub fn try_adapter(&self, config: &ProviderConfig) -> Result<Arc<dyn Provider>> {
        Ok(match config.kind {
            ProviderKind::OpenAi => {
                Arc::new(OpenAiCompatible::with_options(config, self.http.clone())?)
            }
            ProviderKind::Anthropic => {
                Arc::new(Anthropic::with_options(config, self.http.clone())?)
            }
        })
    }

    fn build(&self, config: &ProviderConfig) -> Result<Arc<dyn Provider>> {
        let mut built = self
            .built
            .lock()
            .map_err(|_| Error::Internal("provider registry lock poisoned".into()))?;
        if let Some((cached, adapter)) = built.get(&config.name)
            && cached == config
        {
            return Ok(adapter.clone());
        }
        let adapter = self.try_adapter(config)?;
        built.insert(config.name.clone(), (config.clone(), adapter.clone()));
        Ok(adapter)
    }
}
