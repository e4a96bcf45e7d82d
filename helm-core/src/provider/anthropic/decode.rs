//! Decodes the Messages API's event stream into [`StreamEvent`]s.
//!
//! The stream is `message_start` (input usage), then per content block a
//! `content_block_start` (text, or `tool_use` with id and name), its
//! `content_block_delta`s (`text_delta`, `input_json_delta`) and a
//! `content_block_stop`, then `message_delta` (stop reason, output usage) and
//! `message_stop`. `ping`s may come anywhere, an `error` event ends the
//! stream (such as `overloaded_error`), and unknown events and block types
//! (thinking, citations) are skipped, as Anthropic asks of clients.

use std::collections::HashMap;

use serde_json::Value;

use crate::error::ProviderFailure;
use crate::provider::event_stream::{Progress, WireDecoder, WireError, snippet};
use crate::provider::sse::SseEvent;
use crate::provider::{FinishReason, StreamEvent, ToolCall, Usage};

/// The state of one streamed message.
#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    /// Open tool-use blocks by block index.
    open_calls: HashMap<u64, OpenCall>,
    /// How many tool calls have started (the next call's position).
    calls_started: usize,
    usage: Usage,
    saw_usage: bool,
    stop_reason: Option<String>,
}

#[derive(Debug)]
struct OpenCall {
    position: usize,
    id: String,
    name: String,
    arguments: String,
}

impl WireDecoder for MessagesDecoder {
    fn decode(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Progress, WireError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Progress::Continue);
        }
        let json: Value = serde_json::from_str(data).map_err(|e| {
            WireError::malformed(format!(
                "invalid JSON in the stream ({e}): {}",
                snippet(data)
            ))
        })?;
        // The `type` in the data repeats the SSE event name; it is the one
        // proxies are least likely to drop.
        let kind = json["type"].as_str().unwrap_or(event.event.as_str());
        match kind {
            "message_start" => self.read_usage(&json["message"]["usage"]),
            "content_block_start" => self.start_block(&json, out)?,
            "content_block_delta" => self.delta(&json, out)?,
            "content_block_stop" => self.stop_block(&json, out),
            "message_delta" => {
                if let Some(reason) = json["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_string());
                }
                self.read_usage(&json["usage"]);
            }
            "message_stop" => {
                self.finish(out);
                return Ok(Progress::Done);
            }
            "error" => return Err(stream_error(&json["error"])),
            _ => {} // "ping", and events added after this was written
        }
        Ok(Progress::Continue)
    }

    fn end_of_body(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), WireError> {
        Err(WireError::malformed(
            "the stream ended before message_stop: the answer is incomplete",
        ))
    }
}

impl MessagesDecoder {
    /// Usage counts arrive in `message_start` (input) and `message_delta`
    /// (output so far, and sometimes input again); cached prompt tokens are
    /// prompt tokens too.
    fn read_usage(&mut self, usage: &Value) {
        let count = |field: &str| usage[field].as_u64();
        let input = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .filter_map(|f| count(f))
        .reduce(|a, b| a + b);
        if let Some(input) = input {
            self.usage.input_tokens = input;
            self.saw_usage = true;
        }
        if let Some(output) = count("output_tokens") {
            self.usage.output_tokens = output;
            self.saw_usage = true;
        }
    }

    fn start_block(&mut self, json: &Value, out: &mut Vec<StreamEvent>) -> Result<(), WireError> {
        let block = &json["content_block"];
        match block["type"].as_str() {
            Some("text") => {
                if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta {
                        text: text.to_string(),
                    });
                }
            }
            Some("tool_use") => {
                let index = block_index(json)?;
                let id = block["id"].as_str().unwrap_or_default().to_string();
                let name = block["name"].as_str().unwrap_or_default().to_string();
                if name.is_empty() {
                    return Err(WireError::malformed("a tool_use block has no name"));
                }
                let position = self.calls_started;
                self.calls_started += 1;
                out.push(StreamEvent::ToolCallStart {
                    index: position,
                    id: id.clone(),
                    name: name.clone(),
                });
                // The start carries `input: {}`; the arguments come as deltas.
                self.open_calls.insert(
                    index,
                    OpenCall {
                        position,
                        id,
                        name,
                        arguments: String::new(),
                    },
                );
            }
            _ => {} // thinking, redacted_thinking, server tools: not ours to show
        }
        Ok(())
    }

    fn delta(&mut self, json: &Value, out: &mut Vec<StreamEvent>) -> Result<(), WireError> {
        let delta = &json["delta"];
        match delta["type"].as_str() {
            Some("text_delta") => {
                if let Some(text) = delta["text"].as_str().filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta {
                        text: text.to_string(),
                    });
                }
            }
            Some("input_json_delta") => {
                let index = block_index(json)?;
                let fragment = delta["partial_json"].as_str().unwrap_or_default();
                let call = self.open_calls.get_mut(&index).ok_or_else(|| {
                    WireError::malformed(format!(
                        "arguments for block {index}, which is not a tool call"
                    ))
                })?;
                if !fragment.is_empty() {
                    call.arguments.push_str(fragment);
                    out.push(StreamEvent::ToolCallDelta {
                        index: call.position,
                        arguments: fragment.to_string(),
                    });
                }
            }
            _ => {} // thinking_delta, signature_delta, citations_delta
        }
        Ok(())
    }

    fn stop_block(&mut self, json: &Value, out: &mut Vec<StreamEvent>) {
        let Some(call) = json["index"]
            .as_u64()
            .and_then(|i| self.open_calls.remove(&i))
        else {
            return;
        };
        out.push(StreamEvent::ToolCallComplete {
            index: call.position,
            call: ToolCall {
                id: call.id,
                name: call.name,
                // A tool called without arguments streams none.
                arguments: if call.arguments.trim().is_empty() {
                    "{}".into()
                } else {
                    call.arguments
                },
            },
        });
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        // Blocks still open at message_stop should not happen; complete them
        // in order rather than lose the calls.
        let mut open: Vec<(u64, OpenCall)> = self.open_calls.drain().collect();
        open.sort_by_key(|(index, _)| *index);
        for (index, _) in &open {
            tracing::warn!(block = index, "tool_use block still open at message_stop");
        }
        for (index, call) in open {
            self.open_calls.insert(index, call);
            self.stop_block(&serde_json::json!({ "index": index }), out);
        }
        if self.saw_usage {
            out.push(StreamEvent::Usage { usage: self.usage });
        }
        let reason = match self.stop_reason.as_deref() {
            Some("end_turn") | Some("stop_sequence") | None => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") | Some("model_context_window_exceeded") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        out.push(StreamEvent::Finish { reason });
    }
}

fn block_index(json: &Value) -> Result<u64, WireError> {
    json["index"]
        .as_u64()
        .ok_or_else(|| WireError::malformed("a content block event has no index"))
}

/// An `error` event, such as `{"type":"overloaded_error","message":"Overloaded"}`.
fn stream_error(error: &Value) -> WireError {
    let kind = error["type"].as_str().unwrap_or("error");
    let message = format!(
        "{kind}: {}",
        error["message"]
            .as_str()
            .unwrap_or("the stream reported an error")
    );
    match kind {
        "rate_limit_error" => WireError::retryable(ProviderFailure::RateLimited, message, None),
        "invalid_request_error" | "request_too_large" => {
            WireError::new(ProviderFailure::BadRequest, message)
        }
        "authentication_error" | "permission_error" => {
            WireError::new(ProviderFailure::Unauthorized, message)
        }
        "not_found_error" => WireError::new(ProviderFailure::NotFound, message),
        // overloaded_error, api_error, and anything new
        _ => WireError::retryable(ProviderFailure::Server, message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(frames: &[&str]) -> Result<Vec<StreamEvent>, WireError> {
        let mut decoder = MessagesDecoder::default();
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

    #[test]
    fn a_tool_call_without_arguments_gets_an_empty_object() -> Result<(), WireError> {
        let events = run(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":5,"cache_read_input_tokens":2,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"list","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ])?;
        let call = ToolCall {
            id: "toolu_1".into(),
            name: "list".into(),
            arguments: "{}".into(),
        };
        assert_eq!(
            events,
            vec![
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "toolu_1".into(),
                    name: "list".into()
                },
                StreamEvent::ToolCallComplete { index: 0, call },
                StreamEvent::Usage {
                    usage: Usage {
                        input_tokens: 7,
                        output_tokens: 9
                    }
                },
                StreamEvent::Finish {
                    reason: FinishReason::ToolCalls
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn thinking_blocks_and_unknown_events_are_skipped() -> Result<(), WireError> {
        let events = run(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"brand_new_event"}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}"#,
            r#"{"type":"message_stop"}"#,
        ])?;
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta { text: "Hi".into() },
                StreamEvent::Finish {
                    reason: FinishReason::Length
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn an_overloaded_error_event_is_a_retryable_server_failure() {
        let failure = run(&[
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ])
        .err();
        assert_eq!(
            failure.map(|f| (f.failure, f.retryable, f.message)),
            Some((
                ProviderFailure::Server,
                true,
                "overloaded_error: Overloaded".into()
            ))
        );
    }

    #[test]
    fn a_stream_without_message_stop_is_malformed() {
        let failure =
            run(&[r#"{"type":"message_start","message":{"usage":{"input_tokens":5}}}"#]).err();
        assert_eq!(
            failure.map(|f| f.failure),
            Some(ProviderFailure::MalformedStream)
        );
    }
}
