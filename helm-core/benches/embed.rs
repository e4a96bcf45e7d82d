//! Local embedding speed: query latency (one short question at a time) and
//! indexing throughput (batches of 32 chat messages), and long texts read in
//! windows, with all-MiniLM-L6-v2.
//!
//! `cargo bench -p helm-core --features local-embed --bench embed` after
//! `scripts/fetch-embedding-model`. `HELM_BENCH_THREADS` sets the thread count
//! (default: available parallelism). Prints the load's time and peak memory,
//! p50/p99 latency and texts per second; this machine is shared, so compare runs, not absolute figures.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use helm_core::memory::embed::{MiniLmEmbedder, MiniLmOptions, find_local_model};

const QUESTIONS: &[&str] = &[
    "What did we decide about the logo?",
    "Who is on call this weekend?",
    "When is the launch review?",
    "Which database did we pick for the analytics service?",
    "Why was the deploy rolled back on Tuesday?",
    "What does Alice prefer for contract questions?",
    "Where are the staging credentials kept?",
    "How many seats did the customer ask for?",
    "What was the budget for the offsite?",
    "Did anyone reply to the security questionnaire?",
    "What is blocking the mobile release?",
    "Which vendor quoted the lowest price for the chairs?",
    "When does the lease on the office end?",
    "What were the action items from the retro?",
    "Who owns the billing migration?",
    "How do I rotate the API keys?",
    "What time zone is the Berlin team in?",
    "Which customers are on the legacy plan?",
    "What did the doctor say about the knee?",
    "Where did we book the hotel for the conference?",
];

/// Chat-message shapes with slots, expanded into many distinct messages.
const MESSAGES: &[&str] = &[
    "ok, {x} works for me",
    "Can we move the {x} sync to Thursday? Half the team is out on Wednesday.",
    "I pushed a fix for the {x} timeout, the tests pass locally but CI is still red on the integration job.",
    "Reminder: the {x} invoice is due on Friday, please approve it in the portal before noon.",
    "thanks!",
    "Just talked to the {x} folks. They want a demo next week and a quote for 40 seats; I said we'd send it by Monday. Anyone free to prep the slides?",
    "The {x} dashboard shows a spike in 500s since the last deploy, looking into it now",
    "lol yes",
    "Notes from today's {x} meeting: budget approved, hiring freeze lifted for engineering, the offsite moves to May, and we still need an owner for the vendor review.",
    "Does anyone know where the {x} contract template lives? Legal asked for the latest version.",
];

const TOPICS: &[&str] = &[
    "design",
    "billing",
    "Acme",
    "mobile",
    "search",
    "payroll",
    "infra",
    "support",
    "growth",
    "legal",
    "Berlin",
    "onboarding",
    "analytics",
    "security",
    "kitchen",
    "garden",
];

/// Sorted latencies of embedding every question ten times (after five to warm up).
fn query_latencies(
    embed: impl Fn(&str) -> anyhow::Result<Vec<f32>>,
) -> anyhow::Result<Vec<Duration>> {
    for q in QUESTIONS.iter().take(5) {
        embed(q)?;
    }
    let mut latencies = Vec::with_capacity(QUESTIONS.len() * 10);
    for _ in 0..10 {
        for q in QUESTIONS {
            let t = Instant::now();
            embed(q)?;
            latencies.push(t.elapsed());
        }
    }
    latencies.sort();
    Ok(latencies)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// A `kB` line of /proc/self/status (Linux), such as the peak resident set.
fn proc_status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> anyhow::Result<()> {
    let dir = find_local_model(Path::new("helm-data")).context(
        "all-MiniLM-L6-v2 not found: run scripts/fetch-embedding-model (or set HELM_EMBED_MODEL)",
    )?;
    let threads: usize = std::env::var("HELM_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let started = Instant::now();
    let embedder = MiniLmEmbedder::load_with(&dir, MiniLmOptions::default().threads(threads))?;
    let load_time = started.elapsed();
    println!(
        "all-MiniLM-L6-v2 from {} loaded in {:.0} ms, {} threads",
        dir.display(),
        ms(load_time),
        embedder.threads()?
    );
    // Before anything is embedded, the process holds little but the model:
    // its peak is the load's, its resident set what the model keeps.
    if let (Some(peak), Some(now)) = (proc_status_kib("VmHWM"), proc_status_kib("VmRSS")) {
        println!(
            "memory after loading: peak {:.0} MB, resident {:.0} MB",
            peak as f64 / 1024.0,
            now as f64 / 1024.0
        );
    }

    let tokenizer = embedder.tokenizer()?;

    // Query latency: one question at a time, as recall embeds a query
    // (bfloat16 weights on one thread), and the same questions embedded as
    // items are (f32 weights on the pool), for the ratio.
    let tokens: usize = QUESTIONS.iter().map(|q| tokenizer.encode(q).len()).sum();
    let avg_tokens = tokens as f64 / QUESTIONS.len() as f64;
    let as_query = |q: &str| Ok(embedder.embed_query_blocking(q)?);
    let as_item = |q: &str| {
        let mut v = embedder.embed_blocking(&[q])?;
        v.pop().context("no vector")
    };
    for (label, latencies) in [
        ("query", query_latencies(as_query)?),
        ("query as an item", query_latencies(as_item)?),
    ] {
        println!(
            "{label} (batch 1, {} queries, {avg_tokens:.1} tokens avg): p50 {:.2} ms  p99 {:.2} ms",
            latencies.len(),
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.99)),
        );
    }
    let mut closest = f32::MAX;
    for q in QUESTIONS {
        let (a, b) = (as_query(q)?, as_item(q)?);
        closest = closest.min(a.iter().zip(&b).map(|(x, y)| x * y).sum());
    }
    println!("query vector against the exact one: lowest cosine {closest:.5}");

    // Indexing throughput: chat messages in batches of 32.
    let messages: Vec<String> = TOPICS
        .iter()
        .flat_map(|topic| MESSAGES.iter().map(move |m| m.replace("{x}", topic)))
        .cycle()
        .take(640)
        .collect();
    let tokens: usize = messages.iter().map(|m| tokenizer.encode(m).len()).sum();
    embedder.embed_blocking(&messages[..32])?;
    let t = Instant::now();
    for batch in messages.chunks(32) {
        embedder.embed_blocking(batch)?;
    }
    let elapsed = t.elapsed();
    println!(
        "indexing (batches of 32, {} messages, {:.1} tokens avg): {:.0} texts/s ({:.2} ms per batch)",
        messages.len(),
        tokens as f64 / messages.len() as f64,
        messages.len() as f64 / elapsed.as_secs_f64(),
        ms(elapsed) / (messages.len() / 32) as f64,
    );

    // Long texts, read in windows: meeting notes of about 1,000 pieces.
    let notes: Vec<String> = TOPICS
        .iter()
        .map(|topic| {
            MESSAGES
                .iter()
                .map(|m| m.replace("{x}", topic))
                .collect::<Vec<_>>()
                .join(" ")
                .repeat(3)
        })
        .collect();
    let windows = tokenizer.encode_windows(&notes[0], 32, 16).len();
    let all_windows: usize = notes
        .iter()
        .map(|n| tokenizer.encode_windows(n, 32, 16).len())
        .sum();
    let mut each = Vec::with_capacity(notes.len());
    for note in &notes {
        let t = Instant::now();
        embedder.embed_blocking(&[note])?;
        each.push(t.elapsed());
    }
    each.sort();
    println!(
        "long texts ({} notes of {} characters, {windows} windows each, {all_windows} windows in all): p50 {:.1} ms per text",
        notes.len(),
        notes[0].len(),
        ms(percentile(&each, 0.50)),
    );
    Ok(())
}
