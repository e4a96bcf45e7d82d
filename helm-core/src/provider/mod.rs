//! The `Provider` port: a model that streams text and tool calls.
//!
//! The model is a replaceable implementation detail; the turn engine is ours.
//! A provider has one required method, [`Provider::stream`], which yields
//! [`StreamEvent`]s; [`Provider::complete`] collects a stream, and
//! [`Provider::embed`] is optional. Adapters: [`OpenAiCompatible`] (OpenAI,
//! Ollama, vLLM, llama.cpp server, OpenRouter, LiteLLM), [`Anthropic`], and,
//! with the `test-support` feature, [`Scripted`] for tests and examples.
//!
//! Dropping a stream cancels the request.
//!
//! The HTTP adapters share their plumbing: [`http`](HttpOptions) (client,
//! timeouts, retries, error mapping), `retry` (backoff and `Retry-After`),
//! `sse` (the event-stream framing) and `event_stream` (a body decoded into
//! [`StreamEvent`]s by an adapter's wire decoder).

mod anthropic;
mod event_stream;
pub(crate) mod http;
mod listing;
mod openai;
mod registry;
mod retry;
#[cfg(feature = "test-support")]
mod scripted;
mod sse;

use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use futures_core::Stream;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ProviderFailure, Result};

pub use anthropic::Anthropic;
pub(crate) use http::build_http_client;
pub(crate) use http::has_userinfo;
pub use http::{HttpOptions, shown_url};
pub use openai::OpenAiCompatible;
pub use registry::{ApiKeyRef, Listed, ProviderConfig, ProviderKind, ProviderRegistry, TrialKey};
#[cfg(feature = "test-support")]
pub use scripted::{Scripted, ScriptedReply};

/// A function tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name, such as `write_file`.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A JSON Schema object for its arguments.
    pub parameters: serde_json::Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, echoed back with its result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them: JSON text, possibly invalid.
    pub arguments: String,
}

/// One entry of the conversation sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// Something a person said (names and context folded into the text).
    User {
        /// The text.
        content: String,
    },
    /// What the model said earlier, with the tool calls it made.
    Assistant {
        /// The text.
        content: String,
        /// Tool calls it made.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The call this answers.
        call_id: String,
        /// The result (or error) text.
        content: String,
        /// Whether the tool failed.
        #[serde(default)]
        is_error: bool,
    },
}

/// A request for one model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model to use.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far. Shared: a turn's steps send the same
    /// conversation, grown by each step's tool results, and a long thread's
    /// is hundreds of messages.
    pub messages: Arc<Vec<ChatMessage>>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// An upper bound on output tokens.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
}

/// Token counts of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// Why a response ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model wants its tool calls run.
    ToolCalls,
    /// The output limit was reached.
    Length,
    /// The provider filtered the content.
    ContentFilter,
    /// Anything else the provider said.
    Other(String),
}

/// One piece of a streaming response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A tool call begins.
    ToolCallStart {
        /// Its position among this response's calls.
        index: usize,
        /// The provider's id for it.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's argument text.
    ToolCallDelta {
        /// Its position.
        index: usize,
        /// The next part of the JSON arguments.
        arguments: String,
    },
    /// A tool call is complete.
    ToolCallComplete {
        /// Its position.
        index: usize,
        /// The whole call.
        call: ToolCall,
    },
    /// Token counts (may come more than once; the last one counts).
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The response ended.
    Finish {
        /// Why.
        reason: FinishReason,
    },
}

/// One model a provider lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The id to name it by in a model choice, such as `gpt-4o`.
    pub id: String,
    /// A name for people, when the provider gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// When the provider says it was created (or, for Ollama, last changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<jiff::Timestamp>,
}

/// Whether `models` has one with this id.
pub fn serves(models: &[ModelInfo], id: &str) -> bool {
    models.iter().any(|m| m.id == id)
}

/// A stream of response events; it ends after [`StreamEvent::Finish`] or an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent>> + Send>>;

/// A whole response, collected from a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The answer text.
    pub text: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Token counts, if reported.
    pub usage: Option<Usage>,
    /// Why it ended.
    pub finish: Option<FinishReason>,
}

impl Completion {
    /// Folds one event into the completion.
    pub fn absorb(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.text.push_str(&text),
            StreamEvent::ToolCallComplete { call, .. } => self.tool_calls.push(call),
            StreamEvent::Usage { usage } => self.usage = Some(usage),
            StreamEvent::Finish { reason } => self.finish = Some(reason),
            StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. } => {}
        }
    }
}

/// A model provider.
#[async_trait]
pub trait Provider: Send + Sync {
    /// Starts a streaming response. Errors before the first event (a refused
    /// key, an unknown model, an unreachable host) come back here; errors
    /// mid-stream come as stream items.
    async fn stream(&self, request: ChatRequest) -> Result<EventStream>;

    /// A whole response: [`Provider::stream`], collected.
    async fn complete(&self, request: ChatRequest) -> Result<Completion> {
        let mut stream = self.stream(request).await?;
        let mut completion = Completion::default();
        while let Some(event) = next(&mut stream).await {
            completion.absorb(event?);
        }
        Ok(completion)
    }

    /// The models this provider serves, as it lists them; `None` when it
    /// keeps no list (a choice of model is then unverified until a turn
    /// runs). Errors are the provider's (unreachable, a refused key).
    async fn list_models(&self) -> Result<Option<Vec<ModelInfo>>> {
        Ok(None)
    }

    /// Embeds texts, one vector each. Providers without embeddings say so.
    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>> {
        let _ = (model, inputs);
        Err(Error::provider(
            "provider",
            ProviderFailure::Unsupported,
            "this provider offers no embeddings",
        ))
    }
}

/// The next item of a stream (a small `StreamExt::next` without the dependency).
pub async fn next<S: Stream + Unpin + ?Sized>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}
