//! The `OpenAiCompatible` adapter against a mock OpenAI server: streaming,
//! tool calls, retries, timeouts, errors, keys, and the request it sends.

use helm_core::ProviderFailure;
use helm_core::provider::{
    ApiKeyRef, Completion, FinishReason, OpenAiCompatible, Provider, ProviderConfig,
    ProviderRegistry, ToolCall, Usage,
};
use helm_tests::mock::{Behaviour, MockOpenAi, fast_http_options, user_request};
use serde_json::json;

use super::provider_kit::{self as kit, *};

#[tokio::test]
async fn streams_text_in_chunks() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    kit::streams_text_in_chunks(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn streams_one_tool_call_with_arguments_split_across_chunks() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    streams_one_tool_call(&mock.adapter()?, &mock).await
}

const THREE_CALLS: [(&str, &str); 3] = [
    ("write_file", r#"{"path":"a.md","content":"A"}"#),
    ("read_file", r#"{"path":"b.md"}"#),
    ("run", r#"{"command":"ls -la"}"#),
];

#[tokio::test]
async fn streams_several_tool_calls_in_one_answer() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let behaviour = Behaviour::tool_calls(&THREE_CALLS);
    streams_several_tool_calls(&mock.adapter()?, &mock, behaviour, &THREE_CALLS).await
}

#[tokio::test]
async fn accumulates_interleaved_parallel_tool_calls_by_index() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let behaviour = Behaviour::tool_calls(&THREE_CALLS).interleaved();
    streams_several_tool_calls(&mock.adapter()?, &mock, behaviour, &THREE_CALLS).await
}

#[tokio::test]
async fn tolerates_fragments_without_index_and_whole_arguments() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let adapter = mock.adapter()?;
    let behaviour = Behaviour::tool_calls(&THREE_CALLS).without_index();
    streams_several_tool_calls(&adapter, &mock, behaviour, &THREE_CALLS).await?;
    let behaviour = Behaviour::tool_calls(&THREE_CALLS).whole_arguments();
    streams_several_tool_calls(&adapter, &mock, behaviour, &THREE_CALLS).await
}

#[tokio::test]
async fn tool_calls_finished_with_stop_still_want_running() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    mock.push(Behaviour::tool_call("read_file", r#"{"path":"x"}"#).with_finish_reason("stop"));
    let completion = mock.adapter()?.complete(user_request("read x")).await?;
    assert_eq!(completion.finish, Some(FinishReason::ToolCalls));
    assert_eq!(completion.tool_calls.len(), 1);
    Ok(())
}

#[tokio::test]
async fn reports_usage() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    kit::reports_usage(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn complete_collects_text_calls_usage_and_finish() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    complete_collects_the_stream(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn waits_for_retry_after_on_429_then_succeeds() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    waits_for_retry_after(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn retries_a_500_then_succeeds() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    retries_a_server_error(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn gives_up_after_the_last_retry() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    gives_up_on_persistent_server_errors(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_the_providers_message() -> anyhow::Result<()> {
    for (status, expected) in [
        (401, ProviderFailure::Unauthorized),
        (403, ProviderFailure::Unauthorized),
        (404, ProviderFailure::NotFound),
        (400, ProviderFailure::BadRequest),
        (422, ProviderFailure::BadRequest),
    ] {
        let mock = MockOpenAi::start().await?;
        fails_without_retry(&mock.adapter()?, &mock, status, expected).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_malformed() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    a_cut_stream_is_malformed(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn invalid_json_in_a_chunk_is_malformed() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    invalid_json_is_malformed(&mock.adapter()?, &mock).await
}

#[tokio::test]
async fn an_error_chunk_mid_stream_is_reported() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let adapter = mock.adapter()?;
    // At the head of the stream it is retried like a 5xx…
    mock.push(Behaviour::stream_error(
        "upstream_error",
        "Provider returned error",
    ));
    mock.push(Behaviour::text("recovered"));
    assert_eq!(
        adapter.complete(user_request("hi")).await?.text,
        "recovered"
    );
    // …and once retries run out it surfaces with its message.
    for _ in 0..4 {
        mock.push(Behaviour::stream_error(
            "upstream_error",
            "Provider returned error",
        ));
    }
    let (failure, message) = completion_failure(&adapter, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::Server));
    assert!(message.contains("Provider returned error"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_model_that_never_finishes_times_out() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    a_silent_model_times_out(&mock.adapter_with(impatient())?, &mock).await
}

#[tokio::test]
async fn an_unreachable_base_url_is_reported_as_unreachable() -> anyhow::Result<()> {
    let origin = closed_port_url().await?;
    let config = ProviderConfig {
        name: "nowhere".into(),
        kind: helm_core::provider::ProviderKind::OpenAi,
        base_url: format!("{origin}/v1"),
        api_key: None,
        default_model: None,
        extra_headers: Default::default(),
    };
    let adapter = OpenAiCompatible::with_options(&config, fast_http_options())?;
    an_unreachable_server(&adapter, &format!("{origin}/v1/chat/completions")).await
}

#[tokio::test]
async fn the_key_goes_in_the_bearer_header_and_never_into_errors() -> anyhow::Result<()> {
    let key = "sk-helm-test-4f1c9e2b7d";
    set_key_variable("HELM_TEST_OPENAI_KEY", key);
    let mock = MockOpenAi::start().await?;
    let config = ProviderConfig {
        api_key: Some(ApiKeyRef::Env("HELM_TEST_OPENAI_KEY".into())),
        ..mock.provider_config("keyed")
    };
    let adapter = OpenAiCompatible::with_options(&config, fast_http_options())?;

    mock.push(Behaviour::text("authorised"));
    assert_eq!(
        adapter.complete(user_request("hi")).await?.text,
        "authorised"
    );
    let sent = mock
        .last_request()
        .map(|r| r.header("authorization").map(str::to_string));
    assert_eq!(sent, Some(Some(format!("Bearer {key}"))));

    // A provider that echoes the key, a rate limit that outlasts the
    // retries, and a mid-stream failure: the key appears in none of them.
    mock.push(Behaviour::unauthorized());
    for _ in 0..4 {
        mock.push(Behaviour::error(429, "slow down, {api_key}"));
    }
    mock.push(Behaviour::text("one two three four").cut());
    let mut texts = vec![format!("{adapter:?}")];
    for expected in [
        ProviderFailure::Unauthorized,
        ProviderFailure::RateLimited,
        ProviderFailure::MalformedStream,
    ] {
        let error = match adapter.complete(user_request("hi")).await {
            Ok(completion) => anyhow::bail!("expected {expected:?}, got {completion:?}"),
            Err(error) => error,
        };
        assert_eq!(failure(&error).0, Some(expected), "{error}");
        texts.push(error.to_string());
        texts.push(format!("{error:?}"));
    }
    assert!(
        texts[1].contains("Incorrect API key provided: [redacted]"),
        "{}",
        texts[1]
    );
    for text in &texts {
        assert!(!text.contains(key), "the key leaked into: {text}");
    }
    Ok(())
}

#[tokio::test]
async fn a_key_variable_that_is_not_set_is_unconfigured() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let config = ProviderConfig {
        api_key: Some(ApiKeyRef::Env("HELM_TEST_UNSET_VARIABLE_7".into())),
        ..mock.provider_config("unset")
    };
    let adapter = OpenAiCompatible::with_options(&config, fast_http_options())?;
    let (failure, message) = completion_failure(&adapter, user_request("hi")).await?;
    assert_eq!(failure, Some(ProviderFailure::Unconfigured));
    assert!(message.contains("HELM_TEST_UNSET_VARIABLE_7"), "{message}");
    assert!(
        mock.requests().is_empty(),
        "nothing is sent without the key"
    );
    Ok(())
}

#[tokio::test]
async fn maps_the_request_to_chat_completions() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let config = ProviderConfig {
        // A trailing slash on the base URL is tolerated.
        base_url: format!("{}/", mock.base_url()),
        extra_headers: [("HTTP-Referer".to_string(), "https://helm.test".to_string())].into(),
        ..mock.provider_config("mapped")
    };
    let adapter = OpenAiCompatible::with_options(&config, fast_http_options())?;
    mock.push(Behaviour::text("ok"));
    adapter.complete(conversation_with_tool_results()).await?;

    let Some(request) = mock.last_request() else {
        anyhow::bail!("no request arrived");
    };
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        request.header("authorization"),
        None,
        "no key configured, none sent"
    );
    assert_eq!(request.header("http-referer"), Some("https://helm.test"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body,
        json!({
            "model": "mock-model",
            "stream": true,
            "stream_options": { "include_usage": true },
            "temperature": 0.2,
            "messages": [
                { "role": "system", "content": "You are the channel's agent." },
                { "role": "user", "content": "Write the plan." },
                {
                    "role": "assistant",
                    "content": "On it.",
                    "tool_calls": [
                        { "id": "call_a", "type": "function",
                          "function": { "name": "write_file", "arguments": r##"{"path":"plan.md","content":"# Plan"}"## } },
                        { "id": "call_b", "type": "function",
                          "function": { "name": "write_file", "arguments": "{}" } },
                    ],
                },
                { "role": "tool", "tool_call_id": "call_a", "content": "wrote plan.md" },
                { "role": "tool", "tool_call_id": "call_b", "content": "missing path" },
                { "role": "user", "content": "Thanks. Now summarise." },
            ],
            "tools": [{
                "type": "function",
                "function": {
                    "name": "write_file",
                    "description": "Writes a file in the workspace",
                    "parameters": write_file_tool().parameters,
                },
            }],
        })
    );

    // No system prompt, no tools: neither is sent; max_tokens when set.
    mock.push(Behaviour::text("ok"));
    let mut request = user_request("hi");
    request.max_tokens = Some(77);
    adapter.complete(request).await?;
    let body = mock.last_request().map(|r| r.body).unwrap_or_default();
    assert_eq!(
        body["messages"],
        json!([{ "role": "user", "content": "hi" }])
    );
    assert_eq!(body.get("tools"), None);
    assert_eq!(body["max_tokens"], 77);
    Ok(())
}

#[tokio::test]
async fn embeds_through_the_embeddings_endpoint() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    mock.push(Behaviour::embeddings(vec![
        vec![0.5, -1.0],
        vec![0.25, 2.0],
    ]));
    let inputs = vec!["first".to_string(), "second".to_string()];
    let vectors = mock.adapter()?.embed("embedder", &inputs).await?;
    assert_eq!(vectors, vec![vec![0.5, -1.0], vec![0.25, 2.0]]);
    let request = mock.last_request();
    assert_eq!(
        request.as_ref().map(|r| r.path.as_str()),
        Some("/v1/embeddings")
    );
    assert_eq!(
        request.map(|r| r.body),
        Some(json!({ "model": "embedder", "input": ["first", "second"] }))
    );
    Ok(())
}

#[tokio::test]
async fn the_registry_builds_a_working_adapter() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let registry = ProviderRegistry::default();
    let adapter = registry.adapter(&mock.provider_config("local"))?;
    mock.push(Behaviour::text("via the registry"));
    assert_eq!(
        adapter.complete(user_request("hi")).await?.text,
        "via the registry"
    );
    Ok(())
}

#[tokio::test]
async fn accepts_a_whole_json_answer_from_a_server_that_ignores_stream() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let answer = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Whole.",
                "tool_calls": [{ "id": "call_1", "type": "function",
                                 "function": { "name": "run", "arguments": "{\"command\":\"ls\"}" } }],
            },
            "finish_reason": "tool_calls",
        }],
        "usage": { "prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6 },
    });
    mock.push(Behaviour::raw(200, "application/json", &answer.to_string()));
    let completion = mock.adapter()?.complete(user_request("hi")).await?;
    assert_eq!(
        completion,
        Completion {
            text: "Whole.".into(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "run".into(),
                arguments: r#"{"command":"ls"}"#.into(),
            }],
            usage: Some(Usage {
                input_tokens: 4,
                output_tokens: 2
            }),
            finish: Some(FinishReason::ToolCalls),
        }
    );
    Ok(())
}

#[tokio::test]
async fn reads_crlf_frames_with_keep_alive_comments() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    mock.push(Behaviour::raw_sse(&[
        ": OPENROUTER PROCESSING\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ça \"}}]}\r\n\r\n",
        ": OPENROUTER PROCESSING\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"marche\"},\"finish_reason\":\"stop\"}]}\r\n\r\n",
        "data: [DONE]\r\n\r\n",
    ]));
    let completion = mock.adapter()?.complete(user_request("hi")).await?;
    assert_eq!(completion.text, "ça marche");
    assert_eq!(completion.finish, Some(FinishReason::Stop));
    assert_eq!(completion.usage, None);
    Ok(())
}
