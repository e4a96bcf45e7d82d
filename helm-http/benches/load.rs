//! Load on a real server, from a second process over loopback: this bench
//! starts `helm-http` on a temporary data dir and a free port, then acts as
//! the load tool.
//!
//! - a new channel's first message against its later ones, one client
//!   (`HELM_BENCH_CHANNELS`, 200 channels), with a control: a post into an
//!   older channel right after a channel is made;
//! - message posts per second (no agent woken), at several concurrencies;
//! - event fan-out latency to 500 WebSocket clients (p50, p99), from a post
//!   leaving the tool to each client receiving its `message.created`;
//! - server memory per idle WebSocket connection (resident set growth);
//! - the server's footprint, first and on a server of its own: its resident
//!   set (and the anonymous part of it, which is not the binary's code)
//!   after start, then after `HELM_BENCH_IDLE_CHANNELS` (10,000) channels
//!   that nobody posts in.
//!
//! `cargo bench -p helm-http --bench load`. `HELM_BENCH_POSTS` (default
//! 2000), `HELM_BENCH_CLIENTS` (500) and `HELM_BENCH_FANOUT` (40 posts) tune
//! it; `HELM_BENCH_ONLY=footprint` runs the footprint alone,
//! `HELM_BENCH_ONLY=first` the first messages alone. Every loop is
//! bounded; the server is stopped at the end.
//!
//! `HELM_BENCH_STORE=postgres` runs the same load with the server's state
//! in a throwaway PostgreSQL cluster (the tests' kit starts it on
//! 127.0.0.1), and then the fan-out across two nodes: the clients connect to
//! a second server on the same database, the posts go to the first.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const PASSWORD: &str = "correct horse battery staple";
/// The setup code the bench presets (`HELM_SETUP_CODE`).
const SETUP_CODE: &str = "bench-setup-code-0000";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Server {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn rss_kib(&self) -> anyhow::Result<u64> {
        self.memory_kib("status", "VmRSS:")
    }

    /// The resident set that is the process's own memory, not pages of
    /// its binary mapped from the file.
    fn anonymous_kib(&self) -> anyhow::Result<u64> {
        self.memory_kib("smaps_rollup", "Anonymous:")
    }

    fn memory_kib(&self, file: &str, key: &str) -> anyhow::Result<u64> {
        let text = std::fs::read_to_string(format!("/proc/{}/{file}", self.child.id()))?;
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("no {key} in /proc/<pid>/{file}"))
    }

    /// Waits until the resident set holds still (the same over a second,
    /// at most 60 s), and returns it. Work a burst of posts leaves behind
    /// (the embedder loading its model on first use, then embedding the
    /// backlog) would otherwise be counted against whatever is measured
    /// next.
    async fn settled_rss_kib(&self) -> anyhow::Result<u64> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = self.rss_kib()?;
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = self.rss_kib()?;
            if now == last || Instant::now() > deadline {
                return Ok(now);
            }
            last = now;
        }
    }

    /// "X MB (anonymous Y MB)".
    fn footprint(&self) -> anyhow::Result<String> {
        Ok(format!(
            "{:.1} MB (anonymous {:.1} MB)",
            self.rss_kib()? as f64 / 1024.0,
            self.anonymous_kib()? as f64 / 1024.0
        ))
    }
}

async fn start(store: Option<&str>) -> anyhow::Result<Server> {
    let dir = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_helm-http"))
        .args([
            "--data",
            &dir.path().join("data").to_string_lossy(),
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .env("HELM_LOG", "error")
        .env("HELM_SETUP_CODE", SETUP_CODE)
        .envs(store.map(|url| ("HELM_STORE", url)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while http
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .is_err()
    {
        anyhow::ensure!(Instant::now() < deadline, "the server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(server)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The Captain's calls that create something: the bench's channels and posts.
#[derive(Clone, Copy)]
struct Captain<'a> {
    http: &'a reqwest::Client,
    base: &'a str,
    token: &'a str,
}

impl Captain<'_> {
    /// Posts `text` into #load.
    async fn post(self, text: &str) -> anyhow::Result<()> {
        self.post_into("load", text).await
    }

    async fn post_into(self, channel: &str, text: &str) -> anyhow::Result<()> {
        let path = format!("/api/channels/{channel}/messages");
        self.create(&path, json!({ "text": text })).await
    }

    async fn create_channel(self, name: &str, purpose: &str) -> anyhow::Result<()> {
        let body = json!({ "name": name, "purpose": purpose });
        self.create("/api/channels", body).await
    }

    /// POSTs `body` to `path`; anything but 201 Created fails.
    async fn create(self, path: &str, body: Value) -> anyhow::Result<()> {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(self.token)
            .json(&body)
            .send()
            .await?;
        anyhow::ensure!(
            response.status().as_u16() == 201,
            "POST {path}: {}",
            response.status()
        );
        Ok(())
    }
}

/// Completes setup as the Captain and issues an API token.
async fn captain_token(http: &reqwest::Client, base: &str) -> anyhow::Result<String> {
    let setup = http
        .post(format!("{base}/api/setup"))
        .json(&json!({"name": "ada", "password": PASSWORD, "setup_code": SETUP_CODE}))
        .send()
        .await?;
    let cookie = setup
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let issued: Value = http
        .post(format!("{base}/api/tokens"))
        .header("cookie", cookie)
        .header("origin", base)
        .json(&json!({"name": "bench"}))
        .send()
        .await?
        .json()
        .await?;
    issued["secret"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("no token issued: {issued}"))
}

/// The server's memory after start and after `channels` idle channels.
async fn footprint(channels: usize) -> anyhow::Result<()> {
    let server = start(None).await?;
    let http = reqwest::Client::new();
    // Start-up's work (migrations, the first reads) settles first.
    tokio::time::sleep(Duration::from_secs(1)).await;
    println!("footprint: after start {}", server.footprint()?);
    let token = captain_token(&http, &server.base).await?;
    let captain = Captain {
        http: &http,
        base: &server.base,
        token: &token,
    };
    let started = Instant::now();
    for i in 0..channels {
        let name = format!("idle-{i:05}");
        captain.create_channel(&name, "Nobody posts here.").await?;
    }
    let created = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    println!(
        "footprint: after {channels} idle channels {} (created in {created:.1} s)",
        server.footprint()?
    );
    Ok(())
}

/// Median of `v`, in ms.
fn median_ms(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    percentile(v, 50.0)
}

/// A new channel's first message against its later ones, over HTTP as a
/// client meets them: `channels` channels made one after another, each
/// followed by five posts. As the control, `channels` more channels, each
/// followed by a post into the channel made before it (a channel that is
/// not new, at the same place in the sequence).
async fn first_messages(captain: Captain<'_>, channels: usize) -> anyhow::Result<()> {
    let create = |name: String| async move {
        let sent = Instant::now();
        captain.create_channel(&name, "First messages.").await?;
        anyhow::Ok(sent.elapsed().as_secs_f64() * 1000.0)
    };
    let timed_post = |channel: String, text: String| async move {
        let sent = Instant::now();
        captain.post_into(&channel, &text).await?;
        anyhow::Ok(sent.elapsed().as_secs_f64() * 1000.0)
    };
    let (mut made, mut first, mut later) = (Vec::new(), Vec::new(), Vec::new());
    for c in 0..channels {
        let name = format!("first-{c:04}");
        made.push(create(name.clone()).await?);
        first.push(timed_post(name.clone(), "note 0 on launch logistics".into()).await?);
        for i in 1..5 {
            later.push(timed_post(name.clone(), format!("note {i} on launch logistics")).await?);
        }
    }
    let mut control = Vec::new();
    let mut before = String::from("load");
    for c in 0..channels {
        let name = format!("control-{c:04}");
        create(name.clone()).await?;
        control.push(timed_post(before, "note 0 on launch logistics".into()).await?);
        before = name;
    }
    let (first, later, control) = (
        median_ms(&mut first),
        median_ms(&mut later),
        median_ms(&mut control),
    );
    println!(
        "first messages over HTTP, p50 of {channels} channels: channel made {:.2} ms | first post {first:.2} ms | later {later:.2} ms | ratio {:.2}x",
        median_ms(&mut made),
        first / later
    );
    println!(
        "first messages over HTTP, right after a channel is made: into it {first:.2} ms | into the one before {control:.2} ms | ratio {:.2}x",
        first / control
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let posts = env_usize("HELM_BENCH_POSTS", 2000);
    let clients = env_usize("HELM_BENCH_CLIENTS", 500);
    let fanout = env_usize("HELM_BENCH_FANOUT", 40);
    let idle_channels = env_usize("HELM_BENCH_IDLE_CHANNELS", 10_000);
    let only = std::env::var("HELM_BENCH_ONLY").ok();
    if only.as_deref() != Some("first") {
        footprint(idle_channels).await?;
    }
    if only.as_deref() == Some("footprint") {
        return Ok(());
    }
    let store = match std::env::var("HELM_BENCH_STORE").as_deref() {
        Ok("postgres") => Some(helm_tests::postgres::fresh_database().await?),
        Ok("sqlite") | Err(_) => None,
        Ok(other) => anyhow::bail!("HELM_BENCH_STORE={other}: say sqlite or postgres"),
    };
    let server = start(store.as_deref()).await?;
    let base = server.base.clone();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()?;

    let token = captain_token(&http, &base).await?;
    let captain = Captain {
        http: &http,
        base: &base,
        token: &token,
    };
    captain.create_channel("load", "Load testing").await?;

    println!(
        "helm-http load on {} (server and load tool on loopback, 2 cores shared)",
        if store.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    );
    first_messages(captain, env_usize("HELM_BENCH_CHANNELS", 200)).await?;
    if only.as_deref() == Some("first") {
        return Ok(());
    }
    // Posts per second: each post is one durable transaction with its events.
    for concurrency in [1usize, 8, 32] {
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..concurrency {
            let (http, base, token, next) =
                (http.clone(), base.clone(), token.clone(), next.clone());
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= posts {
                        return anyhow::Ok(latencies);
                    }
                    let sent = Instant::now();
                    let captain = Captain {
                        http: &http,
                        base: &base,
                        token: &token,
                    };
                    captain.post(&format!("post {i}")).await?;
                    latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
                }
            }));
        }
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await??);
        }
        let elapsed = started.elapsed().as_secs_f64();
        latencies.sort_by(f64::total_cmp);
        println!(
            "posts: {posts} at concurrency {concurrency:>2}: {:>7.0} posts/s (latency p50 {:.2} ms, p99 {:.2} ms)",
            posts as f64 / elapsed,
            percentile(&latencies, 50.0),
            percentile(&latencies, 99.0)
        );
    }

    // With Postgres the clients listen on a second node: each delivery
    // crosses the database (commit, doorbell, catch-up) between nodes.
    let second = match &store {
        Some(url) => Some(start(Some(url)).await?),
        None => None,
    };
    let listener = second.as_ref().unwrap_or(&server);

    // Idle connections: the listening server's resident set before and after.
    let rss_before = listener.settled_rss_kib().await?;
    let epoch = Instant::now();
    let latencies = Arc::new(Mutex::new(Vec::<f64>::with_capacity(clients * fanout)));
    let mut readers = Vec::new();
    let ws_url = format!(
        "{}/api/events",
        listener.base.replacen("http://", "ws://", 1)
    );
    for _ in 0..clients {
        let mut request = ws_url.as_str().into_client_request()?;
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse()?);
        let (mut socket, _) = tokio_tungstenite::connect_async(request).await?;
        // The hello: the stream is ready.
        let _ = tokio::time::timeout(Duration::from_secs(10), socket.next()).await;
        let latencies = latencies.clone();
        readers.push(tokio::spawn(async move {
            let mut seen = 0;
            while seen < fanout {
                let frame = match tokio::time::timeout(Duration::from_secs(60), socket.next()).await
                {
                    Ok(Some(Ok(frame))) => frame,
                    _ => break,
                };
                if let Message::Text(text) = frame {
                    let now = epoch.elapsed().as_secs_f64() * 1000.0;
                    let event: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    if event["type"] == "message.created"
                        && let Some(sent) = event["message"]["content"]
                            .as_str()
                            .and_then(|t| t.strip_prefix("fanout "))
                            .and_then(|t| t.parse::<f64>().ok())
                    {
                        latencies.lock().await.push(now - sent);
                        seen += 1;
                    }
                }
            }
            let _ = socket.close(None).await;
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_after = listener.rss_kib()?;
    println!(
        "memory: {clients} idle WebSocket clients add {} KiB to the server ({:.1} KiB per connection)",
        rss_after.saturating_sub(rss_before),
        rss_after.saturating_sub(rss_before) as f64 / clients as f64
    );

    // Fan-out: one post at a time, each delivered to every client.
    for _ in 0..fanout {
        let sent = epoch.elapsed().as_secs_f64() * 1000.0;
        captain.post(&format!("fanout {sent:.3}")).await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for reader in readers {
        let _ = tokio::time::timeout(Duration::from_secs(90), reader).await;
    }
    let mut all = latencies.lock().await.clone();
    all.sort_by(f64::total_cmp);
    println!(
        "fan-out{}: {} deliveries to {clients} clients ({fanout} posts): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        if second.is_some() {
            " (posts on node A, clients on node B)"
        } else {
            ""
        },
        all.len(),
        percentile(&all, 50.0),
        percentile(&all, 99.0),
        all.last().copied().unwrap_or(f64::NAN)
    );
    anyhow::ensure!(
        all.len() == clients * fanout,
        "some deliveries were missing"
    );
    Ok(())
}
