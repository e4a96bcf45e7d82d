//! `1helm mcp`: this workspace as an MCP server over stdio (the default),
//! and `1helm mcp list|add|remove|approve` for a channel's own MCP servers.
//! Both work on a data directory.

use anyhow::Result;
use helm_core::Error;
use helm_core::mcp::server::HelmMcpServer;
use helm_core::mcp::{McpApproval, McpServer, McpSetting, McpTransport};
use helm_core::model::ChannelRef;
use rmcp::ServiceExt;

use super::Ctx;
use crate::cli::{McpArgs, McpCommand};
use crate::exit;
use crate::output::table;

pub async fn run(ctx: &Ctx, args: McpArgs) -> Result<i32> {
    match args.command.unwrap_or(McpCommand::Serve) {
        McpCommand::Serve => serve(ctx).await,
        McpCommand::List { channel } => list(ctx, &channel).await,
        McpCommand::Add {
            channel,
            name,
            url,
            headers,
            env,
            allow,
            deny,
            ask,
            command,
        } => {
            let transport = match (url, command.split_first()) {
                (Some(url), None) => McpTransport::Http {
                    url,
                    headers: settings("--header", &headers)?,
                },
                (None, Some((program, rest))) => McpTransport::Stdio {
                    command: program.clone(),
                    args: rest.to_vec(),
                    env: settings("--env", &env)?,
                },
                _ => {
                    return Err(Error::invalid(
                        "mcp add",
                        "give either --url URL (an HTTP server) or `-- COMMAND ARGS…` (a stdio \
                         server)",
                    )
                    .into());
                }
            };
            let server = McpServer {
                name,
                transport,
                allow,
                deny,
                approval: if ask {
                    McpApproval::Ask
                } else {
                    McpApproval::Auto
                },
                tool_approval: Default::default(),
            };
            let local = ctx.local("mcp add").await?;
            let status = local
                .helm()
                .set_mcp_server(local.actor(), &channel_ref(&channel)?, server)
                .await?;
            print_status(ctx, &[status])
        }
        McpCommand::Remove { channel, name } => {
            let local = ctx.local("mcp remove").await?;
            local
                .helm()
                .remove_mcp_server(local.actor(), &channel_ref(&channel)?, &name)
                .await?;
            ctx.out.print(&serde_json::json!({"removed": name}), || {
                format!("removed MCP server {name} from {channel}")
            })?;
            Ok(exit::OK)
        }
        McpCommand::Approve {
            channel,
            name,
            tools,
        } => {
            let local = ctx.local("mcp approve").await?;
            let status = local
                .helm()
                .approve_mcp_tools(
                    local.actor(),
                    &channel_ref(&channel)?,
                    &name,
                    (!tools.is_empty()).then_some(tools),
                )
                .await?;
            print_status(ctx, &[status])
        }
    }
}

fn channel_ref(raw: &str) -> Result<ChannelRef> {
    Ok(raw.parse::<ChannelRef>()?)
}

/// `NAME=VALUE`, `NAME=secret:VAR` or `NAME=TEMPLATE=secret:VAR`.
fn settings(flag: &'static str, raw: &[String]) -> Result<Vec<McpSetting>> {
    raw.iter()
        .map(|item| {
            let Some((name, rest)) = item.split_once('=') else {
                return Err(Error::invalid(flag, format!("{item:?} is not NAME=VALUE")).into());
            };
            Ok(match rest.rsplit_once("secret:") {
                Some((template, var)) => McpSetting {
                    name: name.to_string(),
                    value: template
                        .strip_suffix('=')
                        .filter(|t| !t.is_empty())
                        .map(str::to_string),
                    secret_ref: Some(var.to_string()),
                },
                None => McpSetting::literal(name, rest),
            })
        })
        .collect()
}

async fn list(ctx: &Ctx, channel: &str) -> Result<i32> {
    let local = ctx.local("mcp list").await?;
    let statuses = local
        .helm()
        .mcp_servers(local.actor(), &channel_ref(channel)?)
        .await?;
    print_status(ctx, &statuses)
}

fn print_status(ctx: &Ctx, statuses: &[helm_core::mcp::McpServerStatus]) -> Result<i32> {
    ctx.out.print(&statuses, || {
        if statuses.is_empty() {
            return "no MCP servers".to_string();
        }
        let mut text = String::new();
        for s in statuses {
            let state = match &s.error {
                None => "connected".to_string(),
                Some(e) => format!("unavailable: {e}"),
            };
            text.push_str(&format!("{} ({state})\n", s.server.name));
            let rows: Vec<Vec<String>> = s
                .tools
                .iter()
                .map(|t| {
                    vec![
                        t.tool.clone().unwrap_or_else(|| format!("({})", t.name)),
                        format!("{:?}", t.pin).to_lowercase(),
                        format!("{:?}", t.approval).to_lowercase(),
                        t.withheld.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                text.push_str(&table(&["TOOL", "DEFINITION", "CALLS", "NOTE"], &rows));
                text.push('\n');
            }
        }
        text
    })?;
    Ok(exit::OK)
}

/// Serves the workspace over stdio until the client closes it. Stdout is
/// the protocol's; everything else goes to stderr.
async fn serve(ctx: &Ctx) -> Result<i32> {
    let local = ctx.local("mcp").await?;
    let helm = local.helm().clone();
    // This process drives the turns the client's messages start.
    helm.start_runtime().await?;
    let server = HelmMcpServer::for_user(helm.clone(), local.actor().clone());
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
    let _ = running.waiting().await;
    helm.shutdown_runtime(false).await;
    Ok(exit::OK)
}
