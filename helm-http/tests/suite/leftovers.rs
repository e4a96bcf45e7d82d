//! What a server kills at start: only what its own data root started and
//! lost. Real `helm-http` processes, in both isolation modes (bubblewrap
//! where `bwrap` is installed), real commands and terminals:
//!
//! - two data roots on one host: a long command and a terminal of server A
//!   survive the start of server B (the CI failure: B's start killed every
//!   process under any channel uid, A's terminal among them, and A then
//!   answered "terminal 1 not found");
//! - a server SIGKILLed mid-`run_command`, with a terminal on the host
//!   running a job that ignores the hang-up (which the crash alone does not
//!   end): after the restart of the same data root nothing of theirs runs,
//!   and the turn and its tool call are interrupted.
//!
//! And a stale record whose pid now belongs to an unrelated process (with
//! another start time) does not get it killed; `helm-core`'s `exec::ledger`
//! tests cover that, a live owner and another boot as well.

use std::path::Path;
use std::time::Duration;

use futures_util::SinkExt;
use helm_tests::mock::{Behaviour, MockOpenAi};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::computer::read_until;
use super::kit::events_ws;
use super::people::{Person, captain};
use super::process::Process;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The isolation modes this host can test.
fn modes() -> Vec<&'static str> {
    let mut modes = vec!["process"];
    let bwrap = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .any(|p| Path::new(p).is_file());
    if bwrap {
        modes.push("bubblewrap");
    } else {
        eprintln!("bubblewrap: skipped, bwrap is not installed");
    }
    modes
}

/// A `sleep` argument no other process on the host has: `300.<digits>`.
fn marker() -> String {
    helm_tests::unique("300.")
}

/// Kills, when dropped, whatever still runs with its markers: a failing
/// test leaves no five-minute `sleep` behind.
struct Reap(Vec<String>);

impl Drop for Reap {
    fn drop(&mut self) {
        for marker in &self.0 {
            for pid in processes_with(marker) {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Live processes on the host whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| Some(s[s.rfind(')')? + 1..].trim_start().starts_with('Z')))
                .unwrap_or(true);
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// Waits (20 s at most) until processes with `marker` run, or none do.
async fn wait_processes(marker: &str, running: bool) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while processes_with(marker).is_empty() == running {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "processes with {marker}: expected running = {running}, found {:?}",
            processes_with(marker)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// A server on `data` in `mode`, with the Captain signed up.
async fn server(data: &Path, mode: &str) -> anyhow::Result<(Process, Person)> {
    let mut server = Process::spawn_with(data, &["--isolation", mode])?;
    server.wait_ready().await?;
    let code = std::fs::read_to_string(data.join("setup-code"))?;
    let ada = captain(&server.url, code.trim()).await?;
    Ok((server, ada))
}

/// Opens a terminal in `channel` and types `line` into it.
async fn terminal(
    server: &Process,
    ada: &Person,
    channel: &str,
    line: &str,
) -> anyhow::Result<(u64, Socket)> {
    let opened = ada
        .ok(
            Method::POST,
            &format!("/api/channels/{channel}/terminals"),
            Some(json!({"rows": 24, "cols": 80})),
            StatusCode::CREATED,
        )
        .await?;
    let id = opened["id"].as_u64().unwrap_or_default();
    let url = format!(
        "{}/api/terminals/{id}/ws",
        server.url.replacen("http://", "ws://", 1)
    );
    let mut socket = events_ws(&url, &ada.token).await?;
    socket
        .send(Message::Binary(format!("{line}\n").into_bytes().into()))
        .await?;
    Ok((id, socket))
}

/// Writes a ledger record naming `pid` with an earlier start time than the
/// process that has it now, as a dead server would have left it.
fn stale_record(data: &Path, pid: u32) -> anyhow::Result<std::path::PathBuf> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let start: u64 = stat[stat.rfind(')').unwrap_or_default() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap_or_default()
        .parse()?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?;
    let path = data
        .join("state")
        .join("procs")
        .join(format!("{pid}-{}", start.saturating_sub(1)));
    std::fs::write(
        &path,
        format!("boot {}\nowner {} 1\n", boot.trim(), u32::MAX - 1),
    )?;
    Ok(path)
}

/// The records in a data root's process ledger.
fn records(data: &Path) -> Vec<String> {
    helm_tests::dir_names(&data.join("state").join("procs"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_data_roots_server_leaves_the_first_ones_commands_and_terminals_alone()
-> anyhow::Result<()> {
    for mode in modes() {
        let dir = tempfile::tempdir()?;
        let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
        let (a, ada) = server(&a_data, mode).await?;
        ada.create_channel("night", "Runs the night shift.").await?;
        let key = ada
            .ok(
                Method::POST,
                "/api/channels/night/ot-key",
                None,
                StatusCode::CREATED,
            )
            .await?;
        let key = key["secret"].as_str().unwrap_or_default().to_string();
        let http = super::kit::client()?;
        let (command_marker, terminal_marker) = (marker(), marker());
        let _reap = Reap(vec![command_marker.clone(), terminal_marker.clone()]);
        let started: Value = http
            .post(format!("{}/api/channels/night/ot/execute", a.url))
            .bearer_auth(&key)
            .json(&json!({"command": format!("sleep {command_marker}; echo done")}))
            .send()
            .await?
            .json()
            .await?;
        assert_eq!(started["status"], "running", "{mode}: {started}");
        let command = started["id"].as_str().unwrap_or_default().to_string();
        let (terminal_id, mut socket) = terminal(
            &a,
            &ada,
            "night",
            &format!("sleep {terminal_marker}; echo END"),
        )
        .await?;
        wait_processes(&command_marker, true).await?;
        wait_processes(&terminal_marker, true).await?;
        ada.poll("both records", || async {
            Ok((records(&a_data).len() == 2).then_some(()))
        })
        .await?;

        // Another server starts on another data root (with channels of the
        // same ids, so the same channel uids), and runs a command of its own.
        let (b, bea) = server(&b_data, mode).await?;
        bea.create_channel("night", "Another night shift.").await?;
        let (_, mut other) = terminal(&b, &bea, "night", "echo B-$((40+2))").await?;
        read_until(&mut other, "B-42").await?;

        // A's command and terminal still run, and answer.
        let status: Value = http
            .get(format!(
                "{}/api/channels/night/ot/execute/{command}/status",
                a.url
            ))
            .bearer_auth(&key)
            .send()
            .await?
            .json()
            .await?;
        assert_eq!(status["status"], "running", "{mode}: {status}");
        assert!(!processes_with(&command_marker).is_empty(), "{mode}");
        assert!(!processes_with(&terminal_marker).is_empty(), "{mode}");
        let (_, listed) = ada.get("/api/channels/night/terminals").await?;
        assert_eq!(listed[0]["id"], terminal_id, "{mode}: {listed}");
        assert_eq!(listed[0]["running"], true, "{mode}: {listed}");
        // Ctrl-C ends the sleep; the shell goes on and answers.
        socket.send(Message::Binary(vec![3].into())).await?;
        socket
            .send(Message::Binary(b"echo A-$((6*7))\n".to_vec().into()))
            .await?;
        read_until(&mut socket, "A-42").await?;
        drop((a, b));
        // Neither server's processes outlive it.
        wait_processes(&command_marker, false).await?;
        wait_processes(&terminal_marker, false).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_command_leaves_nothing_running_after_its_restart() -> anyhow::Result<()>
{
    for mode in modes() {
        let dir = tempfile::tempdir()?;
        let data = dir.path().join("data");
        let (mut first, ada) = server(&data, mode).await?;
        let mock = MockOpenAi::start().await?;
        let marker = marker();
        let command = format!("echo up > /workspace/started; sleep {marker}; echo done");
        mock.push(Behaviour::tool_call(
            "run_command",
            &json!({ "command": command }).to_string(),
        ));
        mock.push(Behaviour::text("The long job ran."));
        ada.add_mock_provider("mock", &mock.base_url(), "mock-model")
            .await?;
        ada.create_channel("night", "Runs the night shift.").await?;
        let (_, posted) = ada
            .post(
                "/api/channels/night/messages",
                json!({"text": "@night-agent run the long job"}),
            )
            .await?;
        let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
        let turn = posted["turn"]["id"].as_i64().unwrap_or_default();
        wait_processes(&marker, true).await?;
        // (Written just after the spawn, so a moment after the process shows.)
        ada.poll("the command's record", || async {
            Ok((!records(&data).is_empty()).then_some(()))
        })
        .await?;

        // A terminal on Skipper's host computer (`#main`) runs a job that
        // ignores the hang-up: nothing there ends it with the server (no
        // PID namespace; the shell waits for its job, not for input).
        let stubborn = self::marker();
        let _reap = Reap(vec![marker.clone(), stubborn.clone()]);
        let (_, _socket) = terminal(
            &first,
            &ada,
            "main",
            &format!("trap '' HUP; sleep {stubborn}"),
        )
        .await?;
        wait_processes(&stubborn, true).await?;

        // The server dies as a crash would.
        first.kill_hard()?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !processes_with(&stubborn).is_empty(),
            "{mode}: the crash alone ended the terminal's job; this test would prove nothing"
        );
        // A stale record: its pid now belongs to an unrelated process (one
        // of this test's, in a session of its own) that started later.
        let mut unrelated = std::process::Command::new("setsid")
            .args(["sleep", "60"])
            .spawn()?;
        let stale = stale_record(&data, unrelated.id())?;

        let mut second = Process::spawn_with(&data, &["--isolation", mode])?;
        second.wait_ready().await?;
        let ada = ada.at(&second.url);

        // Nothing of the command or the terminal runs; the records are gone;
        // the unrelated process runs on.
        wait_processes(&marker, false).await?;
        wait_processes(&stubborn, false).await?;
        assert!(
            unrelated.try_wait()?.is_none(),
            "{mode}: an unrelated process was killed"
        );
        assert!(!stale.exists(), "{mode}: the stale record stays");
        unrelated.kill()?;
        unrelated.wait()?;
        assert_eq!(records(&data), Vec::<String>::new(), "{mode}");
        let ended = ada.wait_ended(thread, turn).await?;
        assert_eq!(ended["state"], "interrupted", "{mode}: {ended}");
        let (_, activity) = ada.get("/api/channels/night/activity").await?;
        let tools: Vec<(&str, &str)> = activity
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                (
                    a["tool"].as_str().unwrap_or_default(),
                    a["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            tools,
            [("run_command", "interrupted")],
            "{mode}: {activity}"
        );
    }
    Ok(())
}
