//! `POST /api/channels/{channel}/exec`: a command in the channel's computer,
//! run as its agent would (in `/workspace`, confined), answered once it
//! ends; bad input is a clear 4xx and an archived channel refuses.

use serde_json::json;

use super::kit::{Api, Auth};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_runs_in_the_workspace_and_reports_its_exit() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let token = api.setup().await?;
    let auth = Auth::Bearer(&token);
    let made = api
        .post(
            "/api/channels",
            auth,
            json!({"name": "ops", "purpose": "Runs things."}),
        )
        .await?;
    assert_eq!(made.status, 201, "{:?}", made.body);

    let ran = api
        .post(
            "/api/channels/ops/exec",
            auth,
            json!({"command": "echo made > made.txt && cat made.txt && exit 3"}),
        )
        .await?;
    assert_eq!(ran.status, 200, "{:?}", ran.body);
    assert_eq!(ran.body["exit_code"], 3);
    assert_eq!(ran.body["stdout"], "made\n");
    assert!(ran.body["isolation"].is_string());
    // What the command wrote is in the channel's workspace.
    let read = api
        .get("/api/channels/ops/files/read?path=made.txt", auth)
        .await?;
    assert_eq!(read.body["content"], "made\n");

    let slow = api
        .post(
            "/api/channels/ops/exec",
            auth,
            json!({"command": "sleep 5", "timeout_secs": 0.3}),
        )
        .await?;
    assert_eq!(slow.status, 200);
    assert_eq!(slow.body["timed_out"], true);

    for (body, status, code) in [
        (json!({"command": "  "}), 422, "invalid"),
        (
            json!({"command": "true", "timeout_secs": 0}),
            422,
            "invalid",
        ),
        (
            json!({"command": "true", "timeout_secs": 99999}),
            422,
            "invalid",
        ),
        (
            json!({"command": "true", "shell": "zsh"}),
            422,
            "invalid_body",
        ),
        (json!({"command": "true", "cwd": "../.."}), 403, "forbidden"),
    ] {
        let reply = api
            .post("/api/channels/ops/exec", auth, body.clone())
            .await?;
        assert_eq!(reply.status, status, "{body}: {:?}", reply.body);
        assert_eq!(reply.body["code"], code, "{body}: {:?}", reply.body);
    }

    api.post("/api/channels/ops/archive", auth, json!({}))
        .await?;
    let refused = api
        .post("/api/channels/ops/exec", auth, json!({"command": "true"}))
        .await?;
    assert_eq!(refused.status, 409, "{:?}", refused.body);
    Ok(())
}
