//! The schema of the live events: one object per event `type`, each with
//! the envelope (`seq`, `at`, `channel_id`) and the fields of that type,
//! so typed clients (the web UI's among them) get a union they can switch
//! on. The frames only the WebSocket sends (`stream.hello`,
//! `stream.resync`) are documented as `StreamHello` and `StreamResync`.
//!
//! The table below must follow `helm_core::events::EventBody`; the test
//! `every_event_in_a_journey_is_documented` checks real events against it.

use utoipa::ToSchema;
use utoipa::openapi::schema::{
    KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
};
use utoipa::openapi::{Ref, RefOr};

/// A field's type in the table.
#[derive(Clone, Copy)]
enum Field {
    /// A schema of the document, by name.
    Named(&'static str),
    /// An integer id or count.
    Integer,
    /// An integer or null.
    NullableInteger,
    /// Text.
    Text,
    /// A field that may be absent (never null when present).
    Optional(&'static Field),
}

impl Field {
    /// Whether every event of its type carries the field.
    fn required(self) -> bool {
        !matches!(self, Field::Optional(_))
    }
}

/// One event type: its tag, what it means, and its fields.
type EventType = (&'static str, &'static str, &'static [(&'static str, Field)]);

/// Every event type.
const EVENT_TYPES: &[EventType] = &[
    (
        "channel.created",
        "A channel and its resident agent were provisioned.",
        &[
            ("channel", Field::Named("Channel")),
            ("agent", Field::Named("Agent")),
        ],
    ),
    (
        "channel.archived",
        "A channel was archived; its agent is paused.",
        &[("channel", Field::Named("Channel"))],
    ),
    (
        "channel.restored",
        "An archived channel was restored with the same agent world.",
        &[("channel", Field::Named("Channel"))],
    ),
    (
        "channel.deleted",
        "A channel and its agent world were permanently deleted.",
        &[("id", Field::Integer), ("name", Field::Text)],
    ),
    (
        "channel.updated",
        "A channel's purpose or its agent's instructions changed.",
        &[("channel", Field::Named("Channel"))],
    ),
    (
        "channel.renamed",
        "A channel was renamed; its agent, handle and everything else stay.",
        &[
            ("channel", Field::Named("Channel")),
            ("previous_name", Field::Text),
        ],
    ),
    (
        "model.changed",
        "The model choice at one level changed (`level`: workspace, channel or session; \
         a workspace change has no `channel_id`). `choice` is absent when the level was \
         cleared to inherit.",
        &[
            ("level", Field::Named("PolicyLevel")),
            ("thread_id", Field::Optional(&Field::Integer)),
            ("choice", Field::Optional(&Field::Named("ModelChoice"))),
            ("by", Field::Text),
        ],
    ),
    (
        "channel.member_added",
        "A person became a member of the channel.",
        &[
            ("user_id", Field::Integer),
            ("name", Field::Text),
            ("role", Field::Named("MemberRole")),
        ],
    ),
    (
        "channel.member_removed",
        "A person stopped being a member of the channel; `by`: who removed them (themselves when they left; absent when Helm did).",
        &[
            ("user_id", Field::Integer),
            ("name", Field::Text),
            ("by", Field::Optional(&Field::Integer)),
        ],
    ),
    (
        "message.created",
        "A message was posted (an agent's reply starts out `streaming`).",
        &[("message", Field::Named("Message"))],
    ),
    (
        "message.delta",
        "More text of a streaming reply. `offset` is where `text` goes: the length of the \
         reply's text before it, in Unicode code points (not bytes, not UTF-16 units). A \
         client holding more of the reply than `offset` (it read the message while it \
         streamed) keeps only the part of `text` past what it has; one holding less missed \
         deltas and can append, and `message.completed` brings the whole text.",
        &[
            ("message_id", Field::Integer),
            ("thread_id", Field::NullableInteger),
            ("text", Field::Text),
            ("offset", Field::Integer),
        ],
    ),
    (
        "message.completed",
        "A message reached its final state and text.",
        &[("message", Field::Named("Message"))],
    ),
    (
        "agent.status",
        "An agent's status changed.",
        &[
            ("agent_id", Field::Integer),
            ("status", Field::Named("AgentStatus")),
        ],
    ),
    (
        "thread.created",
        "A thread (session) was opened.",
        &[("thread", Field::Named("Thread"))],
    ),
    (
        "thread.updated",
        "A thread's status, title or summary changed.",
        &[("thread", Field::Named("Thread"))],
    ),
    (
        "turn.queued",
        "A turn was admitted; `ahead` turns run before it.",
        &[("turn", Field::Named("Turn")), ("ahead", Field::Integer)],
    ),
    (
        "turn.started",
        "A turn started.",
        &[("turn", Field::Named("Turn"))],
    ),
    (
        "turn.completed",
        "A turn finished with an answer (or waits on a person).",
        &[("turn", Field::Named("Turn"))],
    ),
    (
        "turn.failed",
        "A turn failed; `turn.error` says why.",
        &[("turn", Field::Named("Turn"))],
    ),
    (
        "turn.cancelled",
        "A turn was stopped, cancelled, or interrupted by a restart.",
        &[("turn", Field::Named("Turn"))],
    ),
    (
        "tool_action.started",
        "An agent started a tool call.",
        &[("action", Field::Named("ToolAction"))],
    ),
    (
        "tool_action.finished",
        "A tool call finished.",
        &[("action", Field::Named("ToolAction"))],
    ),
    (
        "artifact.recorded",
        "A file or output was recorded as an artifact of a thread.",
        &[("artifact", Field::Named("Artifact"))],
    ),
    (
        "escalation.changed",
        "A call for Skipper was opened, resolved or handed to the Captain.",
        &[("escalation", Field::Named("Escalation"))],
    ),
    (
        "approval.changed",
        "An approval was requested or decided.",
        &[("approval", Field::Named("Approval"))],
    ),
    (
        "history.imported",
        "A history was imported into a channel.",
        &[
            ("channel_id", Field::Integer),
            ("report", Field::Named("ImportReport")),
        ],
    ),
    (
        "memory.changed",
        "A memory record was added, superseded, forgotten or (un)pinned.",
        &[("item", Field::Named("MemoryItem"))],
    ),
    (
        "workspace.updated",
        "The workspace was renamed.",
        &[("workspace", Field::Named("Workspace"))],
    ),
    (
        "user.updated",
        "A person's role changed, or they were deactivated or reactivated.",
        &[("user", Field::Named("User"))],
    ),
    (
        "channel.read",
        "The caller read the channel up to a message (sent only to them).",
        &[("user_id", Field::Integer), ("message_id", Field::Integer)],
    ),
    (
        "mention.created",
        "A finished message mentions the caller as `@name` (sent only to them).",
        &[
            ("user_id", Field::Integer),
            ("message", Field::Named("Message")),
        ],
    ),
    (
        "file.changed",
        "A person changed the channel's workspace through Helm (a save, an upload, a note, \
         a new folder, a move or a delete). `change` is `saved`, `created`, `folder_created`, \
         `moved` (from `from`) or `deleted`; `path` is where it is now; `version` is the new \
         contents' version for `saved` and `created`; `user_id` and `by` name the person. \
         The agent's writes are told by `tool_action.*` instead.",
        &[
            ("change", Field::Text),
            ("path", Field::Text),
            ("from", Field::Optional(&Field::Text)),
            ("version", Field::Optional(&Field::Text)),
            ("user_id", Field::Integer),
            ("by", Field::Text),
        ],
    ),
    (
        "terminal.opened",
        "A person opened a terminal in the channel's computer; `user_id` and `by` name them.",
        &[
            ("terminal_id", Field::Integer),
            ("user_id", Field::Integer),
            ("by", Field::Text),
        ],
    ),
    (
        "terminal.closed",
        "A terminal of the channel ended: `closed_by` is the person who closed it, absent \
         when its shell exited or the channel's computer stopped; `exit_code` is absent when \
         a signal ended it.",
        &[
            ("terminal_id", Field::Integer),
            ("exit_code", Field::Optional(&Field::Integer)),
            ("closed_by", Field::Optional(&Field::Integer)),
        ],
    ),
];

fn integer() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
}

fn field_schema(field: Field) -> RefOr<Schema> {
    match field {
        Field::Named(name) => Ref::from_schema_name(name).into(),
        Field::Integer => integer().into(),
        Field::NullableInteger => ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                Type::Integer,
                Type::Null,
            ]))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .into(),
        Field::Text => ObjectBuilder::new().schema_type(Type::String).into(),
        Field::Optional(inner) => field_schema(*inner),
    }
}

fn variant(tag: &str, description: &str, fields: &[(&str, Field)]) -> Schema {
    let mut object = ObjectBuilder::new()
        .title(Some(tag))
        .description(Some(description))
        .property(
            "seq",
            integer().description(Some("Its position in the event log.")),
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
            integer().description(Some(
                "The channel it concerns; absent for workspace-level events.",
            )),
        )
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([tag])),
        )
        .required("type");
    for (name, field) in fields {
        object = object.property(*name, field_schema(*field));
        if field.required() {
            object = object.required(*name);
        }
    }
    object.into()
}

/// The schema of one event of the log: a union over [`EVENT_TYPES`],
/// told apart by `type`. Clients should ignore types they do not know.
pub fn event_schema() -> RefOr<Schema> {
    let mut one_of = OneOfBuilder::new().description(Some(
        "One event of the durable log, as the WebSocket sends it and the log pages return it: \
         `seq`, `at`, `channel_id` (absent for workspace-level events), `type`, and that \
         type's fields. Ignore types you do not know.",
    ));
    for (tag, description, fields) in EVENT_TYPES {
        one_of = one_of.item(variant(tag, description, fields));
    }
    one_of.into()
}

/// The first frame of every event stream.
#[derive(Debug, Clone, serde::Serialize, ToSchema)]
pub struct StreamHello {
    /// Always `stream.hello`.
    #[schema(value_type = String, example = "stream.hello")]
    pub r#type: &'static str,
    /// The log's position when the stream started.
    pub last_seq: u64,
    /// Where the stream resumes: events after this follow.
    pub after: u64,
    /// Who the stream is for.
    pub user: String,
}

/// Sent before the server closes a stream that fell behind (code 4008):
/// reconnect with `after` = the last `seq` processed.
#[derive(Debug, Clone, serde::Serialize, ToSchema)]
pub struct StreamResync {
    /// Always `stream.resync`.
    #[schema(value_type = String, example = "stream.resync")]
    pub r#type: &'static str,
    /// The log's position at the time.
    pub last_seq: u64,
}
