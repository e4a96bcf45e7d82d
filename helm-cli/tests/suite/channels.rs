use assert_cmd::Command;

use super::kit::{Cli, bare, path_str};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

// Exit codes, as documented in docs/cli.md.
const USAGE: i32 = 2;
const NOT_FOUND: i32 = 3;
const CONFLICT: i32 = 4;
const REFUSED: i32 = 5;
const UNAVAILABLE: i32 = 6;

#[test]
fn init_is_idempotent_and_reports_it() -> anyhow::Result<()> {
    let cli = Cli::empty()?;
    let first = cli.run(&["init", "--json"])?;
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.json()?["created"], true);
    let second = cli.run(&["init", "--json"])?;
    assert_eq!(second.json()?["created"], false);
    let human = cli.run(&["init"])?;
    assert!(
        human.stdout.contains("already initialised"),
        "{}",
        human.stdout
    );
    Ok(())
}

#[test]
fn create_then_show_prints_the_channel_and_its_agent() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    let created = cli.run(&[
        "channel",
        "create",
        "launch",
        "--purpose",
        PURPOSE,
        "--json",
    ])?;
    assert_eq!(created.code, 0, "{}", created.stderr);
    let v = created.json()?;
    assert!(v["channel"]["id"].as_i64().is_some());
    assert_eq!(v["channel"]["name"], "launch");
    assert_eq!(v["channel"]["purpose"], PURPOSE);
    assert_eq!(v["channel"]["status"], "active");
    assert!(v["agent"]["id"].as_i64().is_some());
    assert_eq!(v["agent"]["handle"], "launch-agent");
    assert_eq!(v["agent"]["kind"], "channel");
    assert_eq!(v["agent"]["status"], "ready");
    let workspace = v["workspace_dir"].as_str().unwrap_or_default();
    assert!(std::path::Path::new(workspace).is_dir(), "{workspace}");

    // `#launch` and `launch` name the same channel; flags may come first or last.
    let shown = cli.run(&["--json", "channel", "show", "#launch"])?;
    let s = shown.json()?;
    assert_eq!(s["channel"]["id"], v["channel"]["id"]);
    assert_eq!(s["agent"]["id"], v["agent"]["id"]);
    assert_eq!(s["agent"]["handle"], "launch-agent");

    let human = cli.run(&["channel", "show", "launch"])?;
    assert!(
        human.stdout.contains("@launch-agent (Launch Agent, ready)"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains(PURPOSE));

    let text = cli.run(&[
        "channel",
        "create",
        "ops",
        "--purpose",
        "Keep the lights on.",
    ])?;
    assert!(
        text.stdout
            .starts_with("Created #ops with its resident agent @ops-agent"),
        "{}",
        text.stdout
    );
    Ok(())
}

#[test]
fn list_shows_channels_and_all_includes_archived() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    cli.run(&["channel", "create", "launch", "--purpose", PURPOSE])?;
    cli.run(&["channel", "create", "ops", "--purpose", "Operations."])?;
    let archived = cli.run(&["channel", "archive", "ops"])?;
    assert_eq!(archived.code, 0, "{}", archived.stderr);
    assert!(
        archived.stdout.contains("@ops-agent is paused"),
        "{}",
        archived.stdout
    );

    let list = cli.run(&["channel", "list", "--json"])?.json()?;
    let names: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["channel"]["name"].as_str())
        .collect();
    assert_eq!(names, ["launch", "main"]);
    let all = cli.run(&["channel", "list", "--all", "--json"])?.json()?;
    let names: Vec<&str> = all
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["channel"]["name"].as_str())
        .collect();
    assert_eq!(names, ["launch", "main", "ops"]);

    let text = cli.run(&["channel", "list", "--all"])?;
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert!(lines[0].starts_with("CHANNEL"), "{}", text.stdout);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("#ops") && l.contains("paused") && l.contains("archived")),
        "{}",
        text.stdout
    );
    Ok(())
}

#[test]
fn archive_restore_delete_round_trip() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    let created = cli
        .run(&[
            "channel",
            "create",
            "launch",
            "--purpose",
            PURPOSE,
            "--json",
        ])?
        .json()?;
    let workspace = created["workspace_dir"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let refused = cli.run(&["channel", "delete", "launch", "--confirm", "launch"])?;
    assert_eq!(refused.code, REFUSED, "{}", refused.stderr);
    assert!(refused.stderr.contains("archive it"), "{}", refused.stderr);

    cli.run(&["channel", "archive", "#launch"])?;
    let restored = cli
        .run(&["channel", "restore", "launch", "--json"])?
        .json()?;
    assert_eq!(restored["agent"]["id"], created["agent"]["id"]);
    assert_eq!(restored["agent"]["status"], "ready");
    cli.run(&["channel", "archive", "launch"])?;

    let unconfirmed = cli.run(&["channel", "delete", "launch"])?;
    assert_eq!(unconfirmed.code, REFUSED);
    assert!(
        unconfirmed.stderr.contains("--confirm launch"),
        "{}",
        unconfirmed.stderr
    );
    let wrong = cli.run(&["channel", "delete", "launch", "--confirm", "ops"])?;
    assert_eq!(wrong.code, REFUSED);
    assert!(std::path::Path::new(&workspace).is_dir());

    let deleted = cli.run(&["channel", "delete", "launch", "--confirm", "#launch"])?;
    assert_eq!(deleted.code, 0, "{}", deleted.stderr);
    assert!(!std::path::Path::new(&workspace).exists());
    let gone = cli.run(&["channel", "show", "launch"])?;
    assert_eq!(gone.code, NOT_FOUND);
    Ok(())
}

#[test]
fn errors_have_distinct_exit_codes_and_change_nothing() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    cli.run(&["channel", "create", "launch", "--purpose", PURPOSE])?;
    let before = cli.run(&["channel", "list", "--all", "--json"])?.stdout;

    let no_purpose = cli.run(&["channel", "create", "ops"])?;
    assert_eq!(no_purpose.code, USAGE);
    assert_eq!(
        no_purpose.stderr.trim(),
        "error: What is this channel all about?\n\
         hint: say what it is for: 1helm channel create NAME --purpose \"what it is all about\""
    );
    let blank = cli.run(&["channel", "create", "ops", "--purpose", "  \t "])?;
    assert_eq!(blank.code, USAGE);

    for bad in ["a/b", "..", "a b", "bell\u{7}", &"x".repeat(65), ""] {
        let run = cli.run(&["channel", "create", bad, "--purpose", "x"])?;
        assert_eq!(run.code, USAGE, "{bad:?}: {}", run.stderr);
        assert!(
            run.stderr.starts_with("error: invalid channel name"),
            "{bad:?}: {}",
            run.stderr
        );
    }
    let dup = cli.run(&["channel", "create", "launch", "--purpose", "again"])?;
    assert_eq!(dup.code, CONFLICT);
    let unknown = cli.run(&["channel", "show", "nowhere"])?;
    assert_eq!(unknown.code, NOT_FOUND);
    assert!(
        unknown.stderr.contains("channel #nowhere not found")
            && unknown
                .stderr
                .contains("hint: `1helm channel list --all` lists the channels"),
        "{}",
        unknown.stderr
    );
    let main = cli.run(&["channel", "archive", "main"])?;
    assert_eq!(main.code, REFUSED);

    // Machine-readable errors with --json.
    let json_err = cli.run(&["--json", "channel", "show", "nowhere"])?;
    let e: serde_json::Value = serde_json::from_str(json_err.stderr.trim())?;
    assert_eq!(e["error"]["code"], "not_found");

    let usage = cli.run(&["channel", "frobnicate"])?;
    assert_eq!(usage.code, USAGE);

    // A history file that is not there is not found, not a fault of Helm's.
    let missing = cli.run(&["import", "launch", "/nonexistent/history.jsonl"])?;
    assert_eq!(missing.code, NOT_FOUND, "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("history file /nonexistent/history.jsonl not found"),
        "{}",
        missing.stderr
    );

    // A directory is no history (reading one used to spin for ever).
    let directory = cli.run(&["import", "launch", "/tmp"])?;
    assert_eq!(directory.code, USAGE, "{}", directory.stderr);
    assert!(
        directory.stderr.contains("/tmp is a directory"),
        "{}",
        directory.stderr
    );

    // A provider that does not answer: the command's own error, without
    // core's retry warnings (or colour codes) mixed into its output.
    let unreachable = cli.run(&[
        "provider",
        "add",
        "nowhere",
        "--kind",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ])?;
    assert!(
        !unreachable.stderr.contains("WARN") && !unreachable.stderr.contains('\u{1b}'),
        "{}",
        unreachable.stderr
    );
    assert!(
        unreachable
            .stdout
            .contains("Check that it answers: 1helm provider check nowhere"),
        "{}",
        unreachable.stdout
    );
    // Checking it says it does not answer, as an upstream failure.
    let checked = cli.run(&["provider", "check", "nowhere"])?;
    assert_eq!(checked.code, 8, "{}{}", checked.stdout, checked.stderr);
    assert!(checked.stderr.contains("nowhere"), "{}", checked.stderr);
    assert_eq!(cli.run(&["provider", "check", "ghost"])?.code, NOT_FOUND);

    // An empty HELM_SERVER, as `export HELM_SERVER=` leaves it, means none.
    let emptied = cli.run_with_env(&["status"], &[("HELM_SERVER", ""), ("HELM_TOKEN", "")])?;
    assert_eq!(emptied.code, 0, "{}", emptied.stderr);

    assert_eq!(
        cli.run(&["channel", "list", "--all", "--json"])?.stdout,
        before
    );
    Ok(())
}

#[test]
fn an_uninitialised_dir_says_to_run_init() -> anyhow::Result<()> {
    let cli = Cli::empty()?;
    let run = cli.run(&["channel", "list"])?;
    assert_eq!(run.code, UNAVAILABLE);
    assert!(run.stderr.contains("1helm init"), "{}", run.stderr);
    assert!(!cli.data().exists());
    Ok(())
}

#[test]
fn the_data_dir_comes_from_flag_env_or_default() -> anyhow::Result<()> {
    let cli = Cli::empty()?;
    let data = cli.data();
    let data = path_str(&data)?;
    // HELM_DATA
    let out = Command::cargo_bin("1helm")?
        .args(["init", "--json"])
        .env("HELM_DATA", data)
        .output()?;
    assert!(out.status.success());
    // The flag after the subcommand.
    let run = bare(&["status", "--json", "--data", data])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let status = run.json()?;
    assert_eq!(status["channels_active"], 1);
    assert_eq!(status["skipper"]["handle"], "skipper");
    // The default, ./helm-data, relative to the working directory.
    let cwd = tempfile::tempdir()?;
    let out = Command::cargo_bin("1helm")?
        .current_dir(cwd.path())
        .env_remove("HELM_DATA")
        .arg("init")
        .output()?;
    assert!(out.status.success());
    assert!(cwd.path().join("helm-data").join("helm.db").is_file());
    Ok(())
}

#[test]
fn status_counts_what_is_there() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    cli.run(&["channel", "create", "launch", "--purpose", PURPOSE])?;
    cli.run(&["channel", "create", "ops", "--purpose", "Ops."])?;
    cli.run(&["channel", "archive", "ops"])?;
    let s = cli.run(&["status", "--json"])?.json()?;
    assert_eq!(s["channels_active"], 2);
    assert_eq!(s["channels_archived"], 1);
    assert_eq!(s["agents"], 3);
    assert_eq!(s["captain"]["role"], "captain");
    let text = cli.run(&["status"])?;
    assert!(
        text.stdout.contains("Channels:  2 active, 1 archived"),
        "{}",
        text.stdout
    );
    Ok(())
}
