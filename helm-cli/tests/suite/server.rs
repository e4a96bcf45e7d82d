//! `1helm --server URL --token T …` against a real server on a loopback
//! port: the same commands, output and exit codes as on a data directory;
//! and a data directory held by a running server refuses direct use.

use std::time::Duration;

use helm_core::lock::{DataLock, ServerInfo};
use helm_core::{AccountRequest, Helm, HelmOptions, InitOptions};
use helm_http::{AppState, ServerConfig};
use helm_tests::mock::{Behaviour, MockOpenAi, fast_http_options};

use super::kit::{Cli, Run, bare};

/// A server on a free loopback port serving a fresh data dir, holding it as
/// `helm-http` does, with the Captain's setup done and an API token.
pub(super) struct Server {
    pub(super) cli: Cli,
    pub(super) url: String,
    pub(super) token: String,
    pub(super) helm: Helm,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _lock: DataLock,
}

impl Server {
    pub(super) async fn start() -> anyhow::Result<Self> {
        let cli = Cli::empty()?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let lock = DataLock::server(
            &cli.data(),
            &ServerInfo {
                url: url.clone(),
                pid: std::process::id(),
                started: jiff::Timestamp::now(),
            },
            Duration::ZERO,
        )?;
        let mut options = HelmOptions::new(cli.data());
        options.provider_http = fast_http_options();
        let (helm, _) = Helm::init(options, InitOptions::default()).await?;
        let captain = helm
            .complete_setup(AccountRequest {
                name: "ada".into(),
                display_name: None,
                password: "correct horse battery staple".into(),
            })
            .await?;
        let token = helm.create_api_token(&captain, "cli", None).await?.secret;
        helm.start_runtime().await?;
        let state = AppState::new(
            helm.clone(),
            ServerConfig {
                data: cli.data(),
                ..ServerConfig::default()
            },
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(helm_http::serve(listener, state, async move {
            let _ = stopped.await;
        }));
        Ok(Server {
            cli,
            url,
            token,
            helm,
            stop: Some(stop),
            _lock: lock,
        })
    }

    /// Runs `1helm --server URL --token T ARGS…`.
    pub(super) fn run(&self, args: &[&str]) -> anyhow::Result<Run> {
        self.run_as(&self.token, args)
    }

    /// Runs `1helm --server URL --token TOKEN ARGS…`, as that token's person.
    pub(super) fn run_as(&self, token: &str, args: &[&str]) -> anyhow::Result<Run> {
        let mut all = vec!["--server", &self.url, "--token", token];
        all.extend_from_slice(args);
        bare(&all)
    }

    /// Adds a member named `name`, and returns an API token of theirs.
    pub(super) async fn member_token(&self, name: &str) -> anyhow::Result<String> {
        let captain = self.helm.captain().await?;
        let member = self
            .helm
            .add_user(&captain, name, helm_core::model::Role::Member)
            .await?;
        Ok(self
            .helm
            .create_api_token(&member, "cli", None)
            .await?
            .secret)
    }

    pub(super) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.helm.shutdown_runtime(false).await;
    }
}

pub(super) fn ok(run: &Run) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.code == 0,
        "exit {}: {}{}",
        run.code,
        run.stdout,
        run.stderr
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_work_through_a_server() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let mock = MockOpenAi::start().await?;

    let status = server.run(&["status"])?;
    ok(&status)?;
    assert!(
        status.stdout.contains("Captain:   ada"),
        "{}",
        status.stdout
    );
    assert!(status.stdout.contains(&server.url), "{}", status.stdout);

    ok(&server.run(&[
        "provider",
        "add",
        "mock",
        "--kind",
        "openai",
        "--base-url",
        &mock.base_url(),
        "--model",
        "mock-model",
        "--api-key-env",
        "MOCK_KEY",
        "--default",
    ])?)?;
    let providers = server.run(&["provider", "list"])?;
    ok(&providers)?;
    assert!(
        providers.stdout.contains("env:MOCK_KEY"),
        "{}",
        providers.stdout
    );
    // The key is not set where the server runs; the mock needs none. The
    // provider is replaced, which must be asked for.
    let again = [
        "provider",
        "add",
        "mock",
        "--kind",
        "openai",
        "--base-url",
        &mock.base_url(),
        "--model",
        "mock-model",
        "--default",
    ];
    let refused = server.run(&again)?;
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("a provider named mock is registered already")
            && refused.stderr.contains("--replace"),
        "{}",
        refused.stderr
    );
    ok(&server.run(&[&again[..], &["--replace"]].concat())?)?;
    // Without the key variable the mock is reachable: it says what it serves.
    let checked = server.run(&["provider", "check", "mock"])?;
    ok(&checked)?;
    assert!(
        checked
            .stdout
            .contains("mock answers and serves 1 model: mock-model"),
        "{}",
        checked.stdout
    );

    let created = server.run(&[
        "channel",
        "create",
        "launch",
        "--purpose",
        "The product launch.",
    ])?;
    ok(&created)?;
    assert!(
        created
            .stdout
            .contains("Created #launch with its resident agent @launch-agent"),
        "{}",
        created.stdout
    );
    let list = server.run(&["channel", "list"])?;
    ok(&list)?;
    assert!(
        list.stdout.contains("#launch") && list.stdout.contains("#main"),
        "{}",
        list.stdout
    );
    let shown = server.run(&["--json", "channel", "show", "launch"])?;
    ok(&shown)?;
    let value = shown.json()?;
    assert_eq!(value["agent"]["handle"], "launch-agent");
    assert_eq!(value["model"]["provider"], "mock");
    assert!(
        value["workspace_dir"]
            .as_str()
            .unwrap_or_default()
            .ends_with("workspace")
    );

    // say posts, then streams the reply from the event WebSocket.
    mock.push(Behaviour::tool_call(
        "write_file",
        r##"{"path": "plan.md", "content": "# Plan"}"##,
    ));
    mock.push(Behaviour::text("Wrote plan.md with the plan."));
    let said = server.run(&["say", "launch", "@launch-agent write the plan"])?;
    ok(&said)?;
    assert!(
        said.stdout.contains("thread 3: write the plan")
            || said.stdout.contains(": write the plan"),
        "{}",
        said.stdout
    );
    assert!(
        said.stdout.contains("Wrote plan.md with the plan."),
        "{}",
        said.stdout
    );
    assert!(
        said.stdout.contains("write_file") || said.stdout.contains("plan.md"),
        "{}",
        said.stdout
    );

    let threads = server.run(&["--json", "thread", "list", "launch"])?;
    ok(&threads)?;
    let id = threads.json()?[0]["id"]
        .as_i64()
        .unwrap_or_default()
        .to_string();
    let shown = server.run(&["thread", "show", &id])?;
    ok(&shown)?;
    assert!(
        shown
            .stdout
            .contains("@launch-agent via mock/mock-model, 20 tokens in, 10 out"),
        "{}",
        shown.stdout
    );
    // A summary asked for through the server is written by its model…
    mock.push(Behaviour::text(
        r#"{"goal": "Write the plan", "work_done": "Wrote plan.md", "result": "The plan is in plan.md", "open_items": [], "decisions": ["The plan lives in plan.md"]}"#,
    ));
    let summarized = server.run(&["thread", "summarize", &id])?;
    ok(&summarized)?;
    assert!(
        summarized
            .stdout
            .contains(&format!("Summary of thread {id}"))
            && summarized.stdout.contains("The plan lives in plan.md"),
        "{}",
        summarized.stdout
    );
    // …and resolving leaves the summary to the server, saying so.
    let resolved = server.run(&["thread", "resolve", &id])?;
    ok(&resolved)?;
    assert!(
        resolved
            .stdout
            .contains("The server writes its summary shortly"),
        "{}",
        resolved.stdout
    );
    ok(&server.run(&["thread", "reopen", &id])?)?;
    let activity = server.run(&["activity", "launch"])?;
    ok(&activity)?;
    assert!(
        activity.stdout.contains("write_file"),
        "{}",
        activity.stdout
    );

    ok(&server.run(&["user", "add", "mira"])?)?;
    let users = server.run(&["user", "list"])?;
    assert!(
        users.stdout.contains("mira") && users.stdout.contains("ada"),
        "{}",
        users.stdout
    );

    let set_other = [
        "channel",
        "set-model",
        "launch",
        "--provider",
        "mock",
        "--model",
        "other",
    ];
    // A model the provider does not list is refused when it is chosen.
    let unlisted = server.run(&set_other)?;
    assert_eq!(unlisted.code, 2, "{}", unlisted.stderr);
    assert!(
        unlisted
            .stderr
            .contains("mock does not serve other; it serves mock-model"),
        "{}",
        unlisted.stderr
    );
    mock.serve_models(&["mock-model", "other"]);
    let model = server.run(&set_other)?;
    ok(&model)?;
    assert!(
        model
            .stdout
            .contains("served by mock / other (channel setting)"),
        "{}",
        model.stdout
    );
    let ghost = server.run(&["channel", "set-model", "launch", "--provider", "ghost"])?;
    assert_eq!(ghost.code, 3, "{}", ghost.stderr);

    // A quick note through the server lands where the files API reads it.
    let note = server.run(&["note", "launch", "Ship on the 3rd", "--title", "Dates"])?;
    ok(&note)?;
    assert!(
        note.stdout.starts_with("Saved /workspace/notes/") && note.stdout.contains("-dates.md"),
        "{}",
        note.stdout
    );
    let notes = server
        .run(&["files", "ls", "launch", "notes", "--json"])?
        .json()?;
    let path = notes[0]["path"].as_str().unwrap_or_default().to_string();
    let cat = server.run(&["files", "cat", "launch", &path])?;
    assert_eq!(cat.stdout, "# Dates\n\nShip on the 3rd\n");

    ok(&server.run(&["channel", "archive", "launch"])?)?;
    ok(&server.run(&["channel", "restore", "#launch"])?)?;
    let unconfirmed = server.run(&["channel", "delete", "launch"])?;
    assert_eq!(unconfirmed.code, 5, "{}", unconfirmed.stderr);
    // The server's words name no flag; the CLI adds its own hint.
    assert!(
        unconfirmed.stderr.contains("confirm by naming it: launch")
            && unconfirmed
                .stderr
                .contains("hint: run it again with --confirm NAME"),
        "{}",
        unconfirmed.stderr
    );
    // A rename keeps the agent and its handle.
    let renamed = server.run(&["channel", "rename", "launch", "liftoff", "--json"])?;
    ok(&renamed)?;
    let renamed = renamed.json()?;
    assert_eq!(renamed["channel"]["name"], "liftoff");
    assert_eq!(renamed["agent"]["handle"], "launch-agent");
    ok(&server.run(&["channel", "rename", "liftoff", "launch"])?)?;
    ok(&server.run(&["channel", "archive", "launch"])?)?;
    ok(&server.run(&["channel", "delete", "launch", "--confirm", "launch"])?)?;
    assert_eq!(server.run(&["channel", "show", "launch"])?.code, 3);
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_and_local_print_the_same_and_exit_the_same() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let local = Cli::init()?;
    for args in [
        vec!["channel", "create", "launch", "--purpose", "The launch."],
        vec![
            "channel",
            "create",
            "ops",
            "--purpose",
            "Operations.",
            "--private",
        ],
        vec!["user", "add", "mira", "--role", "admin"],
    ] {
        ok(&server.run(&args)?)?;
        ok(&local.run(&args)?)?;
    }
    for args in [
        vec!["channel", "list"],
        vec!["channel", "list", "--all"],
        vec!["provider", "list"],
        vec!["--json", "channel", "list"],
        vec!["thread", "list", "launch"],
        vec!["activity", "ops"],
    ] {
        let (remote, here) = (server.run(&args)?, local.run(&args)?);
        let strip_times = |s: &str| -> String {
            s.lines()
                .map(|l| if l.contains("\"created\"") { "" } else { l })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            (remote.code, strip_times(&remote.stdout)),
            (here.code, strip_times(&here.stdout)),
            "{args:?}"
        );
    }
    // Errors: the same exit codes and messages.
    for (args, code) in [
        (vec!["channel", "show", "nowhere"], 3),
        (vec!["channel", "create", "launch", "--purpose", "again"], 4),
        (vec!["channel", "create", "bad name", "--purpose", "x"], 2),
        (vec!["channel", "create", "quiet"], 2),
        (
            vec!["channel", "delete", "launch", "--confirm", "launch"],
            5,
        ),
        (vec!["channel", "archive", "main"], 5),
        (vec!["thread", "show", "999"], 3),
    ] {
        let (remote, here) = (server.run(&args)?, local.run(&args)?);
        assert_eq!(remote.code, code, "{args:?}: {}", remote.stderr);
        assert_eq!(here.code, code, "{args:?}: {}", here.stderr);
        assert_eq!(remote.stderr, here.stderr, "{args:?}");
    }
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_data_dir_refuses_direct_use_and_names_the_server() -> anyhow::Result<()> {
    let server = Server::start().await?;
    for args in [vec!["channel", "list"], vec!["status"], vec!["init"]] {
        let run = server.cli.run(&args)?;
        assert_eq!(run.code, 6, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("--server {}", server.url)),
            "{}",
            run.stderr
        );
    }
    // A wrong token, and a server that is not there.
    let refused = bare(&["--server", &server.url, "--token", "helm_nope", "status"])?;
    assert_eq!(refused.code, 7, "{}", refused.stderr);
    let missing = bare(&["--server", &server.url, "status"])?;
    assert_eq!(missing.code, 7, "{}", missing.stderr);
    assert!(missing.stderr.contains("--token"), "{}", missing.stderr);
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let down = bare(&[
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--token",
        &server.token,
        "status",
    ])?;
    assert_eq!(down.code, 6, "{}", down.stderr);
    assert!(
        down.stderr.contains("cannot reach the server"),
        "{}",
        down.stderr
    );
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_say_stops_at_an_approval_only_the_captain_can_give() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let mock = MockOpenAi::start().await?;
    let base = mock.base_url();
    ok(&server.run(&[
        "provider",
        "add",
        "mock",
        "--kind",
        "openai",
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--default",
    ])?)?;
    ok(&server.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let token = server.member_token("mira").await?;
    let as_mira = |args: &[&str]| server.run_as(&token, args);

    // Skipper's host command needs the Captain's approval: mira's say
    // stops following, says who can approve it and how, and exits 5.
    let host_check = r#"{"command": "echo from-the-host"}"#;
    mock.push(Behaviour::tool_call("host_command", host_check));
    mock.push(Behaviour::text("The host is fine."));
    let said = as_mira(&["say", "launch", "@skipper is the host healthy?"])?;
    assert_eq!(said.code, 5, "{}{}", said.stdout, said.stderr);
    let captain = server.helm.captain().await?;
    let pending = server.helm.approvals(&captain, true).await?;
    let [approval] = pending.as_slice() else {
        anyhow::bail!("one approval waits: {pending:?}");
    };
    let id = approval.id;
    for words in [
        format!("is waiting for approval {id}"),
        "Only the Captain or an admin can approve it".into(),
        format!("`1helm approve {id}`"),
    ] {
        assert!(said.stdout.contains(&words), "{words}: {}", said.stdout);
    }

    // The turn still waits on the server: once the Captain approves, the
    // agent goes on without mira following it.
    ok(&server.run(&["approve", &id.to_string()])?)?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let threads = server.run(&[
            "--json",
            "thread",
            "show",
            &approval
                .thread_id
                .map(|t| t.to_string())
                .unwrap_or_default(),
        ])?;
        if threads.stdout.contains("The host is fine.") {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the agent did not go on: {}",
            threads.stdout
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // With --json, stdout keeps to events; the notice goes to stderr.
    mock.push(Behaviour::tool_call("host_command", host_check));
    let json = as_mira(&["--json", "say", "launch", "@skipper and now?"])?;
    assert_eq!(json.code, 5, "{}{}", json.stdout, json.stderr);
    assert!(json.stderr.contains("Only the Captain"), "{}", json.stderr);
    for line in json.stdout.lines() {
        serde_json::from_str::<serde_json::Value>(line)?;
    }

    // The Captain's own say is not stopped: her request is hers to give.
    mock.push(Behaviour::tool_call("host_command", host_check));
    mock.push(Behaviour::text("Still fine."));
    let hers = server.run(&["say", "launch", "@skipper check the host again"])?;
    ok(&hers)?;
    assert!(hers.stdout.contains("Still fine."), "{}", hers.stdout);
    assert!(!hers.stdout.contains("Only the Captain"), "{}", hers.stdout);
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_status_through_a_server_leaves_out_what_only_admins_see() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let token = server.member_token("mira").await?;
    let as_mira = |args: &[&str]| server.run_as(&token, args);
    let status = as_mira(&["status"])?;
    ok(&status)?;
    assert!(
        status.stdout.contains("Captain:   ada"),
        "{}",
        status.stdout
    );
    assert!(
        !status.stdout.contains("Threads:") && !status.stdout.contains("Messages:"),
        "{}",
        status.stdout
    );
    let json: serde_json::Value = serde_json::from_str(&as_mira(&["--json", "status"])?.stdout)?;
    assert!(json.get("threads").is_none(), "{json}");
    // The Captain is told them.
    let captains = server.run(&["status"])?;
    ok(&captains)?;
    assert!(
        captains.stdout.contains("Threads:   "),
        "{}",
        captains.stdout
    );
    assert!(
        captains.stdout.contains("Messages:  "),
        "{}",
        captains.stdout
    );
    server.stop().await;
    Ok(())
}
