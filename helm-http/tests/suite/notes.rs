//! New files that never replace another: `POST /api/channels/{channel}/notes`
//! (the web UI's Quick Note, a Markdown file under `/workspace/notes`) and
//! `PUT /api/channels/{channel}/files` with `create`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{Api, Auth, Reply};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

/// A server with its Captain, Ada, and her channel #launch: where every
/// test here starts. Returns Ada's token.
async fn launch() -> anyhow::Result<(Api, String)> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let created = api
        .post(
            "/api/channels",
            Auth::Bearer(&ada),
            json!({"name": "launch", "purpose": PURPOSE}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{created:?}");
    Ok((api, ada))
}

/// `PUT /api/channels/launch/files` with `body`, as `token`.
async fn put_file(api: &Api, token: &str, body: Value) -> anyhow::Result<Reply> {
    let path = "/api/channels/launch/files";
    api.call(Method::PUT, path, Auth::Bearer(token), Some(body))
        .await
}

#[tokio::test]
async fn a_quick_note_is_a_new_file_in_the_channels_notes() -> anyhow::Result<()> {
    let (api, ada) = launch().await?;

    let note = json!({"title": "Press list", "text": "- Dana at Wired\n- Lee"});
    let first = api
        .post(
            "/api/channels/launch/notes",
            Auth::Bearer(&ada),
            note.clone(),
        )
        .await?;
    assert_eq!(first.status, StatusCode::CREATED, "{first:?}");
    let path = first.body["path"].as_str().unwrap_or_default().to_string();
    assert!(
        path.starts_with("/workspace/notes/20") && path.ends_with("-press-list.md"),
        "{path}"
    );
    assert_eq!(first.body["kind"], "file");

    // The same title again is a second file; the first is untouched.
    let second = api
        .post("/api/channels/launch/notes", Auth::Bearer(&ada), note)
        .await?;
    assert_eq!(second.status, StatusCode::CREATED, "{second:?}");
    let second_path = second.body["path"].as_str().unwrap_or_default();
    assert_eq!(second_path, path.replace(".md", "-2.md"));
    let read = api
        .get(
            &format!("/api/channels/launch/files/read?path={path}"),
            Auth::Bearer(&ada),
        )
        .await?;
    assert_eq!(
        read.body["content"],
        "# Press list\n\n- Dana at Wired\n- Lee\n"
    );

    // The note is one of the channel's artifacts, made by Ada.
    let artifacts = api
        .get("/api/channels/launch/artifacts", Auth::Bearer(&ada))
        .await?;
    let listed = artifacts.body.as_array().cloned().unwrap_or_default();
    assert!(
        listed
            .iter()
            .any(|a| a["path"] == path.as_str() && a["created_by"] == "ada"),
        "{listed:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_bad_note_says_what_to_change_and_saves_nothing() -> anyhow::Result<()> {
    let (api, ada) = launch().await?;
    let (_, bob) = api.join(&ada, "bob", "member").await?;
    api.post(
        "/api/channels",
        Auth::Bearer(&ada),
        json!({"name": "payroll", "purpose": "Salaries", "visibility": "private"}),
    )
    .await?;

    let cases = [
        (
            json!({"text": "  \n"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "text",
            "empty",
        ),
        (
            json!({"title": "a\nb", "text": "x"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "title",
            "one line",
        ),
        (
            json!({"text": "x", "folder": "docs"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "folder",
            "folder",
        ),
    ];
    for (body, status, code_field, words) in cases {
        let reply = api
            .post("/api/channels/launch/notes", Auth::Bearer(&ada), body)
            .await?;
        assert_eq!(reply.status, status, "{reply:?}");
        let message = reply.body["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(code_field) && message.contains(words),
            "{reply:?}"
        );
        assert!(!message.contains("--"), "{message}");
    }
    let listed = api
        .get(
            "/api/channels/launch/files?path=/workspace",
            Auth::Bearer(&ada),
        )
        .await?;
    assert_eq!(listed.body, json!([]), "nothing was written: {listed:?}");

    // Bob cannot write in a private channel he does not belong to.
    let hidden = api
        .post(
            "/api/channels/payroll/notes",
            Auth::Bearer(&bob),
            json!({"text": "peek"}),
        )
        .await?;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND, "{hidden:?}");

    // An archived channel keeps its workspace as it was.
    let archived = api
        .post(
            "/api/channels/launch/archive",
            Auth::Bearer(&ada),
            json!({}),
        )
        .await?;
    assert_eq!(archived.status, StatusCode::OK, "{archived:?}");
    let refused = api
        .call(
            Method::POST,
            "/api/channels/launch/notes",
            Auth::Bearer(&ada),
            Some(json!({"text": "too late"})),
        )
        .await?;
    assert!(refused.status.is_client_error(), "{refused:?}");
    let message = refused.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("archived"), "{refused:?}");
    Ok(())
}

#[tokio::test]
async fn a_create_only_write_makes_a_new_file_and_never_replaces_one() -> anyhow::Result<()> {
    let (api, ada) = launch().await?;
    let put = |body| put_file(&api, &ada, body);

    let made =
        put(json!({"path": "docs/brief.md", "content": "# Brief\n", "create": true})).await?;
    assert_eq!(made.status, StatusCode::CREATED, "{made:?}");
    assert_eq!(made.body["path"], "/workspace/docs/brief.md");

    let taken =
        put(json!({"path": "/workspace/docs/brief.md", "content": "mine", "create": true})).await?;
    assert_eq!(taken.status, StatusCode::CONFLICT, "{taken:?}");
    let message = taken.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("/workspace/docs/brief.md already exists"),
        "{taken:?}"
    );

    // A plain write still replaces, and answers 200.
    let replaced = put(json!({"path": "docs/brief.md", "content": "v2\n"})).await?;
    assert_eq!(replaced.status, StatusCode::OK, "{replaced:?}");
    let read = api
        .get(
            "/api/channels/launch/files/read?path=docs/brief.md",
            Auth::Bearer(&ada),
        )
        .await?;
    assert_eq!(read.body["content"], "v2\n");
    let listed = api
        .get("/api/channels/launch/files?path=docs", Auth::Bearer(&ada))
        .await?;
    assert_eq!(
        listed.body.as_array().map(Vec::len),
        Some(1),
        "no draft left: {listed:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_save_over_what_was_opened_is_refused_when_someone_saved_meanwhile() -> anyhow::Result<()>
{
    let (api, ada) = launch().await?;
    let put = |body| put_file(&api, &ada, body);
    let read = || {
        api.get(
            "/api/channels/launch/files/read?path=notes/retro.md",
            Auth::Bearer(&ada),
        )
    };
    put(json!({"path": "notes/retro.md", "content": "- one\n"})).await?;

    // Ada and Bob open the same version.
    let opened = read().await?;
    let base = opened.body["version"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(base.len(), 24, "{opened:?}");
    // Bob saves first, over what he opened: fine, and he is told the new version.
    let bob =
        put(json!({"path": "notes/retro.md", "content": "- one\n- BOB\n", "base_version": base}))
            .await?;
    assert_eq!(bob.status, StatusCode::OK, "{bob:?}");
    let bobs = bob.body["version"].as_str().unwrap_or_default().to_string();
    assert_eq!(read().await?.body["version"], bobs.as_str());
    // Ada saves over the version she opened: refused, Bob's line kept.
    let ada_save =
        put(json!({"path": "notes/retro.md", "content": "- one\n- ADA\n", "base_version": base}))
            .await?;
    assert_eq!(ada_save.status, StatusCode::CONFLICT, "{ada_save:?}");
    let message = ada_save.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("/workspace/notes/retro.md changed since it was opened"),
        "{message}"
    );
    assert_eq!(read().await?.body["content"], "- one\n- BOB\n");
    // A ranged read names no version: it did not see the whole file.
    let part = api
        .get(
            "/api/channels/launch/files/read?path=notes/retro.md&start=2",
            Auth::Bearer(&ada),
        )
        .await?;
    assert!(part.body.get("version").is_none(), "{part:?}");
    // Deleted meanwhile: said so; create and a base together make no sense.
    api.call(
        Method::DELETE,
        "/api/channels/launch/files?path=notes/retro.md",
        Auth::Bearer(&ada),
        None,
    )
    .await?;
    let gone = put(json!({"path": "notes/retro.md", "content": "x", "base_version": bobs})).await?;
    assert_eq!(gone.status, StatusCode::CONFLICT, "{gone:?}");
    assert!(
        gone.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("deleted or moved"),
        "{gone:?}"
    );
    let both =
        put(json!({"path": "notes/x.md", "content": "x", "base_version": bobs, "create": true}))
            .await?;
    assert_eq!(both.status, StatusCode::UNPROCESSABLE_ENTITY, "{both:?}");
    Ok(())
}
