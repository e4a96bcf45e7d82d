//! A channel's MCP servers: list them with what they offer, add or replace
//! one, remove one, approve their tools' definitions. Only the Captain and
//! admins change them; anyone who may see the channel lists them.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use super::{ReadErrors, WriteErrors, channel_ref};
use crate::api::{McpApproveRequest, McpServerSettings, McpServerStatus};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_servers))
        .routes(handlers!(put_server, delete_server))
        .routes(handlers!(approve_tools))
}

/// The channel's MCP servers, each asked for its tools now.
#[utoipa::path(get, path = "/api/channels/{channel}/mcp-servers", tag = "mcp",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The servers", body = [McpServerStatus]), ReadErrors))]
async fn list_servers(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<Vec<McpServerStatus>>> {
    let servers = state
        .helm
        .mcp_servers(&caller.user, &channel_ref(&channel)?)
        .await?;
    Ok(Json(servers.into_iter().map(Into::into).collect()))
}

/// Adds the server (or replaces the one with that name); its tools reach
/// the agent from its next turn (the Captain and admins).
#[utoipa::path(put, path = "/api/channels/{channel}/mcp-servers/{name}", tag = "mcp",
    params(("channel" = String, Path, description = "The channel's name or id"),
        ("name" = String, Path, description = "The server's name")),
    request_body = McpServerSettings,
    responses((status = 200, description = "The server and what it offers", body = McpServerStatus), WriteErrors))]
async fn put_server(
    State(state): State<AppState>,
    caller: Caller,
    PathParams((channel, name)): PathParams<(String, String)>,
    Body(settings): Body<McpServerSettings>,
) -> ApiResult<Json<McpServerStatus>> {
    let server = settings.into_core(name)?;
    let status = state
        .helm
        .set_mcp_server(&caller.user, &channel_ref(&channel)?, server)
        .await?;
    Ok(Json(status.into()))
}

/// Removes the server, its approved definitions and its connection.
#[utoipa::path(delete, path = "/api/channels/{channel}/mcp-servers/{name}", tag = "mcp",
    params(("channel" = String, Path, description = "The channel's name or id"),
        ("name" = String, Path, description = "The server's name")),
    responses((status = 204, description = "Removed"), WriteErrors))]
async fn delete_server(
    State(state): State<AppState>,
    caller: Caller,
    PathParams((channel, name)): PathParams<(String, String)>,
) -> ApiResult<StatusCode> {
    state
        .helm
        .remove_mcp_server(&caller.user, &channel_ref(&channel)?, &name)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Approves (pins) the current definitions of the server's tools.
#[utoipa::path(post, path = "/api/channels/{channel}/mcp-servers/{name}/approve", tag = "mcp",
    params(("channel" = String, Path, description = "The channel's name or id"),
        ("name" = String, Path, description = "The server's name")),
    request_body = McpApproveRequest,
    responses((status = 200, description = "The server with its tools pinned", body = McpServerStatus), WriteErrors))]
async fn approve_tools(
    State(state): State<AppState>,
    caller: Caller,
    PathParams((channel, name)): PathParams<(String, String)>,
    Body(request): Body<McpApproveRequest>,
) -> ApiResult<Json<McpServerStatus>> {
    let status = state
        .helm
        .approve_mcp_tools(&caller.user, &channel_ref(&channel)?, &name, request.tools)
        .await?;
    Ok(Json(status.into()))
}
