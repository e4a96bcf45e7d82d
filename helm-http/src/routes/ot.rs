//! The Open Terminal protocol, served per channel under
//! `/api/channels/{channel}/ot/`: an Open Terminal client (Open WebUI's
//! "Open Terminal" integration, scripts written for it) pointed at that URL
//! with the channel's key runs commands, manages files and opens terminals
//! in the channel's computer, confined and isolated as the agent is.
//!
//! Shapes follow the protocol: `POST /execute` answers
//! `{id, command, status, exit_code, output: [{type, data}], truncated,
//! next_offset}`, `GET /execute/{id}/status?offset=&wait=&tail=` pages the
//! same log, terminals are `{id, created_at, pid}` and their WebSocket
//! authenticates with its first message, `{"type":"auth","token":KEY}`.
//! Errors keep Helm's `{code, message}` shape. Files are in `ot_files`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use helm_core::exec::CommandSpec;
use helm_core::model::ChannelRef;
use serde::Deserialize;

use super::terminals::{CLOSE_SIGNED_OUT, MAX_INPUT_FRAME, Viewer, pump};
use super::{WriteErrors, channel_ref};
use crate::api::{
    OtConfig, OtExecQuery, OtExecRequest, OtInputRequest, OtKillQuery, OtOutput, OtProcess,
    OtProcessInfo, OtStatus, OtStatusQuery, OtTerminal,
};
use crate::caller::OtCaller;
use crate::commands::{CommandStatus, Tracked};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams, ProtocolQuery};
use crate::state::AppState;

/// How long an Open Terminal command may run before it is killed.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(3600);
/// Output kept inside the executor per stream; the registry keeps the log.
const COMMAND_OUTPUT: usize = 256 * 1024;
/// How long a terminal WebSocket waits for its authentication message.
const AUTH_WAIT: Duration = Duration::from_secs(10);
/// The workspace: the protocol's home and working directory.
const HOME: &str = "/workspace";
/// Ctrl-D: the end of input at a terminal.
const END_OF_INPUT: char = '\u{4}';
/// Close code: no such terminal (as the protocol has it).
const CLOSE_NOT_FOUND: u16 = 4004;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(health))
        .routes(handlers!(config))
        .routes(handlers!(list_commands, execute))
        .routes(handlers!(command_status))
        .routes(handlers!(command_input))
        .routes(handlers!(kill_command))
        .routes(handlers!(list_ot_terminals, create_terminal))
        .routes(handlers!(terminal, delete_terminal))
        .route_layer(axum::middleware::from_fn(super::ot_errors::protocol_errors))
}

/// Whether the server is up (no key needed; says nothing about the channel).
#[utoipa::path(get, path = "/api/channels/{channel}/ot/health", tag = "open-terminal",
    security(()),
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "Up", body = OtStatus)))]
async fn health(PathParams(_channel): PathParams<String>) -> Json<OtStatus> {
    Json(OtStatus {
        status: "ok".into(),
    })
}

/// What this server offers (no key needed).
#[utoipa::path(get, path = "/api/channels/{channel}/ot/api/config", tag = "open-terminal",
    security(()),
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "Features", body = OtConfig)))]
async fn config(PathParams(_channel): PathParams<String>) -> Json<OtConfig> {
    let features = BTreeMap::from([
        ("terminal".to_string(), true),
        ("notebooks".to_string(), false),
        ("system".to_string(), false),
    ]);
    Json(OtConfig { features })
}

fn process(tracked: &Tracked, offset: u64, tail: Option<u32>) -> OtProcess {
    let page = tracked.page(offset, tail.map(|t| t as usize));
    OtProcess {
        id: tracked.id.clone(),
        command: tracked.command.clone(),
        cwd: None,
        status: page.status.as_str().to_string(),
        exit_code: page.exit_code,
        output: page
            .entries
            .into_iter()
            .map(|e| OtOutput {
                stream: e.stream.to_string(),
                data: e.data,
            })
            .collect(),
        truncated: page.truncated,
        next_offset: page.next_offset,
    }
}

/// Seconds to wait, from a query (0 to 300).
fn wait_for(wait: Option<f64>) -> ApiResult<Option<Duration>> {
    match wait {
        None => Ok(None),
        Some(w) if (0.0..=300.0).contains(&w) => Ok(Some(Duration::from_secs_f64(w))),
        // 422, as the protocol answers a query out of its range.
        Some(_) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_query",
            "wait is a number of seconds from 0 to 300",
        )),
    }
}

/// The commands started here that are running or recently finished.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/execute", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "Commands", body = [OtProcessInfo]), WriteErrors))]
async fn list_commands(
    State(state): State<AppState>,
    caller: OtCaller,
) -> ApiResult<Json<Vec<OtProcessInfo>>> {
    let commands = state.commands.list(caller.channel.channel.id);
    Ok(Json(
        commands
            .iter()
            .map(|t| {
                let (status, exit_code) = t.status();
                OtProcessInfo {
                    id: t.id.clone(),
                    command: t.command.clone(),
                    status: status.as_str().to_string(),
                    exit_code,
                }
            })
            .collect(),
    ))
}

/// Starts a command in the background and answers with its id (and, with
/// `wait`, its output once it ends or the wait is over).
#[utoipa::path(post, path = "/api/channels/{channel}/ot/execute", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtExecQuery),
    request_body = OtExecRequest,
    responses((status = 200, description = "The command", body = OtProcess), WriteErrors))]
async fn execute(
    State(state): State<AppState>,
    caller: OtCaller,
    ProtocolQuery(query): ProtocolQuery<OtExecQuery>,
    Body(request): Body<OtExecRequest>,
) -> ApiResult<Json<OtProcess>> {
    let wait = wait_for(query.wait)?;
    let channel = caller.channel.channel.id;
    let mut spec = CommandSpec::new(request.command.clone())
        .timeout(Some(COMMAND_TIMEOUT))
        .output_limit(COMMAND_OUTPUT);
    let asked = request.cwd.filter(|c| !c.trim().is_empty());
    let cwd = workspace_path(asked.as_deref());
    if let Some(asked) = asked {
        spec = spec.cwd(asked);
    }
    for (name, value) in request.env.unwrap_or_default() {
        spec = spec.env(name, value);
    }
    state.commands.reserve(channel)?;
    let handle = state
        .helm
        .start_command(&caller.user, &ChannelRef::Id(channel), spec)
        .await?;
    let tracked = state.commands.track(channel, request.command, handle);
    if let Some(wait) = wait {
        tracked.wait(wait).await;
    }
    Ok(Json(OtProcess {
        cwd: Some(cwd),
        ..process(&tracked, 0, query.tail)
    }))
}

/// The absolute path a command's `cwd` names, as the protocol answers it:
/// relative to the workspace, `.` and `..` folded (the executor confines
/// the real directory; this only says which one was asked for).
fn workspace_path(asked: Option<&str>) -> String {
    let asked = asked.unwrap_or(HOME);
    let joined = if asked.starts_with('/') {
        asked.to_string()
    } else {
        format!("{HOME}/{asked}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// A command's status and its output after `offset` (reads do not consume
/// output; each reader keeps its own offset).
#[utoipa::path(get, path = "/api/channels/{channel}/ot/execute/{id}/status", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"),
           ("id" = String, Path, description = "The command's id"), OtStatusQuery),
    responses((status = 200, description = "The command", body = OtProcess), WriteErrors))]
async fn command_status(
    State(state): State<AppState>,
    caller: OtCaller,
    PathParams((_, id)): PathParams<(String, String)>,
    ProtocolQuery(query): ProtocolQuery<OtStatusQuery>,
) -> ApiResult<Json<OtProcess>> {
    let wait = wait_for(query.wait)?;
    let tracked = state.commands.get(caller.channel.channel.id, &id)?;
    if let Some(wait) = wait {
        tracked.wait(wait).await;
    }
    Ok(Json(process(
        &tracked,
        query.offset.unwrap_or(0),
        query.tail,
    )))
}

/// Writes to a running command's stdin.
#[utoipa::path(post, path = "/api/channels/{channel}/ot/execute/{id}/input", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"),
           ("id" = String, Path, description = "The command's id")),
    request_body = OtInputRequest,
    responses((status = 200, description = "Written", body = OtStatus), WriteErrors))]
async fn command_input(
    State(state): State<AppState>,
    caller: OtCaller,
    PathParams((_, id)): PathParams<(String, String)>,
    Body(request): Body<OtInputRequest>,
) -> ApiResult<Json<OtStatus>> {
    let tracked = state.commands.get(caller.channel.channel.id, &id)?;
    // The protocol answers input to an ended command with 400.
    if tracked.status().0 != CommandStatus::Running {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "command_ended",
            format!("command {id} has already exited"),
        ));
    }
    // The protocol runs commands in a terminal, where Ctrl-D ends the
    // input; Helm's run without one, so Ctrl-D at the end of an input
    // closes the command's stdin, and a client sees the same.
    let input = unescape(&request.input);
    let data = input.trim_end_matches(END_OF_INPUT);
    if !data.is_empty() {
        tracked.write_stdin(data.as_bytes()).await?;
    }
    if data.len() < input.len() {
        tracked.close_stdin().await?;
    }
    Ok(Json(OtStatus {
        status: "ok".into(),
    }))
}

/// The input with its backslash escapes (`\\n`, `\\x03`, `\\u00e9`, ...)
/// turned into the characters they name, as the protocol does with Python's
/// `unicode_escape` (models often write control characters that way). An
/// escape it does not know stays as it is.
fn unescape(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&next) = chars.peek() else {
            out.push('\\');
            break;
        };
        let simple = match next {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            _ => None,
        };
        if let Some(simple) = simple {
            chars.next();
            out.push(simple);
            continue;
        }
        if next == '\n' {
            // A backslash before a line break joins the lines.
            chars.next();
            continue;
        }
        let (radix, digits) = match next {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            _ => {
                out.push('\\');
                continue;
            }
        };
        let mut lookahead = chars.clone();
        if radix == 16 {
            lookahead.next();
        }
        let mut code = String::new();
        while code.len() < digits {
            match lookahead.peek() {
                Some(d) if d.is_digit(radix) => {
                    code.push(*d);
                    lookahead.next();
                }
                _ => break,
            }
        }
        let complete = radix == 8 || code.len() == digits;
        match u32::from_str_radix(&code, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) if complete && !code.is_empty() => {
                out.push(decoded);
                chars = lookahead;
            }
            _ => out.push('\\'),
        }
    }
    out
}

/// Kills a command and everything it started.
#[utoipa::path(delete, path = "/api/channels/{channel}/ot/execute/{id}", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"),
           ("id" = String, Path, description = "The command's id"), OtKillQuery),
    responses((status = 200, description = "Killed", body = OtStatus), WriteErrors))]
async fn kill_command(
    State(state): State<AppState>,
    caller: OtCaller,
    PathParams((_, id)): PathParams<(String, String)>,
    ProtocolQuery(_query): ProtocolQuery<OtKillQuery>,
) -> ApiResult<Json<OtStatus>> {
    let tracked = state.commands.get(caller.channel.channel.id, &id)?;
    tracked.kill().await?;
    Ok(Json(OtStatus {
        status: "killed".into(),
    }))
}

fn ot_terminal(info: &helm_core::exec::TerminalInfo, pid: u32) -> OtTerminal {
    OtTerminal {
        id: info.id.to_string(),
        created_at: info.started.to_string(),
        pid,
    }
}

/// The channel's open terminals.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/api/terminals", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "Terminals", body = [OtTerminal]), WriteErrors))]
async fn list_ot_terminals(
    State(state): State<AppState>,
    caller: OtCaller,
) -> ApiResult<Json<Vec<OtTerminal>>> {
    let infos = state
        .helm
        .channel_terminals(&caller.user, &ChannelRef::Id(caller.channel.channel.id))
        .await?;
    let terminals = infos
        .iter()
        .filter_map(|info| {
            let session = state.helm.terminals().get(info.id).ok()?;
            Some(ot_terminal(info, session.pid()))
        })
        .collect();
    Ok(Json(terminals))
}

/// Opens a terminal (24×80); connect to its WebSocket to use it. A
/// terminal opened here closes when its WebSocket does.
#[utoipa::path(post, path = "/api/channels/{channel}/ot/api/terminals", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The terminal", body = OtTerminal), WriteErrors))]
async fn create_terminal(
    State(state): State<AppState>,
    caller: OtCaller,
) -> ApiResult<Json<OtTerminal>> {
    let session = state
        .helm
        .open_terminal(
            &caller.user,
            &ChannelRef::Id(caller.channel.channel.id),
            Default::default(),
        )
        .await?;
    state.commands.add_terminal(session.id());
    Ok(Json(ot_terminal(&session.info(), session.pid())))
}

/// A terminal's id, from the path.
fn terminal_id(raw: &str) -> ApiResult<u64> {
    raw.parse().map_err(|_| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("terminal {raw} not found"),
        )
    })
}

/// A terminal: its description (with the key), or, opened as a WebSocket,
/// the terminal itself. The socket's first message must be
/// `{"type":"auth","token":KEY}`; then binary frames carry bytes both ways
/// and `{"type":"resize","rows":R,"cols":C}` resizes.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/api/terminals/{id}", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"),
           ("id" = String, Path, description = "The terminal's id")),
    responses((status = 200, description = "The terminal", body = OtTerminal),
              (status = 101, description = "Switching to the terminal's WebSocket"), WriteErrors))]
async fn terminal(
    State(state): State<AppState>,
    PathParams((channel, id)): PathParams<(String, String)>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    request: axum::extract::Request,
) -> ApiResult<Response> {
    let channel = channel_ref(&channel)?;
    if let Ok(upgrade) = upgrade {
        return Ok(upgrade
            .max_message_size(MAX_INPUT_FRAME)
            .on_upgrade(move |socket| terminal_socket(socket, state, channel, id))
            .into_response());
    }
    let (mut parts, _) = request.into_parts();
    let caller = <OtCaller as axum::extract::FromRequestParts<AppState>>::from_request_parts(
        &mut parts, &state,
    )
    .await?;
    let session = state.helm.terminal(&caller.user, terminal_id(&id)?).await?;
    if session.channel() != Some(caller.channel.channel.id) {
        return Err(helm_core::Error::not_found("terminal", id).into());
    }
    Ok(Json(ot_terminal(&session.info(), session.pid())).into_response())
}

/// Closes a terminal.
#[utoipa::path(delete, path = "/api/channels/{channel}/ot/api/terminals/{id}", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"),
           ("id" = String, Path, description = "The terminal's id")),
    responses((status = 200, description = "Deleted", body = OtStatus), WriteErrors))]
async fn delete_terminal(
    State(state): State<AppState>,
    caller: OtCaller,
    PathParams((_, id)): PathParams<(String, String)>,
) -> ApiResult<Json<OtStatus>> {
    let id = terminal_id(&id)?;
    let session = state.helm.terminal(&caller.user, id).await?;
    if session.channel() != Some(caller.channel.channel.id) {
        return Err(helm_core::Error::not_found("terminal", id).into());
    }
    state.commands.take_terminal(id);
    state.helm.close_terminal(&caller.user, id).await?;
    Ok(Json(OtStatus {
        status: "deleted".into(),
    }))
}

/// The authentication message.
#[derive(Deserialize)]
struct AuthMessage {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    token: String,
}

async fn close(mut socket: WebSocket, code: u16, reason: &'static str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        })))
        .await;
}

/// The terminal WebSocket: authenticate with the first message, then pump.
async fn terminal_socket(mut socket: WebSocket, state: AppState, channel: ChannelRef, id: String) {
    let first = tokio::time::timeout(AUTH_WAIT, socket.recv()).await;
    let token = match first {
        Ok(Some(Ok(Message::Text(text)))) => match serde_json::from_str::<AuthMessage>(&text) {
            Ok(auth) if auth.kind == "auth" => auth.token,
            _ => return close(socket, CLOSE_SIGNED_OUT, "the first message must be auth").await,
        },
        _ => return close(socket, CLOSE_SIGNED_OUT, "auth timeout or invalid payload").await,
    };
    // Subscribed before the key is checked, so a deactivation of its maker
    // from then on is heard.
    let events = state.helm.subscribe();
    let Ok((record, user)) = state.helm.authenticate_ot_key(&channel, &token).await else {
        return close(socket, CLOSE_SIGNED_OUT, "Invalid API key").await;
    };
    let Ok(id) = id.parse::<u64>() else {
        return close(socket, CLOSE_NOT_FOUND, "Session not found").await;
    };
    let session = match state.helm.terminal(&user, id).await {
        Ok(session) if session.channel() == Some(record.channel.id) => session,
        _ => return close(socket, CLOSE_NOT_FOUND, "Session not found").await,
    };
    let recheck: super::terminals::Recheck = {
        let state = state.clone();
        Box::new(move || {
            let (state, channel, token) = (state.clone(), channel.clone(), token.clone());
            Box::pin(async move {
                state
                    .helm
                    .authenticate_ot_key(&channel, &token)
                    .await
                    .is_ok()
            })
        })
    };
    // The key acts as its maker: their deactivation closes it at once.
    let viewer = Viewer::new(user.id, recheck, events, &state);
    pump(socket, session, state.shutdown.clone(), viewer, true).await;
    // As the protocol has it, a terminal opened through it ends with its
    // socket.
    if state.commands.take_terminal(id)
        && let Err(e) = state.helm.terminals().close(id).await
    {
        tracing::debug!(error = %e, id, "closing an Open Terminal terminal");
    }
}

#[cfg(test)]
mod tests {
    use super::{unescape, workspace_path};

    #[test]
    fn input_escapes_become_the_characters_they_name() {
        assert_eq!(unescape("ls\\n"), "ls\n");
        assert_eq!(unescape("\\x03\\t\\u00e9\\101"), "\u{3}\téA");
        assert_eq!(unescape("plain é\n"), "plain é\n");
        assert_eq!(unescape("keep \\q and \\x4"), "keep \\q and \\x4");
        assert_eq!(unescape("end\\"), "end\\");
    }

    #[test]
    fn a_commands_cwd_is_answered_as_an_absolute_workspace_path() {
        assert_eq!(workspace_path(None), "/workspace");
        assert_eq!(workspace_path(Some("made")), "/workspace/made");
        assert_eq!(workspace_path(Some("./a/../b/")), "/workspace/b");
        assert_eq!(workspace_path(Some("/workspace/x")), "/workspace/x");
    }
}
