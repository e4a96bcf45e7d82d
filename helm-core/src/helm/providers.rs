//! The provider registry, as the facade offers it.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::model::{ModelChoice, User};
use crate::provider::{Provider, ProviderConfig};
use crate::store::PolicyScope;

use super::Helm;

impl Helm {
    /// Adds a provider to the registry (or replaces the one of that name);
    /// with `make_default` it becomes the workspace's default model. Only the
    /// Captain and admins manage providers.
    pub async fn add_provider(
        &self,
        actor: &User,
        config: ProviderConfig,
        make_default: bool,
    ) -> Result<ProviderConfig> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin manages providers".into(),
            ));
        }
        config.validate()?;
        self.inner.store.put_provider(config.clone()).await?;
        if make_default {
            self.set_model_policy(
                actor,
                PolicyScope::Workspace,
                Some(ModelChoice::new(&config.name, config.default_model.clone())),
            )
            .await?;
        }
        Ok(config)
    }

    /// Like [`Helm::add_provider`], keeping `api_key` (the secret itself) as
    /// the provider's stored key: a file in the data root's `secrets/` that
    /// only the server's user can read; the configuration names it
    /// `stored:NAME` and the key is never shown again.
    pub async fn add_provider_with_key(
        &self,
        actor: &User,
        mut config: ProviderConfig,
        api_key: &str,
        make_default: bool,
    ) -> Result<ProviderConfig> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin manages providers".into(),
            ));
        }
        config.validate()?;
        config.api_key = Some(self.inner.providers.store_key(&config.name, api_key)?);
        self.add_provider(actor, config, make_default).await
    }

    /// The registry, by name. Holds no secrets.
    pub async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        self.inner.store.providers().await
    }

    /// Serves turns that name `name` with `provider` instead of a configured
    /// adapter: for embedding applications, custom models and tests.
    pub fn register_provider(&self, name: impl Into<String>, provider: Arc<dyn Provider>) {
        self.inner.providers.register(name, provider);
    }
}
