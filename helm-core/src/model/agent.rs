//! Agents: Skipper (one per workspace) and the resident agent of each channel,
//! with the profile that makes an agent's identity independent of its model.

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::channel::ChannelName;
use super::enums::string_enum;
use super::ids::{AgentId, ChannelId};
use crate::error::{Error, Result};

/// Skipper's mention handle.
pub const SKIPPER_HANDLE: &str = "skipper";

string_enum! {
    /// Which of the two kinds of agent this is.
    AgentKind as "agent kind" {
        /// The workspace-wide operator; exactly one per workspace.
        Skipper => "skipper",
        /// The resident agent of one channel.
        Channel => "channel",
    }
}

string_enum! {
    /// What an agent is doing, as shown next to its name.
    AgentStatus as "agent status" {
        /// Idle and able to take work.
        Ready => "ready",
        /// Running at least one turn.
        Working => "working",
        /// Waiting on a person (an approval, an answer).
        Waiting => "waiting",
        /// Its channel is archived.
        Paused => "paused",
    }
}

/// A mention handle such as `launch-agent` (shown as `@launch-agent`):
/// lowercase letters, digits and `-`, unique in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Handle(String);

impl Handle {
    /// Parses a handle as typed, with or without `@`.
    pub fn parse(input: &str) -> Result<Self> {
        let bare = input.strip_prefix('@').unwrap_or(input);
        let ok = !bare.is_empty()
            && bare.len() <= 80
            && bare.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && bare
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if ok {
            Ok(Handle(bare.to_string()))
        } else {
            Err(Error::invalid(
                "handle",
                format!("{input:?} is not a handle such as @launch-agent"),
            ))
        }
    }

    /// The friendly handle of a channel's resident agent: `#launch` gets
    /// `launch-agent`. `suffix` disambiguates when that handle is taken.
    pub fn for_channel(name: &ChannelName, suffix: Option<u32>) -> Self {
        let base = name.as_str().replace('_', "-");
        let base = base.trim_end_matches('-');
        match suffix {
            None => Handle(format!("{base}-agent")),
            Some(n) => Handle(format!("{base}-agent-{n}")),
        }
    }

    /// Skipper's handle.
    pub fn skipper() -> Self {
        Handle(SKIPPER_HANDLE.to_string())
    }

    /// The handle without `@`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Wraps a handle read back from the store.
    pub(crate) fn from_stored(handle: String) -> Self {
        Handle(handle)
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", self.0)
    }
}

/// The display name of a channel's resident agent: `#home-renovation` gets
/// "Home Renovation Agent".
pub fn display_name_for_channel(name: &ChannelName) -> String {
    let words: Vec<String> = name
        .as_str()
        .split(['-', '_'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect();
    format!("{} Agent", words.join(" "))
}

/// An agent: a durable identity, independent of whichever model serves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// Its id.
    pub id: AgentId,
    /// Skipper or a channel's resident.
    pub kind: AgentKind,
    /// Its mention handle.
    pub handle: Handle,
    /// The name shown in transcripts.
    pub display_name: String,
    /// What it is doing.
    pub status: AgentStatus,
    /// When it was provisioned.
    pub created: Timestamp,
}

/// A read-only host directory exposed inside a channel's computer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadOnlyMount {
    /// The host path.
    pub host_path: String,
    /// Where it appears inside the channel's computer.
    pub at: String,
}

/// A credential the channel may use without ever seeing it: the secret named
/// `secret_ref` is injected as `env_var` into the commands that ask for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialGrant {
    /// The name the agent uses to ask for it.
    pub name: String,
    /// The environment variable it is injected as.
    pub env_var: String,
    /// Where the secret lives (an environment variable of the server).
    pub secret_ref: String,
}

/// What a channel's computer and tools may do beyond its own workspace.
/// Only Skipper or a human with authority widens it; an agent never can.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityPolicy {
    /// Whether commands may reach the network.
    pub network: bool,
    /// Extra read-only mounts.
    pub mounts: Vec<ReadOnlyMount>,
    /// Credentials by reference.
    pub credentials: Vec<CredentialGrant>,
    /// Packages installed into the channel's environment.
    pub packages: Vec<String>,
    /// MCP servers whose tools the agent gets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<crate::mcp::McpServer>,
    /// The configured computer the channel chose when it was made (its
    /// name); `None`: the workspace's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computer: Option<String>,
}

/// Who an agent is and what it works with: everything that must survive a
/// change of model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProfile {
    /// The agent this profile describes.
    pub agent_id: AgentId,
    /// The purpose it serves (its channel's purpose for a resident agent).
    pub purpose: String,
    /// Operating instructions, editable by humans.
    pub instructions: String,
    /// Where its workspace lives, relative to the data root (`channels/<id>`).
    pub workspace_ref: String,
    /// Its memory namespace (`channel:<id>`).
    pub memory_namespace: String,
    /// What its computer and tools may do.
    pub capability_policy: CapabilityPolicy,
}

/// The immutable binding of a resident agent to its one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The resident agent.
    pub agent_id: AgentId,
    /// Its channel.
    pub channel_id: ChannelId,
    /// When the binding was made.
    pub bound_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_handles_and_names_are_friendly() -> Result<()> {
        let name = ChannelName::parse("home_renovation-")?;
        assert_eq!(
            Handle::for_channel(&name, None).as_str(),
            "home-renovation-agent"
        );
        assert_eq!(
            Handle::for_channel(&name, Some(2)).to_string(),
            "@home-renovation-agent-2"
        );
        assert_eq!(display_name_for_channel(&name), "Home Renovation Agent");
        assert!(Handle::parse("@launch-agent").is_ok());
        assert!(Handle::parse("@Launch").is_err());
        Ok(())
    }
}
