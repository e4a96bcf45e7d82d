//! What accepting a message costs now that a turn's model is fixed when its
//! message is accepted: the policy is resolved, the provider and its model
//! list (cached) consulted, and the turn's place in its agent's queue
//! counted, all before the message is stored.
//!
//! `cargo bench -p helm-core --bench admission` (`HELM_BENCH_POSTS`, default
//! 300 of each kind). Prints p50/p99 per kind and the ratio to a post that
//! wakes nobody (which skips admission), plus the waking post's p50 with
//! few and with many turns already queued for the agent (no driver runs, so
//! they pile up). This machine is shared: compare ratios, not figures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use helm_core::model::{ChannelRef, ModelChoice};
use helm_core::provider::{ChatRequest, EventStream, Provider};
use helm_core::store::PolicyScope;
use helm_core::{Helm, HelmOptions, InitOptions};

/// A provider the application supplies; no turn runs, so it is never asked.
struct Idle;

#[async_trait]
impl Provider for Idle {
    async fn stream(&self, _request: ChatRequest) -> helm_core::Result<EventStream> {
        Err(helm_core::Error::Internal(
            "no turn runs in this bench".into(),
        ))
    }
}

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

fn report(label: &str, mut samples: Vec<Duration>, baseline: Option<Duration>) -> Duration {
    samples.sort();
    let (p50, p99) = (percentile(&samples, 0.5), percentile(&samples, 0.99));
    let ratio = baseline
        .map(|b| format!("{:>8.2}x", p50.as_secs_f64() / b.as_secs_f64()))
        .unwrap_or_else(|| format!("{:>9}", "1.00x"));
    println!("{label:<46} {:>9.3} {:>9.3} {ratio}", ms(p50), ms(p99));
    p50
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let posts: usize = std::env::var("HELM_BENCH_POSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::tempdir()?;
    let (helm, init) = Helm::init(
        HelmOptions::new(dir.path().join("data")),
        InitOptions::default(),
    )
    .await?;
    let captain = init.captain;
    helm.register_provider("bench", Arc::new(Idle));
    helm.set_model_policy(
        &captain,
        PolicyScope::Workspace,
        Some(ModelChoice::new("bench", Some("bench-model".into()))),
    )
    .await?;
    let record = helm
        .create_channel(&captain, "bench", "A benchmark channel.")
        .await?;
    let channel = ChannelRef::Id(record.channel.id);
    // A thread the agent never answered: a note there wakes nobody, but
    // the model is still chosen (the store decides whether anyone wakes).
    let quiet = helm
        .post_message(&captain, &channel, "a thread of notes", None)
        .await?
        .thread
        .id;

    let mut fresh = Vec::with_capacity(posts);
    let mut continued = Vec::with_capacity(posts);
    let mut waking = Vec::with_capacity(posts);
    for i in 0..posts {
        let started = Instant::now();
        helm.post_message(&captain, &channel, &format!("note {i}"), None)
            .await?;
        fresh.push(started.elapsed());

        let started = Instant::now();
        helm.post_message(&captain, &channel, &format!("more {i}"), Some(quiet))
            .await?;
        continued.push(started.elapsed());

        let started = Instant::now();
        let posted = helm
            .post_message(&captain, &channel, &format!("@bench-agent job {i}"), None)
            .await?;
        waking.push(started.elapsed());
        anyhow::ensure!(posted.turn.is_some(), "the agent was not woken");
    }
    println!("{posts} posts of each kind; milliseconds");
    println!("{:<46} {:>9} {:>9} {:>9}", "", "p50", "p99", "ratio");
    let base = report("new thread, wakes nobody (no admission)", fresh, None);
    report(
        "continues a thread, wakes nobody (model chosen)",
        continued,
        Some(base),
    );
    let window = (posts / 5).max(1);
    let first: Vec<Duration> = waking[..window].to_vec();
    let last: Vec<Duration> = waking[posts - window..].to_vec();
    report(
        "wakes the agent (model fixed, turn queued)",
        waking,
        Some(base),
    );
    report(
        &format!("  the first {window}, few turns queued"),
        first,
        Some(base),
    );
    report(
        &format!("  the last {window}, ~{posts} turns queued"),
        last,
        Some(base),
    );
    Ok(())
}
