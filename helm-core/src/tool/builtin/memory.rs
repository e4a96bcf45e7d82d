//! The memory tools every agent has: `remember`, `recall` and
//! `record_decision`, over the channel's own memory.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::MAX_TOOL_OUTPUT;
use crate::error::Result;
use crate::memory::recall::RecallQuery;
use crate::model::{AuthorType, MemoryKind, MemoryScope, MemorySource};
use crate::store::NewMemory;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool, clip_bytes};

/// What kind of record `remember` keeps (summaries are Helm's to write).
#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RecordKind {
    Fact,
    Preference,
    Decision,
    ArtifactRef,
}

impl From<RecordKind> for MemoryKind {
    fn from(kind: RecordKind) -> Self {
        match kind {
            RecordKind::Fact => MemoryKind::Fact,
            RecordKind::Preference => MemoryKind::Preference,
            RecordKind::Decision => MemoryKind::Decision,
            RecordKind::ArtifactRef => MemoryKind::ArtifactRef,
        }
    }
}

/// Who a record is for: this thread, the channel, or (Skipper only) the
/// whole workspace.
#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RecordScope {
    Thread,
    Channel,
    Workspace,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    kind: RecordKind,
    /// One self-contained statement.
    content: String,
    /// Default: channel. Only Skipper shares with the workspace.
    #[serde(default)]
    scope: Option<RecordScope>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// What to look for, in plain words.
    query: String,
    /// How many matches to return (1 to 20, default 8).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DecisionArgs {
    /// What was decided, and why if known.
    content: String,
}

pub(crate) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "remember",
            "Record something worth keeping in the channel's memory: a fact, a preference, a \
             decision or a reference to an artifact. People can see and edit it.",
            ApprovalClass::None,
            remember_tool,
        )),
        Arc::new(TypedTool::new(
            "recall",
            "Search the channel's memory and earlier threads (decisions, facts, summaries, \
             messages). Returns the best matches with where they came from.",
            ApprovalClass::None,
            recall_tool,
        )),
        Arc::new(TypedTool::new(
            "record_decision",
            "Record a decision made in this thread, so later threads can find it.",
            ApprovalClass::None,
            decision_tool,
        )),
    ]
}

async fn remember_tool(cx: &ToolContext<'_>, args: RememberArgs) -> Result<ToolOutput> {
    remember(cx, args.kind.into(), &args.content, args.scope).await
}

async fn decision_tool(cx: &ToolContext<'_>, args: DecisionArgs) -> Result<ToolOutput> {
    remember(cx, MemoryKind::Decision, &args.content, None).await
}

async fn remember(
    cx: &ToolContext<'_>,
    kind: MemoryKind,
    content: &str,
    scope: Option<RecordScope>,
) -> Result<ToolOutput> {
    let scope = match scope.unwrap_or(RecordScope::Channel) {
        RecordScope::Thread => MemoryScope::Thread,
        RecordScope::Channel => MemoryScope::Channel,
        RecordScope::Workspace if cx.is_skipper() => MemoryScope::Workspace,
        RecordScope::Workspace => {
            return Ok(ToolOutput::denied(
                "a channel agent cannot share memory with the whole workspace; ask @skipper",
            ));
        }
    };
    let content = content.trim();
    if content.is_empty() || content.len() > 8 * 1024 {
        return Ok(ToolOutput::error("content must be 1 to 8192 bytes of text"));
    }
    let item = cx
        .rt()
        .store
        .add_memory(NewMemory {
            channel_id: cx.channel_id(),
            thread_id: Some(cx.thread_id()),
            kind,
            content: content.to_string(),
            source: MemorySource::Message,
            source_message_id: Some(cx.turn().trigger_message_id),
            author_type: if cx.is_skipper() {
                AuthorType::Skipper
            } else {
                AuthorType::Agent
            },
            author_name: Some(cx.agent_handle()),
            scope,
            confidence: None,
            pinned: false,
        })
        .await?;
    let done = format!("recorded {} {} in the channel's memory", item.kind, item.id);
    Ok(ToolOutput::ok(done.clone(), done))
}

async fn recall_tool(cx: &ToolContext<'_>, args: RecallArgs) -> Result<ToolOutput> {
    let mut query = RecallQuery::new(&args.query);
    query.limit = args.limit.unwrap_or(8).clamp(1, 20) as usize;
    let hits = cx.recall(&query).await?;
    if hits.is_empty() {
        return Ok(ToolOutput::ok("nothing found", "0 hits"));
    }
    let lines: Vec<String> = hits
        .iter()
        .map(crate::runtime::context::provenance_line)
        .collect();
    Ok(ToolOutput::ok(
        clip_bytes(&lines.join("\n"), MAX_TOOL_OUTPUT),
        format!("{} hits", hits.len()),
    ))
}
