//! Mirrors of helm-core's channels, agents, people, model policy,
//! providers and status.

use std::collections::BTreeMap;

use helm_core::model as m;
use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

use super::enums::*;

/// A channel: a durable domain of work.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Channel {
    /// Its id.
    pub id: i64,
    /// Its name, without `#`.
    pub name: String,
    /// What it is for.
    pub purpose: String,
    /// Home or agent channel.
    pub kind: ChannelKind,
    /// Active or archived.
    pub status: ChannelStatus,
    /// Public or private.
    pub visibility: Visibility,
    /// Who created it.
    pub created_by: i64,
    /// When.
    pub created: Timestamp,
}

impl From<m::Channel> for Channel {
    fn from(c: m::Channel) -> Self {
        Channel {
            id: c.id.0,
            name: c.name.as_str().to_string(),
            purpose: c.purpose,
            kind: c.kind.into(),
            status: c.status.into(),
            visibility: c.visibility.into(),
            created_by: c.created_by.0,
            created: c.created,
        }
    }
}

/// An agent: a durable identity, independent of its model.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Agent {
    /// Its id.
    pub id: i64,
    /// Skipper or a channel's resident.
    pub kind: AgentKind,
    /// Its mention handle, without `@`.
    pub handle: String,
    /// The name shown in transcripts.
    pub display_name: String,
    /// What it is doing.
    pub status: AgentStatus,
    /// When it was provisioned.
    pub created: Timestamp,
}

impl From<m::Agent> for Agent {
    fn from(a: m::Agent) -> Self {
        Agent {
            id: a.id.0,
            kind: a.kind.into(),
            handle: a.handle.as_str().to_string(),
            display_name: a.display_name,
            status: a.status.into(),
            created: a.created,
        }
    }
}

/// A read-only host directory inside a channel's computer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReadOnlyMount {
    /// The host path.
    pub host_path: String,
    /// Where it appears.
    pub at: String,
}

/// A credential a channel uses by reference, never seeing it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CredentialGrant {
    /// The name the agent asks for.
    pub name: String,
    /// The environment variable it is injected as.
    pub env_var: String,
    /// Where the secret lives (a reference, never the secret).
    pub secret_ref: String,
}

/// What a channel's computer and tools may do beyond its workspace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CapabilityPolicy {
    /// Whether commands may reach the network.
    pub network: bool,
    /// Extra read-only mounts.
    pub mounts: Vec<ReadOnlyMount>,
    /// Credentials by reference.
    pub credentials: Vec<CredentialGrant>,
    /// Packages installed into the environment.
    pub packages: Vec<String>,
    /// The configured computer the channel chose when it was made; absent:
    /// the workspace's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computer: Option<String>,
}

impl From<m::CapabilityPolicy> for CapabilityPolicy {
    fn from(p: m::CapabilityPolicy) -> Self {
        CapabilityPolicy {
            network: p.network,
            mounts: p
                .mounts
                .into_iter()
                .map(|m| ReadOnlyMount {
                    host_path: m.host_path,
                    at: m.at,
                })
                .collect(),
            credentials: p
                .credentials
                .into_iter()
                .map(|c| CredentialGrant {
                    name: c.name,
                    env_var: c.env_var,
                    secret_ref: c.secret_ref,
                })
                .collect(),
            packages: p.packages,
            computer: p.computer,
        }
    }
}

/// Who an agent is and what it works with.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentProfile {
    /// The agent.
    pub agent_id: i64,
    /// The purpose it serves.
    pub purpose: String,
    /// Operating instructions.
    pub instructions: String,
    /// Its workspace, relative to the data root.
    pub workspace_ref: String,
    /// Its memory namespace.
    pub memory_namespace: String,
    /// What its computer and tools may do.
    pub capability_policy: CapabilityPolicy,
}

impl From<m::AgentProfile> for AgentProfile {
    fn from(p: m::AgentProfile) -> Self {
        AgentProfile {
            agent_id: p.agent_id.0,
            purpose: p.purpose,
            instructions: p.instructions,
            workspace_ref: p.workspace_ref,
            memory_namespace: p.memory_namespace,
            capability_policy: p.capability_policy.into(),
        }
    }
}

/// A channel with its resident agent (Skipper for `#main`) and its profile.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChannelRecord {
    /// The channel.
    pub channel: Channel,
    /// Its agent.
    pub agent: Agent,
    /// The agent's profile.
    pub profile: AgentProfile,
}

impl From<helm_core::store::ChannelRecord> for ChannelRecord {
    fn from(r: helm_core::store::ChannelRecord) -> Self {
        ChannelRecord {
            channel: r.channel.into(),
            agent: r.agent.into(),
            profile: r.profile.into(),
        }
    }
}

/// A channel with its agent, the model serving it, and (for the Captain and
/// admins) where its workspace is on the server.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChannelDetail {
    /// The channel.
    pub channel: Channel,
    /// Its agent.
    pub agent: Agent,
    /// The agent's profile.
    pub profile: AgentProfile,
    /// The model that will serve the next turn, if any is configured.
    pub model: Option<ResolvedModel>,
    /// The workspace directory on the server (Captain and admins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_dir: Option<String>,
}

/// A provider and optionally a model.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelChoice {
    /// The provider's registry name.
    pub provider: String,
    /// The model; the provider's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl From<m::ModelChoice> for ModelChoice {
    fn from(c: m::ModelChoice) -> Self {
        ModelChoice {
            provider: c.provider,
            model: c.model,
        }
    }
}

/// The winning model choice and the level it came from.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResolvedModel {
    /// The provider.
    pub provider: String,
    /// The model; the provider's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where the choice was made.
    pub level: PolicyLevel,
}

impl From<m::ResolvedModel> for ResolvedModel {
    fn from(r: m::ResolvedModel) -> Self {
        ResolvedModel {
            provider: r.choice.provider,
            model: r.choice.model,
            level: r.level.into(),
        }
    }
}

/// The model choices at every level, and the one that wins.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelPolicy {
    /// After a change: how the new choice was checked (absent on reads, and
    /// when a level was cleared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<ModelCheck>,
    /// The thread's override.
    pub session: Option<ModelChoice>,
    /// The channel's override.
    pub channel: Option<ModelChoice>,
    /// The workspace default.
    pub workspace: Option<ModelChoice>,
    /// The server's configured fallback.
    pub fallback: Option<ModelChoice>,
    /// The choice that serves the next turn.
    pub resolved: Option<ResolvedModel>,
}

impl From<m::ModelPolicy> for ModelPolicy {
    fn from(p: m::ModelPolicy) -> Self {
        let resolved = p.resolve().map(Into::into);
        ModelPolicy {
            check: None,
            session: p.session.map(Into::into),
            channel: p.channel.map(Into::into),
            workspace: p.workspace.map(Into::into),
            fallback: p.fallback.map(Into::into),
            resolved,
        }
    }
}

/// Whether a model choice was confirmed against the provider's own list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// The provider lists the model.
    Verified,
    /// The provider keeps no list, or could not be asked: the model is used
    /// as given, and a turn fails visibly if it is wrong.
    Unverified,
}

/// How a model choice was checked when it was set.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelCheck {
    /// The provider.
    pub provider: String,
    /// The model that will serve (the provider's default filled in).
    pub model: String,
    /// Whether the provider confirmed it.
    pub verification: Verification,
    /// Why it is unverified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<helm_core::ModelCheck> for ModelCheck {
    fn from(c: helm_core::ModelCheck) -> Self {
        ModelCheck {
            provider: c.provider,
            model: c.model,
            verification: match c.verification {
                helm_core::Verification::Verified => Verification::Verified,
                helm_core::Verification::Unverified => Verification::Unverified,
            },
            note: c.note,
        }
    }
}

/// One model a provider lists.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelInfo {
    /// The id to choose it by, such as `gpt-4o`.
    pub id: String,
    /// A name for people, when the provider gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// When the provider says it was created (Ollama: last changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<Timestamp>,
}

/// What a provider serves, as it says: for a model picker, and for testing
/// a connection before a provider is added.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProviderModels {
    /// The provider's name.
    pub provider: String,
    /// Whether the provider lists its models. When it does not, `models`
    /// is empty and a model name is taken as given (the choice is
    /// `unverified`).
    pub listed: bool,
    /// The models it lists, in its order.
    pub models: Vec<ModelInfo>,
    /// Its configured default model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Whether the default model is among those listed (absent without a
    /// default or a list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_served: Option<bool>,
}

impl From<helm_core::ProviderModels> for ProviderModels {
    fn from(p: helm_core::ProviderModels) -> Self {
        ProviderModels {
            provider: p.provider,
            listed: p.listed,
            models: p
                .models
                .into_iter()
                .map(|m| ModelInfo {
                    id: m.id,
                    display_name: m.display_name,
                    created: m.created,
                })
                .collect(),
            default_model: p.default_model,
            default_served: p.default_served,
        }
    }
}

/// A person in the workspace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct User {
    /// Their id.
    pub id: i64,
    /// Login and mention name.
    pub name: String,
    /// Shown name.
    pub display_name: String,
    /// What they may do.
    pub role: Role,
    /// When they joined.
    pub created: Timestamp,
    /// When they were deactivated; absent while they are active. A
    /// deactivated person cannot sign in, and their sessions and API tokens
    /// are refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deactivated: Option<Timestamp>,
}

impl From<m::User> for User {
    fn from(u: m::User) -> Self {
        User {
            id: u.id.0,
            name: u.name,
            display_name: u.display_name,
            role: u.role.into(),
            created: u.created,
            deactivated: u.deactivated,
        }
    }
}

/// A person in a channel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Member {
    /// The person.
    pub user: User,
    /// Owner or member.
    pub role: MemberRole,
    /// When they joined.
    pub joined: Timestamp,
}

impl From<m::Member> for Member {
    fn from(mb: m::Member) -> Self {
        Member {
            user: mb.user.into(),
            role: mb.role.into(),
            joined: mb.joined,
        }
    }
}

/// The workspace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Workspace {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// When it was created.
    pub created: Timestamp,
}

impl From<m::Workspace> for Workspace {
    fn from(w: m::Workspace) -> Self {
        Workspace {
            id: w.id.0,
            name: w.name,
            created: w.created,
        }
    }
}

/// A registered model provider. Holds no secret: only where the key lives.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Provider {
    /// Its unique name.
    pub name: String,
    /// Its wire format: `openai` or `anthropic`.
    pub kind: String,
    /// Its base URL.
    pub base_url: String,
    /// Where its API key lives: `env:OPENAI_API_KEY` (a server variable),
    /// `file:/run/secrets/key` (a server file) or `stored:NAME` (kept by
    /// the server when the key was given).
    pub api_key: Option<String>,
    /// The model used when a policy names none.
    pub default_model: Option<String>,
    /// Names of the extra headers it sends (their values are not shown, as
    /// they may carry credentials).
    pub extra_headers: BTreeMap<String, String>,
}

/// What an extra header's value is shown as.
pub const REDACTED: &str = "<redacted>";

impl From<helm_core::provider::ProviderConfig> for Provider {
    fn from(p: helm_core::provider::ProviderConfig) -> Self {
        Provider {
            name: p.name,
            kind: p.kind.as_str().to_string(),
            // Credentials in a query are not shown back (a user name and
            // password are refused at registration).
            base_url: helm_core::provider::shown_url(&p.base_url),
            api_key: p.api_key.map(|k| k.to_string()),
            default_model: p.default_model,
            extra_headers: p
                .extra_headers
                .into_keys()
                .map(|k| (k, REDACTED.to_string()))
                .collect(),
        }
    }
}

/// The workspace at a glance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Status {
    /// The workspace.
    pub workspace: Workspace,
    /// The Captain.
    pub captain: User,
    /// Skipper.
    pub skipper: Agent,
    /// The data directory on the server (Captain and admins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// How channel computers are isolated here: `bubblewrap`, `process` or
    /// `remote` (settled by the first status asked or computer used; absent
    /// only if it cannot be).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// The computers a new channel may choose (`computer` when creating
    /// it), by name; empty: every channel gets the default.
    pub computers: Vec<String>,
    /// The schema version.
    pub schema_version: i64,
    /// People.
    pub users: u64,
    /// Active channels the caller may see.
    pub channels_active: u64,
    /// Archived channels the caller may see.
    pub channels_archived: u64,
    /// The resident agents of the channels the caller may see, and Skipper.
    pub agents: u64,
    /// Threads in the workspace (Captain and admins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// Messages in the workspace (Captain and admins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// The newest event's sequence number.
    pub last_event_seq: u64,
    /// How recall works on this server.
    pub recall: RecallMode,
}

/// How recall works: by meaning with a model, or by words only and why.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum RecallMode {
    /// By words and by meaning.
    Meaning {
        /// The embedding model.
        model: String,
    },
    /// By words only.
    Words {
        /// Why: `turned_off` (the configuration), `model_not_found`,
        /// `not_built` (no local embedder in this build) or `no_embedder`.
        reason: WordsOnlyReason,
        /// The reason, for people.
        detail: String,
    },
}

/// Why recall works by words only.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WordsOnlyReason {
    /// The configuration turns recall by meaning off.
    TurnedOff,
    /// The local embedding model was not found.
    ModelNotFound,
    /// This build has no local embedder.
    NotBuilt,
    /// No embedder was configured.
    NoEmbedder,
}

impl From<&helm_core::memory::config::RecallMode> for RecallMode {
    fn from(mode: &helm_core::memory::config::RecallMode) -> Self {
        use helm_core::memory::config::{RecallMode as Core, WordsOnlyReason as Why};
        match mode {
            Core::Meaning { model } => RecallMode::Meaning {
                model: model.clone(),
            },
            Core::Words { reason } => RecallMode::Words {
                reason: match reason {
                    Why::TurnedOff => WordsOnlyReason::TurnedOff,
                    Why::ModelNotFound => WordsOnlyReason::ModelNotFound,
                    Why::NotBuilt => WordsOnlyReason::NotBuilt,
                    Why::NoEmbedder => WordsOnlyReason::NoEmbedder,
                },
                detail: reason.describe().to_string(),
            },
        }
    }
}
