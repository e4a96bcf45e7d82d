//! Following a server's events: the `/api/events` WebSocket for `http://`
//! servers; for `https://` ones (this build's WebSocket client speaks no
//! TLS) the same events from `/api/events/log`, polled. Either way the
//! stream starts at the moment it was opened and skips event types newer
//! than this build.

use std::time::Duration;

use futures_util::StreamExt;
use helm_core::events::Event;
use serde::Deserialize;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::{Error, Result};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How often the log is polled when there is no WebSocket.
const POLL_EVERY: Duration = Duration::from_millis(200);

/// The events that happen from the moment it was opened, in order.
pub struct EventStream(Source);

enum Source {
    WebSocket(Box<WebSocketEvents>),
    Polled(PolledEvents),
}

impl EventStream {
    pub(crate) async fn open(base: &str, token: &str, http: reqwest::Client) -> Result<Self> {
        Ok(EventStream(match base.strip_prefix("http://") {
            Some(rest) => Source::WebSocket(Box::new(WebSocketEvents::connect(rest, token).await?)),
            None => Source::Polled(PolledEvents::start(base, token, http).await?),
        }))
    }

    /// The next event. A stream that breaks is an [`Error`] of kind
    /// `unavailable` (code `stream`).
    pub async fn next(&mut self) -> Result<Event> {
        match &mut self.0 {
            Source::WebSocket(socket) => socket.next().await,
            Source::Polled(polled) => polled.next().await,
        }
    }
}

struct WebSocketEvents {
    socket: Socket,
    last: u64,
    url: String,
    token: String,
}

impl WebSocketEvents {
    async fn connect(host_and_path: &str, token: &str) -> Result<Self> {
        let url = format!("ws://{host_and_path}/api/events");
        let mut events = WebSocketEvents {
            socket: dial(&url, token).await?,
            last: 0,
            url,
            token: token.to_string(),
        };
        // The hello names where the stream starts; posting after it is seen
        // means nothing the post causes can be missed.
        let hello = events.frame().await?;
        events.last = hello["last_seq"].as_u64().unwrap_or(0);
        Ok(events)
    }

    async fn frame(&mut self) -> Result<Value> {
        loop {
            match self.socket.next().await {
                Some(Ok(Message::Text(text))) => return Ok(serde_json::from_str(&text)?),
                Some(Ok(Message::Close(frame))) => {
                    return Err(Error::stream(format!(
                        "the server closed the event stream: {}",
                        frame.map(|f| f.reason.to_string()).unwrap_or_default()
                    )));
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    return Err(Error::stream(format!("the event stream failed: {e}")));
                }
                None => return Err(Error::stream("the event stream ended")),
            }
        }
    }
}

async fn dial(url: &str, token: &str) -> Result<Socket> {
    let bad_url = |e: &dyn std::fmt::Display| {
        Error::stream(format!("cannot open the event stream at {url}: {e}"))
    };
    let mut request = url.into_client_request().map_err(|e| bad_url(&e))?;
    let header = format!("Bearer {token}").parse().map_err(|e| bad_url(&e))?;
    request.headers_mut().insert("authorization", header);
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| Error::stream(format!("cannot open the event stream at {url}: {e}")))?;
    Ok(socket)
}

impl WebSocketEvents {
    async fn next(&mut self) -> Result<Event> {
        loop {
            let frame = self.frame().await?;
            match frame["type"].as_str() {
                // Told to catch up: reconnect after the last event seen.
                Some("stream.resync") => {
                    let url = format!("{}?after={}", self.url, self.last);
                    self.socket = dial(&url, &self.token).await?;
                }
                Some("stream.hello") => {}
                _ => {
                    if let Some(seq) = frame["seq"].as_u64() {
                        self.last = seq;
                    }
                    // Event types newer than this build are skipped.
                    if let Ok(event) = serde_json::from_value::<Event>(frame) {
                        return Ok(event);
                    }
                }
            }
        }
    }
}

#[derive(Deserialize)]
struct LogPage {
    items: Vec<Value>,
    last_seq: u64,
}

struct PolledEvents {
    base: String,
    token: String,
    http: reqwest::Client,
    after: u64,
    ready: std::collections::VecDeque<Event>,
}

impl PolledEvents {
    async fn start(base: &str, token: &str, http: reqwest::Client) -> Result<Self> {
        let status: Value = http
            .get(format!("{base}/api/status"))
            .bearer_auth(token)
            .send()
            .await?
            .json()
            .await?;
        Ok(PolledEvents {
            base: base.to_string(),
            token: token.to_string(),
            http,
            after: status["last_event_seq"].as_u64().unwrap_or(0),
            ready: Default::default(),
        })
    }
}

impl PolledEvents {
    async fn next(&mut self) -> Result<Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(event);
            }
            let page: LogPage = self
                .http
                .get(format!("{}/api/events/log?after={}", self.base, self.after))
                .bearer_auth(&self.token)
                .send()
                .await?
                .json()
                .await?;
            let moved = page.last_seq != self.after;
            self.after = page.last_seq;
            // Event types newer than this build are skipped.
            self.ready.extend(
                page.items
                    .into_iter()
                    .filter_map(|item| serde_json::from_value::<Event>(item).ok()),
            );
            if !moved {
                tokio::time::sleep(POLL_EVERY).await;
            }
        }
    }
}
