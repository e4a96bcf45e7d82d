//! Decodes OpenAI's streamed `chat.completion.chunk`s into [`StreamEvent`]s.
//!
//! Text arrives as `delta.content`; tool calls arrive as fragments keyed by
//! `index`, the first with the call's id and name, the rest with pieces of
//! its JSON arguments. Compatible servers bend this in known ways, all
//! tolerated here: fragments without `index` (matched by id, or taken to
//! continue the last call), a whole call in one fragment (Ollama), the id
//! repeated in every fragment (LiteLLM), several calls all at `index` 0 with
//! different ids, arguments as a JSON object rather than text, `finish_reason`
//! "stop" after tool calls, usage inside the finishing chunk (llama.cpp) or
//! in a chunk of its own with no choices (OpenAI), SSE comments (OpenRouter),
//! an `error` object mid-stream (OpenRouter, vLLM), and a missing `[DONE]`
//! after the finish reason.

use serde::Deserialize;

use crate::error::ProviderFailure;
use crate::provider::event_stream::{Progress, WireDecoder, WireError, snippet};
use crate::provider::sse::SseEvent;
use crate::provider::{FinishReason, StreamEvent, ToolCall, Usage};

/// The state of one streamed chat completion.
#[derive(Debug, Default)]
pub(crate) struct ChatCompletionDecoder {
    calls: Vec<PendingCall>,
    /// The finish reason as sent, once the choice finished.
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

#[derive(Debug, Default)]
struct PendingCall {
    wire_index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    started: bool,
    /// Argument text that arrived before the call's name (then it is sent
    /// with the start).
    unsent: String,
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<serde_json::Value>,
    object: Option<String>,
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: u64,
    delta: Option<Delta>,
    /// Whole-document answers carry `message` instead of `delta`.
    message: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<ToolCallFragment>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallFragment {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Debug, Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

impl WireDecoder for ChatCompletionDecoder {
    fn decode(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Progress, WireError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish(out);
            return Ok(Progress::Done);
        }
        if data.is_empty() {
            return Ok(Progress::Continue);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            WireError::malformed(format!(
                "invalid JSON in the stream ({e}): {}",
                snippet(data)
            ))
        })?;
        self.absorb(chunk, out)?;
        Ok(Progress::Continue)
    }

    fn end_of_body(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), WireError> {
        if self.finish_reason.is_none() {
            return Err(WireError::malformed(
                "the stream ended before the model finished (no finish_reason and no [DONE])",
            ));
        }
        self.finish(out);
        Ok(())
    }

    fn decode_document(
        &mut self,
        document: &serde_json::Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), WireError> {
        let chunk = Chunk::deserialize(document)
            .map_err(|e| WireError::malformed(format!("unexpected JSON answer: {e}")))?;
        self.absorb(chunk, out)?;
        self.finish(out);
        Ok(())
    }
}

impl ChatCompletionDecoder {
    fn absorb(&mut self, chunk: Chunk, out: &mut Vec<StreamEvent>) -> Result<(), WireError> {
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        if chunk.object.as_deref() == Some("error") {
            return Err(WireError::retryable(
                ProviderFailure::Server,
                chunk
                    .message
                    .unwrap_or_else(|| "the server reported an error".into()),
                None,
            ));
        }
        // Only the first choice is followed; Helm never asks for more (`n`).
        for choice in chunk
            .choices
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c.index == 0)
        {
            if let Some(delta) = choice.delta.or(choice.message) {
                self.absorb_delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens.unwrap_or(0),
                output_tokens: usage.completion_tokens.unwrap_or(0),
            });
        }
        Ok(())
    }

    fn absorb_delta(&mut self, delta: Delta, out: &mut Vec<StreamEvent>) {
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta { text });
        }
        for fragment in delta.tool_calls.unwrap_or_default() {
            let id = fragment.id.filter(|id| !id.is_empty());
            let position = self.call_position(fragment.index, id.as_deref());
            let call = &mut self.calls[position];
            if call.id.is_empty()
                && let Some(id) = id
            {
                call.id = id;
            }
            let (name, arguments) = match fragment.function {
                Some(f) => (f.name, f.arguments),
                None => (None, None),
            };
            if call.name.is_empty()
                && let Some(name) = name.filter(|n| !n.is_empty())
            {
                call.name = name;
            }
            let arguments = match arguments {
                Some(serde_json::Value::String(text)) => text,
                Some(serde_json::Value::Null) | None => String::new(),
                Some(object) => object.to_string(),
            };
            call.arguments.push_str(&arguments);
            if !call.started && !call.name.is_empty() {
                call.started = true;
                if call.id.is_empty() {
                    call.id = format!("call_{position}");
                }
                out.push(StreamEvent::ToolCallStart {
                    index: position,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                let early = std::mem::take(&mut call.unsent);
                if !early.is_empty() {
                    out.push(StreamEvent::ToolCallDelta {
                        index: position,
                        arguments: early,
                    });
                }
            }
            if arguments.is_empty() {
                continue;
            }
            if call.started {
                out.push(StreamEvent::ToolCallDelta {
                    index: position,
                    arguments,
                });
            } else {
                call.unsent.push_str(&arguments);
            }
        }
    }

    /// Which call a fragment continues, or a new one.
    fn call_position(&mut self, wire_index: Option<u64>, id: Option<&str>) -> usize {
        let same_id = |call: &PendingCall| id.is_some_and(|id| call.id == id);
        let found = match wire_index {
            // The last call at this index, unless the fragment names another
            // id (servers that put every call at index 0).
            Some(index) => self
                .calls
                .iter()
                .rposition(|c| c.wire_index == Some(index))
                .filter(|&p| {
                    id.is_none() || self.calls[p].id.is_empty() || same_id(&self.calls[p])
                }),
            None => match id {
                Some(_) => self.calls.iter().position(same_id),
                None => self.calls.len().checked_sub(1),
            },
        };
        found.unwrap_or_else(|| {
            self.calls.push(PendingCall {
                wire_index,
                ..PendingCall::default()
            });
            self.calls.len() - 1
        })
    }

    /// Completes the calls and ends the response (once).
    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let calls = std::mem::take(&mut self.calls);
        let made_calls = calls.iter().any(|c| c.started);
        for (index, call) in calls.into_iter().enumerate() {
            if !call.started {
                tracing::warn!(index, "dropping a streamed tool call that never got a name");
                continue;
            }
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            out.push(StreamEvent::ToolCallComplete {
                index,
                call: ToolCall {
                    id: call.id,
                    name: call.name,
                    arguments,
                },
            });
        }
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage { usage });
        }
        let reason = finish_reason(self.finish_reason.as_deref(), made_calls);
        out.push(StreamEvent::Finish { reason });
    }
}

/// Maps OpenAI's finish reason; a response with tool calls wants them run,
/// whatever the server said (some say "stop"), unless it was cut short.
fn finish_reason(reason: Option<&str>, made_calls: bool) -> FinishReason {
    match reason {
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        _ if made_calls => FinishReason::ToolCalls,
        Some("stop") | Some("eos") | None => FinishReason::Stop,
        Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

/// An `error` object sent inside the stream.
fn stream_error(error: &serde_json::Value) -> WireError {
    let message = error["message"]
        .as_str()
        .or_else(|| error.as_str())
        .unwrap_or("the server reported an error mid-stream")
        .to_string();
    let code = error["code"]
        .as_u64()
        .or_else(|| error["code"].as_str().and_then(|c| c.parse().ok()));
    let rate_limited = code == Some(429)
        || error["type"].as_str() == Some("rate_limit_exceeded")
        || error["code"].as_str() == Some("rate_limit_exceeded");
    match code {
        _ if rate_limited => WireError::retryable(ProviderFailure::RateLimited, message, None),
        Some(400 | 422) => WireError::new(ProviderFailure::BadRequest, message),
        Some(401 | 403) => WireError::new(ProviderFailure::Unauthorized, message),
        Some(404) => WireError::new(ProviderFailure::NotFound, message),
        _ => WireError::retryable(ProviderFailure::Server, message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(frames: &[&str]) -> Result<Vec<StreamEvent>, WireError> {
        let mut decoder = ChatCompletionDecoder::default();
        let mut out = Vec::new();
        for frame in frames {
            let event = SseEvent {
                event: String::new(),
                data: frame.to_string(),
            };
            if decoder.decode(&event, &mut out)? == Progress::Done {
                return Ok(out);
            }
        }
        decoder.end_of_body(&mut out)?;
        Ok(out)
    }

    fn completed(events: &[StreamEvent]) -> Vec<(usize, &str, &str, &str)> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallComplete { index, call } => Some((
                    *index,
                    call.id.as_str(),
                    call.name.as_str(),
                    call.arguments.as_str(),
                )),
                _ => None,
            })
            .collect()
    }

    fn finish(events: &[StreamEvent]) -> Option<&FinishReason> {
        events.iter().find_map(|e| match e {
            StreamEvent::Finish { reason } => Some(reason),
            _ => None,
        })
    }

    #[test]
    fn fragments_without_index_continue_the_last_call_or_match_by_id() -> Result<(), WireError> {
        let events = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"two","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ])?;
        assert_eq!(
            completed(&events),
            vec![(0, "a", "one", r#"{"x":1}"#), (1, "b", "two", "{}")]
        );
        assert_eq!(finish(&events), Some(&FinishReason::ToolCalls));
        Ok(())
    }

    #[test]
    fn calls_sharing_index_zero_with_different_ids_stay_apart() -> Result<(), WireError> {
        let events = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":{"k":1}}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"two","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"arguments":"{\"k\":2}"}}]}}]}"#,
            "[DONE]",
        ])?;
        assert_eq!(
            completed(&events),
            vec![(0, "a", "one", r#"{"k":1}"#), (1, "b", "two", r#"{"k":2}"#)]
        );
        Ok(())
    }

    #[test]
    fn arguments_before_the_name_are_sent_after_the_start() -> Result<(), WireError> {
        let events = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"late","arguments":":2}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ])?;
        assert_eq!(
            &events[..3],
            &[
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "call_0".into(),
                    name: "late".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: "{\"a\"".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: ":2}".into()
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn an_error_object_mid_stream_is_an_error() {
        let failure = run(&[r#"{"error":{"message":"upstream overloaded","code":502}}"#]).err();
        assert_eq!(
            failure.map(|f| (f.failure, f.message)),
            Some((ProviderFailure::Server, "upstream overloaded".into()))
        );
    }

    #[test]
    fn a_missing_done_after_a_finish_reason_is_tolerated() -> Result<(), WireError> {
        let events = run(&[
            r#"{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#,
        ])?;
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta { text: "hi".into() },
                StreamEvent::Usage {
                    usage: Usage {
                        input_tokens: 3,
                        output_tokens: 1
                    }
                },
                StreamEvent::Finish {
                    reason: FinishReason::Stop
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn a_stream_without_a_finish_is_malformed() {
        let failure = run(&[r#"{"choices":[{"delta":{"content":"hi"}}]}"#]).err();
        assert_eq!(
            failure.map(|f| f.failure),
            Some(ProviderFailure::MalformedStream)
        );
    }
}
