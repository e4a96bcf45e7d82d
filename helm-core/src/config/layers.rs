//! Layered configuration: defaults, then a config file, then `HELM_*`
//! environment variables, then what a frontend was told on its command
//! line, each overriding the one before, key by key.
//!
//! Every layer is a list of `(dotted key, value, source)` entries, so that
//! whatever is wrong with a value is reported with the key and where it
//! came from ("replies.max_tokens (from the environment variable
//! HELM_MAX_TOKENS): …"). Frontends build their command-line layer with
//! [`ConfigLayer::set`] under the same keys the file uses.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use toml::{Table, Value};

use super::HelmConfig;
use crate::error::{Error, Result};

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// Nobody set it.
    Default,
    /// A config file.
    File(PathBuf),
    /// An environment variable.
    Env(&'static str),
    /// The frontend's command line.
    CommandLine,
    /// The application embedding Helm.
    Application,
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::Default => f.write_str("the default"),
            ConfigSource::File(path) => write!(f, "the config file {}", path.display()),
            ConfigSource::Env(name) => write!(f, "the environment variable {name}"),
            ConfigSource::CommandLine => f.write_str("the command line"),
            ConfigSource::Application => f.write_str("the application"),
        }
    }
}

/// How an environment variable's text becomes a value.
#[derive(Clone, Copy)]
enum EnvKind {
    Text,
    Number,
    List,
}

/// The variables core reads: name, key, and how the text is read.
const ENV: [(&str, &str, EnvKind); 14] = [
    ("HELM_STORE", "store", EnvKind::Text),
    ("HELM_ISOLATION", "computer.isolation", EnvKind::Text),
    ("HELM_COMPUTER", "computer.at", EnvKind::Text),
    ("HELM_COMPUTER_KEY_ENV", "computer.key_env", EnvKind::Text),
    ("HELM_MAX_TOKENS", "replies.max_tokens", EnvKind::Number),
    (
        "HELM_MAX_REPLY_BYTES",
        "replies.max_reply_bytes",
        EnvKind::Number,
    ),
    ("HELM_EMBEDDER", "memory.embedder", EnvKind::Text),
    (
        "HELM_VECTOR_CACHE_MB",
        "memory.vector_cache_mb",
        EnvKind::Number,
    ),
    ("HELM_READ_MAP_MB", "memory.read_map_mb", EnvKind::Number),
    ("HELM_PUBLIC_ORIGINS", "public_origins", EnvKind::List),
    ("HELM_MAX_STEPS", "runtime.max_steps", EnvKind::Number),
    (
        "HELM_AGENT_CAPACITY",
        "runtime.capacity_per_agent",
        EnvKind::Number,
    ),
    (
        "HELM_TURN_LEASE_SECS",
        "runtime.turn_lease_secs",
        EnvKind::Number,
    ),
    ("HELM_FALLBACK_MODEL", "fallback_model", EnvKind::Text),
];

/// The environment variables [`ConfigLayer::env`] reads.
pub const ENV_VARS: [&str; ENV.len()] = {
    let mut names = [""; ENV.len()];
    let mut i = 0;
    while i < ENV.len() {
        names[i] = ENV[i].0;
        i += 1;
    }
    names
};

/// The top-level keys of [`HelmConfig`]; a config file's other top-level
/// keys belong to the frontend that reads it.
pub const FILE_KEYS: [&str; 8] = [
    "store",
    "computer",
    "computers",
    "replies",
    "memory",
    "runtime",
    "fallback_model",
    "public_origins",
];

/// One layer of settings, each with its source.
#[derive(Debug, Clone, Default)]
pub struct ConfigLayer {
    entries: Vec<(String, Value, ConfigSource)>,
}

impl ConfigLayer {
    /// An empty layer.
    pub fn new() -> Self {
        ConfigLayer::default()
    }

    /// The core settings of a TOML config file (its other top-level keys
    /// are left to the frontend, which checks them).
    pub fn file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("reading", path, e))?;
        Self::toml(&text, ConfigSource::File(path.to_path_buf()))
    }

    /// Like [`ConfigLayer::file`], or an empty layer when there is no file.
    pub fn file_if_present(path: &Path) -> Result<Self> {
        if path.is_file() {
            Self::file(path)
        } else {
            Ok(ConfigLayer::new())
        }
    }

    /// The core settings of TOML text, as coming from `source`.
    pub fn toml(text: &str, source: ConfigSource) -> Result<Self> {
        let table: Table = toml::from_str(text).map_err(|e| Error::Config {
            key: "(file)".into(),
            origin: source.to_string(),
            reason: format!("not valid TOML: {}", e.message()),
        })?;
        let mut layer = ConfigLayer::new();
        for (key, value) in table {
            if FILE_KEYS.contains(&key.as_str()) {
                flatten(&key, value, &source, &mut layer.entries);
            }
        }
        Ok(layer)
    }

    /// The `HELM_*` variables core reads ([`ENV_VARS`]), through `var`.
    pub fn env(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let mut layer = ConfigLayer::new();
        for (name, key, kind) in ENV {
            let Some(text) = var(name) else { continue };
            let source = ConfigSource::Env(name);
            let value = match kind {
                EnvKind::Text => Value::String(text.trim().to_string()),
                EnvKind::Number => {
                    Value::Integer(text.trim().parse().map_err(|_| Error::Config {
                        key: key.into(),
                        origin: source.to_string(),
                        reason: format!("{text:?} is not a number"),
                    })?)
                }
                EnvKind::List => Value::Array(
                    text.split(',')
                        .map(|s| s.trim())
                        .filter(|s| !s.is_empty())
                        .map(|s| Value::String(s.to_string()))
                        .collect(),
                ),
            };
            layer.entries.push((key.to_string(), value, source));
        }
        Ok(layer)
    }

    /// This process's `HELM_*` variables.
    pub fn process_env() -> Result<Self> {
        Self::env(|k| std::env::var(k).ok())
    }

    /// Sets `key` (dotted, as in the file: `computer.isolation`) to
    /// `value`, as coming from `source`.
    pub fn set(&mut self, key: &str, value: impl Serialize, source: ConfigSource) -> Result<()> {
        let value = Value::try_from(value).map_err(|e| Error::Config {
            key: key.into(),
            origin: source.to_string(),
            reason: e.to_string(),
        })?;
        self.entries.push((key.to_string(), value, source));
        Ok(())
    }

    /// [`ConfigLayer::set`] from the command line.
    pub fn set_flag(&mut self, key: &str, value: impl Serialize) -> Result<()> {
        self.set(key, value, ConfigSource::CommandLine)
    }
}

/// Table values become one entry per leaf; arrays are leaves.
fn flatten(
    key: &str,
    value: Value,
    source: &ConfigSource,
    out: &mut Vec<(String, Value, ConfigSource)>,
) {
    match value {
        Value::Table(table) => {
            for (child, value) in table {
                flatten(&format!("{key}.{child}"), value, source, out);
            }
        }
        leaf => out.push((key.to_string(), leaf, source.clone())),
    }
}

/// `value` at the dotted `key` of `table`.
fn insert(table: &mut Table, key: &str, value: Value) {
    match key.split_once('.') {
        None => {
            table.insert(key.to_string(), value);
        }
        Some((head, rest)) => {
            let child = table
                .entry(head.to_string())
                .or_insert_with(|| Value::Table(Table::new()));
            if !child.is_table() {
                *child = Value::Table(Table::new());
            }
            if let Value::Table(child) = child {
                insert(child, rest, value);
            }
        }
    }
}

fn deserialize(table: Table) -> std::result::Result<HelmConfig, String> {
    Value::Table(table)
        .try_into::<HelmConfig>()
        .map_err(|e| e.message().trim().to_string())
}

/// A resolved configuration and where each setting came from (the
/// default: [`HelmConfig::default`], set by nobody).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolvedConfig {
    /// The settings.
    pub config: HelmConfig,
    sources: BTreeMap<String, ConfigSource>,
}

impl ResolvedConfig {
    /// Where `key` (dotted) was set; [`ConfigSource::Default`] if nowhere.
    pub fn source_of(&self, key: &str) -> ConfigSource {
        self.sources
            .get(key)
            .cloned()
            .unwrap_or(ConfigSource::Default)
    }

    /// An error about `key`, naming where it was set.
    pub(crate) fn error(&self, key: &str, reason: impl Into<String>) -> Error {
        Error::Config {
            key: key.into(),
            origin: self.source_of(key).to_string(),
            reason: reason.into(),
        }
    }
}

impl HelmConfig {
    /// Resolves `layers`, later over earlier, over the defaults. Each value
    /// is checked on its own first, so a wrong one is reported with its key
    /// and source; then the whole is checked.
    pub fn resolve(layers: impl IntoIterator<Item = ConfigLayer>) -> Result<ResolvedConfig> {
        let mut merged = Table::new();
        let mut sources = BTreeMap::new();
        for layer in layers {
            for (key, value, source) in layer.entries {
                let mut alone = Table::new();
                insert(&mut alone, &key, value.clone());
                if let Err(reason) = deserialize(alone) {
                    return Err(Error::Config {
                        key,
                        origin: source.to_string(),
                        reason,
                    });
                }
                insert(&mut merged, &key, value);
                sources.insert(key, source);
            }
        }
        let config = deserialize(merged).map_err(|reason| Error::Config {
            key: "(all)".into(),
            origin: "the settings together".into(),
            reason,
        })?;
        let resolved = ResolvedConfig { config, sources };
        if let Err((key, reason)) = resolved.config.check() {
            return Err(resolved.error(key, reason));
        }
        Ok(resolved)
    }
}
