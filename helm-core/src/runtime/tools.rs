//! The built-in tools of a channel agent, as function tools a model calls.
//!
//! The computer: `run_command {command, credentials?}`, `read_file {path}`,
//! `write_file {path, content}`, `list_files {path}`, all in the channel's
//! computer (its `/workspace`, under the deployment's isolation). Memory:
//! `remember {kind, content, scope}`, `recall {query}`, `record_decision
//! {content}`, over the channel's own memory. Escalation: `call_skipper
//! {reason}`. Skipper's wider set is in [`super::skipper`].
//!
//! A tool never fails the turn: bad arguments, unknown tools and tool errors
//! go back to the model as a tool error (and into the journal), and the turn
//! continues. Files a tool creates or changes become artifacts of the thread.
//! A channel agent has no tool that reaches outside its channel: authority is
//! in what the tool layer offers, not in what the model is asked to do.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::Runtime;
use crate::error::{Error, Result};
use crate::exec::{CommandSpec, Computer, ConfinedFs, Executor};
use crate::memory::recall::RecallQuery;
use crate::model::{
    ArtifactKind, AuthorType, ChannelId, MemoryKind, MemoryScope, MemorySource, MessageId,
    ThreadId, ToolStatus, Turn, User,
};
use crate::provider::{ToolCall, ToolSpec};
use crate::store::{ChannelRecord, NewEscalation, NewMemory};

/// How long a command may run before it is killed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// The most text of a file or output a tool returns to the model.
pub const MAX_TOOL_OUTPUT: usize = 32 * 1024;

/// What a turn's tools work with.
pub(crate) struct ToolContext {
    pub rt: Arc<Runtime>,
    /// The turn calling the tools.
    pub turn: Turn,
    /// The thread's channel, with its resident agent and policy.
    pub record: ChannelRecord,
    /// The acting agent's handle, as `@launch-agent` or `@skipper`.
    pub agent_handle: String,
    /// The person whose message started this chain of work.
    pub asker: Option<User>,
    /// Whether the acting agent is Skipper.
    pub skipper: bool,
    pub executor: Arc<dyn Executor>,
    /// The thread's channel's computer.
    pub computer: Computer,
    pub files: ConfinedFs,
    /// Cancelled when the turn must stop (a person stopped it, its channel
    /// was archived, Helm shuts down): a long tool ends early on it.
    pub cancel: tokio_util::sync::CancellationToken,
}

impl ToolContext {
    fn channel_id(&self) -> ChannelId {
        self.turn.channel_id
    }

    fn thread_id(&self) -> ThreadId {
        self.turn.thread_id
    }

    fn trigger(&self) -> MessageId {
        self.turn.trigger_message_id
    }
}

pub(super) fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

pub(super) fn spec(name: &str, description: &str, parameters: serde_json::Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    }
}

/// The memory tools every agent has.
pub(super) fn memory_specs() -> Vec<ToolSpec> {
    vec![
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

/// The tool specifications offered to a channel agent.
pub fn builtin_specs() -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "A path in the workspace, relative or under /workspace."});
    let mut specs = vec![
        spec(
            "run_command",
            "Run a shell command (bash) in /workspace, the channel's computer. Returns the exit \
             code and the tail of stdout and stderr. Credentials granted to the channel are \
             passed by name: they arrive as environment variables, never as text.",
            object(
                json!({
                    "command": {"type": "string", "description": "The command line."},
                    "credentials": {"type": "array", "items": {"type": "string"},
                        "description": "Names of granted credentials to pass to this command."}
                }),
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
    ];
    specs.extend(memory_specs());
    specs.push(spec(
        "call_skipper",
        "Call @skipper, the workspace operator, into this thread when you need something \
         outside this channel: a package, a credential, network access, another channel's \
         information, a host-level action. Skipper answers in this thread after your turn.",
        object(
            json!({"reason": {"type": "string", "description": "What you need and why."}}),
            &["reason"],
        ),
    ));
    specs
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
    pub(super) fn ok(content: String, summary: String) -> Self {
        ToolOutcome {
            content,
            is_error: false,
            status: ToolStatus::Ok,
            summary,
            isolation: None,
        }
    }

    pub(super) fn error(message: String) -> Self {
        ToolOutcome {
            content: format!("error: {message}"),
            is_error: true,
            status: ToolStatus::Error,
            summary: clip(&message, 200),
            isolation: None,
        }
    }

    pub(super) fn denied(message: String) -> Self {
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
    #[serde(default)]
    credentials: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PathArgs {
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RememberArgs {
    pub kind: String,
    pub content: String,
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RecallArgs {
    pub query: String,
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DecisionArgs {
    pub content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallArgs {
    reason: String,
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
    let channel = field("channel")
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    let detail = match call.name.as_str() {
        "run_command" | "host_command" => field("command"),
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
        "call_skipper" => field("reason"),
        _ => None,
    }
    .unwrap_or_else(|| call.arguments.clone());
    clip(&format!("{}{channel} {}", call.name, detail), 300)
}

pub(super) fn parse<T: for<'de> Deserialize<'de>>(
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
    if ctx.skipper {
        return super::skipper::execute(ctx, call).await;
    }
    let outcome = match call.name.as_str() {
        "run_command" => match parse::<CommandArgs>(call, r#"{"command": "ls -la"}"#) {
            Ok(args) => match credential_env(ctx, &args.credentials) {
                Ok(env) => run_command(ctx, &ctx.computer, &args.command, env).await,
                Err(e) => Ok(e),
            },
            Err(e) => Ok(e),
        },
        "read_file" => match parse::<PathArgs>(call, r#"{"path": "notes.md"}"#) {
            Ok(PathArgs { path: Some(path) }) => read_file(&ctx.files, &path).await,
            Ok(PathArgs { path: None }) => Ok(ToolOutcome::error(
                "read_file needs a path, such as {\"path\": \"notes.md\"}".into(),
            )),
            Err(e) => Ok(e),
        },
        "write_file" => {
            match parse::<WriteArgs>(call, r#"{"path": "plan.md", "content": "..."}"#) {
                Ok(args) => {
                    write_file(ctx, ctx.channel_id(), &ctx.files, &args.path, &args.content).await
                }
                Err(e) => Ok(e),
            }
        }
        "list_files" => match parse::<PathArgs>(call, r#"{"path": "/workspace"}"#) {
            Ok(args) => list_files(&ctx.files, args.path.as_deref().unwrap_or("/workspace")).await,
            Err(e) => Ok(e),
        },
        "call_skipper" => {
            match parse::<CallArgs>(call, r#"{"reason": "I need the ffmpeg package"}"#) {
                Ok(args) => call_skipper(ctx, &args.reason).await,
                Err(e) => Ok(e),
            }
        }
        name => match memory_tool(ctx, call).await {
            Some(outcome) => outcome,
            None => Ok(ToolOutcome::error(format!(
                "unknown tool {name:?}; the tools are {}",
                builtin_specs()
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        },
    };
    outcome.unwrap_or_else(ToolOutcome::from)
}

/// The memory tools, if `call` is one of them.
pub(super) async fn memory_tool(ctx: &ToolContext, call: &ToolCall) -> Option<Result<ToolOutcome>> {
    Some(match call.name.as_str() {
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
        _ => return None,
    })
}

/// The environment additions for the named credentials the channel was
/// granted, with the secret values (for scrubbing output). The agent only
/// ever names a credential; its value goes straight into the command.
fn credential_env(
    ctx: &ToolContext,
    names: &[String],
) -> std::result::Result<Vec<(String, String, String)>, ToolOutcome> {
    let mut env = Vec::new();
    for name in names {
        let granted = ctx
            .record
            .profile
            .capability_policy
            .credentials
            .iter()
            .find(|c| &c.name == name);
        let Some(grant) = granted else {
            return Err(ToolOutcome::denied(format!(
                "this channel has no credential named {name:?}; ask @skipper (call_skipper) to grant one"
            )));
        };
        let value = std::env::var(&grant.secret_ref).map_err(|_| {
            ToolOutcome::error(format!(
                "credential {name:?} is granted but its secret is not set on the server; tell a person"
            ))
        })?;
        env.push((grant.env_var.clone(), value, name.clone()));
    }
    Ok(env)
}

/// Runs a command in `computer`, with credentials passed as environment
/// variables and scrubbed from what comes back.
pub(super) async fn run_command(
    ctx: &ToolContext,
    computer: &Computer,
    command: &str,
    credentials: Vec<(String, String, String)>,
) -> Result<ToolOutcome> {
    if command.trim().is_empty() {
        return Ok(ToolOutcome::error(
            "run_command needs a non-empty command".into(),
        ));
    }
    let mut spec = CommandSpec::new(command).timeout(Some(COMMAND_TIMEOUT));
    for (var, value, _) in &credentials {
        spec = spec.env(var.clone(), value.clone());
    }
    // Started rather than run, so that a cancelled turn kills the command
    // and waits until it is gone: nothing it would still do happens after
    // the turn has ended.
    let running = ctx.executor.start(computer, spec).await?;
    let mut run = tokio::select! {
        result = running.wait() => result?,
        _ = ctx.cancel.cancelled() => running.kill().await?,
    };
    // A command may print a secret it was given; the model never sees it.
    for (_, value, name) in &credentials {
        if value.len() >= 4 {
            run.stdout = run
                .stdout
                .replace(value.as_str(), &format!("[credential {name}]"));
            run.stderr = run
                .stderr
                .replace(value.as_str(), &format!("[credential {name}]"));
        }
    }
    let status = match (run.exit_code, run.signal) {
        (Some(code), _) => format!("exit code {code}"),
        _ if run.timed_out => format!("killed after {} s (timeout)", COMMAND_TIMEOUT.as_secs()),
        _ if run.killed => "killed: the turn was cancelled".to_string(),
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
    // Files the command made become artifacts (of this thread, when the
    // command ran in the thread's own channel).
    if let Some(channel) = computer.channel
        && computer.is_confined()
    {
        let found = crate::world::scan_workspace(computer.workspace_dir());
        let thread = (channel == ctx.channel_id()).then_some(ctx.thread_id());
        ctx.rt
            .store
            .record_artifacts(
                channel,
                thread,
                ArtifactKind::File,
                &ctx.agent_handle,
                found,
                false,
            )
            .await?;
    }
    Ok(outcome)
}

pub(super) async fn read_file(files: &ConfinedFs, path: &str) -> Result<ToolOutcome> {
    let text = files.read(path, None).await?;
    let mut content = clip_bytes(&text.content, MAX_TOOL_OUTPUT);
    if text.truncated {
        content.push_str("\n[… the file goes on; read it by parts with a command such as sed -n]");
    }
    Ok(ToolOutcome::ok(
        content,
        format!("read {} lines of {}", text.end_line, text.path),
    ))
}

pub(super) async fn write_file(
    ctx: &ToolContext,
    channel: ChannelId,
    files: &ConfinedFs,
    path: &str,
    content: &str,
) -> Result<ToolOutcome> {
    let entry = files.write(path, content.as_bytes().to_vec()).await?;
    ctx.rt
        .store
        .record_artifacts(
            channel,
            (channel == ctx.channel_id()).then_some(ctx.thread_id()),
            ArtifactKind::File,
            &ctx.agent_handle,
            vec![entry.path.clone()],
            true,
        )
        .await?;
    let done = format!("wrote {} bytes to {}", content.len(), entry.path);
    Ok(ToolOutcome::ok(done.clone(), done))
}

pub(super) async fn list_files(files: &ConfinedFs, path: &str) -> Result<ToolOutcome> {
    let entries = files.list(path).await?;
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
        "workspace" if ctx.skipper => MemoryScope::Workspace,
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
        .rt
        .store
        .add_memory(NewMemory {
            channel_id: ctx.channel_id(),
            thread_id: Some(ctx.thread_id()),
            kind,
            content: content.to_string(),
            source: MemorySource::Message,
            source_message_id: Some(ctx.trigger()),
            author_type: if ctx.skipper {
                AuthorType::Skipper
            } else {
                AuthorType::Agent
            },
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
    let hits = ctx.rt.recall.recall(ctx.channel_id(), &q).await?;
    if hits.is_empty() {
        return Ok(ToolOutcome::ok("nothing found".into(), "0 hits".into()));
    }
    let lines: Vec<String> = hits.iter().map(super::context::provenance_line).collect();
    Ok(ToolOutcome::ok(
        clip_bytes(&lines.join("\n"), MAX_TOOL_OUTPUT),
        format!("{} hits", hits.len()),
    ))
}

/// Calls Skipper into the thread, within the rails: a chain of agents
/// waking agents stops at the hop limit, and a thread without a person in
/// it gets only so many agent-woken turns.
async fn call_skipper(ctx: &ToolContext, reason: &str) -> Result<ToolOutcome> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Ok(ToolOutcome::error(
            "call_skipper needs a reason: what you need and why".into(),
        ));
    }
    if let Some(refusal) = super::skipper::rails(ctx, ctx.turn.hop + 1).await? {
        return Ok(refusal);
    }
    let admission = ctx.rt.admission(&ctx.record, Some(ctx.thread_id())).await?;
    let escalated = ctx
        .rt
        .store
        .escalate(NewEscalation {
            thread_id: ctx.thread_id(),
            from_agent_id: Some(ctx.turn.agent_id),
            from_agent_handle: Some(ctx.agent_handle.clone()),
            from_user_id: None,
            reason: clip(reason, 2000),
            requested_by: ctx.turn.requested_by,
            hop: ctx.turn.hop + 1,
            admission,
        })
        .await?;
    ctx.rt.wake();
    let id = escalated.escalation.id;
    let (done, summary) = if escalated.added {
        (
            format!(
                "@skipper was already called into this thread (escalation {id}); your reason \
                 was added to that call, and it answers here after this turn. Tell the people \
                 what you asked for, then end your turn."
            ),
            format!("added to escalation {id}"),
        )
    } else {
        (
            format!(
                "@skipper has been called into this thread (escalation {id}); it answers here \
                 after this turn. Tell the people what you asked for, then end your turn."
            ),
            format!("escalation {id} opened"),
        )
    };
    Ok(ToolOutcome::ok(done, summary))
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

pub(super) fn clip_bytes(text: &str, max: usize) -> String {
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
