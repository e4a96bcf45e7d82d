//! The records a channel accumulates besides its transcript: memory,
//! artifacts, tool actions and escalations.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::enums::string_enum;
use super::ids::{
    AgentId, ArtifactId, ChannelId, EscalationId, MemoryId, MessageId, ThreadId, ToolActionId,
    TurnId, UserId,
};

string_enum! {
    /// The kinds of memory a channel keeps.
    MemoryKind as "memory kind" {
        /// A structured account of a session.
        Summary => "summary",
        /// A decision, with where and when it was made.
        Decision => "decision",
        /// A scoped claim with a source and a confidence.
        Fact => "fact",
        /// How the Captain, the team or the channel likes things done.
        Preference => "preference",
        /// A pointer to a meaningful file, document, URL or output.
        ArtifactRef => "artifact_ref",
    }
}

string_enum! {
    /// Who authored a memory record.
    AuthorType as "author type" {
        /// A person.
        Human => "human",
        /// The channel's resident agent.
        Agent => "agent",
        /// Skipper.
        Skipper => "skipper",
        /// Helm itself (imports, automatic summaries).
        System => "system",
    }
}

string_enum! {
    /// Where a memory record came from.
    MemorySource as "memory source" {
        /// A message (its id is `source_message_id`).
        Message => "message",
        /// A whole thread (a summary).
        Thread => "thread",
        /// A person's direct action (adding or editing it by hand).
        UserAction => "user_action",
        /// An imported history.
        Import => "import",
    }
}

string_enum! {
    /// How widely a memory record applies.
    MemoryScope as "memory scope" {
        /// Its thread only.
        Thread => "thread",
        /// Its channel.
        Channel => "channel",
        /// Explicitly shared with the whole workspace.
        Workspace => "workspace",
    }
}

string_enum! {
    /// Whether a memory record is still believed.
    MemoryStatus as "memory status" {
        /// Current knowledge.
        Current => "current",
        /// Replaced by a newer record.
        Superseded => "superseded",
        /// Forgotten on request; kept for provenance, never recalled.
        Forgotten => "forgotten",
    }
}

/// One piece of channel-owned knowledge, with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryItem {
    /// Its id.
    pub id: MemoryId,
    /// The owning channel.
    pub channel_id: ChannelId,
    /// The thread it came from, if any.
    pub thread_id: Option<ThreadId>,
    /// What kind of knowledge it is.
    pub kind: MemoryKind,
    /// Its text, suitable for retrieval.
    pub content: String,
    /// Where it came from.
    pub source: MemorySource,
    /// The message it came from, if any.
    pub source_message_id: Option<MessageId>,
    /// Who authored it.
    pub author_type: AuthorType,
    /// The author's name or handle, when known.
    pub author_name: Option<String>,
    /// How widely it applies.
    pub scope: MemoryScope,
    /// Current, superseded or forgotten.
    pub status: MemoryStatus,
    /// The record that replaced it, when superseded.
    pub superseded_by: Option<MemoryId>,
    /// For facts, how sure the author was (0 to 1).
    pub confidence: Option<f64>,
    /// Pinned records are always offered to the agent.
    pub pinned: bool,
    /// When it was recorded.
    pub created: Timestamp,
    /// Who forgot it (a person's name or an agent's handle), while it is
    /// forgotten; unknown for records forgotten before this was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten_by: Option<String>,
    /// When it was forgotten, while it is forgotten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten_at: Option<Timestamp>,
}

string_enum! {
    /// What an artifact is.
    ArtifactKind as "artifact kind" {
        /// A file in the channel's workspace.
        File => "file",
        /// A file uploaded by a person (under `files/`).
        Upload => "upload",
        /// A URL or service outside the workspace.
        Link => "link",
    }
}

/// A file or output that a thread produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// Its id.
    pub id: ArtifactId,
    /// The channel.
    pub channel_id: ChannelId,
    /// The thread that made it, if known.
    pub thread_id: Option<ThreadId>,
    /// Its path as the agent sees it (`/workspace/...`) or its URL.
    pub path: String,
    /// File, upload or link.
    pub kind: ArtifactKind,
    /// Who made it ("@launch-agent", a user name, or "terminal").
    pub created_by: String,
    /// When it was first recorded.
    pub created: Timestamp,
}

string_enum! {
    /// How a tool call went.
    ToolStatus as "tool status" {
        /// Still running.
        Running => "running",
        /// Succeeded.
        Ok => "ok",
        /// Failed (the error went back to the model).
        Error => "error",
        /// Refused by policy.
        Denied => "denied",
        /// Stopped with its turn (its command, if any, was killed).
        Cancelled => "cancelled",
        /// Helm stopped (a crash, a kill) while it ran; it may or may not
        /// have had its effect.
        Interrupted => "interrupted",
    }
}

/// The most of a tool's output kept with its journal line (the agent saw up
/// to 32 KiB at the time): enough to read what a command printed.
pub const MAX_KEPT_OUTPUT: usize = 8 * 1024;

/// One journaled tool call of an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAction {
    /// Its id.
    pub id: ToolActionId,
    /// The agent that called the tool.
    pub agent_id: AgentId,
    /// The channel it acted in.
    pub channel_id: ChannelId,
    /// The thread it belongs to.
    pub thread_id: Option<ThreadId>,
    /// The turn that made the call.
    pub turn_id: Option<TurnId>,
    /// The tool's name.
    pub tool: String,
    /// A short account of the input.
    pub input_summary: String,
    /// A short account of the result.
    pub result_summary: String,
    /// What the tool gave back to the agent (a command's exit code and
    /// output), cut to [`MAX_KEPT_OUTPUT`] bytes; none while it runs, or
    /// when it said no more than its summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// How it went.
    pub status: ToolStatus,
    /// How long it took, once finished.
    pub duration_ms: Option<i64>,
    /// The isolation mode the command ran under, for commands.
    pub isolation: Option<String>,
    /// When it started.
    pub created: Timestamp,
}

string_enum! {
    /// Where a call for Skipper stands.
    EscalationStatus as "escalation status" {
        /// Skipper has been called and not yet finished.
        Open => "open",
        /// Skipper resolved it.
        Resolved => "resolved",
        /// Skipper handed it to the Captain.
        HandedToCaptain => "handed_to_captain",
    }
}

/// A call for Skipper in a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// Its id.
    pub id: EscalationId,
    /// The thread it was raised in.
    pub thread_id: ThreadId,
    /// That thread's channel.
    pub channel_id: ChannelId,
    /// The agent that called Skipper, if an agent did.
    pub from_agent_id: Option<AgentId>,
    /// The person who called Skipper, if a person did.
    pub from_user_id: Option<UserId>,
    /// Why Skipper was called.
    pub reason: String,
    /// Where it stands.
    pub status: EscalationStatus,
    /// Who resolved it.
    pub resolved_by: Option<String>,
    /// What came of it.
    pub outcome: Option<String>,
    /// When it was raised.
    pub created: Timestamp,
    /// For a call handed to the Captain: who answered it (the Captain or
    /// an admin, by writing in its thread), once someone has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// When it was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_at: Option<Timestamp>,
}
