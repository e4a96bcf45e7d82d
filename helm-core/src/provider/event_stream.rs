//! From a streaming HTTP body to [`StreamEvent`]s.
//!
//! [`LiveStream`] reads the body chunk by chunk under the idle and overall
//! timeouts, splits it into Server-Sent Events with [`SseParser`], and hands
//! each event to the adapter's [`WireDecoder`], which knows one provider's
//! wire format. Decoders are plain state machines with no I/O, so each
//! adapter's quirks can be tested on their own.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

use super::StreamEvent;
use super::http::{HttpOptions, Redactor, root_cause, seconds};
use super::sse::{SseEvent, SseParser};
use crate::error::{Error, ProviderFailure};

/// A failure before it is tied to a provider name and scrubbed of the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WireError {
    /// What kind of failure.
    pub failure: ProviderFailure,
    /// What happened, for people.
    pub message: String,
    /// Whether trying again could help (only done before the first event).
    pub retryable: bool,
    /// How long the provider asked to wait before trying again.
    pub retry_after: Option<Duration>,
}

impl WireError {
    /// A failure that a retry would not fix.
    pub(crate) fn new(failure: ProviderFailure, message: impl Into<String>) -> Self {
        WireError {
            failure,
            message: message.into(),
            retryable: false,
            retry_after: None,
        }
    }

    /// A failure that may pass if tried again, after `retry_after` if given.
    pub(crate) fn retryable(
        failure: ProviderFailure,
        message: impl Into<String>,
        retry_after: Option<Duration>,
    ) -> Self {
        WireError {
            failure,
            message: message.into(),
            retryable: true,
            retry_after,
        }
    }

    /// Invalid JSON (or JSON of the wrong shape) in the stream.
    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        WireError::new(ProviderFailure::MalformedStream, message)
    }

    /// The error a caller sees.
    pub(crate) fn into_error(self, provider: &str, redactor: &Redactor) -> Error {
        Error::provider(provider, self.failure, redactor.redact(&self.message))
    }
}

/// Whether a response is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// More events are expected.
    Continue,
    /// The finish marker arrived; the rest of the body is not read.
    Done,
}

/// One provider's streaming wire format.
pub(crate) trait WireDecoder: Send + 'static {
    /// Folds one event into `out`, and says whether the response is complete.
    fn decode(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Progress, WireError>;

    /// The body ended before [`Progress::Done`]: flushes what is complete, or
    /// says what is missing.
    fn end_of_body(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), WireError>;

    /// The server answered with one JSON document instead of an event stream
    /// (some ignore `stream: true`). By default that is a malformed stream.
    fn decode_document(
        &mut self,
        document: &serde_json::Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), WireError> {
        let _ = (document, out);
        Err(WireError::malformed(
            "expected an event stream but the server sent a single JSON document",
        ))
    }
}

/// A response body being decoded into events.
pub(crate) struct LiveStream<D> {
    response: Option<reqwest::Response>,
    /// The server sent `application/json` rather than `text/event-stream`.
    whole_document: bool,
    parser: SseParser,
    decoder: D,
    ready: VecDeque<StreamEvent>,
    failed: Option<WireError>,
    options: HttpOptions,
    deadline: Instant,
}

impl<D: WireDecoder> LiveStream<D> {
    /// Starts decoding `response`.
    pub(crate) fn new(
        response: reqwest::Response,
        decoder: D,
        options: &HttpOptions,
        deadline: Instant,
    ) -> Self {
        let whole_document = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        LiveStream {
            response: Some(response),
            whole_document,
            parser: SseParser::new(),
            decoder,
            ready: VecDeque::new(),
            failed: None,
            options: options.clone(),
            deadline,
        }
    }

    /// The next event, the failure that ended the stream, or `None` at its end.
    pub(crate) async fn next(&mut self) -> Option<Result<StreamEvent, WireError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if let Some(failure) = self.failed.take() {
                return Some(Err(failure));
            }
            self.response.as_ref()?;
            if self.whole_document {
                self.read_document().await;
            } else {
                self.read_chunk().await;
            }
        }
    }

    async fn read_chunk(&mut self) {
        let Some(response) = self.response.as_mut() else {
            return;
        };
        match next_chunk(response, &self.options, self.deadline).await {
            Ok(Some(chunk)) => {
                for event in self.parser.push(&chunk) {
                    if self.decode(&event) == Progress::Done {
                        break;
                    }
                }
            }
            Ok(None) => {
                self.response = None;
                let finished = match self.parser.finish() {
                    Some(event) => self.decode(&event) == Progress::Done,
                    None => false,
                };
                if !finished && self.failed.is_none() {
                    let mut out = Vec::new();
                    let ended = self.decoder.end_of_body(&mut out);
                    self.ready.extend(out);
                    self.failed = ended.err();
                }
            }
            Err(failure) => self.fail(failure),
        }
    }

    async fn read_document(&mut self) {
        let Some(response) = self.response.take() else {
            return;
        };
        let body = match read_body(response, &self.options, self.deadline, None).await {
            Ok(body) => body,
            Err(failure) => return self.fail(failure),
        };
        let mut out = Vec::new();
        let decoded = serde_json::from_slice(&body)
            .map_err(|e| WireError::malformed(format!("the response is not valid JSON: {e}")))
            .and_then(|document| self.decoder.decode_document(&document, &mut out));
        self.ready.extend(out);
        self.failed = decoded.err();
    }

    fn decode(&mut self, event: &SseEvent) -> Progress {
        let mut out = Vec::new();
        let progress = self.decoder.decode(event, &mut out);
        self.ready.extend(out);
        match progress {
            Ok(Progress::Continue) => Progress::Continue,
            Ok(Progress::Done) => {
                // Dropping the response closes the connection; nothing after
                // the finish marker matters.
                self.response = None;
                Progress::Done
            }
            Err(failure) => {
                self.fail(failure);
                Progress::Done
            }
        }
    }

    fn fail(&mut self, failure: WireError) {
        self.response = None;
        self.failed = Some(failure);
    }
}

/// The next body chunk, within the idle timeout and the overall deadline.
async fn next_chunk(
    response: &mut reqwest::Response,
    options: &HttpOptions,
    deadline: Instant,
) -> Result<Option<bytes::Bytes>, WireError> {
    let HttpOptions {
        idle_timeout,
        total_timeout,
        ..
    } = *options;
    let overall = || {
        WireError::new(
            ProviderFailure::Timeout,
            format!(
                "the response took longer than the overall limit of {}",
                seconds(total_timeout)
            ),
        )
    };
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(overall());
    }
    match tokio::time::timeout(idle_timeout.min(left), response.chunk()).await {
        Ok(Ok(chunk)) => Ok(chunk),
        Ok(Err(error)) => Err(WireError::malformed(format!(
            "the connection broke mid-stream: {}",
            root_cause(&error)
        ))),
        Err(_) if idle_timeout >= left => Err(overall()),
        Err(_) => Err(WireError::new(
            ProviderFailure::Timeout,
            format!("the model sent nothing for {}", seconds(idle_timeout)),
        )),
    }
}

/// Reads a whole body (up to `limit` bytes, if given) under the same timeouts.
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    options: &HttpOptions,
    deadline: Instant,
    limit: Option<usize>,
) -> Result<Vec<u8>, WireError> {
    let mut body = Vec::new();
    while let Some(chunk) = next_chunk(&mut response, options, deadline).await? {
        body.extend_from_slice(&chunk);
        if limit.is_some_and(|limit| body.len() >= limit) {
            break;
        }
    }
    Ok(body)
}

/// The start of a piece of stream data, for an error message.
pub(crate) fn snippet(data: &str) -> String {
    const LIMIT: usize = 120;
    match data.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &data[..cut]),
        None => data.to_string(),
    }
}
