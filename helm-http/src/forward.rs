//! Requests another node answers. With several nodes on one store, a
//! channel's open terminals live in the memory of the node that holds its
//! computer, so any other node passes a person's terminal requests (REST
//! and WebSocket) on to that one and relays its answer unchanged.
//!
//! The person's own secret goes along as a bearer: the holder checks it
//! against the shared store as it checks any, so passing a request on
//! grants nothing. A passed-on request carries [`FORWARDED_BY`] and is
//! answered where it lands, never passed on again: a node whose address
//! the others have wrong makes a clear error, not a loop.

use std::time::Duration;

use axum::body::Body;
use axum::extract::ws::{self, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use helm_core::OtherNode;
use helm_core::net::{self, connect_websocket};
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest, protocol::CloseFrame};
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The header that marks a request another node passed on.
pub const FORWARDED_BY: &str = "x-helm-forwarded-by";

/// How long opening a connection to another node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long another node may take to answer a passed-on request.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The node to pass a request on to: `found` (where what it names lives),
/// unless the request was itself passed on, which is then answered here
/// (an error, if it was meant for another node).
pub fn target(headers: &HeaderMap, found: Option<OtherNode>) -> ApiResult<Option<OtherNode>> {
    match found {
        Some(node) if headers.contains_key(FORWARDED_BY) => {
            Err(helm_core::Error::ComputerUnreachable(format!(
                "another node passed this request on to this one, but what it names is on node \
                 {} ({}): the nodes' addresses disagree; give each node the address the others \
                 reach it at",
                node.id, node.url
            ))
            .into())
        }
        found => Ok(found),
    }
}

/// Passes `caller`'s request (`method` on `path`, with a JSON `body`) on to
/// `node`, and answers with its answer.
pub async fn request(
    state: &AppState,
    node: &OtherNode,
    caller: &Caller,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> ApiResult<Response> {
    let http = state
        .node_http
        .get_or_try_init(|| async { net::http_client(CONNECT_TIMEOUT) })
        .await?;
    let mut request = http
        .request(method, format!("{}{path}", node.url))
        .bearer_auth(&caller.secret)
        .header(FORWARDED_BY, "1")
        .timeout(ANSWER_TIMEOUT);
    if let Some(body) = body {
        request = request
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
    }
    let answer = request.send().await.map_err(|e| unreachable(node, &e))?;
    let status =
        StatusCode::from_u16(answer.status().as_u16()).map_err(|e| unreachable(node, &e))?;
    let kind = answer.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = answer.bytes().await.map_err(|e| unreachable(node, &e))?;
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    if let Some(kind) = kind.and_then(|k| HeaderValue::from_bytes(k.as_bytes()).ok()) {
        response.headers_mut().insert(header::CONTENT_TYPE, kind);
    }
    Ok(response)
}

/// Passes `caller`'s WebSocket for `path` on to `node`: opens the node's
/// socket first (so its refusal, such as an unknown terminal's 404, is
/// the answer), then carries frames both ways until either side ends. A
/// request that is not a WebSocket is passed on as a plain GET.
pub async fn socket(
    state: &AppState,
    node: &OtherNode,
    caller: &Caller,
    path: &str,
    upgrade: Option<WebSocketUpgrade>,
    max_frame: usize,
) -> ApiResult<Response> {
    let Some(upgrade) = upgrade else {
        return request(state, node, caller, Method::GET, path, None).await;
    };
    let url = format!("ws{}{path}", node.url.trim_start_matches("http"));
    let mut ask = url
        .as_str()
        .into_client_request()
        .map_err(|e| unreachable(node, &e))?;
    let bearer = format!("Bearer {}", caller.secret);
    for (name, value) in [("authorization", bearer.as_str()), (FORWARDED_BY, "1")] {
        let value = value.parse().map_err(|_| {
            ApiError::unauthenticated("the credential cannot be passed on; sign in again")
        })?;
        ask.headers_mut().insert(name, value);
    }
    let upstream = match connect_websocket(ask).await {
        Ok(upstream) => upstream,
        Err(tungstenite::Error::Http(answer)) => {
            let (parts, body) = answer.into_parts();
            let mut response = Response::new(Body::from(body.unwrap_or_default()));
            *response.status_mut() =
                StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            if let Some(kind) = parts.headers.get(header::CONTENT_TYPE)
                && let Ok(kind) = HeaderValue::from_bytes(kind.as_bytes())
            {
                response.headers_mut().insert(header::CONTENT_TYPE, kind);
            }
            return Ok(response);
        }
        Err(e) => return Err(unreachable(node, &e)),
    };
    let shutdown = state.shutdown.clone();
    Ok(upgrade
        .max_message_size(max_frame)
        .on_upgrade(move |viewer| relay(viewer, upstream, shutdown))
        .into_response())
}

/// Carries frames between a viewer and another node's socket until either
/// closes (its close code and reason passed on) or the server shuts down.
async fn relay(mut viewer: WebSocket, mut upstream: net::WebSocket, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => {
                let _ = upstream.close(None).await;
                let _ = viewer
                    .send(ws::Message::Close(Some(ws::CloseFrame {
                        code: ws::close_code::AWAY,
                        reason: "the server is shutting down".into(),
                    })))
                    .await;
                return;
            }
            frame = upstream.next() => {
                let message = match frame {
                    Some(Ok(tungstenite::Message::Binary(data))) => ws::Message::Binary(data),
                    Some(Ok(tungstenite::Message::Text(text))) => {
                        ws::Message::Text(text.as_str().into())
                    }
                    Some(Ok(tungstenite::Message::Close(frame))) => {
                        let frame = frame.map(|f| ws::CloseFrame {
                            code: f.code.into(),
                            reason: f.reason.as_str().into(),
                        });
                        let _ = viewer.send(ws::Message::Close(frame)).await;
                        return;
                    }
                    // The node's heartbeat, passed on so that the viewer's
                    // leg (and any proxy on it) sees traffic as often as a
                    // viewer of this node would; the socket answers it too.
                    Some(Ok(tungstenite::Message::Ping(data))) => ws::Message::Ping(data),
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => {
                        let _ = viewer.send(ws::Message::Close(None)).await;
                        return;
                    }
                };
                if viewer.send(message).await.is_err() {
                    let _ = upstream.close(None).await;
                    return;
                }
            }
            frame = viewer.recv() => {
                let message = match frame {
                    Some(Ok(ws::Message::Binary(data))) => tungstenite::Message::Binary(data),
                    Some(Ok(ws::Message::Text(text))) => tungstenite::Message::text(text.as_str()),
                    Some(Ok(ws::Message::Close(frame))) => {
                        let frame = frame.map(|f| CloseFrame {
                            code: f.code.into(),
                            reason: f.reason.as_str().into(),
                        });
                        let _ = upstream.close(frame).await;
                        return;
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => {
                        let _ = upstream.close(None).await;
                        return;
                    }
                };
                if upstream.send(message).await.is_err() {
                    let _ = viewer.send(ws::Message::Close(None)).await;
                    return;
                }
            }
        }
    }
}

/// The error for a node that could not be reached or answered wrongly.
fn unreachable(node: &OtherNode, e: &dyn std::fmt::Display) -> ApiError {
    helm_core::Error::ComputerUnreachable(format!(
        "what this request names is on node {} at {}, which could not be reached: {e}",
        node.id, node.url
    ))
    .into()
}
