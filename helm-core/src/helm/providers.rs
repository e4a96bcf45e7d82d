//! The provider registry, as the facade offers it.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::model::{ModelChoice, User};
use crate::provider::{Provider, ProviderConfig, serves};
use crate::runtime::ProviderModels;
use crate::store::PolicyScope;

use super::Helm;

impl Helm {
    /// Adds a provider to the registry; with `make_default` it becomes the
    /// workspace's default model. Only the Captain and admins manage
    /// providers. A name already registered is a conflict (replace it with
    /// [`Helm::replace_provider`]), so adding a second provider never
    /// re-points the channels that use the first. A default model the
    /// provider's own list does not include is refused, and so is making a
    /// provider without a default model the workspace default. A provider
    /// that cannot be reached is still added (it may start later); try it
    /// first with [`Helm::try_provider`].
    pub async fn add_provider(
        &self,
        actor: &User,
        config: ProviderConfig,
        make_default: bool,
    ) -> Result<ProviderConfig> {
        self.register(actor, config, None, make_default, false)
            .await
    }

    /// Like [`Helm::add_provider`], replacing the provider of that name (its
    /// address, key, model, headers) if there is one: the channels that use
    /// it are served by the new settings from their next turn.
    pub async fn replace_provider(
        &self,
        actor: &User,
        config: ProviderConfig,
        make_default: bool,
    ) -> Result<ProviderConfig> {
        self.register(actor, config, None, make_default, true).await
    }

    /// Like [`Helm::add_provider`] (or [`Helm::replace_provider`] with
    /// `replace`), keeping `api_key` (the secret itself) as the provider's
    /// stored key: a file in the data root's `secrets/` that only the
    /// server's user can read; the configuration names it `stored:NAME` and
    /// the key is never shown again. The key is stored only once every
    /// check passed.
    pub async fn add_provider_with_key(
        &self,
        actor: &User,
        config: ProviderConfig,
        api_key: &str,
        make_default: bool,
        replace: bool,
    ) -> Result<ProviderConfig> {
        self.register(actor, config, Some(api_key), make_default, replace)
            .await
    }

    /// Checks a provider's registration, then stores it (and its key).
    async fn register(
        &self,
        actor: &User,
        mut config: ProviderConfig,
        api_key: Option<&str>,
        make_default: bool,
        replace: bool,
    ) -> Result<ProviderConfig> {
        may_manage_providers(actor)?;
        config.validate()?;
        if crate::provider::has_userinfo(&config.base_url) {
            return Err(Error::invalid(
                "base URL",
                "it holds a user name and password, which everyone in the workspace would \
                 see with the provider: give the credential as the provider's API key or an \
                 extra header instead",
            ));
        }
        if make_default && config.default_model.is_none() {
            return Err(Error::invalid(
                "default model",
                format!(
                    "to make {} the workspace default, name its default model",
                    config.name
                ),
            ));
        }
        if !replace
            && self
                .inner
                .store
                .providers()
                .await?
                .iter()
                .any(|p| p.name == config.name)
        {
            return Err(Error::Conflict(format!(
                "a provider named {} is registered already; replace it to change its settings, \
                 or give the new one another name",
                config.name
            )));
        }
        // A stored key named without a key given now must be there already
        // (kept for this or another provider), or every turn would fail.
        if api_key.is_none()
            && let Some(crate::provider::ApiKeyRef::Stored(name)) = &config.api_key
            && !self
                .inner
                .providers
                .stored_key_path(name)
                .is_some_and(|path| path.is_file())
        {
            return Err(Error::invalid(
                "API key reference",
                format!(
                    "stored:{name} names no stored key: give the key itself (it is then kept \
                     as stored:{name}), or name an environment variable or a file"
                ),
            ));
        }
        // The model check uses the new key (if one is given) through a trial
        // reference, so a refused registration leaves no key behind.
        let trial = api_key
            .map(|key| self.inner.providers.trial_key(key))
            .transpose()?;
        let checked = match &trial {
            Some(trial) => ProviderConfig {
                api_key: Some(trial.reference()),
                ..config.clone()
            },
            None => config.clone(),
        };
        if let Some(model) = &config.default_model
            && self.inner.providers.custom(&config.name).is_none()
            && let Ok(listed) = self.inner.runtime.try_provider(&checked).await
            && listed.listed
            && !serves(&listed.models, model)
        {
            return Err(Error::invalid(
                "default model",
                format!(
                    "{} does not serve {model}; it serves {}",
                    config.name,
                    listed
                        .models
                        .iter()
                        .take(12)
                        .map(|m| m.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        drop(trial);
        if let Some(key) = api_key {
            config.api_key = Some(self.inner.providers.store_key(&config.name, key)?);
        }
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

    /// What the registered provider `name` serves, asked of it now.
    /// Anyone in the workspace may look (choosing a channel's model needs
    /// it); a provider that cannot be reached is an upstream error.
    pub async fn provider_models(&self, name: &str) -> Result<ProviderModels> {
        self.inner.runtime.provider_models(name).await
    }

    /// Tries a provider configuration without saving it: connects, and
    /// says what it serves and whether its default model is among them.
    /// Captain and admins only, since it makes the server connect where
    /// the configuration says.
    pub async fn try_provider(
        &self,
        actor: &User,
        config: &ProviderConfig,
    ) -> Result<ProviderModels> {
        may_manage_providers(actor)?;
        self.inner.runtime.try_provider(config).await
    }

    /// Like [`Helm::try_provider`], with the key itself (as a person pastes
    /// it into a form before saving): the key is used for this test only
    /// and kept nowhere after it.
    pub async fn try_provider_with_key(
        &self,
        actor: &User,
        config: &ProviderConfig,
        api_key: &str,
    ) -> Result<ProviderModels> {
        may_manage_providers(actor)?;
        let trial = self.inner.providers.trial_key(api_key)?;
        let config = ProviderConfig {
            api_key: Some(trial.reference()),
            ..config.clone()
        };
        self.inner.runtime.try_provider(&config).await
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

fn may_manage_providers(actor: &User) -> Result<()> {
    if actor.role.is_admin() {
        Ok(())
    } else {
        Err(Error::Forbidden(
            "only the Captain or an admin manages providers".into(),
        ))
    }
}
