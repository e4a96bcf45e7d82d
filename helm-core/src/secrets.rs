//! Where the secrets that grants and MCP servers name come from. A channel's
//! settings never hold a secret, only its name (a `secret_ref`); Helm looks
//! the value up here when a command or a connection needs it. By default
//! that is the server's own environment ([`EnvSecrets`]); an embedding
//! application may supply its own store (a vault, a keyring).

use std::collections::HashMap;

/// A source of secrets by name.
pub trait SecretStore: Send + Sync {
    /// The secret named `name`, if there is one.
    fn secret(&self, name: &str) -> Option<String>;
}

/// Secrets from the process environment: `secret_ref: GITHUB_TOKEN` is the
/// server's `$GITHUB_TOKEN`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvSecrets;

impl SecretStore for EnvSecrets {
    fn secret(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// Secrets held in memory, falling back to nothing: for embedding
/// applications that resolve their secrets themselves, and for tests.
#[derive(Debug, Clone, Default)]
pub struct StaticSecrets {
    values: HashMap<String, String>,
}

impl StaticSecrets {
    /// An empty store.
    pub fn new() -> Self {
        StaticSecrets::default()
    }

    /// With a secret.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.values.insert(name.into(), value.into());
        self
    }
}

impl SecretStore for StaticSecrets {
    fn secret(&self, name: &str) -> Option<String> {
        self.values.get(name).cloned()
    }
}
