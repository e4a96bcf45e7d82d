//! Scenarios both provider adapters must pass, run against their mock
//! servers by `providers_openai` and `providers_anthropic`.

use std::time::Duration;

use helm_core::provider::{
    ChatMessage, ChatRequest, Completion, EventStream, FinishReason, Provider, StreamEvent,
    ToolCall, ToolSpec, Usage, next,
};
use helm_core::{Error, ProviderFailure};
use helm_tests::mock::{Behaviour, DEFAULT_USAGE, MockServer, fast_http_options, user_request};

/// Every event of a stream, and the error that ended it, if any.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<Error>) {
    let mut events = Vec::new();
    while let Some(item) = next(&mut stream).await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

/// Streams `request` and returns its events, failing on any error.
pub async fn events_of(
    provider: &dyn Provider,
    request: ChatRequest,
) -> anyhow::Result<Vec<StreamEvent>> {
    let (events, error) = drain(provider.stream(request).await?).await;
    match error {
        Some(error) => Err(error.into()),
        None => Ok(events),
    }
}

/// The provider failure of an error, with its full text.
pub fn failure(error: &Error) -> (Option<ProviderFailure>, String) {
    let failure = match error {
        Error::Provider { failure, .. } => Some(*failure),
        _ => None,
    };
    (failure, error.to_string())
}

/// The failure `complete` ends with (it must end with one).
pub async fn completion_failure(
    provider: &dyn Provider,
    request: ChatRequest,
) -> anyhow::Result<(Option<ProviderFailure>, String)> {
    match provider.complete(request).await {
        Ok(completion) => anyhow::bail!("expected a failure, got {completion:?}"),
        Err(error) => Ok(failure(&error)),
    }
}

/// Options with a short idle timeout, for models that never finish.
pub fn impatient() -> helm_core::provider::HttpOptions {
    helm_core::provider::HttpOptions {
        idle_timeout: Duration::from_millis(300),
        ..fast_http_options()
    }
}

/// Sets an environment variable for an API key reference.
///
/// Each test uses its own variable name and sets it before any adapter
/// reads it, and nothing in this process reads these names concurrently.
#[allow(unsafe_code)]
pub fn set_key_variable(name: &str, value: &str) {
    // SAFETY: `set_var` is unsafe because another thread may read the
    // environment at the same time; the variables set here are unique to
    // the test that sets them and read only by that test's adapter, after
    // this call returns.
    unsafe { std::env::set_var(name, value) }
}

pub fn write_file_tool() -> ToolSpec {
    ToolSpec {
        name: "write_file".into(),
        description: "Writes a file in the workspace".into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": { "path": { "type": "string" }, "content": { "type": "string" } },
            "required": ["path", "content"],
        }),
    }
}

/// A conversation with a system prompt, tools, an earlier assistant turn
/// that made two tool calls, both results (one an error), and a follow-up.
pub fn conversation_with_tool_results() -> ChatRequest {
    ChatRequest {
        model: "mock-model".into(),
        system: "You are the channel's agent.".into(),
        messages: vec![
            ChatMessage::User {
                content: "Write the plan.".into(),
            },
            ChatMessage::Assistant {
                content: "On it.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_a".into(),
                        name: "write_file".into(),
                        arguments: r##"{"path":"plan.md","content":"# Plan"}"##.into(),
                    },
                    ToolCall {
                        id: "call_b".into(),
                        name: "write_file".into(),
                        arguments: String::new(),
                    },
                ],
            },
            ChatMessage::Tool {
                call_id: "call_a".into(),
                content: "wrote plan.md".into(),
                is_error: false,
            },
            ChatMessage::Tool {
                call_id: "call_b".into(),
                content: "missing path".into(),
                is_error: true,
            },
            ChatMessage::User {
                content: "Thanks. Now summarise.".into(),
            },
        ]
        .into(),
        tools: vec![write_file_tool()],
        max_tokens: None,
        temperature: Some(0.2),
    }
}

pub async fn streams_text_in_chunks(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(Behaviour::text("Hello from the mock"));
    let events = events_of(provider, user_request("hi")).await?;
    let (input_tokens, output_tokens) = DEFAULT_USAGE;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta {
                text: "Hello ".into()
            },
            StreamEvent::TextDelta {
                text: "from ".into()
            },
            StreamEvent::TextDelta {
                text: "the ".into()
            },
            StreamEvent::TextDelta {
                text: "mock".into()
            },
            StreamEvent::Usage {
                usage: Usage {
                    input_tokens,
                    output_tokens
                }
            },
            StreamEvent::Finish {
                reason: FinishReason::Stop
            },
        ]
    );
    Ok(())
}

pub async fn streams_one_tool_call(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    let arguments = r##"{"path":"plan.md","content":"# Plan\n- ship"}"##;
    mock.push(Behaviour::tool_call("write_file", arguments));
    let events = events_of(provider, user_request("write the plan")).await?;
    let Some(StreamEvent::ToolCallStart { index: 0, id, name }) = events.first().cloned() else {
        anyhow::bail!("the stream did not open with a tool call start: {events:?}");
    };
    assert_eq!(name, "write_file");
    let deltas: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments,
            } => Some(arguments.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas.len(),
        3,
        "arguments arrive in three pieces: {deltas:?}"
    );
    assert_eq!(deltas.concat(), arguments);
    let call = ToolCall {
        id,
        name,
        arguments: arguments.into(),
    };
    assert!(events.contains(&StreamEvent::ToolCallComplete { index: 0, call }));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::ToolCalls
        })
    );
    Ok(())
}

/// Several calls in one answer complete in order with their own arguments.
pub async fn streams_several_tool_calls(
    provider: &dyn Provider,
    mock: &MockServer,
    behaviour: Behaviour,
    expected: &[(&str, &str)],
) -> anyhow::Result<()> {
    mock.push(behaviour);
    let completion = provider.complete(user_request("do three things")).await?;
    let calls: Vec<(&str, &str)> = completion
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, expected);
    let mut ids: Vec<&str> = completion
        .tool_calls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), expected.len(), "every call keeps its own id");
    assert_eq!(completion.finish, Some(FinishReason::ToolCalls));
    Ok(())
}

pub async fn reports_usage(provider: &dyn Provider, mock: &MockServer) -> anyhow::Result<()> {
    mock.push(Behaviour::text("counted").with_usage(1234, 56));
    let completion = provider.complete(user_request("count")).await?;
    assert_eq!(
        completion.usage,
        Some(Usage {
            input_tokens: 1234,
            output_tokens: 56
        })
    );
    Ok(())
}

pub async fn complete_collects_the_stream(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(
        Behaviour::tool_calls(&[("write_file", r#"{"path":"a.md","content":"A"}"#)])
            .with_text("Writing it now.")
            .with_usage(20, 9),
    );
    let completion = provider.complete(user_request("write a.md")).await?;
    assert_eq!(completion.text, "Writing it now.");
    assert_eq!(completion.tool_calls.len(), 1);
    assert_eq!(
        completion.tool_calls[0].arguments,
        r#"{"path":"a.md","content":"A"}"#
    );
    assert_eq!(
        completion,
        Completion {
            text: "Writing it now.".into(),
            tool_calls: completion.tool_calls.clone(),
            usage: Some(Usage {
                input_tokens: 20,
                output_tokens: 9
            }),
            finish: Some(FinishReason::ToolCalls),
        }
    );
    Ok(())
}

pub async fn waits_for_retry_after(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(Behaviour::rate_limited(1));
    mock.push(Behaviour::text("after the wait"));
    let completion = provider.complete(user_request("hi")).await?;
    assert_eq!(completion.text, "after the wait");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].received_at - requests[0].received_at;
    assert!(
        waited >= Duration::from_secs(1),
        "retried after only {waited:?}"
    );
    Ok(())
}

pub async fn retries_a_server_error(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(Behaviour::server_error());
    mock.push(Behaviour::text("second time lucky"));
    let completion = provider.complete(user_request("hi")).await?;
    assert_eq!(completion.text, "second time lucky");
    assert_eq!(mock.requests().len(), 2);
    Ok(())
}

pub async fn gives_up_on_persistent_server_errors(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    for _ in 0..4 {
        mock.push(Behaviour::error(503, "upstream unavailable"));
    }
    let (failure, message) = completion_failure(provider, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::Server));
    assert!(message.contains("upstream unavailable"), "{message}");
    assert!(message.contains("gave up after 3 retries"), "{message}");
    assert_eq!(mock.requests().len(), 4, "one try and three retries");
    Ok(())
}

/// An HTTP error that must not be retried, with the provider's message kept.
pub async fn fails_without_retry(
    provider: &dyn Provider,
    mock: &MockServer,
    status: u16,
    expected: ProviderFailure,
) -> anyhow::Result<()> {
    mock.push(Behaviour::error(status, "  the provider's own words\n"));
    mock.push(Behaviour::text("a retry would have got this"));
    let (failure, message) = completion_failure(provider, user_request("hi")).await?;
    assert_eq!(failure, Some(expected), "{message}");
    assert!(message.contains(&format!("HTTP {status}")), "{message}");
    assert!(message.contains("the provider's own words"), "{message}");
    assert_eq!(mock.requests().len(), 1, "HTTP {status} is not retried");
    Ok(())
}

pub async fn a_cut_stream_is_malformed(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(Behaviour::text("one two three four five six seven eight").cut());
    let (events, error) = drain(provider.stream(user_request("hi")).await?).await;
    assert!(
        matches!(events.first(), Some(StreamEvent::TextDelta { .. })),
        "text came before the cut: {events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Finish { .. }))
    );
    let Some(error) = error else {
        anyhow::bail!("a cut stream ended without an error: {events:?}");
    };
    assert_eq!(
        failure(&error).0,
        Some(ProviderFailure::MalformedStream),
        "{error}"
    );
    assert_eq!(
        mock.requests().len(),
        1,
        "a half-streamed answer is never retried"
    );
    Ok(())
}

pub async fn invalid_json_is_malformed(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(Behaviour::text("one two three four").malformed());
    let (failure, message) = completion_failure(provider, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::MalformedStream));
    assert!(message.contains("invalid JSON"), "{message}");
    Ok(())
}

pub async fn a_silent_model_times_out(
    provider: &dyn Provider,
    mock: &MockServer,
) -> anyhow::Result<()> {
    mock.push(Behaviour::text("one two three four five six").hang());
    let (failure, message) = completion_failure(provider, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::Timeout), "{message}");
    assert!(message.contains("sent nothing for 0.3 s"), "{message}");
    Ok(())
}

/// A base URL on a closed local port: refused, retried, then Unreachable.
pub async fn an_unreachable_server(provider: &dyn Provider, url: &str) -> anyhow::Result<()> {
    let (failure, message) = completion_failure(provider, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::Unreachable), "{message}");
    assert!(
        message.contains(url),
        "the message names the URL: {message}"
    );
    assert!(message.contains("gave up after 3 retries"), "{message}");
    Ok(())
}

/// A local base URL where nothing listens.
pub async fn closed_port_url() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    drop(listener);
    Ok(format!("http://{address}"))
}
