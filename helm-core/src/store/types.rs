//! The inputs and outputs of [`Store`](super::Store) operations.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::{
    Actor, Agent, AgentKind, AgentProfile, CapabilityPolicy, Channel, ChannelId, ChannelName,
    Handle, Role, ThreadId, User, Visibility, Workspace,
};

/// Work on the file system that must succeed for a store transaction to commit
/// (creating or moving a channel's on-disk tree). It runs inside the
/// transaction, after the rows are written, with the record being committed.
pub type WorldHook = Box<dyn FnOnce(&ChannelRecord) -> Result<()> + Send>;

/// What `init` asks for.
#[derive(Debug, Clone)]
pub struct BootstrapPlan {
    /// The workspace's name.
    pub workspace_name: String,
    /// The Captain's user name.
    pub captain_name: String,
    /// `#main`'s purpose.
    pub home_purpose: String,
    /// Skipper's operating instructions.
    pub skipper_instructions: String,
}

/// What exists after bootstrap.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// The workspace.
    pub workspace: Workspace,
    /// The Captain.
    pub captain: User,
    /// `#main` with Skipper.
    pub home: ChannelRecord,
    /// Whether this call created them (false when they already existed).
    pub created: bool,
}

/// A new user.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Login and mention name (validated).
    pub name: String,
    /// Shown name.
    pub display_name: String,
    /// Role.
    pub role: Role,
}

/// Everything provisioning needs to know; the store fills in ids and a free handle.
#[derive(Debug, Clone)]
pub struct ChannelPlan {
    /// The channel's name.
    pub name: ChannelName,
    /// Its purpose (validated, trimmed).
    pub purpose: String,
    /// Public or private.
    pub visibility: Visibility,
    /// The creator, who becomes its owner member.
    pub created_by: User,
    /// The handle to use if free; otherwise `-2`, `-3`, … are tried.
    pub handle: Handle,
    /// The agent's display name.
    pub display_name: String,
    /// Initial operating instructions.
    pub instructions: String,
    /// Initial capability policy.
    pub capability_policy: CapabilityPolicy,
    /// The text of Skipper's ready announcement; `{handle}` is replaced by the
    /// handle actually allocated.
    pub announcement: String,
}

/// A channel together with its agent (Skipper for `#main`) and that agent's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelRecord {
    /// The channel.
    pub channel: Channel,
    /// Its resident agent, or Skipper for `#main`.
    pub agent: Agent,
    /// The agent's profile.
    pub profile: AgentProfile,
}

/// Which channels to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelFilter {
    /// Include archived channels.
    pub include_archived: bool,
}

/// A new, unbound agent.
#[derive(Debug, Clone)]
pub struct NewAgent {
    /// Skipper or channel agent.
    pub kind: AgentKind,
    /// Its handle.
    pub handle: Handle,
    /// Its display name.
    pub display_name: String,
}

/// Where a model choice is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyScope {
    /// The workspace default.
    Workspace,
    /// A channel's override.
    Channel(ChannelId),
    /// A thread's (session's) override.
    Session(ThreadId),
}

/// One lifecycle record: what happened to a channel, by whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Its id.
    pub id: i64,
    /// The channel, which may no longer exist.
    pub channel_id: Option<ChannelId>,
    /// The channel's name at the time.
    pub channel_name: Option<String>,
    /// Who did it.
    pub actor: Actor,
    /// What happened, such as `channel.created`.
    pub action: String,
    /// Details for people.
    pub detail: String,
    /// When.
    pub created: Timestamp,
}

/// Counts for `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreStats {
    /// The schema version.
    pub schema_version: i64,
    /// People.
    pub users: u64,
    /// Active channels, `#main` included.
    pub channels_active: u64,
    /// Archived channels.
    pub channels_archived: u64,
    /// Agents, Skipper included.
    pub agents: u64,
    /// Threads.
    pub threads: u64,
    /// Messages.
    pub messages: u64,
    /// The newest event's sequence number.
    pub last_event_seq: u64,
}
