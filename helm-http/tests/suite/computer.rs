//! A channel's computer over HTTP on a real port: uploads that the agent
//! sees in `/workspace/uploads`, files read back through the files API (no
//! command involved), a terminal over its WebSocket (bubblewrap: `pwd` is
//! `/workspace`), a file made in it found by the files list and a rescan, a
//! second viewer that gets the scrollback, and closing that leaves no
//! process; and the bad input of the file routes.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::kit::{Api, Auth, Served, client, events_ws};

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
        ["/workspace/uploads/brief é.txt", "/workspace/data/blob.bin"]
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
    let listed: Value = http
        .get(served.url("/api/channels/alpha/terminals"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(listed[0]["id"], id);
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

#[tokio::test]
async fn file_routes_refuse_bad_input_with_clear_client_errors() -> anyhow::Result<()> {
    let api = Api::with_config(|c| c.max_upload_bytes = 1024).await?;
    let token = api.setup().await?;
    api.post(
        "/api/channels",
        Auth::Bearer(&token),
        json!({"name": "launch", "purpose": "The launch"}),
    )
    .await?;
    let request = |method: Method, path: &str, content_type: &str, body: Vec<u8>| {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
    };
    let json_ct = "application/json";
    let form = "multipart/form-data; boundary=B";
    let up = "/api/channels/launch/files/upload";
    let cases: Vec<(&str, Request<Body>, u16, &str)> = vec![
        (
            "traversal read",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=../../etc/passwd",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "absolute read",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=/etc/passwd",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal list",
            request(
                Method::GET,
                "/api/channels/launch/files?path=/workspace/../..",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal download",
            request(
                Method::GET,
                "/api/channels/launch/files/download?path=..%2F..%2Fhelm.db",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal write",
            request(
                Method::PUT,
                "/api/channels/launch/files",
                json_ct,
                br#"{"path": "../escape.txt", "content": "x"}"#.to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal move",
            request(
                Method::POST,
                "/api/channels/launch/files/move",
                json_ct,
                br#"{"from": "x", "to": "../../x"}"#.to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal delete",
            request(
                Method::DELETE,
                "/api/channels/launch/files?path=..&recursive=true",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal mkdir",
            request(
                Method::POST,
                "/api/channels/launch/files/mkdir",
                json_ct,
                br#"{"path": "/tmp/x"}"#.to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal upload dir",
            request(
                Method::POST,
                &format!("{up}?dir=../..&name=a.txt"),
                "text/plain",
                b"x".to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "delete the workspace",
            request(
                Method::DELETE,
                "/api/channels/launch/files?path=/workspace&recursive=true",
                json_ct,
                vec![],
            )?,
            409,
            "refused",
        ),
        (
            "missing file",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=nothing.txt",
                json_ct,
                vec![],
            )?,
            404,
            "not_found",
        ),
        (
            "NUL in a path",
            request(
                Method::GET,
                "/api/channels/launch/files/stat?path=a%00b",
                json_ct,
                vec![],
            )?,
            422,
            "invalid",
        ),
        (
            "bad line range",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=x&start=5&end=2",
                json_ct,
                vec![],
            )?,
            422,
            "invalid",
        ),
        (
            "raw upload without a name",
            request(Method::POST, up, "text/plain", b"x".to_vec())?,
            422,
            "invalid",
        ),
        (
            "name with ..",
            request(
                Method::POST,
                &format!("{up}?name=.."),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "name with a slash",
            request(
                Method::POST,
                &format!("{up}?name=a%2Fb"),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "name with a control character",
            request(
                Method::POST,
                &format!("{up}?name=a%0Ab"),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "name not UTF-8",
            request(
                Method::POST,
                &format!("{up}?name=%ff%fe.txt"),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "multipart name not UTF-8",
            request(
                Method::POST,
                up,
                form,
                multipart("B", b"\xff\xfe.txt", b"x"),
            )?,
            422,
            "invalid",
        ),
        (
            "multipart name with ..",
            request(Method::POST, up, form, multipart("B", b"../../etc/x", b"x"))?,
            422,
            "invalid",
        ),
        (
            "multipart without files",
            request(Method::POST, up, form, b"--B--\r\n".to_vec())?,
            422,
            "invalid",
        ),
        (
            "malformed multipart",
            request(Method::POST, up, form, b"garbage".to_vec())?,
            400,
            "bad_body",
        ),
        (
            "multipart without a boundary",
            request(Method::POST, up, "multipart/form-data", b"x".to_vec())?,
            400,
            "bad_body",
        ),
        (
            "oversized raw upload",
            request(
                Method::POST,
                &format!("{up}?name=big.bin"),
                "application/octet-stream",
                vec![7u8; 4096],
            )?,
            413,
            "payload_too_large",
        ),
        (
            "oversized multipart upload",
            request(
                Method::POST,
                up,
                form,
                multipart("B", b"big.bin", &[7u8; 4096]),
            )?,
            413,
            "payload_too_large",
        ),
        (
            "terminal too small",
            request(
                Method::POST,
                "/api/channels/launch/terminals",
                json_ct,
                br#"{"rows": 0}"#.to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "unknown terminal",
            request(Method::DELETE, "/api/terminals/424242", json_ct, vec![])?,
            404,
            "not_found",
        ),
        (
            "word as terminal id",
            request(Method::DELETE, "/api/terminals/abc", json_ct, vec![])?,
            400,
            "bad_path",
        ),
        (
            "unknown terminal socket",
            request(Method::GET, "/api/terminals/424242/ws", json_ct, vec![])?,
            404,
            "not_found",
        ),
        (
            "unknown channel's files",
            request(Method::GET, "/api/channels/nowhere/files", json_ct, vec![])?,
            404,
            "not_found",
        ),
        (
            "artifacts of another channel's thread",
            request(
                Method::GET,
                "/api/channels/launch/artifacts?thread=999",
                json_ct,
                vec![],
            )?,
            404,
            "not_found",
        ),
    ];
    let mut failures = Vec::new();
    for (what, request, status, code) in cases {
        let reply = api.send(request).await?;
        if reply.status.as_u16() != status || reply.body["code"] != code {
            failures.push(format!("{what}: {} {}", reply.status, reply.body));
        }
        let text = reply.body.to_string();
        if text.contains(&api.t.data_dir().display().to_string()) {
            failures.push(format!("{what}: names a host path: {text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was written outside the workspace.
    assert!(!api.t.data_dir().join("channels/escape.txt").exists());
    Ok(())
}
