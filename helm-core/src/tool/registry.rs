//! The [`ToolRegistry`]: the tools of one channel's turn — built-in or
//! Skipper's, the channel's MCP servers', and those an embedding application
//! registered — which is all the turn engine sees. It offers their schemas
//! to the model, dispatches calls by name, checks arguments and the approval
//! class before a tool runs, and journals every call as a tool action.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Tool;
use super::context::ToolContext;
use super::output::{ToolOutput, clip};
use super::spec::{ApprovalClass, ToolSpec};
use crate::error::{Error, Result};
use crate::model::{ApprovalAction, ToolStatus};
use crate::provider::ToolCall;
use crate::store::{NewToolAction, ToolActionOutcome};

/// Where a tool of a registry comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolSource {
    /// A channel agent's own tools (its computer, memory, `call_skipper`).
    Builtin,
    /// Skipper's tools.
    Skipper,
    /// A tool of one of the channel's MCP servers.
    Mcp {
        /// The server's name in the channel's settings.
        server: String,
    },
    /// Registered by the embedding application (Rust or Python).
    Embedder,
}

/// A tool with where it comes from.
#[derive(Clone)]
pub struct RegisteredTool {
    /// Where it comes from.
    pub source: ToolSource,
    /// The tool.
    pub tool: Arc<dyn Tool>,
}

/// The tools of one channel's turn, in the order they are offered.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
    index: HashMap<String, usize>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Adds a tool. Its spec must be valid, and its name free.
    pub fn insert(&mut self, source: ToolSource, tool: Arc<dyn Tool>) -> Result<()> {
        let spec = tool.spec();
        spec.validate()?;
        if self.index.contains_key(&spec.name) {
            return Err(Error::Conflict(format!(
                "a tool named {} is already offered in this channel; choose another name",
                spec.name
            )));
        }
        self.index.insert(spec.name.clone(), self.tools.len());
        self.tools.push(RegisteredTool { source, tool });
        Ok(())
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The tools, in the order they are offered.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|t| t.tool.spec().name.as_str())
            .collect()
    }

    /// The function tools offered to the model.
    pub fn functions(&self) -> Vec<crate::provider::ToolSpec> {
        self.tools
            .iter()
            .map(|t| t.tool.spec().to_function())
            .collect()
    }

    /// A short account of a call's input for the journal, readable even
    /// when the arguments are not valid JSON.
    pub fn input_summary(&self, call: &ToolCall) -> String {
        match (self.get(&call.name), parse_arguments(&call.arguments)) {
            (Some(t), Ok(input)) => clip(&t.tool.summarize(&input), 300),
            (None, Ok(input)) => clip(&summarize_input(&call.name, &input), 300),
            (_, Err(_)) => clip(&format!("{} {}", call.name, call.arguments), 300),
        }
    }

    /// Runs one call through its tool: parses the arguments, checks them,
    /// asks for approval when the tool's class says so, then calls it. A
    /// tool never fails the turn: every failure comes back as a tool error
    /// (or a refusal) for the model.
    pub(crate) async fn dispatch(&self, cx: &ToolContext<'_>, call: &ToolCall) -> ToolOutput {
        let Some(entry) = self.get(&call.name) else {
            return ToolOutput::error(format!(
                "unknown tool {:?}; the tools are {}",
                call.name,
                self.names().join(", ")
            ));
        };
        let tool = &entry.tool;
        let spec = tool.spec();
        let input = match parse_arguments(&call.arguments) {
            Ok(input) => input,
            Err(e) => {
                return ToolOutput::error(format!(
                    "invalid arguments for {}: {e}; expected JSON like {}",
                    spec.name,
                    spec.expected_input()
                ));
            }
        };
        if let Err(e) = tool.check(&input) {
            return match e {
                Error::Invalid { reason, .. } => {
                    ToolOutput::error(format!("invalid arguments for {}: {reason}", spec.name))
                }
                other => ToolOutput::from(other),
            };
        }
        match approve(cx, spec, &tool.summarize(&input)).await {
            Ok(None) => {}
            Ok(Some(refusal)) => return refusal,
            Err(e) => return ToolOutput::from(e),
        }
        tool.call(cx, input).await.unwrap_or_else(ToolOutput::from)
    }

    /// [`ToolRegistry::dispatch`], journaled as a tool action of the turn
    /// (and so audited), ending `cancelled` if the turn is cancelled first.
    /// `step` is which of the turn's model calls asked for it.
    pub(crate) async fn run_journaled(
        &self,
        cx: &ToolContext<'_>,
        call: &ToolCall,
        step: u32,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput> {
        let turn = cx.turn();
        let store = &cx.rt().store;
        let action = store
            .start_tool_action(NewToolAction {
                agent_id: turn.agent_id,
                channel_id: turn.channel_id,
                thread_id: Some(turn.thread_id),
                turn_id: Some(turn.id),
                step,
                tool: call.name.clone(),
                input_summary: self.input_summary(call),
            })
            .await?;
        let started = Instant::now();
        let running = self.dispatch(cx, call);
        tokio::pin!(running);
        let (outcome, cut_short) = tokio::select! {
            biased;
            outcome = &mut running => (Some(outcome), false),
            // Cancelled: the tool sees it too (a command is killed and
            // waited for), so it gets a moment to end and report; one that
            // does not is dropped, which stops it as well.
            _ = cancel.cancelled() => (
                tokio::time::timeout(TOOL_STOP_GRACE, &mut running).await.ok(),
                true,
            ),
        };
        let duration_ms = started.elapsed().as_millis() as i64;
        let output = match outcome {
            Some(mut output) if cut_short => {
                output.status = ToolStatus::Cancelled;
                output.summary = format!("cancelled with its turn: {}", output.summary);
                output
            }
            Some(output) => output,
            None => ToolOutput {
                content: "cancelled".into(),
                is_error: true,
                status: ToolStatus::Cancelled,
                summary: "cancelled with its turn".into(),
                isolation: None,
            },
        };
        store
            .finish_tool_action(
                action.id,
                ToolActionOutcome {
                    status: output.status,
                    result_summary: output.summary.clone(),
                    duration_ms: Some(duration_ms),
                    isolation: output.isolation.clone(),
                    output: kept_output(&output),
                },
            )
            .await?;
        Ok(output)
    }
}

/// What of a tool's output is kept with its journal line: none when it
/// said no more than its summary (a file written, a memory kept).
fn kept_output(output: &ToolOutput) -> Option<String> {
    let content = output.content.trim_end();
    (!content.is_empty() && content != output.summary.trim_end())
        .then(|| super::clip_bytes(content, crate::model::MAX_KEPT_OUTPUT))
}

/// How long a cancelled tool call gets to stop by itself and report.
const TOOL_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Asks for the approval a tool's class calls for, before it runs.
async fn approve(
    cx: &ToolContext<'_>,
    spec: &ToolSpec,
    summary: &str,
) -> Result<Option<ToolOutput>> {
    let reason = format!("{}: {}", spec.name, clip(&spec.description, 300));
    match spec.approval {
        ApprovalClass::None | ApprovalClass::PerCall => Ok(None),
        ApprovalClass::Policy(action) => {
            cx.approval_by_policy(cx.channel_id(), action, summary, reason)
                .await
        }
        ApprovalClass::Always => {
            cx.request_approval(ApprovalAction::ToolCall, summary, reason, false)
                .await
        }
    }
}

/// The arguments as JSON (an empty text is `{}`); they must be an object.
fn parse_arguments(text: &str) -> std::result::Result<Value, String> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("the arguments must be a JSON object".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The journal line of a call: its name, the channel it names, and its
/// most telling argument (a command, a path and size, a query, a text).
/// The web UI reads a file tool's path from it (`write_file docs/a.md (12
/// bytes)`, `write_file [other] docs/a.md (12 bytes)`; `lib/changes.ts`) to
/// show the file's change live, so that form is kept (a test pins it).
pub fn summarize_input(name: &str, input: &Value) -> String {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    let channel = field("channel")
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    let detail = if let Some(command) = field("command") {
        command.to_string()
    } else if let (Some(path), Some(content)) = (field("path"), field("content")) {
        format!("{path} ({} bytes)", content.len())
    } else if let (Some(kind), Some(content)) = (field("kind"), field("content")) {
        format!("{kind}: {content}")
    } else if let Some(text) = ["path", "query", "content", "reason", "outcome", "question"]
        .iter()
        .find_map(|k| field(k))
    {
        text.to_string()
    } else if name.ends_with("_files") || name == "read_file" {
        "/workspace".to_string()
    } else {
        let compact = input.to_string();
        if compact == "{}" {
            String::new()
        } else {
            compact
        }
    };
    format!("{name}{channel} {detail}").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::summarize_input;
    use serde_json::json;

    /// The form the web UI reads a written file's path from.
    #[test]
    fn a_file_write_names_its_path_and_size() {
        let input = json!({"path": "docs/a.md", "content": "hello world!"});
        assert_eq!(
            summarize_input("write_file", &input),
            "write_file docs/a.md (12 bytes)"
        );
        let elsewhere = json!({"channel": "ops", "path": "a.md", "content": ""});
        assert_eq!(
            summarize_input("write_file", &elsewhere),
            "write_file [ops] a.md (0 bytes)"
        );
    }
}
