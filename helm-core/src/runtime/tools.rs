//! The built-in tools of a channel agent, as function tools a model calls:
//! `run_command {command}`, `read_file {path}`, `write_file {path, content}`,
//! `list_files {path}`. All are rooted at the channel's `/workspace`.
//!
//! A tool never fails the turn: bad arguments, unknown tools and tool errors
//! go back to the model as a tool error (and into the journal), and the turn
//! continues.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::workspace_tools::WorkspaceTools;
use crate::model::ToolStatus;
use crate::provider::{ToolCall, ToolSpec};

/// How long a command may run before it is killed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// The most text of a file or output a tool returns to the model.
pub const MAX_TOOL_OUTPUT: usize = 32 * 1024;

/// The tool specifications offered to a channel agent.
pub fn builtin_specs() -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "A path in the workspace, relative or under /workspace."});
    vec![
        ToolSpec {
            name: "run_command".into(),
            description: "Run a shell command (bash) in /workspace, the channel's computer. \
                Returns the exit code and the tail of stdout and stderr."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command line."}},
                "required": ["command"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file from the workspace.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": path},
                "required": ["path"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "write_file".into(),
            description: "Create or replace a text file in the workspace (parent folders are \
                created)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": path, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "list_files".into(),
            description: "List a folder of the workspace (default: /workspace).".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": path},
                "additionalProperties": false
            }),
        },
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
    /// A file the call created or changed, as the agent sees it.
    pub changed_path: Option<String>,
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
            changed_path: None,
            isolation: None,
        }
    }

    fn error(message: String) -> Self {
        ToolOutcome {
            content: format!("error: {message}"),
            is_error: true,
            status: ToolStatus::Error,
            summary: clip(&message, 200),
            changed_path: None,
            isolation: None,
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
        _ => None,
    }
    .unwrap_or_else(|| call.arguments.clone());
    clip(&format!("{} {}", call.name, detail), 300)
}

fn parse<T: for<'de> Deserialize<'de>>(call: &ToolCall, expected: &str) -> Result<T, ToolOutcome> {
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

/// Runs one tool call against the channel's workspace.
pub async fn execute(tools: &WorkspaceTools, call: &ToolCall) -> ToolOutcome {
    match call.name.as_str() {
        "run_command" => match parse::<CommandArgs>(call, r#"{"command": "ls -la"}"#) {
            Ok(args) => run_command(tools, &args.command).await,
            Err(e) => e,
        },
        "read_file" => match parse::<PathArgs>(call, r#"{"path": "notes.md"}"#) {
            Ok(PathArgs { path: Some(path) }) => match tools.read_file(&path).await {
                Ok(text) => {
                    let shown = clip_bytes(&text, MAX_TOOL_OUTPUT);
                    let summary = format!("read {} bytes", text.len());
                    ToolOutcome::ok(shown, summary)
                }
                Err(e) => ToolOutcome::error(e.to_string()),
            },
            Ok(PathArgs { path: None }) => ToolOutcome::error(
                "read_file needs a path, such as {\"path\": \"notes.md\"}".into(),
            ),
            Err(e) => e,
        },
        "write_file" => {
            match parse::<WriteArgs>(call, r#"{"path": "plan.md", "content": "..."}"#) {
                Ok(args) => match tools.write_file(&args.path, &args.content).await {
                    Ok(visible) => {
                        let mut outcome = ToolOutcome::ok(
                            format!("wrote {} bytes to {visible}", args.content.len()),
                            format!("wrote {} bytes to {visible}", args.content.len()),
                        );
                        outcome.changed_path = Some(visible);
                        outcome
                    }
                    Err(e) => ToolOutcome::error(e.to_string()),
                },
                Err(e) => e,
            }
        }
        "list_files" => match parse::<PathArgs>(call, r#"{"path": "/workspace"}"#) {
            Ok(args) => match tools
                .list_files(args.path.as_deref().unwrap_or("/workspace"))
                .await
            {
                Ok(entries) => {
                    let summary = format!("{} entries", entries.len());
                    let listing = if entries.is_empty() {
                        "(empty)".to_string()
                    } else {
                        entries.join("\n")
                    };
                    ToolOutcome::ok(clip_bytes(&listing, MAX_TOOL_OUTPUT), summary)
                }
                Err(e) => ToolOutcome::error(e.to_string()),
            },
            Err(e) => e,
        },
        other => ToolOutcome::error(format!(
            "unknown tool {other:?}; the tools are run_command, read_file, write_file, list_files"
        )),
    }
}

async fn run_command(tools: &WorkspaceTools, command: &str) -> ToolOutcome {
    if command.trim().is_empty() {
        return ToolOutcome::error("run_command needs a non-empty command".into());
    }
    match tools.run_command(command, COMMAND_TIMEOUT).await {
        Ok(run) => {
            let mut content = String::new();
            let code = match run.exit_code {
                Some(code) => format!("exit code {code}"),
                None if run.timed_out => {
                    format!("killed after {} s (timeout)", COMMAND_TIMEOUT.as_secs())
                }
                None => "killed by a signal".to_string(),
            };
            content.push_str(&code);
            if run.truncated {
                content.push_str(" (output truncated to its tail)");
            }
            if !run.stdout.is_empty() {
                content.push_str("\nstdout:\n");
                content.push_str(&run.stdout);
            }
            if !run.stderr.is_empty() {
                content.push_str("\nstderr:\n");
                content.push_str(&run.stderr);
            }
            let failed = run.exit_code != Some(0);
            let mut outcome = ToolOutcome::ok(content, code);
            outcome.isolation = Some(run.isolation);
            if failed {
                outcome.is_error = true;
                outcome.status = ToolStatus::Error;
            }
            outcome
        }
        Err(e) => ToolOutcome::error(e.to_string()),
    }
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
