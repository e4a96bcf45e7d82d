//! A channel's computer over HTTP on a real port: uploads that the agent
//! sees in `/workspace/uploads`, files read back through the files API (no
//! command involved), a terminal over its WebSocket (bubblewrap: `pwd` is
//! `/workspace`), a file made in it found by the files list and a rescan, a
//! second viewer that gets the scrollback, and closing that leaves no
//! process. (The file routes' bad input is in `bad_input`.)

use std::time::Duration;

use axum::http::{StatusCode, header};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::kit::{Api, Served, client, events_ws};

/// A multipart body with one file part.
pub fn multipart(boundary: &str, filename: &[u8], bytes: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
    body.extend_from_slice(b"Content-Disposition: form-data; name=\"file\"; filename=\"");
    body.extend_from_slice(filename);
    body.extend_from_slice(b"\"\r\nContent-Type: application/octet-stream\r\n\r\n");
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

/// Reads binary frames until their text contains `needle` (20 s at most);
/// returns everything read.
pub async fn read_until<S>(socket: &mut S, needle: &str) -> anyhow::Result<String>
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.contains(needle) {
        let frame = tokio::time::timeout_at(deadline, socket.next())
            .await
            .map_err(|_| anyhow::anyhow!("{needle:?} not seen within 20 s; saw {seen:?}"))?
            .ok_or_else(|| anyhow::anyhow!("the socket ended; saw {seen:?}"))??;
        match frame {
            Message::Binary(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Message::Text(text) => seen.push_str(&text),
            Message::Close(frame) => anyhow::bail!("closed {frame:?}; saw {seen:?}"),
            _ => {}
        }
    }
    Ok(seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_land_where_the_agent_sees_them_and_read_back_through_the_files_api()
-> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let http = client()?;
    let created = http
        .post(served.url("/api/channels"))
        .bearer_auth(&token)
        .json(&json!({"name": "launch", "purpose": "The launch"}))
        .send()
        .await?;
    assert_eq!(created.status(), StatusCode::CREATED);

    let upload = http
        .post(served.url("/api/channels/launch/files/upload"))
        .bearer_auth(&token)
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=XyZ")
        .body(multipart(
            "XyZ",
            "brief é.txt".as_bytes(),
            b"launch on the 3rd\n",
        ))
        .send()
        .await?;
    assert_eq!(upload.status(), StatusCode::CREATED);
    let uploaded: Value = upload.json().await?;
    assert_eq!(
        uploaded[0]["file"]["path"],
        "/workspace/uploads/brief é.txt"
    );
    assert_eq!(uploaded[0]["artifact"]["kind"], "upload");
    assert_eq!(uploaded[0]["artifact"]["created_by"], "ada");

    // The agent sees it at /workspace/uploads: the files API (which names
    // paths as the agent does) lists and reads it, no command involved.
    let listed: Value = http
        .get(served.url("/api/channels/launch/files?path=/workspace/uploads"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(listed[0]["name"], "brief é.txt");
    assert_eq!(listed[0]["kind"], "file");
    let read: Value = http
        .get(served.url("/api/channels/launch/files/read?path=uploads/brief%20%C3%A9.txt"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(read["content"], "launch on the 3rd\n");
    assert_eq!(read["total_lines"], 1);

    // A raw body with ?name= and ?dir=, and a download of it.
    let raw = http
        .post(served.url("/api/channels/launch/files/upload?dir=/workspace/data&name=blob.bin"))
        .bearer_auth(&token)
        .body(vec![0u8, 1, 2, 255])
        .send()
        .await?;
    assert_eq!(raw.status(), StatusCode::CREATED);
    let download = http
        .get(served.url("/api/channels/launch/files/download?path=data/blob.bin"))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(download.status(), StatusCode::OK);
    let disposition = download
        .headers()
        .get(header::CONTENT_DISPOSITION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(disposition.starts_with("attachment;"), "{disposition}");
    assert!(disposition.contains("blob.bin"));
    assert_eq!(
        download
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some("application/octet-stream")
    );
    assert_eq!(download.bytes().await?.as_ref(), &[0u8, 1, 2, 255]);

    // The same name again: kept both (a numbered name), refused whole, or
    // replaced (the default).
    let again = |exists: &str| {
        http.post(served.url(&format!(
            "/api/channels/launch/files/upload?dir=/workspace/data&name=blob.bin&exists={exists}"
        )))
        .bearer_auth(&token)
        .body(vec![7u8])
        .send()
    };
    let both = again("keep_both").await?;
    assert_eq!(both.status(), StatusCode::CREATED);
    let both: Value = both.json().await?;
    assert_eq!(both[0]["file"]["path"], "/workspace/data/blob-2.bin");
    let refused = again("refuse").await?;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let refused: Value = refused.json().await?;
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/workspace/data/blob.bin already exists; nothing was uploaded"),
        "{refused}"
    );
    let bad = again("maybe").await?;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    assert_eq!(again("replace").await?.status(), StatusCode::CREATED);
    let listed: Value = http
        .get(served.url("/api/channels/launch/files?path=data"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    let sizes: Vec<(&str, u64)> = listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["name"].as_str()?, e["size"].as_u64()?)))
        .collect();
    assert_eq!(sizes, [("blob-2.bin", 1), ("blob.bin", 1)]);

    // Line ranges, writes, directories, moves and deletes.
    let wrote = http
        .put(served.url("/api/channels/launch/files"))
        .bearer_auth(&token)
        .json(&json!({"path": "notes/plan.md", "content": "one\ntwo\nthree\n"}))
        .send()
        .await?;
    assert_eq!(wrote.status(), StatusCode::OK);
    let lines: Value = http
        .get(served.url("/api/channels/launch/files/read?path=notes/plan.md&start=2&end=2"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(lines["content"], "two\n");
    assert_eq!(lines["start_line"], 2);
    let moved = http
        .post(served.url("/api/channels/launch/files/move"))
        .bearer_auth(&token)
        .json(&json!({"from": "notes", "to": "archive/notes"}))
        .send()
        .await?;
    assert_eq!(moved.status(), StatusCode::OK);
    let not_empty = http
        .delete(served.url("/api/channels/launch/files?path=archive"))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(not_empty.status(), StatusCode::CONFLICT, "only when asked");
    let deleted = http
        .delete(served.url("/api/channels/launch/files?path=archive&recursive=true"))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);

    let artifacts: Value = http
        .get(served.url("/api/channels/launch/artifacts"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    let paths: Vec<&str> = artifacts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["path"].as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "/workspace/uploads/brief é.txt",
            "/workspace/data/blob.bin",
            "/workspace/data/blob-2.bin"
        ]
    );
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_over_its_websocket_is_confined_shared_and_leaves_nothing_behind()
-> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let http = client()?;
    for name in ["alpha", "beta"] {
        http.post(served.url("/api/channels"))
            .bearer_auth(&token)
            .json(&json!({"name": name, "purpose": "Work"}))
            .send()
            .await?;
    }
    let opened: Value = http
        .post(served.url("/api/channels/alpha/terminals"))
        .bearer_auth(&token)
        .json(&json!({"rows": 30, "cols": 100}))
        .send()
        .await?
        .json()
        .await?;
    let id = opened["id"].as_u64().unwrap_or_default();
    assert_eq!(opened["isolation"], "bubblewrap", "{opened}");
    assert_eq!(opened["size"]["cols"], 100);
    let captain = served.api.state.helm.captain().await?.id.0;
    assert_eq!(opened["opened_by"], captain, "{opened}");
    // People call it by its number in the channel, from 1.
    assert_eq!(opened["number"], 1, "{opened}");
    let listed: Value = http
        .get(served.url("/api/channels/alpha/terminals"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["opened_by"], captain, "{listed}");
    let other: Value = http
        .get(served.url("/api/channels/beta/terminals"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(other, json!([]));

    let url = served.ws_url(&format!("/api/terminals/{id}/ws"));
    let mut first = events_ws(&url, &token).await?;
    first
        .send(Message::Text(
            json!({"type": "resize", "rows": 40, "cols": 120})
                .to_string()
                .into(),
        ))
        .await?;
    first
        .send(Message::Binary(
            b"pwd; echo made > made-here.txt; echo MARK-$((6*7))\n"
                .to_vec()
                .into(),
        ))
        .await?;
    let seen = read_until(&mut first, "MARK-42").await?;
    assert!(seen.contains("/workspace"), "{seen}");
    let session = served.api.state.helm.terminals().get(id)?;
    assert_eq!(session.info().size.cols, 120, "resized");
    let pid = session.pid();
    drop(session);

    // The file made in the terminal is in the workspace, and a rescan
    // records it as the terminal's.
    let files: Value = http
        .get(served.url("/api/channels/alpha/files"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert!(files.to_string().contains("made-here.txt"), "{files}");
    let added: Value = http
        .post(served.url("/api/channels/alpha/artifacts/rescan"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(added[0]["path"], "/workspace/made-here.txt");
    assert_eq!(added[0]["created_by"], "terminal");
    let again: Value = http
        .post(served.url("/api/channels/alpha/artifacts/rescan"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(again, json!([]), "a rescan adds only what is new");

    // A second viewer gets the scrollback first, then both see live output.
    let mut second = events_ws(&url, &token).await?;
    let replay = read_until(&mut second, "MARK-42").await?;
    assert!(replay.contains("/workspace"));
    first
        .send(Message::Binary(b"echo BOTH-$((2*3))\n".to_vec().into()))
        .await?;
    read_until(&mut first, "BOTH-6").await?;
    read_until(&mut second, "BOTH-6").await?;

    // Closing ends the shell; both viewers are told and disconnected.
    let closed = http
        .delete(served.url(&format!("/api/terminals/{id}")))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(closed.status(), StatusCode::NO_CONTENT);
    for socket in [&mut first, &mut second] {
        let notice = read_until(socket, "\"closed\"").await?;
        assert!(notice.contains("exit_code"), "{notice}");
        // Who closed it, so a viewer it ended under can be told.
        assert!(
            notice.contains(&format!("\"closed_by\":{captain}")),
            "{notice}"
        );
    }
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "the terminal's process {pid} is gone"
    );
    let gone = http
        .get(served.url(&format!("/api/terminals/{id}/ws")))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    served.stop().await
}

/// Waits (20 s at most, a guard against hangs) until the log holds a
/// `kind` event for terminal `id`, and returns it.
async fn terminal_event(api: &Api, token: &str, kind: &str, id: u64) -> anyhow::Result<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let events = super::kit::events_of(api, token, kind).await?;
        if let Some(event) = events.into_iter().find(|e| e["terminal_id"] == id) {
            return Ok(event);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no {kind} for terminal {id}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminals_opening_and_ending_are_told_to_the_channel() -> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let http = client()?;
    http.post(served.url("/api/channels"))
        .bearer_auth(&token)
        .json(&json!({"name": "alpha", "purpose": "Work"}))
        .send()
        .await?;
    let captain = served.api.state.helm.captain().await?;
    let open = || async {
        let opened: Value = http
            .post(served.url("/api/channels/alpha/terminals"))
            .bearer_auth(&token)
            .json(&json!({"rows": 24, "cols": 80}))
            .send()
            .await?
            .json()
            .await?;
        anyhow::Ok(opened["id"].as_u64().unwrap_or_default())
    };

    // Closed by a person: the event names them.
    let closed_here = open().await?;
    // A viewer that expects the terminal in another channel (a page left
    // open across a restart, asking for an id) is not attached to it.
    let alpha = served
        .api
        .state
        .helm
        .channel(&"alpha".parse()?)
        .await?
        .channel
        .id
        .0;
    let socket_url = |channel: i64| {
        served.url(&format!(
            "/api/terminals/{closed_here}/ws?channel={channel}"
        ))
    };
    let elsewhere = http
        .get(socket_url(alpha + 1000))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
    let here = http
        .get(socket_url(alpha))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(
        here.status(),
        StatusCode::BAD_REQUEST,
        "found, but not a WebSocket"
    );
    let opened = terminal_event(&served.api, &token, "terminal.opened", closed_here).await?;
    assert_eq!(opened["user_id"], captain.id.0, "{opened}");
    assert_eq!(opened["by"], captain.display_name, "{opened}");
    assert!(opened["channel_id"].is_i64(), "{opened}");
    http.delete(served.url(&format!("/api/terminals/{closed_here}")))
        .bearer_auth(&token)
        .send()
        .await?;
    let closed = terminal_event(&served.api, &token, "terminal.closed", closed_here).await?;
    assert_eq!(closed["closed_by"], captain.id.0, "{closed}");

    // A shell that exits by itself: its exit code, and nobody closed it.
    let exited = open().await?;
    let mut socket = events_ws(
        &served.ws_url(&format!("/api/terminals/{exited}/ws")),
        &token,
    )
    .await?;
    socket
        .send(Message::Binary(b"exit 3\n".to_vec().into()))
        .await?;
    let closed = terminal_event(&served.api, &token, "terminal.closed", exited).await?;
    assert_eq!(closed["exit_code"], 3, "{closed}");
    assert!(closed.get("closed_by").is_none(), "{closed}");
    served.stop().await
}
