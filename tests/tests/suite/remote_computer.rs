//! Channel computers on another host: every channel's commands and files
//! go to a real Open Terminal server (`computer.at`), with output, exit
//! codes, stdin, timeouts and kills as on this host; paths outside
//! `/workspace` never leave Helm; channels sharing one server keep their
//! files apart; a wrong key or a server that is down is a clear
//! `computer_unreachable` error; terminals are shells there that viewers
//! here share; an agent's turn runs its command there; Skipper's computer
//! stays on this host; a channel may choose a named computer when it is
//! made, and runs there while the others stay on the default.

use std::sync::Arc;
use std::time::Duration;

use helm_core::config::{ConfigLayer, ConfigSource, HelmConfig};
use helm_core::exec::{
    CommandResult, CommandSpec, FileKind, GrepQuery, Isolation, LineRange, LocalComputers,
    RemoteComputers, TerminalEvent, TerminalSize,
};
use helm_core::model::{ChannelRef, TurnState};
use helm_core::provider::{ChatMessage, ScriptedReply};
use helm_core::world::DataRoot;
use helm_core::{Error, ErrorKind, HelmOptions, NewChannel};
use helm_tests::TestHelm;
use helm_tests::open_terminal::OpenTerminal;

/// Points `options`' channel computers at `url` with `key`.
fn remote(options: &mut HelmOptions, url: &str, key: &str) -> anyhow::Result<()> {
    let host = Arc::new(LocalComputers::new(
        options.computer,
        Some(DataRoot::new(&options.data_dir).procs_dir()),
    ));
    let computers = Arc::new(RemoteComputers::new(url, key, host)?);
    options.ports.computers = Some(computers.clone());
    options.ports.files = Some(computers.clone());
    options.ports.terminals = Some(computers);
    Ok(())
}

/// Runs `spec` in `channel`'s computer as the Captain.
async fn exec(
    t: &TestHelm,
    channel: &ChannelRef,
    spec: CommandSpec,
) -> helm_core::Result<CommandResult> {
    t.helm.exec(&t.captain, channel, spec).await
}

/// A workspace whose channel computers are on `server`, and one channel.
async fn setup(server: &OpenTerminal) -> anyhow::Result<(TestHelm, ChannelRef)> {
    let t = TestHelm::try_with_options(|o| remote(o, &server.url, &server.key)).await?;
    t.helm
        .create_channel(
            &t.captain,
            "ops",
            "Runs the release scripts on the build box.",
        )
        .await?;
    Ok((t, "ops".parse()?))
}

#[tokio::test]
async fn commands_run_there_with_their_output_exit_code_and_stdin() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let (t, ops) = setup(&server).await?;
    assert_eq!(t.helm.isolation().await?, Isolation::Remote);
    let id = t.helm.channel(&ops).await?.channel.id;

    let run = exec(
        &t,
        &ops,
        CommandSpec::new("pwd; printf 'two\\nlines\\n'; echo oops >&2; exit 3"),
    )
    .await?;
    assert_eq!(run.exit_code, Some(3), "{run:?}");
    assert_eq!(run.isolation, Isolation::Remote);
    // The server's terminal merges stderr into stdout; Helm keeps the
    // bytes as written (no echo, no `\r\n`).
    let root = server.home.join(format!("channels/{id}"));
    assert_eq!(
        run.stdout,
        format!("{}\ntwo\nlines\noops\n", root.display()),
        "{run:?}"
    );

    // Stdin given up front, backslashes and all, and none (it sees the end).
    let input = "a\\nb \u{e9}\n\\x41\n";
    let cat = exec(
        &t,
        &ops,
        CommandSpec::new("cat").stdin(input.as_bytes().to_vec()),
    )
    .await?;
    assert_eq!((cat.exit_code, cat.stdout.as_str()), (Some(0), input));
    let none = exec(&t, &ops, CommandSpec::new("cat; echo end")).await?;
    assert_eq!(none.stdout, "end\n");

    // Written while it runs, then closed: it ends by itself.
    let running = t
        .helm
        .start_command(&t.captain, &ops, CommandSpec::new("cat; echo closed"))
        .await?;
    running.write_stdin(b"first\\line\n").await?;
    running.write_stdin(b"partial").await?;
    running.close_stdin().await?;
    let done = tokio::time::timeout(Duration::from_secs(20), running.wait()).await??;
    assert_eq!(done.exit_code, Some(0), "{done:?}");
    assert_eq!(done.stdout, "first\\line\npartialclosed\n");
    assert!(
        running.write_stdin(b"late").await.is_err(),
        "no input after the end"
    );

    // A working directory in the workspace, and environment variables.
    t.helm
        .files(&t.captain, &ops)
        .await?
        .mkdir("/workspace/sub")
        .await?;
    let env = exec(
        &t,
        &ops,
        CommandSpec::new("pwd; echo $GREETING")
            .cwd("sub")
            .env("GREETING", "hello"),
    )
    .await?;
    assert_eq!(env.stdout, format!("{}/sub\nhello\n", root.display()));
    let outside = exec(&t, &ops, CommandSpec::new("pwd").cwd("/etc")).await;
    assert!(matches!(outside, Err(Error::Forbidden(_))), "{outside:?}");
    Ok(())
}

#[tokio::test]
async fn timeouts_and_kills_end_the_command_there() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let (t, ops) = setup(&server).await?;
    let slow = exec(
        &t,
        &ops,
        CommandSpec::new("echo started; sleep 29.71; echo never")
            .timeout(Some(Duration::from_secs(1))),
    )
    .await?;
    assert!(slow.timed_out, "{slow:?}");
    assert_eq!(slow.exit_code, None);
    assert_eq!(slow.stdout, "started\n");

    let running = t
        .helm
        .start_command(&t.captain, &ops, CommandSpec::new("echo up; sleep 29.71"))
        .await?;
    let seen = t
        .poll("its first output", || {
            let polled = running.poll();
            async move { Ok((!polled.stdout.is_empty()).then_some(polled.stdout)) }
        })
        .await?;
    assert_eq!(seen, "up\n");
    let killed = tokio::time::timeout(Duration::from_secs(20), running.kill()).await??;
    assert!(killed.killed && !killed.timed_out, "{killed:?}");
    assert!(!running.poll().running);
    // The server has nothing of it left running. (A duration no other test
    // sleeps for: the suites run side by side on this machine, and other
    // tests' `sleep 30` and `sleep 300` were counted here.)
    let listing = exec(
        &t,
        &ops,
        CommandSpec::new("ps -eo args | grep -c '[s]leep 29[.]71' || true"),
    )
    .await?;
    assert_eq!(listing.stdout.trim(), "0", "{listing:?}");
    Ok(())
}

#[tokio::test]
async fn files_round_trip_there_and_never_leave_the_workspace() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let (t, ops) = setup(&server).await?;
    let id = t.helm.channel(&ops).await?.channel.id;
    let root = server.home.join(format!("channels/{id}"));
    let files = t.helm.files(&t.captain, &ops).await?;
    assert!(files.is_confined());

    let written = files
        .write("notes/plan.md", b"# Plan\nship\ntest\n".to_vec())
        .await?;
    assert_eq!(written.path, "/workspace/notes/plan.md");
    assert_eq!((written.kind, written.size), (FileKind::File, 17));
    assert_eq!(
        std::fs::read_to_string(root.join("notes/plan.md"))?,
        "# Plan\nship\ntest\n",
        "it is on the server's disk"
    );
    let text = files
        .read(
            "/workspace/notes/plan.md",
            Some(LineRange {
                start: 2,
                end: Some(3),
            }),
        )
        .await?;
    assert_eq!(text.content, "ship\ntest\n");
    assert_eq!(
        (text.start_line, text.end_line, text.total_lines),
        (2, 3, 3)
    );

    // Binary contents go and come back whole; reading them as text is refused.
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    files.write("/workspace/blob.bin", bytes.clone()).await?;
    let back = files.read_bytes("blob.bin", 1 << 20).await?;
    assert_eq!(
        (back.bytes.as_slice(), back.truncated),
        (bytes.as_slice(), false)
    );
    let head = files.read_bytes("blob.bin", 10).await?;
    assert_eq!(
        (head.bytes.len(), head.size, head.truncated),
        (10, 3000, true)
    );
    let Err(err) = files.read("blob.bin", None).await else {
        panic!("a binary file was read as text");
    };
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");

    // Listing, stat, mkdir, moves and their refusals.
    let names: Vec<String> = files
        .list("/workspace")
        .await?
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, ["blob.bin", "notes"]);
    assert_eq!(files.stat("notes").await?.kind, FileKind::Dir);
    assert_eq!(
        files.list("notes/plan.md").await?.len(),
        1,
        "a file lists itself"
    );
    files.mkdir("archive/2026").await?;
    let moved = files
        .rename("notes/plan.md", "archive/2026/plan.md")
        .await?;
    assert_eq!(moved.path, "/workspace/archive/2026/plan.md");
    files.write("notes/other.md", b"x".to_vec()).await?;
    let clash = files.rename("notes/other.md", "archive/2026/plan.md").await;
    assert!(matches!(clash, Err(Error::Conflict(_))), "{clash:?}");
    let missing = files.stat("notes/plan.md").await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );

    // Searching: contents and names, with agent paths.
    let found = files.grep(GrepQuery::new("sh.p")).await?;
    assert_eq!(found.matches.len(), 1, "{found:?}");
    assert_eq!(found.matches[0].path, "/workspace/archive/2026/plan.md");
    assert_eq!(
        (found.matches[0].line, found.matches[0].text.as_str()),
        (2, "ship")
    );
    let glob = files.glob("*.md").await?;
    let mut paths = glob.paths.clone();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/workspace/archive/2026/plan.md",
            "/workspace/notes/other.md"
        ]
    );

    // Deleting: a full directory only when asked to; never the workspace.
    let full = files.delete("archive", false).await;
    assert!(matches!(full, Err(Error::Conflict(_))), "{full:?}");
    files.delete("archive", true).await?;
    assert!(!root.join("archive").exists());
    let itself = files.delete("/workspace", true).await;
    assert!(matches!(itself, Err(Error::Refused(_))), "{itself:?}");

    // Nothing outside /workspace is asked for, however it is spelt.
    std::fs::write(server.home.join("outside.txt"), "server secret")?;
    for escape in [
        "/etc/passwd",
        "../outside.txt",
        "/workspace/../../outside.txt",
    ] {
        let read = files.read(escape, None).await;
        assert!(
            matches!(read, Err(Error::Forbidden(_))),
            "{escape}: {read:?}"
        );
        let write = files.write(escape, b"x".to_vec()).await;
        assert!(
            matches!(write, Err(Error::Forbidden(_))),
            "{escape}: {write:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(server.home.join("outside.txt"))?,
        "server secret"
    );
    Ok(())
}

#[tokio::test]
async fn channels_sharing_a_server_keep_their_files_apart_and_skipper_stays_here()
-> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let (t, ops) = setup(&server).await?;
    t.helm
        .create_channel(&t.captain, "design", "Keeps the design notes.")
        .await?;
    let design: ChannelRef = "design".parse()?;
    t.helm
        .files(&t.captain, &ops)
        .await?
        .write("only-ops.txt", b"ops".to_vec())
        .await?;
    let seen = exec(&t, &design, CommandSpec::new("ls")).await?;
    assert_eq!(seen.stdout, "", "design's workspace is its own");
    let missing = t
        .helm
        .files(&t.captain, &design)
        .await?
        .stat("only-ops.txt")
        .await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );

    // Skipper's computer (#main) is this host's, not the server's.
    let main: ChannelRef = "main".parse()?;
    let here = exec(&t, &main, CommandSpec::new("pwd")).await?;
    assert_eq!(here.isolation, Isolation::Host, "{here:?}");
    assert!(
        !here.stdout.starts_with(&server.home.display().to_string()),
        "{here:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_wrong_key_or_a_server_that_is_down_is_a_clear_error() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let t = TestHelm::try_with_options(|o| remote(o, &server.url, "not-the-key")).await?;
    t.helm
        .create_channel(
            &t.captain,
            "ops",
            "Runs the release scripts on the build box.",
        )
        .await?;
    let ops: ChannelRef = "ops".parse()?;
    let Err(err) = exec(&t, &ops, CommandSpec::new("true")).await else {
        panic!("a wrong key was accepted");
    };
    assert_eq!(
        (err.kind(), err.code()),
        (ErrorKind::Unavailable, "computer_unreachable")
    );
    let text = err.to_string();
    assert!(text.contains(&server.url) && text.contains("key"), "{text}");

    let url = server.url.clone();
    drop(server);
    let t = TestHelm::try_with_options(|o| remote(o, &url, "any-key")).await?;
    t.helm
        .create_channel(
            &t.captain,
            "ops",
            "Runs the release scripts on the build box.",
        )
        .await?;
    let Err(err) = t
        .helm
        .files(&t.captain, &ops)
        .await?
        .list("/workspace")
        .await
    else {
        panic!("a server that is down listed a directory");
    };
    assert_eq!(err.code(), "computer_unreachable", "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    Ok(())
}

#[tokio::test]
async fn terminals_are_shells_there_that_viewers_here_share() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let (t, ops) = setup(&server).await?;
    let id = t.helm.channel(&ops).await?.channel.id;
    let size = TerminalSize {
        rows: 30,
        cols: 100,
    };
    let terminal = t.helm.open_terminal(&t.captain, &ops, size).await?;
    assert_eq!(terminal.info().isolation, Isolation::Remote);
    let mut viewer = terminal.subscribe();
    terminal
        .write(b"echo \"at $(pwd) size $(stty size)\"\n")
        .await?;
    let root = server.home.join(format!("channels/{id}"));
    let wanted = format!("at {} size 30 100", root.display());
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(event) = viewer.events.recv().await {
            if let TerminalEvent::Output { data } = event {
                seen.push_str(&String::from_utf8_lossy(&data));
                if seen.contains(&wanted) {
                    return true;
                }
            }
        }
        false
    })
    .await;
    assert_eq!(found, Ok(true), "{seen:?}");
    // A viewer who comes later gets it from the scrollback.
    let later = terminal.subscribe();
    assert!(String::from_utf8_lossy(&later.scrollback).contains(&wanted));
    // Resized here, resized there.
    terminal.resize(TerminalSize {
        rows: 40,
        cols: 120,
    })?;
    terminal.write(b"stty size\n").await?;
    t.poll("the new size", || {
        let text = String::from_utf8_lossy(&terminal.scrollback()).into_owned();
        async move { Ok(text.contains("40 120").then_some(())) }
    })
    .await?;
    let listed = t.helm.terminals().list(Some(id));
    assert_eq!(listed.len(), 1, "{listed:?}");
    // Closed here, gone there.
    let terminal_id = terminal.id();
    t.helm.close_terminal(&t.captain, terminal_id).await?;
    assert!(!terminal.is_running());
    assert!(t.helm.terminals().list(Some(id)).is_empty());
    Ok(())
}

#[tokio::test]
async fn an_agent_turn_runs_its_command_on_the_computer_the_config_names() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    set_key_variable("HELM_TEST_REMOTE_KEY_7C1", &server.key);
    let config = HelmConfig::resolve([ConfigLayer::toml(
        &format!(
            "[computer]\nat = \"{}\"\nkey_env = \"HELM_TEST_REMOTE_KEY_7C1\"",
            server.url
        ),
        ConfigSource::File("helm.toml".into()),
    )?])?;
    let t = TestHelm::try_with_options(|o| Ok(config.apply(o)?)).await?;
    let scripted = t.scripted().await?;
    t.helm
        .create_channel(
            &t.captain,
            "ops",
            "Runs the release scripts on the build box.",
        )
        .await?;
    let ops: ChannelRef = "ops".parse()?;
    scripted.push(ScriptedReply::tool_calls(&[(
        "run_command",
        r#"{"command": "echo built > release.txt && cat release.txt && hostname"}"#,
    )]));
    scripted.reply_text("Built.");
    let posted = t
        .helm
        .post_message(&t.captain, &ops, "@ops-agent build the release", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    let result = scripted.requests()[1]
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content.clone()),
            _ => None,
        });
    let result = result.ok_or_else(|| anyhow::anyhow!("no tool result"))?;
    assert!(
        result.starts_with("exit code 0\nstdout:\nbuilt\n"),
        "{result}"
    );
    let id = t.helm.channel(&ops).await?.channel.id;
    assert_eq!(
        std::fs::read_to_string(server.home.join(format!("channels/{id}/release.txt")))?,
        "built\n"
    );
    assert!(
        !t.data_dir()
            .join(format!("channels/{id}/workspace/release.txt"))
            .exists(),
        "nothing was written on this host"
    );
    // What the command made there is the thread's artifact, as on this host.
    let artifacts = t
        .helm
        .channel_artifacts(&t.captain, &ops, Some(posted.thread.id))
        .await?;
    let paths: Vec<&str> = artifacts.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, ["/workspace/release.txt"], "{artifacts:?}");
    // And a file made outside any turn is picked up by a rescan.
    exec(
        &t,
        &ops,
        CommandSpec::new(
            "mkdir -p out .hidden && echo x > out/later.txt && echo y > .hidden/no.txt",
        ),
    )
    .await?;
    let added = t.helm.rescan_artifacts(&t.captain, &ops).await?;
    let added: Vec<&str> = added.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(added, ["/workspace/out/later.txt"]);
    Ok(())
}

/// Sets the environment variable the config names for the key.
#[allow(unsafe_code)]
fn set_key_variable(name: &str, value: &str) {
    // SAFETY: `set_var` is unsafe because another thread may read the
    // environment at the same time; this variable is unique to the one
    // test that sets it, and read only after this call returns.
    unsafe { std::env::set_var(name, value) }
}

/// A channel made with a named computer runs there (commands, files); the
/// others stay on the default (this host); a name the configuration does
/// not give is refused before anything is made.
#[tokio::test]
async fn a_channel_runs_on_the_computer_it_chose() -> anyhow::Result<()> {
    let server = OpenTerminal::start().await?;
    let t = TestHelm::try_with_options(|o| {
        let boxed = helm_core::exec::ComputerServer::new(&server.url, &server.key)?;
        o.computers.named.insert("box".into(), boxed);
        Ok(())
    })
    .await?;
    assert_eq!(t.helm.computer_choices(), ["box"]);
    let choose = |name: &str, computer: &str| NewChannel {
        computer: Some(computer.to_string()),
        ..NewChannel::new(name, "Runs on a chosen computer.")
    };
    let Err(refused) = t
        .helm
        .create_channel_with(&t.captain, choose("ml", "gpu"))
        .await
    else {
        anyhow::bail!("a computer the configuration does not name was accepted");
    };
    assert_eq!(refused.kind(), ErrorKind::Invalid, "{refused}");
    assert!(
        refused.to_string().contains("box"),
        "names the choices: {refused}"
    );
    assert!(
        t.helm.channel(&"ml".parse()?).await.is_err(),
        "nothing made"
    );

    let boxed = t
        .helm
        .create_channel_with(&t.captain, choose("builds", "box"))
        .await?;
    assert_eq!(
        boxed.profile.capability_policy.computer.as_deref(),
        Some("box")
    );
    t.helm
        .create_channel(&t.captain, "notes", "Stays on this host.")
        .await?;
    let made = "pwd; echo made > made.txt";
    let there = exec(&t, &"builds".parse()?, CommandSpec::new(made)).await?;
    assert_eq!(there.isolation, Isolation::Remote, "{there:?}");
    let root = server.home.join(format!("channels/{}", boxed.channel.id));
    assert_eq!(std::fs::read_to_string(root.join("made.txt"))?, "made\n");
    let files = t.helm.files(&t.captain, &"builds".parse()?).await?;
    assert_eq!(files.read("made.txt", None).await?.content, "made\n");

    let here = exec(&t, &"notes".parse()?, CommandSpec::new(made)).await?;
    assert_ne!(here.isolation, Isolation::Remote, "{here:?}");
    let notes = t.helm.channel(&"notes".parse()?).await?;
    let local = t.helm.data_root().world(notes.channel.id).workspace();
    assert_eq!(std::fs::read_to_string(local.join("made.txt"))?, "made\n");
    assert!(
        !server
            .home
            .join(format!("channels/{}/made.txt", notes.channel.id))
            .exists()
    );
    Ok(())
}
