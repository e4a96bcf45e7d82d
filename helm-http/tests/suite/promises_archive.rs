//! Archiving a channel stops its agent's work, as spec §6.4 promises
//! ("archiving pauses the agent runtime and scheduled activity"): the
//! running turn is cancelled mid-tool with its command killed, the turn
//! queued behind it is cancelled before it starts, both say so in the
//! thread, nothing more reaches the model or the workspace, and restoring
//! the channel replays none of it.

use std::time::{Duration, Instant};

use helm_core::model::ChannelId;
use helm_tests::mock::{Behaviour, MockOpenAi};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::people::served_with_captain;

fn texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archiving_stops_the_agent_mid_tool_and_restoring_replays_nothing() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    ada.add_mock_provider("mock", &openai.base_url(), "mock-model")
        .await?;
    let arch = ada
        .create_channel("arch", "Runs the slow nightly job.")
        .await?;
    let workspace = served
        .api
        .t
        .helm
        .data_root()
        .world(ChannelId(
            arch["channel"]["id"].as_i64().unwrap_or_default(),
        ))
        .workspace();

    // Ada asks for the nightly job: the agent starts a slow command that
    // would leave a file behind when it finishes.
    openai.push(Behaviour::tool_call(
        "run_command",
        r#"{"command": "sleep 2 && echo late > late.txt"}"#,
    ));
    openai.set_fallback(Behaviour::text("All done."));
    let (status, first) = ada
        .post(
            "/api/channels/arch/messages",
            json!({"text": "@arch-agent run the nightly job"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let thread = first["thread"]["id"].as_i64().unwrap_or_default();
    let running = ada
        .poll("the command to start", || async {
            let (_, activity) = ada.get("/api/channels/arch/activity").await?;
            Ok(activity.as_array().and_then(|a| {
                a.iter()
                    .find(|t| t["tool"] == "run_command" && t["status"] == "running")
                    .cloned()
            }))
        })
        .await?;
    let started = Instant::now();

    // She queues a second request in the same thread behind it.
    let (status, second) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@arch-agent then write the report"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    assert_eq!(second["ahead"], 1, "{second}");
    assert_eq!(second["turn"]["state"], "queued");

    // Then she archives the channel, mid-tool.
    let (status, archived) = ada.post("/api/channels/arch/archive", json!({})).await?;
    assert_eq!(status, StatusCode::OK, "{archived}");
    assert_eq!(archived["channel"]["status"], "archived");
    assert_eq!(archived["agent"]["status"], "paused", "{archived}");

    // By the time the archive answered, both turns had ended cancelled.
    let detail = ada.thread(thread).await?;
    let states: Vec<&str> = detail["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["state"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(states, ["cancelled", "cancelled"], "{detail}");
    // The command's journal entry ended with its turn, the command killed.
    let (_, activity) = ada.get("/api/channels/arch/activity").await?;
    let command = activity
        .as_array()
        .and_then(|a| a.iter().find(|t| t["id"] == running["id"]).cloned())
        .unwrap_or_default();
    assert_eq!(command["status"], "cancelled", "{command}");
    assert!(
        command["result_summary"]
            .as_str()
            .unwrap_or_default()
            .contains("killed"),
        "{command}"
    );
    // Each cancellation is a note in the thread.
    let notes = texts(&ada.messages(thread).await?);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("#arch was archived by ada while it ran")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(
            |n| n.contains("cancelled before it started: #arch was archived by ada")
                && n.contains("Restoring the channel does not run it")
        ),
        "{notes:?}"
    );
    // People are refused in the archived channel, as before.
    let (status, _) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@arch-agent are you there?"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CONFLICT);

    // Past the moment the command would have finished, nothing it would
    // have written exists, and the model was never asked again.
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(started.elapsed())).await;
    assert!(
        !workspace.join("late.txt").exists(),
        "the killed command still wrote into the archived workspace"
    );
    assert_eq!(openai.requests().len(), 1, "only the first model call");

    // Restoring brings the same agent back and replays nothing.
    let (status, restored) = ada.post("/api/channels/arch/restore", json!({})).await?;
    assert_eq!(status, StatusCode::OK, "{restored}");
    assert_eq!(restored["agent"]["id"], arch["agent"]["id"]);
    assert_eq!(restored["agent"]["status"], "ready");
    // Two scheduler rounds (it looks at least every second).
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let detail = ada.thread(thread).await?;
    assert!(
        detail["turns"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["state"] == "cancelled"),
        "{detail}"
    );
    assert_eq!(openai.requests().len(), 1, "nothing was replayed");
    assert!(!workspace.join("late.txt").exists());

    // The channel's lifecycle tells it after the fact, newest first: made,
    // archived with both turns stopped, restored.
    let (status, story) = ada.get("/api/channels/arch/lifecycle").await?;
    assert_eq!(status, StatusCode::OK, "{story}");
    let kinds: Vec<&str> = story
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(kinds.first(), Some(&"channel.restored"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"channel.created"), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "turn.cancelled").count(),
        2,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"channel.archived"), "{kinds:?}");
    let newest = story[0]["seq"].as_i64().unwrap_or_default();
    let (_, older) = ada
        .get(&format!(
            "/api/channels/arch/lifecycle?before={newest}&limit=1"
        ))
        .await?;
    assert_eq!(older.as_array().map(Vec::len), Some(1), "{older}");
    assert_eq!(older[0]["seq"], story[1]["seq"]);
    let (status, bad) = ada.get("/api/channels/arch/lifecycle?before=0").await?;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");

    // Work goes on with a new request.
    let (status, again) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@arch-agent run it again tomorrow"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    let turn = again["turn"]["id"].as_i64().unwrap_or_default();
    let ended = ada.wait_ended(thread, turn).await?;
    assert_eq!(ended["state"], "completed", "{ended}");
    assert_eq!(ada.thread(thread).await?["thread"]["status"], "open");

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}
