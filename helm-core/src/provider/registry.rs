//! The provider registry: named provider configurations (kind, base URL, key
//! reference, default model, extra headers) and the live adapters built from
//! them. A configuration holds only a *reference* to its key
//! (`env:OPENAI_API_KEY`, `file:/run/secrets/openai`, or `stored:NAME` for a
//! key kept in the data root's `secrets/` directory); the secret itself is
//! read at request time and never returned, logged or placed in a model's
//! context, and never in the database.

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
use crate::replace_file::{Keep, replace};

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
    /// A file on the server holding the key (an absolute path), such as a
    /// container secret.
    File(std::path::PathBuf),
    /// A key Helm keeps for the provider of this name in the data root's
    /// `secrets/` directory (set through the API, never shown again).
    Stored(String),
}

impl ApiKeyRef {
    /// Reads the secret. A reference to an unset variable or a missing file
    /// is an `Unconfigured` provider error that names where the key was
    /// looked for, never a value.
    pub fn resolve(&self, provider: &str) -> Result<String> {
        match self {
            ApiKeyRef::Env(var) => std::env::var(var).map_err(|_| {
                Error::provider(
                    provider,
                    ProviderFailure::Unconfigured,
                    format!("its API key variable {var} is not set in the server's environment"),
                )
            }),
            ApiKeyRef::File(path) => std::fs::read_to_string(path).map_err(|e| {
                Error::provider(
                    provider,
                    ProviderFailure::Unconfigured,
                    format!("its API key file {} cannot be read: {e}", path.display()),
                )
            }),
            ApiKeyRef::Stored(_) => Err(Error::provider(
                provider,
                ProviderFailure::Unconfigured,
                "its stored API key is not available here (no data root)",
            )),
        }
    }
}

impl fmt::Display for ApiKeyRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiKeyRef::Env(var) => write!(f, "env:{var}"),
            ApiKeyRef::File(path) => write!(f, "file:{}", path.display()),
            ApiKeyRef::Stored(name) => write!(f, "stored:{name}"),
        }
    }
}

impl FromStr for ApiKeyRef {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        if let Some(path) = s.strip_prefix("file:") {
            let path = std::path::PathBuf::from(path);
            return if path.is_absolute() {
                Ok(ApiKeyRef::File(path))
            } else {
                Err(Error::invalid(
                    "API key reference",
                    format!("{s:?} must name an absolute path, such as file:/run/secrets/openai"),
                ))
            };
        }
        if let Some(name) = s.strip_prefix("stored:") {
            return if valid_secret_name(name) {
                Ok(ApiKeyRef::Stored(name.to_string()))
            } else {
                Err(Error::invalid(
                    "API key reference",
                    format!("{s:?} does not name a stored key"),
                ))
            };
        }
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

/// Whether `name` can name a stored key (a provider name: it becomes a file
/// name, so nothing that could climb out of the directory).
fn valid_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
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
        // The store keeps the key reference as text and parses it back on
        // every read, so a reference built by hand (not parsed) that does
        // not survive that trip would make the whole registry unreadable.
        if let Some(key) = &self.api_key {
            let text = key.to_string();
            if text.parse::<ApiKeyRef>().ok().as_ref() != Some(key) {
                return Err(Error::invalid(
                    "API key reference",
                    format!(
                        "{text:?} is not one: give an environment variable name such as \
                         OPENAI_API_KEY, file: and an absolute path, or stored: and a provider name"
                    ),
                ));
            }
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
    secrets: Option<std::path::PathBuf>,
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

    /// Reads `stored:` keys from `dir` (the data root's `secrets/`).
    pub fn with_secrets_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.secrets = Some(dir.into());
        self
    }

    /// Where the key stored for provider `name` lives, if this registry
    /// keeps stored keys.
    pub fn stored_key_path(&self, name: &str) -> Option<std::path::PathBuf> {
        let dir = self.secrets.as_ref()?;
        valid_secret_name(name).then(|| dir.join(format!("provider-{name}.key")))
    }

    /// Keeps `key` as the stored key of provider `name`: a file only the
    /// server's user may read, replaced atomically. Returns its reference.
    pub fn store_key(&self, name: &str, key: &str) -> Result<ApiKeyRef> {
        let key = pasted_key(key)?;
        let path = self.stored_key_path(name).ok_or_else(|| {
            Error::invalid(
                "provider name",
                format!("{name:?} cannot name a stored key"),
            )
        })?;
        let dir = path
            .parent()
            .ok_or_else(|| Error::Internal("the secrets directory has no parent".into()))?;
        write_secret(dir, &path, key)?;
        Ok(ApiKeyRef::Stored(name.to_string()))
    }

    /// Keeps `key` only while the returned [`TrialKey`] lives: for trying a
    /// provider with a key before it is saved. The adapters read keys
    /// through an [`ApiKeyRef`], so the key goes to a private file in the
    /// secrets directory, never into a configuration that could be stored.
    pub fn trial_key(&self, key: &str) -> Result<TrialKey> {
        let key = pasted_key(key)?;
        let dir = self.secrets.as_ref().ok_or_else(|| {
            Error::invalid(
                "API key",
                "this server keeps no keys (it has no data root); name a variable or file instead",
            )
        })?;
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce)
            .map_err(|e| Error::Internal(format!("no randomness for a trial key: {e}")))?;
        let hex: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!("trial-{hex}.key"));
        write_secret(dir, &path, key)?;
        Ok(TrialKey { path })
    }

    /// `config` with a `stored:` key turned into the file that holds it.
    fn located(&self, config: &ProviderConfig) -> ProviderConfig {
        let mut config = config.clone();
        if let Some(ApiKeyRef::Stored(name)) = &config.api_key
            && let Some(path) = self.stored_key_path(name)
        {
            config.api_key = Some(ApiKeyRef::File(path));
        }
        config
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
        let located = self.located(config);
        Ok(match config.kind {
            ProviderKind::OpenAi => {
                Arc::new(OpenAiCompatible::with_options(&located, self.http.clone())?)
            }
            ProviderKind::Anthropic => {
                Arc::new(Anthropic::with_options(&located, self.http.clone())?)
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

/// A key kept for one connection test; its file is removed on drop.
#[derive(Debug)]
pub struct TrialKey {
    path: std::path::PathBuf,
}

impl TrialKey {
    /// The reference a configuration under test uses.
    pub fn reference(&self) -> ApiKeyRef {
        ApiKeyRef::File(self.path.clone())
    }
}

impl Drop for TrialKey {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A key as pasted: trimmed, one line, not empty.
fn pasted_key(key: &str) -> Result<&str> {
    let key = key.trim();
    if key.is_empty() || key.chars().any(char::is_control) {
        return Err(Error::invalid(
            "API key",
            "paste the key itself: one line, not empty",
        ));
    }
    Ok(key)
}

/// Writes a secret file readable only by this process's user (the
/// directory too), through a temporary file so a reader never sees half.
fn write_secret(dir: &std::path::Path, path: &std::path::Path, secret: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |source: std::io::Error| Error::Io {
        action: "storing a provider key in",
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
    replace(path, secret.as_bytes(), Keep::Secret).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_references_round_trip_and_refuse_what_could_escape() -> Result<()> {
        for text in [
            "env:OPENAI_API_KEY",
            "file:/run/secrets/openai",
            "stored:local",
        ] {
            assert_eq!(text.parse::<ApiKeyRef>()?.to_string(), text);
        }
        assert_eq!(
            "OPENAI_API_KEY".parse::<ApiKeyRef>()?.to_string(),
            "env:OPENAI_API_KEY"
        );
        for bad in [
            "file:relative/key",
            "stored:../x",
            "stored:",
            "stored:.hidden",
            "1ABC",
        ] {
            assert!(bad.parse::<ApiKeyRef>().is_err(), "{bad}");
        }
        Ok(())
    }

    #[test]
    fn a_stored_key_is_a_private_file_the_adapter_reads() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("helm-secrets-{}", std::process::id()));
        let registry = ProviderRegistry::default().with_secrets_dir(&dir);
        let reference = registry.store_key("local", "  sk-test-123\n")?;
        assert_eq!(reference, ApiKeyRef::Stored("local".into()));
        let path = registry
            .stored_key_path("local")
            .ok_or_else(|| Error::Internal("no path".into()))?;
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("sk-test-123")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode.ok(), Some(0o600));
        }
        let config = ProviderConfig {
            name: "local".into(),
            kind: ProviderKind::OpenAi,
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: Some(reference),
            default_model: None,
            extra_headers: BTreeMap::new(),
        };
        assert_eq!(
            registry.located(&config).api_key,
            Some(ApiKeyRef::File(path.clone()))
        );
        assert!(registry.store_key("local", "two\nlines").is_err());
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }
}
