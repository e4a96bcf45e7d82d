//! Nothing is left "running" after a crash: the server is killed with
//! SIGKILL while its agent runs a command, with another request queued
//! behind it. After the restart the interrupted turn says so, its tool call
//! is `interrupted` rather than running forever, the queued request runs,
//! and the thread's status follows its latest turn.

use std::time::Duration;

use helm_tests::mock::{Behaviour, MockOpenAi};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::people::captain;
use super::process::Process;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_mid_tool_leaves_nothing_running_after_the_restart() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let mut server = Process::spawn(&data)?;
    server.wait_ready().await?;
    let code = std::fs::read_to_string(data.join("setup-code"))?;
    let ada = captain(&server.url, code.trim()).await?;
    let mock = MockOpenAi::start().await?;
    mock.push(Behaviour::tool_call(
        "run_command",
        r#"{"command": "sleep 30"}"#,
    ));
    mock.push(Behaviour::text("Here is the summary of the night."));
    ada.add_mock_provider("mock", &mock.base_url(), "mock-model")
        .await?;
    ada.create_channel("night", "Runs the night shift.").await?;

    // Ada starts a long job, and asks for a summary after it.
    let (_, started) = ada
        .post(
            "/api/channels/night/messages",
            json!({"text": "@night-agent run the long job"}),
        )
        .await?;
    let thread = started["thread"]["id"].as_i64().unwrap_or_default();
    let long = started["turn"]["id"].as_i64().unwrap_or_default();
    ada.poll("the command to run", || async {
        let (_, activity) = ada.get("/api/channels/night/activity").await?;
        Ok(activity
            .as_array()
            .and_then(|a| a.iter().find(|t| t["status"] == "running").cloned()))
    })
    .await?;
    let (status, queued) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@night-agent then summarise the night"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{queued}");
    let summary = queued["turn"]["id"].as_i64().unwrap_or_default();

    // The server dies mid-command, and comes back on the same data.
    server.kill_hard()?;
    let mut server = Process::spawn(&data)?;
    server.wait_ready().await?;
    let ada = ada.at(&server.url);

    // The queued request runs; the interrupted one says what happened.
    let done = ada.wait_ended(thread, summary).await?;
    assert_eq!(done["state"], "completed", "{done}");
    let detail = ada.thread(thread).await?;
    let first = detail["turns"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["id"] == long).cloned())
        .unwrap_or_default();
    assert_eq!(first["state"], "interrupted", "{first}");
    // Its tool call ended with it, as interrupted; nothing is running.
    let (_, activity) = ada.get("/api/channels/night/activity").await?;
    let statuses: Vec<(&str, &str)> = activity
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["tool"].as_str().unwrap_or_default(),
                a["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(statuses, [("run_command", "interrupted")], "{activity}");
    // The thread follows its latest turn: it is open, not failed.
    assert_eq!(detail["thread"]["status"], "open", "{detail}");
    let notes: Vec<Value> = ada
        .messages(thread)
        .await?
        .into_iter()
        .filter(|m| m["author"]["kind"] == "system")
        .collect();
    assert!(
        notes.iter().any(|m| m["content"]
            .as_str()
            .unwrap_or_default()
            .contains("This turn was interrupted")),
        "{notes:?}"
    );
    // And it stays so: nothing flips back after a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ada.thread(thread).await?["thread"]["status"], "open");
    Ok(())
}
