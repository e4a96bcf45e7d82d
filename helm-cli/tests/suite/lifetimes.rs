//! The faults: `1helm exec` killed (KILL, TERM, HUP, INT) with a long
//! command running, which starts background jobs, a new session and a
//! double fork; afterwards no process of that channel's uid may be left.
//! And the data root, right after `init`: closed to other users.
//!
//! Channel uids are the same for every Helm on the machine (channel 2 is
//! uid base + 2 everywhere), so a process counts only when it also works in
//! this test's data directory: another Helm's shell running beside the
//! suite is not this test's leftover.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::kit::Cli;

/// The uid channel `id` runs as (the default sandbox base + id).
fn channel_uid(id: u32) -> u32 {
    helm_core::exec::DEFAULT_SANDBOX_UID_BASE + id
}

/// Processes running (not zombies) as `uid` with their working directory
/// under `data`.
fn processes_of(uid: u32, data: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let zombie = status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'));
        let owner = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        let here =
            std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(data));
        if !zombie && owner == Some(uid) && here {
            let cmd = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!("{name}: {}", cmd.replace('\0', " ")));
        }
    }
    found
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    // A guard against hangs, not a bound being measured.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        anyhow::ensure!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[test]
fn a_killed_exec_leaves_no_process_of_the_channel_behind() -> anyhow::Result<()> {
    if !helm_tests::running_as_root() {
        eprintln!("skipped: channels have uids of their own only when Helm runs as root");
        return Ok(());
    }
    let cli = Cli::init()?;
    let data = std::fs::canonicalize(cli.data())?;
    let mut id = 1;
    for signal in ["KILL", "TERM", "HUP", "INT"] {
        let name = format!("life-{}", signal.to_lowercase());
        let created = cli.run(&["channel", "create", &name, "--purpose", "Long commands."])?;
        anyhow::ensure!(created.code == 0, "{}", created.stderr);
        id += 1;
        let uid = channel_uid(id);
        // A long command with a background job, a job in a session of its
        // own and a double-forked one.
        let mut exec = Command::new(assert_cmd::cargo::cargo_bin("1helm"))
            .arg("--data")
            .arg(cli.data())
            .args([
                "--isolation",
                "process",
                "exec",
                &name,
                "--timeout",
                "3600",
                "--",
            ])
            .arg("sleep 300 & setsid sleep 301 & (sleep 302 &) ; sleep 303")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        wait_until("the command's four sleeps", || {
            processes_of(uid, &data)
                .iter()
                .filter(|p| p.contains("sleep 30"))
                .count()
                >= 4
        })?;
        Command::new("kill")
            .args([&format!("-{signal}"), &exec.id().to_string()])
            .status()?;
        let status = exec.wait()?;
        assert!(!status.success(), "1helm exec ended by {signal}: {status}");
        wait_until(&format!("no process of uid {uid} after {signal}"), || {
            processes_of(uid, &data).is_empty()
        })
        .map_err(|e| anyhow::anyhow!("{e}: {:?}", processes_of(uid, &data)))?;
    }
    Ok(())
}

#[test]
fn the_data_root_is_closed_right_after_init() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    let mode = |p: &std::path::Path| -> anyhow::Result<u32> {
        Ok(std::fs::metadata(p)?.permissions().mode() & 0o777)
    };
    let data = cli.data();
    assert_eq!(mode(&data)?, 0o700, "data root");
    assert_eq!(mode(&data.join("channels"))?, 0o700, "channels/");
    for file in ["helm.db", "helm.db-wal", "helm.db-shm"] {
        let path = data.join(file);
        if path.exists() {
            assert_eq!(mode(&path)?, 0o600, "{file}");
        }
    }
    assert!(data.join("helm.db").exists());
    // A data root made loose by hand is closed again when it is opened.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755))?;
    std::fs::set_permissions(data.join("helm.db"), std::fs::Permissions::from_mode(0o644))?;
    let status = cli.run(&["status"])?;
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert_eq!(mode(&data)?, 0o700);
    assert_eq!(mode(&data.join("helm.db"))?, 0o600);
    Ok(())
}
