//! Memory at scale: a 100,000-line history imported through `1helm import`,
//! and recall latency in a workspace holding 1,000,000 messages and 100,000
//! memory records (one large channel of 100k messages and 10k records, and 90
//! channels of 10k messages and 1k records each).
//!
//! `cargo bench -p helm-cli --bench memory_scale` (`HELM_SCALE=0.1` builds a
//! tenth of it). Text comes from the LoCoMo conversations beside the
//! repository, shuffled; vectors for the channels queried are random unit
//! vectors (embedding 1.1M items with a CPU model would take hours), so the
//! figures measure Helm's search work, with the query itself embedded for real
//! when the local model is present.

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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let scale: f64 = std::env::var("HELM_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let n = |x: usize| ((x as f64 * scale) as usize).max(1);
    let (turns, facts, questions) = corpus()?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let bin = env!("CARGO_BIN_EXE_1helm");
    let run = |args: &[&str]| -> anyhow::Result<()> {
        let out = Command::new(bin)
            .arg("--data")
            .arg(&data)
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
    let lines = n(100_000);
    let file = dir.path().join("history.jsonl");
    std::fs::write(
        &file,
        history(&mut rng, &turns, &facts, lines * 9 / 10, lines / 10),
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

    // 2. A workspace of 1M messages and 100k records.
    let mut options = HelmOptions::new(&data);
    options.embedder = helm_core::memory::embed::local_embedder(&data).unwrap_or(None);
    let (helm, report) = Helm::init(options, InitOptions::default()).await?;
    let model = helm.embedding_model().map(str::to_string);
    let mut channels: Vec<(String, usize)> = vec![("big".into(), n(100_000))];
    channels.extend((0..90).map(|i| (format!("c{i:02}"), n(10_000))));
    let build = Instant::now();
    let mut total_messages = 0;
    for (name, messages) in &channels {
        helm.create_channel(&report.captain, name, "Scale test.")
            .await?;
        let text = history(&mut rng, &turns, &facts, *messages, messages / 10);
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

    // Random unit vectors for the channels queried, in place of real embeddings.
    let queried: Vec<&str> = std::iter::once("big")
        .chain(channels[1..11].iter().map(|(c, _)| c.as_str()))
        .collect();
    if let Some(model) = &model {
        for name in &queried {
            let id = helm.channel(&name.parse::<ChannelRef>()?).await?.channel.id;
            loop {
                let batch = helm.store().embed_backlog(Some(id), 5000).await?;
                if batch.is_empty() {
                    break;
                }
                let rows: Vec<(ItemKey, _, Vec<f32>)> = batch
                    .into_iter()
                    .map(|(k, c, _)| {
                        let mut v: Vec<f32> = (0..384).map(|_| rng.unit()).collect();
                        helm_core::memory::embed::normalize(&mut v);
                        (k, c, v)
                    })
                    .collect();
                helm.store().put_embeddings(model, rows).await?;
            }
        }
    }

    for (label, names) in [
        ("a 10k-message channel", &queried[1..]),
        ("the 100k-message channel", &queried[..1]),
    ] {
        // The first recall in a channel loads its vectors into memory; it is
        // reported on its own, and the steady state after it.
        let mut cold = Vec::new();
        for name in names.iter() {
            let t = Instant::now();
            helm.recall(&name.parse()?, RecallQuery::new("warm up"))
                .await?;
            cold.push(t.elapsed());
        }
        cold.sort();
        println!(
            "first recall in {label} (loads its vectors): median {:.1} ms",
            pct(&cold, 0.5)
        );
        let mut times = Vec::new();
        for i in 0..300 {
            let name = names[i % names.len()];
            let q = &questions[rng.below(questions.len())];
            let t = Instant::now();
            helm.recall(&name.parse()?, RecallQuery::new(q.clone()))
                .await?;
            times.push(t.elapsed());
        }
        times.sort();
        println!(
            "recall in {label} ({}): p50 {:.2} ms, p99 {:.2} ms",
            if model.is_some() {
                "words + meaning"
            } else {
                "words only"
            },
            pct(&times, 0.5),
            pct(&times, 0.99)
        );
    }
    Ok(())
}
