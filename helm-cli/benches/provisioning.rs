//! Provisioning throughput up to 10,000 channels, and `channel list` at
//! 10,000 channels, through the library and through the `1helm` binary.
//!
//! `cargo bench -p helm-cli --bench provisioning` (set `HELM_BENCH_CHANNELS` to
//! change the total). Prints medians and p99s; this machine is shared, so
//! compare ratios, not absolute figures.

use std::process::Command;
use std::time::{Duration, Instant};

use helm_core::store::ChannelFilter;
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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let total: usize = std::env::var("HELM_BENCH_CHANNELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let chunk = (total / 10).max(1);
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let (helm, report) = Helm::init(HelmOptions::new(&data), InitOptions::default()).await?;
    let captain = report.captain;

    println!("provisioning {total} channels, reported per {chunk}");
    println!(
        "{:>8} {:>12} {:>12} {:>12}",
        "channels", "per sec", "p50 ms", "p99 ms"
    );
    let mut all = Vec::with_capacity(total);
    let started = Instant::now();
    for c in 0..total / chunk {
        let mut lat = Vec::with_capacity(chunk);
        let t0 = Instant::now();
        for i in 0..chunk {
            let n = c * chunk + i;
            let t = Instant::now();
            helm.create_channel(&captain, &format!("c{n:05}"), "A benchmark channel.")
                .await?;
            lat.push(t.elapsed());
        }
        let rate = chunk as f64 / t0.elapsed().as_secs_f64();
        all.extend_from_slice(&lat);
        lat.sort();
        println!(
            "{:>8} {:>12.0} {:>12.3} {:>12.3}",
            (c + 1) * chunk,
            rate,
            ms(percentile(&lat, 0.5)),
            ms(percentile(&lat, 0.99))
        );
    }
    all.sort();
    println!(
        "overall: {:.0} channels/s, p50 {:.3} ms, p99 {:.3} ms",
        total as f64 / started.elapsed().as_secs_f64(),
        ms(percentile(&all, 0.5)),
        ms(percentile(&all, 0.99))
    );

    let mut lib = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let channels = helm.channels(ChannelFilter::default()).await?;
        lib.push(t.elapsed());
        assert_eq!(channels.len(), total + 1);
    }
    lib.sort();
    println!(
        "list {} channels (library): p50 {:.2} ms, p99 {:.2} ms",
        total + 1,
        ms(percentile(&lib, 0.5)),
        ms(percentile(&lib, 0.99))
    );

    let bin = env!("CARGO_BIN_EXE_1helm");
    for (label, args) in [
        ("text", vec!["channel", "list"]),
        ("--json", vec!["channel", "list", "--json"]),
    ] {
        let mut cli = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            let out = Command::new(bin)
                .arg("--data")
                .arg(&data)
                .args(&args)
                .output()?;
            cli.push(t.elapsed());
            anyhow::ensure!(out.status.success(), "1helm failed");
        }
        cli.sort();
        println!(
            "`1helm channel list` {label} at {} channels (whole process): p50 {:.1} ms, p99 {:.1} ms",
            total + 1,
            ms(percentile(&cli, 0.5)),
            ms(percentile(&cli, 0.99))
        );
    }
    Ok(())
}
