//! `1helm files`, `exec` and `term`: a channel's computer from the command line.

use std::io::{Read, Write};
use std::time::Duration;

use super::kit::{Cli, path_str};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

// Exit codes, as documented in docs/cli.md.
const USAGE: i32 = 2;
const NOT_FOUND: i32 = 3;
const REFUSED: i32 = 5;
const FORBIDDEN: i32 = 7;
const TIMED_OUT: i32 = 124;

fn with_channel() -> anyhow::Result<Cli> {
    let cli = Cli::init()?;
    let created = cli.run(&["channel", "create", "launch", "--purpose", PURPOSE])?;
    anyhow::ensure!(created.code == 0, "{}", created.stderr);
    Ok(cli)
}

#[test]
fn files_put_ls_and_cat_round_trip() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let local = cli.dir.path().join("plan.md");
    std::fs::write(&local, "# Launch plan\n")?;

    let put = cli.run(&["files", "put", "launch", path_str(&local)?])?;
    assert_eq!(put.code, 0, "{}", put.stderr);
    assert!(put.stdout.contains("/workspace/plan.md"), "{}", put.stdout);
    let into_dir = cli.run(&["files", "put", "#launch", path_str(&local)?, "docs/"])?;
    assert_eq!(into_dir.code, 0, "{}", into_dir.stderr);
    // With --new a file already there is refused and kept as it was.
    std::fs::write(&local, "# Another plan\n")?;
    let kept = cli.run(&["files", "put", "launch", path_str(&local)?, "--new"])?;
    assert_eq!(kept.code, 4, "{}", kept.stderr);
    assert!(
        kept.stderr.contains("/workspace/plan.md already exists"),
        "{}",
        kept.stderr
    );
    let fresh = cli.run(&[
        "files",
        "put",
        "launch",
        path_str(&local)?,
        "fresh.md",
        "--new",
    ])?;
    assert_eq!(fresh.code, 0, "{}", fresh.stderr);
    std::fs::write(&local, "# Launch plan\n")?;

    let ls = cli.run(&["files", "ls", "launch"])?;
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    assert!(ls.stdout.starts_with("NAME"), "{}", ls.stdout);
    assert!(
        ls.stdout.contains("docs/") && ls.stdout.contains("plan.md"),
        "{}",
        ls.stdout
    );
    let json = cli
        .run(&["files", "ls", "launch", "/workspace/docs", "--json"])?
        .json()?;
    assert_eq!(json[0]["path"], "/workspace/docs/plan.md");
    assert_eq!(json[0]["kind"], "file");
    assert_eq!(json[0]["size"], 14);

    let cat = cli.run(&["files", "cat", "launch", "docs/plan.md"])?;
    assert_eq!((cat.code, cat.stdout.as_str()), (0, "# Launch plan\n"));
    let text = cli
        .run(&["files", "cat", "launch", "plan.md", "--json"])?
        .json()?;
    assert_eq!(text["content"], "# Launch plan\n");
    Ok(())
}

#[test]
fn a_note_is_saved_as_a_new_markdown_file() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let first = cli.run(&["note", "launch", "Call Dana about seating"])?;
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first.stdout.starts_with("Saved /workspace/notes/")
            && first.stdout.contains("-call-dana-about-seating.md"),
        "{}",
        first.stdout
    );
    // From standard input, titled; the same title twice is two files.
    for _ in 0..2 {
        let piped = cli.run_with_stdin(
            &["note", "launch", "-", "--title", "Venue", "--json"],
            "- seats 200\n",
        )?;
        assert_eq!(piped.code, 0, "{}", piped.stderr);
    }
    let listed = cli
        .run(&["files", "ls", "launch", "notes", "--json"])?
        .json()?;
    let names: Vec<&str> = listed
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with("-venue.md"))
            && names.iter().any(|n| n.ends_with("-venue-2.md")),
        "{names:?}"
    );
    let venue = names
        .iter()
        .find(|n| n.ends_with("-venue.md"))
        .copied()
        .unwrap_or_default();
    let cat = cli.run(&["files", "cat", "launch", &format!("notes/{venue}")])?;
    assert_eq!(cat.stdout, "# Venue\n\n- seats 200\n");

    let empty = cli.run_with_stdin(&["note", "launch"], "  \n")?;
    assert_eq!(empty.code, USAGE, "{}", empty.stderr);
    assert!(
        empty.stderr.contains("the note is empty"),
        "{}",
        empty.stderr
    );
    let nowhere = cli.run(&["note", "nowhere", "hello"])?;
    assert_eq!(nowhere.code, NOT_FOUND, "{}", nowhere.stderr);
    Ok(())
}

#[test]
fn files_errors_exit_by_kind_without_host_paths() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let escape = cli.run(&["files", "cat", "launch", "../../1/profile/agent.json"])?;
    assert_eq!(escape.code, FORBIDDEN, "{}", escape.stderr);
    assert!(
        escape
            .stderr
            .contains("path escapes /workspace: ../../1/profile/agent.json")
    );
    let missing = cli.run(&["files", "cat", "launch", "nope.txt"])?;
    assert_eq!(missing.code, NOT_FOUND);
    assert!(
        missing.stderr.contains("/workspace/nope.txt not found"),
        "{}",
        missing.stderr
    );
    assert!(
        !missing.stderr.contains(path_str(&cli.data())?),
        "{}",
        missing.stderr
    );
    let no_channel = cli.run(&["files", "ls", "nowhere"])?;
    assert_eq!(no_channel.code, NOT_FOUND);
    let no_local = cli.run(&["files", "put", "launch", "/nonexistent/file"])?;
    assert_eq!(no_local.code, NOT_FOUND);
    Ok(())
}

#[test]
fn exec_prints_the_output_and_exits_with_the_commands_code() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let run = cli.run(&[
        "exec", "launch", "--", "pwd;", "echo", "oops", ">&2;", "exit", "7",
    ])?;
    assert_eq!(run.code, 7, "{}", run.stderr);
    assert_eq!(run.stdout, "/workspace\n");
    assert_eq!(run.stderr, "oops\n");
    let ok = cli.run(&["exec", "launch", "--", "true"])?;
    assert_eq!(ok.code, 0);
    let piped = cli.run_with_stdin(&["exec", "launch", "--", "tr a-z A-Z"], "piped in\n")?;
    assert_eq!((piped.code, piped.stdout.as_str()), (0, "PIPED IN\n"));

    let json = cli.run(&["--json", "exec", "launch", "--", "echo hi; exit 3"])?;
    assert_eq!(json.code, 3);
    let v = json.json()?;
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["stdout"], "hi\n");
    assert_eq!(v["isolation"], "bubblewrap");
    assert_eq!(v["timed_out"], false);
    assert!(v["duration_ms"].as_u64().is_some());

    let slow = cli.run(&[
        "exec",
        "launch",
        "--timeout",
        "1",
        "--",
        "sleep 100 & sleep 100",
    ])?;
    assert_eq!(slow.code, TIMED_OUT);
    assert!(slow.stderr.contains("timeout"), "{}", slow.stderr);

    let bad = cli.run(&["exec", "launch", "--timeout", "0", "--", "true"])?;
    assert_eq!(bad.code, USAGE);
    let unknown = cli.run(&["exec", "nowhere", "--", "true"])?;
    assert_eq!(unknown.code, NOT_FOUND);

    cli.run(&["channel", "archive", "launch"])?;
    let archived = cli.run(&["exec", "launch", "--", "true"])?;
    assert_eq!(archived.code, REFUSED);
    assert!(archived.stderr.contains("archived"), "{}", archived.stderr);
    Ok(())
}

#[test]
fn main_runs_on_skippers_host_computer() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let main = cli.run(&["exec", "main", "--", "pwd"])?;
    assert_eq!(main.code, 0, "{}", main.stderr);
    assert!(
        main.stdout.trim_end().ends_with("/channels/1/workspace"),
        "{}",
        main.stdout
    );
    Ok(())
}

#[test]
fn the_servers_environment_stays_out_of_commands() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let secret = format!("fake-secret-{}", std::process::id());
    for mode in ["bubblewrap", "process"] {
        let run = cli.run_with_env(
            &[
                "--isolation",
                mode,
                "exec",
                "launch",
                "--",
                "env; cat /proc/1/environ; for p in /proc/[0-9]*; do cat $p/environ; done",
            ],
            &[("HELM_FAKE_SECRET", &secret), ("HELM_LOG", "error")],
        )?;
        assert!(run.stdout.contains("HOME="), "{mode}: {}", run.stdout);
        assert!(!run.stdout.contains(&secret), "{mode}: the secret leaked");
        assert!(
            !run.stdout.contains("HELM_FAKE_SECRET"),
            "{mode}: the name leaked"
        );
    }
    Ok(())
}

#[test]
fn term_refuses_when_stdin_is_not_a_terminal() -> anyhow::Result<()> {
    let cli = with_channel()?;
    let run = cli.run(&["term", "launch"])?;
    assert_eq!(run.code, USAGE);
    assert!(
        run.stderr.contains("stdin is not a terminal"),
        "{}",
        run.stderr
    );
    Ok(())
}

#[test]
fn term_attaches_a_real_terminal_to_the_channels_shell() -> anyhow::Result<()> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let cli = with_channel()?;
    let pair = native_pty_system().openpty(PtySize {
        rows: 24,
        cols: 80,
        pixel_width: 0,
        pixel_height: 0,
    })?;
    let bin = assert_cmd::cargo::cargo_bin("1helm");
    let mut command = CommandBuilder::new(bin);
    command.args(["--data", path_str(&cli.data())?, "term", "launch"]);
    command.env_remove("HELM_ISOLATION");
    let mut child = pair.slave.spawn_command(command)?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader()?;
    let mut writer = pair.master.take_writer()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut wait_for = |needle: &str| -> anyhow::Result<()> {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !seen.contains(needle) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let chunk = rx
                .recv_timeout(left)
                .map_err(|_| anyhow::anyhow!("no {needle:?} in {seen:?}"))?;
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        Ok(())
    };
    writer
        .write_all(b"cd /workspace && echo in-$((20+22)) > from-term.txt && echo at-$(pwd)-ok\r")?;
    wait_for("at-/workspace-ok")?;
    writer.write_all(b"exit 3\r")?;
    let status = child.wait()?;
    assert_eq!(status.exit_code(), 3, "{seen:?}");

    // What the terminal made is in the channel's workspace.
    let ls = cli.run(&["files", "ls", "launch"])?;
    assert!(ls.stdout.contains("from-term.txt"), "{}", ls.stdout);
    let cat = cli.run(&["files", "cat", "launch", "from-term.txt"])?;
    assert_eq!(cat.stdout, "in-42\n");
    Ok(())
}

#[test]
fn exec_and_files_reach_a_remote_computer_the_environment_names() -> anyhow::Result<()> {
    let server = tokio::runtime::Runtime::new()?
        .block_on(helm_tests::open_terminal::OpenTerminal::start())?;
    let cli = with_channel()?;
    let env = [
        ("HELM_COMPUTER", server.url.as_str()),
        ("HELM_COMPUTER_KEY", server.key.as_str()),
    ];
    let run = cli.run_with_env(
        &["--json", "exec", "launch", "--", "echo there; exit 4"],
        &env,
    )?;
    assert_eq!(run.code, 4, "{}", run.stderr);
    let v = run.json()?;
    assert_eq!(
        (v["stdout"].as_str(), v["isolation"].as_str()),
        (Some("there\n"), Some("remote"))
    );
    let local = cli.dir.path().join("plan.md");
    std::fs::write(&local, "# Remote plan\n")?;
    let put = cli.run_with_env(&["files", "put", "launch", path_str(&local)?], &env)?;
    assert_eq!(put.code, 0, "{}", put.stderr);
    let cat = cli.run_with_env(&["files", "cat", "launch", "plan.md"], &env)?;
    assert_eq!(
        (cat.code, cat.stdout.as_str()),
        (0, "# Remote plan\n"),
        "{}",
        cat.stderr
    );
    let on_server = std::fs::read_dir(server.home.join("channels"))?.count();
    assert_eq!(on_server, 1, "the channel's workspace is on the server");

    // The key missing is a configuration error naming the setting.
    let keyless = cli.run_with_env(
        &["exec", "launch", "--", "true"],
        &[
            ("HELM_COMPUTER", server.url.as_str()),
            ("HELM_COMPUTER_KEY", ""),
        ],
    )?;
    assert_ne!(keyless.code, 0);
    assert!(
        keyless.stderr.contains("computer.key_env"),
        "{}",
        keyless.stderr
    );
    Ok(())
}
