//! The channel computer's overheads: command spawn latency in each isolation
//! mode against a bare `sh -c true`, and terminal throughput against a pipe.
//!
//! `cargo bench -p helm-core --bench exec` (set `HELM_BENCH_RUNS` for the
//! spawns per mode, default 200, and `HELM_BENCH_MB` for the megabytes of
//! zeros piped through `base64`, default 200). Prints p50/p99 and ratios;
//! this machine is shared, so compare ratios, not absolute figures.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use helm_core::exec::{CommandSpec, Computer, IsolationChoice, TerminalEvent, TerminalSize};
use helm_core::model::ChannelRef;
use helm_core::{Helm, HelmOptions, InitOptions};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A workspace with one channel, its computers isolated by `mode`.
async fn channel_computer(
    dir: &std::path::Path,
    mode: IsolationChoice,
) -> anyhow::Result<(Helm, Computer)> {
    let mut options = HelmOptions::new(dir.join("data"));
    options.computer.isolation = mode;
    let (helm, report) = Helm::init(options, InitOptions::default()).await?;
    let record = helm
        .create_channel(&report.captain, "bench", "A benchmark channel.")
        .await?;
    let computer = helm.computer(&ChannelRef::Id(record.channel.id)).await?;
    Ok((helm, computer))
}

fn report(label: &str, mut samples: Vec<Duration>, baseline: Option<Duration>) -> Duration {
    samples.sort();
    let (p50, p99) = (percentile(&samples, 0.5), percentile(&samples, 0.99));
    let ratio = baseline
        .map(|b| format!("{:>8.1}x", p50.as_secs_f64() / b.as_secs_f64()))
        .unwrap_or_else(|| format!("{:>9}", "1.0x"));
    println!("{label:<34} {:>9.2} {:>9.2} {ratio}", ms(p50), ms(p99));
    p50
}

async fn spawn_latency(runs: usize) -> anyhow::Result<()> {
    println!("command spawn latency, {runs} runs each");
    println!(
        "{:<34} {:>9} {:>9} {:>9}",
        "", "p50 ms", "p99 ms", "vs bare"
    );
    let mut bare = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        Command::new("sh").args(["-c", "true"]).status()?;
        bare.push(t.elapsed());
    }
    let baseline = report("bare `sh -c true`", bare, None);
    // What the login shell itself costs, in the environment commands get.
    let mut login = Vec::with_capacity(runs);
    let home = tempfile::tempdir()?;
    for _ in 0..runs {
        let t = Instant::now();
        Command::new("bash")
            .args(["-lc", "true"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home.path())
            .status()?;
        login.push(t.elapsed());
    }
    report("bare `bash -lc true`, clean env", login, Some(baseline));

    for (label, mode) in [
        ("process: run(`true`)", IsolationChoice::Process),
        ("bubblewrap: run(`true`)", IsolationChoice::Bubblewrap),
    ] {
        let dir = tempfile::tempdir()?;
        let (helm, computer) = channel_computer(dir.path(), mode).await?;
        let executor = helm.executor().await?;
        executor.run(&computer, CommandSpec::new("true")).await?; // warm up
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            let result = executor.run(&computer, CommandSpec::new("true")).await?;
            samples.push(t.elapsed());
            anyhow::ensure!(result.success(), "{result:?}");
        }
        report(label, samples, Some(baseline));
    }
    Ok(())
}

async fn throughput(megabytes: usize) -> anyhow::Result<()> {
    let command = format!("head -c {megabytes}M /dev/zero | base64");
    println!("\nthroughput of `{command}`");
    println!("{:<34} {:>9} {:>9} {:>9}", "", "MB", "MB/s", "vs pipe");

    let t = Instant::now();
    let mut child = Command::new("sh")
        .args(["-c", &command])
        .stdout(Stdio::piped())
        .spawn()?;
    let mut out = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut piped = 0usize;
    loop {
        let n = out.read(&mut buf)?;
        if n == 0 {
            break;
        }
        piped += n;
    }
    child.wait()?;
    let pipe_rate = piped as f64 / 1e6 / t.elapsed().as_secs_f64();
    println!(
        "{:<34} {:>9.0} {:>9.0} {:>9}",
        "plain pipe",
        piped as f64 / 1e6,
        pipe_rate,
        "1.0x"
    );

    let bare_rate = bare_pty(&command)?;
    println!(
        "{:<34} {:>9} {:>9.0} {:>8.2}x",
        "bare PTY (portable-pty, no sandbox)",
        "",
        bare_rate,
        bare_rate / pipe_rate
    );

    let dir = tempfile::tempdir()?;
    let (helm, _) = channel_computer(dir.path(), IsolationChoice::Bubblewrap).await?;
    let captain = helm.captain().await?;
    let term = helm
        .open_terminal(
            &captain,
            &"bench".parse()?,
            TerminalSize {
                rows: 50,
                cols: 200,
            },
        )
        .await?;
    let mut view = term.subscribe();
    // The marker is assembled by the shell, so its echo of the typed line
    // does not match.
    let line = format!("{command}; echo __DO''NE__\n");
    let t = Instant::now();
    term.write(line.as_bytes()).await?;
    let mut received = 0usize;
    let mut tail = String::new();
    loop {
        match view.events.recv().await {
            Ok(TerminalEvent::Output { data }) => {
                received += data.len();
                tail.push_str(&String::from_utf8_lossy(&data));
                if tail.contains("__DONE__") {
                    break;
                }
                let keep = tail.len().saturating_sub(16);
                let cut = (keep..tail.len())
                    .find(|i| tail.is_char_boundary(*i))
                    .unwrap_or(0);
                tail.drain(..cut);
            }
            Ok(TerminalEvent::Closed { .. }) => anyhow::bail!("the terminal closed"),
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                anyhow::bail!("the viewer fell {n} chunks behind")
            }
            Err(e) => return Err(e.into()),
        }
    }
    let elapsed = t.elapsed().as_secs_f64();
    let pty_rate = received as f64 / 1e6 / elapsed;
    println!(
        "{:<34} {:>9.0} {:>9.0} {:>8.2}x   ({:.2}x the bare PTY)",
        "Helm terminal (bubblewrap, viewer)",
        received as f64 / 1e6,
        pty_rate,
        pty_rate / pipe_rate,
        pty_rate / bare_rate
    );
    helm.terminals().close(term.id()).await?;
    Ok(())
}

/// MB/s of `command` on a plain PTY read in a loop: what the kernel's
/// terminal layer costs before Helm adds anything.
fn bare_pty(command: &str) -> anyhow::Result<f64> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system().openpty(PtySize {
        rows: 50,
        cols: 200,
        pixel_width: 0,
        pixel_height: 0,
    })?;
    let mut builder = CommandBuilder::new("sh");
    builder.args(["-c", command]);
    let t = Instant::now();
    let mut child = pair.slave.spawn_command(builder)?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader()?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut n = 0usize;
    while let Ok(read) = reader.read(&mut buf) {
        if read == 0 {
            break;
        }
        n += read;
    }
    child.wait()?;
    Ok(n as f64 / 1e6 / t.elapsed().as_secs_f64())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    spawn_latency(env_number("HELM_BENCH_RUNS", 200)).await?;
    throughput(env_number("HELM_BENCH_MB", 200)).await?;
    Ok(())
}
