//! [`MockOpenAi`]: a mock of OpenAI's chat completions and embeddings API,
//! streaming `chat.completion.chunk`s the way OpenAI does: a role chunk, text
//! deltas, tool-call fragments keyed by `index` (id and name first, then
//! argument pieces), a finishing chunk, a usage chunk with no choices, and
//! `data: [DONE]`.

use std::ops::Deref;

use helm_core::provider::{HttpOptions, OpenAiCompatible, ProviderConfig, ProviderKind};
use serde_json::{Value, json};

use super::behaviour::{Ending, Script};
use super::{Dialect, MockServer, fast_http_options};

/// A mock OpenAI-compatible server; see [`MockServer`] for the queue and the
/// recorded requests.
pub struct MockOpenAi {
    server: MockServer,
}

impl MockOpenAi {
    /// Starts a server on `127.0.0.1` at a free port.
    pub async fn start() -> anyhow::Result<Self> {
        Ok(MockOpenAi {
            server: MockServer::start(Dialect::OpenAi).await?,
        })
    }

    /// The base URL as OpenAI clients take it: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.origin())
    }

    /// A provider configuration pointing at this mock, with no key and
    /// `mock-model` as the default model.
    pub fn provider_config(&self, name: &str) -> ProviderConfig {
        ProviderConfig {
            name: name.to_string(),
            kind: ProviderKind::OpenAi,
            base_url: self.base_url(),
            api_key: None,
            default_model: Some("mock-model".to_string()),
            extra_headers: Default::default(),
        }
    }

    /// The real adapter pointed at this mock, with [`fast_http_options`].
    pub fn adapter(&self) -> anyhow::Result<OpenAiCompatible> {
        self.adapter_with(fast_http_options())
    }

    /// The real adapter pointed at this mock, with these options.
    pub fn adapter_with(&self, options: HttpOptions) -> anyhow::Result<OpenAiCompatible> {
        Ok(OpenAiCompatible::with_options(
            &self.provider_config("mock-openai"),
            options,
        )?)
    }
}

impl Deref for MockOpenAi {
    type Target = MockServer;

    fn deref(&self) -> &MockServer {
        &self.server
    }
}

fn data(json: &Value) -> String {
    format!("data: {json}\n\n")
}

fn chunk(model: &str, sequence: usize, delta: Value, finish_reason: Option<&str>) -> String {
    data(&json!({
        "id": format!("chatcmpl-mock-{sequence}"),
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
    }))
}

/// The SSE frames of a streamed answer.
pub(crate) fn frames(script: &Script, model: &str, sequence: usize) -> Vec<String> {
    let chunk = |delta: Value, finish: Option<&str>| chunk(model, sequence, delta, finish);
    let mut frames = vec![chunk(json!({ "role": "assistant", "content": "" }), None)];
    if let Ending::ErrorEvent { kind, message } = &script.ending {
        let code = if kind.contains("rate") { 429 } else { 502 };
        frames.push(data(
            &json!({ "error": { "message": message, "type": kind, "code": code } }),
        ));
        return frames;
    }
    for text in &script.text {
        frames.push(chunk(json!({ "content": text }), None));
    }
    let fragment = |index: usize, body: Value| {
        let mut fragment = body;
        if !script.omit_index {
            fragment["index"] = json!(index);
        }
        chunk(json!({ "tool_calls": [fragment] }), None)
    };
    let starts: Vec<String> = script
        .calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            fragment(
                index,
                json!({
                    "id": format!("call_{sequence}_{index}"),
                    "type": "function",
                    "function": { "name": call.name, "arguments": "" },
                }),
            )
        })
        .collect();
    let pieces: Vec<Vec<String>> = script
        .calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            call.argument_pieces
                .iter()
                .map(|piece| fragment(index, json!({ "function": { "arguments": piece } })))
                .collect()
        })
        .collect();
    if script.interleave {
        frames.extend(starts);
        let longest = pieces.iter().map(Vec::len).max().unwrap_or(0);
        for round in 0..longest {
            frames.extend(pieces.iter().filter_map(|p| p.get(round).cloned()));
        }
    } else {
        for (start, pieces) in starts.into_iter().zip(pieces) {
            frames.push(start);
            frames.extend(pieces);
        }
    }
    let natural = if script.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let reason = script.finish_reason.as_deref().unwrap_or(natural);
    frames.push(chunk(json!({}), Some(reason)));
    if let Some((input, output)) = script.usage {
        frames.push(data(&json!({
            "id": format!("chatcmpl-mock-{sequence}"),
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [],
            "usage": { "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output },
        })));
    }
    frames.push("data: [DONE]\n\n".to_string());
    frames
}

/// OpenAI's error body.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        401 => ("invalid_request_error", "invalid_api_key"),
        403 => (
            "invalid_request_error",
            "unsupported_country_region_territory",
        ),
        404 => ("invalid_request_error", "model_not_found"),
        429 => ("requests", "rate_limit_exceeded"),
        500..=599 => ("server_error", "server_error"),
        _ => ("invalid_request_error", "invalid_value"),
    };
    json!({ "error": { "message": message, "type": kind, "param": null, "code": code } })
}

/// An embeddings answer.
pub(crate) fn embeddings_body(vectors: &[Vec<f32>], model: &str) -> Value {
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .map(
            |(index, vector)| json!({ "object": "embedding", "index": index, "embedding": vector }),
        )
        .collect();
    json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": { "prompt_tokens": vectors.len(), "total_tokens": vectors.len() },
    })
}
