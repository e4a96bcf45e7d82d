//! A channel's MCP servers' tools as [`Tool`]s, with their definitions
//! checked against what a person approved, and the status of each server
//! for the people who manage the channel.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::McpPin;
use super::config::{McpApproval, McpServer, tool_name};
use crate::error::Result;
use crate::exec::Executor;
use crate::model::{ApprovalAction, ChannelId, ChannelStatus, ToolStatus};
use crate::runtime::Runtime;
use crate::store::ChannelRecord;
use crate::tool::builtin::MAX_TOOL_OUTPUT;
use crate::tool::context::Decision;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, ToolSpec, clip, clip_bytes};

/// Where a tool's definition stands against its pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinState {
    /// Never approved: the first call asks.
    Unpinned,
    /// As approved.
    Pinned,
    /// Changed by its server since it was approved: the next call asks
    /// for an explicit decision, and the model sees the approved version.
    Changed,
}

/// One tool of a server, as the people managing a channel see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolStatus {
    /// Its name on the server.
    pub name: String,
    /// Its name in the channel's registry (`None`: not offered).
    pub tool: Option<String>,
    /// Why it is not offered, when it is not.
    pub withheld: Option<String>,
    /// Its description, as the server gives it now.
    pub description: String,
    /// Its input schema, as the server gives it now.
    pub input_schema: Value,
    /// Whether calls need approval.
    pub approval: McpApproval,
    /// Its definition against the approved one.
    pub pin: PinState,
}

/// A server of a channel, with whether it answers and its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerStatus {
    /// Its configuration (secrets appear only as references).
    pub server: McpServer,
    /// Whether Helm could reach it and list its tools.
    pub connected: bool,
    /// Why not, when it could not.
    pub error: Option<String>,
    /// Its tools.
    pub tools: Vec<McpToolStatus>,
}

/// The tools a channel's servers give a turn, and the servers that failed.
pub(crate) struct McpToolset {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) problems: Vec<(String, String)>,
}

/// One MCP tool in a channel's registry.
struct McpTool {
    /// What the model is offered (the approved definition when it changed).
    offered: ToolSpec,
    /// The definition the server gives now.
    live: ToolSpec,
    pin: PinState,
    server: McpServer,
    remote: String,
    mode: McpApproval,
    channel: ChannelId,
}

impl Runtime {
    /// The tools of `record`'s MCP servers for a turn.
    pub(crate) async fn mcp_toolset(&self, record: &ChannelRecord) -> McpToolset {
        let mut set = McpToolset {
            tools: Vec::new(),
            problems: Vec::new(),
        };
        if record.channel.status == ChannelStatus::Archived {
            return set;
        }
        for server in &record.profile.capability_policy.mcp_servers {
            let defs = match self.mcp_definitions(record, server).await {
                Ok(defs) => defs,
                Err(e) => {
                    set.problems.push((server.name.clone(), e.to_string()));
                    continue;
                }
            };
            for ((remote, description, schema), pin) in defs {
                let Some(name) = tool_name(&server.name, &remote) else {
                    continue;
                };
                if !server.offers(&remote) {
                    continue;
                }
                let live = ToolSpec {
                    name: name.clone(),
                    description,
                    input_schema: schema,
                    approval: ApprovalClass::PerCall,
                };
                if live.validate().is_err() {
                    continue;
                }
                let state = pin_state(&live, pin.as_ref());
                let offered = match (&state, &pin) {
                    (PinState::Changed, Some(pin)) => ToolSpec {
                        name,
                        description: format!(
                            "{} (Its server changed this tool since a person approved it; a call \
                             asks them to approve the change first.)",
                            pin.description
                        ),
                        input_schema: pin.input_schema.clone(),
                        approval: ApprovalClass::PerCall,
                    },
                    _ => live.clone(),
                };
                set.tools.push(Arc::new(McpTool {
                    offered,
                    live,
                    pin: state,
                    mode: server.approval_for(&remote),
                    server: server.clone(),
                    remote,
                    channel: record.channel.id,
                }));
            }
        }
        set
    }

    /// The servers of `record` with their tools; connects to each.
    pub(crate) async fn mcp_status(&self, record: &ChannelRecord) -> Vec<McpServerStatus> {
        let mut out = Vec::new();
        for server in &record.profile.capability_policy.mcp_servers {
            if record.channel.status == ChannelStatus::Archived {
                out.push(McpServerStatus {
                    server: server.clone(),
                    connected: false,
                    error: Some(format!(
                        "{} is archived; its servers start again when it is restored",
                        record.channel.name
                    )),
                    tools: Vec::new(),
                });
                continue;
            }
            match self.mcp_definitions(record, server).await {
                Ok(defs) => {
                    let tools = defs
                        .into_iter()
                        .map(|((remote, description, schema), pin)| {
                            let name = tool_name(&server.name, &remote);
                            let withheld = match &name {
                                None => Some(
                                    "its name is too long or has characters models do not accept"
                                        .to_string(),
                                ),
                                Some(_) if !server.offers(&remote) => {
                                    Some("left out by the allow or deny list".to_string())
                                }
                                Some(_) => None,
                            };
                            let spec = ToolSpec {
                                name: name.clone().unwrap_or_default(),
                                description: description.clone(),
                                input_schema: schema.clone(),
                                approval: ApprovalClass::PerCall,
                            };
                            McpToolStatus {
                                tool: name.filter(|_| withheld.is_none()),
                                withheld,
                                pin: pin_state(&spec, pin.as_ref()),
                                approval: server.approval_for(&remote),
                                name: remote,
                                description,
                                input_schema: schema,
                            }
                        })
                        .collect();
                    out.push(McpServerStatus {
                        server: server.clone(),
                        connected: true,
                        error: None,
                        tools,
                    });
                }
                Err(e) => out.push(McpServerStatus {
                    server: server.clone(),
                    connected: false,
                    error: Some(e.to_string()),
                    tools: Vec::new(),
                }),
            }
        }
        out
    }

    /// Each tool a server lists now (name, description, schema) with its pin.
    async fn mcp_definitions(
        &self,
        record: &ChannelRecord,
        server: &McpServer,
    ) -> Result<Vec<((String, String, Value), Option<McpPin>)>> {
        let computer = self.computers.computer_of(record).await?;
        let executor: Arc<dyn Executor> = self.computers.executor_of(&computer).await?;
        let listed = self
            .mcp
            .list_tools(record.channel.id, server, &computer, &executor)
            .await?;
        let mut pins: HashMap<String, McpPin> = self
            .store
            .mcp_pins(record.channel.id, &server.name)
            .await?
            .into_iter()
            .map(|p| (p.tool.clone(), p))
            .collect();
        Ok(listed
            .into_iter()
            .map(|t| {
                let name = t.name.to_string();
                let pin = pins.remove(&name);
                let description = t.description.map(|d| d.to_string()).unwrap_or_default();
                let schema = Value::Object((*t.input_schema).clone());
                ((name, description, schema), pin)
            })
            .collect())
    }
}

fn pin_state(live: &ToolSpec, pin: Option<&McpPin>) -> PinState {
    match pin {
        None => PinState::Unpinned,
        Some(p) if p.hash == live.definition_hash() => PinState::Pinned,
        Some(_) => PinState::Changed,
    }
}

impl McpTool {
    /// Asks for approval of the tool's definition when it is new or
    /// changed, and pins it when approved.
    async fn approve_definition(&self, cx: &ToolContext<'_>) -> Result<Option<ToolOutput>> {
        let (explicit, summary) = match self.pin {
            PinState::Pinned => return Ok(None),
            PinState::Unpinned => (
                false,
                format!(
                    "let the agent use {} of MCP server {}: {} Input: {}",
                    self.live.name,
                    self.server.name,
                    clip(&self.live.description, 300),
                    self.live.expected_input()
                ),
            ),
            PinState::Changed => (
                true,
                format!(
                    "MCP server {} changed the definition of {} since it was approved. Now: {} \
                     Input: {}",
                    self.server.name,
                    self.live.name,
                    clip(&self.live.description, 300),
                    self.live.expected_input()
                ),
            ),
        };
        let reason = format!(
            "MCP tool definitions are approved before first use and again after any change \
             (definition {})",
            &self.live.definition_hash()[..12]
        );
        match cx
            .approval(ApprovalAction::ToolDefinition, summary, reason, explicit)
            .await?
        {
            Decision::Refused(refusal) => Ok(Some(refusal)),
            Decision::Approved(approval) => {
                let by = match approval.decided_by {
                    Some(id) => cx.rt().store.user(id).await.ok().map(|u| u.name),
                    None => None,
                };
                cx.rt()
                    .store
                    .put_mcp_pin(
                        McpPin {
                            channel_id: self.channel,
                            server: self.server.name.clone(),
                            tool: self.remote.clone(),
                            hash: self.live.definition_hash(),
                            description: self.live.description.clone(),
                            input_schema: self.live.input_schema.clone(),
                            approval_id: Some(approval.id),
                            approved_by: approval.decided_by,
                            pinned_at: jiff::Timestamp::now(),
                        },
                        by,
                    )
                    .await?;
                Ok(None)
            }
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.offered
    }

    async fn call(&self, cx: &ToolContext<'_>, input: Value) -> Result<ToolOutput> {
        if let Some(refusal) = self.approve_definition(cx).await? {
            return Ok(refusal);
        }
        if self.mode == McpApproval::Ask
            && let Some(refusal) = cx
                .request_approval(
                    ApprovalAction::ToolCall,
                    self.summarize(&input),
                    format!(
                        "{} of MCP server {} asks before every call",
                        self.live.name, self.server.name
                    ),
                    false,
                )
                .await?
        {
            return Ok(refusal);
        }
        let arguments = match input {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let computer = cx.rt().computers.computer_of(cx.channel()).await?;
        let result = cx
            .rt()
            .mcp
            .call(
                self.channel,
                &self.server,
                &computer,
                cx.executor(),
                &self.remote,
                arguments,
            )
            .await?;
        let mut output = output_of(result);
        if self.server.is_stdio() {
            output.isolation = Some(computer.isolation.as_str().to_string());
        }
        Ok(output)
    }
}

/// A tool result as text for the model: text blocks as they are, other
/// blocks described, structured content as JSON when there is no text.
fn output_of(result: rmcp::model::CallToolResult) -> ToolOutput {
    let mut parts = Vec::new();
    for block in &result.content {
        match block.as_text() {
            Some(text) => parts.push(text.text.clone()),
            None => {
                let value = serde_json::to_value(block).unwrap_or(Value::Null);
                let kind = value
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("content");
                let mime = value
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default();
                let uri = value
                    .get("uri")
                    .or_else(|| value.pointer("/resource/uri"))
                    .and_then(Value::as_str)
                    .map(|u| format!(" {u}"))
                    .unwrap_or_default();
                let text = value
                    .pointer("/resource/text")
                    .and_then(Value::as_str)
                    .map(|t| format!(":\n{t}"))
                    .unwrap_or_default();
                parts.push(format!("[{kind}{mime}{uri}]{text}"));
            }
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = clip_bytes(&parts.join("\n"), MAX_TOOL_OUTPUT);
    if result.is_error == Some(true) {
        ToolOutput {
            content: format!("error: {text}"),
            is_error: true,
            status: ToolStatus::Error,
            summary: clip(&text, 200),
            isolation: None,
        }
    } else {
        let summary = clip(text.lines().next().unwrap_or(""), 200);
        ToolOutput::ok(text, summary)
    }
}
