//! Calls for Skipper: three calls in one thread make one open call with
//! all three reasons, visibly, and `@skipper` alone does not wake the
//! channel's own agent too. Skipper archives a channel for the person who
//! asks, and deletes one only when confirmed by name and approved.

use std::time::Duration;

use helm_tests::mock::{Behaviour, MockOpenAi};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::people::{Person, invited, served_with_captain};

fn contents(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn turns_of(person: &Person, thread: i64) -> anyhow::Result<Vec<Value>> {
    Ok(person.thread(thread).await?["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// The deletion Skipper asked the Captain (or an admin) to approve, once
/// its card is up.
async fn deletion_asked(captain: &Person) -> anyhow::Result<Value> {
    captain
        .poll("the approval card", || async {
            let (_, pending) = captain.get("/api/approvals").await?;
            Ok(pending
                .as_array()
                .and_then(|a| a.iter().find(|p| p["action"] == "delete_channel").cloned()))
        })
        .await
}

/// Approves `approval` as `captain`.
async fn approve(captain: &Person, approval: &Value) -> anyhow::Result<()> {
    let (status, _) = captain
        .post(
            &format!("/api/approvals/{}/approve", approval["id"]),
            json!({}),
        )
        .await?;
    assert_eq!(status, StatusCode::OK);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_calls_for_skipper_in_one_thread_make_one_open_call() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    ada.add_mock_provider("mock", &openai.base_url(), "mock-model")
        .await?;
    let ops = ada
        .create_channel("ops", "Keeps the build machines running.")
        .await?;
    let resident = ops["agent"]["id"].clone();

    // Ada works with the channel's agent in a thread of her own.
    openai.push(Behaviour::text("Hello, I look after the build machines."));
    let (_, hello) = ada
        .post(
            "/api/channels/ops/messages",
            json!({"text": "@ops-agent hello"}),
        )
        .await?;
    let thread = hello["thread"]["id"].as_i64().unwrap_or_default();
    let first = hello["turn"]["id"].as_i64().unwrap_or_default();
    ada.wait_ended(thread, first).await?;

    // Then she calls Skipper three times in a row; Skipper's first answer
    // takes a moment, so the later calls arrive while it is on the first.
    openai.push(
        Behaviour::text_chunks(&["Looking", " into", " it."])
            .chunk_delay(Duration::from_millis(300)),
    );
    openai.set_fallback(Behaviour::text("On it."));
    let reasons = [
        "please install ffmpeg on the builder",
        "and open the network for the mirror",
        "and a GPU if one is free",
    ];
    let mut calls = Vec::new();
    for reason in reasons {
        let (status, posted) = ada
            .post(
                &format!("/api/threads/{thread}/messages"),
                json!({"text": format!("@skipper {reason}")}),
            )
            .await?;
        assert_eq!(status, StatusCode::CREATED, "{posted}");
        // @skipper alone is for Skipper: the channel's agent stays quiet,
        // although it answers everything else Ada says in this thread.
        assert_eq!(posted["turn"], Value::Null, "{posted}");
        calls.push(posted["escalation"].clone());
    }
    let id = &calls[0]["id"];
    assert!(
        calls.iter().all(|c| &c["id"] == id),
        "one call for all three: {calls:?}"
    );

    // One open call, holding all three reasons.
    let (_, open) = ada.get("/api/escalations").await?;
    let open: Vec<&Value> = open
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["thread_id"] == thread)
        .collect();
    assert_eq!(open.len(), 1, "{open:?}");
    for reason in reasons {
        assert!(
            open[0]["reason"]
                .as_str()
                .unwrap_or_default()
                .contains(reason),
            "{open:?}"
        );
    }
    // The thread shows the first call and each addition.
    let said = contents(&ada.messages(thread).await?);
    assert!(
        said.iter()
            .any(|m| m == "Calling @skipper: please install ffmpeg on the builder"),
        "{said:?}"
    );
    for reason in &reasons[1..] {
        assert!(
            said.iter()
                .any(|m| m == &format!("Also for @skipper (the call already open here): {reason}")),
            "{said:?}"
        );
    }

    // Skipper answers (once or twice, never once per call), and the
    // channel's agent took no turn after its first.
    let turns = ada
        .poll("Skipper's turns to end", || async {
            let turns = turns_of(&ada, thread).await?;
            let live = turns
                .iter()
                .any(|t| matches!(t["state"].as_str(), Some("queued" | "running")));
            Ok((!live).then_some(turns))
        })
        .await?;
    let (resident_turns, skipper_turns): (Vec<&Value>, Vec<&Value>) =
        turns.iter().partition(|t| t["agent_id"] == resident);
    assert_eq!(resident_turns.len(), 1, "{turns:?}");
    assert!(
        (1..=2).contains(&skipper_turns.len()),
        "one Skipper turn per call would be three: {turns:?}"
    );
    assert!(skipper_turns.iter().all(|t| t["escalation_id"] == *id));

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipper_archives_for_the_asker_and_deletes_only_when_confirmed_and_approved()
-> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let mira = invited(&served.url(""), &ada, "mira", "member").await?;
    let openai = MockOpenAi::start().await?;
    ada.add_mock_provider("mock", &openai.base_url(), "mock-model")
        .await?;
    mira.create_channel("old", "Last year's campaign.").await?;

    // Mira asks Skipper in #main to archive her old channel.
    openai.push(Behaviour::tool_call(
        "archive_channel",
        r#"{"channel": "old"}"#,
    ));
    openai.push(Behaviour::text("#old is archived; everything is kept."));
    let (status, asked) = mira
        .post(
            "/api/channels/main/messages",
            json!({"text": "@skipper please archive #old"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{asked}");
    let thread = asked["thread"]["id"].as_i64().unwrap_or_default();
    let turn = asked["turn"]["id"].as_i64().unwrap_or_default();
    assert_eq!(mira.wait_ended(thread, turn).await?["state"], "completed");
    let (_, old) = mira.get("/api/channels/old").await?;
    assert_eq!(old["channel"]["status"], "archived", "{old}");

    // Then she asks it to delete the channel for good. A deletion that does
    // not name the channel is refused; the one that does waits for the
    // Captain's approval, which names the channel.
    openai.push(Behaviour::tool_call(
        "delete_channel",
        r#"{"channel": "old", "confirm": "new"}"#,
    ));
    openai.push(Behaviour::tool_call(
        "delete_channel",
        r#"{"channel": "old", "confirm": "old"}"#,
    ));
    openai.push(Behaviour::text("#old is gone."));
    let (_, asked) = mira
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@skipper now delete #old for good"}),
        )
        .await?;
    let turn = asked["turn"]["id"].as_i64().unwrap_or_default();
    let approval = deletion_asked(&ada).await?;
    assert!(
        approval["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("permanently delete #old"),
        "{approval}"
    );
    // Still there while it waits.
    assert_eq!(ada.get("/api/channels/old").await?.0, StatusCode::OK);
    approve(&ada, &approval).await?;
    assert_eq!(mira.wait_ended(thread, turn).await?["state"], "completed");
    assert_eq!(
        ada.get("/api/channels/old").await?.0,
        StatusCode::NOT_FOUND,
        "deleted once approved"
    );
    let (_, activity) = ada.get("/api/channels/main/activity").await?;
    let deletes: Vec<&str> = activity
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["tool"] == "delete_channel")
        .map(|a| a["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(deletes, ["error", "ok"], "{activity}");
    let said = contents(&mira.messages(thread).await?);
    assert!(
        said.iter()
            .any(|m| m.contains("@skipper deleted #old and its agent world for good")),
        "{said:?}"
    );

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}

/// The Captain asking Skipper to delete a channel still approves it by
/// hand: the model names the channel itself, and a deletion is for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_the_captain_asks_skipper_for_waits_for_her_click() -> anyhow::Result<()> {
    let (served, ada) = served_with_captain().await?;
    let openai = MockOpenAi::start().await?;
    ada.add_mock_provider("mock", &openai.base_url(), "mock-model")
        .await?;
    ada.create_channel("veg", "The vegetable patch.").await?;

    // A vague wish; the model archives and deletes in one go.
    openai.push(Behaviour::tool_call(
        "archive_channel",
        r#"{"channel": "veg"}"#,
    ));
    openai.push(Behaviour::tool_call(
        "delete_channel",
        r#"{"channel": "veg", "confirm": "veg"}"#,
    ));
    openai.push(Behaviour::text("#veg is gone."));
    let (status, asked) = ada
        .post(
            "/api/channels/main/messages",
            json!({"text": "@skipper we probably do not need the veg stuff any more"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{asked}");
    let thread = asked["thread"]["id"].as_i64().unwrap_or_default();
    let turn = asked["turn"]["id"].as_i64().unwrap_or_default();
    let approval = deletion_asked(&ada).await?;
    assert_eq!(approval["status"], "pending", "{approval}");
    let (_, veg) = ada.get("/api/channels/veg").await?;
    assert_eq!(
        veg["channel"]["status"], "archived",
        "kept while it waits: {veg}"
    );

    approve(&ada, &approval).await?;
    assert_eq!(ada.wait_ended(thread, turn).await?["state"], "completed");
    assert_eq!(
        ada.get("/api/channels/veg").await?.0,
        StatusCode::NOT_FOUND,
        "deleted once she approved it"
    );

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}
