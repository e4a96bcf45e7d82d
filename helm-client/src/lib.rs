//! # helm-client
//!
//! A typed client of a running `helm-http` server: its REST API and its live
//! event stream, authenticated with an API token. The `1helm` CLI (with
//! `--server`) and the `onehelm` Python package (`connect(url, token)`) are
//! both built on it, so the two speak to a server the same way.
//!
//! Answers are helm-core's own types: the server's JSON reads straight into
//! them, so a frontend renders a remote workspace exactly as a local one.
//! Every failure is an [`Error`] with the server's [`ErrorKind`] and its
//! stable code; frontends map the kind, never the message.
//!
//! - [`Client`]: the endpoints, one method each (in `api`).
//! - [`EventStream`]: the events that happen from the moment it is opened.
//! - [`ChannelDetail`], [`StatusView`], [`ThreadView`]: the server's
//!   composite answers.

mod api;
mod events;

use std::sync::Arc;

use helm_core::ErrorKind;
use helm_core::model::{ChannelRef, Message, ResolvedModel, Thread, Turn, User};
use helm_core::store::{ChannelRecord, StoreStats};
use reqwest::StatusCode;
use rustls_platform_verifier::BuilderVerifierExt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use events::EventStream;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure: an error the server answered with, a server that could not be
/// reached, or an answer that could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// The class, which frontends map to an exit code or an exception.
    pub kind: ErrorKind,
    /// The server's stable code, such as `not_found` (or this client's own:
    /// `unreachable`, `stream`, `bad_response`).
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
}

impl Error {
    fn new(kind: ErrorKind, code: &str, message: impl Into<String>) -> Self {
        Error {
            kind,
            code: code.to_string(),
            message: message.into(),
        }
    }

    fn unreachable(url: &str, e: &reqwest::Error) -> Self {
        Error::new(
            ErrorKind::Unavailable,
            "unreachable",
            format!("cannot reach the server at {url}: {e}"),
        )
    }

    fn stream(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unavailable, "stream", message)
    }

    /// What an HTTP error response means: the class from the status (409 is
    /// a conflict only when the server's code says so, else a refusal).
    fn from_response(status: StatusCode, body: &str) -> Self {
        #[derive(Deserialize)]
        struct Body {
            code: String,
            message: String,
        }
        let (code, message) = match serde_json::from_str::<Body>(body) {
            Ok(b) => (b.code, b.message),
            // Not a Helm error: most often a URL that is not a Helm server.
            Err(_) => (
                "http".to_string(),
                format!(
                    "the server answered {status} with no Helm error in its body ({}); if \
                     this URL is not a Helm server (helm-http), check it",
                    excerpt(body)
                ),
            ),
        };
        let kind = match status.as_u16() {
            400 | 413 | 415 | 422 => ErrorKind::Invalid,
            401 => ErrorKind::Unauthenticated,
            403 => ErrorKind::Forbidden,
            404 => ErrorKind::NotFound,
            409 if code == "conflict" => ErrorKind::Conflict,
            409 => ErrorKind::Refused,
            429 | 503 => ErrorKind::Unavailable,
            502 => ErrorKind::Upstream,
            _ => ErrorKind::Internal,
        };
        Error {
            kind,
            code,
            message,
        }
    }
}

/// The start of a body, on one line, for an error message.
fn excerpt(body: &str) -> String {
    let line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if line.is_empty() => "empty".into(),
        None => line,
    }
}

impl From<helm_core::Error> for Error {
    fn from(e: helm_core::Error) -> Self {
        Error {
            kind: e.kind(),
            code: e.code().to_string(),
            message: e.to_string(),
        }
    }
}

impl From<reqwest::Error> for Error {
    fn from(e: reqwest::Error) -> Self {
        if e.is_decode() {
            Error::new(
                ErrorKind::Internal,
                "bad_response",
                format!("the server's answer could not be read: {e}"),
            )
        } else {
            Error::new(
                ErrorKind::Unavailable,
                "unreachable",
                format!("the server could not be reached: {e}"),
            )
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::new(
            ErrorKind::Internal,
            "bad_response",
            format!("the server's answer could not be read: {e}"),
        )
    }
}

/// A channel with the model that serves it and, for the Captain and admins,
/// its workspace directory on the server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChannelDetail {
    /// The channel, its agent and profile.
    #[serde(flatten)]
    pub record: ChannelRecord,
    /// The model that will serve the next turn.
    #[serde(default)]
    pub model: Option<ResolvedModel>,
    /// The workspace directory (on the server, for a remote one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_dir: Option<String>,
}

/// The workspace at a glance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusView {
    /// Where the workspace lives: a data directory, or a server's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// The workspace.
    pub workspace: helm_core::model::Workspace,
    /// The Captain.
    pub captain: User,
    /// Skipper.
    pub skipper: helm_core::model::Agent,
    /// How recall works (absent from a server too old to say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<helm_core::memory::config::RecallMode>,
    /// The computers a new channel may choose, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub computers: Vec<String>,
    /// Counts.
    #[serde(flatten)]
    pub stats: StatusCounts,
}

/// The workspace's counts as `status` shows them. A server tells threads
/// and messages to admins only, so those two may be absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    /// The schema version.
    pub schema_version: i64,
    /// People.
    pub users: u64,
    /// Active channels, `#main` included.
    pub channels_active: u64,
    /// Archived channels.
    pub channels_archived: u64,
    /// Agents, Skipper included (for a member: the channels' agents they see).
    pub agents: u64,
    /// Threads (absent for a member through a server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// Messages (absent for a member through a server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// The newest event's sequence number.
    pub last_event_seq: u64,
}

impl From<StoreStats> for StatusCounts {
    fn from(s: StoreStats) -> Self {
        StatusCounts {
            schema_version: s.schema_version,
            users: s.users,
            channels_active: s.channels_active,
            channels_archived: s.channels_archived,
            agents: s.agents,
            threads: Some(s.threads),
            messages: Some(s.messages),
            last_event_seq: s.last_event_seq,
        }
    }
}

/// A thread with its transcript and turns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadView {
    /// The thread.
    pub thread: Thread,
    /// Its messages in server order.
    pub messages: Vec<Message>,
    /// Its turns, oldest first.
    pub turns: Vec<Turn>,
}

/// A server, reached with an API token. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    base: String,
    token: String,
    http: reqwest::Client,
}

/// Builds the HTTP client. TLS is rustls with the `ring` provider passed in
/// explicitly, verified against the OS certificate store.
fn http_client(user_agent: &str) -> Result<reqwest::Client> {
    let tls_error = |e: &dyn std::fmt::Display| {
        Error::new(
            ErrorKind::Internal,
            "tls",
            format!("cannot set up TLS: {e}"),
        )
    };
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| tls_error(&e))?
    .with_platform_verifier()
    .map_err(|e| tls_error(&e))?
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(user_agent)
        .build()
        .map_err(|e| tls_error(&e))
}

/// A channel as it goes into a URL path (`#launch` → `launch`).
fn channel_path(raw: &str) -> Result<String> {
    Ok(match raw.parse::<ChannelRef>()? {
        ChannelRef::Id(id) => id.to_string(),
        ChannelRef::Name(name) => name.as_str().to_string(),
    })
}

impl Client {
    /// A server at `url` (`http://` or `https://`), acting as the owner of
    /// `token`; `user_agent` names the frontend (`1helm/0.1.0`).
    pub fn new(url: &str, token: &str, user_agent: &str) -> Result<Self> {
        let base = url.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(helm_core::Error::invalid(
                "server URL",
                format!("{url:?} is not an http(s) URL such as http://127.0.0.1:7400"),
            )
            .into());
        }
        let token = token.trim();
        if token.is_empty() {
            return Err(Error::new(
                ErrorKind::Unauthenticated,
                "unauthenticated",
                "a server needs an API token (make one with POST /api/tokens after signing in)",
            ));
        }
        Ok(Client {
            base,
            token: token.to_string(),
            http: http_client(user_agent)?,
        })
    }

    /// The server's base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// `path` on the server, with `query` encoded as a form (`a=b&c=d`).
    fn url(&self, path: &str, query: &[(&str, &str)]) -> Result<reqwest::Url> {
        let mut url = reqwest::Url::parse(&format!("{}{path}", self.base)).map_err(|e| {
            helm_core::Error::invalid("server URL", format!("{}{path}: {e}", self.base))
        })?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// Sends a request with the token; an error response becomes an
    /// [`Error`] with the server's code and message.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| Error::unreachable(&self.base, &e))?;
        let status = response.status();
        if !status.is_success() {
            let text = response
                .text()
                .await
                .map_err(|e| Error::unreachable(&self.base, &e))?;
            return Err(Error::from_response(status, &text));
        }
        Ok(response)
    }

    /// A successful response's JSON body (an empty one reads as `null`).
    async fn read_json<T: DeserializeOwned>(&self, response: reqwest::Response) -> Result<T> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let text = response
            .text()
            .await
            .map_err(|e| Error::unreachable(&self.base, &e))?;
        // A page where the API answers JSON: the URL reaches a web server
        // (or Helm's own web UI under a wrong path), not Helm's API.
        if content_type.starts_with("text/html") {
            return Err(Error::new(
                ErrorKind::Unavailable,
                "not_helm",
                format!(
                    "{} answered with a web page, not Helm's API; if this URL is not a Helm \
                     server (helm-http), or has a path after its address, check it",
                    self.base
                ),
            ));
        }
        let text = if text.is_empty() { "null" } else { &text };
        Ok(serde_json::from_str(text)?)
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = self.send(request).await?;
        self.read_json(response).await
    }

    /// `GET path?query`, answered with JSON.
    async fn get_query<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T> {
        let response = self.send(self.http.get(self.url(path, query)?)).await?;
        self.read_json(response).await
    }

    /// `GET path?query`, answered with raw bytes.
    async fn get_bytes(&self, path: &str, query: &[(&str, &str)]) -> Result<Vec<u8>> {
        let response = self.send(self.http.get(self.url(path, query)?)).await?;
        Ok(response
            .bytes()
            .await
            .map_err(|e| Error::unreachable(&self.base, &e))?
            .to_vec())
    }

    /// `POST path?query` with a raw body, answered with JSON.
    async fn post_raw<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        content_type: &'static str,
        body: Vec<u8>,
    ) -> Result<T> {
        let request = self
            .http
            .post(self.url(path, query)?)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body);
        let response = self.send(request).await?;
        self.read_json(response).await
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: Value) -> Result<T> {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    /// Opens a stream of the events that happen from now on: the
    /// `/api/events` WebSocket for `http://` servers; for `https://` ones
    /// (this build's WebSocket client speaks no TLS) the same events from
    /// `/api/events/log`, polled.
    pub async fn events(&self) -> Result<EventStream> {
        EventStream::open(&self.base, &self.token, self.http.clone()).await
    }
}
