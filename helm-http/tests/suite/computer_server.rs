//! `helm-http computer`: a host serving its computer to other Helm servers
//! over Open Terminal. A Helm server whose `computer.at` names it runs its
//! channels' commands, files and terminals there, each channel in its own
//! directory of that computer's sandbox; the key is required, paths outside
//! the workspace are refused, and a missing or short key stops the start.

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::computer::read_until;
use super::kit::{client, events_ws};
use super::nodes::captain;
use super::process::Process;

const KEY: &str = "computer-key-for-the-test-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helm_computer_server_runs_another_servers_channels() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (box_data, data) = (dir.path().join("box"), dir.path().join("helm"));
    // As docs/operations.md writes it: the subcommand, then the flags.
    let mut computer =
        Process::spawn_args(&["computer"], &box_data, &[], &[("HELM_COMPUTER_KEY", KEY)])?;
    computer.wait_ready().await?;
    let mut server = Process::spawn_env(
        &data,
        &[],
        &[("HELM_COMPUTER", &computer.url), ("HELM_COMPUTER_KEY", KEY)],
    )?;
    server.wait_ready().await?;
    let ada = captain(&server, &data).await?;
    let made = ada
        .post(
            &server,
            "/api/channels",
            json!({"name": "builds", "purpose": "Builds on the box."}),
        )
        .await?;
    let id = made["channel"]["id"].as_i64().unwrap_or_default();

    // A file written through the server, read by a command on the box.
    let (code, written) = ada
        .call(
            reqwest::Method::PUT,
            &server,
            "/api/channels/builds/files",
            json!({"path": "plan.md", "content": "ship it\n"}),
        )
        .await?;
    assert_eq!(code, 200, "{written}");
    let run = ada
        .post(
            &server,
            "/api/channels/builds/exec",
            json!({"command": "cat plan.md && pwd && echo made > made.txt"}),
        )
        .await?;
    assert_eq!(run["exit_code"], 0, "{run}");
    assert_eq!(run["isolation"], "remote", "{run}");
    assert!(
        run["stdout"]
            .as_str()
            .unwrap_or_default()
            .starts_with("ship it\n"),
        "{run}"
    );
    // On the box's disk, in this channel's directory of the served
    // computer's workspace.
    let on_box = std::fs::read_dir(box_data.join("channels"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(format!("workspace/channels/{id}/made.txt")))
        .find(|p| p.exists());
    let on_box = on_box.ok_or_else(|| anyhow::anyhow!("made.txt is not on the box"))?;
    assert_eq!(std::fs::read_to_string(on_box)?, "made\n");
    assert!(
        !data
            .join(format!("channels/{id}/workspace/made.txt"))
            .exists()
    );

    // A path outside the workspace is refused before anything is sent.
    let (code, escape) = ada
        .call(
            reqwest::Method::GET,
            &server,
            "/api/channels/builds/files/read?path=/etc/passwd",
            Value::Null,
        )
        .await?;
    assert_eq!(
        (code, escape["code"].as_str()),
        (403, Some("forbidden")),
        "{escape}"
    );

    // A terminal opened on the server is a shell on the box.
    let opened = ada
        .post(
            &server,
            "/api/channels/builds/terminals",
            json!({"rows": 24, "cols": 80}),
        )
        .await?;
    let terminal = opened["id"].as_u64().unwrap_or_default();
    let url = format!("{}/api/terminals/{terminal}/ws", server.ws_url());
    let mut shell = events_ws(&url, &ada.token).await?;
    shell
        .send(Message::Binary(
            b"cat made.txt; echo MARK-$((6*7))\n".to_vec().into(),
        ))
        .await?;
    let seen = read_until(&mut shell, "MARK-42").await?;
    assert!(seen.contains("made"), "{seen}");
    drop(shell);

    // The box itself wants its key, and no other.
    let http = client()?;
    let cwd = |key: &'static str| {
        http.get(format!("{}/files/cwd", computer.url))
            .bearer_auth(key)
            .send()
    };
    assert_eq!(cwd(KEY).await?.status(), 200);
    assert_eq!(
        cwd("another-key-of-the-same-length-0123").await?.status(),
        401
    );
    let health = http.get(format!("{}/healthz", computer.url)).send().await?;
    assert_eq!(health.status(), 200);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_computer_server_without_a_long_key_does_not_start() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    for (env, expected) in [
        (vec![], "HELM_COMPUTER_KEY is not set"),
        (vec![("HELM_COMPUTER_KEY", "short")], "at least 16"),
    ] {
        let mut computer = Process::spawn_env(&dir.path().join("box"), &["computer"], &env)?;
        let (status, stderr) = computer.finish()?;
        assert!(!status.success(), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
    Ok(())
}
