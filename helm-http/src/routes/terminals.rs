//! Terminals: interactive shells in a channel's computer, opened and listed
//! over REST and watched and typed into over a WebSocket.
//!
//! The WebSocket (`/api/terminals/{id}/ws`) authenticates like the event
//! stream (a bearer token, or the session cookie from one of the
//! workspace's own origins) and is authorized like the channel's computer.
//! Binary frames carry bytes both ways; a text frame
//! `{"type":"resize","rows":R,"cols":C}` resizes. A viewer first gets the
//! scrollback, then live output; several viewers may watch one terminal.
//! When the shell ends the server sends
//! `{"type":"closed","exit_code":N,"closed_by":USER_ID}` (`closed_by` null
//! unless a person closed it) and closes the socket. A viewer that falls behind is closed with 4008 and
//! reconnects (the scrollback brings it up to date); 4001 when the
//! credential or the access goes (re-checked every 30 s, and at once when
//! the viewer's account changes: a deactivated person's terminals close
//! as their event stream does); 1001 at shutdown.
//!
//! With several nodes on one store, a channel's terminals live on the node
//! that holds its computer, and a terminal's id says which node that is:
//! every other node passes these requests on to it (see `forward`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use helm_core::events::{Event, EventBody};
use helm_core::exec::{TerminalEvent, TerminalSession, TerminalSize};
use helm_core::model::UserId;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{ReadErrors, WriteErrors, channel_ref, created};
use crate::api::{OpenTerminalRequest, Terminal, TerminalSocketQuery};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams, QueryParams};
use crate::forward;
use crate::state::AppState;

/// Close code: the credential or the access is gone.
pub const CLOSE_SIGNED_OUT: u16 = 4001;
/// Close code: the viewer fell behind; reconnect.
pub const CLOSE_BEHIND: u16 = 4008;
/// How often the credential and the access are re-checked.
const HEARTBEAT: Duration = Duration::from_secs(30);
/// The largest frame a viewer may send (keystrokes and pastes).
pub const MAX_INPUT_FRAME: usize = 1024 * 1024;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_terminals, open_terminal))
        .routes(handlers!(close_terminal))
        .routes(handlers!(terminal_socket))
}

/// A channel's open terminals.
#[utoipa::path(get, path = "/api/channels/{channel}/terminals", tag = "terminals",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "Open terminals", body = [Terminal]), ReadErrors))]
async fn list_terminals(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Response> {
    let at = channel_ref(&channel)?;
    let elsewhere = state.helm.terminals_elsewhere(&caller.user, &at).await?;
    if let Some(node) = forward::target(&headers, elsewhere)? {
        let path = format!("/api/channels/{channel}/terminals");
        return forward::request(&state, &node, &caller, Method::GET, &path, None).await;
    }
    let terminals = state.helm.channel_terminals(&caller.user, &at).await?;
    let terminals: Vec<Terminal> = terminals.into_iter().map(Into::into).collect();
    Ok(Json(terminals).into_response())
}

/// Opens a terminal: a login shell in the channel's workspace, under the
/// same isolation as its commands.
#[utoipa::path(post, path = "/api/channels/{channel}/terminals", tag = "terminals",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = OpenTerminalRequest,
    responses((status = 201, description = "The terminal", body = Terminal), WriteErrors))]
async fn open_terminal(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    PathParams(channel): PathParams<String>,
    Body(request): Body<OpenTerminalRequest>,
) -> ApiResult<Response> {
    let size = checked_size(request.rows, request.cols)?;
    let at = channel_ref(&channel)?;
    let elsewhere = state.helm.terminals_elsewhere(&caller.user, &at).await?;
    if let Some(node) = forward::target(&headers, elsewhere)? {
        let path = format!("/api/channels/{channel}/terminals");
        let body = json!({"rows": size.rows, "cols": size.cols});
        return forward::request(&state, &node, &caller, Method::POST, &path, Some(body)).await;
    }
    let session = state.helm.open_terminal(&caller.user, &at, size).await?;
    let terminal: Terminal = session.info().into();
    Ok(created(terminal).into_response())
}

/// Closes a terminal: its shell and everything started in it end, and its
/// viewers are disconnected.
#[utoipa::path(delete, path = "/api/terminals/{id}", tag = "terminals",
    params(("id" = u64, Path, description = "The terminal's id")),
    responses((status = 204, description = "Closed"), WriteErrors))]
async fn close_terminal(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    PathParams(id): PathParams<u64>,
) -> ApiResult<Response> {
    let elsewhere = state.helm.terminal_elsewhere(id).await?;
    if let Some(node) = forward::target(&headers, elsewhere)? {
        let path = format!("/api/terminals/{id}");
        return forward::request(&state, &node, &caller, Method::DELETE, &path, None).await;
    }
    state.helm.close_terminal(&caller.user, id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Watches and types into a terminal (WebSocket; see the module docs and
/// docs/http.md). A plain GET answers 400.
#[utoipa::path(get, path = "/api/terminals/{id}/ws", tag = "terminals",
    params(("id" = u64, Path, description = "The terminal's id"), TerminalSocketQuery),
    responses((status = 101, description = "Switching to the terminal's WebSocket"), ReadErrors))]
async fn terminal_socket(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    PathParams(id): PathParams<u64>,
    QueryParams(query): QueryParams<TerminalSocketQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    let elsewhere = state.helm.terminal_elsewhere(id).await?;
    if let Some(node) = forward::target(&headers, elsewhere)? {
        let path = match query.channel {
            Some(channel) => format!("/api/terminals/{id}/ws?channel={channel}"),
            None => format!("/api/terminals/{id}/ws"),
        };
        let upgrade = upgrade.ok();
        return forward::socket(&state, &node, &caller, &path, upgrade, MAX_INPUT_FRAME).await;
    }
    // Who may see the terminal first, so that an unknown one is 404 either way.
    let session = state.helm.terminal(&caller.user, id).await?;
    if query
        .channel
        .is_some_and(|c| session.channel().map(|s| s.0) != Some(c))
    {
        return Err(helm_core::Error::not_found("terminal", id).into());
    }
    let upgrade = upgrade.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "not_websocket",
            format!("{}: open this URL as a WebSocket", e.body_text()),
        )
    })?;
    let user = caller.user.id;
    let recheck: Recheck = {
        let state = state.clone();
        Box::new(move || {
            let (state, caller) = (state.clone(), caller.clone());
            Box::pin(async move {
                state.helm.authenticate(&caller.secret).await.is_ok()
                    && state.helm.terminal(&caller.user, id).await.is_ok()
            })
        })
    };
    // Subscribed before the upgrade, so a deactivation made meanwhile is heard.
    let viewer = Viewer::new(user, recheck, state.helm.subscribe(), &state);
    let shutdown = state.shutdown.clone();
    Ok(upgrade
        .max_message_size(MAX_INPUT_FRAME)
        .on_upgrade(move |socket| async move {
            pump(socket, session, shutdown, viewer, true).await;
        })
        .into_response())
}

/// A terminal size from optional rows and columns (24×80 by default);
/// 422 outside 1..=500 rows and 1..=1000 columns.
pub fn checked_size(rows: Option<u16>, cols: Option<u16>) -> ApiResult<TerminalSize> {
    let rows = rows.unwrap_or(24);
    let cols = cols.unwrap_or(80);
    if !(1..=500).contains(&rows) || !(1..=1000).contains(&cols) {
        return Err(ApiError::invalid(
            "a terminal has 1 to 500 rows and 1 to 1000 columns",
        ));
    }
    Ok(TerminalSize { rows, cols })
}

/// Re-checks, now and then, that the viewer may still watch.
pub type Recheck = Box<dyn Fn() -> Pin<Box<dyn Future<Output = bool> + Send>> + Send + Sync>;

/// Who watches a terminal, and how the socket learns they no longer may:
/// `recheck` every heartbeat, and at once when their account changes on
/// the live event feed (a deactivation closes the socket without asking).
pub struct Viewer {
    user: UserId,
    recheck: Recheck,
    events: broadcast::Receiver<Arc<Event>>,
    /// Bumped when a credential ends on this node (`AppState::credentials`).
    credentials: tokio::sync::watch::Receiver<u64>,
}

/// What the event feed says about a viewer's account.
enum AccountChange {
    /// They were deactivated.
    Deactivated,
    /// Their role or access may have changed (or the feed skipped events
    /// that may have said so): re-check.
    Changed,
}

impl Viewer {
    /// `user` watches, may go on while `recheck` says so, and is followed
    /// on `events` (from `Helm::subscribe`) and on `state`'s ended
    /// credentials.
    pub fn new(
        user: UserId,
        recheck: Recheck,
        events: broadcast::Receiver<Arc<Event>>,
        state: &AppState,
    ) -> Self {
        let mut credentials = state.credentials.subscribe();
        credentials.mark_unchanged();
        Viewer {
            user,
            recheck,
            events,
            credentials,
        }
    }

    /// The next change that may end the viewer's access: their account
    /// changed, they left a channel or one changed, or a credential ended.
    /// Cancel-safe (a broadcast receive and a watch's change are), so it
    /// sits in the pump's `select!`.
    async fn account_change(&mut self) -> AccountChange {
        loop {
            let event = tokio::select! {
                event = self.events.recv() => event,
                changed = self.credentials.changed() => {
                    if changed.is_ok() {
                        return AccountChange::Changed;
                    }
                    // No sender (the server is stopping): the heartbeat checks.
                    std::future::pending::<()>().await;
                    continue;
                }
            };
            match event {
                Ok(event) => match &event.body {
                    EventBody::UserUpdated { user } if user.id == self.user => {
                        return if user.is_active() {
                            AccountChange::Changed
                        } else {
                            AccountChange::Deactivated
                        };
                    }
                    // Removed from a channel, or a channel made private,
                    // archived or deleted: the terminal's may be among them.
                    EventBody::ChannelMemberRemoved { user_id, .. } if *user_id == self.user => {
                        return AccountChange::Changed;
                    }
                    EventBody::ChannelUpdated { .. }
                    | EventBody::ChannelArchived { .. }
                    | EventBody::ChannelDeleted { .. } => return AccountChange::Changed,
                    _ => {}
                },
                Err(RecvError::Lagged(_)) => return AccountChange::Changed,
                // No feed (the server is stopping): the heartbeat still checks.
                Err(RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    }
}

/// A control message from a viewer.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Control {
    Resize { rows: u16, cols: u16 },
    Input { data: String },
}

/// Connects a viewer's socket to a terminal until either ends: the
/// scrollback (when `scrollback`), then live output as binary frames;
/// input and resizes from the viewer. Returns when the socket closes, or
/// closes it (4001) when the viewer may no longer watch.
pub async fn pump(
    mut socket: WebSocket,
    session: Arc<TerminalSession>,
    shutdown: CancellationToken,
    mut viewer: Viewer,
    scrollback: bool,
) {
    let mut subscription = session.subscribe();
    if scrollback
        && !subscription.scrollback.is_empty()
        && socket
            .send(Message::Binary(subscription.scrollback.clone().into()))
            .await
            .is_err()
    {
        return;
    }
    if !subscription.running {
        let exit = session.info().exit_code;
        closed(&mut socket, exit, session.closed_by()).await;
        return;
    }
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    heartbeat.tick().await;
    let end: (u16, &'static str) = loop {
        tokio::select! {
            _ = shutdown.cancelled() => break (close_code::AWAY, "the server is shutting down"),
            _ = heartbeat.tick() => {
                if !(viewer.recheck)().await {
                    break (CLOSE_SIGNED_OUT, "signed out, or no longer allowed");
                }
                if socket.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
            change = viewer.account_change() => match change {
                AccountChange::Deactivated => break (CLOSE_SIGNED_OUT, "deactivated"),
                AccountChange::Changed => {
                    if !(viewer.recheck)().await {
                        break (CLOSE_SIGNED_OUT, "signed out, or no longer allowed");
                    }
                }
            },
            event = subscription.events.recv() => match event {
                Ok(TerminalEvent::Output { data }) => {
                    if socket.send(Message::Binary(data.into())).await.is_err() {
                        return;
                    }
                }
                Ok(TerminalEvent::Closed { exit_code }) => {
                    closed(&mut socket, exit_code, session.closed_by()).await;
                    return;
                }
                Err(RecvError::Closed) => {
                    closed(&mut socket, session.info().exit_code, session.closed_by()).await;
                    return;
                }
                Err(RecvError::Lagged(_)) => break (CLOSE_BEHIND, "fell behind; reconnect"),
            },
            message = socket.recv() => match message {
                Some(Ok(Message::Binary(bytes))) => {
                    // A write to an ended shell fails; its Closed event
                    // follows and ends the loop.
                    let _ = session.write(&bytes).await;
                }
                Some(Ok(Message::Text(text))) => match serde_json::from_str::<Control>(&text) {
                    Ok(Control::Resize { rows, cols }) => {
                        if let Ok(size) = checked_size(Some(rows), Some(cols)) {
                            let _ = session.resize(size);
                        }
                    }
                    Ok(Control::Input { data }) => {
                        let _ = session.write(data.as_bytes()).await;
                    }
                    // Unknown control messages are ignored, as clients may
                    // speak a newer dialect.
                    Err(_) => {}
                },
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            },
        }
    };
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code: end.0,
            reason: Utf8Bytes::from_static(end.1),
        })))
        .await;
}

/// Tells the viewer the shell ended (and who closed it, when a person
/// did), and closes.
async fn closed(socket: &mut WebSocket, exit_code: Option<i32>, by: Option<UserId>) {
    let notice =
        json!({"type": "closed", "exit_code": exit_code, "closed_by": by.map(|u| u.0)}).to_string();
    let _ = socket.send(Message::Text(notice.into())).await;
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code: close_code::NORMAL,
            reason: Utf8Bytes::from_static("the terminal ended"),
        })))
        .await;
}
