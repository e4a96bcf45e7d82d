//! Smaller promises of the same kind: a channel renamed by one person is
//! seen renamed, live, by another; a turn waiting because its agent is busy
//! elsewhere says how many must end first; an escape from the workspace is
//! forbidden the same way on reading and writing; and error texts over HTTP
//! carry no CLI syntax.

use helm_core::model::ChannelId;
use helm_tests::mock::{Behaviour, MockOpenAi};
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::kit::{events_ws, next_json};
use super::people::{invited, served_with_captain};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_is_seen_live_by_a_second_client() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let mira = invited(&served.url(""), &ada, "mira", "member").await?;
    let alpha = ada.create_channel("alpha", "The first campaign.").await?;
    ada.create_channel("gamma", "Another campaign.").await?;

    // Mira watches the workspace while Ada renames the channel.
    let mut socket = events_ws(&served.ws_url("/api/events"), &mira.token).await?;
    assert_eq!(next_json(&mut socket).await?["type"], "stream.hello");
    let (status, renamed) = ada
        .patch("/api/channels/alpha", json!({"name": "beta"}))
        .await?;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["channel"]["name"], "beta");
    assert_eq!(
        renamed["agent"]["handle"], "alpha-agent",
        "the handle stays"
    );
    assert_eq!(renamed["agent"]["id"], alpha["agent"]["id"]);
    let event = loop {
        let event = next_json(&mut socket).await?;
        if event["type"] == "channel.renamed" {
            break event;
        }
    };
    assert_eq!(event["channel"]["name"], "beta");
    assert_eq!(event["previous_name"], "alpha");
    assert_eq!(event["channel_id"], alpha["channel"]["id"]);

    // Mira finds it by its new name only, with the same agent.
    let (status, shown) = mira.get("/api/channels/beta").await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["agent"]["id"], alpha["agent"]["id"]);
    assert_eq!(
        mira.get("/api/channels/alpha").await?.0,
        StatusCode::NOT_FOUND
    );
    // She does not manage it, so she cannot rename it.
    let (status, _) = mira
        .patch("/api/channels/beta", json!({"name": "mine"}))
        .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Names stay unique among live channels, archived ones included.
    let (status, taken) = ada
        .patch("/api/channels/beta", json!({"name": "gamma"}))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{taken}");
    ada.post("/api/channels/gamma/archive", json!({})).await?;
    let (status, _) = ada
        .patch("/api/channels/beta", json!({"name": "#gamma"}))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "archived channels keep names");
    let (status, _) = ada
        .patch("/api/channels/beta", json!({"name": "Not a Name!"}))
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, home) = ada
        .patch("/api/channels/main", json!({"name": "home"}))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{home}");
    // A rename with a purpose change says both.
    ada.patch(
        "/api/channels/beta",
        json!({"name": "delta", "purpose": "The first campaign, renamed."}),
    )
    .await?;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let event = next_json(&mut socket).await?;
        if let Some(kind @ ("channel.renamed" | "channel.updated")) = event["type"].as_str() {
            seen.push(kind.to_string());
        }
    }
    assert_eq!(seen, ["channel.renamed", "channel.updated"]);

    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_waiting_for_a_busy_agent_says_how_many_must_end_first() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    ada.add_mock_provider("mock", &openai.base_url(), "mock-model")
        .await?;
    ada.create_channel("busy", "Many things at once.").await?;

    // Three threads keep the agent at its capacity (answers that never end).
    openai.set_fallback(Behaviour::text("Working on it for a long while").hang());
    let mut threads = Vec::new();
    for n in 0..3 {
        let (_, posted) = ada
            .post(
                "/api/channels/busy/messages",
                json!({"text": format!("@busy-agent job {n}")}),
            )
            .await?;
        let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
        let turn = posted["turn"]["id"].as_i64().unwrap_or_default();
        ada.wait_turn(thread, turn, |t| t["state"] == "running")
            .await?;
        threads.push(thread);
    }
    // A fourth thread waits for one of them to end; a fifth for two.
    let (_, fourth) = ada
        .post(
            "/api/channels/busy/messages",
            json!({"text": "@busy-agent job 3"}),
        )
        .await?;
    assert_eq!(fourth["turn"]["state"], "queued");
    assert_eq!(fourth["ahead"], 1, "{fourth}");
    let (_, fifth) = ada
        .post(
            "/api/channels/busy/messages",
            json!({"text": "@busy-agent job 4"}),
        )
        .await?;
    assert_eq!(fifth["ahead"], 2, "{fifth}");
    // In a thread of its own, what counts is the turn before it there.
    let fourth_thread = fourth["thread"]["id"].as_i64().unwrap_or_default();
    let (_, behind) = ada
        .post(
            &format!("/api/threads/{fourth_thread}/messages"),
            json!({"text": "@busy-agent and then this"}),
        )
        .await?;
    assert_eq!(behind["ahead"], 1, "{behind}");

    for thread in threads {
        ada.post(&format!("/api/threads/{thread}/stop"), json!({}))
            .await?;
    }
    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escape_is_forbidden_alike_on_read_and_write_and_errors_speak_http() -> anyhow::Result<()>
{
    let (served, ada) = served_with_captain().await?;
    let files = ada.create_channel("files", "Holds documents.").await?;
    let workspace = served
        .api
        .t
        .helm
        .data_root()
        .world(ChannelId(
            files["channel"]["id"].as_i64().unwrap_or_default(),
        ))
        .workspace();
    // Links the agent's shell could make: to a file outside, to a folder
    // outside, and one that stays inside.
    let outside = served.api.t.dir.path().join("outside.txt");
    std::fs::write(&outside, "not the channel's\n")?;
    std::os::unix::fs::symlink(&outside, workspace.join("out-file"))?;
    std::os::unix::fs::symlink(served.api.t.dir.path(), workspace.join("out-dir"))?;
    std::fs::write(workspace.join("notes.md"), "inside\n")?;
    std::os::unix::fs::symlink("notes.md", workspace.join("in-link"))?;

    for path in ["out-file", "out-dir/outside.txt"] {
        let (read, body) = ada
            .get(&format!("/api/channels/files/files/read?path={path}"))
            .await?;
        assert_eq!(read, StatusCode::FORBIDDEN, "read {path}: {body}");
        let (write, body) = ada
            .put(
                "/api/channels/files/files",
                json!({"path": path, "content": "overwritten"}),
            )
            .await?;
        assert_eq!(write, StatusCode::FORBIDDEN, "write {path}: {body}");
        assert_eq!(body["code"], "forbidden");
    }
    assert_eq!(std::fs::read_to_string(&outside)?, "not the channel's\n");
    // A link that stays inside is not an escape: reading follows it,
    // writing through it is refused (the file tools never write via links).
    let (read, body) = ada
        .get("/api/channels/files/files/read?path=in-link")
        .await?;
    assert_eq!(read, StatusCode::OK, "{body}");
    let (write, body) = ada
        .put(
            "/api/channels/files/files",
            json!({"path": "in-link", "content": "x"}),
        )
        .await?;
    assert_eq!(write, StatusCode::CONFLICT, "{body}");

    // Deleting without confirming: the message is the product's, the hint
    // is this API's, and neither is CLI syntax.
    ada.post("/api/channels/files/archive", json!({})).await?;
    let (status, refused) = ada
        .send(Method::DELETE, "/api/channels/files", None)
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["code"], "confirmation_required");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.contains("confirm by naming it: files"), "{message}");
    assert!(!refused.to_string().contains("--"), "{refused}");
    assert!(
        refused["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("confirm=files"),
        "{refused}"
    );
    served.stop().await
}
