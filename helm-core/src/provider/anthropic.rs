//! `Anthropic`: the adapter for Anthropic's Messages API.
//!
//! It maps a [`ChatRequest`] to `POST {base}/v1/messages` with `stream: true`
//! and decodes the event stream ([`decode`]). The Messages API is stricter
//! than chat completions, and the mapping follows its rules: `max_tokens` is
//! required (4096 when the request sets none), roles must alternate (so
//! consecutive messages of one role are merged), tool results are
//! `tool_result` blocks in a user message (grouped, and placed before any
//! text there), an assistant's tool calls are `tool_use` blocks whose input
//! is a JSON object, and empty text blocks are refused (so none are sent).

mod decode;

use std::fmt;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::http::{
    HttpOptions, HttpTransport, JsonRequest, Redactor, decimal, extra_headers, join_url,
    secret_header,
};
use super::openai::resolve_key;
use super::{
    ApiKeyRef, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderConfig,
    ToolCall, listing,
};
use crate::error::{Error, ProviderFailure, Result};
use decode::MessagesDecoder;

/// The `max_tokens` sent when a request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The API version this adapter speaks.
const API_VERSION: &str = "2023-06-01";

/// The adapter for Anthropic's Messages API.
///
/// It holds no secret: the key is read from its reference for each request.
pub struct Anthropic {
    name: String,
    messages_url: String,
    models_url: String,
    api_key: Option<ApiKeyRef>,
    headers: HeaderMap,
    transport: HttpTransport,
}

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("name", &self.name)
            .field("messages_url", &self.messages_url)
            .field("api_key", &self.api_key.as_ref().map(ToString::to_string))
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// Builds the adapter for `config` with the default [`HttpOptions`].
    pub fn new(config: &ProviderConfig) -> Result<Self> {
        Anthropic::with_options(config, HttpOptions::default())
    }

    /// Builds the adapter for `config` with the given timeouts and retries.
    pub fn with_options(config: &ProviderConfig, options: HttpOptions) -> Result<Self> {
        config.validate()?;
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        // Configured headers (such as `anthropic-beta`) come last and win.
        headers.extend(extra_headers(&config.extra_headers)?);
        Ok(Anthropic {
            name: config.name.clone(),
            messages_url: messages_url(&config.base_url),
            models_url: api_url(&config.base_url, "models"),
            api_key: config.api_key.clone(),
            headers,
            transport: HttpTransport::new(&config.name, options)?,
        })
    }
}

/// `{base}/v1/messages`, without doubling a `/v1` the base already has.
fn messages_url(base: &str) -> String {
    api_url(base, "messages")
}

/// `{base}/v1/{path}`, without doubling a `/v1` the base already has.
fn api_url(base: &str, path: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/v1") {
        join_url(base, path)
    } else {
        join_url(base, &format!("v1/{path}"))
    }
}

impl Anthropic {
    /// The configured headers with the key, and a redactor for it.
    fn keyed_headers(&self) -> Result<(HeaderMap, Redactor)> {
        let mut headers = self.headers.clone();
        let mut redactor = Redactor::default();
        if let Some(key_ref) = &self.api_key {
            let key = resolve_key(&self.name, key_ref)?;
            headers.insert("x-api-key", secret_header(&self.name, &key)?);
            redactor = Redactor::new(&key);
        }
        Ok((headers, redactor))
    }
}

#[async_trait]
impl Provider for Anthropic {
    async fn stream(&self, request: ChatRequest) -> Result<EventStream> {
        let (headers, redactor) = self.keyed_headers()?;
        let body = serde_json::to_vec(&messages_body(&request))
            .map_err(|e| Error::Internal(format!("request body: {e}")))?;
        let http = JsonRequest {
            url: self.messages_url.clone(),
            headers,
            body,
            redactor,
        };
        self.transport.stream(http, MessagesDecoder::default).await
    }

    /// `GET /v1/models`, page by page.
    async fn list_models(&self) -> Result<Option<Vec<ModelInfo>>> {
        let (mut headers, redactor) = self.keyed_headers()?;
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let mut models = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..listing::MAX_PAGES {
            let url = match &after {
                Some(id) => format!("{}?limit=1000&after_id={id}", self.models_url),
                None => format!("{}?limit=1000", self.models_url),
            };
            let request = JsonRequest {
                url,
                headers: headers.clone(),
                body: Vec::new(),
                redactor: redactor.clone(),
            };
            let document = self
                .transport
                .fetch_json_within(request, listing::LIST_TIMEOUT)
                .await?;
            let (page, next) = listing::anthropic_page(&document).map_err(|message| {
                Error::provider(&self.name, ProviderFailure::MalformedStream, message)
            })?;
            models.extend(page);
            match next {
                Some(id) => after = Some(id),
                None => break,
            }
        }
        Ok(Some(models))
    }
}

/// The JSON body of a streaming Messages API request.
pub(crate) fn messages_body(request: &ChatRequest) -> Value {
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": alternating_turns(&request.messages),
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(decimal(temperature));
    }
    body
}

/// The conversation as alternating user and assistant turns of content blocks.
fn alternating_turns(messages: &[ChatMessage]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            ChatMessage::User { content } => ("user", text_block(content)),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks = text_block(content);
                blocks.extend(tool_calls.iter().map(tool_use_block));
                ("assistant", blocks)
            }
            ChatMessage::Tool {
                call_id,
                content,
                is_error,
            } => {
                let mut block = json!({ "type": "tool_result", "tool_use_id": call_id });
                if !content.is_empty() {
                    block["content"] = json!(content);
                }
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut blocks)| {
            // The API wants a user turn's tool results before its text; the
            // sort is stable, so each group keeps its order.
            blocks.sort_by_key(|block| block["type"] != "tool_result");
            json!({ "role": role, "content": blocks })
        })
        .collect()
}

fn text_block(text: &str) -> Vec<Value> {
    if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![json!({ "type": "text", "text": text })]
    }
}

/// A tool call as a `tool_use` block. Its input must be a JSON object; the
/// model's arguments are sent as written when they are one, and as `{}`
/// otherwise (invalid JSON was already reported back in the tool result).
fn tool_use_block(call: &ToolCall) -> Value {
    let input = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({}),
    };
    json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_url_gets_v1_once() {
        assert_eq!(
            messages_url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            messages_url("https://api.anthropic.com/"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            messages_url("https://proxy.example/v1/"),
            "https://proxy.example/v1/messages"
        );
    }
}
