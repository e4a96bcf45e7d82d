//! The turn engine's own overhead, with a zero-latency scripted model:
//! from a message being posted to the model receiving its request, and from
//! the model's last chunk to the stored, announced reply. Measured at one
//! thread on a fresh channel, and with 100,000 messages already in the
//! channel. Then a whole turn (posted → reply announced) inside one thread
//! of 10,000 messages against the same in an empty channel, taken in
//! alternating blocks, and how many model calls a turn costs in that long
//! thread (its summary refreshes included). The empty channel's turns all
//! go to one thread, which grows by two messages a turn: past about 500
//! turns (`HELM_BENCH_TURNS`) it outgrows the transcript budget too, and
//! the ratio falls towards 1. Last, the first plain message posted into a
//! new channel against its later ones, in process (with a control that
//! tells the channel being new from the post following a channel's making;
//! `helm-http`'s `load` bench measures the same over HTTP); a whole turn
//! in a public channel of 300 people against the Captain alone
//! (`HELM_BENCH_ONLY=people`); and 100 turns at once over 20 channels (five
//! threads each, every thread posting its next message as soon as its
//! reply is announced): the p50 and p99 of a whole turn and the turns
//! finished per second.
//!
//! `cargo bench -p helm-tests --bench turn_overhead` (`HELM_BENCH_TURNS` sets
//! the number of turns per scenario). Prints medians and p99s.
//! `HELM_BENCH_STORE=postgres` measures the empty-channel scenarios with the
//! workspace in a throwaway PostgreSQL cluster (the long-history ones seed
//! SQLite directly and are left out); `HELM_BENCH_STORE=sqlite` measures
//! the same two on SQLite, for the comparison. `HELM_BENCH_ONLY=long` runs
//! only the long-thread turns against the empty channel's,
//! `HELM_BENCH_ONLY=first` only the first posts,
//! `HELM_BENCH_ONLY=concurrent` only the concurrent turns
//! (`HELM_BENCH_ROUNDS` turns per thread, default 10), for a profiler.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use helm_core::events::EventBody;
use helm_core::model::ChannelRef;
use helm_core::provider::{
    ChatRequest, EventStream, Provider, Scripted, ScriptedReply, StreamEvent,
};
use helm_core::store::ChannelRecord;
use helm_tests::TestHelm;

/// Wraps the scripted model and notes when requests arrive and when the
/// last chunk leaves.
struct Timed {
    inner: Scripted,
    requested: Mutex<Vec<Instant>>,
    last_chunk: Arc<Mutex<Vec<Instant>>>,
    /// Summary requests, answered here so they leave the script alone.
    summaries: Mutex<usize>,
}

/// What the model answers every turn.
const REPLY: &str = "Done: the plan is in place and the team is informed.";

/// How the summariser's requests begin.
const SUMMARY_SYSTEM: &str = "You write the durable record of a work session";

#[async_trait]
impl Provider for Timed {
    async fn stream(&self, request: ChatRequest) -> helm_core::Result<EventStream> {
        if request.system.starts_with(SUMMARY_SYSTEM) {
            if let Ok(mut n) = self.summaries.lock() {
                *n += 1;
            }
            let answer = Scripted::new();
            answer.push(ScriptedReply::text(
                "{\"goal\": \"Plan the launch\", \"work_done\": \"Talked it through\", \"result\": \"In progress\"}",
            ));
            return answer.stream(request).await;
        }
        if let Ok(mut r) = self.requested.lock() {
            r.push(Instant::now());
        }
        // The scripted model keeps every request it is sent; a real
        // provider lets the conversation go once sent. Kept, a long
        // thread's would grow the heap by a conversation every turn.
        let request = ChatRequest {
            system: String::new(),
            messages: Default::default(),
            ..request
        };
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
             content, status, created, updated, seq) VALUES (?1, ?2, 'human', ?3, 'captain', ?4, 'complete', 0, 0, ?5)",
        )?;
        for m in 0..per_thread {
            stmt.execute(rusqlite::params![
                channel,
                thread,
                captain,
                format!("historic message {m} of thread {t} about launch logistics and budgets"),
                m as i64 + 1
            ])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Whether this run measures the Postgres store (`HELM_BENCH_STORE=postgres`).
fn on_postgres() -> bool {
    std::env::var("HELM_BENCH_STORE").is_ok_and(|s| s == "postgres")
}

/// Whether only the empty-channel scenarios run (any `HELM_BENCH_STORE`).
fn comparing_stores() -> bool {
    std::env::var("HELM_BENCH_STORE").is_ok()
}

/// A test Helm whose default model is a fresh `Timed`, and its channel
/// `#launch`.
async fn bench_channel() -> anyhow::Result<(TestHelm, Arc<Timed>, ChannelRecord)> {
    bench_channel_with(|_| {}).await
}

/// Like [`bench_channel`], adjusting the options first.
async fn bench_channel_with(
    adjust: impl FnOnce(&mut helm_core::HelmOptions),
) -> anyhow::Result<(TestHelm, Arc<Timed>, ChannelRecord)> {
    let t = if on_postgres() {
        let url = helm_tests::postgres::fresh_database().await?;
        TestHelm::with_options(|o| {
            o.store = Some(helm_core::config::StoreUrl::Postgres(url));
            adjust(o);
        })
        .await?
    } else {
        TestHelm::with_options(adjust).await?
    };
    let timed = Arc::new(Timed {
        inner: Scripted::new(),
        requested: Mutex::new(Vec::new()),
        last_chunk: Arc::new(Mutex::new(Vec::new())),
        summaries: Mutex::new(0),
    });
    t.use_provider("timed", timed.clone()).await?;
    let record = t
        .helm
        .create_channel(&t.captain, "launch", "Bench channel.")
        .await?;
    Ok((t, timed, record))
}

async fn scenario(label: &str, history: usize, turns: usize) -> anyhow::Result<()> {
    let (t, timed, record) = bench_channel().await?;
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
        timed.inner.push(ScriptedReply::text(REPLY));
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

/// Fills one open thread with `messages` alternating between the Captain and
/// the channel's agent, and returns it.
fn fill_thread(
    data: &std::path::Path,
    channel: i64,
    captain: i64,
    agent: i64,
    messages: usize,
) -> anyhow::Result<i64> {
    let mut db = rusqlite::Connection::open(data.join("helm.db"))?;
    let tx = db.transaction()?;
    tx.execute(
        "INSERT INTO threads (channel_id, title, status, opened_by, opened_at, updated_at) \
         VALUES (?1, 'the long thread', 'open', ?2, 0, 0)",
        rusqlite::params![channel, captain],
    )?;
    let thread = tx.last_insert_rowid();
    {
        // Each with its place in the thread (`seq`), as the store writes them.
        let mut human = tx.prepare_cached(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, author_name, \
             content, status, created, updated, seq) VALUES (?1, ?2, 'human', ?3, 'captain', ?4, 'complete', 0, 0, ?5)",
        )?;
        let mut reply = tx.prepare_cached(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_agent_id, author_name, \
             content, status, created, updated, seq) VALUES (?1, ?2, 'agent', ?3, 'launch-agent', ?4, 'complete', 0, 0, ?5)",
        )?;
        for m in 0..messages {
            let text = format!("message {m} of the long thread about launch logistics and budgets");
            let place = m as i64 + 1;
            if m % 2 == 0 {
                human.execute(rusqlite::params![channel, thread, captain, text, place])?;
            } else {
                reply.execute(rusqlite::params![channel, thread, agent, text, place])?;
            }
        }
    }
    tx.commit()?;
    Ok(thread)
}

/// Whole turns, posted → reply announced, in one thread holding `history`
/// messages (a fresh thread in an empty channel when 0). Returns the median
/// in ms and the model calls per turn (turn calls, summary calls).
async fn whole_turns(history: usize, turns: usize) -> anyhow::Result<(f64, f64, f64)> {
    whole_turns_among(history, 0, turns).await
}

/// [`whole_turns`] in a workspace of `people` members besides the Captain,
/// all readers of the (public) channel.
async fn whole_turns_among(
    history: usize,
    people: usize,
    turns: usize,
) -> anyhow::Result<(f64, f64, f64)> {
    let mut bench = TurnBench::new(history, people).await?;
    let mut took = Vec::new();
    bench.run(turns, &mut took).await?;
    took.sort();
    let (calls, summaries) = bench.calls()?;
    Ok((
        pct(&took, 0.5),
        calls as f64 / turns as f64,
        summaries as f64 / turns as f64,
    ))
}

/// One channel whose agent takes whole turns, one after another, in one
/// thread (seeded with `history` messages, if any).
struct TurnBench {
    t: TestHelm,
    timed: Arc<Timed>,
    channel: ChannelRef,
    thread: Option<helm_core::model::ThreadId>,
    turns: usize,
}

impl TurnBench {
    /// A workspace of `people` members besides the Captain, all readers of
    /// the (public) channel, its runtime started.
    async fn new(history: usize, people: usize) -> anyhow::Result<Self> {
        let (t, timed, record) = bench_channel().await?;
        for i in 0..people {
            t.member(&format!("person{i}")).await?;
        }
        let mut thread = None;
        if history > 0 {
            thread = Some(helm_core::model::ThreadId(fill_thread(
                &t.data_dir(),
                record.channel.id.get(),
                t.captain.id.get(),
                record.agent.id.get(),
                history,
            )?));
        }
        t.helm.start_runtime().await?;
        Ok(TurnBench {
            t,
            timed,
            channel: ChannelRef::Id(record.channel.id),
            thread,
            turns: 0,
        })
    }

    /// Takes `turns` more turns, adding how long each took (posted → reply
    /// announced) to `took`.
    async fn run(&mut self, turns: usize, took: &mut Vec<Duration>) -> anyhow::Result<()> {
        for _ in 0..turns {
            self.timed.inner.push(ScriptedReply::text(REPLY));
            let mut live = self.t.helm.subscribe();
            let posted_at = Instant::now();
            let text = format!("@launch-agent task {}", self.turns);
            let posted = self
                .t
                .helm
                .post_message(&self.t.captain, &self.channel, &text, self.thread)
                .await?;
            self.thread = Some(posted.thread.id);
            self.turns += 1;
            let reply_id = posted
                .turn
                .ok_or_else(|| anyhow::anyhow!("no turn"))?
                .reply_message_id;
            loop {
                let event = live.recv().await?;
                if let EventBody::MessageCompleted { message } = &event.body
                    && message.id == reply_id
                {
                    break;
                }
            }
            took.push(posted_at.elapsed());
        }
        Ok(())
    }

    /// The turn requests and the summary requests the model has had.
    fn calls(&self) -> anyhow::Result<(usize, usize)> {
        let calls = self
            .timed
            .requested
            .lock()
            .map_err(|_| anyhow::anyhow!("lock"))?
            .len();
        let summaries = *self
            .timed
            .summaries
            .lock()
            .map_err(|_| anyhow::anyhow!("lock"))?;
        Ok((calls, summaries))
    }
}

/// Whole turns in an empty channel and in a thread of 10,000 messages,
/// taken in alternating blocks so that a host's slow spell weighs on both:
/// the p50 of each in ms, and the long thread's model calls and summary
/// calls per turn.
async fn empty_and_long(turns: usize) -> anyhow::Result<(f64, f64, f64, f64)> {
    const BLOCKS: usize = 10;
    let mut empty = TurnBench::new(0, 0).await?;
    let mut long = TurnBench::new(10_000, 0).await?;
    let (mut took_empty, mut took_long) = (Vec::new(), Vec::new());
    for block in 0..BLOCKS {
        let n = turns / BLOCKS + usize::from(block < turns % BLOCKS);
        empty.run(n, &mut took_empty).await?;
        long.run(n, &mut took_long).await?;
    }
    took_empty.sort();
    took_long.sort();
    let (calls, summaries) = long.calls()?;
    Ok((
        pct(&took_empty, 0.5),
        pct(&took_long, 0.5),
        calls as f64 / turns as f64,
        summaries as f64 / turns as f64,
    ))
}

/// Prints [`empty_and_long`].
async fn print_empty_and_long(turns: usize) -> anyhow::Result<()> {
    let (empty, long, calls, summaries) = empty_and_long(turns).await?;
    println!(
        "turn finished p50: empty channel {empty:.2} ms | thread of 10,000 messages {long:.2} ms | ratio {:.2}x",
        long / empty
    );
    println!(
        "model calls per turn in the long thread: {:.2} ({calls:.2} turn calls + {summaries:.2} summary calls)",
        calls + summaries
    );
    Ok(())
}

/// When each reply was announced, for the threads waiting on them: the
/// announcement may come before its poster has registered.
enum Announced {
    At(Instant),
    Waiting(tokio::sync::oneshot::Sender<Instant>),
}

/// `channels × threads` turns at once: `channels` channels with `threads`
/// threads each, and
/// every thread posting its next message as soon as its reply is announced,
/// `rounds` times. Returns the p50 and p99 of a whole turn (posted → reply
/// announced) in ms and the turns finished per second.
async fn concurrent_turns(
    channels: usize,
    threads: usize,
    rounds: usize,
) -> anyhow::Result<(f64, f64, f64)> {
    let (t, timed, _record) = bench_channel_with(|o| {
        // Every thread of a channel runs at once, so the figure is the
        // engine's, not a queue behind the agent's capacity.
        o.runtime.capacity_per_agent = threads as u32;
    })
    .await?;
    for _ in 0..channels * threads * (rounds + 1) {
        timed.inner.push(ScriptedReply::text(REPLY));
    }
    t.helm.start_runtime().await?;
    let mut crews = Vec::new();
    for c in 0..channels {
        let record = t
            .helm
            .create_channel(&t.captain, &format!("crew-{c}"), "Bench channel.")
            .await?;
        crews.push((
            ChannelRef::Id(record.channel.id),
            format!("@crew-{c}-agent"),
        ));
    }
    let announced: Arc<Mutex<std::collections::HashMap<_, Announced>>> = Arc::default();
    let mut live = t.helm.subscribe();
    let board = announced.clone();
    let listener = tokio::spawn(async move {
        while let Ok(event) = live.recv().await {
            if let EventBody::MessageCompleted { message } = &event.body {
                let now = Instant::now();
                let Ok(mut board) = board.lock() else { return };
                match board.remove(&message.id) {
                    Some(Announced::Waiting(tx)) => {
                        let _ = tx.send(now);
                    }
                    _ => {
                        board.insert(message.id, Announced::At(now));
                    }
                }
            }
        }
    });
    let helm = Arc::new(t);
    // One warm-up turn per thread opens it (and is not counted).
    let mut workers = tokio::task::JoinSet::new();
    let started = Instant::now();
    for (ch, handle) in crews {
        for w in 0..threads {
            let (helm, announced, ch, handle) =
                (helm.clone(), announced.clone(), ch.clone(), handle.clone());
            workers.spawn(async move {
                let mut thread = None;
                let mut took = Vec::new();
                for round in 0..=rounds {
                    let posted_at = Instant::now();
                    let posted = helm
                        .helm
                        .post_message(
                            &helm.captain,
                            &ch,
                            &format!("{handle} task {w}.{round}"),
                            thread,
                        )
                        .await?;
                    thread = Some(posted.thread.id);
                    let reply = posted
                        .turn
                        .ok_or_else(|| anyhow::anyhow!("no turn"))?
                        .reply_message_id;
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    {
                        let mut board = announced.lock().map_err(|_| anyhow::anyhow!("lock"))?;
                        match board.remove(&reply) {
                            Some(Announced::At(at)) => {
                                let _ = tx.send(at);
                            }
                            _ => {
                                board.insert(reply, Announced::Waiting(tx));
                            }
                        }
                    }
                    let at = tokio::time::timeout(Duration::from_secs(60), rx).await??;
                    if round > 0 {
                        took.push(at - posted_at);
                    }
                }
                anyhow::Ok(took)
            });
        }
    }
    let mut took = Vec::new();
    while let Some(done) = workers.join_next().await {
        took.extend(done??);
    }
    let wall = started.elapsed().as_secs_f64();
    listener.abort();
    took.sort();
    let finished = (channels * threads * (rounds + 1)) as f64;
    Ok((pct(&took, 0.5), pct(&took, 0.99), finished / wall))
}

/// Medians of plain posts (no agent woken), in ms.
struct FirstPosts {
    /// A new channel's first message, posted right after the channel is made.
    first: f64,
    /// Its next four messages.
    later: f64,
    /// A message into the channel made before, posted right after a new one
    /// is made: the same place in the sequence as `first`, in a channel that
    /// is not new.
    after_create: f64,
    /// A message posted after [`IDLE_MOMENT`] with nothing to do, as most
    /// of a person's messages are: what waking the threads it passes
    /// through costs.
    after_idle: f64,
}

/// The pause before each message of [`FirstPosts::after_idle`].
const IDLE_MOMENT: Duration = Duration::from_millis(5);

/// Plain messages posted into `channels` new channels, five each; then, as
/// the control, `channels` more channels made, each followed by a post into
/// the channel made before it; then `channels` posts, each after a pause.
/// The first message is where a channel's first indexed item lands; the
/// control tells what of its cost is the channel being new and what is
/// following another operation (the post's code and pages are no longer in
/// the core's caches after making a channel).
async fn first_messages(channels: usize) -> anyhow::Result<FirstPosts> {
    let (t, _timed, launch) = bench_channel().await?;
    t.helm.start_runtime().await?;
    let post = |ch: ChannelRef, text: String| {
        let t = &t;
        async move {
            let at = Instant::now();
            t.helm.post_message(&t.captain, &ch, &text, None).await?;
            anyhow::Ok(at.elapsed())
        }
    };
    let mut first = Vec::new();
    let mut later = Vec::new();
    for c in 0..channels {
        let record = t
            .helm
            .create_channel(&t.captain, &format!("desk-{c}"), "Bench channel.")
            .await?;
        for i in 0..5 {
            let took = post(
                ChannelRef::Id(record.channel.id),
                format!("note {i} on launch logistics"),
            )
            .await?;
            [&mut later, &mut first][usize::from(i == 0)].push(took);
        }
    }
    let mut after_create = Vec::new();
    let mut before = ChannelRef::Id(launch.channel.id);
    for c in 0..channels {
        let record = t
            .helm
            .create_channel(&t.captain, &format!("control-{c}"), "Bench channel.")
            .await?;
        after_create.push(post(before, "note 0 on launch logistics".into()).await?);
        before = ChannelRef::Id(record.channel.id);
        post(before.clone(), "note 1 on launch logistics".into()).await?;
    }
    let mut after_idle = Vec::new();
    for i in 0..channels {
        tokio::time::sleep(IDLE_MOMENT).await;
        after_idle.push(post(before.clone(), format!("note {i} after a pause")).await?);
    }
    for v in [&mut first, &mut later, &mut after_create, &mut after_idle] {
        v.sort();
    }
    Ok(FirstPosts {
        first: pct(&first, 0.5),
        later: pct(&later, 0.5),
        after_create: pct(&after_create, 0.5),
        after_idle: pct(&after_idle, 0.5),
    })
}

/// Prints [`first_messages`] and its two ratios.
async fn print_first_messages(channels: usize) -> anyhow::Result<()> {
    let p = first_messages(channels).await?;
    println!(
        "plain post p50: first in a new channel {:.2} ms | later {:.2} ms | ratio {:.2}x",
        p.first,
        p.later,
        p.first / p.later
    );
    println!(
        "plain post p50, right after a channel is made: into it {:.2} ms | into the one before {:.2} ms | ratio {:.2}x",
        p.first,
        p.after_create,
        p.first / p.after_create
    );
    println!(
        "plain post p50 after {} ms idle {:.2} ms | back to back {:.2} ms",
        IDLE_MOMENT.as_millis(),
        p.after_idle,
        p.later
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let turns: usize = std::env::var("HELM_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let store = if on_postgres() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    println!(
        "turn engine overhead on {store}, {turns} turns per scenario, zero-latency scripted model"
    );
    if std::env::var("HELM_BENCH_ONLY").is_ok_and(|s| s == "long") {
        return print_empty_and_long(turns).await;
    }
    if std::env::var("HELM_BENCH_ONLY").is_ok_and(|s| s == "first") {
        return print_first_messages(turns).await;
    }
    if std::env::var("HELM_BENCH_ONLY").is_ok_and(|s| s == "concurrent") {
        return print_concurrent().await;
    }
    if std::env::var("HELM_BENCH_ONLY").is_ok_and(|s| s == "people") {
        return print_people(turns).await;
    }
    scenario("1 thread, empty channel", 0, turns).await?;
    if comparing_stores() {
        let (empty, _, _) = whole_turns(0, turns).await?;
        println!("turn finished p50: empty channel {empty:.2} ms");
        return Ok(());
    }
    scenario("1 thread, 100,000 messages in the channel", 100_000, turns).await?;
    print_empty_and_long(turns).await?;
    print_first_messages(turns).await?;
    print_people(turns).await?;
    print_concurrent().await
}

/// A whole turn in a public channel of a workspace of 300 people, against
/// the same with the Captain alone: what the turn's audience (everyone who
/// reads the thread) costs to work out.
async fn print_people(turns: usize) -> anyhow::Result<()> {
    let (alone, _, _) = whole_turns(0, turns).await?;
    let (among, _, _) = whole_turns_among(0, 300, turns).await?;
    println!(
        "turn finished p50: Captain alone {alone:.2} ms | 300 people in the workspace {among:.2} ms | ratio {:.2}x",
        among / alone
    );
    Ok(())
}

async fn print_concurrent() -> anyhow::Result<()> {
    let rounds = std::env::var("HELM_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let (p50, p99, per_s) = concurrent_turns(20, 5, rounds).await?;
    println!(
        "100 concurrent turns over 20 channels: turn p50 {p50:.1} ms p99 {p99:.1} ms | {per_s:.0} turns/s"
    );
    Ok(())
}
