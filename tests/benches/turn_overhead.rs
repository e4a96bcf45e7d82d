//! The turn engine's own overhead, with a zero-latency scripted model:
//! from a message being posted to the model receiving its request, and from
//! the model's last chunk to the stored, announced reply. Measured at one
//! thread on a fresh channel, and with 100,000 messages already in the channel.
//!
//! `cargo bench -p helm-tests --bench turn_overhead` (`HELM_BENCH_TURNS` sets
//! the number of turns per scenario). Prints medians and p99s.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use helm_core::events::EventBody;
use helm_core::model::ChannelRef;
use helm_core::provider::{
    ChatRequest, EventStream, Provider, Scripted, ScriptedReply, StreamEvent,
};
use helm_tests::TestHelm;

/// Wraps the scripted model and notes when requests arrive and when the
/// last chunk leaves.
struct Timed {
    inner: Scripted,
    requested: Mutex<Vec<Instant>>,
    last_chunk: Arc<Mutex<Vec<Instant>>>,
}

#[async_trait]
impl Provider for Timed {
    async fn stream(&self, request: ChatRequest) -> helm_core::Result<EventStream> {
        if let Ok(mut r) = self.requested.lock() {
            r.push(Instant::now());
        }
        let stream = self.inner.stream(request).await?;
        let last = self.last_chunk.clone();
        Ok(stream
            .inspect(move |event| {
                if matches!(event, Ok(StreamEvent::Finish { .. }))
                    && let Ok(mut l) = last.lock()
                {
                    l.push(Instant::now());
                }
            })
            .boxed())
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn fill_channel(
    data: &std::path::Path,
    channel: i64,
    captain: i64,
    messages: usize,
) -> anyhow::Result<()> {
    let mut db = rusqlite::Connection::open(data.join("helm.db"))?;
    let tx = db.transaction()?;
    let per_thread = 100;
    for t in 0..messages / per_thread {
        tx.execute(
            "INSERT INTO threads (channel_id, title, status, opened_by, opened_at, updated_at) \
             VALUES (?1, ?2, 'resolved', ?3, 0, 0)",
            rusqlite::params![channel, format!("old thread {t}"), captain],
        )?;
        let thread = tx.last_insert_rowid();
        let mut stmt = tx.prepare_cached(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, author_name, \
             content, status, created, updated) VALUES (?1, ?2, 'human', ?3, 'captain', ?4, 'complete', 0, 0)",
        )?;
        for m in 0..per_thread {
            stmt.execute(rusqlite::params![
                channel,
                thread,
                captain,
                format!("historic message {m} of thread {t} about launch logistics and budgets")
            ])?;
        }
    }
    tx.commit()?;
    Ok(())
}

async fn scenario(label: &str, history: usize, turns: usize) -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let timed = Arc::new(Timed {
        inner: Scripted::new(),
        requested: Mutex::new(Vec::new()),
        last_chunk: Arc::new(Mutex::new(Vec::new())),
    });
    t.use_provider("timed", timed.clone()).await?;
    let record = t
        .helm
        .create_channel(&t.captain, "launch", "Bench channel.")
        .await?;
    if history > 0 {
        fill_channel(
            &t.data_dir(),
            record.channel.id.get(),
            t.captain.id.get(),
            history,
        )?;
    }
    t.helm.start_runtime().await?;
    let ch = ChannelRef::Id(record.channel.id);
    let mut to_request = Vec::new();
    let mut to_announced = Vec::new();
    for i in 0..turns {
        timed.inner.push(ScriptedReply::text(
            "Done: the plan is in place and the team is informed.",
        ));
        let mut live = t.helm.subscribe();
        let posted_at = Instant::now();
        let posted = t
            .helm
            .post_message(&t.captain, &ch, &format!("@launch-agent task {i}"), None)
            .await?;
        let reply_id = posted
            .turn
            .ok_or_else(|| anyhow::anyhow!("no turn"))?
            .reply_message_id;
        let announced_at = loop {
            let event = live.recv().await?;
            if let EventBody::MessageCompleted { message } = &event.body
                && message.id == reply_id
            {
                break Instant::now();
            }
        };
        let requested = timed
            .requested
            .lock()
            .map_err(|_| anyhow::anyhow!("lock"))?[i];
        let last_chunk = timed
            .last_chunk
            .lock()
            .map_err(|_| anyhow::anyhow!("lock"))?[i];
        to_request.push(requested - posted_at);
        to_announced.push(announced_at - last_chunk);
    }
    to_request.sort();
    to_announced.sort();
    println!(
        "{label:<42} posted→request p50 {:>6.2} ms p99 {:>6.2} ms | last chunk→announced p50 {:>6.2} ms p99 {:>6.2} ms",
        pct(&to_request, 0.5),
        pct(&to_request, 0.99),
        pct(&to_announced, 0.5),
        pct(&to_announced, 0.99)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let turns: usize = std::env::var("HELM_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    println!("turn engine overhead, {turns} turns per scenario, zero-latency scripted model");
    scenario("1 thread, empty channel", 0, turns).await?;
    scenario("1 thread, 100,000 messages in the channel", 100_000, turns).await?;
    Ok(())
}
