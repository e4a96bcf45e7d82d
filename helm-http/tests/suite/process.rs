//! The `helm-http` binary: it holds its data directory against a second
//! server, and on SIGTERM ends running turns as `cancelled` with a visible
//! note, losing nothing.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use helm_core::model::{Author, TurnState};
use helm_core::{Helm, HelmOptions};
use helm_tests::mock::{Behaviour, MockOpenAi};
use serde_json::{Value, json};

use super::kit::{PASSWORD, client};

/// A `helm-http` process serving a data directory on a loopback port.
pub(super) struct Process {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(super) url: String,
}

impl Process {
    pub(super) fn spawn(data: &std::path::Path) -> anyhow::Result<Self> {
        Self::spawn_with(data, &[])
    }

    /// With more command-line arguments (`--isolation process`, say).
    pub(super) fn spawn_with(data: &std::path::Path, extra: &[&str]) -> anyhow::Result<Self> {
        Self::spawn_env(data, extra, &[])
    }

    /// With more arguments and environment variables (`HELM_STORE`, say).
    pub(super) fn spawn_env(
        data: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        Self::spawn_args(&[], data, extra, env)
    }

    /// Like [`Process::spawn_env`], with `first` before the data and listen
    /// flags (a subcommand, as `helm-http computer --data DIR` is written).
    pub(super) fn spawn_args(
        first: &[&str],
        data: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_helm-http"))
            .args(first)
            .args([
                "--data",
                &data.to_string_lossy(),
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args(extra)
            .env("HELM_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        Ok(Process {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    pub(super) async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let http = client()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = http.get(format!("{}/healthz", self.url)).send().await
                && r.status().is_success()
            {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!("the server exited early: {status}");
            }
            anyhow::ensure!(Instant::now() < deadline, "the server did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn terminate(&mut self) -> anyhow::Result<std::process::ExitStatus> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the server did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Process {
    /// The server's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `ws://127.0.0.1:PORT`.
    pub(super) fn ws_url(&self) -> String {
        self.url.replacen("http://", "ws://", 1)
    }

    /// Kills the process with SIGKILL, as a crash or the OOM killer would,
    /// and waits for it to be gone.
    pub(super) fn kill_hard(&mut self) -> anyhow::Result<()> {
        Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status()?;
        self.child.wait()?;
        Ok(())
    }

    /// Waits for the process to exit; returns its status and stderr.
    pub(super) fn finish(&mut self) -> anyhow::Result<(std::process::ExitStatus, String)> {
        use std::io::Read;
        let status = self.child.wait()?;
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr.read_to_string(&mut err)?;
        }
        Ok((status, err))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_data_dir_refuses() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let mut first = Process::spawn(&data)?;
    first.wait_ready().await?;
    let info: Value = serde_json::from_str(&std::fs::read_to_string(data.join("server.json"))?)?;
    assert_eq!(info["url"], first.url.as_str());
    let mut second = Process::spawn(&data)?;
    let output = second.finish()?;
    assert!(!output.0.success());
    assert!(output.1.contains("already serves"), "{}", output.1);
    assert!(output.1.contains(&first.url), "{}", output.1);
    first.terminate()?;
    assert!(
        !data.join("server.json").exists(),
        "server.json is removed on exit"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_interrupts_running_turns_visibly_and_loses_nothing() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let mut server = Process::spawn(&data)?;
    server.wait_ready().await?;
    let http = client()?;
    // The operator reads the setup code the server wrote into its data dir.
    let code = std::fs::read_to_string(data.join("setup-code"))?;
    let setup = http
        .post(format!("{}/api/setup", server.url))
        .json(&json!({"name": "ada", "password": PASSWORD, "setup_code": code.trim()}))
        .send()
        .await?;
    let cookie = setup
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let token: Value = http
        .post(format!("{}/api/tokens", server.url))
        .header("cookie", cookie)
        .header("origin", &server.url)
        .json(&json!({"name": "t"}))
        .send()
        .await?
        .json()
        .await?;
    let token = token["secret"].as_str().unwrap_or_default().to_string();
    let call = |path: &str, body: Value| {
        http.post(format!("{}{path}", server.url))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let mock = MockOpenAi::start().await?;
    // The model starts answering, then never finishes.
    mock.set_fallback(Behaviour::text("Working on it, this will take").hang_after(2));
    call(
        "/api/providers",
        json!({"name": "mock", "kind": "openai", "base_url": mock.base_url(),
               "default_model": "mock-model", "make_default": true}),
    )
    .await?;
    call(
        "/api/channels",
        json!({"name": "launch", "purpose": "The launch."}),
    )
    .await?;
    let posted: Value = call(
        "/api/channels/launch/messages",
        json!({"text": "@launch-agent plan it"}),
    )
    .await?
    .json()
    .await?;
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let detail: Value = http
            .get(format!("{}/api/threads/{thread}", server.url))
            .bearer_auth(&token)
            .send()
            .await?
            .json()
            .await?;
        if detail["turns"][0]["state"] == "running" && mock.requests().len() == 1 {
            break;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the turn never started: {detail}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    let status = server.terminate()?;
    assert!(status.success(), "a clean exit: {status}");

    let helm = Helm::open(HelmOptions::new(&data)).await?;
    let turns = helm
        .thread_turns(helm_core::model::ThreadId(thread))
        .await?;
    // Interrupted, as a crash leaves it: nobody chose to end it, so it can
    // be retried.
    assert_eq!(turns[0].state, TurnState::Interrupted, "{:?}", turns[0]);
    let messages = helm
        .thread_messages(helm_core::model::ThreadId(thread))
        .await?;
    assert!(
        messages.iter().any(|m| m.author == Author::System),
        "a visible note: {messages:?}"
    );
    // What was posted is all there, and what the reply had said.
    assert_eq!(messages[0].content, "@launch-agent plan it");
    assert!(
        messages.iter().any(|m| m.content.starts_with("Working")),
        "{messages:?}"
    );
    Ok(())
}

/// The fault: the deployment requires bubblewrap and the host has no
/// `bwrap` (hidden under a bind mount of /dev/null when it is installed).
/// The server refuses to start and names the package.
#[test]
fn a_server_that_requires_bubblewrap_refuses_to_start_without_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let server = env!("CARGO_BIN_EXE_helm-http");
    let args = format!(
        "{server} --data {} --listen 127.0.0.1:{port} --isolation bubblewrap",
        data.display()
    );
    let bwrap = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file());
    let mut command = match bwrap {
        None => {
            let mut c = Command::new("sh");
            c.args(["-c", &format!("exec {args}")]);
            c
        }
        Some(path) if helm_tests::running_as_root() => {
            let mut c = Command::new("unshare");
            c.args([
                "--mount",
                "sh",
                "-c",
                &format!("mount --bind /dev/null {path} && exec {args}"),
            ]);
            c
        }
        Some(_) => {
            eprintln!("skipped: bwrap is installed and hiding it needs root");
            return Ok(());
        }
    };
    let output = command
        .env("HELM_LOG", "warn")
        .stdin(Stdio::null())
        .output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "it started: {stderr}");
    assert!(stderr.contains("bubblewrap"), "{stderr}");
    assert!(stderr.contains("apt-get install bubblewrap"), "{stderr}");
    Ok(())
}

/// A Postgres store that cannot be reached stops the server at start,
/// naming the store without its password.
#[test]
fn an_unreachable_postgres_store_stops_the_server_at_start() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // A loopback port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let output = Command::new(env!("CARGO_BIN_EXE_helm-http"))
        .arg("--data")
        .arg(dir.path().join("data"))
        .args(["--listen", "127.0.0.1:0"])
        .env(
            "HELM_STORE",
            format!("postgres://helm:s3cret@127.0.0.1:{port}/helm"),
        )
        .env("HELM_LOG", "warn")
        .stdin(Stdio::null())
        .output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "it started: {stderr}");
    assert!(stderr.contains("PostgreSQL"), "{stderr}");
    assert!(
        !stderr.contains("s3cret"),
        "the password is hidden: {stderr}"
    );
    Ok(())
}
