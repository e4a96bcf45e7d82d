//! Memory at scale: a 100,000-line history imported through `1helm import`,
//! recall latency in a workspace of 1,100,000 messages and 110,000 memory
//! records (one channel of 100k messages and 10k records, and 100 channels
//! of 10k messages and 1k records each), how closely the index of a large
//! channel keeps to an exact search, and the process's resident memory after
//! recall in all 100 smaller channels under two vector-cache budgets.
//!
//! `cargo bench -p helm-cli --bench memory_scale` (`HELM_SCALE=0.1` builds a
//! tenth of it; `HELM_SCALE_ONLY=words` stops after timing the word search
//! alone, and `HELM_SCALE_ONLY=recall` only recalls, 3,000 times
//! alternating between the large channel and a small one, for a profiler
//! or to compare builds: it prints each channel's latencies after the
//! first 500). Text comes from the
//! LoCoMo conversations beside the repository, shuffled. Each distinct text
//! is embedded for real with the local model, and each item gets its text's
//! vector moved a little at random (embedding 1.2M items on this CPU would
//! take hours; random vectors would have no neighbourhoods, which no
//! approximate index could serve).

use std::process::Command;
use std::time::{Duration, Instant};

use helm_core::memory::recall::{ItemKey, RecallQuery};
use helm_core::model::ChannelRef;
use helm_core::{Helm, HelmOptions, InitOptions};
use serde_json::{Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: fast and good enough to shuffle text.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
}

fn corpus() -> anyhow::Result<(Vec<String>, Vec<String>, Vec<String>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/bench/locomo/locomo-dev.json"
    );
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let (mut turns, mut facts, mut questions) = (Vec::new(), Vec::new(), Vec::new());
    for sample in data.as_array().into_iter().flatten() {
        for (key, value) in sample["conversation"].as_object().into_iter().flatten() {
            if key.starts_with("session_") && value.is_array() {
                for t in value.as_array().into_iter().flatten() {
                    turns.push(t["text"].as_str().unwrap_or_default().to_string());
                }
            }
        }
        for by_speaker in sample["observation"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(_, v)| v)
        {
            for list in by_speaker.as_object().into_iter().flatten().map(|(_, v)| v) {
                for f in list.as_array().into_iter().flatten() {
                    facts.push(f[0].as_str().unwrap_or_default().to_string());
                }
            }
        }
        for q in sample["qa"].as_array().into_iter().flatten() {
            questions.push(q["question"].as_str().unwrap_or_default().to_string());
        }
    }
    Ok((turns, facts, questions))
}

/// A history of `messages` messages (100 per thread) and `memories` facts.
fn history(
    rng: &mut Rng,
    turns: &[String],
    facts: &[String],
    messages: usize,
    memories: usize,
) -> String {
    let mut out = String::with_capacity(messages * 120);
    let threads = messages.div_ceil(100).max(1);
    for t in 0..threads {
        out.push_str(
            &json!({"type": "thread", "id": format!("t{t}"), "title": format!("Session {t}")})
                .to_string(),
        );
        out.push('\n');
    }
    let people = ["Caroline", "Melanie", "Jon", "Gina", "Tim", "John"];
    for m in 0..messages {
        let line = json!({
            "type": "message", "thread": format!("t{}", m / 100), "external_id": format!("m{m}"),
            "author": people[rng.below(people.len())], "text": turns[rng.below(turns.len())],
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    for f in 0..memories {
        let m = rng.below(messages.max(1));
        let line = json!({
            "type": "memory", "kind": "fact", "content": facts[rng.below(facts.len())],
            "thread": format!("t{}", m / 100), "source_external_id": format!("m{m}"),
        });
        out.push_str(&line.to_string());
        out.push('\n');
        let _ = f;
    }
    out
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

/// Prints the median and 99th percentile of `times`.
fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{what}: p50 {:.2} ms, p99 {:.2} ms",
        pct(&times, 0.5),
        pct(&times, 0.99)
    );
}

/// The word search alone in a channel (the store's part of recall), every
/// question once, ranking every match and walking at most
/// `WORD_WALK` rows (as recall does), side by side: their latencies, and how
/// much of the exact top 10 and top 100 the bounded search finds.
async fn words_alone(
    helm: &Helm,
    label: &str,
    channel: helm_core::model::ChannelId,
    questions: &[String],
) -> anyhow::Result<()> {
    use helm_core::memory::recall::{DEPTH, WORD_WALK};
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let (mut exact_times, mut bounded_times) = (Vec::new(), Vec::new());
    let (mut found, mut top10, mut top100) = (0, (0, 0), (0, 0));
    for q in questions.iter().take(400) {
        let terms = helm_core::memory::query::parse(q, today).terms;
        let t = Instant::now();
        let exact = helm
            .store()
            .recall_lexical(channel, &terms, DEPTH, None)
            .await?;
        exact_times.push(t.elapsed());
        let t = Instant::now();
        let bounded = helm
            .store()
            .recall_lexical(channel, &terms, DEPTH, Some(WORD_WALK))
            .await?;
        bounded_times.push(t.elapsed());
        found += exact.len();
        let keys: std::collections::HashSet<ItemKey> = bounded.iter().map(|(k, _)| *k).collect();
        for (n, share) in [(10, &mut top10), (100, &mut top100)] {
            let top: Vec<ItemKey> = exact.iter().take(n).map(|(k, _)| *k).collect();
            share.0 += top.iter().filter(|k| keys.contains(k)).count();
            share.1 += top.len();
        }
    }
    let questions = exact_times.len();
    report(
        &format!(
            "word search alone, {label}, every match ranked ({questions} questions, {:.0} hits each)",
            found as f64 / questions.max(1) as f64
        ),
        exact_times,
    );
    report(
        &format!("the same, walking at most {WORD_WALK} rows (as recall does)"),
        bounded_times,
    );
    let share = |(hit, of): (usize, usize)| hit as f64 / of.max(1) as f64;
    println!(
        "the bounded word search finds {:.3} of the exact top 10 and {:.3} of the exact top 100",
        share(top10),
        share(top100)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let scale: f64 = std::env::var("HELM_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let n = |x: usize| ((x as f64 * scale) as usize).max(1);
    // The heap as helm-http sets it up, so resident memory is the server's.
    helm_http::prepare_heap();
    let corpus = corpus()?;
    let questions = corpus.2.clone();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // `HELM_SCALE_DATA` keeps the workspace built in that directory and
    // uses it again on the next run (of the same scale), skipping the build.
    let dir = tempfile::tempdir()?;
    let data = match std::env::var_os("HELM_SCALE_DATA") {
        Some(kept) => std::path::PathBuf::from(kept),
        None => dir.path().join("data"),
    };
    let mut channels: Vec<(String, usize)> = vec![("big".into(), n(100_000))];
    channels.extend((0..100).map(|i| (format!("c{i:02}"), n(10_000))));
    let mut options = HelmOptions::new(&data);
    options.embedder = helm_core::memory::embed::local_embedder(&data).unwrap_or(None);
    let Some(embedder) = options.embedder.clone() else {
        anyhow::bail!("the local embedding model is missing: run ./scripts/fetch-embedding-model");
    };
    let helm = if data.join("helm.db").is_file() {
        println!("using the workspace built in {}", data.display());
        Helm::open(options.clone()).await?
    } else {
        build(&options, &channels, n(100_000), &corpus, &mut rng).await?
    };

    let big = helm
        .channel(&"big".parse::<ChannelRef>()?)
        .await?
        .channel
        .id;
    if std::env::var("HELM_SCALE_ONLY").as_deref() == Ok("recall") {
        // Recall alone, over and over, for a profiler; the latencies after
        // the first 500 are reported.
        let (mut large, mut small) = (Vec::new(), Vec::new());
        for i in 0..3000 {
            let name = if i % 2 == 0 { "big" } else { "c00" };
            let q = &questions[rng.below(questions.len())];
            let t = Instant::now();
            helm.recall(&name.parse()?, RecallQuery::new(q.clone()))
                .await?;
            if i >= 500 {
                [&mut large, &mut small][i % 2].push(t.elapsed());
            }
        }
        report("recall alone, alternating, 100k-message channel", large);
        report("recall alone, alternating, a 10k-message channel", small);
        return Ok(());
    }
    let small = helm
        .channel(&"c00".parse::<ChannelRef>()?)
        .await?
        .channel
        .id;
    words_alone(&helm, "100k-message channel", big, &questions).await?;
    words_alone(&helm, "a 10k-message channel", small, &questions).await?;
    if std::env::var("HELM_SCALE_ONLY").as_deref() == Ok("words") {
        return Ok(());
    }

    // 4. The index of the large channel against an exact search.
    let indexed = index_against_exact(&helm, &embedder, big, &questions, &mut rng).await?;

    // 5. Recall latency, the first search in a channel and the steady state.
    for (label, names) in [
        ("a 10k-message channel", &channels[1..11]),
        ("the 100k-message channel", &channels[..1]),
    ] {
        let names: Vec<&str> = names.iter().map(|(c, _)| c.as_str()).collect();
        let mut cold = Vec::new();
        for name in &names {
            let t = Instant::now();
            helm.recall(&name.parse()?, RecallQuery::new("warm up"))
                .await?;
            cold.push(t.elapsed());
        }
        cold.sort();
        println!(
            "first recall in {label} (reads its vectors): median {:.1} ms",
            pct(&cold, 0.5)
        );
        // A large channel is indexed on a blocking thread after that first
        // search; recall is exact until the index is in place.
        let wait = Instant::now();
        if names.len() == 1 && indexed {
            while helm.vector_cache().is_none_or(|c| c.indexed == 0) {
                anyhow::ensure!(
                    wait.elapsed() < Duration::from_secs(120),
                    "no index after 2 minutes"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            println!(
                "  its index was in place {:.1} s later",
                wait.elapsed().as_secs_f64()
            );
        }
        let mut times = Vec::new();
        for i in 0..300 {
            let name = names[i % names.len()];
            let q = &questions[rng.below(questions.len())];
            let t = Instant::now();
            helm.recall(&name.parse()?, RecallQuery::new(q.clone()))
                .await?;
            times.push(t.elapsed());
        }
        report(
            &format!("recall in {label} (words + meaning, query embedded)"),
            times,
        );
    }

    // 6. Recall in the 100k-message channel while it grows: 50 new messages
    // embedded before each search. A kept channel reads only the vectors
    // stored since its last search (it used to read all 110,000 again).
    let captain = helm.captain().await?;
    let big: ChannelRef = "big".parse()?;
    let mut times = Vec::new();
    // Thread names new on each run, for a kept workspace.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    for round in 0..20 {
        let round = format!("{run}-{round}");
        let lines: Vec<String> = (0..50)
            .map(|i| {
                json!({"type": "message", "thread": format!("grow{round}"),
                    "external_id": format!("grow{round}-{i}"), "author": "Jon",
                    "text": corpus.0[rng.below(corpus.0.len())]})
                .to_string()
            })
            .collect();
        let history = format!(
            "{}\n{}",
            json!({"type": "thread", "id": format!("grow{round}"), "title": "More"}),
            lines.join("\n")
        );
        helm.import_history(&captain, &big, std::io::Cursor::new(history.into_bytes()))
            .await?;
        // Only the new messages: on a workspace kept from before migration
        // 15 the channel's older ones wait to be embedded again too.
        helm.embed_unembedded(&big).await?;
        let q = &questions[rng.below(questions.len())];
        let t = Instant::now();
        helm.recall(&big, RecallQuery::new(q.clone())).await?;
        times.push(t.elapsed());
    }
    report(
        "recall in the 100k-message channel right after 50 new messages were embedded",
        times,
    );
    drop(helm);

    // 7. Resident memory after a search in each of the 100 smaller channels.
    for budget_mb in [64, 256] {
        let mut options = options.clone();
        options.memory.vector_cache_mb = budget_mb;
        let helm = Helm::open(options).await?;
        helm.recall(&"c00".parse()?, RecallQuery::new("warm up"))
            .await?;
        let before = resident_mb();
        for (name, _) in &channels[1..] {
            let q = &questions[rng.below(questions.len())];
            helm.recall(&name.parse()?, RecallQuery::new(q.clone()))
                .await?;
        }
        let after = resident_mb();
        let cache = helm.vector_cache().unwrap_or_default();
        println!(
            "vector cache of {budget_mb} MiB, recall in {} channels: resident {before:.0} -> {after:.0} MB, \
             cache holds {} channels, {:.0} MiB",
            channels.len() - 1,
            cache.channels,
            cache.bytes as f64 / (1 << 20) as f64,
        );
    }
    Ok(())
}

/// Builds the workspace: a history through `1helm import`, then the
/// channels, then their vectors.
async fn build(
    options: &HelmOptions,
    channels: &[(String, usize)],
    lines: usize,
    (turns, facts, _): &(Vec<String>, Vec<String>, Vec<String>),
    rng: &mut Rng,
) -> anyhow::Result<Helm> {
    let data = &options.data_dir;
    let bin = env!("CARGO_BIN_EXE_1helm");
    let run = |args: &[&str]| -> anyhow::Result<()> {
        let out = Command::new(bin)
            .arg("--data")
            .arg(data)
            .args(args)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "1helm {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    };

    // 1. A 100,000-line history through the CLI's import.
    run(&["init"])?;
    run(&[
        "channel",
        "create",
        "history",
        "--purpose",
        "An imported history.",
    ])?;
    let file = data.with_extension("history.jsonl");
    std::fs::write(
        &file,
        history(rng, turns, facts, lines * 9 / 10, lines / 10),
    )?;
    let started = Instant::now();
    run(&[
        "import",
        "history",
        file.to_str().unwrap_or_default(),
        "--no-embed",
    ])?;
    println!(
        "`1helm import` of {lines} lines (whole process): {:.2} s",
        started.elapsed().as_secs_f64()
    );
    std::fs::remove_file(&file)?;

    // 2. A workspace of 1.1M messages and 110k records.
    let (helm, report) = Helm::init(options.clone(), InitOptions::default()).await?;
    let embedder = options
        .embedder
        .clone()
        .ok_or_else(|| anyhow::anyhow!("no embedder"))?;
    let build = Instant::now();
    let mut total_messages = 0;
    for (name, messages) in channels {
        helm.create_channel(&report.captain, name, "Scale test.")
            .await?;
        let text = history(rng, turns, facts, *messages, messages / 10);
        helm.import_history(
            &report.captain,
            &name.parse()?,
            std::io::Cursor::new(text.into_bytes()),
        )
        .await?;
        total_messages += messages;
    }
    println!(
        "built {total_messages} messages and {} records in {} channels in {:.0} s",
        total_messages / 10 + lines / 10,
        channels.len(),
        build.elapsed().as_secs_f64()
    );

    // 3. Vectors: each distinct text (as recall embeds it, with its
    // author) embedded for real, each item near its text's.
    let started = Instant::now();
    let mut near = TextVectors::new(embedder.clone());
    let model = embedder.model().to_string();
    let mut stored = 0;
    for (name, _) in channels {
        let id = helm.channel(&name.parse::<ChannelRef>()?).await?.channel.id;
        loop {
            let batch = helm.store().embed_backlog(Some(id), 5000, None).await?;
            if batch.is_empty() {
                break;
            }
            near.embed(batch.iter().map(|(_, _, t)| t.clone()).collect())
                .await?;
            let rows: Vec<(ItemKey, _, Vec<f32>)> = batch
                .into_iter()
                .map(|(k, c, text)| (k, c, near.jittered(&text, rng)))
                .collect();
            stored += rows.len();
            helm.store().put_embeddings(&model, rows).await?;
        }
    }
    println!(
        "embedded {} distinct texts and stored {stored} vectors in {:.0} s",
        near.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(helm)
}

/// The process's resident set, in MB (Linux).
fn resident_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1000.0)
}

/// Real embeddings of distinct texts, handed out a little moved at random
/// so that items of one text are near each other but not identical. A
/// message is embedded with the one before it, on a second line; here
/// only its own line counts, or nearly every item would be a text of its
/// own to embed (hours at this scale).
struct TextVectors {
    embedder: std::sync::Arc<dyn helm_core::memory::embed::Embedder>,
    known: std::collections::HashMap<String, Vec<f32>>,
}

impl TextVectors {
    fn new(embedder: std::sync::Arc<dyn helm_core::memory::embed::Embedder>) -> Self {
        TextVectors {
            embedder,
            known: Default::default(),
        }
    }

    fn len(&self) -> usize {
        self.known.len()
    }

    /// Embeds the texts not embedded yet.
    async fn embed(&mut self, texts: Vec<String>) -> anyhow::Result<()> {
        let mut texts: Vec<String> = texts.iter().map(|t| own_line(t).to_string()).collect();
        texts.retain(|t| !self.known.contains_key(t));
        texts.sort();
        texts.dedup();
        for chunk in texts.chunks(64) {
            let vectors = self.embedder.embed(chunk).await?;
            self.known.extend(chunk.iter().cloned().zip(vectors));
        }
        Ok(())
    }

    /// `text`'s vector plus noise of about a third of its length (cosine
    /// about 0.94 to it), normalised.
    fn jittered(&self, text: &str, rng: &mut Rng) -> Vec<f32> {
        let Some(base) = self.known.get(own_line(text)) else {
            return Vec::new();
        };
        let scale = 0.35 / (base.len() as f32 / 12.0).sqrt();
        let mut v: Vec<f32> = base.iter().map(|x| x + scale * rng.unit()).collect();
        helm_core::memory::embed::normalize(&mut v);
        v
    }
}

/// An item's own text: a message's first line, without its context.
fn own_line(text: &str) -> &str {
    text.split('\n').next().unwrap_or(text)
}

/// How much of an exact search's top ten the index of channel `id` finds,
/// and what one search costs each way (the query vectors embedded first);
/// whether the channel is large enough to be indexed.
async fn index_against_exact(
    helm: &Helm,
    embedder: &std::sync::Arc<dyn helm_core::memory::embed::Embedder>,
    id: helm_core::model::ChannelId,
    questions: &[String],
    rng: &mut Rng,
) -> anyhow::Result<bool> {
    use helm_core::memory::vectors::ChannelVectors;
    let stored = helm
        .store()
        .channel_vectors(embedder.model(), id, 0)
        .await?;
    let rows = stored.len();
    let exact = ChannelVectors::loaded(stored);
    let t = Instant::now();
    let indexed = exact.merged();
    let built = t.elapsed();
    if !indexed.is_indexed() {
        println!("the large channel ({rows} vectors) is below the index's threshold");
        return Ok(false);
    }
    let asked: Vec<String> = (0..200)
        .map(|_| questions[rng.below(questions.len())].clone())
        .collect();
    let queries = embedder.embed(&asked).await?;
    let (mut found, mut exact_times, mut index_times) = (0, Vec::new(), Vec::new());
    for q in &queries {
        let t = Instant::now();
        let truth = exact.nearest(q, 10);
        exact_times.push(t.elapsed());
        let t = Instant::now();
        let got = indexed.nearest(q, 10);
        index_times.push(t.elapsed());
        found += got
            .iter()
            .filter(|(k, _)| truth.iter().any(|(e, _)| e == k))
            .count();
    }
    exact_times.sort();
    index_times.sort();
    println!(
        "index of {rows} vectors built in {:.1} s; it finds {:.3} of the exact top 10; \
         search p50 {:.2} ms against {:.2} ms exact, p99 {:.2} against {:.2} ms",
        built.as_secs_f64(),
        found as f64 / (10 * queries.len()) as f64,
        pct(&index_times, 0.5),
        pct(&exact_times, 0.5),
        pct(&index_times, 0.99),
        pct(&exact_times, 0.99),
    );
    Ok(true)
}
