//! A channel's thread list: paging back by cursor, the archived filter,
//! and search by words said in a thread.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{Api, Auth};

fn ids(body: &Value) -> Vec<i64> {
    body.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_i64())
        .collect()
}

/// Makes channel `name` (`public` or `private`) as `auth`.
async fn channel(api: &Api, auth: Auth<'_>, name: &str, visibility: &str) -> anyhow::Result<()> {
    let made = api
        .post(
            "/api/channels",
            auth,
            json!({"name": name, "purpose": "Work", "visibility": visibility}),
        )
        .await?;
    anyhow::ensure!(made.status == StatusCode::CREATED, "{made:?}");
    Ok(())
}

/// Posts `text` as a new thread of `channel`; its id.
async fn new_thread(api: &Api, auth: Auth<'_>, channel: &str, text: &str) -> anyhow::Result<i64> {
    let posted = api
        .post(
            &format!("/api/channels/{channel}/messages"),
            auth,
            json!({"text": text}),
        )
        .await?;
    anyhow::ensure!(posted.status == StatusCode::CREATED, "{posted:?}");
    posted.body["thread"]["id"]
        .as_i64()
        .ok_or_else(|| anyhow::anyhow!("no thread id in {posted:?}"))
}

#[tokio::test]
async fn threads_page_back_by_cursor_filter_and_search() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let a = Auth::Bearer(&ada);
    channel(&api, a, "log", "public").await?;
    let mut threads = Vec::new();
    for i in 0..7 {
        threads.push(new_thread(&api, a, "log", &format!("topic {i} of the week")).await?);
    }

    // Pages of three reach every thread once, newest first.
    let mut seen = Vec::new();
    let mut url = "/api/channels/log/threads?limit=3".to_string();
    loop {
        let page = api.get(&url, a).await?;
        assert_eq!(page.status, StatusCode::OK, "{page:?}");
        let Some(last) = page.body.as_array().and_then(|p| p.last()).cloned() else {
            break;
        };
        seen.extend(ids(&page.body));
        url = format!(
            "/api/channels/log/threads?limit=3&before_updated_at={}&before_id={}",
            last["updated_at"].as_str().unwrap_or_default(),
            last["id"]
        );
    }
    let newest_first: Vec<i64> = threads.iter().rev().copied().collect();
    assert_eq!(seen, newest_first);

    // A cursor is both halves or neither; a search has no cursor.
    for bad in [
        "/api/channels/log/threads?before_id=3",
        "/api/channels/log/threads?before_updated_at=2026-01-01T00:00:00Z",
        "/api/channels/log/threads?q=topic&before_id=3&before_updated_at=2026-01-01T00:00:00Z",
    ] {
        let refused = api.get(bad, a).await?;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{bad}: {refused:?}"
        );
        assert_eq!(refused.body["code"], "bad_query", "{refused:?}");
        assert!(!refused.body.to_string().contains("--"), "{refused:?}");
    }

    // Archived threads only under their filter.
    let archived = api
        .call(
            Method::PUT,
            &format!("/api/threads/{}/status", threads[2]),
            a,
            Some(json!({"status": "archived"})),
        )
        .await?;
    assert_eq!(archived.status, StatusCode::OK, "{archived:?}");
    let live = api
        .get("/api/channels/log/threads?archived=false", a)
        .await?;
    assert!(!ids(&live.body).contains(&threads[2]), "{live:?}");
    assert_eq!(ids(&live.body).len(), 6);
    let only = api
        .get("/api/channels/log/threads?archived=true", a)
        .await?;
    assert_eq!(ids(&only.body), [threads[2]]);

    // Search finds a thread by a word only in one of its messages, and says
    // which message and where.
    let reply = api
        .post(
            "/api/channels/log/messages",
            a,
            json!({"text": "the flamingo budget is settled", "thread_id": threads[4]}),
        )
        .await?;
    assert_eq!(reply.status, StatusCode::CREATED, "{reply:?}");
    let found = api.get("/api/channels/log/threads?q=flamingo", a).await?;
    assert_eq!(found.status, StatusCode::OK, "{found:?}");
    assert_eq!(ids(&found.body), [threads[4]], "{found:?}");
    let hit = &found.body[0]["matched"];
    assert_eq!(hit["in"], "message", "{hit}");
    assert_eq!(hit["message_id"], reply.body["message"]["id"], "{hit}");
    assert!(
        hit["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("flamingo budget"),
        "{hit}"
    );
    let blank = api.get("/api/channels/log/threads?q=%20", a).await?;
    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY, "{blank:?}");
    assert!(
        blank.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the search is empty"),
        "{blank:?}"
    );
    let plain = api.get("/api/channels/log/threads", a).await?;
    assert!(plain.body[0].get("matched").is_none(), "{plain:?}");
    Ok(())
}

#[tokio::test]
async fn threads_are_read_by_id_among_a_channels_own() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let a = Auth::Bearer(&ada);
    channel(&api, a, "log", "public").await?;
    channel(&api, a, "other", "public").await?;
    let first = new_thread(&api, a, "log", "first topic").await?;
    let second = new_thread(&api, a, "log", "second topic").await?;
    let elsewhere = new_thread(&api, a, "other", "not in log").await?;

    // In the order asked; another channel's thread and an id of none are left out.
    let url = format!("/api/channels/log/threads?ids={second},{elsewhere},{first},99999");
    let found = api.get(&url, a).await?;
    assert_eq!(found.status, StatusCode::OK, "{found:?}");
    assert_eq!(ids(&found.body), [second, first]);

    // A list that is not one of ids, one too long, or mixed with a search, says so.
    let many = (1..=101)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    for (query, says) in [
        ("ids=12,x".to_string(), "\"x\" is not one"),
        (format!("ids={many}"), "at most 100"),
        (format!("ids={first}&q=topic"), "leave out q"),
    ] {
        let refused = api
            .get(&format!("/api/channels/log/threads?{query}"), a)
            .await?;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{refused:?}");
        assert!(
            refused.body["message"]
                .as_str()
                .unwrap_or_default()
                .contains(says),
            "{query}: {refused:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_threads_status_changes_only_where_it_is_seen_and_its_channel_is_not_archived()
-> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let a = Auth::Bearer(&ada);
    channel(&api, a, "vault", "private").await?;
    let thread = new_thread(&api, a, "vault", "the plan").await?;
    let path = format!("/api/threads/{thread}/status");
    let status = |auth, to: &str| api.call(Method::PUT, &path, auth, Some(json!({"status": to})));

    // Someone who does not see the channel does not see the thread either.
    let (_, bob) = api.join(&ada, "bob", "member").await?;
    let hidden = status(Auth::Bearer(&bob), "archived").await?;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND, "{hidden:?}");

    // An archived channel is kept as it was.
    let archived = api
        .post("/api/channels/vault/archive", a, json!({}))
        .await?;
    assert_eq!(archived.status, StatusCode::OK, "{archived:?}");
    let refused = status(a, "resolved").await?;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{refused:?}");
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("vault is archived; restore it"),
        "{refused:?}"
    );
    let restored = api
        .post("/api/channels/vault/restore", a, json!({}))
        .await?;
    assert_eq!(restored.status, StatusCode::OK, "{restored:?}");
    let resolved = status(a, "resolved").await?;
    assert_eq!(resolved.status, StatusCode::OK, "{resolved:?}");
    Ok(())
}
