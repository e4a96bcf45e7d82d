//! The HTTP plumbing the model adapters share: one configured client, timeouts,
//! retries, and turning HTTP failures into [`ProviderFailure`]s.
//!
//! An adapter prepares a [`JsonRequest`] (URL, headers, body, and the key it
//! carries, so that the key can be scrubbed from every message) and asks
//! [`HttpTransport`] either for an event stream, decoded by its own
//! [`WireDecoder`](super::event_stream::WireDecoder), or for a whole JSON
//! document. Failures before the first stream event are retried (see
//! [`super::retry`]); failures after it surface as stream items.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rustls_platform_verifier::BuilderVerifierExt;
use tokio::time::Instant;

use super::EventStream;
use super::event_stream::{LiveStream, WireDecoder, WireError, read_body};
use super::retry;
use crate::error::{Error, ProviderFailure, Result};

/// Timeouts and retry limits for talking to a model provider.
///
/// The defaults suit real providers; tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// Longest wait for a TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Longest wait for the response headers once connected. Generous, since
    /// a local server may load the model before it answers.
    pub response_timeout: Duration,
    /// Longest silence between two chunks of a streaming body.
    pub idle_timeout: Duration,
    /// Longest time for a whole response, retries included.
    pub total_timeout: Duration,
    /// How many times a rate-limited, failed or unreachable request is retried.
    pub max_retries: u32,
    /// The wait before the first retry; it doubles for each further one.
    pub initial_backoff: Duration,
    /// The longest wait between two retries.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; a server asking for more is not retried.
    pub max_retry_after: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(90),
            total_timeout: Duration::from_secs(20 * 60),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Removes an API key from text bound for an error message or a log line,
/// in case a provider echoes the key back.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    secret: Option<Arc<str>>,
}

impl Redactor {
    /// A redactor for `secret`.
    pub(crate) fn new(secret: &str) -> Self {
        Redactor {
            secret: (!secret.is_empty()).then(|| Arc::from(secret)),
        }
    }

    /// `text` with every occurrence of the secret replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
        match &self.secret {
            Some(secret) => text.replace(&**secret, "[redacted]"),
            None => text.to_string(),
        }
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Redactor(..)")
    }
}

/// A request ready to send (and to send again on retry): a POST with a JSON
/// body, or a GET when the body is empty.
#[derive(Debug)]
pub(crate) struct JsonRequest {
    /// The endpoint.
    pub url: String,
    /// Headers beyond the content type, the key's among them (marked sensitive).
    pub headers: HeaderMap,
    /// The serialised body.
    pub body: Vec<u8>,
    /// Scrubs the key this request carries from messages.
    pub redactor: Redactor,
}

/// A header carrying a secret: marked sensitive so that HTTP tooling does not
/// print it, and never echoed in the error if it cannot be built.
pub(crate) fn secret_header(provider: &str, value: &str) -> Result<HeaderValue> {
    let mut header = HeaderValue::from_str(value).map_err(|_| {
        Error::provider(
            provider,
            ProviderFailure::Unconfigured,
            "its API key contains characters that cannot be sent in an HTTP header",
        )
    })?;
    header.set_sensitive(true);
    Ok(header)
}

/// Parses a configuration's extra headers.
pub(crate) fn extra_headers<'a>(
    pairs: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Result<HeaderMap> {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        let invalid = || {
            Error::invalid(
                "extra header",
                format!("{name:?} is not a valid HTTP header"),
            )
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let value = HeaderValue::from_str(value).map_err(|_| invalid())?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// Joins a base URL and a path, tolerating a trailing slash on the base.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    // A query (`?api-version=…`) stays at the end, after the joined path.
    let (base, query) = match base.trim().split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (base.trim(), None),
    };
    let joined = format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    );
    match query {
        Some(query) => format!("{joined}?{query}"),
        None => joined,
    }
}

/// Whether `url` carries a `user:password@` part.
pub(crate) fn has_userinfo(url: &str) -> bool {
    url.split_once("://").is_some_and(|(_, after)| {
        let authority = after.split(['/', '?', '#']).next().unwrap_or_default();
        authority.contains('@')
    })
}

/// Words in a query parameter's name that say its value is a credential.
const SECRET_PARAMS: [&str; 7] = [
    "key",
    "token",
    "secret",
    "sig",
    "pass",
    "auth",
    "credential",
];

/// A provider URL as people may see it (listings, error messages): without
/// a `user:password@` part, and with the values of query parameters named
/// like credentials (`api-key`, `token`, `sig`, …) replaced by `<redacted>`.
pub fn shown_url(url: &str) -> String {
    let (rest, query) = match url.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (url, None),
    };
    let rest = match rest.split_once("://") {
        Some((scheme, after)) => {
            let authority_end = after.find('/').unwrap_or(after.len());
            let (authority, path) = after.split_at(authority_end);
            let host = authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host);
            format!("{scheme}://{host}{path}")
        }
        None => rest.to_string(),
    };
    let Some(query) = query else {
        return rest;
    };
    let shown: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _))
                if SECRET_PARAMS
                    .iter()
                    .any(|w| name.to_ascii_lowercase().contains(w)) =>
            {
                format!("{name}=<redacted>")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{rest}?{}", shown.join("&"))
}

/// Sends requests to one provider.
#[derive(Debug, Clone)]
pub(crate) struct HttpTransport {
    provider: Arc<str>,
    client: reqwest::Client,
    options: HttpOptions,
}

impl HttpTransport {
    /// A transport for the provider named `provider`.
    pub(crate) fn new(provider: &str, options: HttpOptions) -> Result<Self> {
        Ok(HttpTransport {
            provider: Arc::from(provider),
            client: build_client(&options)?,
            options,
        })
    }

    /// Sends `request` and streams the response through the decoder that
    /// `new_decoder` makes (a fresh one per attempt). Returns once the first
    /// event has arrived, so that everything that fails before it, including
    /// an error event at the head of the stream, can still be retried.
    pub(crate) async fn stream<D, F>(
        &self,
        request: JsonRequest,
        new_decoder: F,
    ) -> Result<EventStream>
    where
        D: WireDecoder,
        F: Fn() -> D + Send + Sync,
    {
        let deadline = Instant::now() + self.options.total_timeout;
        let (request, new_decoder) = (&request, &new_decoder);
        let (first, live) = self
            .with_retries(request, deadline, move || async move {
                let response = self.send(request, deadline).await?;
                let mut live = LiveStream::new(response, new_decoder(), &self.options, deadline);
                match live.next().await {
                    Some(Err(failure)) => Err(failure),
                    first => Ok((first, live)),
                }
            })
            .await?;
        let provider = self.provider.clone();
        let redactor = request.redactor.clone();
        let rest = stream::unfold(live, |mut live| async move {
            live.next().await.map(|item| (item, live))
        });
        Ok(stream::iter(first)
            .chain(rest)
            .map(move |item| item.map_err(|failure| failure.into_error(&provider, &redactor)))
            .boxed())
    }

    /// Sends `request` and returns the JSON document it answers with.
    pub(crate) async fn fetch_json(&self, request: JsonRequest) -> Result<serde_json::Value> {
        self.fetch_json_within(request, self.options.total_timeout)
            .await
    }

    /// [`HttpTransport::fetch_json`] within `limit` (retries included),
    /// for short look-ups such as a model list.
    pub(crate) async fn fetch_json_within(
        &self,
        request: JsonRequest,
        limit: Duration,
    ) -> Result<serde_json::Value> {
        let deadline = Instant::now() + limit.min(self.options.total_timeout);
        let request = &request;
        self.with_retries(request, deadline, move || async move {
            let response = self.send(request, deadline).await?;
            let body = read_body(response, &self.options, deadline, None).await?;
            serde_json::from_slice(&body).map_err(|e| {
                WireError::new(
                    ProviderFailure::MalformedStream,
                    format!(
                        "the response from {} is not JSON: {e}",
                        shown_url(&request.url)
                    ),
                )
            })
        })
        .await
    }

    /// Runs `attempt` until it succeeds, fails for good, or runs out of
    /// retries or time.
    async fn with_retries<T, F, Fut>(
        &self,
        request: &JsonRequest,
        deadline: Instant,
        mut attempt: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, WireError>>,
    {
        let mut retries = 0;
        loop {
            let failure = match attempt().await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let give_up = |mut failure: WireError| {
                if retries > 0 {
                    let plural = if retries == 1 { "retry" } else { "retries" };
                    failure
                        .message
                        .push_str(&format!(" (gave up after {retries} {plural})"));
                }
                Err(failure.into_error(&self.provider, &request.redactor))
            };
            if !failure.retryable || retries >= self.options.max_retries {
                return give_up(failure);
            }
            let Some(wait) =
                retry::retry_delay(retries, failure.retry_after, &self.options, retry::jitter())
            else {
                let asked = failure.retry_after.unwrap_or_default().as_secs();
                let mut failure = failure;
                failure.message.push_str(&format!(
                    " (the provider asked to wait {asked} s, longer than Helm waits)"
                ));
                return give_up(failure);
            };
            if Instant::now() + wait >= deadline {
                return give_up(failure);
            }
            tracing::warn!(
                provider = %self.provider,
                url = %request.url,
                retry = retries + 1,
                wait_ms = wait.as_millis() as u64,
                reason = %request.redactor.redact(&failure.message),
                "model request failed; retrying"
            );
            tokio::time::sleep(wait).await;
            retries += 1;
        }
    }

    /// One attempt: sends the request and returns a successful response, or
    /// the failure its status, or the network, amounts to.
    async fn send(
        &self,
        request: &JsonRequest,
        deadline: Instant,
    ) -> Result<reqwest::Response, WireError> {
        let url = &request.url;
        tracing::debug!(provider = %self.provider, %url, "sending model request");
        let sending = if request.body.is_empty() {
            self.client.get(url).headers(request.headers.clone()).send()
        } else {
            self.client
                .post(url)
                .headers(request.headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(request.body.clone())
                .send()
        };
        let limit = self
            .options
            .response_timeout
            .min(deadline.saturating_duration_since(Instant::now()));
        let response = match tokio::time::timeout(limit, sending).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => return Err(network_failure(url, &error)),
            Err(_) => {
                return Err(WireError::new(
                    ProviderFailure::Timeout,
                    format!(
                        "no response from {} within {}",
                        shown_url(url),
                        seconds(limit)
                    ),
                ));
            }
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        // An error body is short; a broken one must not turn into a second error.
        let body = read_body(response, &self.options, deadline, Some(64 * 1024))
            .await
            .unwrap_or_default();
        Err(status_failure(
            url,
            status,
            &headers,
            &String::from_utf8_lossy(&body),
        ))
    }
}

/// Builds the client. TLS is rustls with the `ring` provider, passed in
/// explicitly rather than installed process-wide, so an embedding app's own
/// rustls setup is left alone; the OS certificate store verifies servers.
fn build_client(options: &HttpOptions) -> Result<reqwest::Client> {
    build_http_client(options.connect_timeout)
}

/// An HTTP client with Helm's TLS setup (see [`build_client`]), for other
/// outbound HTTP (MCP servers).
pub(crate) fn build_http_client(connect_timeout: std::time::Duration) -> Result<reqwest::Client> {
    let mut tls = tls_config()?;
    // The client speaks HTTP/1.1 only (reqwest's `http2` feature is off).
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(connect_timeout)
        .user_agent(concat!("helm/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::Internal(format!("could not build the HTTP client: {e}")))
}

/// Helm's client TLS: rustls with the `ring` provider and the OS
/// certificate store (for HTTP, and for WebSockets to a remote computer).
pub(crate) fn tls_config() -> Result<rustls::ClientConfig> {
    let tls_error = |e: rustls::Error| Error::Internal(format!("could not set up TLS: {e}"));
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(tls_error)?
    .with_platform_verifier()
    .map_err(tls_error)?
    .with_no_client_auth())
}

/// What a failed exchange (no HTTP status) amounts to.
fn network_failure(url: &str, error: &reqwest::Error) -> WireError {
    let url = &shown_url(url);
    let cause = root_cause(error);
    if is_tls_failure(error) {
        // A refused certificate or protocol will be refused again.
        WireError::new(
            ProviderFailure::Unreachable,
            format!("could not connect securely to {url}: {cause}"),
        )
    } else if error.is_connect() {
        WireError::retryable(
            ProviderFailure::Unreachable,
            format!("could not connect to {url}: {cause}"),
            None,
        )
    } else if error.is_timeout() {
        WireError::new(
            ProviderFailure::Timeout,
            format!("the request to {url} timed out: {cause}"),
        )
    } else {
        // Such as a kept-alive connection the server had already closed.
        WireError::retryable(
            ProviderFailure::Unreachable,
            format!("the request to {url} failed: {cause}"),
            None,
        )
    }
}

/// Whether rustls refused the connection. Its error travels inside
/// `io::Error`s (nested, as the TLS layers wrap it), which hide it from
/// `source()`, so those are opened too.
fn is_tls_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    if error.is::<rustls::Error>() {
        return true;
    }
    let wrapped = error
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
        .is_some_and(|inner| is_tls_failure(inner));
    wrapped || error.source().is_some_and(is_tls_failure)
}

/// The innermost cause of an error, which names what really happened
/// ("Connection refused") rather than the layers it passed through.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// What an HTTP error status amounts to, with the provider's own message.
fn status_failure(url: &str, status: StatusCode, headers: &HeaderMap, body: &str) -> WireError {
    let url = &shown_url(url);
    let (failure, hint) = match status.as_u16() {
        401 | 403 => (
            ProviderFailure::Unauthorized,
            " (the API key is missing or was refused)",
        ),
        404 => (
            ProviderFailure::NotFound,
            " (check the model name and the base URL)",
        ),
        408 => (ProviderFailure::Timeout, ""),
        429 => (ProviderFailure::RateLimited, ""),
        500..=599 => (ProviderFailure::Server, ""),
        _ => (ProviderFailure::BadRequest, ""),
    };
    let detail = provider_error_message(body);
    let message = format!("HTTP {status} from {url}: {detail}{hint}");
    let retryable = match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        // OpenAI and Anthropic say explicitly whether a retry can help.
        Some("true") => true,
        Some("false") => false,
        _ => matches!(status.as_u16(), 408 | 429 | 500..=599),
    };
    WireError {
        failure,
        message,
        retryable,
        retry_after: retry::retry_after(headers, jiff::Timestamp::now()),
    }
}

/// The message in a provider's error body, whichever shape it takes
/// (OpenAI, Anthropic, vLLM, FastAPI, Ollama, plain text), trimmed and short.
pub(crate) fn provider_error_message(body: &str) -> String {
    let body = body.trim();
    let message = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(json) => error_message_in(&json).unwrap_or_else(|| json.to_string()),
        Err(_) => body.to_string(),
    };
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if message.is_empty() {
        return "no details given".to_string();
    }
    const LIMIT: usize = 400;
    match message.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message,
    }
}

fn error_message_in(json: &serde_json::Value) -> Option<String> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let error = &json["error"];
    text(&error["message"])
        .or_else(|| text(error))
        .or_else(|| text(&json["message"]))
        .or_else(|| text(&json["detail"]))
        .or_else(|| {
            // FastAPI validation errors: a list of {msg, loc}.
            let items = json["detail"].as_array()?;
            let messages: Vec<String> = items.iter().filter_map(|d| text(&d["msg"])).collect();
            (!messages.is_empty()).then(|| messages.join("; "))
        })
}

/// An `f32` setting (such as a temperature) as the decimal a person wrote:
/// `0.2`, not the `0.20000000298023224` a plain widening to `f64` gives.
pub(crate) fn decimal(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

/// A duration for people: "90 s", "0.2 s".
pub(crate) fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs >= 10.0 || secs.fract() == 0.0 {
        format!("{} s", secs.round())
    } else {
        format!("{secs:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_message_in_every_error_body_shape() {
        let cases = [
            (
                r#"{"error":{"message":"model not found","type":"invalid_request_error"}}"#,
                "model not found",
            ),
            (
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                "Overloaded",
            ),
            (r#"{"error":"model 'x' not found"}"#, "model 'x' not found"),
            (
                r#"{"object":"error","message":"bad  \n things","code":400}"#,
                "bad things",
            ),
            (
                r#"{"detail":[{"msg":"field required"},{"msg":"too long"}]}"#,
                "field required; too long",
            ),
            ("404 page not found\n", "404 page not found"),
            ("   ", "no details given"),
        ];
        for (body, expected) in cases {
            assert_eq!(provider_error_message(body), expected, "{body}");
        }
    }

    #[test]
    fn long_messages_are_cut() {
        let message = provider_error_message(&"x".repeat(5000));
        assert_eq!(message.chars().count(), 401);
        assert!(message.ends_with('…'));
    }

    #[test]
    fn redaction_removes_every_copy_of_the_key() {
        let redactor = Redactor::new("sk-secret");
        assert_eq!(
            redactor.redact("a sk-secret b sk-secret"),
            "a [redacted] b [redacted]"
        );
        assert_eq!(format!("{redactor:?}"), "Redactor(..)");
        assert_eq!(Redactor::new("").redact("text"), "text");
    }

    #[test]
    fn joins_urls_with_or_without_a_trailing_slash() {
        assert_eq!(join_url("http://h/v1/", "/chat"), "http://h/v1/chat");
        assert_eq!(join_url("http://h/v1", "chat"), "http://h/v1/chat");
    }

    #[test]
    fn durations_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(90)), "90 s");
        assert_eq!(seconds(Duration::from_millis(200)), "0.2 s");
        assert_eq!(seconds(Duration::from_secs(1)), "1 s");
    }

    #[test]
    fn a_query_stays_after_the_joined_path() {
        assert_eq!(
            join_url("https://x.example/v1?api-version=2024-06-01", "models"),
            "https://x.example/v1/models?api-version=2024-06-01"
        );
        assert_eq!(
            join_url("https://x.example/v1/", "/models"),
            "https://x.example/v1/models"
        );
    }

    #[test]
    fn credentials_in_a_url_are_not_shown() {
        assert_eq!(
            shown_url("http://svc:PASS@10.0.0.1:8080/v1?api-key=SECRET&api-version=1"),
            "http://10.0.0.1:8080/v1?api-key=<redacted>&api-version=1"
        );
        assert_eq!(
            shown_url("https://api.openai.com/v1"),
            "https://api.openai.com/v1"
        );
        assert!(has_userinfo("http://svc:PASS@host/v1"));
        assert!(!has_userinfo("https://host/v1/@team"));
    }
}
