//! `POST /api/threads/{id}/retry`: a failed turn runs again, woken by Helm's
//! note of who asked; only once, and only a failure.

use helm_tests::mock::{Behaviour, MockOpenAi};
use reqwest::StatusCode;
use serde_json::json;

use super::people::{invited, served_with_captain};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_reply_runs_again_when_someone_asks() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    ada.add_mock_provider("mock", &openai.base_url(), "mock-model")
        .await?;
    ada.create_channel("launch", "Plans the launch.").await?;
    let bob = invited(&served.url(""), &ada, "bob", "member").await?;

    openai.push(Behaviour::error(400, "the model is overloaded"));
    let (_, posted) = ada
        .post(
            "/api/channels/launch/messages",
            json!({"text": "@launch-agent draft the plan"}),
        )
        .await?;
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let first = posted["turn"]["id"].as_i64().unwrap_or_default();
    let failed = ada.wait_ended(thread, first).await?;
    assert_eq!(failed["state"], "failed", "{failed}");

    // Bob asks for it again; the agent answers this time.
    openai.push(Behaviour::text("Here is the plan."));
    let (status, again) = bob
        .post(&format!("/api/threads/{thread}/retry"), json!({}))
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(again["state"], "queued");
    assert_eq!(again["requested_by"], bob.id);
    assert_eq!(again["agent_id"], failed["agent_id"]);
    let retried = again["id"].as_i64().unwrap_or_default();
    let done = ada.wait_ended(thread, retried).await?;
    assert_eq!(done["state"], "completed", "{done}");

    // The thread keeps the failed reply, says who asked, and has the answer.
    let messages = ada.messages(thread).await?;
    let said: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            (
                m["author"]["kind"].as_str().unwrap_or_default(),
                m["content"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        said.contains(&("system", "bob asked @launch-agent to try again.")),
        "{said:?}"
    );
    assert_eq!(
        said.last(),
        Some(&("agent", "Here is the plan.")),
        "{said:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["author"]["kind"] == "agent" && m["status"] == "failed"),
        "{said:?}"
    );

    // Nothing to run again now: the last turn did not fail.
    let (status, refused) = ada
        .post(&format!("/api/threads/{thread}/retry"), json!({}))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("only a failed or interrupted turn can run again"),
        "{message}"
    );
    let (status, _) = ada.post("/api/threads/9999/retry", json!({})).await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    Ok(())
}
