//! Mirrors of helm-core's domain types (channels, agents, threads, messages,
//! turns, users, model policy, providers, events).

use std::borrow::Cow;
use std::collections::BTreeMap;

use helm_core::model as m;
use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};

/// Mirrors one of core's string enums: same variants, same wire text (the
/// variant in snake case, which the `mirrors_serialise_like_core` test
/// checks against core). A container-level `rename_all` rather than one
/// `rename` per variant, because the schema derive does not see renames
/// that arrive through a macro.
macro_rules! mirror_enum {
    ($(#[$doc:meta])* $name:ident from $core:path { $($variant:ident => $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $(#[allow(missing_docs)] $variant,)*
        }

        impl From<$core> for $name {
            fn from(value: $core) -> Self {
                match value {
                    $(<$core>::$variant => $name::$variant,)*
                }
            }
        }
    };
}

mirror_enum! {
    /// Skipper's home or an ordinary agent channel.
    ChannelKind from m::ChannelKind { Home => "home", Agent => "agent", }
}
mirror_enum! {
    /// A channel's lifecycle state.
    ChannelStatus from m::ChannelStatus { Active => "active", Archived => "archived", }
}
mirror_enum! {
    /// Who may see a channel: everyone, or its members (and the Captain and admins).
    Visibility from m::Visibility { Public => "public", Private => "private", }
}
mirror_enum! {
    /// Skipper or a channel's resident agent.
    AgentKind from m::AgentKind { Skipper => "skipper", Channel => "channel", }
}
mirror_enum! {
    /// What an agent is doing.
    AgentStatus from m::AgentStatus {
        Ready => "ready", Working => "working", Waiting => "waiting", Paused => "paused",
    }
}
mirror_enum! {
    /// Where a thread (session) stands.
    ThreadStatus from m::ThreadStatus {
        Open => "open", Waiting => "waiting", Resolved => "resolved", Failed => "failed",
        Archived => "archived",
    }
}
mirror_enum! {
    /// Whether a message is final.
    MessageStatus from m::MessageStatus {
        Pending => "pending", Complete => "complete", Streaming => "streaming",
        Failed => "failed", Stopped => "stopped", Interrupted => "interrupted",
    }
}
mirror_enum! {
    /// Where an agent turn stands.
    TurnState from m::TurnState {
        Queued => "queued", Running => "running", Completed => "completed",
        Waiting => "waiting", Failed => "failed", Stopped => "stopped",
        Cancelled => "cancelled", Interrupted => "interrupted",
    }
}
mirror_enum! {
    /// How a tool call went.
    ToolStatus from m::ToolStatus {
        Running => "running", Ok => "ok", Error => "error", Denied => "denied",
        Cancelled => "cancelled",
    }
}
mirror_enum! {
    /// What a person may do in the workspace.
    Role from m::Role { Captain => "captain", Admin => "admin", Member => "member", }
}
mirror_enum! {
    /// A person's place in a channel.
    MemberRole from m::MemberRole { Owner => "owner", Member => "member", }
}
mirror_enum! {
    /// Where a model choice was made.
    PolicyLevel from m::PolicyLevel {
        Session => "session", Channel => "channel", Workspace => "workspace",
        Fallback => "fallback",
    }
}

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
            session: p.session.map(Into::into),
            channel: p.channel.map(Into::into),
            workspace: p.workspace.map(Into::into),
            fallback: p.fallback.map(Into::into),
            resolved,
        }
    }
}

/// A thread: one focused, durable work session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Thread {
    /// Its id.
    pub id: i64,
    /// Its channel.
    pub channel_id: i64,
    /// The message that started it.
    pub root_message_id: Option<i64>,
    /// Its title or goal.
    pub title: String,
    /// Where it stands.
    pub status: ThreadStatus,
    /// The rolling working summary.
    pub summary: String,
    /// Who opened it.
    pub opened_by: Option<i64>,
    /// When.
    pub opened_at: Timestamp,
    /// When anything in it last changed.
    pub updated_at: Timestamp,
    /// An id from an imported history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

impl From<m::Thread> for Thread {
    fn from(t: m::Thread) -> Self {
        Thread {
            id: t.id.0,
            channel_id: t.channel_id.0,
            root_message_id: t.root_message_id.map(|i| i.0),
            title: t.title,
            status: t.status.into(),
            summary: t.summary,
            opened_by: t.opened_by.map(|i| i.0),
            opened_at: t.opened_at,
            updated_at: t.updated_at,
            external_id: t.external_id,
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Author {
    /// A workspace user.
    Human {
        /// The user.
        user_id: i64,
        /// Their name at the time.
        name: String,
    },
    /// Skipper or a resident agent.
    Agent {
        /// The agent.
        agent_id: i64,
        /// Its handle.
        handle: String,
        /// Skipper or channel agent.
        agent_kind: AgentKind,
    },
    /// Helm itself.
    System,
    /// Someone from an imported history.
    Guest {
        /// The name the history gave.
        name: String,
    },
}

impl From<m::Author> for Author {
    fn from(a: m::Author) -> Self {
        match a {
            m::Author::Human { user_id, name } => Author::Human {
                user_id: user_id.0,
                name,
            },
            m::Author::Agent {
                agent_id,
                handle,
                agent_kind,
            } => Author::Agent {
                agent_id: agent_id.0,
                handle: handle.as_str().to_string(),
                agent_kind: agent_kind.into(),
            },
            m::Author::System => Author::System,
            m::Author::Guest { name } => Author::Guest { name },
        }
    }
}

/// A message in a channel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Message {
    /// Its id (also the pagination cursor).
    pub id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread, unless it is a channel-level announcement.
    pub thread_id: Option<i64>,
    /// Who wrote it.
    pub author: Author,
    /// Its text (Markdown).
    pub content: String,
    /// Whether it is final.
    pub status: MessageStatus,
    /// For an agent's message, the provider and model that served it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ModelChoice>,
    /// An id from an imported history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// When it was posted.
    pub created: Timestamp,
}

impl From<m::Message> for Message {
    fn from(msg: m::Message) -> Self {
        Message {
            id: msg.id.0,
            channel_id: msg.channel_id.0,
            thread_id: msg.thread_id.map(|t| t.0),
            author: msg.author.into(),
            content: msg.content,
            status: msg.status.into(),
            served_by: msg.served_by.map(Into::into),
            external_id: msg.external_id,
            created: msg.created,
        }
    }
}

/// One agent turn.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Turn {
    /// Its id.
    pub id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread.
    pub thread_id: i64,
    /// The agent doing the work.
    pub agent_id: i64,
    /// The message that woke the agent.
    pub trigger_message_id: i64,
    /// The agent's reply.
    pub reply_message_id: i64,
    /// Where it stands.
    pub state: TurnState,
    /// Who served it, once started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ModelChoice>,
    /// Why it failed or was interrupted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Model calls made.
    pub steps: u32,
    /// When it was admitted.
    pub queued_at: Timestamp,
    /// When it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
}

impl From<m::Turn> for Turn {
    fn from(t: m::Turn) -> Self {
        Turn {
            id: t.id.0,
            channel_id: t.channel_id.0,
            thread_id: t.thread_id.0,
            agent_id: t.agent_id.0,
            trigger_message_id: t.trigger_message_id.0,
            reply_message_id: t.reply_message_id.0,
            state: t.state.into(),
            served_by: t.served_by.map(Into::into),
            error: t.error,
            steps: t.steps,
            queued_at: t.queued_at,
            started_at: t.started_at,
            finished_at: t.finished_at,
        }
    }
}

/// One journaled tool call.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ToolAction {
    /// Its id.
    pub id: i64,
    /// The agent.
    pub agent_id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread.
    pub thread_id: Option<i64>,
    /// The turn.
    pub turn_id: Option<i64>,
    /// The tool.
    pub tool: String,
    /// A short account of the input.
    pub input_summary: String,
    /// A short account of the result.
    pub result_summary: String,
    /// How it went.
    pub status: ToolStatus,
    /// How long it took.
    pub duration_ms: Option<i64>,
    /// The isolation a command ran under.
    pub isolation: Option<String>,
    /// When it started.
    pub created: Timestamp,
}

impl From<m::ToolAction> for ToolAction {
    fn from(a: m::ToolAction) -> Self {
        ToolAction {
            id: a.id.0,
            agent_id: a.agent_id.0,
            channel_id: a.channel_id.0,
            thread_id: a.thread_id.map(|t| t.0),
            turn_id: a.turn_id.map(|t| t.0),
            tool: a.tool,
            input_summary: a.input_summary,
            result_summary: a.result_summary,
            status: a.status.into(),
            duration_ms: a.duration_ms,
            isolation: a.isolation,
            created: a.created,
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
}

impl From<m::User> for User {
    fn from(u: m::User) -> Self {
        User {
            id: u.id.0,
            name: u.name,
            display_name: u.display_name,
            role: u.role.into(),
            created: u.created,
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

/// What posting a message did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PostedMessage {
    /// The stored message.
    pub message: Message,
    /// Its thread.
    pub thread: Thread,
    /// Whether the message opened the thread.
    pub thread_created: bool,
    /// The turn it woke, if it woke the agent.
    pub turn: Option<Turn>,
    /// How many turns of the thread run before that turn.
    pub ahead: u32,
}

impl From<helm_core::PostedMessage> for PostedMessage {
    fn from(p: helm_core::PostedMessage) -> Self {
        PostedMessage {
            message: p.message.into(),
            thread: p.thread.into(),
            thread_created: p.thread_created,
            turn: p.turn.map(Into::into),
            ahead: p.ahead,
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
    /// Where its API key lives, such as `env:OPENAI_API_KEY`.
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
            base_url: p.base_url,
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
    /// The schema version.
    pub schema_version: i64,
    /// People.
    pub users: u64,
    /// Active channels.
    pub channels_active: u64,
    /// Archived channels.
    pub channels_archived: u64,
    /// Agents.
    pub agents: u64,
    /// Threads.
    pub threads: u64,
    /// Messages.
    pub messages: u64,
    /// The newest event's sequence number.
    pub last_event_seq: u64,
}

/// One event of the durable log, as the WebSocket sends it: `seq`, `at`,
/// `channel_id` (absent for workspace-level events), `type` (such as
/// `message.created`) and the fields of that type.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Event(pub serde_json::Value);

impl utoipa::PartialSchema for Event {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "An event: seq, at, channel_id (absent for workspace-level events), type, and \
                 the fields of that type (see docs/http.md)",
            ))
            .property(
                "seq",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))),
            )
            .required("seq")
            .property(
                "at",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
            )
            .required("at")
            .property(
                "channel_id",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))),
            )
            .property("type", ObjectBuilder::new().schema_type(Type::String))
            .required("type")
            .additional_properties(Some(
                utoipa::openapi::schema::AdditionalProperties::FreeForm(true),
            ))
            .into()
    }
}

impl ToSchema for Event {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Event")
    }
}

impl Event {
    /// The JSON form of a core event.
    pub fn from_core(event: &helm_core::events::Event) -> Self {
        Event(serde_json::to_value(event).unwrap_or(serde_json::Value::Null))
    }
}

/// A thread with its turns.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ThreadDetail {
    /// The thread.
    pub thread: Thread,
    /// Its turns, oldest first.
    pub turns: Vec<Turn>,
}

/// The turns that stopping a thread ended.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Stopped {
    /// Their ids.
    pub turns: Vec<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same<C: Serialize + Copy, M: Serialize + From<C>>(all: &[C]) {
        for value in all {
            let core = serde_json::to_string(value).unwrap_or_default();
            let mirror = serde_json::to_string(&M::from(*value)).unwrap_or_default();
            assert_eq!(core, mirror);
        }
    }

    #[test]
    fn mirrors_serialise_like_core() {
        same::<m::ChannelKind, ChannelKind>(m::ChannelKind::ALL);
        same::<m::ChannelStatus, ChannelStatus>(m::ChannelStatus::ALL);
        same::<m::Visibility, Visibility>(m::Visibility::ALL);
        same::<m::AgentKind, AgentKind>(m::AgentKind::ALL);
        same::<m::AgentStatus, AgentStatus>(m::AgentStatus::ALL);
        same::<m::ThreadStatus, ThreadStatus>(m::ThreadStatus::ALL);
        same::<m::MessageStatus, MessageStatus>(m::MessageStatus::ALL);
        same::<m::TurnState, TurnState>(m::TurnState::ALL);
        same::<m::ToolStatus, ToolStatus>(m::ToolStatus::ALL);
        same::<m::Role, Role>(m::Role::ALL);
        same::<m::MemberRole, MemberRole>(m::MemberRole::ALL);
        same::<m::PolicyLevel, PolicyLevel>(m::PolicyLevel::ALL);
    }
}
