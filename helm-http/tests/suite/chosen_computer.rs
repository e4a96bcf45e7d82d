//! A server whose config file names computers offers them (`GET
//! /api/status`), a channel made with one runs its commands there, and a
//! name the config does not give is a 422 that lists the ones it does.

use serde_json::json;

use super::nodes::captain;
use super::process::Process;
use helm_tests::open_terminal::OpenTerminal;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_made_with_a_named_computer_runs_there() -> anyhow::Result<()> {
    let computer = OpenTerminal::start().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data)?;
    std::fs::write(
        data.join("helm.toml"),
        format!(
            "[computers.box]\nat = \"{}\"\nkey_env = \"HELM_TEST_BOX_KEY\"\n",
            computer.url
        ),
    )?;
    let mut server = Process::spawn_env(&data, &[], &[("HELM_TEST_BOX_KEY", &computer.key)])?;
    server.wait_ready().await?;
    let ada = captain(&server, &data).await?;
    let status = ada.get(&server, "/api/status").await?;
    assert_eq!(status["computers"], json!(["box"]), "{status}");

    let (code, refused) = ada
        .call(
            reqwest::Method::POST,
            &server,
            "/api/channels",
            json!({"name": "ml", "purpose": "Training.", "computer": "gpu"}),
        )
        .await?;
    assert_eq!(
        (code, refused["code"].as_str()),
        (422, Some("invalid")),
        "{refused}"
    );
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("box") && !message.contains("--"),
        "{refused}"
    );

    let made = ada
        .post(
            &server,
            "/api/channels",
            json!({"name": "builds", "purpose": "Builds.", "computer": "box"}),
        )
        .await?;
    let id = made["channel"]["id"].as_i64().unwrap_or_default();
    assert_eq!(
        made["profile"]["capability_policy"]["computer"], "box",
        "{made}"
    );
    let run = ada
        .post(
            &server,
            "/api/channels/builds/exec",
            json!({"command": "echo built > out.txt && cat out.txt"}),
        )
        .await?;
    assert_eq!(
        (run["exit_code"].as_i64(), run["isolation"].as_str()),
        (Some(0), Some("remote")),
        "{run}"
    );
    let there = computer.home.join(format!("channels/{id}/out.txt"));
    assert_eq!(std::fs::read_to_string(there)?, "built\n");
    Ok(())
}
