//! `OpenAiCompatible`: the adapter for OpenAI's chat completions API and the
//! many servers that speak it (Ollama, vLLM, llama.cpp server, OpenRouter,
//! LiteLLM).
//!
//! It maps a [`ChatRequest`] to `POST {base}/chat/completions` with
//! `stream: true`, and the streamed chunks back to [`StreamEvent`]s
//! ([`decode`]); embeddings go to `POST {base}/embeddings`. The base URL is
//! the one OpenAI's own clients take, such as `https://api.openai.com/v1` or
//! `http://localhost:11434/v1`.
//!
//! Choices made for the widest compatibility: `max_tokens` rather than the
//! newer `max_completion_tokens` (which local servers may not know), `tools`
//! left out when empty (OpenAI rejects an empty list), an assistant message
//! that only made tool calls has `content: null`, and empty tool arguments
//! are sent as `{}` because servers that render chat templates parse them.

mod decode;

use std::fmt;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};

use super::http::{
    HttpOptions, HttpTransport, JsonRequest, Redactor, decimal, extra_headers, join_url,
    secret_header,
};
use super::{
    ApiKeyRef, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderConfig,
    ToolSpec, listing,
};
use crate::error::{Error, ProviderFailure, Result};
use decode::ChatCompletionDecoder;

/// The adapter for OpenAI-compatible chat completion APIs.
///
/// It holds no secret: the key is read from its reference for each request.
pub struct OpenAiCompatible {
    name: String,
    chat_url: String,
    embeddings_url: String,
    models_url: String,
    ollama_tags_url: Option<String>,
    api_key: Option<ApiKeyRef>,
    headers: HeaderMap,
    transport: HttpTransport,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("name", &self.name)
            .field("chat_url", &self.chat_url)
            .field("api_key", &self.api_key.as_ref().map(ToString::to_string))
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// Builds the adapter for `config` with the default [`HttpOptions`].
    pub fn new(config: &ProviderConfig) -> Result<Self> {
        OpenAiCompatible::with_options(config, HttpOptions::default())
    }

    /// Builds the adapter for `config` with the given timeouts and retries.
    pub fn with_options(config: &ProviderConfig, options: HttpOptions) -> Result<Self> {
        config.validate()?;
        Ok(OpenAiCompatible {
            name: config.name.clone(),
            chat_url: join_url(&config.base_url, "chat/completions"),
            embeddings_url: join_url(&config.base_url, "embeddings"),
            models_url: join_url(&config.base_url, "models"),
            ollama_tags_url: listing::ollama_tags_url(&config.base_url),
            api_key: config.api_key.clone(),
            headers: extra_headers(&config.extra_headers)?,
            transport: HttpTransport::new(&config.name, options)?,
        })
    }

    /// A GET of `url` with the configured headers and key.
    fn get(&self, url: &str) -> Result<JsonRequest> {
        let mut request = self.request(url, &Value::Null)?;
        request.body = Vec::new();
        Ok(request)
    }

    /// A request to `url` with the configured headers and, if a key is
    /// configured, `Authorization: Bearer`.
    fn request(&self, url: &str, body: &Value) -> Result<JsonRequest> {
        let mut headers = self.headers.clone();
        let mut redactor = Redactor::default();
        if let Some(key_ref) = &self.api_key {
            let key = resolve_key(&self.name, key_ref)?;
            headers.insert(
                AUTHORIZATION,
                secret_header(&self.name, &format!("Bearer {key}"))?,
            );
            redactor = Redactor::new(&key);
        }
        Ok(JsonRequest {
            url: url.to_string(),
            headers,
            body: serde_json::to_vec(body)
                .map_err(|e| Error::Internal(format!("request body: {e}")))?,
            redactor,
        })
    }
}

/// Reads a key; an empty variable counts as unset.
pub(crate) fn resolve_key(provider: &str, key_ref: &ApiKeyRef) -> Result<String> {
    let key = key_ref.resolve(provider)?;
    let key = key.trim();
    if key.is_empty() {
        return Err(Error::provider(
            provider,
            ProviderFailure::Unconfigured,
            format!(
                "its API key variable {} is empty",
                key_ref.to_string().trim_start_matches("env:")
            ),
        ));
    }
    Ok(key.to_string())
}

#[async_trait]
impl Provider for OpenAiCompatible {
    async fn stream(&self, request: ChatRequest) -> Result<EventStream> {
        let mut http = self.request(&self.chat_url, &chat_body(&request))?;
        http.headers.insert(
            ACCEPT,
            reqwest::header::HeaderValue::from_static("text/event-stream"),
        );
        self.transport
            .stream(http, ChatCompletionDecoder::default)
            .await
    }

    /// `GET {base}/models`; a server without it (404) may be Ollama, whose
    /// own list is `GET /api/tags`; without either, the server keeps no list.
    async fn list_models(&self) -> Result<Option<Vec<ModelInfo>>> {
        let malformed = |message: String| {
            Error::provider(&self.name, ProviderFailure::MalformedStream, message)
        };
        let listed = self
            .transport
            .fetch_json_within(self.get(&self.models_url)?, listing::LIST_TIMEOUT)
            .await;
        match listed {
            Ok(document) => listing::openai_models(&document)
                .map(Some)
                .map_err(malformed),
            Err(Error::Provider {
                failure: ProviderFailure::NotFound,
                ..
            }) => {
                let Some(url) = &self.ollama_tags_url else {
                    return Ok(None);
                };
                match self
                    .transport
                    .fetch_json_within(self.get(url)?, listing::LIST_TIMEOUT)
                    .await
                {
                    Ok(document) => listing::ollama_tags(&document).map(Some).map_err(malformed),
                    Err(Error::Provider {
                        failure: ProviderFailure::NotFound,
                        ..
                    }) => Ok(None),
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let request = self.request(
            &self.embeddings_url,
            &json!({ "model": model, "input": inputs }),
        )?;
        let document = self.transport.fetch_json(request).await?;
        parse_embeddings(&document, inputs.len()).map_err(|message| {
            Error::provider(&self.name, ProviderFailure::MalformedStream, message)
        })
    }
}

/// The JSON body of a streaming chat completion request.
pub(crate) fn chat_body(request: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    messages.extend(request.messages.iter().map(message_json));
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(tool_json).collect();
    }
    if let Some(max_tokens) = request.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(decimal(temperature));
    }
    body
}

fn message_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User { content } => json!({ "role": "user", "content": content }),
        ChatMessage::Assistant {
            content,
            tool_calls,
        } if tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": content })
        }
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|call| {
                    let arguments = if call.arguments.trim().is_empty() {
                        "{}"
                    } else {
                        &call.arguments
                    };
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": arguments },
                    })
                })
                .collect();
            let content = if content.is_empty() {
                Value::Null
            } else {
                json!(content)
            };
            json!({ "role": "assistant", "content": content, "tool_calls": calls })
        }
        // OpenAI has no error flag for tool results; the text says it.
        ChatMessage::Tool {
            call_id, content, ..
        } => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
    }
}

fn tool_json(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

/// The vectors of an embeddings answer, in input order.
fn parse_embeddings(
    document: &Value,
    expected: usize,
) -> std::result::Result<Vec<Vec<f32>>, String> {
    let items = document["data"]
        .as_array()
        .ok_or("the embeddings answer has no \"data\" list")?;
    let mut indexed: Vec<(u64, Vec<f32>)> = Vec::with_capacity(items.len());
    for (position, item) in items.iter().enumerate() {
        let vector = item["embedding"]
            .as_array()
            .ok_or("an embedding is not a list of numbers")?
            .iter()
            .map(|x| {
                x.as_f64()
                    .map(|x| x as f32)
                    .ok_or("an embedding holds a non-number")
            })
            .collect::<std::result::Result<Vec<f32>, _>>()?;
        indexed.push((item["index"].as_u64().unwrap_or(position as u64), vector));
    }
    if indexed.len() != expected {
        return Err(format!(
            "asked for {expected} embeddings, got {}",
            indexed.len()
        ));
    }
    indexed.sort_by_key(|(index, _)| *index);
    Ok(indexed.into_iter().map(|(_, vector)| vector).collect())
}
