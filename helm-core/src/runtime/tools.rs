//! The built-in tools of a channel agent, as function tools a model calls.
//!
//! The computer: `run_command {command}`, `read_file {path}`,
//! `write_file {path, content}`, `list_files {path}`, all in the channel's
//! computer (its `/workspace`, under the deployment's isolation). Memory:
//! `remember {kind, content, scope}`, `recall {query}`, `record_decision
//! {content}`, over the channel's own memory.
//!
//! A tool never fails the turn: bad arguments, unknown tools and tool errors
//! go back to the model as a tool error (and into the journal), and the turn
//! continues. Files a tool creates or changes become artifacts of the thread.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::exec::{CommandSpec, Computer, ConfinedFs, Executor};
use crate::memory::engine::RecallEngine;
use crate::memory::recall::RecallQuery;
use crate::model::{
    ArtifactKind, AuthorType, ChannelId, MemoryKind, MemoryScope, MemorySource, MessageId,
    ThreadId, ToolStatus,
};
use crate::provider::{ToolCall, ToolSpec};
use crate::store::{NewMemory, Store};

/// How long a command may run before it is killed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// The most text of a file or output a tool returns to the model.
pub const MAX_TOOL_OUTPUT: usize = 32 * 1024;

/// What a turn's tools work with.
pub(crate) struct ToolContext {
    pub executor: Arc<dyn Executor>,
    pub computer: Computer,
    pub files: ConfinedFs,
    pub store: Arc<dyn Store>,
    pub recall: Arc<RecallEngine>,
    pub channel_id: ChannelId,
    pub thread_id: ThreadId,
    /// The agent's handle, as `@launch-agent`.
    pub agent_handle: String,
    /// The message that started the turn (a record's source).
    pub trigger_message_id: MessageId,
}

fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The tool specifications offered to a channel agent.
pub fn builtin_specs() -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "A path in the workspace, relative or under /workspace."});
    let spec = |name: &str, description: &str, parameters| ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    };
    vec![
        spec(
            "run_command",
            "Run a shell command (bash) in /workspace, the channel's computer. Returns the exit \
             code and the tail of stdout and stderr.",
            object(
                json!({"command": {"type": "string", "description": "The command line."}}),
                &["command"],
            ),
        ),
        spec(
            "read_file",
            "Read a text file from the workspace.",
            object(json!({"path": path}), &["path"]),
        ),
        spec(
            "write_file",
            "Create or replace a text file in the workspace (parent folders are created).",
            object(
                json!({"path": path, "content": {"type": "string"}}),
                &["path", "content"],
            ),
        ),
        spec(
            "list_files",
            "List a folder of the workspace (default: /workspace).",
            object(json!({"path": path}), &[]),
        ),
        spec(
            "remember",
            "Record something worth keeping in the channel's memory: a fact, a preference, a \
             decision or a reference to an artifact. People can see and edit it.",
            object(
                json!({
                    "kind": {"type": "string", "enum": ["fact", "preference", "decision", "artifact_ref"]},
                    "content": {"type": "string", "description": "One self-contained statement."},
                    "scope": {"type": "string", "enum": ["thread", "channel"], "description": "Default: channel."}
                }),
                &["kind", "content"],
            ),
        ),
        spec(
            "recall",
            "Search the channel's memory and earlier threads (decisions, facts, summaries, \
             messages). Returns the best matches with where they came from.",
            object(
                json!({"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 20}}),
                &["query"],
            ),
        ),
        spec(
            "record_decision",
            "Record a decision made in this thread, so later threads can find it.",
            object(
                json!({"content": {"type": "string", "description": "What was decided, and why if known."}}),
                &["content"],
            ),
        ),
    ]
}

/// What a tool call produced, for the model and for the journal.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// The text returned to the model.
    pub content: String,
    /// Whether the model should treat it as an error.
    pub is_error: bool,
    /// The journal status.
    pub status: ToolStatus,
    /// A short account of the result for the journal.
    pub summary: String,
    /// The isolation mode a command ran under.
    pub isolation: Option<String>,
}

impl ToolOutcome {
    fn ok(content: String, summary: String) -> Self {
        ToolOutcome {
            content,
            is_error: false,
            status: ToolStatus::Ok,
            summary,
            isolation: None,
        }
    }

    fn error(message: String) -> Self {
        ToolOutcome {
            content: format!("error: {message}"),
            is_error: true,
            status: ToolStatus::Error,
            summary: clip(&message, 200),
            isolation: None,
        }
    }

    fn denied(message: String) -> Self {
        ToolOutcome {
            status: ToolStatus::Denied,
            ..ToolOutcome::error(message)
        }
    }
}

impl From<Error> for ToolOutcome {
    fn from(e: Error) -> Self {
        match e.kind() {
            crate::error::ErrorKind::Refused | crate::error::ErrorKind::Forbidden => {
                ToolOutcome::denied(e.to_string())
            }
            _ => ToolOutcome::error(e.to_string()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandArgs {
    command: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    kind: String,
    content: String,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionArgs {
    content: String,
}

/// A short account of a call's input for the journal, readable even when the
/// arguments are not valid JSON.
pub fn input_summary(call: &ToolCall) -> String {
    let value: Option<serde_json::Value> = serde_json::from_str(&call.arguments).ok();
    let field = |name: &str| {
        value
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let detail = match call.name.as_str() {
        "run_command" => field("command"),
        "write_file" => field("path").map(|p| {
            let size = field("content").map(|c| c.len()).unwrap_or(0);
            format!("{p} ({size} bytes)")
        }),
        "read_file" | "list_files" => Some(field("path").unwrap_or_else(|| "/workspace".into())),
        "remember" => {
            field("content").map(|c| format!("{}: {c}", field("kind").unwrap_or_default()))
        }
        "recall" => field("query"),
        "record_decision" => field("content"),
        _ => None,
    }
    .unwrap_or_else(|| call.arguments.clone());
    clip(&format!("{} {}", call.name, detail), 300)
}

fn parse<T: for<'de> Deserialize<'de>>(
    call: &ToolCall,
    expected: &str,
) -> std::result::Result<T, ToolOutcome> {
    let text = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    };
    serde_json::from_str(text).map_err(|e| {
        ToolOutcome::error(format!(
            "invalid arguments for {}: {e}; expected JSON like {expected}",
            call.name
        ))
    })
}

/// Runs one tool call.
pub(crate) async fn execute(ctx: &ToolContext, call: &ToolCall) -> ToolOutcome {
    let outcome = match call.name.as_str() {
        "run_command" => match parse::<CommandArgs>(call, r#"{"command": "ls -la"}"#) {
            Ok(args) => run_command(ctx, &args.command).await,
            Err(e) => Ok(e),
        },
        "read_file" => match parse::<PathArgs>(call, r#"{"path": "notes.md"}"#) {
            Ok(PathArgs { path: Some(path) }) => read_file(ctx, &path).await,
            Ok(PathArgs { path: None }) => Ok(ToolOutcome::error(
                "read_file needs a path, such as {\"path\": \"notes.md\"}".into(),
            )),
            Err(e) => Ok(e),
        },
        "write_file" => {
            match parse::<WriteArgs>(call, r#"{"path": "plan.md", "content": "..."}"#) {
                Ok(args) => write_file(ctx, &args.path, &args.content).await,
                Err(e) => Ok(e),
            }
        }
        "list_files" => match parse::<PathArgs>(call, r#"{"path": "/workspace"}"#) {
            Ok(args) => list_files(ctx, args.path.as_deref().unwrap_or("/workspace")).await,
            Err(e) => Ok(e),
        },
        "remember" => match parse::<RememberArgs>(call, r#"{"kind": "fact", "content": "..."}"#) {
            Ok(args) => remember(ctx, &args.kind, &args.content, args.scope.as_deref()).await,
            Err(e) => Ok(e),
        },
        "record_decision" => match parse::<DecisionArgs>(call, r#"{"content": "..."}"#) {
            Ok(args) => remember(ctx, "decision", &args.content, None).await,
            Err(e) => Ok(e),
        },
        "recall" => match parse::<RecallArgs>(call, r#"{"query": "launch date"}"#) {
            Ok(args) => recall(ctx, &args.query, args.limit).await,
            Err(e) => Ok(e),
        },
        other => Ok(ToolOutcome::error(format!(
            "unknown tool {other:?}; the tools are {}",
            builtin_specs()
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    };
    outcome.unwrap_or_else(ToolOutcome::from)
}

async fn run_command(ctx: &ToolContext, command: &str) -> Result<ToolOutcome> {
    if command.trim().is_empty() {
        return Ok(ToolOutcome::error(
            "run_command needs a non-empty command".into(),
        ));
    }
    let spec = CommandSpec::new(command).timeout(Some(COMMAND_TIMEOUT));
    let run = ctx.executor.run(&ctx.computer, spec).await?;
    let status = match (run.exit_code, run.signal) {
        (Some(code), _) => format!("exit code {code}"),
        _ if run.timed_out => format!("killed after {} s (timeout)", COMMAND_TIMEOUT.as_secs()),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended without an exit code".to_string(),
    };
    let mut content = status.clone();
    if run.truncated {
        content.push_str(" (output cut to its tail)");
    }
    if !run.stdout.is_empty() {
        content.push_str("\nstdout:\n");
        content.push_str(&run.stdout);
    }
    if !run.stderr.is_empty() {
        content.push_str("\nstderr:\n");
        content.push_str(&run.stderr);
    }
    let mut outcome = ToolOutcome::ok(clip_bytes(&content, MAX_TOOL_OUTPUT), status);
    outcome.isolation = Some(run.isolation.as_str().to_string());
    if !run.success() {
        outcome.is_error = true;
        outcome.status = ToolStatus::Error;
    }
    // Files the command made become artifacts of this thread.
    let found = crate::world::scan_workspace(ctx.computer.workspace_dir());
    ctx.store
        .record_artifacts(
            ctx.channel_id,
            Some(ctx.thread_id),
            ArtifactKind::File,
            &ctx.agent_handle,
            found,
            false,
        )
        .await?;
    Ok(outcome)
}

async fn read_file(ctx: &ToolContext, path: &str) -> Result<ToolOutcome> {
    let text = ctx.files.read(path, None).await?;
    let mut content = clip_bytes(&text.content, MAX_TOOL_OUTPUT);
    if text.truncated {
        content.push_str("\n[… the file goes on; read it by parts with a command such as sed -n]");
    }
    Ok(ToolOutcome::ok(
        content,
        format!("read {} lines of {}", text.end_line, text.path),
    ))
}

async fn write_file(ctx: &ToolContext, path: &str, content: &str) -> Result<ToolOutcome> {
    let entry = ctx.files.write(path, content.as_bytes().to_vec()).await?;
    ctx.store
        .record_artifacts(
            ctx.channel_id,
            Some(ctx.thread_id),
            ArtifactKind::File,
            &ctx.agent_handle,
            vec![entry.path.clone()],
            true,
        )
        .await?;
    let done = format!("wrote {} bytes to {}", content.len(), entry.path);
    Ok(ToolOutcome::ok(done.clone(), done))
}

async fn list_files(ctx: &ToolContext, path: &str) -> Result<ToolOutcome> {
    let entries = ctx.files.list(path).await?;
    let lines: Vec<String> = entries
        .iter()
        .map(|e| match e.kind {
            crate::exec::FileKind::Dir => format!("{}/", e.name),
            _ => format!("{} ({} bytes)", e.name, e.size),
        })
        .collect();
    let listing = if lines.is_empty() {
        "(empty)".to_string()
    } else {
        lines.join("\n")
    };
    Ok(ToolOutcome::ok(
        clip_bytes(&listing, MAX_TOOL_OUTPUT),
        format!("{} entries", lines.len()),
    ))
}

async fn remember(
    ctx: &ToolContext,
    kind: &str,
    content: &str,
    scope: Option<&str>,
) -> Result<ToolOutcome> {
    let kind: MemoryKind = kind.parse()?;
    if kind == MemoryKind::Summary {
        return Ok(ToolOutcome::error(
            "summaries are written by Helm when a thread ends".into(),
        ));
    }
    let scope = match scope.unwrap_or("channel") {
        "thread" => MemoryScope::Thread,
        "channel" => MemoryScope::Channel,
        "workspace" => {
            return Ok(ToolOutcome::denied(
                "a channel agent cannot share memory with the whole workspace; ask @skipper".into(),
            ));
        }
        other => {
            return Ok(ToolOutcome::error(format!(
                "scope {other:?} is not thread or channel"
            )));
        }
    };
    let content = content.trim();
    if content.is_empty() || content.len() > 8 * 1024 {
        return Ok(ToolOutcome::error(
            "content must be 1 to 8192 bytes of text".into(),
        ));
    }
    let item = ctx
        .store
        .add_memory(NewMemory {
            channel_id: ctx.channel_id,
            thread_id: Some(ctx.thread_id),
            kind,
            content: content.to_string(),
            source: MemorySource::Message,
            source_message_id: Some(ctx.trigger_message_id),
            author_type: AuthorType::Agent,
            author_name: Some(ctx.agent_handle.clone()),
            scope,
            confidence: None,
            pinned: false,
        })
        .await?;
    let done = format!("recorded {} {} in the channel's memory", item.kind, item.id);
    Ok(ToolOutcome::ok(done.clone(), done))
}

async fn recall(ctx: &ToolContext, query: &str, limit: Option<usize>) -> Result<ToolOutcome> {
    let mut q = RecallQuery::new(query);
    q.limit = limit.unwrap_or(8).clamp(1, 20);
    let hits = ctx.recall.recall(ctx.channel_id, &q).await?;
    if hits.is_empty() {
        return Ok(ToolOutcome::ok("nothing found".into(), "0 hits".into()));
    }
    let lines: Vec<String> = hits.iter().map(super::context::provenance_line).collect();
    Ok(ToolOutcome::ok(
        clip_bytes(&lines.join("\n"), MAX_TOOL_OUTPUT),
        format!("{} hits", hits.len()),
    ))
}

/// Shortens text to `max` characters, marking the cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

fn clip_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n[… {} more bytes not shown]",
        &text[..cut],
        text.len() - cut
    )
}
