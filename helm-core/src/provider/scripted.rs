//! `Scripted`: a deterministic provider for tests, examples and benchmarks.
//! It answers each request with the next scripted reply and records every
//! request it received, so a test can assert on the exact context a model saw.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::{self, StreamExt};
use tokio::sync::Notify;

use super::{ChatRequest, EventStream, FinishReason, Provider, StreamEvent, ToolCall, Usage};
use crate::error::{Error, ProviderFailure, Result};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum ScriptedReply {
    /// Stream these events, then end.
    Events(Vec<StreamEvent>),
    /// Refuse the request before streaming.
    Fail(ProviderFailure, String),
    /// Stream these events, then fail mid-stream.
    FailAfter(Vec<StreamEvent>, ProviderFailure, String),
    /// Stream these events, then never finish (until the stream is dropped).
    Hang(Vec<StreamEvent>),
    /// Wait until `gate` is notified, then give the inner reply.
    Gated(Arc<Notify>, Box<ScriptedReply>),
}

impl ScriptedReply {
    /// A text answer, streamed a word at a time.
    pub fn text(text: &str) -> Self {
        let mut events: Vec<StreamEvent> = text
            .split_inclusive(' ')
            .map(|w| StreamEvent::TextDelta {
                text: w.to_string(),
            })
            .collect();
        events.push(StreamEvent::Usage {
            usage: Usage {
                input_tokens: 10,
                output_tokens: text.split_whitespace().count() as u64,
            },
        });
        events.push(StreamEvent::Finish {
            reason: FinishReason::Stop,
        });
        ScriptedReply::Events(events)
    }

    /// One or more tool calls, given as (name, JSON arguments text), with the
    /// arguments split across two deltas as real providers do.
    pub fn tool_calls(calls: &[(&str, &str)]) -> Self {
        let mut events = Vec::new();
        for (index, (name, args)) in calls.iter().enumerate() {
            let id = format!("call_{index}_{name}");
            events.push(StreamEvent::ToolCallStart {
                index,
                id: id.clone(),
                name: name.to_string(),
            });
            let mid = args
                .char_indices()
                .nth(args.chars().count() / 2)
                .map(|(i, _)| i)
                .unwrap_or(0);
            for part in [&args[..mid], &args[mid..]] {
                if !part.is_empty() {
                    events.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: part.to_string(),
                    });
                }
            }
            events.push(StreamEvent::ToolCallComplete {
                index,
                call: ToolCall {
                    id,
                    name: name.to_string(),
                    arguments: args.to_string(),
                },
            });
        }
        events.push(StreamEvent::Finish {
            reason: FinishReason::ToolCalls,
        });
        ScriptedReply::Events(events)
    }

    /// This reply, held back until `gate` is notified.
    pub fn gated(self, gate: Arc<Notify>) -> Self {
        ScriptedReply::Gated(gate, Box::new(self))
    }
}

/// A provider that plays back scripted replies in order.
#[derive(Default)]
pub struct Scripted {
    replies: Mutex<VecDeque<ScriptedReply>>,
    requests: Mutex<Vec<ChatRequest>>,
    chunk_delay: Option<Duration>,
}

impl Scripted {
    /// A provider with no replies yet.
    pub fn new() -> Self {
        Scripted::default()
    }

    /// Waits this long before each streamed event.
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = Some(delay);
        self
    }

    /// Queues a reply.
    pub fn push(&self, reply: ScriptedReply) -> &Self {
        if let Ok(mut replies) = self.replies.lock() {
            replies.push_back(reply);
        }
        self
    }

    /// Queues a text reply.
    pub fn reply_text(&self, text: &str) -> &Self {
        self.push(ScriptedReply::text(text))
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// How many replies are still queued.
    pub fn remaining(&self) -> usize {
        self.replies.lock().map(|r| r.len()).unwrap_or(0)
    }
}

fn events_stream(
    events: Vec<StreamEvent>,
    tail: Option<Error>,
    hang: bool,
    delay: Option<Duration>,
) -> EventStream {
    let items = stream::iter(events.into_iter().map(Ok)).then(move |item| async move {
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        item
    });
    let tail = stream::iter(tail.map(Err));
    if hang {
        items.chain(tail).chain(stream::pending()).boxed()
    } else {
        items.chain(tail).boxed()
    }
}

#[async_trait]
impl Provider for Scripted {
    async fn stream(&self, request: ChatRequest) -> Result<EventStream> {
        if let Ok(mut log) = self.requests.lock() {
            log.push(request);
        }
        let mut reply = self
            .replies
            .lock()
            .ok()
            .and_then(|mut r| r.pop_front())
            .ok_or_else(|| {
                Error::provider(
                    "scripted",
                    ProviderFailure::Unconfigured,
                    "the scripted provider has no reply left",
                )
            })?;
        loop {
            return match reply {
                ScriptedReply::Gated(gate, inner) => {
                    gate.notified().await;
                    reply = *inner;
                    continue;
                }
                ScriptedReply::Events(events) => {
                    Ok(events_stream(events, None, false, self.chunk_delay))
                }
                ScriptedReply::Fail(failure, message) => {
                    Err(Error::provider("scripted", failure, message))
                }
                ScriptedReply::FailAfter(events, failure, message) => Ok(events_stream(
                    events,
                    Some(Error::provider("scripted", failure, message)),
                    false,
                    self.chunk_delay,
                )),
                ScriptedReply::Hang(events) => {
                    Ok(events_stream(events, None, true, self.chunk_delay))
                }
            };
        }
    }
}
