//! Model policy: which provider and model serve an agent's next turn.
//!
//! Policy resolves session → channel → workspace default → configured
//! fallback: the most specific level that names a provider wins. Changing it
//! only changes who serves future turns; identity, memory, files and history
//! are never touched.

use serde::{Deserialize, Serialize};

use super::enums::string_enum;

string_enum! {
    /// Where a model choice was made, most specific first.
    PolicyLevel as "policy level" {
        /// An override for one thread (session).
        Session => "session",
        /// The channel's override.
        Channel => "channel",
        /// The workspace default.
        Workspace => "workspace",
        /// The fallback from the configuration.
        Fallback => "fallback",
    }
}

/// A provider (by registry name) and optionally a model; without a model the
/// provider's default model is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoice {
    /// The provider's name in the registry.
    pub provider: String,
    /// The model, or `None` for the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl ModelChoice {
    /// A choice of provider and model.
    pub fn new(provider: impl Into<String>, model: Option<String>) -> Self {
        ModelChoice {
            provider: provider.into(),
            model,
        }
    }
}

/// The choices at each level for one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelPolicy {
    /// The thread's override.
    pub session: Option<ModelChoice>,
    /// The channel's override.
    pub channel: Option<ModelChoice>,
    /// The workspace default.
    pub workspace: Option<ModelChoice>,
    /// The configured fallback.
    pub fallback: Option<ModelChoice>,
}

/// The outcome of resolving a [`ModelPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedModel {
    /// The winning choice.
    #[serde(flatten)]
    pub choice: ModelChoice,
    /// The level it came from.
    pub level: PolicyLevel,
}

/// The model a turn runs with, fixed when the message that woke it was
/// accepted: a later change of policy serves later turns, never this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnModel {
    /// The provider's registry name.
    pub provider: String,
    /// The model (the provider's default filled in).
    pub model: String,
    /// The rule that chose it.
    pub level: PolicyLevel,
}

impl TurnModel {
    /// The provider and model, as a choice.
    pub fn choice(&self) -> ModelChoice {
        ModelChoice::new(&self.provider, Some(self.model.clone()))
    }
}

impl ModelPolicy {
    /// The most specific choice, or `None` when no level names a provider.
    pub fn resolve(&self) -> Option<ResolvedModel> {
        [
            (PolicyLevel::Session, &self.session),
            (PolicyLevel::Channel, &self.channel),
            (PolicyLevel::Workspace, &self.workspace),
            (PolicyLevel::Fallback, &self.fallback),
        ]
        .into_iter()
        .find_map(|(level, choice)| {
            choice.as_ref().map(|c| ResolvedModel {
                choice: c.clone(),
                level,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(p: &str) -> Option<ModelChoice> {
        Some(ModelChoice::new(p, Some(format!("{p}-model"))))
    }

    #[test]
    fn the_most_specific_level_wins() {
        let mut policy = ModelPolicy {
            session: choice("s"),
            channel: choice("c"),
            workspace: choice("w"),
            fallback: choice("f"),
        };
        let order = [
            PolicyLevel::Session,
            PolicyLevel::Channel,
            PolicyLevel::Workspace,
            PolicyLevel::Fallback,
        ];
        for expected in order {
            let resolved = policy.resolve();
            assert_eq!(resolved.map(|r| r.level), Some(expected));
            match expected {
                PolicyLevel::Session => policy.session = None,
                PolicyLevel::Channel => policy.channel = None,
                PolicyLevel::Workspace => policy.workspace = None,
                PolicyLevel::Fallback => policy.fallback = None,
            }
        }
        assert_eq!(policy.resolve(), None);
    }
}
