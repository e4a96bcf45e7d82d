//! An Open Terminal client against a channel's computer on a real port:
//! health, execute with waiting and status polling by offset, files, an
//! upload, a terminal over the auth-first WebSocket; and the keys: shown
//! once, one channel's key refused on another, rotation and revocation.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::computer::{multipart, read_until};
use super::kit::{Api, Served, client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_terminal_client_works_a_channel_computer_with_its_key() -> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let http = client()?;
    let mut keys = Vec::new();
    for name in ["alpha", "beta"] {
        http.post(served.url("/api/channels"))
            .bearer_auth(&token)
            .json(&json!({"name": name, "purpose": "Work"}))
            .send()
            .await?;
        let issued = http
            .post(served.url(&format!("/api/channels/{name}/ot-key")))
            .bearer_auth(&token)
            .send()
            .await?;
        assert_eq!(issued.status(), StatusCode::CREATED);
        let issued: Value = issued.json().await?;
        assert!(issued["url"].as_str().unwrap_or_default().ends_with("/ot"));
        keys.push(issued["secret"].as_str().unwrap_or_default().to_string());
    }
    let shown: Value = http
        .get(served.url("/api/channels/alpha/ot-key"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert!(
        !shown.to_string().contains(&keys[0]),
        "the secret is shown once"
    );
    let (alpha, beta) = (&keys[0], &keys[1]);
    let ot = |path: &str| served.url(&format!("/api/channels/alpha/ot{path}"));

    let health: Value = http.get(ot("/health")).send().await?.json().await?;
    assert_eq!(health["status"], "ok");

    // A command: started, waited for a moment, then polled by offset.
    let started = http
        .post(ot("/execute?wait=0.1"))
        .bearer_auth(alpha)
        .json(&json!({"command": "echo one; sleep 1; echo two >&2; pwd; exit 3"}))
        .send()
        .await?;
    assert_eq!(started.status(), StatusCode::OK);
    let started: Value = started.json().await?;
    let id = started["id"].as_str().unwrap_or_default().to_string();
    assert_eq!(started["status"], "running", "{started}");
    let mut offset = 0;
    let mut output = Vec::new();
    let done = loop {
        let status: Value = http
            .get(ot(&format!("/execute/{id}/status?wait=5&offset={offset}")))
            .bearer_auth(alpha)
            .send()
            .await?
            .json()
            .await?;
        output.extend(status["output"].as_array().cloned().unwrap_or_default());
        offset = status["next_offset"].as_u64().unwrap_or_default();
        if status["status"] != "running" {
            break status;
        }
    };
    assert_eq!(done["status"], "done");
    assert_eq!(done["exit_code"], 3);
    let text: String = output
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["type"].as_str().unwrap_or(""),
                e["data"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(text.contains("stdout:one"), "{text}");
    assert!(text.contains("stderr:two"), "{text}");
    assert!(text.contains("/workspace"), "{text}");
    // Reads do not consume: from offset 0 everything is there again.
    let again: Value = http
        .get(ot(&format!("/execute/{id}/status")))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(again["output"].as_array().map(Vec::len), Some(output.len()));
    let listed: Value = http
        .get(ot("/execute"))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(listed[0]["id"], id.as_str());

    // Input to a running command, and a kill.
    let cat: Value = http
        .post(ot("/execute"))
        .bearer_auth(alpha)
        .json(&json!({"command": "cat"}))
        .send()
        .await?
        .json()
        .await?;
    let cat_id = cat["id"].as_str().unwrap_or_default().to_string();
    let input = http
        .post(ot(&format!("/execute/{cat_id}/input")))
        .bearer_auth(alpha)
        .json(&json!({"input": "echoed back\n"}))
        .send()
        .await?;
    assert_eq!(input.status(), StatusCode::OK);
    let mut echoed = false;
    for _ in 0..100 {
        let status: Value = http
            .get(ot(&format!("/execute/{cat_id}/status")))
            .bearer_auth(alpha)
            .send()
            .await?
            .json()
            .await?;
        if status.to_string().contains("echoed back") {
            echoed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(echoed);
    let killed: Value = http
        .delete(ot(&format!("/execute/{cat_id}")))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(killed["status"], "killed");
    // As the protocol answers: input to an ended command is 400, a missing
    // query parameter 422, and errors carry its `detail` beside Helm's code.
    let late = http
        .post(ot(&format!("/execute/{cat_id}/input")))
        .bearer_auth(alpha)
        .json(&json!({"input": "late\n"}))
        .send()
        .await?;
    assert_eq!(late.status(), StatusCode::BAD_REQUEST);
    let late: Value = late.json().await?;
    assert_eq!(late["detail"], late["message"], "{late}");
    let unnamed = http
        .get(ot("/files/read"))
        .bearer_auth(alpha)
        .send()
        .await?;
    assert_eq!(unnamed.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let unnamed: Value = unnamed.json().await?;
    assert_eq!(unnamed["code"], "invalid_query");
    assert!(unnamed["detail"][0]["msg"].is_string(), "{unnamed}");

    // Files.
    let wrote: Value = http
        .post(ot("/files/write"))
        .bearer_auth(alpha)
        .json(&json!({"path": "/workspace/notes/a.txt", "content": "alpha\nbeta\n"}))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(wrote, json!({"path": "/workspace/notes/a.txt", "size": 11}));
    let listing: Value = http
        .get(ot("/files/list?directory=/workspace/notes"))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(listing["dir"], "/workspace/notes");
    assert_eq!(listing["entries"][0]["name"], "a.txt");
    assert_eq!(listing["entries"][0]["type"], "file");
    let read: Value = http
        .get(ot("/files/read?path=notes/a.txt&start_line=2&end_line=2"))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(read["content"], "beta\n");
    assert_eq!(read["total_lines"], 2);
    let uploaded: Value = http
        .post(ot("/files/upload?directory=/workspace/in"))
        .bearer_auth(alpha)
        .header("content-type", "multipart/form-data; boundary=Q")
        .body(multipart("Q", b"data.csv", b"a,b\n1,2\n"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        uploaded,
        json!({"path": "/workspace/in/data.csv", "size": 8})
    );
    let moved = http
        .post(ot("/files/move"))
        .bearer_auth(alpha)
        .json(&json!({"source": "in/data.csv", "destination": "in/renamed.csv"}))
        .send()
        .await?;
    assert_eq!(moved.status(), StatusCode::OK);
    let deleted: Value = http
        .delete(ot("/files/delete?path=/workspace/in"))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(deleted["type"], "directory");
    let escape = http
        .get(ot("/files/read?path=/etc/passwd"))
        .bearer_auth(alpha)
        .send()
        .await?;
    assert_eq!(escape.status(), StatusCode::FORBIDDEN);

    // The key of alpha opens nothing of beta, and beta's nothing of alpha.
    let crossed = http
        .get(served.url("/api/channels/beta/ot/execute"))
        .bearer_auth(alpha)
        .send()
        .await?;
    assert_eq!(crossed.status(), StatusCode::UNAUTHORIZED);
    let crossed = http.get(ot("/files/list")).bearer_auth(beta).send().await?;
    assert_eq!(crossed.status(), StatusCode::UNAUTHORIZED);
    let foreign = http
        .get(served.url(&format!("/api/channels/beta/ot/execute/{id}/status")))
        .bearer_auth(beta)
        .send()
        .await?;
    assert_eq!(
        foreign.status(),
        StatusCode::NOT_FOUND,
        "commands are per channel"
    );

    // A terminal over the auth-first WebSocket.
    let terminal: Value = http
        .post(ot("/api/terminals"))
        .bearer_auth(alpha)
        .send()
        .await?
        .json()
        .await?;
    let tid = terminal["id"].as_str().unwrap_or_default().to_string();
    assert!(terminal["pid"].as_u64().is_some());
    let ws = served.ws_url(&format!("/api/channels/alpha/ot/api/terminals/{tid}"));
    // With beta's key it is refused.
    let (mut refused, _) = tokio_tungstenite::connect_async(ws.as_str()).await?;
    refused
        .send(Message::Text(
            json!({"type": "auth", "token": beta}).to_string().into(),
        ))
        .await?;
    match refused.next().await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 4001),
        other => anyhow::bail!("expected a 4001 close, got {other:?}"),
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(ws.as_str()).await?;
    socket
        .send(Message::Text(
            json!({"type": "auth", "token": alpha}).to_string().into(),
        ))
        .await?;
    socket
        .send(Message::Text(
            json!({"type": "resize", "rows": 30, "cols": 90})
                .to_string()
                .into(),
        ))
        .await?;
    socket
        .send(Message::Binary(b"pwd; echo OT-$((40+2))\n".to_vec().into()))
        .await?;
    let seen = read_until(&mut socket, "OT-42").await?;
    assert!(seen.contains("/workspace"), "{seen}");
    drop(socket);
    // A terminal opened through the protocol ends with its socket.
    let mut gone = false;
    for _ in 0..100 {
        let listed: Value = http
            .get(ot("/api/terminals"))
            .bearer_auth(alpha)
            .send()
            .await?
            .json()
            .await?;
        if listed == json!([]) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the terminal closed with its socket");

    // Rotating stops the old key at once; revoking stops the new one.
    let rotated: Value = http
        .post(served.url("/api/channels/alpha/ot-key/rotate"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    let new_key = rotated["secret"].as_str().unwrap_or_default().to_string();
    assert_eq!(
        http.get(ot("/execute"))
            .bearer_auth(alpha)
            .send()
            .await?
            .status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        http.get(ot("/execute"))
            .bearer_auth(&new_key)
            .send()
            .await?
            .status(),
        StatusCode::OK
    );
    let revoked = http
        .delete(served.url("/api/channels/alpha/ot-key"))
        .bearer_auth(&token)
        .send()
        .await?;
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        http.get(ot("/execute"))
            .bearer_auth(&new_key)
            .send()
            .await?
            .status(),
        StatusCode::UNAUTHORIZED
    );
    served.stop().await
}

/// A Helm server's channel is another Helm's remote computer: that Helm's
/// channels run their commands in the box channel's sandbox (each in
/// `/workspace/channels/<id>` of it), and their files, searches and stdin
/// go through the same Open Terminal surface.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helm_servers_channel_is_another_helms_remote_computer() -> anyhow::Result<()> {
    use helm_core::exec::{CommandSpec, GrepQuery, Isolation, LocalComputers, RemoteComputers};
    use helm_core::model::ChannelRef;

    let served = Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let http = client()?;
    http.post(served.url("/api/channels"))
        .bearer_auth(&token)
        .json(&json!({"name": "box", "purpose": "The build box other Helms run on."}))
        .send()
        .await?;
    let issued: Value = http
        .post(served.url("/api/channels/box/ot-key"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    let url = issued["url"].as_str().unwrap_or_default().to_string();
    let key = issued["secret"].as_str().unwrap_or_default().to_string();

    let node = helm_tests::TestHelm::try_with_options(|o| {
        let host = std::sync::Arc::new(LocalComputers::new(o.computer, None));
        let computers = std::sync::Arc::new(RemoteComputers::new(&url, &key, host)?);
        o.ports.computers = Some(computers.clone());
        o.ports.files = Some(computers.clone());
        o.ports.terminals = Some(computers);
        Ok(())
    })
    .await?;
    let record = node
        .helm
        .create_channel(&node.captain, "ops", "Runs the release scripts.")
        .await?;
    let ops = ChannelRef::Id(record.channel.id);
    let id = record.channel.id;

    let run = node
        .helm
        .exec(
            &node.captain,
            &ops,
            CommandSpec::new("pwd; echo out; echo err >&2; exit 4"),
        )
        .await?;
    assert_eq!(run.isolation, Isolation::Remote);
    assert_eq!(run.exit_code, Some(4), "{run:?}");
    // The box runs commands without a terminal: the streams stay apart,
    // and the box's own sandbox shows its workspace as /workspace.
    assert_eq!(run.stdout, format!("/workspace/channels/{id}\nout\n"));
    assert_eq!(run.stderr, "err\n");

    // Stdin written while it runs, then closed.
    let cat = node
        .helm
        .start_command(&node.captain, &ops, CommandSpec::new("cat; echo closed"))
        .await?;
    cat.write_stdin(b"line one\n").await?;
    cat.close_stdin().await?;
    let done = tokio::time::timeout(Duration::from_secs(20), cat.wait()).await??;
    assert_eq!(done.stdout, "line one\nclosed\n", "{done:?}");

    // Files and searches, seen on the box's side in the box's workspace.
    let files = node.helm.files(&node.captain, &ops).await?;
    files
        .write("src/main.rs", b"fn main() {\n    ship();\n}\n".to_vec())
        .await?;
    let on_box: Value = http
        .get(served.url(&format!(
            "/api/channels/box/files/read?path=channels/{id}/src/main.rs"
        )))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        on_box["content"], "fn main() {\n    ship();\n}\n",
        "{on_box}"
    );
    let found = files.grep(GrepQuery::new("sh.p")).await?;
    assert_eq!(found.matches.len(), 1, "{found:?}");
    assert_eq!(found.matches[0].path, "/workspace/src/main.rs");
    assert_eq!(found.matches[0].line, 2);
    let globbed = files.glob("*.rs").await?;
    assert_eq!(globbed.paths, ["/workspace/src/main.rs"]);
    let text = files.read("src/main.rs", None).await?;
    assert_eq!(text.total_lines, 3);

    // A terminal: a shell in the box's sandbox, in this channel's directory.
    let terminal = node
        .helm
        .open_terminal(&node.captain, &ops, Default::default())
        .await?;
    terminal.write(b"echo \"in $(pwd)\"\n").await?;
    let wanted = format!("in /workspace/channels/{id}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&terminal.scrollback()).contains(&wanted) {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&terminal.scrollback())
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    node.helm
        .close_terminal(&node.captain, terminal.id())
        .await?;
    assert!(!terminal.is_running());

    // An escape is refused before the box is asked.
    let escape = files.read("../../etc/passwd", None).await;
    assert!(
        matches!(escape, Err(helm_core::Error::Forbidden(_))),
        "{escape:?}"
    );
    served.stop().await?;
    Ok(())
}
