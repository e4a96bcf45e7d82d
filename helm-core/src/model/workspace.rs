//! The workspace (one Helm installation) and its people.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::enums::string_enum;
use super::ids::{UserId, WorkspaceId};
use crate::error::{Error, Result};

/// One Helm installation: its channels, agents and people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workspace {
    /// Its id.
    pub id: WorkspaceId,
    /// A human-readable name, shown in the UI.
    pub name: String,
    /// When `init` created it.
    pub created: Timestamp,
}

string_enum! {
    /// What a user may do in the workspace.
    Role as "role" {
        /// The owner and final authority; exactly one per workspace.
        Captain => "captain",
        /// Manages channels, people and approvals on the Captain's behalf.
        Admin => "admin",
        /// Works in the channels they belong to.
        Member => "member",
    }
}

impl Role {
    /// Whether this role may act with workspace-wide authority (approve,
    /// delete channels, manage people).
    pub fn is_admin(self) -> bool {
        matches!(self, Role::Captain | Role::Admin)
    }
}

/// A human who works in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// Its id.
    pub id: UserId,
    /// The login and mention name, unique in the workspace.
    pub name: String,
    /// The name shown in transcripts.
    pub display_name: String,
    /// What the user may do.
    pub role: Role,
    /// When the user was added.
    pub created: Timestamp,
    /// When they were deactivated, if they are: a deactivated person cannot
    /// sign in and their sessions and API tokens are refused, while what
    /// they wrote stays under their name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deactivated: Option<Timestamp>,
}

impl User {
    /// Whether they may sign in and act (not deactivated).
    pub fn is_active(&self) -> bool {
        self.deactivated.is_none()
    }
}

/// Checks a user name: 1 to 32 characters of lowercase letters, digits, `-`,
/// `_` and `.`, starting with a letter.
pub fn validate_user_name(name: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    if name.is_empty() {
        return Err(Error::invalid("user name", "a user needs a name"));
    }
    if name.len() > 32 {
        return Err(Error::invalid(
            "user name",
            format!("{name:?} is longer than 32 characters"),
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) || !name.chars().all(ok_char) {
        return Err(Error::invalid(
            "user name",
            format!(
                "{name:?} must start with a lowercase letter and use only lowercase letters, digits, '-', '_' and '.'"
            ),
        ));
    }
    Ok(())
}

/// Checks a name for a new person: [`validate_user_name`], and not a name
/// that reads as one of Helm's own speakers in a thread: `skipper`, `helm`,
/// or `…-agent` (every resident agent's handle is its channel's name with
/// `-agent`), so nobody can pass for an agent, share its mentions, or make a
/// future channel's agent share theirs. People already named so keep
/// their names (and can sign in).
pub fn validate_new_user_name(name: &str) -> Result<()> {
    validate_user_name(name)?;
    let reserved = match name {
        "skipper" => Some("it is Skipper's handle"),
        "helm" => Some("it is the name Helm's own notes are signed with"),
        _ if name.ends_with("-agent") => {
            Some("names ending in -agent are resident agents' handles")
        }
        _ => None,
    };
    match reserved {
        Some(why) => Err(Error::invalid(
            "user name",
            format!("{name:?} is reserved: {why}; choose another name"),
        )),
        None => Ok(()),
    }
}

/// Who performed an operation, as recorded in journals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Actor {
    /// A person.
    User {
        /// The user.
        id: UserId,
        /// Their name.
        name: String,
    },
    /// An agent (Skipper or a resident).
    Agent {
        /// The agent.
        id: super::ids::AgentId,
        /// Its handle.
        handle: String,
    },
    /// Helm itself.
    System,
}

impl Actor {
    /// The actor for a user.
    pub fn user(user: &User) -> Self {
        Actor::User {
            id: user.id,
            name: user.name.clone(),
        }
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Actor::User { name, .. } => f.write_str(name),
            Actor::Agent { handle, .. } => write!(f, "@{handle}"),
            Actor::System => f.write_str("helm"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_people_cannot_take_an_agents_name() {
        for name in ["skipper", "helm", "ops-agent", "launch-agent"] {
            let refused = validate_new_user_name(name);
            assert!(
                refused
                    .as_ref()
                    .is_err_and(|e| e.to_string().contains("is reserved")),
                "{name}: {refused:?}"
            );
            // Someone who has it already still signs in with it.
            assert!(validate_user_name(name).is_ok());
        }
        for name in ["ada", "agent", "agent-smith", "skipper2", "helmut"] {
            assert!(validate_new_user_name(name).is_ok(), "{name}");
        }
    }
}
