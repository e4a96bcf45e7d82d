//! Skipper adding and removing a channel's MCP servers, as a person asks in
//! plain language. Adding one needs approval by policy (`mcp_server`): a
//! server runs code in the channel's computer or gets the host's secrets.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::target_to_act;
use crate::error::Result;
use crate::mcp::{McpApproval, McpServer, McpSetting, McpTransport};
use crate::model::ApprovalAction;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// The channel whose agent gets the server's tools.
    channel: String,
    /// A short name for the server, such as `files` or `github`.
    name: String,
    /// stdio: the program to run inside the channel's computer, such as `npx`.
    #[serde(default)]
    command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    args: Vec<String>,
    /// stdio: environment variables it gets (nothing else of the host's).
    #[serde(default)]
    env: Vec<McpSetting>,
    /// HTTP: the server's streamable-HTTP endpoint.
    #[serde(default)]
    url: Option<String>,
    /// HTTP: headers Helm adds to every request; secrets by secret_ref only.
    #[serde(default)]
    headers: Vec<McpSetting>,
    /// Only these of its tools (names or * globs); default all.
    #[serde(default)]
    allow: Vec<String>,
    /// Never these of its tools (applied last).
    #[serde(default)]
    deny: Vec<String>,
    /// Whether every call asks a person first (default auto).
    #[serde(default)]
    approval: Option<McpApproval>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RemoveArgs {
    /// The channel.
    channel: String,
    /// The server's name in it.
    name: String,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "add_mcp_server",
            "Give a channel's agent the tools of an MCP server: a stdio program run inside the \
             channel's computer (command, args, env) or a streamable-HTTP server (url, \
             headers). Secrets go by reference (secret_ref names the server's secret), never \
             as text. Needs approval by policy; each tool's definition is approved on first \
             use.",
            ApprovalClass::PerCall,
            add,
        )),
        Arc::new(TypedTool::new(
            "remove_mcp_server",
            "Take an MCP server's tools away from a channel's agent.",
            ApprovalClass::None,
            remove,
        )),
    ]
}

async fn add(cx: &ToolContext<'_>, args: AddArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, Some(&args.channel)).await?;
    let transport = match (args.command, args.url) {
        (Some(command), None) => McpTransport::Stdio {
            command,
            args: args.args,
            env: args.env,
        },
        (None, Some(url)) => McpTransport::Http {
            url,
            headers: args.headers,
        },
        _ => {
            return Ok(ToolOutput::error(
                "give either command (a stdio server) or url (an HTTP server)",
            ));
        }
    };
    let server = McpServer {
        name: args.name,
        transport,
        allow: args.allow,
        deny: args.deny,
        approval: args.approval.unwrap_or_default(),
        tool_approval: BTreeMap::new(),
    };
    server.validate()?;
    let description = crate::helm::describe_mcp_server(&server);
    if let Some(refusal) = cx
        .approval_by_policy(
            record.channel.id,
            ApprovalAction::McpServer,
            format!("add {description} to {}", record.channel.name),
            format!("asked from thread {}", cx.thread_id()),
        )
        .await?
    {
        return Ok(refusal);
    }
    crate::helm::put_mcp_server(
        cx.rt(),
        &record,
        server,
        "@skipper",
        cx.person(),
        Some((cx.channel_id(), cx.thread_id())),
    )
    .await?;
    let done = format!(
        "added {description} to {}; its tools reach {} from its next turn",
        record.channel.name, record.agent.handle
    );
    Ok(ToolOutput::ok(done.clone(), done))
}

async fn remove(cx: &ToolContext<'_>, args: RemoveArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, Some(&args.channel)).await?;
    crate::helm::remove_mcp_server(
        cx.rt(),
        &record,
        &args.name,
        "@skipper",
        cx.person(),
        Some((cx.channel_id(), cx.thread_id())),
    )
    .await?;
    let done = format!(
        "removed MCP server {} from {}",
        args.name, record.channel.name
    );
    Ok(ToolOutput::ok(done.clone(), done))
}
