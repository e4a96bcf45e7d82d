//! Mock model servers that speak the providers' real streaming wire formats
//! over real HTTP on `127.0.0.1`, so tests drive the real adapters
//! (`OpenAiCompatible`, `Anthropic`) end to end, timeouts and all.
//!
//! Each request to the model endpoint takes the next queued [`Behaviour`]
//! (or the fallback, if set); every request is recorded for assertions.
//!
//! ```text
//! let mock = MockOpenAi::start().await?;
//! mock.push(Behaviour::tool_call("write_file", r#"{"path":"plan.md"}"#));
//! mock.push(Behaviour::text("Done."));
//! let provider = mock.adapter()?; // or mock.provider_config("local") for a registry
//! // … drive a turn …
//! assert_eq!(mock.requests()[1].body["messages"][2]["role"], "tool");
//! ```

mod anthropic;
mod behaviour;
mod mcp;
mod models;
mod openai;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures_util::stream::{self, BoxStream, StreamExt};
use helm_core::provider::{ChatMessage, ChatRequest, HttpOptions};
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use anthropic::MockAnthropic;
pub use behaviour::{Behaviour, DEFAULT_USAGE};
use behaviour::{Ending, Reply, Script};
pub use mcp::MockMcpServer;
pub use models::ModelList;
pub use openai::MockOpenAi;

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The HTTP method, such as `POST`.
    pub method: String,
    /// The path, such as `/v1/chat/completions`.
    pub path: String,
    /// The headers, names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Null` when it was not JSON).
    pub body: serde_json::Value,
    /// The body as text.
    pub raw_body: String,
    /// When it arrived.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Which wire format a mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    OpenAi,
    Anthropic,
}

/// Which endpoint a request hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Chat,
    Embeddings,
}

impl Dialect {
    fn endpoint(self, path: &str) -> Option<Endpoint> {
        match (self, path) {
            (Dialect::OpenAi, "/v1/chat/completions") => Some(Endpoint::Chat),
            (Dialect::OpenAi, "/v1/embeddings") => Some(Endpoint::Embeddings),
            (Dialect::Anthropic, "/v1/messages") => Some(Endpoint::Chat),
            _ => None,
        }
    }

    fn frames(self, script: &Script, model: &str, sequence: usize) -> Vec<String> {
        match self {
            Dialect::OpenAi => openai::frames(script, model, sequence),
            Dialect::Anthropic => anthropic::frames(script, model, sequence),
        }
    }

    fn malformed_frame(self) -> &'static str {
        match self {
            Dialect::OpenAi => {
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"oops\"\n\n"
            }
            Dialect::Anthropic => {
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n"
            }
        }
    }

    fn error_body(self, status: u16, message: &str) -> serde_json::Value {
        match self {
            Dialect::OpenAi => openai::error_body(status, message),
            Dialect::Anthropic => anthropic::error_body(status, message),
        }
    }
}

struct Shared {
    dialect: Dialect,
    queue: Mutex<VecDeque<Behaviour>>,
    fallback: Mutex<Option<Behaviour>>,
    requests: Mutex<Vec<RecordedRequest>>,
    models: Mutex<ModelList>,
    list_requests: Mutex<Vec<RecordedRequest>>,
    shutdown: watch::Receiver<bool>,
    flood_sent: Arc<std::sync::atomic::AtomicU64>,
}

/// Locks a mutex, recovering it if a panicking test poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The server behind [`MockOpenAi`] and [`MockAnthropic`]; they deref to it.
/// Dropping it stops the server and ends any hanging responses.
pub struct MockServer {
    address: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl MockServer {
    async fn start(dialect: Dialect) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let (shutdown, watcher) = watch::channel(false);
        let shared = Arc::new(Shared {
            dialect,
            queue: Mutex::default(),
            fallback: Mutex::default(),
            requests: Mutex::default(),
            models: Mutex::new(ModelList::default_for(dialect)),
            list_requests: Mutex::default(),
            shutdown: watcher,
            flood_sent: Arc::default(),
        });
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(shared.clone());
        // A server that fails shows up as connection errors in the test.
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(MockServer {
            address,
            shared,
            shutdown,
            task,
        })
    }

    /// Queues a behaviour for the next unanswered model request.
    pub fn push(&self, behaviour: Behaviour) -> &Self {
        lock(&self.shared.queue).push_back(behaviour);
        self
    }

    /// What to do once the queue is empty (by default: HTTP 400 saying so).
    pub fn set_fallback(&self, behaviour: Behaviour) {
        *lock(&self.shared.fallback) = Some(behaviour);
    }

    /// Bytes of text a [`Behaviour::flood`] has sent so far.
    pub fn flood_sent(&self) -> u64 {
        self.shared
            .flood_sent
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What the model list endpoints answer from now on (by default the
    /// mock lists `mock-model`).
    pub fn set_models(&self, list: ModelList) {
        *lock(&self.shared.models) = list;
    }

    /// Lists these models, in the mock's dialect.
    pub fn serve_models(&self, ids: &[&str]) {
        self.set_models(ModelList::Models(
            ids.iter().map(|id| id.to_string()).collect(),
        ));
    }

    /// The model list requests received so far (kept apart from
    /// [`MockServer::requests`], which holds the model calls).
    pub fn list_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.list_requests).clone()
    }

    /// How many queued behaviours are still unused.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.queue).len()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The latest request, if any.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        lock(&self.shared.requests).last().cloned()
    }

    /// Waits until at least `count` requests have arrived.
    pub async fn wait_for_requests(
        &self,
        count: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<RecordedRequest>> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= count {
                return Ok(requests);
            }
            if Instant::now() >= deadline {
                anyhow::bail!("expected {count} requests, got {}", requests.len());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Its address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.task.abort();
    }
}

/// HTTP options that keep tests fast: short timeouts, tiny backoff.
pub fn fast_http_options() -> HttpOptions {
    HttpOptions {
        connect_timeout: Duration::from_secs(2),
        response_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        total_timeout: Duration::from_secs(60),
        max_retries: 3,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    }
}

/// A one-message request for the mock's model.
pub fn user_request(text: &str) -> ChatRequest {
    ChatRequest {
        model: "mock-model".to_string(),
        system: String::new(),
        messages: vec![ChatMessage::User {
            content: text.to_string(),
        }]
        .into(),
        tools: Vec::new(),
        max_tokens: None,
        temperature: None,
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_string(),
        headers: headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: serde_json::from_str(&raw_body).unwrap_or(serde_json::Value::Null),
        raw_body,
        received_at: Instant::now(),
    };
    let dialect = shared.dialect;
    if models::is_list_request(dialect, method.as_str(), uri.path()) {
        lock(&shared.list_requests).push(recorded);
        let list = lock(&shared.models).clone();
        let (status, body) = models::answer(dialect, &list, uri.path(), uri.query());
        return json_response(status, &body, &[]);
    }
    let endpoint = dialect.endpoint(uri.path());
    let sequence = {
        let mut requests = lock(&shared.requests);
        requests.push(recorded.clone());
        requests.len()
    };
    let Some(endpoint) = endpoint.filter(|_| method == Method::POST) else {
        let message = format!("mock server: no route for {method} {}", uri.path());
        return json_response(404, &dialect.error_body(404, &message), &[]);
    };
    let next = lock(&shared.queue).pop_front();
    let Some(behaviour) = next.or_else(|| lock(&shared.fallback).clone()) else {
        let message = format!(
            "mock server: no behaviour queued for {method} {}",
            uri.path()
        );
        return json_response(400, &dialect.error_body(400, &message), &[]);
    };
    let Behaviour {
        reply,
        headers: reply_headers,
        header_delay,
        chunk_delay,
    } = behaviour;
    if let Some(delay) = header_delay {
        tokio::time::sleep(delay).await;
    }
    let model = recorded.body["model"]
        .as_str()
        .unwrap_or("mock-model")
        .to_string();
    match reply {
        Reply::Error { status, message } => {
            let key = sent_key(&recorded);
            let message = message.replace("{api_key}", &key);
            json_response(
                status,
                &dialect.error_body(status, &message),
                &reply_headers,
            )
        }
        Reply::Embeddings(vectors) if endpoint == Endpoint::Embeddings => json_response(
            200,
            &openai::embeddings_body(&vectors, &model),
            &reply_headers,
        ),
        Reply::Raw {
            status,
            content_type,
            body,
        } => {
            let headers = [
                vec![("content-type".to_string(), content_type)],
                reply_headers,
            ]
            .concat();
            respond(status, &headers, Body::from(body))
        }
        Reply::RawSse(frames) => sse_response(
            frames,
            Ending::Complete,
            dialect,
            &reply_headers,
            chunk_delay,
            &shared,
        ),
        Reply::Stream(script) => {
            let frames = dialect.frames(&script, &model, sequence);
            sse_response(
                frames,
                script.ending,
                dialect,
                &reply_headers,
                chunk_delay,
                &shared,
            )
        }
        Reply::Flood {
            total_bytes,
            chunk_bytes,
        } => {
            let sent = shared.flood_sent.clone();
            let piece = "x".repeat(chunk_bytes);
            let frames = stream::unfold(0usize, move |done| {
                let piece = piece.clone();
                let sent = sent.clone();
                async move {
                    if done >= total_bytes {
                        return None;
                    }
                    let n = chunk_bytes.min(total_bytes - done);
                    sent.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
                    let frame = format!(
                        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
                        &piece[..n]
                    );
                    Some((Ok::<String, std::io::Error>(frame), done + n))
                }
            })
            .chain(stream::iter([
                Ok("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".to_string()),
                Ok("data: [DONE]\n\n".to_string()),
            ]));
            let headers = [
                vec![("content-type".to_string(), "text/event-stream".to_string())],
                reply_headers,
            ]
            .concat();
            respond(200, &headers, Body::from_stream(frames))
        }
        Reply::Embeddings(_) => {
            let message = "mock server: an embeddings behaviour was queued for a chat request";
            json_response(400, &dialect.error_body(400, message), &[])
        }
    }
}

/// The key a request carried, from either provider's header.
fn sent_key(request: &RecordedRequest) -> String {
    request
        .header("x-api-key")
        .or_else(|| {
            request
                .header("authorization")
                .map(|v| v.trim_start_matches("Bearer "))
        })
        .unwrap_or("(none)")
        .to_string()
}

fn sse_response(
    frames: Vec<String>,
    ending: Ending,
    dialect: Dialect,
    extra_headers: &[(String, String)],
    chunk_delay: Option<Duration>,
    shared: &Shared,
) -> Response {
    let half = (frames.len() / 2).max(1);
    let (sent, tail): (
        Vec<String>,
        BoxStream<'static, Result<String, std::io::Error>>,
    ) = match ending {
        Ending::Complete | Ending::ErrorEvent { .. } => (frames, stream::empty().boxed()),
        Ending::Cut(count) => {
            // A pause first, so the server flushes the frames already sent
            // before the connection drops.
            let cut = stream::once(async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "mock cut the stream",
                ))
            });
            (first(frames, count.unwrap_or(half)), cut.boxed())
        }
        Ending::Malformed(count) => {
            let mut sent = first(frames, count.unwrap_or(half));
            sent.push(dialect.malformed_frame().to_string());
            (sent, stream::empty().boxed())
        }
        Ending::Hang(count) => {
            let mut shutdown = shared.shutdown.clone();
            // Never finishes; ends (as a broken connection) when the mock stops.
            let hang = stream::once(async move {
                let _ = shutdown.wait_for(|stopped| *stopped).await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "mock stopped",
                ))
            });
            (first(frames, count.unwrap_or(half)), hang.boxed())
        }
    };
    // Frames are paced against one clock (frame i leaves at start + i ×
    // delay) rather than slept one after another, so a delay of 10 ms really
    // streams 100 frames a second: per-frame sleeps drift by the timer's
    // overshoot and the write, which made "100 tokens/s" about 85.
    let started = tokio::time::Instant::now();
    let body = stream::iter(sent.into_iter().zip(1u32..))
        .then(move |(frame, i)| async move {
            if let Some(delay) = chunk_delay {
                tokio::time::sleep_until(started + delay * i).await;
            }
            Ok::<String, std::io::Error>(frame)
        })
        .chain(tail);
    let headers = [
        vec![
            ("content-type".to_string(), "text/event-stream".to_string()),
            ("cache-control".to_string(), "no-cache".to_string()),
        ],
        extra_headers.to_vec(),
    ]
    .concat();
    respond(200, &headers, Body::from_stream(body))
}

fn first(mut frames: Vec<String>, count: usize) -> Vec<String> {
    frames.truncate(count);
    frames
}

fn json_response(status: u16, body: &serde_json::Value, headers: &[(String, String)]) -> Response {
    let headers = [
        vec![("content-type".to_string(), "application/json".to_string())],
        headers.to_vec(),
    ]
    .concat();
    respond(status, &headers, Body::from(body.to_string()))
}

fn respond(status: u16, headers: &[(String, String)], body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
