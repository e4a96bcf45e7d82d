//! Terminals in a channel's computer: where they start, who can watch, and
//! that closing one leaves nothing behind.

use std::time::Duration;

use helm_core::ErrorKind;
use helm_core::exec::{IsolationChoice, TerminalEvent, TerminalSize, TerminalSubscription};
use helm_core::model::ChannelRef;

use super::kit::{CONFINED_MODES, Fixture, LAUNCH_PURPOSE};

/// Reads a viewer's output (its scrollback first) until `needle` appears.
async fn read_until(
    view: &mut TerminalSubscription,
    seen: &mut String,
    needle: &str,
) -> anyhow::Result<()> {
    if seen.is_empty() {
        seen.push_str(&String::from_utf8_lossy(&view.scrollback));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.contains(needle) {
        let event = tokio::time::timeout_at(deadline, view.events.recv())
            .await
            .map_err(|_| anyhow::anyhow!("no {needle:?} in terminal output: {seen:?}"))??;
        match event {
            TerminalEvent::Output { data } => seen.push_str(&String::from_utf8_lossy(&data)),
            TerminalEvent::Closed { .. } => {
                anyhow::bail!("terminal closed before {needle:?}: {seen:?}")
            }
        }
    }
    Ok(())
}

/// Terminal output as lines, without carriage returns and escape sequences.
fn plain_lines(output: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-letter
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
        } else if c != '\r' {
            plain.push(c);
        }
    }
    plain.lines().map(String::from).collect()
}

async fn channel(f: &Fixture) -> anyhow::Result<ChannelRef> {
    let record = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    Ok(ChannelRef::Id(record.channel.id))
}

/// Process ids in session `sid`.
fn session(sid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .ok()
                        .and_then(|s| {
                            let rest = s[s.rfind(')')? + 1..].to_string();
                            rest.split_whitespace().nth(3)?.parse::<u32>().ok()
                        })
                        == Some(sid)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `pid` has exited and waits only for the host's init to reap it.
fn is_orphaned_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s[s.rfind(')')? + 1..].to_string();
            let mut fields = rest.split_whitespace();
            Some(fields.next()? == "Z" && fields.next()? == "1")
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn a_terminal_starts_in_workspace_and_its_files_are_the_channels() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Bubblewrap).await?;
    let channel = channel(&f).await?;
    let term = f
        .helm
        .open_terminal(&f.captain, &channel, TerminalSize::default())
        .await?;
    let mut view = term.subscribe();
    let mut seen = String::new();
    term.write(b"pwd; id -un; echo from-term > made-here.txt; echo ok-$((6*7))\n")
        .await?;
    read_until(&mut view, &mut seen, "ok-42").await?;
    let lines = plain_lines(&seen);
    assert!(lines.contains(&"/workspace".to_string()), "{seen:?}");
    assert!(lines.contains(&"agent".to_string()), "{seen:?}");
    let files = f.helm.files(&f.captain, &channel).await?;
    assert_eq!(
        files.read("made-here.txt", None).await?.content,
        "from-term\n"
    );
    f.helm.terminals().close(term.id()).await?;
    Ok(())
}

#[tokio::test]
async fn a_second_viewer_sees_the_scrollback_then_live_output() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = channel(&f).await?;
    let term = f
        .helm
        .open_terminal(&f.captain, &channel, TerminalSize::default())
        .await?;
    let mut first = term.subscribe();
    let mut seen_first = String::new();
    term.write(b"echo before-$((1+1))\n").await?;
    read_until(&mut first, &mut seen_first, "before-2").await?;

    // A reconnect: the earlier output is there, without running anything again.
    let mut second = f.helm.terminals().get(term.id())?.subscribe();
    assert!(String::from_utf8_lossy(&second.scrollback).contains("before-2"));
    let mut seen_second = String::new();
    term.write(b"echo after-$((2+2))\n").await?;
    read_until(&mut first, &mut seen_first, "after-4").await?;
    read_until(&mut second, &mut seen_second, "after-4").await?;
    assert_eq!(f.helm.terminals().list(None).len(), 1);
    f.helm.terminals().close(term.id()).await?;
    Ok(())
}

#[tokio::test]
async fn closing_a_terminal_leaves_no_process() -> anyhow::Result<()> {
    for mode in CONFINED_MODES {
        let f = Fixture::with_isolation(mode).await?;
        let channel = channel(&f).await?;
        let term = f
            .helm
            .open_terminal(&f.captain, &channel, TerminalSize::default())
            .await?;
        let mut view = term.subscribe();
        let mut seen = String::new();
        // An interactive shell puts these jobs in process groups of their own.
        term.write(b"sleep 1000 & (sleep 1001 &); nohup sleep 1002 >/dev/null 2>&1 & echo started-$((3*3))\n")
            .await?;
        read_until(&mut view, &mut seen, "started-9").await?;
        let leader = term.pid();
        assert!(
            session(leader).len() >= 4,
            "{mode:?}: the shell and its jobs run"
        );
        f.helm.terminals().close(term.id()).await?;
        let left: Vec<u32> = if mode == IsolationChoice::Bubblewrap {
            session(leader)
        } else {
            // Without a PID namespace, a job whose parent is gone belongs to
            // the host's init, which reaps it in its own time: dead, but
            // possibly still listed as a zombie for a moment.
            session(leader)
                .into_iter()
                .filter(|p| !is_orphaned_zombie(*p))
                .collect()
        };
        assert_eq!(left, Vec::<u32>::new(), "{mode:?}: processes left");
        assert!(
            !std::path::Path::new(&format!("/proc/{leader}")).exists(),
            "{mode:?}: not reaped"
        );
        assert!(f.helm.terminals().list(None).is_empty());
        let gone = f.helm.terminals().get(term.id());
        assert_eq!(gone.err().map(|e| e.kind()), Some(ErrorKind::NotFound));
    }
    Ok(())
}

#[tokio::test]
async fn a_shell_that_exits_ends_its_terminal_with_its_code() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = channel(&f).await?;
    let term = f
        .helm
        .open_terminal(&f.captain, &channel, TerminalSize::default())
        .await?;
    let mut view = term.subscribe();
    term.resize(TerminalSize {
        rows: 30,
        cols: 100,
    })?;
    let mut seen = String::new();
    term.write(b"stty size; exit 7\n").await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let code = loop {
        match tokio::time::timeout_at(deadline, view.events.recv()).await?? {
            TerminalEvent::Output { data } => seen.push_str(&String::from_utf8_lossy(&data)),
            TerminalEvent::Closed { exit_code } => break exit_code,
        }
    };
    assert_eq!(code, Some(7));
    assert!(seen.contains("30 100"), "{seen:?}");
    assert!(!term.is_running());
    assert!(f.helm.terminals().list(None).is_empty());
    let write = term.write(b"echo late\n").await;
    assert_eq!(write.err().map(|e| e.kind()), Some(ErrorKind::Refused));
    Ok(())
}

#[tokio::test]
async fn terminals_are_limited_per_channel_and_closed_on_archive() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = channel(&f).await?;
    let mut open = Vec::new();
    for _ in 0..4 {
        open.push(
            f.helm
                .open_terminal(&f.captain, &channel, TerminalSize::default())
                .await?,
        );
    }
    let fifth = f
        .helm
        .open_terminal(&f.captain, &channel, TerminalSize::default())
        .await;
    let err = fifth.err();
    assert_eq!(err.as_ref().map(|e| e.kind()), Some(ErrorKind::Refused));
    assert!(
        err.map(|e| e.to_string())
            .unwrap_or_default()
            .contains("4 open terminals")
    );
    assert_eq!(f.helm.terminals().list(None).len(), 4);

    let leaders: Vec<u32> = open.iter().map(|t| t.pid()).collect();
    f.helm.archive_channel(&f.captain, &channel).await?;
    assert!(f.helm.terminals().list(None).is_empty());
    for leader in leaders {
        assert_eq!(session(leader), Vec::<u32>::new());
    }
    Ok(())
}

#[tokio::test]
async fn the_workspace_wide_terminal_limit_holds_across_channels() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let mut options = helm_core::HelmOptions::new(f.data_dir());
    options.computer.terminals.total = 2;
    let helm = helm_core::Helm::open(options).await?;
    let a = helm
        .create_channel(&f.captain, "alpha", LAUNCH_PURPOSE)
        .await?;
    let b = helm
        .create_channel(&f.captain, "bravo", LAUNCH_PURPOSE)
        .await?;
    let (a, b) = (ChannelRef::Id(a.channel.id), ChannelRef::Id(b.channel.id));
    let first = helm
        .open_terminal(&f.captain, &a, TerminalSize::default())
        .await?;
    helm.open_terminal(&f.captain, &b, TerminalSize::default())
        .await?;
    let third = helm
        .open_terminal(&f.captain, &b, TerminalSize::default())
        .await;
    let err = third.err();
    assert_eq!(err.as_ref().map(|e| e.kind()), Some(ErrorKind::Refused));
    assert!(
        err.map(|e| e.to_string())
            .unwrap_or_default()
            .contains("the workspace already has 2")
    );
    assert_eq!(helm.terminals().list(first.channel()).len(), 1);
    helm.terminals().close(first.id()).await?;
    helm.open_terminal(&f.captain, &b, TerminalSize::default())
        .await?;
    assert_eq!(helm.terminals().list(None).len(), 2);
    Ok(())
}

/// The attack: one member opens terminal after terminal across channels to
/// take the workspace's whole allowance. They are stopped at their own
/// limit, and the Captain can still open one.
#[tokio::test]
async fn one_member_cannot_take_every_terminal() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Process).await?;
    let mira = f
        .helm
        .add_user(&f.captain, "mira", helm_core::model::Role::Member)
        .await?;
    let mut held = Vec::new();
    for name in ["one", "two"] {
        f.helm.create_channel(&mira, name, LAUNCH_PURPOSE).await?;
    }
    let mut refused = None;
    for i in 0..6 {
        let channel: ChannelRef = if i % 2 == 0 { "one" } else { "two" }.parse()?;
        match f
            .helm
            .open_terminal(&mira, &channel, TerminalSize::default())
            .await
        {
            Ok(t) => held.push(t),
            Err(e) => {
                refused = Some((i, e));
                break;
            }
        }
    }
    let (at, error) = refused.ok_or_else(|| anyhow::anyhow!("no limit for one member"))?;
    assert_eq!(at, 4, "a member holds at most 4");
    assert_eq!(error.kind(), ErrorKind::Refused);
    let captains = f
        .helm
        .open_terminal(&f.captain, &"two".parse()?, TerminalSize::default())
        .await?;
    for t in held.iter().chain([&captains]) {
        f.helm.close_terminal(&f.captain, t.id()).await?;
    }
    Ok(())
}

/// Members together cannot fill one channel's terminals: the last is kept
/// for the Captain and admins, so a member cannot shut the Captain out of
/// a channel's computer.
#[tokio::test]
async fn members_leave_one_of_a_channels_terminals_to_the_captain() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Process).await?;
    let mira = f
        .helm
        .add_user(&f.captain, "mira", helm_core::model::Role::Member)
        .await?;
    f.helm.create_channel(&mira, "one", LAUNCH_PURPOSE).await?;
    let one: ChannelRef = "one".parse()?;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(
            f.helm
                .open_terminal(&mira, &one, TerminalSize::default())
                .await?,
        );
    }
    let refused = f
        .helm
        .open_terminal(&mira, &one, TerminalSize::default())
        .await
        .err();
    let Some(refused) = refused else {
        panic!("a member took a channel's last terminal");
    };
    assert_eq!(refused.kind(), ErrorKind::Refused);
    assert!(
        refused
            .to_string()
            .contains("kept for the Captain and admins"),
        "{refused}"
    );
    let captains = f
        .helm
        .open_terminal(&f.captain, &one, TerminalSize::default())
        .await?;
    for t in held.iter().chain([&captains]) {
        f.helm.close_terminal(&f.captain, t.id()).await?;
    }
    Ok(())
}
