//! The event stream: resuming after a disconnect with nothing missed or
//! repeated, private channels' events reaching only their audience, and a
//! slow client told to resync without holding anyone up.

use futures_util::StreamExt;
use helm_core::model::ChannelRef;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::kit::{Api, Auth, Served, events_ws, next_json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resumes_with_after_and_gets_exactly_what_it_missed() -> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let created = served
        .api
        .post(
            "/api/channels",
            Auth::Bearer(&token),
            json!({"name": "busy", "purpose": "Lots of messages"}),
        )
        .await?;
    assert_eq!(created.status, axum::http::StatusCode::CREATED);

    let mut socket = events_ws(&served.ws_url("/api/events?after=0"), &token).await?;
    let hello = next_json(&mut socket).await?;
    let head = hello["last_seq"].as_u64().unwrap_or_default();
    // Read the backlog up to the head, then disconnect.
    let mut last = 0;
    while last < head {
        last = next_json(&mut socket).await?["seq"]
            .as_u64()
            .unwrap_or_default();
    }
    socket.close(None).await?;
    drop(socket);

    // 1,000 messages while nobody listens (no agent is mentioned).
    let ada = served.api.t.helm.captain().await?;
    let channel = ChannelRef::Id(helm_core::model::ChannelId(
        created.body["channel"]["id"].as_i64().unwrap_or_default(),
    ));
    for i in 0..1000 {
        served
            .api
            .t
            .helm
            .post_message(&ada, &channel, &format!("message {i}"), None)
            .await?;
    }
    let expected = served
        .api
        .t
        .helm
        .store()
        .events_after(last, 10_000)
        .await?
        .into_iter()
        .map(|e| e.seq)
        .collect::<Vec<_>>();
    assert!(expected.len() >= 2000, "two events per message");

    let mut socket =
        events_ws(&served.ws_url(&format!("/api/events?after={last}")), &token).await?;
    let hello = next_json(&mut socket).await?;
    assert_eq!(hello["after"], last);
    let mut seen = Vec::new();
    let mut texts = Vec::new();
    while seen.len() < expected.len() {
        let event = next_json(&mut socket).await?;
        seen.push(event["seq"].as_u64().unwrap_or_default());
        if event["type"] == "message.created" {
            texts.push(
                event["message"]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    assert_eq!(seen, expected, "exactly the missed events, in order");
    assert_eq!(texts.len(), 1000);
    assert_eq!(texts.first().map(String::as_str), Some("message 0"));
    assert_eq!(texts.last().map(String::as_str), Some("message 999"));

    // And then it is live: one more message arrives with the next seq.
    served
        .api
        .t
        .helm
        .post_message(&ada, &channel, "live", None)
        .await?;
    let next = next_json(&mut socket).await?;
    assert_eq!(next["seq"].as_u64(), expected.last().map(|s| s + 1));
    socket.close(None).await?;
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_events_reach_members_only_live_and_replayed() -> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let api = &served.api;
    let ada = api.setup().await?;
    let (mia_id, mia) = api.join(&ada, "mia", "member").await?;
    let (_, nol) = api.join(&ada, "nol", "member").await?;
    api.post(
        "/api/channels",
        Auth::Bearer(&ada),
        json!({"name": "lobby", "purpose": "All"}),
    )
    .await?;

    let mut nol_ws = events_ws(&served.ws_url("/api/events"), &nol).await?;
    let mut mia_ws = events_ws(&served.ws_url("/api/events"), &mia).await?;
    next_json(&mut nol_ws).await?;
    next_json(&mut mia_ws).await?;

    let vault = api
        .post(
            "/api/channels",
            Auth::Bearer(&ada),
            json!({"name": "vault", "purpose": "Private things", "visibility": "private"}),
        )
        .await?;
    let vault_id = vault.body["channel"]["id"].clone();
    api.post(
        "/api/channels/vault/members",
        Auth::Bearer(&ada),
        json!({"user_id": mia_id}),
    )
    .await?;
    api.post(
        "/api/channels/vault/messages",
        Auth::Bearer(&ada),
        json!({"text": "the vault code"}),
    )
    .await?;
    api.post(
        "/api/channels/lobby/messages",
        Auth::Bearer(&ada),
        json!({"text": "sentinel"}),
    )
    .await?;

    let until_sentinel = |socket| async move {
        let mut socket = socket;
        let mut events: Vec<Value> = Vec::new();
        loop {
            let event = next_json(&mut socket).await?;
            let done = event["message"]["content"] == "sentinel";
            events.push(event);
            if done {
                return anyhow::Ok(events);
            }
        }
    };
    let nol_saw = until_sentinel(nol_ws).await?;
    let mia_saw = until_sentinel(mia_ws).await?;
    assert!(
        nol_saw.iter().all(|e| e["channel_id"] != vault_id),
        "the outsider saw the private channel: {nol_saw:?}"
    );
    assert!(!Value::Array(nol_saw).to_string().contains("vault code"));
    // Mia joined live: she sees her membership and then the channel's messages.
    let kinds: Vec<&str> = mia_saw
        .iter()
        .filter(|e| e["channel_id"] == vault_id)
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert!(kinds.contains(&"channel.member_added"), "{kinds:?}");
    assert!(kinds.contains(&"message.created"), "{kinds:?}");

    // Replaying the whole log gives the same answer.
    let replay = events_ws(&served.ws_url("/api/events?after=0"), &nol).await?;
    let saw = until_sentinel(replay).await?;
    assert!(saw.iter().all(|e| e["channel_id"] != vault_id));
    let page = api
        .get("/api/events/log?after=0", Auth::Bearer(&nol))
        .await?;
    assert!(!page.body.to_string().contains("vault"));
    let page = api
        .get("/api/events/log?after=0", Auth::Bearer(&mia))
        .await?;
    assert!(page.body.to_string().contains("vault code"));
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_client_is_told_to_resync_while_others_keep_up() -> anyhow::Result<()> {
    let api = Api::with_config(|c| {
        c.ws_buffer = 4;
        c.ws_stall_secs = 1;
    })
    .await?;
    let served = Served::start(api).await?;
    let token = served.api.setup().await?;
    served
        .api
        .post(
            "/api/channels",
            Auth::Bearer(&token),
            json!({"name": "flood", "purpose": "Big messages"}),
        )
        .await?;
    let mut stalled = events_ws(&served.ws_url("/api/events"), &token).await?;
    let mut reader = events_ws(&served.ws_url("/api/events"), &token).await?;
    next_json(&mut stalled).await?;
    next_json(&mut reader).await?;

    // Big messages fill the socket buffers of the client that never reads.
    let ada = served.api.t.helm.captain().await?;
    let channel: ChannelRef = "flood".parse()?;
    let big = "x".repeat(200 * 1024);
    let mut last_seq = 0;
    let started = std::time::Instant::now();
    for _ in 0..120 {
        let posted = served
            .api
            .t
            .helm
            .post_message(&ada, &channel, &big, None)
            .await?;
        // The reading client keeps up all along.
        loop {
            let event = next_json(&mut reader).await?;
            if event["message"]["id"] == json!(posted.message.id.0) {
                last_seq = event["seq"].as_u64().unwrap_or_default();
                break;
            }
        }
    }
    assert!(started.elapsed().as_secs() < 60);
    assert!(last_seq > 0);

    // The stalled client, reading at last, finds a resync notice and a close.
    let mut notice = None;
    while let Some(frame) = stalled.next().await {
        match frame? {
            Message::Text(text) => {
                let value: Value = serde_json::from_str(&text)?;
                if value["type"] == "stream.resync" {
                    notice = Some(value);
                }
            }
            Message::Close(frame) => {
                assert_eq!(frame.map(|f| u16::from(f.code)), Some(4008));
                break;
            }
            _ => {}
        }
    }
    let notice = notice.ok_or_else(|| anyhow::anyhow!("no resync notice"))?;
    let resume_at = notice["last_seq"].as_u64().unwrap_or_default();
    assert!(resume_at < last_seq);
    // Resuming from the notice's position misses nothing.
    let mut resumed = events_ws(
        &served.ws_url(&format!("/api/events?after={resume_at}")),
        &token,
    )
    .await?;
    next_json(&mut resumed).await?;
    let first = next_json(&mut resumed).await?;
    assert_eq!(first["seq"].as_u64(), Some(resume_at + 1));
    let metrics = reqwest_get(&served.url("/metrics")).await?;
    assert!(metrics.contains("helm_ws_resyncs_total 1"), "{metrics}");
    served.stop().await
}

async fn reqwest_get(url: &str) -> anyhow::Result<String> {
    Ok(super::kit::client()?.get(url).send().await?.text().await?)
}

/// Bob has `notes/plan.md` open; Ada saves it. Bob's event stream says so
/// at once, with the path, the new version and who saved it, so his view
/// can reload or warn before he saves over her.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_save_reaches_the_others_event_streams() -> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let api = &served.api;
    let ada = api.setup().await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    let created = api
        .post(
            "/api/channels",
            Auth::Bearer(&ada),
            json!({"name": "launch", "purpose": "Planning the launch"}),
        )
        .await?;
    assert_eq!(
        created.status,
        axum::http::StatusCode::CREATED,
        "{created:?}"
    );
    let launch = created.body["channel"]["id"].clone();
    api.post(
        "/api/channels/launch/members",
        Auth::Bearer(&ada),
        json!({"user_id": bob_id}),
    )
    .await?;
    let put = |body: Value| {
        api.call(
            axum::http::Method::PUT,
            "/api/channels/launch/files",
            Auth::Bearer(&ada),
            Some(body),
        )
    };
    let first = put(json!({"path": "notes/plan.md", "content": "v1\n"})).await?;
    assert_eq!(first.status, axum::http::StatusCode::OK, "{first:?}");

    let mut bob_ws = events_ws(&served.ws_url("/api/events"), &bob).await?;
    assert_eq!(next_json(&mut bob_ws).await?["type"], "stream.hello");
    let saved = put(json!({
        "path": "/workspace/notes/plan.md",
        "content": "v2\n",
        "base_version": first.body["version"],
    }))
    .await?;
    assert_eq!(saved.status, axum::http::StatusCode::OK, "{saved:?}");

    let event = loop {
        let event = next_json(&mut bob_ws).await?;
        if event["type"] == "file.changed" {
            break event;
        }
    };
    assert_eq!(event["channel_id"], launch);
    assert_eq!(event["change"], "saved");
    assert_eq!(event["path"], "/workspace/notes/plan.md");
    assert_eq!(event["version"], saved.body["version"]);
    assert_eq!(event["version"], helm_core::exec::content_version(b"v2\n"));
    let captain = api.t.helm.captain().await?;
    assert_eq!(event["user_id"], captain.id.get());
    assert_eq!(event["by"], captain.display_name);
    served.stop().await
}
