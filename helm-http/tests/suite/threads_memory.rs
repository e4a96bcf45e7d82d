//! Renaming a thread (anyone who may post in its channel; a checked title;
//! an archived channel refuses) and changing memory: editing, pinning and
//! forgetting (attributed) are allowed to the record's author and the
//! channel's managers; forgetting is undone by restoring.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{Api, Auth, Reply, events_of};

/// Edits memory record `id` as the holder of `auth`.
async fn edit(api: &Api, auth: Auth<'_>, id: i64, content: &str) -> anyhow::Result<Reply> {
    api.call(
        Method::PATCH,
        &format!("/api/memory/{id}"),
        auth,
        Some(json!({ "content": content })),
    )
    .await
}

async fn rename(api: &Api, token: &str, thread: i64, title: &str) -> anyhow::Result<Reply> {
    api.call(
        Method::PATCH,
        &format!("/api/threads/{thread}"),
        Auth::Bearer(token),
        Some(json!({ "title": title })),
    )
    .await
}

#[tokio::test]
async fn a_thread_is_renamed_by_whoever_may_post_in_it() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, nol) = api.join(&ada, "nol", "member").await?;
    let a = Auth::Bearer(&ada);
    for (name, visibility) in [("launch", "public"), ("vault", "private")] {
        let made = api
            .post(
                "/api/channels",
                a,
                json!({"name": name, "purpose": "Work", "visibility": visibility}),
            )
            .await?;
        assert_eq!(made.status, StatusCode::CREATED, "{made:?}");
    }
    let posted = api
        .post(
            "/api/channels/launch/messages",
            a,
            json!({"text": "what do we still need for the launch"}),
        )
        .await?;
    assert_eq!(posted.status, StatusCode::CREATED, "{posted:?}");
    let thread = posted.body["thread"]["id"].as_i64().unwrap_or_default();

    // A member who did not open it renames it; the title is trimmed.
    let renamed = rename(&api, &nol, thread, "  Launch checklist  ").await?;
    assert_eq!(renamed.status, StatusCode::OK, "{renamed:?}");
    assert_eq!(renamed.body["title"], "Launch checklist");
    assert_eq!(renamed.body["id"], thread);
    let shown = api.get(&format!("/api/threads/{thread}"), a).await?;
    assert_eq!(shown.body["thread"]["title"], "Launch checklist");
    let listed = api.get("/api/channels/launch/threads", a).await?;
    assert_eq!(listed.body[0]["title"], "Launch checklist");
    let updates = events_of(&api, &ada, "thread.updated").await?;
    assert!(
        updates
            .iter()
            .any(|e| e["thread"]["id"] == thread && e["thread"]["title"] == "Launch checklist"),
        "{updates:?}"
    );

    // Titles that cannot be: each a 422 saying what to do, in no other
    // frontend's words.
    let long = "x".repeat(201);
    for bad in ["   ", "Two\nlines", long.as_str()] {
        let refused = rename(&api, &nol, thread, bad).await?;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{refused:?}"
        );
        let message = refused.body["message"].as_str().unwrap_or_default();
        assert!(message.contains("thread title"), "{message}");
        assert!(!message.contains("--"), "{message}");
    }
    let most = "y".repeat(200);
    assert_eq!(
        rename(&api, &nol, thread, &most).await?.status,
        StatusCode::OK
    );

    // A thread she cannot see does not exist for her, nor does one that is not.
    let hidden = api
        .post(
            "/api/channels/vault/messages",
            a,
            json!({"text": "the vault's own thread"}),
        )
        .await?;
    let hidden = hidden.body["thread"]["id"].as_i64().unwrap_or_default();
    let unseen = rename(&api, &nol, hidden, "Peeked").await?;
    assert_eq!(unseen.status, StatusCode::NOT_FOUND, "{unseen:?}");
    assert!(
        !events_of(&api, &nol, "thread.updated")
            .await?
            .iter()
            .any(|e| e["thread"]["id"] == hidden),
        "no event of the vault reaches her"
    );
    assert_eq!(
        rename(&api, &ada, 999_999, "Nothing").await?.status,
        StatusCode::NOT_FOUND
    );

    // An archived channel refuses, as it refuses posts.
    let archived = api
        .post("/api/channels/launch/archive", a, json!({}))
        .await?;
    assert_eq!(archived.status, StatusCode::OK, "{archived:?}");
    let refused = rename(&api, &ada, thread, "After the archive").await?;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{refused:?}");
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("archived"),
        "{refused:?}"
    );
    let shown = api.get(&format!("/api/threads/{thread}"), a).await?;
    assert_eq!(shown.body["thread"]["title"], most.as_str());
    Ok(())
}

#[tokio::test]
async fn forgetting_is_attributed_limited_and_undone() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, nol) = api.join(&ada, "nol", "member").await?;
    let (_, mira) = api.join(&ada, "mira", "member").await?;
    let a = Auth::Bearer(&ada);
    let n = Auth::Bearer(&nol);
    api.post(
        "/api/channels",
        a,
        json!({"name": "launch", "purpose": "The launch"}),
    )
    .await?;
    let decision = api
        .post(
            "/api/channels/launch/memory",
            a,
            json!({"kind": "decision", "content": "We launch on Friday."}),
        )
        .await?;
    let decision = decision.body["id"].as_i64().unwrap_or_default();
    let fact = api
        .post(
            "/api/channels/launch/memory",
            n,
            json!({"kind": "fact", "content": "The press kit is in the shared drive."}),
        )
        .await?;
    let fact = fact.body["id"].as_i64().unwrap_or_default();

    // A member may not forget the Captain's decision, and is told who may.
    let denied = api
        .post(&format!("/api/memory/{decision}/forget"), n, json!({}))
        .await?;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{denied:?}");
    let message = denied.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ada") && message.contains("owner"),
        "{message}"
    );
    let still = api.get("/api/channels/launch/memory", a).await?;
    assert!(
        still
            .body
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["id"] == decision),
        "still current: {still:?}"
    );

    // Her own record she forgets, and it says so.
    let own = api
        .post(&format!("/api/memory/{fact}/forget"), n, json!({}))
        .await?;
    assert_eq!(own.status, StatusCode::OK, "{own:?}");
    assert_eq!(own.body["status"], "forgotten");
    assert_eq!(own.body["forgotten_by"], "nol");
    assert!(own.body["forgotten_at"].is_string(), "{own:?}");

    // The Captain forgets her own decision; another member may not bring
    // it back; the Captain does, and it is current again.
    let forgotten = api
        .post(&format!("/api/memory/{decision}/forget"), a, json!({}))
        .await?;
    assert_eq!(forgotten.body["forgotten_by"], "ada", "{forgotten:?}");
    let denied = api
        .post(
            &format!("/api/memory/{decision}/restore"),
            Auth::Bearer(&mira),
            json!({}),
        )
        .await?;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{denied:?}");
    let restored = api
        .post(&format!("/api/memory/{decision}/restore"), a, json!({}))
        .await?;
    assert_eq!(restored.status, StatusCode::OK, "{restored:?}");
    assert_eq!(restored.body["status"], "current");
    assert_eq!(restored.body["forgotten_by"], Value::Null);
    assert_eq!(restored.body["forgotten_at"], Value::Null);
    let again = api
        .post(&format!("/api/memory/{decision}/restore"), a, json!({}))
        .await?;
    assert_eq!(again.status, StatusCode::CONFLICT, "{again:?}");

    // The channel's managers restore anyone's record.
    let back = api
        .post(&format!("/api/memory/{fact}/restore"), a, json!({}))
        .await?;
    assert_eq!(back.status, StatusCode::OK, "{back:?}");
    let hits = api
        .get("/api/channels/launch/recall?q=press%20kit&limit=5", a)
        .await?;
    assert!(
        hits.body
            .as_array()
            .into_iter()
            .flatten()
            .any(|h| h["id"] == fact && h["kind"] == "fact"),
        "recalled again: {hits:?}"
    );
    assert_eq!(
        api.post("/api/memory/999999/restore", a, json!({}))
            .await?
            .status,
        StatusCode::NOT_FOUND
    );
    let changes = events_of(&api, &ada, "memory.changed").await?;
    let statuses: Vec<&Value> = changes
        .iter()
        .filter(|e| e["item"]["id"] == decision)
        .map(|e| &e["item"]["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!("current"), &json!("forgotten"), &json!("current")],
        "{changes:?}"
    );
    Ok(())
}

#[tokio::test]
async fn only_the_author_or_a_manager_edits_and_pins_a_record() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, nol) = api.join(&ada, "nol", "member").await?;
    let (_, mira) = api.join(&ada, "mira", "member").await?;
    let (a, n, m) = (Auth::Bearer(&ada), Auth::Bearer(&nol), Auth::Bearer(&mira));
    api.post(
        "/api/channels",
        a,
        json!({"name": "launch", "purpose": "The launch"}),
    )
    .await?;
    let fact = api
        .post(
            "/api/channels/launch/memory",
            m,
            json!({"kind": "fact", "content": "The venue seats 300."}),
        )
        .await?;
    let fact = fact.body["id"].as_i64().unwrap_or_default();
    // Another member may not edit, pin or unpin mira's fact; each refusal
    // says who may.
    let denied = edit(&api, n, fact, "The venue seats 30.").await?;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{denied:?}");
    assert_eq!(denied.body["code"], "forbidden");
    let message = denied.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("its author (mira)")
            && message.contains("the Captain")
            && message.contains("may edit"),
        "{message}"
    );
    for verb in ["pin", "unpin"] {
        let denied = api
            .post(&format!("/api/memory/{fact}/{verb}"), n, json!({}))
            .await?;
        assert_eq!(denied.status, StatusCode::FORBIDDEN, "{verb}: {denied:?}");
        assert_eq!(denied.body["code"], "forbidden");
        let message = denied.body["message"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("may {verb}")), "{message}");
    }
    let listed = api.get("/api/channels/launch/memory", a).await?;
    assert_eq!(listed.body[0]["content"], "The venue seats 300.");
    assert_eq!(listed.body[0]["pinned"], false);

    // Its author pins and edits it; the Captain edits the edit.
    let pinned = api
        .post(&format!("/api/memory/{fact}/pin"), m, json!({}))
        .await?;
    assert_eq!(pinned.status, StatusCode::OK, "{pinned:?}");
    let edited = edit(&api, m, fact, "The venue seats 320.").await?;
    assert_eq!(edited.status, StatusCode::OK, "{edited:?}");
    let edited = edited.body["id"].as_i64().unwrap_or_default();
    let captains = edit(&api, a, edited, "The venue seats 350.").await?;
    assert_eq!(captains.status, StatusCode::OK, "{captains:?}");
    assert_eq!(captains.body["author_name"], "ada");
    assert_eq!(captains.body["pinned"], true);
    Ok(())
}
