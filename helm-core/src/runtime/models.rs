//! Which model serves a turn, and when that is decided.
//!
//! A choice is *checked when it is set*: the provider must be registered,
//! the model named or the provider's default, and, where the provider lists
//! what it serves (OpenAI-compatible `GET /models`, Ollama's tags,
//! Anthropic's models list), among them; a provider without a list makes
//! the choice `unverified`, never silently trusted. A turn's model is
//! *fixed when its message is accepted*: the policy (session → channel →
//! workspace → fallback) is resolved then, checked against the provider's
//! list (cached briefly), and stored on the turn with the rule that chose
//! it, so a later change of policy serves later turns only. A choice that no
//! longer works refuses the message before anything is stored.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Runtime;
use crate::error::{Error, ProviderFailure, Result};
use crate::model::{ChannelId, ModelChoice, ThreadId, TurnModel};
use crate::provider::{Listed, ModelInfo, Provider, ProviderConfig, serves};
use crate::store::{Admission, AdmissionModel, ChannelRecord};

/// How long a provider's list is trusted when a message is accepted.
const LIST_MAX_AGE: Duration = Duration::from_secs(60);
/// How long accepting a message waits for a list it has not cached; past
/// that the choice goes ahead unverified (the turn fails visibly if the
/// model is really gone).
const LIST_WAIT_AT_ACCEPTANCE: Duration = Duration::from_secs(3);
/// How many names an error message offers to choose from.
const OFFERED: usize = 12;

/// Whether a model choice was confirmed against the provider's own list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// The provider lists the model.
    Verified,
    /// The provider keeps no list, or could not be asked; the choice is
    /// used as given.
    Unverified,
}

/// The outcome of checking a model choice when it is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCheck {
    /// The provider.
    pub provider: String,
    /// The model that will serve (the provider's default filled in).
    pub model: String,
    /// Whether the provider confirmed it serves that model.
    pub verification: Verification,
    /// Why it is unverified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a provider serves, as it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderModels {
    /// The provider's name.
    pub provider: String,
    /// Whether the provider lists its models; when it does not, `models`
    /// is empty and any model name is taken as given.
    pub listed: bool,
    /// The models it lists, in its order.
    pub models: Vec<ModelInfo>,
    /// Its configured default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Whether the default model is among those listed (absent when there
    /// is no default or no list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_served: Option<bool>,
}

/// `names` as a short list for a message.
fn offer(names: impl IntoIterator<Item = String>) -> String {
    let names: Vec<String> = names.into_iter().collect();
    let shown = names
        .iter()
        .take(OFFERED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match names.len() {
        0 => "none".to_string(),
        n if n > OFFERED => format!("{shown} and {} more", n - OFFERED),
        _ => shown,
    }
}

fn model_names(models: &[ModelInfo]) -> impl Iterator<Item = String> + '_ {
    models.iter().map(|m| m.id.clone())
}

/// A provider as the runtime reaches it: its adapter and, unless the
/// embedding application supplied it, its stored configuration.
struct Reached {
    adapter: Arc<dyn Provider>,
    config: Option<ProviderConfig>,
}

impl Runtime {
    /// The registered provider called `name`, or `None`.
    async fn reach(&self, name: &str) -> Result<Option<Reached>> {
        if let Some(custom) = self.providers.custom(name) {
            return Ok(Some(Reached {
                adapter: custom,
                config: None,
            }));
        }
        match self.store.provider(name).await {
            Ok(config) => Ok(Some(Reached {
                adapter: self.providers.adapter(&config)?,
                config: Some(config),
            })),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn listed(&self, name: &str, reached: &Reached, max_age: Duration) -> Listed {
        self.providers
            .models(name, reached.config.as_ref(), &reached.adapter, max_age)
            .await
    }

    /// The names of the registered providers, for messages.
    async fn provider_names(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .store
            .providers()
            .await?
            .into_iter()
            .map(|p| p.name)
            .collect();
        names.extend(self.providers.custom_names());
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Checks a choice about to be set: the provider is registered, a model
    /// is named or is the provider's default, and a provider that lists its
    /// models lists this one. Errors say what to choose instead.
    pub(crate) async fn check_choice(&self, choice: &ModelChoice) -> Result<ModelCheck> {
        let name = choice.provider.trim();
        if name.is_empty() {
            return Err(Error::invalid("provider", "name a provider"));
        }
        let Some(reached) = self.reach(name).await? else {
            return Err(Error::not_found("provider", name));
        };
        let listed = self.listed(name, &reached, Duration::ZERO).await;
        let model = match (&choice.model, &reached.config) {
            (Some(model), _) => model.clone(),
            (None, Some(config)) => match &config.default_model {
                Some(model) => model.clone(),
                None => {
                    let served = match &listed {
                        Listed::Models(models) => {
                            format!(": it serves {}", offer(model_names(models)))
                        }
                        _ => String::new(),
                    };
                    return Err(Error::invalid(
                        "model",
                        format!("provider {name} has no default model, so name one{served}"),
                    ));
                }
            },
            // The application's own provider: its default, whatever it is.
            (None, None) => "default".to_string(),
        };
        let (verification, note) = match listed {
            Listed::Models(models) if serves(&models, &model) => (Verification::Verified, None),
            Listed::Models(models) => {
                return Err(Error::invalid(
                    "model",
                    format!(
                        "provider {name} does not serve {model}; it serves {}",
                        offer(model_names(&models))
                    ),
                ));
            }
            Listed::Unlisted => (
                Verification::Unverified,
                Some(format!("provider {name} does not list its models")),
            ),
            Listed::Failed(why) => (
                Verification::Unverified,
                Some(format!(
                    "the models of provider {name} could not be listed: {why}"
                )),
            ),
        };
        Ok(ModelCheck {
            provider: name.to_string(),
            model,
            verification,
            note,
        })
    }

    /// What the registered provider `name` serves, asked now.
    pub(crate) async fn provider_models(&self, name: &str) -> Result<ProviderModels> {
        let Some(reached) = self.reach(name).await? else {
            return Err(Error::not_found("provider", name));
        };
        let default_model = reached
            .config
            .as_ref()
            .and_then(|c| c.default_model.clone());
        Ok(models_report(
            name,
            default_model,
            reached.adapter.list_models().await?,
        ))
    }

    /// What a provider configuration that is not saved yet serves: the
    /// connection test before adding it.
    pub(crate) async fn try_provider(&self, config: &ProviderConfig) -> Result<ProviderModels> {
        config.validate()?;
        let adapter = self.providers.try_adapter(config)?;
        Ok(models_report(
            &config.name,
            config.default_model.clone(),
            adapter.list_models().await?,
        ))
    }

    /// How a change that may wake an agent in `record` (and `thread`)
    /// admits its turn: the model the policy chooses now, checked, with the
    /// rule that chose it, or why none can serve.
    pub(crate) async fn admission(
        &self,
        record: &ChannelRecord,
        thread: Option<ThreadId>,
    ) -> Result<Admission> {
        Ok(Admission {
            model: self.choose_for_turn(record, thread).await?,
            capacity: self.options.capacity_per_agent.max(1),
        })
    }

    async fn choose_for_turn(
        &self,
        record: &ChannelRecord,
        thread: Option<ThreadId>,
    ) -> Result<AdmissionModel> {
        let channel = &record.channel.name;
        let mut policy = self.store.model_policy(record.channel.id, thread).await?;
        policy.fallback = self.fallback_model.clone();
        let Some(resolved) = policy.resolve() else {
            let providers = self.provider_names().await?;
            let registered = if providers.is_empty() {
                "no provider is registered yet, so register one and choose its model".to_string()
            } else {
                format!(
                    "choose a model for the channel or the workspace from the providers {}",
                    offer(providers)
                )
            };
            return Ok(AdmissionModel::Unavailable(format!(
                "no model serves {channel}'s agent: no session, channel or workspace choice names \
                 a provider and there is no fallback; {registered}"
            )));
        };
        let level = resolved.level;
        let name = resolved.choice.provider.clone();
        let Some(reached) = self.reach(&name).await? else {
            return Ok(AdmissionModel::Unavailable(format!(
                "the {level} choice for {channel} names provider {name}, which is not registered; \
                 choose another provider: {}",
                offer(self.provider_names().await?)
            )));
        };
        let model = match (&resolved.choice.model, &reached.config) {
            (Some(model), _) => model.clone(),
            (None, Some(config)) => match &config.default_model {
                Some(model) => model.clone(),
                None => {
                    let listed = self.listed_at_acceptance(&name, &reached).await;
                    let served = match listed {
                        Some(Listed::Models(models)) => {
                            format!(" such as {}", offer(model_names(&models)))
                        }
                        _ => String::new(),
                    };
                    return Ok(AdmissionModel::Unavailable(format!(
                        "the {level} choice for {channel} names provider {name} without a model, \
                         and {name} has no default model; choose one of its models{served}"
                    )));
                }
            },
            (None, None) => "default".to_string(),
        };
        if let Some(Listed::Models(models)) = self.listed_at_acceptance(&name, &reached).await
            && !serves(&models, &model)
        {
            return Ok(AdmissionModel::Unavailable(format!(
                "provider {name} no longer serves {model}, the {level} choice for {channel}; \
                 choose one it serves: {}",
                offer(model_names(&models))
            )));
        }
        Ok(AdmissionModel::Chosen(TurnModel {
            provider: name,
            model,
            level,
        }))
    }

    /// The provider's list as far as accepting a message waits for it.
    async fn listed_at_acceptance(&self, name: &str, reached: &Reached) -> Option<Listed> {
        tokio::time::timeout(
            LIST_WAIT_AT_ACCEPTANCE,
            self.listed(name, reached, LIST_MAX_AGE),
        )
        .await
        .ok()
    }

    /// The provider and model that serve `turn_model`, fixed at acceptance.
    pub(crate) async fn adapter_for(
        &self,
        turn_model: &ModelChoice,
    ) -> Result<(Arc<dyn Provider>, ModelChoice)> {
        match self.reach(&turn_model.provider).await? {
            Some(reached) => Ok((reached.adapter, turn_model.clone())),
            None => Err(Error::provider(
                &turn_model.provider,
                ProviderFailure::Unconfigured,
                "it was chosen for this turn when its message was accepted, but is no longer \
                 registered; choose another model and ask again",
            )),
        }
    }

    /// The provider and model that serve `channel` (and `thread`) now, by
    /// policy: session, channel, workspace default, configured fallback.
    pub(crate) async fn model_for(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<(Arc<dyn Provider>, ModelChoice)> {
        let mut policy = self.store.model_policy(channel, thread).await?;
        policy.fallback = self.fallback_model.clone();
        let resolved = policy.resolve().ok_or_else(|| {
            Error::provider(
                "none",
                ProviderFailure::Unconfigured,
                "no model is configured: register a provider and choose a model for the \
                 workspace",
            )
        })?;
        let name = resolved.choice.provider.clone();
        let Some(reached) = self.reach(&name).await? else {
            return Err(Error::provider(
                &name,
                ProviderFailure::Unconfigured,
                format!(
                    "the {} policy names provider {name:?}, which is not registered",
                    resolved.level
                ),
            ));
        };
        let model = match (resolved.choice.model, &reached.config) {
            (Some(model), _) => model,
            (None, Some(config)) => config.default_model.clone().ok_or_else(|| {
                Error::provider(
                    &name,
                    ProviderFailure::Unconfigured,
                    "no model is named and the provider has no default model; choose a model",
                )
            })?,
            (None, None) => "default".to_string(),
        };
        Ok((reached.adapter, ModelChoice::new(name, Some(model))))
    }
}

fn models_report(
    name: &str,
    default_model: Option<String>,
    listed: Option<Vec<ModelInfo>>,
) -> ProviderModels {
    let default_served = match (&default_model, &listed) {
        (Some(model), Some(models)) => Some(serves(models, model)),
        _ => None,
    };
    ProviderModels {
        provider: name.to_string(),
        listed: listed.is_some(),
        models: listed.unwrap_or_default(),
        default_model,
        default_served,
    }
}
