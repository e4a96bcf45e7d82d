//! What the web UI needs of the server to open a channel where a person
//! left it: unread counts and read markers (each person's own), mention
//! notifications (only to the person named), the channel feed and pages
//! read back from the newest message; the workspace's name; a provider key
//! given once and kept by the server; and every event in the log matching
//! the event schema the document publishes.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{Api, Auth, events_of};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

fn unread_in(list: &Value, channel: i64) -> (i64, i64) {
    list.as_array()
        .into_iter()
        .flatten()
        .find(|u| u["channel_id"] == channel)
        .map(|u| {
            (
                u["unread"].as_i64().unwrap_or(-1),
                u["mentions"].as_i64().unwrap_or(-1),
            )
        })
        .unwrap_or((-1, -1))
}

#[tokio::test]
async fn unread_counts_read_markers_and_mentions_belong_to_one_person() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    let created = api
        .post(
            "/api/channels",
            Auth::Bearer(&ada),
            json!({"name": "launch", "purpose": PURPOSE}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{created:?}");
    let launch = created.body["channel"]["id"].as_i64().unwrap_or_default();

    // The ready announcement is news to Bob, not to Ada... nor is Ada's own post.
    let before = api.get("/api/unread", Auth::Bearer(&bob)).await?;
    assert_eq!(before.status, StatusCode::OK);
    let (unread, mentions) = unread_in(&before.body, launch);
    assert!(unread >= 1, "{:?}", before.body);
    assert_eq!(mentions, 0);

    let posted = api
        .post(
            "/api/channels/launch/messages",
            Auth::Bearer(&ada),
            json!({"text": "@bob can you check the dates? cc @nobody"}),
        )
        .await?;
    assert_eq!(posted.status, StatusCode::CREATED, "{posted:?}");
    let message = posted.body["message"]["id"].as_i64().unwrap_or_default();
    let after = api.get("/api/unread", Auth::Bearer(&bob)).await?;
    assert_eq!(unread_in(&after.body, launch), (unread + 1, 1));
    let ada_view = api.get("/api/unread", Auth::Bearer(&ada)).await?;
    assert_eq!(
        unread_in(&ada_view.body, launch).1,
        0,
        "her own post mentions nobody she is"
    );

    // The mention reaches Bob, and only Bob: not even the Captain sees it.
    let bob_mentions = events_of(&api, &bob, "mention.created").await?;
    assert_eq!(bob_mentions.len(), 1, "{bob_mentions:?}");
    assert_eq!(bob_mentions[0]["user_id"], bob_id);
    assert_eq!(bob_mentions[0]["message"]["id"], message);
    assert!(events_of(&api, &ada, "mention.created").await?.is_empty());

    // Reading clears the count; the marker event is Bob's alone.
    let marked = api
        .call(
            Method::PUT,
            "/api/channels/launch/read",
            Auth::Bearer(&bob),
            Some(json!({"message_id": message})),
        )
        .await?;
    assert_eq!(marked.status, StatusCode::OK, "{marked:?}");
    assert_eq!(marked.body["message_id"], message);
    let cleared = api.get("/api/unread", Auth::Bearer(&bob)).await?;
    assert_eq!(unread_in(&cleared.body, launch), (0, 0));
    assert_eq!(events_of(&api, &bob, "channel.read").await?.len(), 1);
    assert!(events_of(&api, &ada, "channel.read").await?.is_empty());

    // A marker never moves back, and says where it is.
    let root = created.body["channel"]["id"].as_i64().unwrap_or_default();
    let older = api
        .get("/api/channels/launch/messages?limit=1", Auth::Bearer(&bob))
        .await?;
    let first = older.body["items"][0]["id"].as_i64().unwrap_or_default();
    let back = api
        .call(
            Method::PUT,
            "/api/channels/launch/read",
            Auth::Bearer(&bob),
            Some(json!({"message_id": first})),
        )
        .await?;
    assert_eq!(back.body["message_id"], message, "channel {root}: {back:?}");
    assert_eq!(events_of(&api, &bob, "channel.read").await?.len(), 1);

    // A message of another channel, or no message, is not a marker.
    let main_messages = api
        .get("/api/channels/main/messages?limit=1", Auth::Bearer(&ada))
        .await?;
    let elsewhere = main_messages.body["items"][0]["id"]
        .as_i64()
        .unwrap_or_default();
    for (body, status) in [
        (json!({"message_id": elsewhere}), StatusCode::NOT_FOUND),
        (json!({"message_id": 987654}), StatusCode::NOT_FOUND),
        (json!({"message_id": -3}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"message": 3}), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let reply = api
            .call(
                Method::PUT,
                "/api/channels/launch/read",
                Auth::Bearer(&bob),
                Some(body.clone()),
            )
            .await?;
        assert_eq!(reply.status, status, "{body}: {reply:?}");
    }
    Ok(())
}

#[tokio::test]
async fn a_private_channel_mentions_only_those_who_may_see_it() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, bob) = api.join(&ada, "bob", "member").await?;
    let (_, carol) = api.join(&ada, "carol", "member").await?;
    let created = api
        .post(
            "/api/channels",
            Auth::Bearer(&bob),
            json!({"name": "secret", "purpose": PURPOSE, "visibility": "private"}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{created:?}");
    let posted = api
        .post(
            "/api/channels/secret/messages",
            Auth::Bearer(&bob),
            json!({"text": "@carol you cannot see this; @ada can"}),
        )
        .await?;
    assert_eq!(posted.status, StatusCode::CREATED, "{posted:?}");
    assert!(events_of(&api, &carol, "mention.created").await?.is_empty());
    assert_eq!(events_of(&api, &ada, "mention.created").await?.len(), 1);
    let carol_unread = api.get("/api/unread", Auth::Bearer(&carol)).await?;
    let id = created.body["channel"]["id"].as_i64().unwrap_or_default();
    assert_eq!(
        unread_in(&carol_unread.body, id),
        (-1, -1),
        "not listed at all"
    );
    let reply = api
        .call(
            Method::PUT,
            "/api/channels/secret/read",
            Auth::Bearer(&carol),
            Some(json!({"message_id": posted.body["message"]["id"]})),
        )
        .await?;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn the_feed_and_backward_pages_open_a_channel_at_its_newest() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let created = api
        .post(
            "/api/channels",
            Auth::Bearer(&ada),
            json!({"name": "launch", "purpose": PURPOSE}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED);
    let mut roots = Vec::new();
    for text in ["first topic", "second topic", "third topic"] {
        let posted = api
            .post(
                "/api/channels/launch/messages",
                Auth::Bearer(&ada),
                json!({"text": text}),
            )
            .await?;
        assert_eq!(posted.status, StatusCode::CREATED, "{posted:?}");
        roots.push(posted.body.clone());
    }
    let thread = roots[0]["thread"]["id"].as_i64().unwrap_or_default();
    for text in ["a reply", "the newest reply"] {
        let reply = api
            .post(
                &format!("/api/threads/{thread}/messages"),
                Auth::Bearer(&ada),
                json!({"text": text}),
            )
            .await?;
        assert_eq!(reply.status, StatusCode::CREATED, "{reply:?}");
    }

    // The feed: the ready announcement, then each thread's root, oldest
    // first, with how far each thread has got.
    let feed = api
        .get("/api/channels/launch/feed", Auth::Bearer(&ada))
        .await?;
    assert_eq!(feed.status, StatusCode::OK, "{feed:?}");
    let items = feed.body["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 4, "{items:?}");
    assert!(
        items[0]["thread"].is_null(),
        "the announcement stands alone"
    );
    assert_eq!(items[1]["message"]["content"], "first topic");
    assert_eq!(items[1]["thread"]["id"], thread);
    assert_eq!(items[1]["replies"], 2);
    assert_eq!(items[1]["latest_reply"]["content"], "the newest reply");
    assert_eq!(items[3]["message"]["content"], "third topic");
    assert_eq!(items[3]["replies"], 0);
    assert!(feed.body.get("next_before").is_none());

    // Paged back two at a time.
    let newest = api
        .get("/api/channels/launch/feed?limit=2", Auth::Bearer(&ada))
        .await?;
    let page: Vec<&str> = newest.body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["message"]["content"].as_str())
        .collect();
    assert_eq!(page, ["second topic", "third topic"]);
    let cursor = newest.body["next_before"].as_i64().unwrap_or_default();
    let older = api
        .get(
            &format!("/api/channels/launch/feed?limit=2&before={cursor}"),
            Auth::Bearer(&ada),
        )
        .await?;
    assert_eq!(older.body["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(older.body["items"][1]["message"]["content"], "first topic");

    // A thread read from its newest message back.
    let path = format!("/api/threads/{thread}/messages?newest=true&limit=2");
    let tail = api.get(&path, Auth::Bearer(&ada)).await?;
    assert_eq!(tail.status, StatusCode::OK, "{tail:?}");
    assert_eq!(tail.body["items"][0]["content"], "a reply");
    assert_eq!(tail.body["items"][1]["content"], "the newest reply");
    let cursor = tail.body["next_before"].as_i64().unwrap_or_default();
    let head = api
        .get(
            &format!("/api/threads/{thread}/messages?before={cursor}"),
            Auth::Bearer(&ada),
        )
        .await?;
    assert_eq!(head.body["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(head.body["items"][0]["content"], "first topic");
    assert!(head.body.get("next_before").is_none());
    for bad in ["?before=0", "?before=3&after=1", "?newest=true&after=2"] {
        let reply = api
            .get(
                &format!("/api/threads/{thread}/messages{bad}"),
                Auth::Bearer(&ada),
            )
            .await?;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{bad}: {reply:?}");
    }
    let reply = api
        .get("/api/channels/launch/feed?before=-1", Auth::Bearer(&ada))
        .await?;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    Ok(())
}

#[tokio::test]
async fn the_captain_names_the_workspace_and_everyone_hears_it() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, bob) = api.join(&ada, "bob", "member").await?;
    let body = json!({"name": "  Acme Launch HQ "});
    let refused = api
        .call(
            Method::PATCH,
            "/api/workspace",
            Auth::Bearer(&bob),
            Some(body.clone()),
        )
        .await?;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let renamed = api
        .call(
            Method::PATCH,
            "/api/workspace",
            Auth::Bearer(&ada),
            Some(body),
        )
        .await?;
    assert_eq!(renamed.status, StatusCode::OK, "{renamed:?}");
    assert_eq!(renamed.body["name"], "Acme Launch HQ");
    let setup = api.get("/api/setup", Auth::None).await?;
    assert_eq!(setup.body["workspace"], "Acme Launch HQ");
    let status = api.get("/api/status", Auth::Bearer(&bob)).await?;
    assert_eq!(status.body["workspace"]["name"], "Acme Launch HQ");
    let heard = events_of(&api, &bob, "workspace.updated").await?;
    assert_eq!(heard.len(), 1);
    assert_eq!(heard[0]["workspace"]["name"], "Acme Launch HQ");
    for bad in [
        json!({"name": "  "}),
        json!({"name": "a\nb"}),
        json!({"name": "x".repeat(65)}),
    ] {
        let reply = api
            .call(
                Method::PATCH,
                "/api/workspace",
                Auth::Bearer(&ada),
                Some(bad.clone()),
            )
            .await?;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {reply:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_provider_key_given_once_is_kept_by_the_server_and_never_shown() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    api.t.helm.start_runtime().await?;
    let openai = helm_tests::mock::MockOpenAi::start().await?;
    let secret = "sk-helm-test-0123456789";
    let both = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "api_key": secret, "api_key_env": "OPENAI_API_KEY"}),
        )
        .await?;
    assert_eq!(both.status, StatusCode::UNPROCESSABLE_ENTITY, "{both:?}");
    let added = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "api_key": secret, "default_model": "mock-model", "make_default": true}),
        )
        .await?;
    assert_eq!(added.status, StatusCode::CREATED, "{added:?}");
    assert_eq!(added.body["api_key"], "stored:mock");
    let listed = api.get("/api/providers", Auth::Bearer(&ada)).await?;
    assert!(!listed.body.to_string().contains(secret));
    let file = api.t.data_dir().join("secrets/provider-mock.key");
    assert_eq!(std::fs::read_to_string(&file)?, secret);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file)?.permissions().mode() & 0o777,
            0o600
        );
    }

    // A turn sends it to the provider.
    openai.push(helm_tests::mock::Behaviour::text("Ready."));
    let posted = api
        .post(
            "/api/channels/main/messages",
            Auth::Bearer(&ada),
            json!({"text": "@skipper hello"}),
        )
        .await?;
    assert_eq!(posted.status, StatusCode::CREATED, "{posted:?}");
    let requests = openai
        .wait_for_requests(1, std::time::Duration::from_secs(20))
        .await?;
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {secret}").as_str())
    );
    // The same name again is a conflict, and leaves the provider and its
    // key as they were; a replacement refused for its model stores no key.
    let again = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "mock", "kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                   "api_key": "sk-another-key"}),
        )
        .await?;
    assert_eq!(again.status, StatusCode::CONFLICT, "{again:?}");
    assert!(
        again.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("a provider named mock")
    );
    let refused = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "api_key": "sk-another-key", "default_model": "no-such-model", "replace": true}),
        )
        .await?;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{refused:?}"
    );
    assert_eq!(std::fs::read_to_string(&file)?, secret);
    let listed = api.get("/api/providers", Auth::Bearer(&ada)).await?;
    assert_eq!(listed.body[0]["base_url"], openai.base_url());
    let replaced = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "api_key": "sk-another-key", "default_model": "mock-model", "replace": true}),
        )
        .await?;
    assert_eq!(replaced.status, StatusCode::CREATED, "{replaced:?}");
    assert_eq!(std::fs::read_to_string(&file)?, "sk-another-key");

    for bad in ["", "two\nlines"] {
        let reply = api
            .post(
                "/api/providers",
                Auth::Bearer(&ada),
                json!({"name": "mock2", "kind": "openai", "base_url": openai.base_url(), "api_key": bad}),
            )
            .await?;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad:?}: {reply:?}"
        );
    }
    Ok(())
}

/// The schema of one event type in the published document.
fn documented(document: &Value, kind: &str) -> Option<Value> {
    document["components"]["schemas"]["Event"]["oneOf"]
        .as_array()?
        .iter()
        .find(|v| v["properties"]["type"]["enum"][0] == kind)
        .cloned()
}

#[tokio::test]
async fn every_event_in_a_journey_is_documented() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    api.post(
        "/api/channels",
        Auth::Bearer(&ada),
        json!({"name": "launch", "purpose": PURPOSE}),
    )
    .await?;
    api.post(
        "/api/channels/launch/members",
        Auth::Bearer(&ada),
        json!({"user_id": bob_id}),
    )
    .await?;
    let posted = api
        .post(
            "/api/channels/launch/messages",
            Auth::Bearer(&bob),
            json!({"text": "@ada look"}),
        )
        .await?;
    api.call(
        Method::PUT,
        "/api/channels/launch/read",
        Auth::Bearer(&ada),
        Some(json!({"message_id": posted.body["message"]["id"]})),
    )
    .await?;
    api.post(
        "/api/channels/launch/memory",
        Auth::Bearer(&ada),
        json!({"kind": "decision", "content": "We launch on the 12th."}),
    )
    .await?;
    api.call(
        Method::PUT,
        "/api/channels/launch/files",
        Auth::Bearer(&bob),
        Some(json!({"path": "notes/plan.md", "content": "v1\n"})),
    )
    .await?;
    api.post(
        "/api/channels/launch/files/move",
        Auth::Bearer(&bob),
        json!({"from": "notes/plan.md", "to": "notes/plan-2.md"}),
    )
    .await?;
    api.call(
        Method::PATCH,
        "/api/workspace",
        Auth::Bearer(&ada),
        Some(json!({"name": "Acme"})),
    )
    .await?;
    api.call(
        Method::PATCH,
        "/api/channels/launch",
        Auth::Bearer(&ada),
        Some(json!({"name": "liftoff"})),
    )
    .await?;
    api.post(
        "/api/channels/liftoff/archive",
        Auth::Bearer(&ada),
        json!({}),
    )
    .await?;
    api.post(
        "/api/channels/liftoff/restore",
        Auth::Bearer(&ada),
        json!({}),
    )
    .await?;

    let document: Value = serde_json::from_str(&helm_http::openapi_json())?;
    let log = api
        .get("/api/events/log?after=0&limit=1000", Auth::Bearer(&ada))
        .await?;
    let events = log.body["items"].as_array().cloned().unwrap_or_default();
    assert!(events.len() > 10, "{events:?}");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "file.changed" && e["from"].is_string()),
        "a move is announced: {events:?}"
    );
    for event in &events {
        let kind = event["type"].as_str().unwrap_or_default();
        let schema = documented(&document, kind)
            .ok_or_else(|| anyhow::anyhow!("event type {kind} is not in the document"))?;
        for field in schema["required"].as_array().into_iter().flatten() {
            let field = field.as_str().unwrap_or_default();
            assert!(event.get(field).is_some(), "{kind} lacks {field}: {event}");
        }
        for name in event.as_object().into_iter().flatten().map(|(k, _)| k) {
            assert!(
                schema["properties"].get(name).is_some(),
                "{kind} has {name}, which the document does not describe: {event}"
            );
        }
    }
    Ok(())
}
