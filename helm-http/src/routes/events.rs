//! Live events: the `/api/events` WebSocket, and the log in pages.
//!
//! The protocol (details in `docs/http.md`):
//!
//! 1. Open `GET /api/events[?after=SEQ]` as a WebSocket, authenticated like
//!    any request: `Authorization: Bearer <token>` (scripts, the CLI) or the
//!    session cookie (browsers; the `Origin` must be the workspace's own).
//!    Tokens in the URL are not accepted: URLs end up in logs.
//! 2. The server sends `{"type":"stream.hello","last_seq":N,...}`: `N` is the
//!    log's position when the stream started.
//! 3. Then every event the caller may see, in `seq` order, as text frames
//!    shaped like core's `Event`: first those after `after` from the durable
//!    log (none when `after` is absent), then live ones. Private channels'
//!    events reach only their members, the Captain and admins.
//! 4. A client that leaves its buffer full for `ws_stall_secs` gets
//!    `{"type":"stream.resync","last_seq":N}` and the connection closes
//!    (code 4008); it reconnects with `after` = the last `seq` it processed
//!    and misses nothing. Other clients are never held up by a slow one.
//! 5. The server closes with 4001 when the credential stops being valid
//!    (signed out, revoked, expired) and 1001 when it shuts down.

use std::time::Duration;

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use helm_core::Audience;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::{ReadErrors, page_size};
use crate::api::{Event, EventPage, EventQuery};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::QueryParams;
use crate::state::AppState;

/// Where the event WebSocket is served.
pub const EVENTS_PATH: &str = "/api/events";

/// Close code: the credential is no longer valid.
const CLOSE_SIGNED_OUT: u16 = 4001;
/// Close code: the client fell behind and must resume with `after`.
const CLOSE_RESYNC: u16 = 4008;
/// How often the connection is pinged and the credential re-checked.
const HEARTBEAT: Duration = Duration::from_secs(30);
/// The largest message a client may send (clients need not send any).
const MAX_CLIENT_MESSAGE: usize = 64 * 1024;
/// The socket's read buffer.
const READ_BUFFER: usize = 4 * 1024;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(events))
        .routes(handlers!(event_log))
}

/// The live event stream (WebSocket). See the module docs and docs/http.md
/// for the protocol; a plain GET answers 400.
#[utoipa::path(get, path = "/api/events", tag = "events", params(EventQuery),
    responses((status = 101, description = "Switching to the WebSocket event stream"), ReadErrors))]
async fn events(
    State(state): State<AppState>,
    caller: Caller,
    QueryParams(query): QueryParams<EventQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    let upgrade = upgrade.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "not_websocket",
            format!(
                "{}: open this URL as a WebSocket, or read the log with GET /api/events/log",
                e.body_text()
            ),
        )
    })?;
    let head = state.helm.store().event_head().await?;
    let after = match query.after {
        Some(after) => log_position(after)?,
        None => head,
    };
    let follower = state.helm.follow(after).await?;
    let audience = state.helm.audience(&caller.user).await?;
    Ok(upgrade
        .max_message_size(MAX_CLIENT_MESSAGE)
        // Clients send next to nothing, and each frame is flushed as it is
        // sent: small buffers keep an idle connection cheap (the defaults
        // are 128 KiB each).
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0)
        .on_upgrade(move |socket| async move {
            let stream = Stream {
                state,
                caller,
                audience,
                follower,
            };
            stream.run(socket, head, after).await;
        })
        .into_response())
}

/// A page of the event log the caller may see: the same events the
/// WebSocket sends, for clients that poll.
#[utoipa::path(get, path = "/api/events/log", tag = "events", params(EventQuery),
    responses((status = 200, description = "A page of events", body = EventPage), ReadErrors))]
async fn event_log(
    State(state): State<AppState>,
    caller: Caller,
    QueryParams(query): QueryParams<EventQuery>,
) -> ApiResult<Json<EventPage>> {
    let after = log_position(query.after.unwrap_or(0))?;
    let limit = page_size(query.limit, 500, 1000)?;
    let audience = state.helm.audience(&caller.user).await?;
    let events = state.helm.store().events_after(after, limit).await?;
    let last_seq = events.last().map_or(after, |e| e.seq);
    Ok(Json(EventPage {
        items: events
            .iter()
            .filter(|e| audience.may_see(e))
            .map(Event::from_core)
            .collect(),
        last_seq,
    }))
}

/// A position in the log from a query: a sequence number, 0 or more.
fn log_position(after: i64) -> ApiResult<u64> {
    u64::try_from(after).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "after must be an event sequence number (0 or more)",
        )
    })
}

/// What the writer task is told to do besides writing frames.
enum Control {
    /// Tell the client to resync, then close.
    Resync,
    /// Close with this code and reason.
    Close(u16, &'static str),
}

/// One client's stream.
struct Stream {
    state: AppState,
    caller: Caller,
    audience: Audience,
    follower: helm_core::events::Follower,
}

/// Counts a connection while it lives.
struct Live(std::sync::Arc<crate::metrics::Metrics>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.ws_closed();
    }
}

impl Stream {
    async fn run(mut self, socket: WebSocket, head: u64, after: u64) {
        // A sign-out or a revoked token on this node is checked at once:
        // followed from before the hello, so the client cannot end its
        // credential unheard after seeing it.
        let mut credentials = self.state.credentials.subscribe();
        credentials.mark_unchanged();
        self.state.metrics.ws_opened();
        let _live = Live(self.state.metrics.clone());
        let (frames, queue) = mpsc::channel::<(u64, Message)>(self.state.config.ws_buffer.max(1));
        let (control, control_rx) = oneshot::channel::<Control>();
        let (sink, mut incoming) = socket.split();
        let writer = tokio::spawn(write_frames(sink, queue, control_rx));

        let hello = json!({
            "type": "stream.hello",
            "last_seq": head,
            "after": after,
            "user": self.caller.user.name,
        });
        let stall = Duration::from_secs(self.state.config.ws_stall_secs.max(1));
        let mut ended = None;
        if frames
            .send((after, Message::Text(hello.to_string().into())))
            .await
            .is_err()
        {
            ended = Some(Control::Close(close_code::NORMAL, ""));
        }
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.tick().await;
        while ended.is_none() {
            tokio::select! {
                _ = self.state.shutdown.cancelled() => {
                    ended = Some(Control::Close(close_code::AWAY, "the server is shutting down"));
                }
                Ok(()) = credentials.changed() => {
                    if self.state.helm.authenticate(&self.caller.secret).await.is_err() {
                        ended = Some(Control::Close(CLOSE_SIGNED_OUT, "signed out"));
                    }
                }
                message = incoming.next() => match message {
                    // Clients have nothing to say; pongs and pings are
                    // handled by the socket. A close or an error ends it.
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(_)) => {}
                },
                _ = heartbeat.tick() => {
                    if self.state.helm.authenticate(&self.caller.secret).await.is_err() {
                        ended = Some(Control::Close(CLOSE_SIGNED_OUT, "signed out"));
                    } else {
                        let _ = frames.try_send((0, Message::Ping(Default::default())));
                    }
                }
                event = self.follower.next() => {
                    let event = match event {
                        Ok(event) => event,
                        Err(e) => {
                            tracing::error!(error = %e, "event stream failed");
                            ended = Some(Control::Close(close_code::ERROR, "the event log failed"));
                            continue;
                        }
                    };
                    match self.deliver(&event, &frames, stall).await {
                        Ok(()) => {}
                        Err(end) => ended = Some(end),
                    }
                }
            }
        }
        if let Some(end) = ended {
            let _ = control.send(end);
        }
        drop(frames);
        let _ = writer.await;
    }

    /// Queues `event` if the caller may see it; refreshes what they may see
    /// when the event changes it.
    async fn deliver(
        &mut self,
        event: &helm_core::events::Event,
        frames: &mpsc::Sender<(u64, Message)>,
        stall: Duration,
    ) -> Result<(), Control> {
        let mut visible = self.audience.may_see(event);
        if let helm_core::events::EventBody::UserUpdated { user } = &event.body
            && user.id == self.caller.user.id
        {
            // Their own role or access changed: a deactivated person's
            // stream ends now, and a new role sees what it may from here.
            if !user.is_active() {
                return Err(Control::Close(CLOSE_SIGNED_OUT, "deactivated"));
            }
            self.caller.user = user.clone();
        }
        if Audience::changes_with(event) {
            match self.state.helm.audience(&self.caller.user).await {
                Ok(fresh) => self.audience = fresh,
                Err(e) => {
                    tracing::error!(error = %e, "could not refresh an event audience");
                    return Err(Control::Close(close_code::ERROR, "the event log failed"));
                }
            }
            visible = visible || self.audience.may_see(event);
        }
        if !visible {
            return Ok(());
        }
        let text = match serde_json::to_string(event) {
            Ok(text) => text,
            Err(e) => {
                tracing::error!(error = %e, seq = event.seq, "an event does not serialise");
                return Ok(());
            }
        };
        match frames
            .send_timeout((event.seq, Message::Text(text.into())), stall)
            .await
        {
            Ok(()) => Ok(()),
            Err(mpsc::error::SendTimeoutError::Timeout(_)) => {
                self.state.metrics.ws_resynced();
                tracing::info!(user = %self.caller.user.name, "a slow event client must resync");
                Err(Control::Resync)
            }
            Err(mpsc::error::SendTimeoutError::Closed(_)) => {
                Err(Control::Close(close_code::NORMAL, ""))
            }
        }
    }
}

/// Writes queued frames to the socket until the queue ends or a control
/// message arrives; the last `seq` it wrote is what a resync notice names.
async fn write_frames(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut queue: mpsc::Receiver<(u64, Message)>,
    mut control: oneshot::Receiver<Control>,
) {
    let mut written = 0u64;
    let end = loop {
        tokio::select! {
            biased;
            end = &mut control => break end.ok(),
            frame = queue.recv() => match frame {
                Some((seq, message)) => {
                    if sink.send(message).await.is_err() {
                        return;
                    }
                    written = written.max(seq);
                }
                None => break None,
            },
        }
    };
    let (code, reason, notice) = match end {
        Some(Control::Resync) => (
            CLOSE_RESYNC,
            "resync",
            Some(json!({"type": "stream.resync", "last_seq": written}).to_string()),
        ),
        Some(Control::Close(code, reason)) => (code, reason, None),
        None => (close_code::NORMAL, "", None),
    };
    // The client may be stuck; do not wait on it for long.
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        if let Some(notice) = notice {
            sink.send(Message::Text(notice.into())).await?;
        }
        sink.send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        })))
        .await
    })
    .await;
}
