//! The model is fixed when a message is accepted and checked when it is
//! chosen: a turn queued under model A is served by A even if the channel
//! moves to B while it waits; every turn says which rule chose its model and
//! for whom it runs; a choice the provider does not serve is refused when it
//! is set, and one that went stale refuses the next message before anything
//! is stored. What a provider serves can be listed, and a configuration
//! tried, before it is saved.

use std::time::Duration;

use helm_tests::mock::{Behaviour, MockAnthropic, MockOpenAi, ModelList};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{events_ws, next_json};
use super::people::{invited, served_with_captain};

fn ids(models: &Value) -> Vec<String> {
    models["models"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_queued_under_one_model_is_served_by_it_after_a_change() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    openai.serve_models(&["model-a", "model-b"]);
    ada.add_mock_provider("mock", &openai.base_url(), "model-a")
        .await?;
    ada.create_channel("plan", "Plans the quarter.").await?;
    let mut socket = events_ws(&served.ws_url("/api/events"), &ada.token).await?;
    assert_eq!(next_json(&mut socket).await?["type"], "stream.hello");

    // A slow first answer, so the second message waits behind it.
    openai.push(
        Behaviour::text_chunks(&["Thinking", " it", " through."])
            .chunk_delay(Duration::from_millis(300)),
    );
    openai.push(Behaviour::text("The second answer."));
    openai.push(Behaviour::text("The third answer."));
    let (_, first) = ada
        .post(
            "/api/channels/plan/messages",
            json!({"text": "@plan-agent draft the plan"}),
        )
        .await?;
    let thread = first["thread"]["id"].as_i64().unwrap_or_default();
    let first_turn = first["turn"]["id"].as_i64().unwrap_or_default();
    ada.wait_turn(thread, first_turn, |t| t["state"] == "running")
        .await?;
    let (status, second) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@plan-agent and the budget"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    // Accepted: its model is fixed now, with the rule that chose it and
    // the person it runs for.
    let queued = &second["turn"];
    assert_eq!(queued["state"], "queued");
    assert_eq!(queued["served_by"]["provider"], "mock");
    assert_eq!(queued["served_by"]["model"], "model-a");
    assert_eq!(queued["model_level"], "workspace");
    assert_eq!(queued["requested_by"], ada.id);

    // While it waits, the Captain moves the channel to model B.
    let (status, policy) = ada
        .put(
            "/api/channels/plan/model",
            json!({"provider": "mock", "model": "model-b"}),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{policy}");
    assert_eq!(policy["resolved"]["model"], "model-b");
    assert_eq!(policy["resolved"]["level"], "channel");
    assert_eq!(policy["check"]["verification"], "verified", "{policy}");
    let changed = loop {
        let event = next_json(&mut socket).await?;
        if event["type"] == "model.changed" {
            break event;
        }
    };
    assert_eq!(changed["level"], "channel");
    assert_eq!(changed["choice"]["model"], "model-b");
    assert_eq!(changed["by"], "ada");
    assert_eq!(changed["channel_id"], first["thread"]["channel_id"]);

    // The waiting turn is still served by model A.
    let second_turn = queued["id"].as_i64().unwrap_or_default();
    let ended = ada.wait_ended(thread, second_turn).await?;
    assert_eq!(ended["state"], "completed", "{ended}");
    assert_eq!(ended["served_by"]["model"], "model-a");
    let requests = openai.requests();
    assert_eq!(requests[1].body["model"], "model-a", "the request it made");

    // The next message is served by model B, chosen by the channel rule.
    let (_, third) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@plan-agent and the hiring plan"}),
        )
        .await?;
    assert_eq!(third["turn"]["served_by"]["model"], "model-b");
    assert_eq!(third["turn"]["model_level"], "channel");
    let third_turn = third["turn"]["id"].as_i64().unwrap_or_default();
    ada.wait_ended(thread, third_turn).await?;
    assert_eq!(openai.requests()[2].body["model"], "model-b");
    let replies: Vec<Value> = ada
        .messages(thread)
        .await?
        .into_iter()
        .filter(|m| m["author"]["kind"] == "agent")
        .collect();
    let served_by: Vec<&str> = replies
        .iter()
        .map(|m| m["served_by"]["model"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(served_by, ["model-a", "model-a", "model-b"]);

    // A change of the workspace's model is pushed too, to everyone.
    ada.put(
        "/api/model",
        json!({"provider": "mock", "model": "model-b"}),
    )
    .await?;
    let changed = loop {
        let event = next_json(&mut socket).await?;
        if event["type"] == "model.changed" {
            break event;
        }
    };
    assert_eq!(changed["level"], "workspace");
    assert!(changed.get("channel_id").is_none(), "{changed}");

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_is_checked_when_set_and_a_stale_one_refuses_the_message() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    openai.serve_models(&["model-a", "model-b"]);
    ada.add_mock_provider("mock", &openai.base_url(), "model-a")
        .await?;
    ada.create_channel("plan", "Plans the quarter.").await?;

    // A model the provider does not serve is refused, saying what it serves.
    let (status, refused) = ada
        .put(
            "/api/channels/plan/model",
            json!({"provider": "mock", "model": "gpt-nope"}),
        )
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or_default()
            .contains("mock does not serve gpt-nope; it serves model-a, model-b"),
        "{refused}"
    );
    let (status, _) = ada
        .put("/api/channels/plan/model", json!({"provider": "ghost"}))
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A provider without a default model needs a model named.
    ada.ok(
        Method::POST,
        "/api/providers",
        Some(json!({"name": "bare", "kind": "openai", "base_url": openai.base_url()})),
        StatusCode::CREATED,
    )
    .await?;
    let (status, refused) = ada
        .put("/api/channels/plan/model", json!({"provider": "bare"}))
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert!(
        refused.to_string().contains("no default model"),
        "{refused}"
    );
    // Registering says so too, before any turn fails.
    let (status, refused) = ada
        .post(
            "/api/providers",
            json!({"name": "bare", "kind": "openai", "base_url": openai.base_url(),
                   "make_default": true}),
        )
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    let (status, refused) = ada
        .post(
            "/api/providers",
            json!({"name": "typo", "kind": "openai", "base_url": openai.base_url(),
                   "default_model": "model-z"}),
        )
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");

    // A provider that keeps no list: the choice stands, unverified.
    let plain = MockOpenAi::start().await?;
    plain.set_models(ModelList::Unlisted);
    ada.ok(
        Method::POST,
        "/api/providers",
        Some(
            json!({"name": "plain", "kind": "openai", "base_url": plain.base_url(),
                    "default_model": "whatever"}),
        ),
        StatusCode::CREATED,
    )
    .await?;
    let (status, policy) = ada
        .put("/api/channels/plan/model", json!({"provider": "plain"}))
        .await?;
    assert_eq!(status, StatusCode::OK, "{policy}");
    assert_eq!(policy["check"]["verification"], "unverified");
    assert_eq!(policy["check"]["model"], "whatever");
    assert!(
        policy["check"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("does not list its models"),
        "{policy}"
    );

    // The channel settles on model B; then its provider is re-registered
    // at a server that no longer serves B.
    ada.put(
        "/api/channels/plan/model",
        json!({"provider": "mock", "model": "model-b"}),
    )
    .await?;
    let newer = MockOpenAi::start().await?;
    newer.serve_models(&["model-a"]);
    ada.ok(
        Method::POST,
        "/api/providers",
        Some(
            json!({"name": "mock", "kind": "openai", "base_url": newer.base_url(),
                    "default_model": "model-a", "make_default": true, "replace": true}),
        ),
        StatusCode::CREATED,
    )
    .await?;
    let (status, stale) = ada
        .post(
            "/api/channels/plan/messages",
            json!({"text": "@plan-agent start on the plan"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{stale}");
    assert_eq!(stale["code"], "model_unavailable");
    let message = stale["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("mock no longer serves model-b, the channel choice for #plan")
            && message.contains("choose one it serves: model-a"),
        "{stale}"
    );
    assert!(
        !message.contains("--"),
        "no CLI syntax over HTTP: {message}"
    );
    assert!(
        stale["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("PUT /api/channels/{channel}/model"),
        "{stale}"
    );
    let (_, threads) = ada.get("/api/channels/plan/threads").await?;
    assert_eq!(threads, json!([]), "nothing was stored");
    assert!(
        newer.requests().is_empty(),
        "no model was asked for an answer"
    );

    // Choosing what it serves makes the channel work again.
    ada.put(
        "/api/channels/plan/model",
        json!({"provider": "mock", "model": "model-a"}),
    )
    .await?;
    newer.push(Behaviour::text("On it."));
    let (status, posted) = ada
        .post(
            "/api/channels/plan/messages",
            json!({"text": "@plan-agent start on the plan"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let turn = posted["turn"]["id"].as_i64().unwrap_or_default();
    assert_eq!(ada.wait_ended(thread, turn).await?["state"], "completed");

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_provider_serves_is_listed_and_a_configuration_is_tried_before_saving()
-> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let base = served.url("");
    let mira = invited(&base, &ada, "mira", "member").await?;
    let openai = MockOpenAi::start().await?;
    openai.serve_models(&["gpt-a", "gpt-b"]);
    ada.add_mock_provider("mock", &openai.base_url(), "gpt-a")
        .await?;

    // Anyone choosing a model may see what a registered provider serves.
    let (status, listed) = mira.get("/api/providers/mock/models").await?;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["listed"], true);
    assert_eq!(ids(&listed), ["gpt-a", "gpt-b"]);
    assert_eq!(listed["default_model"], "gpt-a");
    assert_eq!(listed["default_served"], true);
    let (status, _) = mira.get("/api/providers/ghost/models").await?;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Trying configurations before saving them: Anthropic's list, Ollama's
    // tags behind an OpenAI-compatible URL, a server with no list.
    let anthropic = MockAnthropic::start().await?;
    anthropic.serve_models(&["claude-one", "claude-two"]);
    let (status, tried) = ada
        .post(
            "/api/providers/test",
            json!({"name": "claude", "kind": "anthropic", "base_url": anthropic.base_url(),
                   "default_model": "claude-three"}),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{tried}");
    assert_eq!(ids(&tried), ["claude-one", "claude-two"]);
    assert_eq!(tried["models"][0]["display_name"], "Mock claude-one");
    assert_eq!(
        tried["default_served"], false,
        "the typo shows before saving"
    );
    let ollama = MockOpenAi::start().await?;
    ollama.set_models(ModelList::OllamaTags(vec!["llama3:latest".into()]));
    let (_, tried) = ada
        .post(
            "/api/providers/test",
            json!({"name": "local", "kind": "openai", "base_url": ollama.base_url()}),
        )
        .await?;
    assert_eq!(ids(&tried), ["llama3:latest"], "{tried}");
    let plain = MockOpenAi::start().await?;
    plain.set_models(ModelList::Unlisted);
    let (_, tried) = ada
        .post(
            "/api/providers/test",
            json!({"name": "plain", "kind": "openai", "base_url": plain.base_url()}),
        )
        .await?;
    assert_eq!(tried["listed"], false, "{tried}");
    assert_eq!(tried["models"], json!([]));

    // A key pasted into the form is tried as given, then kept nowhere.
    let keyed = MockOpenAi::start().await?;
    keyed.serve_models(&["gpt-k"]);
    let (status, tried) = ada
        .post(
            "/api/providers/test",
            json!({"name": "keyed", "kind": "openai", "base_url": keyed.base_url(),
                   "api_key": "  sk-trial-123\n"}),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{tried}");
    let sent = keyed.list_requests();
    assert_eq!(
        sent.last().and_then(|r| r.header("authorization")),
        Some("Bearer sk-trial-123")
    );
    let secrets = served.api.t.data_dir().join("secrets");
    let kept: Vec<_> = std::fs::read_dir(&secrets)
        .map(|dir| dir.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        kept.iter()
            .all(|name| !name.to_string_lossy().contains("keyed")
                && !name.to_string_lossy().starts_with("trial-")),
        "{kept:?}"
    );
    let (status, failed) = ada
        .post(
            "/api/providers/test",
            json!({"name": "keyed", "kind": "openai", "base_url": keyed.base_url(),
                   "api_key": "two\nlines"}),
        )
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{failed}");

    // A refused key and an unreachable server are upstream failures with
    // the provider's reason.
    let locked = MockOpenAi::start().await?;
    locked.set_models(ModelList::Error(401, "Incorrect API key provided".into()));
    let (status, failed) = ada
        .post(
            "/api/providers/test",
            json!({"name": "locked", "kind": "openai", "base_url": locked.base_url()}),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{failed}");
    assert!(failed.to_string().contains("Incorrect API key"), "{failed}");
    let (status, _) = ada
        .post(
            "/api/providers/test",
            json!({"name": "gone", "kind": "openai", "base_url": "http://127.0.0.1:9/v1"}),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    let (status, _) = ada
        .post(
            "/api/providers/test",
            json!({"name": "x", "kind": "smoke-signals", "base_url": openai.base_url()}),
        )
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    // Trying saves nothing, and only the Captain and admins may try.
    let (_, providers) = ada.get("/api/providers").await?;
    let names: Vec<&str> = providers
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["mock"]);
    let (status, _) = mira
        .post(
            "/api/providers/test",
            json!({"name": "p", "kind": "openai", "base_url": openai.base_url()}),
        )
        .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);

    served.stop().await
}

/// The `model.changed` entries of a channel's lifecycle.
async fn model_changes(ada: &super::people::Person, channel: &str) -> anyhow::Result<usize> {
    let (status, story) = ada
        .get(&format!("/api/channels/{channel}/lifecycle"))
        .await?;
    assert_eq!(status, StatusCode::OK, "{story}");
    Ok(story
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "model.changed")
        .count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_the_channels_model_unchanged_records_nothing() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    openai.serve_models(&["model-a", "model-b"]);
    ada.add_mock_provider("mock", &openai.base_url(), "model-a")
        .await?;
    ada.create_channel("plan", "Plans the quarter.").await?;
    let choice = json!({"provider": "mock", "model": "model-b"});
    let (status, first) = ada.put("/api/channels/plan/model", choice.clone()).await?;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(model_changes(&ada, "plan").await?, 1);

    // The same choice again: the current policy back, and nothing recorded.
    let (status, again) = ada.put("/api/channels/plan/model", choice).await?;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["channel"], first["channel"], "{again}");
    assert_eq!(again["resolved"]["model"], "model-b");
    assert_eq!(model_changes(&ada, "plan").await?, 1, "no second change");

    // Back to the workspace's model is a change; clearing it twice is not.
    ada.put("/api/channels/plan/model", json!({"provider": null}))
        .await?;
    let (status, cleared) = ada
        .put("/api/channels/plan/model", json!({"provider": null}))
        .await?;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    assert!(cleared["channel"].is_null(), "{cleared}");
    assert_eq!(model_changes(&ada, "plan").await?, 2);
    served.stop().await
}
