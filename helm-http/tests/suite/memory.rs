//! Memory over HTTP: add, list, edit (supersede), forget, pin, recall with
//! provenance, imports (line numbers for bad lines, a size limit), a summary
//! without a model; and a private channel's memory and its events reach no
//! outsider.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use super::kit::{Api, Auth};

#[tokio::test]
async fn memory_is_kept_recalled_imported_and_private() -> anyhow::Result<()> {
    let api = Api::with_config(|c| c.max_import_bytes = 4096).await?;
    let ada = api.setup().await?;
    let (_, nol) = api.join(&ada, "nol", "member").await?;
    let a = Auth::Bearer(&ada);
    api.post(
        "/api/channels",
        a,
        json!({"name": "launch", "purpose": "The launch"}),
    )
    .await?;
    api.post(
        "/api/channels",
        a,
        json!({"name": "vault", "purpose": "Secrets", "visibility": "private"}),
    )
    .await?;

    let added = api
        .post(
            "/api/channels/launch/memory",
            a,
            json!({"kind": "decision", "content": "The beta ships on the third of May"}),
        )
        .await?;
    assert_eq!(added.status, StatusCode::CREATED, "{added:?}");
    let id = added.body["id"].as_i64().unwrap_or_default();
    assert_eq!(added.body["author_name"], "ada");
    let edited = api
        .call(
            Method::PATCH,
            &format!("/api/memory/{id}"),
            a,
            Some(json!({"content": "The beta ships on the fifth of May"})),
        )
        .await?;
    assert_eq!(edited.status, StatusCode::OK);
    let new_id = edited.body["id"].as_i64().unwrap_or_default();
    assert_ne!(new_id, id);
    let all = api.get("/api/channels/launch/memory?all=true", a).await?;
    let old = all
        .body
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["id"] == id)
        .cloned();
    assert_eq!(
        old.as_ref().map(|m| m["status"].clone()),
        Some(json!("superseded"))
    );
    assert_eq!(old.map(|m| m["superseded_by"].clone()), Some(json!(new_id)));
    let pinned = api
        .post(&format!("/api/memory/{new_id}/pin"), a, json!({}))
        .await?;
    assert_eq!(pinned.body["pinned"], true);
    let pin_old = api
        .post(&format!("/api/memory/{id}/pin"), a, json!({}))
        .await?;
    assert_eq!(
        pin_old.status,
        StatusCode::CONFLICT,
        "only current records are pinned"
    );

    let hits = api
        .get(
            "/api/channels/launch/recall?q=when%20does%20the%20beta%20ship&limit=5",
            a,
        )
        .await?;
    assert_eq!(hits.status, StatusCode::OK);
    let top = &hits.body[0];
    assert_eq!(top["kind"], "decision");
    assert_eq!(top["id"], new_id);
    assert!(
        top["content"]
            .as_str()
            .unwrap_or_default()
            .contains("fifth")
    );
    for field in [
        "score",
        "thread",
        "author",
        "created",
        "source_message_ids",
        "source_external_ids",
    ] {
        assert!(top.get(field).is_some(), "{field} in {top}");
    }
    let superseded = api
        .get(
            "/api/channels/launch/recall?q=third%20of%20May&superseded=true",
            a,
        )
        .await?;
    assert!(superseded.body.to_string().contains("third of May"));
    let forgotten = api
        .post(&format!("/api/memory/{new_id}/forget"), a, json!({}))
        .await?;
    assert_eq!(forgotten.body["status"], "forgotten");
    let hits = api
        .get("/api/channels/launch/recall?q=beta%20ship", a)
        .await?;
    assert!(
        !hits.body.to_string().contains("fifth of May"),
        "forgotten is never recalled"
    );

    // Imports: JSON Lines, refused whole with line numbers, or written.
    let import = |body: &str| {
        Request::builder()
            .method(Method::POST)
            .uri("/api/channels/launch/import")
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {ada}"))
            .header(header::CONTENT_TYPE, "application/x-ndjson")
            .body(Body::from(body.to_string()))
    };
    let bad = api
        .send(import(
            "{\"type\":\"thread\",\"id\":\"s1\"}\nnot json\n{\"type\":\"message\",\"thread\":\"s9\",\"external_id\":\"m1\",\"author\":\"Cy\",\"text\":\"hi\"}\n",
        )?)
        .await?;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let message = bad.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("line 2") && message.contains("line 3"),
        "{message}"
    );
    let good = api
        .send(import(
            "{\"type\":\"thread\",\"id\":\"s1\",\"title\":\"Kickoff\"}\n{\"type\":\"message\",\"thread\":\"s1\",\"external_id\":\"D1:1\",\"author\":\"Cy\",\"text\":\"We picked the harbour venue.\"}\n",
        )?)
        .await?;
    assert_eq!(good.status, StatusCode::CREATED, "{good:?}");
    assert_eq!(
        good.body,
        json!({"threads": 1, "messages": 1, "memories": 0})
    );
    let hits = api
        .get("/api/channels/launch/recall?q=harbour%20venue", a)
        .await?;
    assert_eq!(hits.body[0]["source_external_ids"], json!(["D1:1"]));
    assert_eq!(
        hits.body[0]["thread"]["title"], "Kickoff",
        "{:?}",
        hits.body
    );
    let huge = api.send(import(&"x".repeat(8192))?).await?;
    assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE);

    // No model: the summary cannot be written, and says why.
    let thread = hits.body[0]["thread"]["id"].as_i64().unwrap_or_default();
    let summary = api
        .post(&format!("/api/threads/{thread}/summary"), a, json!({}))
        .await?;
    assert_eq!(summary.status, StatusCode::BAD_GATEWAY);
    assert_eq!(summary.body["code"], "provider");

    // A private channel's memory, even shared with the workspace, and its
    // events reach no outsider.
    const SECRET: &str = "the safe code is 7f3a";
    let private = api
        .post(
            "/api/channels/vault/memory",
            a,
            json!({"kind": "fact", "content": SECRET, "scope": "workspace"}),
        )
        .await?;
    assert_eq!(private.status, StatusCode::CREATED);
    let n = Auth::Bearer(&nol);
    assert_eq!(
        api.get("/api/channels/vault/memory", n).await?.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        api.get("/api/channels/vault/recall?q=safe%20code", n)
            .await?
            .status,
        StatusCode::NOT_FOUND
    );
    let from_public = api
        .get("/api/channels/launch/recall?q=safe%20code", n)
        .await?;
    assert!(
        !from_public.body.to_string().contains("7f3a"),
        "{:?}",
        from_public.body
    );
    let captain_sees = api
        .get("/api/channels/launch/recall?q=safe%20code", a)
        .await?;
    assert!(
        captain_sees.body.to_string().contains("7f3a"),
        "shared with the workspace"
    );
    let pid = private.body["id"].as_i64().unwrap_or_default();
    let poke = api
        .post(&format!("/api/memory/{pid}/forget"), n, json!({}))
        .await?;
    assert_eq!(poke.status, StatusCode::NOT_FOUND);
    let log = api.get("/api/events/log", n).await?;
    let text = log.body.to_string();
    assert!(
        text.contains("memory.changed"),
        "public memory events reach everyone"
    );
    assert!(text.contains("history.imported"));
    assert!(!text.contains("7f3a"), "private memory events do not");
    Ok(())
}

#[tokio::test]
async fn memory_and_activity_page_back_with_before() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let a = Auth::Bearer(&ada);
    for name in ["launch", "ops"] {
        api.post("/api/channels", a, json!({"name": name, "purpose": "Work"}))
            .await?;
    }
    let mut ids = Vec::new();
    for n in 1..=3 {
        let added = api
            .post(
                "/api/channels/launch/memory",
                a,
                json!({"kind": "fact", "content": format!("Fact {n}")}),
            )
            .await?;
        ids.push(added.body["id"].as_i64().unwrap_or_default());
    }
    let listed = |reply: &super::kit::Reply| -> Vec<i64> {
        reply
            .body
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["id"].as_i64())
            .collect()
    };
    let first = api.get("/api/channels/launch/memory?limit=2", a).await?;
    assert_eq!(listed(&first), [ids[2], ids[1]], "{first:?}");
    let next = api
        .get(
            &format!("/api/channels/launch/memory?limit=2&before={}", ids[1]),
            a,
        )
        .await?;
    assert_eq!(next.status, StatusCode::OK, "{next:?}");
    assert_eq!(listed(&next), [ids[0]], "{next:?}");

    // A place that is no id is a bad query; another channel's record, invalid.
    for bad in ["0", "-4", "last"] {
        let reply = api
            .get(&format!("/api/channels/launch/memory?before={bad}"), a)
            .await?;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{bad}: {reply:?}");
        assert!(!reply.body.to_string().contains("--"), "{reply:?}");
    }
    let theirs = api
        .post(
            "/api/channels/ops/memory",
            a,
            json!({"kind": "fact", "content": "Ops keeps the pager"}),
        )
        .await?;
    let theirs = theirs.body["id"].as_i64().unwrap_or_default();
    let wrong = api
        .get(&format!("/api/channels/launch/memory?before={theirs}"), a)
        .await?;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY, "{wrong:?}");
    assert!(
        wrong.body.to_string().contains("is not in #launch"),
        "{wrong:?}"
    );

    // A record beyond the pages read is read by itself; an outsider's
    // channel's record is not found.
    let one = api.get(&format!("/api/memory/{}", ids[0]), a).await?;
    assert_eq!(one.status, StatusCode::OK, "{one:?}");
    assert_eq!(one.body["content"], "Fact 1");
    let missing = api.get("/api/memory/9999", a).await?;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{missing:?}");

    // The tool journal pages back the same way (nothing older than 1).
    let none = api.get("/api/channels/launch/activity?before=1", a).await?;
    assert_eq!(none.status, StatusCode::OK, "{none:?}");
    assert_eq!(none.body, json!([]));
    let bad = api.get("/api/channels/launch/activity?before=0", a).await?;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{bad:?}");
    Ok(())
}
