//! Terminals of a remote computer: `POST /api/terminals` makes a shell on
//! the server, and one task per terminal holds its WebSocket
//! (`/api/terminals/{id}`, authenticated by its first message), passing
//! keystrokes and sizes one way and output the other into a
//! [`TerminalSession`] that viewers here share as they share a local one.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde::Deserialize;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::client::OtServer;
use crate::error::Result;
use crate::exec::terminal::{Feed, TerminalSession, TerminalSize, ToRemote};
use crate::model::ChannelId;
use crate::net::{WebSocket, connect_websocket};

/// How long opening a terminal's connection may take.
const CONNECT_WAIT: Duration = Duration::from_secs(15);

/// `POST /api/terminals`' answer.
#[derive(Debug, Deserialize)]
struct Made {
    id: String,
    #[serde(default)]
    pid: Option<u32>,
}

/// The session id Helm's terminals are made under, so that the server
/// starts them in the channel's workspace.
fn session_id(channel: Option<ChannelId>) -> String {
    match channel {
        Some(channel) => format!("helm-channel-{channel}"),
        None => "helm".to_string(),
    }
}

/// Opens a terminal on `server` as terminal `id` of this workspace.
pub(super) async fn open(
    server: Arc<OtServer>,
    channel: Option<ChannelId>,
    id: u64,
    size: TerminalSize,
    scrollback_bytes: usize,
) -> Result<Arc<TerminalSession>> {
    let root = server.root().await?.to_string();
    let session = session_id(channel);
    // Where the server starts the shell: the workspace. A server that keeps
    // no working directory per session starts it in its home, so the shell
    // is told to go there first.
    let placed = server
        .send(
            "setting the terminal's directory",
            server
                .request(Method::POST, "/files/cwd", Duration::ZERO)
                .header("x-session-id", &session)
                .json(&serde_json::json!({ "path": root })),
        )
        .await
        .is_ok();
    let made: Made = server
        .json(
            "opening a terminal",
            server
                .request(Method::POST, "/api/terminals", Duration::ZERO)
                .header("x-session-id", &session),
        )
        .await?;
    let connected = tokio::time::timeout(CONNECT_WAIT, connect(&server, &made.id, &session))
        .await
        .map_err(|_| server.unreachable("its terminal did not connect in time".into()))??;
    let (terminal, feed, asked) =
        TerminalSession::remote(id, channel, made.pid.unwrap_or(0), size, scrollback_bytes);
    let _ = terminal.resize(size);
    if !placed {
        let quoted = root.replace('\'', "'\\''");
        terminal
            .write(format!("cd -- '{quoted}' && clear\n").as_bytes())
            .await?;
    }
    tokio::spawn(pump(connected, feed, asked, server, made.id, session));
    Ok(terminal)
}

/// Connects terminal `remote_id`'s WebSocket and authenticates.
async fn connect(server: &OtServer, remote_id: &str, session: &str) -> Result<WebSocket> {
    let url = server.ws_url(&format!("/api/terminals/{remote_id}"));
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        server.unreachable(format!("its terminal could not {what}: {e}"))
    };
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| failed("be reached", &e))?;
    request.headers_mut().insert(
        "x-session-id",
        session.parse().map_err(
            |e: tokio_tungstenite::tungstenite::http::header::InvalidHeaderValue| {
                failed("be named", &e)
            },
        )?,
    );
    let mut socket = connect_websocket(request)
        .await
        .map_err(|e| failed("connect", &e))?;
    let auth = serde_json::json!({"type": "auth", "token": server.key(), "chat_id": session});
    socket
        .send(Message::text(auth.to_string()))
        .await
        .map_err(|e| failed("authenticate", &e))?;
    Ok(socket)
}

/// Carries a terminal's traffic until it ends, then tells the session and
/// lets the server forget it.
async fn pump(
    mut socket: WebSocket,
    feed: Feed,
    mut asked: tokio::sync::mpsc::UnboundedReceiver<ToRemote>,
    server: Arc<OtServer>,
    remote_id: String,
    session: String,
) {
    loop {
        tokio::select! {
            frame = socket.next() => match frame {
                Some(Ok(Message::Binary(data))) => feed.output(&data),
                Some(Ok(Message::Text(text))) => feed.output(text.as_bytes()),
                Some(Ok(Message::Close(frame))) => {
                    if let Some(frame) = frame.filter(|f| u16::from(f.code) >= 4000) {
                        tracing::warn!(code = u16::from(frame.code), reason = %frame.reason,
                            "a remote terminal was refused");
                    }
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
            ask = asked.recv() => {
                let message = match ask {
                    Some(ToRemote::Input(bytes)) => Message::binary(bytes),
                    Some(ToRemote::Resize(size)) => Message::text(
                        serde_json::json!({"type": "resize", "cols": size.cols, "rows": size.rows})
                            .to_string(),
                    ),
                    Some(ToRemote::Close) | None => break,
                };
                if socket.send(message).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = socket.close(None).await;
    // The server ends a terminal when its socket closes; deleting it too
    // covers a server that keeps it.
    let _ = server
        .send(
            "closing a terminal",
            server
                .request(
                    Method::DELETE,
                    &format!("/api/terminals/{remote_id}"),
                    Duration::ZERO,
                )
                .header("x-session-id", &session),
        )
        .await;
    feed.end(None);
}
