//! [`MockAnthropic`]: a mock of Anthropic's Messages API, streaming
//! `message_start`, a `ping`, one content block per text and tool call
//! (`content_block_start`, deltas, `content_block_stop`), `message_delta`
//! with the stop reason and output usage, and `message_stop`.

use std::ops::Deref;

use helm_core::provider::{Anthropic, HttpOptions, ProviderConfig, ProviderKind};
use serde_json::{Value, json};

use super::behaviour::{Ending, Script};
use super::{Dialect, MockServer, fast_http_options};

/// A mock Anthropic server; see [`MockServer`] for the queue and the
/// recorded requests.
pub struct MockAnthropic {
    server: MockServer,
}

impl MockAnthropic {
    /// Starts a server on `127.0.0.1` at a free port.
    pub async fn start() -> anyhow::Result<Self> {
        Ok(MockAnthropic {
            server: MockServer::start(Dialect::Anthropic).await?,
        })
    }

    /// The base URL as Anthropic clients take it: `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.origin()
    }

    /// A provider configuration pointing at this mock, with no key and
    /// `mock-model` as the default model.
    pub fn provider_config(&self, name: &str) -> ProviderConfig {
        ProviderConfig {
            name: name.to_string(),
            kind: ProviderKind::Anthropic,
            base_url: self.base_url(),
            api_key: None,
            default_model: Some("mock-model".to_string()),
            extra_headers: Default::default(),
        }
    }

    /// The real adapter pointed at this mock, with [`fast_http_options`].
    pub fn adapter(&self) -> anyhow::Result<Anthropic> {
        self.adapter_with(fast_http_options())
    }

    /// The real adapter pointed at this mock, with these options.
    pub fn adapter_with(&self, options: HttpOptions) -> anyhow::Result<Anthropic> {
        Ok(Anthropic::with_options(
            &self.provider_config("mock-anthropic"),
            options,
        )?)
    }
}

impl Deref for MockAnthropic {
    type Target = MockServer;

    fn deref(&self) -> &MockServer {
        &self.server
    }
}

fn event(data: &Value) -> String {
    let name = data["type"].as_str().unwrap_or("message");
    format!("event: {name}\ndata: {data}\n\n")
}

/// The SSE frames of a streamed answer.
pub(crate) fn frames(script: &Script, model: &str, sequence: usize) -> Vec<String> {
    let mut start = json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_mock_{sequence}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
        },
    });
    if let Some((input, _)) = script.usage {
        start["message"]["usage"] = json!({ "input_tokens": input, "output_tokens": 1 });
    }
    let mut frames = vec![event(&start)];
    if let Ending::ErrorEvent { kind, message } = &script.ending {
        frames.push(event(
            &json!({ "type": "error", "error": { "type": kind, "message": message } }),
        ));
        return frames;
    }
    frames.push(event(&json!({ "type": "ping" })));
    let mut block = 0;
    if !script.text.is_empty() {
        frames.push(event(&json!({
            "type": "content_block_start",
            "index": block,
            "content_block": { "type": "text", "text": "" },
        })));
        for text in &script.text {
            frames.push(event(&json!({
                "type": "content_block_delta",
                "index": block,
                "delta": { "type": "text_delta", "text": text },
            })));
        }
        frames.push(event(
            &json!({ "type": "content_block_stop", "index": block }),
        ));
        block += 1;
    }
    for (position, call) in script.calls.iter().enumerate() {
        frames.push(event(&json!({
            "type": "content_block_start",
            "index": block,
            "content_block": {
                "type": "tool_use",
                "id": format!("toolu_{sequence}_{position}"),
                "name": call.name,
                "input": {},
            },
        })));
        // Anthropic opens every tool input with an empty fragment.
        let pieces = std::iter::once("").chain(call.argument_pieces.iter().map(String::as_str));
        for piece in pieces {
            frames.push(event(&json!({
                "type": "content_block_delta",
                "index": block,
                "delta": { "type": "input_json_delta", "partial_json": piece },
            })));
        }
        frames.push(event(
            &json!({ "type": "content_block_stop", "index": block }),
        ));
        block += 1;
    }
    let natural = if script.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let mut delta = json!({
        "type": "message_delta",
        "delta": {
            "stop_reason": script.finish_reason.as_deref().unwrap_or(natural),
            "stop_sequence": null,
        },
    });
    if let Some((_, output)) = script.usage {
        delta["usage"] = json!({ "output_tokens": output });
    }
    frames.push(event(&delta));
    frames.push(event(&json!({ "type": "message_stop" })));
    frames
}

/// Anthropic's error body.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    };
    json!({ "type": "error", "error": { "type": kind, "message": message } })
}
