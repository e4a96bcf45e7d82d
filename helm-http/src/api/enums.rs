//! Mirrors of helm-core's small vocabularies (statuses, kinds, roles).

use helm_core::model as m;
use serde::Serialize;
use utoipa::ToSchema;

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
        Cancelled => "cancelled", Interrupted => "interrupted",
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

mirror_enum! {
    /// What kind of knowledge a memory record is.
    MemoryKind from m::MemoryKind {
        Summary => "summary", Decision => "decision", Fact => "fact",
        Preference => "preference", ArtifactRef => "artifact_ref",
    }
}
mirror_enum! {
    /// Who authored a memory record.
    AuthorType from m::AuthorType {
        Human => "human", Agent => "agent", Skipper => "skipper", System => "system",
    }
}
mirror_enum! {
    /// Where a memory record came from.
    MemorySource from m::MemorySource {
        Message => "message", Thread => "thread", UserAction => "user_action", Import => "import",
    }
}
mirror_enum! {
    /// How widely a memory record applies.
    MemoryScope from m::MemoryScope {
        Thread => "thread", Channel => "channel", Workspace => "workspace",
    }
}
mirror_enum! {
    /// Whether a memory record is still believed.
    MemoryStatus from m::MemoryStatus {
        Current => "current", Superseded => "superseded", Forgotten => "forgotten",
    }
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
        same::<m::MemoryKind, MemoryKind>(m::MemoryKind::ALL);
        same::<m::AuthorType, AuthorType>(m::AuthorType::ALL);
        same::<m::MemorySource, MemorySource>(m::MemorySource::ALL);
        same::<m::MemoryScope, MemoryScope>(m::MemoryScope::ALL);
        same::<m::MemoryStatus, MemoryStatus>(m::MemoryStatus::ALL);
    }
}
