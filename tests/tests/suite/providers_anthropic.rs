//! The `Anthropic` adapter against a mock Messages API: streaming, tool
//! calls, retries, timeouts, errors, keys, and the request it sends.

use helm_core::ProviderFailure;
use helm_core::provider::{
    Anthropic, ApiKeyRef, ChatMessage, FinishReason, Provider, ProviderConfig, ProviderKind,
    ProviderRegistry,
};
use helm_tests::mock::{Behaviour, MockAnthropic, fast_http_options, user_request};
use serde_json::json;

use super::provider_kit::{self as kit, *};

#[tokio::test]
async fn streams_text_in_chunks() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    kit::streams_text_in_chunks(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn streams_one_tool_call_with_arguments_split_across_chunks() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    streams_one_tool_call(&mock.adapter()?, &mock).await
}

const THREE_CALLS: [(&str, &str); 3] = [
    ("write_file", r#"{"path":"a.md","content":"A"}"#),
    ("read_file", r#"{"path":"b.md"}"#),
    ("run", r#"{"command":"ls -la"}"#),
];

#[tokio::test]
async fn streams_several_tool_calls_in_one_answer() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    let behaviour = Behaviour::tool_calls(&THREE_CALLS).with_text("Three things:");
    streams_several_tool_calls(&mock.adapter()?, &mock, behaviour, &THREE_CALLS).await
}

#[tokio::test]
async fn a_tool_call_without_arguments_gets_an_empty_object() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    mock.push(Behaviour::tool_call("list_files", ""));
    let completion = mock.adapter()?.complete(user_request("list")).await?;
    assert_eq!(completion.tool_calls.len(), 1);
    assert_eq!(completion.tool_calls[0].arguments, "{}");
    Ok(())
}

#[tokio::test]
async fn maps_stop_reasons() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    let adapter = mock.adapter()?;
    for (stop_reason, expected) in [
        ("end_turn", FinishReason::Stop),
        ("stop_sequence", FinishReason::Stop),
        ("max_tokens", FinishReason::Length),
        ("tool_use", FinishReason::ToolCalls),
    ] {
        mock.push(Behaviour::text("words").with_finish_reason(stop_reason));
        let completion = adapter.complete(user_request("hi")).await?;
        assert_eq!(completion.finish, Some(expected), "{stop_reason}");
    }
    Ok(())
}

#[tokio::test]
async fn reports_usage() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    kit::reports_usage(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn complete_collects_text_calls_usage_and_finish() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    complete_collects_the_stream(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn waits_for_retry_after_on_429_then_succeeds() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    waits_for_retry_after(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn retries_a_500_then_succeeds() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    retries_a_server_error(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn gives_up_after_the_last_retry() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    gives_up_on_persistent_server_errors(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn an_overloaded_error_event_is_retried_then_reported() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    let adapter = mock.adapter()?;
    mock.push(Behaviour::stream_error("overloaded_error", "Overloaded"));
    mock.push(Behaviour::text("recovered"));
    assert_eq!(
        adapter.complete(user_request("hi")).await?.text,
        "recovered"
    );
    assert_eq!(mock.requests().len(), 2);

    for _ in 0..4 {
        mock.push(Behaviour::stream_error("overloaded_error", "Overloaded"));
    }
    let (failure, message) = completion_failure(&adapter, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::Server));
    assert!(
        message.contains("overloaded_error: Overloaded"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_the_providers_message() -> anyhow::Result<()> {
    for (status, expected) in [
        (401, ProviderFailure::Unauthorized),
        (403, ProviderFailure::Unauthorized),
        (404, ProviderFailure::NotFound),
        (400, ProviderFailure::BadRequest),
        (413, ProviderFailure::BadRequest),
    ] {
        let mock = MockAnthropic::start().await?;
        fails_without_retry(&mock.adapter()?, &mock, status, expected).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_malformed() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    a_cut_stream_is_malformed(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn invalid_json_in_an_event_is_malformed() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    invalid_json_is_malformed(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn a_model_that_never_finishes_times_out() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    a_silent_model_times_out(&mock.adapter_with(impatient())?, &mock).await
}

#[tokio::test]
async fn an_unreachable_base_url_is_reported_as_unreachable() -> anyhow::Result<()> {
    let origin = closed_port_url().await?;
    let config = ProviderConfig {
        name: "nowhere".into(),
        kind: ProviderKind::Anthropic,
        base_url: origin.clone(),
        api_key: None,
        default_model: None,
        extra_headers: Default::default(),
    };
    let adapter = Anthropic::with_options(&config, fast_http_options())?;
    an_unreachable_server(&adapter, &format!("{origin}/v1/messages")).await
}

#[tokio::test]
async fn the_key_goes_in_x_api_key_and_never_into_errors() -> anyhow::Result<()> {
    let key = "sk-ant-helm-test-93be01";
    set_key_variable("HELM_TEST_ANTHROPIC_KEY", key);
    let mock = MockAnthropic::start().await?;
    let config = ProviderConfig {
        api_key: Some(ApiKeyRef::Env("HELM_TEST_ANTHROPIC_KEY".into())),
        ..mock.provider_config("keyed")
    };
    let adapter = Anthropic::with_options(&config, fast_http_options())?;

    mock.push(Behaviour::text("authorised"));
    assert_eq!(
        adapter.complete(user_request("hi")).await?.text,
        "authorised"
    );
    let request = mock.last_request();
    assert_eq!(
        request.as_ref().and_then(|r| r.header("x-api-key")),
        Some(key)
    );
    assert_eq!(
        request.as_ref().and_then(|r| r.header("authorization")),
        None
    );

    mock.push(Behaviour::unauthorized());
    for _ in 0..4 {
        mock.push(Behaviour::error(529, "overloaded, {api_key}"));
    }
    let mut texts = vec![format!("{adapter:?}")];
    for expected in [ProviderFailure::Unauthorized, ProviderFailure::Server] {
        let error = match adapter.complete(user_request("hi")).await {
            Ok(completion) => anyhow::bail!("expected {expected:?}, got {completion:?}"),
            Err(error) => error,
        };
        assert_eq!(failure(&error).0, Some(expected), "{error}");
        texts.push(error.to_string());
        texts.push(format!("{error:?}"));
    }
    assert!(texts[1].contains("[redacted]"), "{}", texts[1]);
    for text in &texts {
        assert!(!text.contains(key), "the key leaked into: {text}");
    }
    Ok(())
}

#[tokio::test]
async fn maps_the_request_to_the_messages_api() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    let config = ProviderConfig {
        // A base URL that already ends in /v1 does not get a second one.
        base_url: format!("{}/v1/", mock.base_url()),
        extra_headers: [("anthropic-beta".to_string(), "tools-2024".to_string())].into(),
        ..mock.provider_config("mapped")
    };
    let adapter = Anthropic::with_options(&config, fast_http_options())?;
    mock.push(Behaviour::text("ok"));
    adapter.complete(conversation_with_tool_results()).await?;

    let Some(request) = mock.last_request() else {
        anyhow::bail!("no request arrived");
    };
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("anthropic-beta"), Some("tools-2024"));
    assert_eq!(
        request.header("x-api-key"),
        None,
        "no key configured, none sent"
    );
    assert_eq!(
        request.body,
        json!({
            "model": "mock-model",
            "max_tokens": 4096,
            "stream": true,
            "system": "You are the channel's agent.",
            "temperature": 0.2,
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": "Write the plan." }] },
                { "role": "assistant", "content": [
                    { "type": "text", "text": "On it." },
                    { "type": "tool_use", "id": "call_a", "name": "write_file",
                      "input": { "path": "plan.md", "content": "# Plan" } },
                    { "type": "tool_use", "id": "call_b", "name": "write_file", "input": {} },
                ] },
                // Both results grouped in one user turn, with the next user
                // message merged after them, since roles must alternate.
                { "role": "user", "content": [
                    { "type": "tool_result", "tool_use_id": "call_a", "content": "wrote plan.md" },
                    { "type": "tool_result", "tool_use_id": "call_b", "content": "missing path", "is_error": true },
                    { "type": "text", "text": "Thanks. Now summarise." },
                ] },
            ],
            "tools": [{
                "name": "write_file",
                "description": "Writes a file in the workspace",
                "input_schema": write_file_tool().parameters,
            }],
        })
    );
    Ok(())
}

#[tokio::test]
async fn merges_same_role_messages_and_honours_max_tokens() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    mock.push(Behaviour::text("ok"));
    let mut request = user_request("first");
    request.max_tokens = Some(300);
    std::sync::Arc::make_mut(&mut request.messages).extend([
        ChatMessage::User {
            content: "second".into(),
        },
        ChatMessage::Assistant {
            content: "reply".into(),
            tool_calls: Vec::new(),
        },
        // An empty assistant message would be an empty turn: it is dropped,
        // and the two user messages around it become one.
        ChatMessage::User {
            content: "third".into(),
        },
        ChatMessage::Assistant {
            content: String::new(),
            tool_calls: Vec::new(),
        },
        ChatMessage::User {
            content: "fourth".into(),
        },
    ]);
    mock.adapter()?.complete(request).await?;
    let body = mock.last_request().map(|r| r.body).unwrap_or_default();
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(
        body.get("system"),
        None,
        "an empty system prompt is left out"
    );
    assert_eq!(body.get("tools"), None);
    let text = |t: &str| json!({ "type": "text", "text": t });
    assert_eq!(
        body["messages"],
        json!([
            { "role": "user", "content": [text("first"), text("second")] },
            { "role": "assistant", "content": [text("reply")] },
            { "role": "user", "content": [text("third"), text("fourth")] },
        ])
    );
    Ok(())
}

#[tokio::test]
async fn the_registry_builds_a_working_adapter() -> anyhow::Result<()> {
    let mock = MockAnthropic::start().await?;
    let registry = ProviderRegistry::default();
    let adapter = registry.adapter(&mock.provider_config("claude"))?;
    mock.push(Behaviour::text("via the registry"));
    assert_eq!(
        adapter.complete(user_request("hi")).await?.text,
        "via the registry"
    );
    Ok(())
}
