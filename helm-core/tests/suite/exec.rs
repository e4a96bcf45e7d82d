//! Commands in a channel's computer: where they run, what they see, how
//! they end.

use std::time::{Duration, Instant};

use helm_core::ErrorKind;
use helm_core::exec::{CommandSpec, Isolation, IsolationChoice};
use helm_core::model::ChannelRef;

use super::kit::{CONFINED_MODES, Fixture, LAUNCH_PURPOSE};

async fn launch(f: &Fixture) -> anyhow::Result<ChannelRef> {
    let record = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    Ok(ChannelRef::Id(record.channel.id))
}

#[tokio::test]
async fn bubblewrap_commands_start_in_workspace_as_an_unprivileged_agent() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Bubblewrap).await?;
    let channel = launch(&f).await?;
    let result = f
        .helm
        .exec(
            &f.captain,
            &channel,
            CommandSpec::new("pwd; echo \"$HOME\"; id -u; whoami; hostname; echo oops >&2; exit 3"),
        )
        .await?;
    assert_eq!(result.isolation, Isolation::Bubblewrap);
    assert_eq!(result.exit_code, Some(3));
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(lines[0], "/workspace", "{}", result.stdout);
    assert_eq!(lines[1], "/workspace");
    assert_ne!(lines[2], "0", "the agent is never root");
    assert_eq!(lines[3], "agent");
    assert_eq!(lines[4], "launch");
    assert_eq!(result.stderr, "oops\n");
    assert!(!result.truncated && !result.timed_out);
    Ok(())
}

/// The names of the variables a command sees, without those the shell itself sets.
fn env_names(stdout: &str) -> Vec<String> {
    let mut names: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
        .filter(|k| !["PWD", "SHLVL", "_", "OLDPWD"].contains(&k.as_str()))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn commands_get_a_scrubbed_environment_stdin_and_their_additions() -> anyhow::Result<()> {
    for mode in CONFINED_MODES {
        let f = Fixture::with_isolation(mode).await?;
        let channel = launch(&f).await?;
        let result = f
            .helm
            .exec(
                &f.captain,
                &channel,
                CommandSpec::new(
                    "test -w \"$HOME\" && env -0 | tr '\\0' '\\n' | grep -v '^ ' ; echo; cat",
                )
                .env("GREETING", "hi")
                .stdin("from stdin\n"),
            )
            .await?;
        assert!(result.success(), "{mode:?}: {result:?}");
        assert_eq!(result.stderr, "", "{mode:?}: the login shell is quiet");
        assert_eq!(
            env_names(&result.stdout),
            ["GREETING", "HOME", "LANG", "PATH", "TERM", "USER"],
            "{mode:?}: {}",
            result.stdout
        );
        assert!(result.stdout.ends_with("from stdin\n"), "{mode:?}");
        assert!(result.stdout.contains("USER=agent"), "{mode:?}");
    }
    Ok(())
}

#[tokio::test]
async fn commands_can_start_in_a_subdirectory_but_not_outside() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Bubblewrap).await?;
    let channel = launch(&f).await?;
    f.helm
        .files(&f.captain, &channel)
        .await?
        .mkdir("src/app")
        .await?;
    let result = f
        .helm
        .exec(&f.captain, &channel, CommandSpec::new("pwd").cwd("src/app"))
        .await?;
    assert_eq!(result.stdout, "/workspace/src/app\n");
    for bad in ["..", "/etc", "missing"] {
        let err = f
            .helm
            .exec(&f.captain, &channel, CommandSpec::new("pwd").cwd(bad))
            .await
            .err()
            .map(|e| e.kind());
        assert!(
            matches!(
                err,
                Some(ErrorKind::Forbidden) | Some(ErrorKind::Refused) | Some(ErrorKind::NotFound)
            ),
            "{bad}: {err:?}"
        );
    }
    Ok(())
}

/// The network interfaces a command sees.
async fn interfaces(
    f: &Fixture,
    computer: &helm_core::exec::Computer,
) -> anyhow::Result<Vec<String>> {
    let result = f
        .helm
        .executor()
        .await?
        .run(
            computer,
            CommandSpec::new("tail -n +3 /proc/net/dev | cut -d: -f1"),
        )
        .await?;
    let mut names: Vec<String> = result.stdout.split_whitespace().map(String::from).collect();
    names.sort();
    Ok(names)
}

#[tokio::test]
async fn the_network_follows_the_capability_policy() -> anyhow::Result<()> {
    let mut host: Vec<String> = std::fs::read_to_string("/proc/net/dev")?
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next().map(|n| n.trim().to_string()))
        .collect();
    host.sort();
    let modes: &[IsolationChoice] = if super::kit::running_as_root() {
        &CONFINED_MODES
    } else {
        // Without root, process isolation cannot leave the host's network.
        &CONFINED_MODES[..1]
    };
    for mode in modes {
        let f = Fixture::with_isolation(*mode).await?;
        let channel = launch(&f).await?;
        let mut computer = f.helm.computer(&channel).await?;
        assert!(!computer.network, "channels start without network");
        assert_eq!(interfaces(&f, &computer).await?, ["lo"], "{mode:?}");
        computer.network = true;
        assert_eq!(interfaces(&f, &computer).await?, host, "{mode:?}");
    }
    Ok(())
}

/// `sleep` processes whose command line contains `marker` (not the
/// shells and sandboxes that started them).
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    let comm =
                        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                    comm.trim() == "sleep"
                        && std::fs::read(format!("/proc/{pid}/cmdline"))
                            .map(|c| String::from_utf8_lossy(&c).contains(marker))
                            .unwrap_or(false)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn marker() -> String {
    // A sleep length no other process uses: 1000.<nanos>.
    format!(
        "1000.{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(1)
    )
}

#[tokio::test]
async fn a_timeout_ends_the_command_and_its_children() -> anyhow::Result<()> {
    for mode in CONFINED_MODES {
        let f = Fixture::with_isolation(mode).await?;
        let channel = launch(&f).await?;
        let sleep = marker();
        let started = Instant::now();
        let result = f
            .helm
            .exec(
                &f.captain,
                &channel,
                CommandSpec::new(format!("sleep {sleep} & sleep {sleep}; echo never"))
                    .timeout(Some(Duration::from_secs(1))),
            )
            .await?;
        assert!(result.timed_out, "{mode:?}: {result:?}");
        assert_eq!(result.exit_code, None);
        assert!(!result.stdout.contains("never"));
        assert!(started.elapsed() < Duration::from_secs(30), "{mode:?}");
        assert_eq!(
            processes_with(&sleep),
            Vec::<u32>::new(),
            "{mode:?}: left running"
        );
    }
    Ok(())
}

#[tokio::test]
async fn background_jobs_end_with_the_command() -> anyhow::Result<()> {
    for mode in CONFINED_MODES {
        let f = Fixture::with_isolation(mode).await?;
        let channel = launch(&f).await?;
        let sleep = marker();
        let result = f
            .helm
            .exec(
                &f.captain,
                &channel,
                CommandSpec::new(format!(
                    "(sleep {sleep} &) ; nohup sleep {sleep} >/dev/null 2>&1 & echo started"
                )),
            )
            .await?;
        assert_eq!(result.stdout, "started\n", "{mode:?}");
        let left = processes_with(&sleep);
        assert_eq!(left, Vec::<u32>::new(), "{mode:?}: left running");
    }
    Ok(())
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_keeps_only_a_tail() -> anyhow::Result<()> {
    const TOTAL: u64 = 100_000_000;
    for mode in CONFINED_MODES {
        let f = Fixture::with_isolation(mode).await?;
        let channel = launch(&f).await?;
        let before = peak_rss_kib();
        let result = f
            .helm
            .exec(
                &f.captain,
                &channel,
                CommandSpec::new(format!(
                    "head -c {TOTAL} /dev/zero | tr '\\0' x; echo; echo end"
                ))
                .output_limit(4096),
            )
            .await?;
        assert!(result.success(), "{mode:?}");
        assert!(result.truncated, "{mode:?}");
        assert_eq!(result.stdout_bytes, TOTAL + 5, "{mode:?}");
        assert!(result.stdout.len() <= 4096);
        assert!(result.stdout.ends_with("x\nend\n"), "{mode:?}");
        // Far less than the 100 MB that went by (other tests share the process).
        let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
        assert!(
            grown_mib < 64,
            "{mode:?}: peak memory grew by {grown_mib} MiB"
        );
    }
    Ok(())
}

#[tokio::test]
async fn started_commands_can_be_fed_polled_and_killed() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Bubblewrap).await?;
    let channel = launch(&f).await?;
    let computer = f.helm.computer(&channel).await?;
    let executor = f.helm.executor().await?;

    let cat = executor
        .start(&computer, CommandSpec::new("cat; echo done").timeout(None))
        .await?;
    cat.write_stdin(b"ping\n").await?;
    let mut seen = String::new();
    for _ in 0..200 {
        seen.push_str(&cat.poll().stdout);
        if seen.contains("ping") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seen, "ping\n");
    cat.close_stdin().await?;
    let result = cat.wait().await?;
    assert!(result.success());
    let last = cat.poll();
    assert!(!last.running);
    assert_eq!(last.stdout, "done\n", "a poll returns only what is new");

    let sleep = marker();
    let long = executor
        .start(
            &computer,
            CommandSpec::new(format!("sleep {sleep}")).timeout(None),
        )
        .await?;
    assert!(long.poll().running);
    let result = long.kill().await?;
    assert!(result.killed && !result.timed_out);
    assert_eq!(processes_with(&sleep), Vec::<u32>::new());

    let dropped = marker();
    let handle = executor
        .start(
            &computer,
            CommandSpec::new(format!("sleep {dropped}")).timeout(None),
        )
        .await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(processes_with(&dropped).len(), 1, "the sleep runs");
    drop(handle);
    for _ in 0..100 {
        if processes_with(&dropped).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        processes_with(&dropped),
        Vec::<u32>::new(),
        "dropping the last handle kills"
    );
    Ok(())
}

#[tokio::test]
async fn an_archived_channel_keeps_its_files_but_runs_nothing() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = launch(&f).await?;
    let files = f.helm.files(&f.captain, &channel).await?;
    files.write("plan.md", "# Plan\n".into()).await?;
    f.helm.archive_channel(&f.captain, &channel).await?;

    let exec = f
        .helm
        .exec(&f.captain, &channel, CommandSpec::new("true"))
        .await;
    assert_eq!(exec.err().map(|e| e.kind()), Some(ErrorKind::Refused));
    let term = f
        .helm
        .open_terminal(&f.captain, &channel, Default::default())
        .await;
    assert_eq!(term.err().map(|e| e.kind()), Some(ErrorKind::Refused));
    assert_eq!(
        f.helm.computer(&channel).await.err().map(|e| e.kind()),
        Some(ErrorKind::Refused)
    );

    let files = f.helm.files(&f.captain, &channel).await?;
    assert_eq!(files.read("plan.md", None).await?.content, "# Plan\n");
    let write = files.write("plan.md", "changed".into()).await;
    let err = write.err();
    assert_eq!(err.as_ref().map(|e| e.kind()), Some(ErrorKind::Refused));
    assert!(
        err.map(|e| e.to_string())
            .unwrap_or_default()
            .contains("archived")
    );
    Ok(())
}

#[tokio::test]
async fn main_runs_on_skippers_host_computer_for_admins_only() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let main: ChannelRef = "main".parse()?;
    let home = f.helm.channel(&main).await?;
    let result = f
        .helm
        .exec(&f.captain, &main, CommandSpec::new("pwd"))
        .await?;
    assert_eq!(result.isolation, Isolation::Host);
    let expected = f.helm.data_root().world(home.channel.id).workspace();
    assert_eq!(result.stdout.trim_end(), expected.display().to_string());

    let member = f
        .helm
        .add_user(&f.captain, "mia", helm_core::model::Role::Member)
        .await?;
    let denied = f.helm.exec(&member, &main, CommandSpec::new("pwd")).await;
    assert_eq!(denied.err().map(|e| e.kind()), Some(ErrorKind::Forbidden));

    // A member may use a public channel's computer.
    let channel = launch(&f).await?;
    assert!(
        f.helm
            .exec(&member, &channel, CommandSpec::new("true"))
            .await?
            .success()
    );
    Ok(())
}

#[tokio::test]
async fn the_workspace_survives_restart_model_change_and_archive() -> anyhow::Result<()> {
    let f = Fixture::with_isolation(IsolationChoice::Bubblewrap).await?;
    let channel = launch(&f).await?;
    let made = f
        .helm
        .exec(
            &f.captain,
            &channel,
            CommandSpec::new(
                "mkdir -p app && echo v1 > app/state.txt && ln -s app/state.txt link && cat link",
            ),
        )
        .await?;
    assert_eq!(made.stdout, "v1\n");

    // A restart: a new process opens the same data root.
    let reopened = f.reopen(IsolationChoice::Bubblewrap).await?;
    let read = |helm: helm_core::Helm| {
        let channel = channel.clone();
        let captain = f.captain.clone();
        async move {
            let result = helm
                .exec(
                    &captain,
                    &channel,
                    CommandSpec::new("cat link app/state.txt"),
                )
                .await?;
            anyhow::Ok(result.stdout)
        }
    };
    assert_eq!(read(reopened.clone()).await?, "v1\nv1\n");

    // A new model for the channel changes nothing in its world.
    let id = f.helm.channel(&channel).await?.channel.id;
    super::kit::register_app_providers(&reopened, &["other"]);
    reopened
        .set_model_policy(
            &f.captain,
            helm_core::store::PolicyScope::Channel(id),
            Some(helm_core::model::ModelChoice::new(
                "other",
                Some("bigger".into()),
            )),
        )
        .await?;
    assert_eq!(read(reopened.clone()).await?, "v1\nv1\n");

    // Archive and restore: the same files, still the agent's.
    reopened.archive_channel(&f.captain, &channel).await?;
    reopened.restore_channel(&f.captain, &channel).await?;
    assert_eq!(read(reopened.clone()).await?, "v1\nv1\n");
    let owner = reopened
        .exec(
            &f.captain,
            &channel,
            CommandSpec::new("echo v2 >> app/state.txt && stat -c %U app/state.txt"),
        )
        .await?;
    assert_eq!(owner.stdout, "agent\n", "{owner:?}");
    Ok(())
}
