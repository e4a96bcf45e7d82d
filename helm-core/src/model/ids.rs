//! Typed ids: one newtype per entity so a `ThreadId` can never be passed where a
//! `ChannelId` is expected. Ids are the store's integer keys; they are never
//! reused, because the tables that own them use `AUTOINCREMENT`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

macro_rules! typed_id {
    ($($(#[$doc:meta])* $name:ident => $what:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl $name {
            /// The raw integer key.
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self, Error> {
                match s.trim().parse::<i64>() {
                    Ok(n) if n > 0 => Ok($name(n)),
                    _ => Err(Error::invalid(
                        concat!($what, " id"),
                        format!("{s:?} is not a {} id (a positive number)", $what),
                    )),
                }
            }
        }
    )*};
}

typed_id! {
    /// A workspace: one Helm installation's tenant.
    WorkspaceId => "workspace";
    /// A human user (or a guest author).
    UserId => "user";
    /// A channel.
    ChannelId => "channel";
    /// An agent: Skipper or a channel's resident agent.
    AgentId => "agent";
    /// A thread (a durable work session).
    ThreadId => "thread";
    /// A message in a channel.
    MessageId => "message";
    /// A memory record.
    MemoryId => "memory";
    /// A file or output recorded as an artifact.
    ArtifactId => "artifact";
    /// A journaled tool call.
    ToolActionId => "tool action";
    /// A call for Skipper.
    EscalationId => "escalation";
    /// A model provider entry of the registry.
    ProviderId => "provider";
    /// One agent turn.
    TurnId => "turn";
}
