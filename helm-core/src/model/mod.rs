//! The domain: plain data types shared by the store, the runtime and every
//! frontend. Nothing here does I/O.

mod agent;
mod authority;
mod channel;
mod enums;
mod ids;
mod member;
mod policy;
mod reading;
mod records;
mod thread;
mod workspace;

pub use agent::{
    Agent, AgentKind, AgentProfile, AgentStatus, Binding, CapabilityPolicy, CredentialGrant,
    Handle, ReadOnlyMount, SKIPPER_HANDLE, display_name_for_channel,
};
pub use authority::{Approval, ApprovalAction, ApprovalStatus, AuditEntry};
pub use channel::{
    Channel, ChannelKind, ChannelName, ChannelRef, ChannelStatus, HOME_CHANNEL, MAX_CHANNEL_NAME,
    MAX_PURPOSE, Visibility, validate_purpose,
};
pub use ids::{
    AgentId, ArtifactId, ChannelId, EscalationId, MemoryId, MessageId, ProviderId, ThreadId,
    ToolActionId, TurnId, UserId, WorkspaceId,
};
pub use member::{Member, MemberRole};
pub use policy::{ModelChoice, ModelPolicy, PolicyLevel, ResolvedModel, TurnModel};
pub use reading::{ChannelUnread, FeedItem, ReadMarker, UNREAD_CAP};
pub use records::{
    Artifact, ArtifactKind, AuthorType, Escalation, EscalationStatus, MAX_KEPT_OUTPUT, MemoryItem,
    MemoryKind, MemoryScope, MemorySource, MemoryStatus, ToolAction, ToolStatus,
};
pub use thread::{Author, Message, MessageStatus, Thread, ThreadStatus, Turn, TurnState};
pub use workspace::{Actor, Role, User, Workspace, validate_new_user_name, validate_user_name};
