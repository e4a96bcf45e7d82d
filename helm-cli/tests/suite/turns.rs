//! `1helm say` and friends against a mock OpenAI-compatible server, and a
//! driver killed with SIGKILL in the middle of a streaming turn.

use std::process::{Command, Stdio};
use std::time::Duration;

use helm_core::model::{Author, MessageStatus, ThreadId, TurnState};
use helm_core::{Helm, HelmOptions};
use helm_tests::mock::{Behaviour, MockOpenAi, fast_http_options};

use super::kit::Cli;

async fn setup(mock: &MockOpenAi) -> anyhow::Result<Cli> {
    let cli = Cli::init()?;
    let base = mock.base_url();
    let added = cli.run(&[
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
    ])?;
    anyhow::ensure!(added.code == 0, "{}", added.stderr);
    let created = cli.run(&[
        "channel",
        "create",
        "launch",
        "--purpose",
        "The product launch.",
    ])?;
    anyhow::ensure!(created.code == 0, "{}", created.stderr);
    Ok(cli)
}

fn open_options(cli: &Cli) -> HelmOptions {
    let mut options = HelmOptions::new(cli.data());
    options.provider_http = fast_http_options();
    options
}

#[tokio::test(flavor = "multi_thread")]
async fn say_streams_the_reply_and_the_tool_activity() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let cli = setup(&mock).await?;
    mock.push(Behaviour::tool_call(
        "write_file",
        r##"{"path": "plan.md", "content": "# Plan"}"##,
    ));
    mock.push(Behaviour::text("Wrote plan.md with the plan."));
    let run = cli.run(&["say", "launch", "@launch-agent write the plan"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("thread 1: write the plan"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("⚙ write_file /workspace/plan.md")
            || run.stdout.contains("⚙ write_file plan.md"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("→ ok"), "{}", run.stdout);
    assert!(
        run.stdout.contains("Wrote plan.md with the plan."),
        "{}",
        run.stdout
    );

    // The same session continues without a mention; --json streams events.
    mock.push(Behaviour::text("Added a timeline."));
    let json = cli.run(&["say", "launch", "add a timeline", "--thread", "1", "--json"])?;
    assert_eq!(json.code, 0, "{}", json.stderr);
    let types: Vec<String> = json
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["type"].as_str().map(str::to_string))
        .collect();
    for expected in [
        "message.created",
        "turn.queued",
        "turn.started",
        "message.delta",
        "message.completed",
        "turn.completed",
    ] {
        assert!(
            types.iter().any(|t| t == expected),
            "{expected} missing in {types:?}"
        );
    }

    let threads = cli.run(&["thread", "list", "launch", "--json"])?.json()?;
    assert_eq!(threads[0]["title"], "write the plan");
    let shown = cli.run(&["thread", "show", "1"])?;
    // With what the turn's model calls used (the mock reports 10 and 5 a call).
    assert!(
        shown
            .stdout
            .contains("@launch-agent via mock/mock-model, 10 tokens in, 5 out:"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("Added a timeline."));
    // The channel by name, and the date with the first message's time.
    assert!(
        shown
            .stdout
            .starts_with("Thread 1 in #launch: write the plan (open)"),
        "{}",
        shown.stdout
    );
    let headers: Vec<&str> = shown
        .stdout
        .split("\n\n")
        .skip(1)
        .filter_map(|block| block.lines().next())
        .collect();
    let dated = |h: &&str| h.len() > 10 && h.as_bytes()[4] == b'-' && h.contains(" UTC ");
    assert!(
        headers.first().is_some_and(dated) && headers.iter().skip(1).any(|h| !dated(h)),
        "the first message dated, the same day's next ones by time alone: {headers:?}"
    );
    let activity = cli.run(&["activity", "launch", "--json"])?.json()?;
    assert_eq!(activity[0]["tool"], "write_file");
    assert_eq!(activity[0]["status"], "ok");
    mock.push(Behaviour::text(
        r#"{"goal": "A plan", "work_done": "Wrote plan.md", "result": "Plan and timeline ready", "open_items": [], "decisions": ["Ship the plan"]}"#,
    ));
    let resolved = cli.run(&["thread", "resolve", "1", "--json"])?.json()?;
    assert_eq!(resolved["thread"]["status"], "resolved");
    assert_eq!(
        resolved["summary"]["summary"]["decisions"][0],
        "Ship the plan"
    );
    let summaries = cli
        .run(&["memory", "list", "launch", "--kind", "summary", "--json"])?
        .json()?;
    assert!(
        summaries[0]["content"]
            .as_str()
            .unwrap_or("")
            .contains("Plan and timeline ready")
    );
    let providers = cli.run(&["provider", "list", "--json"])?.json()?;
    assert_eq!(providers[0]["name"], "mock");
    assert!(
        providers[0]
            .get("api_key")
            .map(|k| k.is_null())
            .unwrap_or(true)
    );
    Ok(())
}

/// A post that calls Skipper, or whose agent calls Skipper, is followed to
/// the end of the chain: Skipper's turn and the resident's turn after it
/// stream in the same `say`, each named as it starts.
#[tokio::test(flavor = "multi_thread")]
async fn say_follows_skipper_into_the_thread_and_the_agent_after_it() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let cli = setup(&mock).await?;
    // The resident calls Skipper, Skipper settles the call, the resident
    // goes on with the outcome.
    mock.push(Behaviour::tool_call(
        "call_skipper",
        r##"{"reason": "I need network access to fetch the press kit"}"##,
    ));
    mock.push(Behaviour::text("I asked @skipper for network access."));
    mock.push(Behaviour::tool_call(
        "resolve_escalation",
        r##"{"outcome": "Network stays off; use the files in /workspace."}"##,
    ));
    mock.push(Behaviour::text("Settled: network stays off."));
    mock.push(Behaviour::text("Understood, working from /workspace."));
    let run = cli.run(&["say", "launch", "@launch-agent fetch the press kit"])?;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = &run.stdout;
    let order = [
        "[helm] Calling @skipper: I need network access to fetch the press kit",
        "I asked @skipper for network access.",
        "@skipper (working: mock / mock-model)",
        "⚙ resolve_escalation",
        "[helm] @skipper resolved the call: Network stays off",
        "Settled: network stays off.",
        "@launch-agent (working: mock / mock-model)",
        "Understood, working from /workspace.",
    ];
    let mut from = 0;
    for part in order {
        let Some(at) = out[from..].find(part) else {
            anyhow::bail!("{part:?} is missing or out of order in:\n{out}");
        };
        from += at + part.len();
    }
    assert_eq!(mock.remaining(), 0, "every scripted answer was used");

    // A person calling Skipper alone: Skipper's turn is the run, named.
    mock.push(Behaviour::text("Network stays off for #launch."));
    let asked = cli.run(&[
        "say",
        "launch",
        "--thread",
        "1",
        "@skipper may we have network?",
    ])?;
    assert_eq!(asked.code, 0, "{}\n{}", asked.stdout, asked.stderr);
    assert!(
        !asked.stdout.contains("nobody was woken"),
        "{}",
        asked.stdout
    );
    assert!(
        asked
            .stdout
            .contains("[helm] Calling @skipper: may we have network?")
            && asked
                .stdout
                .contains("@skipper (working: mock / mock-model)")
            && asked.stdout.contains("Network stays off for #launch."),
        "{}",
        asked.stdout
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn say_reports_failures_and_bad_input() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let cli = setup(&mock).await?;
    mock.push(Behaviour::unauthorized());
    let failed = cli.run(&["say", "launch", "@launch-agent hi"])?;
    assert_eq!(failed.code, 8, "{}\n{}", failed.stdout, failed.stderr);
    assert!(
        failed
            .stdout
            .contains("[helm] The turn failed: provider mock"),
        "{}",
        failed.stdout
    );
    // Run it again, now that the model answers: streamed to its end.
    mock.push(Behaviour::text("Hello again."));
    let retried = cli.run(&["thread", "retry", "1"])?;
    assert_eq!(retried.code, 0, "{}\n{}", retried.stdout, retried.stderr);
    assert!(
        retried
            .stdout
            .contains("[helm] captain asked @launch-agent to try again.")
            && retried.stdout.contains("Hello again."),
        "{}",
        retried.stdout
    );
    // The last turn did not fail: nothing to run again.
    let again = cli.run(&["thread", "retry", "1"])?;
    assert_eq!(again.code, 4, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("only a failed or interrupted turn can run again"),
        "{}",
        again.stderr
    );

    let unknown = cli.run(&["say", "nowhere", "hi"])?;
    assert_eq!(unknown.code, 3);
    let no_thread = cli.run(&["say", "launch", "hi", "--thread", "42"])?;
    assert_eq!(no_thread.code, 3);
    let bad_thread = cli.run(&["say", "launch", "hi", "--thread", "x"])?;
    assert_eq!(bad_thread.code, 2);
    let nobody = cli.run(&["say", "launch", "just a note"])?;
    assert_eq!(nobody.code, 0);
    assert!(
        nobody.stdout.contains("nobody was woken"),
        "{}",
        nobody.stdout
    );
    let other_handle = cli.run(&["say", "launch", "@ops-agent hello"])?;
    assert!(other_handle.stdout.contains("nobody was woken"));
    let bad_provider = cli.run(&[
        "provider",
        "add",
        "x",
        "--kind",
        "openai",
        "--base-url",
        "ftp://nope",
    ])?;
    assert_eq!(bad_provider.code, 2, "{}", bad_provider.stderr);
    let unknown_provider = cli.run(&["channel", "set-model", "launch", "--provider", "nope"])?;
    assert_eq!(unknown_provider.code, 3);
    let user = cli.run(&["user", "add", "mira", "--json"])?.json()?;
    assert_eq!(user["role"], "member");
    let as_mira = cli.run(&[
        "--as",
        "mira",
        "provider",
        "add",
        "y",
        "--kind",
        "openai",
        "--base-url",
        "http://localhost:1/v1",
    ])?;
    assert_eq!(as_mira.code, 7, "{}", as_mira.stderr);
    Ok(())
}

/// Kill the driving process during a streaming turn with two more queued
/// behind it: on restart the running turn is interrupted with a visible
/// note, the queued ones run in order, and nothing is replayed.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_driver_leaves_an_interrupted_turn_and_the_queue_runs_in_order()
-> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let cli = setup(&mock).await?;
    mock.push(Behaviour::text("Starting on the first task, slowly and carefully").hang_after(3));

    let data = cli.data();
    let mut driver = Command::new(assert_cmd::cargo::cargo_bin("1helm"))
        .arg("--data")
        .arg(&data)
        .args(["say", "launch", "@launch-agent first"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    mock.wait_for_requests(1, Duration::from_secs(20)).await?;

    // While the first turn streams, two more messages queue in its thread.
    let helm = Helm::open(open_options(&cli)).await?;
    let thread = ThreadId(1);
    let captain = helm.captain().await?;
    let launch = "launch".parse()?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let first = loop {
        let turns = helm.thread_turns(thread).await.unwrap_or_default();
        if let Some(t) = turns.first()
            && t.state == TurnState::Running
            && !helm
                .store()
                .message(t.reply_message_id)
                .await?
                .content
                .is_empty()
        {
            break t.clone();
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the first turn never streamed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let second = helm
        .post_message(&captain, &launch, "@launch-agent second", Some(thread))
        .await?;
    let third = helm
        .post_message(&captain, &launch, "@launch-agent third", Some(thread))
        .await?;
    assert_eq!((second.ahead, third.ahead), (1, 2));

    driver.kill()?; // SIGKILL
    driver.wait()?;
    drop(helm);

    mock.push(Behaviour::text("Second done."));
    mock.push(Behaviour::text("Third done."));
    let helm = Helm::open(open_options(&cli)).await?;
    helm.start_runtime().await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let turns = loop {
        let turns = helm.thread_turns(thread).await?;
        if turns.iter().all(|t| t.state.is_final()) {
            break turns;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "turns did not finish: {turns:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    helm.shutdown_runtime(true).await;

    let states: Vec<TurnState> = turns.iter().map(|t| t.state).collect();
    assert_eq!(
        states,
        [
            TurnState::Interrupted,
            TurnState::Completed,
            TurnState::Completed
        ]
    );
    assert!(
        turns[1].finished_at <= turns[2].started_at,
        "queued turns ran in order"
    );
    let interrupted = helm.store().message(first.reply_message_id).await?;
    assert_eq!(interrupted.status, MessageStatus::Interrupted);
    assert!(
        interrupted.content.starts_with("Starting"),
        "kept what was written: {}",
        interrupted.content
    );

    let messages = helm.thread_messages(thread).await?;
    let agent_replies: Vec<&str> = messages
        .iter()
        .filter(|m| matches!(m.author, Author::Agent { .. }))
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        agent_replies.len(),
        3,
        "one reply per trigger, none duplicated"
    );
    assert_eq!(&agent_replies[1..], ["Second done.", "Third done."]);
    assert!(
        messages
            .iter()
            .any(|m| m.author == Author::System
                && m.content.starts_with("This turn was interrupted"))
    );
    assert_eq!(
        mock.requests().len(),
        3,
        "the interrupted turn was not replayed"
    );
    Ok(())
}

/// On a data directory `say` runs the turn itself: a member's say that
/// meets an approval it cannot give says who can and keeps following, so
/// the Captain's approval from another shell lets the agent go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_say_on_a_data_directory_says_who_approves_and_waits() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let cli = setup(&mock).await?;
    anyhow::ensure!(cli.run(&["user", "add", "mira"])?.code == 0);
    mock.push(Behaviour::tool_call(
        "host_command",
        r#"{"command": "echo from-the-host"}"#,
    ));
    mock.push(Behaviour::text("The host is fine."));
    let data = cli.data();
    let say = Command::new(assert_cmd::cargo::cargo_bin("1helm"))
        .arg("--data")
        .arg(&data)
        .args([
            "--as",
            "mira",
            "say",
            "launch",
            "@skipper is the host healthy?",
        ])
        .env_remove("HELM_ISOLATION")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let id = loop {
        let listed = cli.run(&["--json", "approvals"])?;
        if let Some(id) = listed.json()?[0]["id"].as_i64() {
            break id;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no approval was asked for: {}",
            listed.stdout
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let approved = cli.run(&["approve", &id.to_string()])?;
    anyhow::ensure!(approved.code == 0, "{}", approved.stderr);
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || say.wait_with_output()),
    )
    .await
    .map_err(|_| anyhow::anyhow!("say did not end after the approval"))???;
    let stdout = String::from_utf8(out.stdout)?;
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for words in [
        format!("is waiting for approval {id}"),
        "Only the Captain or an admin can approve it".into(),
        "This command runs the turn, so it waits here".into(),
        "The host is fine.".into(),
    ] {
        assert!(stdout.contains(&words), "{words}: {stdout}");
    }
    Ok(())
}
