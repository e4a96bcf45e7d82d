//! LoCoMo, scored on retrieval, exactly as `shared/bench/locomo/README.md`
//! says: each conversation is imported into its own channel through the
//! history import (sessions as threads, turns as messages with their dia_id
//! as external id, observations as facts sourced from their turn, session
//! summaries as summaries of their thread), then every question of categories
//! 1–4 is asked of the channel's recall with the defaults `1helm recall` uses.
//!
//! `cargo bench -p helm-cli --bench locomo [-- PATH]` (default path:
//! `shared/bench/locomo/locomo-dev.json` beside the repository, or `HELM_LOCOMO`).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::time::{Duration, Instant};

use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::ChannelRef;
use helm_core::{Helm, HelmOptions, InitOptions};
use serde_json::{Value, json};

const KS: [usize; 3] = [1, 5, 10];
const ALL_KS: [usize; 2] = [5, 10];

/// `D01:005` → `D1:5`; malformed ids give `None`.
fn norm_dia(raw: &str) -> Option<String> {
    let rest = raw.trim().strip_prefix('D')?;
    let (s, t) = rest.split_once(':')?;
    let s: u32 = s.parse().ok()?;
    let t: u32 = t.parse().ok()?;
    Some(format!("D{s}:{t}"))
}

fn session_of(dia: &str) -> Option<u32> {
    dia.strip_prefix('D')?.split_once(':')?.0.parse().ok()
}

fn norm_evidence(evidence: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in evidence {
        let text = match e {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        for part in text.split(|c: char| c == ';' || c.is_whitespace()) {
            if let Some(n) = norm_dia(part)
                && !out.contains(&n)
            {
                out.push(n);
            }
        }
    }
    out
}

/// "1:56 pm on 8 May, 2023" → RFC 3339 (UTC).
fn session_time(text: &str) -> Option<jiff::Timestamp> {
    let parsed = jiff::fmt::strtime::parse("%I:%M %p on %d %B, %Y", text.trim()).ok()?;
    parsed
        .to_datetime()
        .ok()?
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

struct Question {
    text: String,
    category: u64,
    turns: BTreeSet<String>,
    sessions: BTreeSet<u32>,
}

/// Writes one sample as an import file; returns its questions.
fn to_jsonl(sample: &Value) -> anyhow::Result<(String, Vec<Question>)> {
    let conv = &sample["conversation"];
    let mut lines: Vec<String> = Vec::new();
    let obj = conv
        .as_object()
        .ok_or_else(|| anyhow::anyhow!("no conversation"))?;
    let mut sessions: Vec<u32> = obj
        .keys()
        .filter_map(|k| k.strip_prefix("session_")?.parse().ok())
        .collect();
    sessions.sort();
    for n in &sessions {
        let turns = conv[format!("session_{n}")]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let opened = session_time(
            conv[format!("session_{n}_date_time")]
                .as_str()
                .unwrap_or(""),
        );
        let mut thread =
            json!({"type": "thread", "id": format!("S{n}"), "title": format!("Session {n}")});
        if let Some(t) = opened {
            thread["opened_at"] = json!(t.to_string());
        }
        lines.push(thread.to_string());
        for (i, turn) in turns.iter().enumerate() {
            let Some(dia) = turn["dia_id"].as_str().and_then(norm_dia) else {
                continue;
            };
            let mut message = json!({
                "type": "message", "thread": format!("S{n}"), "external_id": dia,
                "author": turn["speaker"], "text": turn["text"],
            });
            if let Some(t) = opened {
                message["at"] = json!((t + Duration::from_secs(i as u64)).to_string());
            }
            lines.push(message.to_string());
        }
    }
    if let Some(observations) = sample["observation"].as_object() {
        for (key, by_speaker) in observations {
            let n: u32 = key
                .trim_start_matches("session_")
                .trim_end_matches("_observation")
                .parse()?;
            for facts in by_speaker.as_object().into_iter().flat_map(|m| m.values()) {
                for fact in facts.as_array().into_iter().flatten() {
                    let text = fact[0].as_str().unwrap_or_default();
                    // A fact has one source message in Helm: the first one listed.
                    let source = match &fact[1] {
                        Value::Array(list) => {
                            list.iter().filter_map(|v| v.as_str()).find_map(norm_dia)
                        }
                        Value::String(s) => norm_dia(s),
                        _ => None,
                    };
                    let mut line = json!({"type": "memory", "kind": "fact", "content": text, "thread": format!("S{n}")});
                    if let Some(src) = source {
                        line["source_external_id"] = json!(src);
                    }
                    lines.push(line.to_string());
                }
            }
        }
    }
    if let Some(summaries) = sample["session_summary"].as_object() {
        for (key, text) in summaries {
            let n: u32 = key
                .trim_start_matches("session_")
                .trim_end_matches("_summary")
                .parse()?;
            lines.push(json!({"type": "memory", "kind": "summary", "content": text, "thread": format!("S{n}")}).to_string());
        }
    }
    let mut questions = Vec::new();
    for qa in sample["qa"].as_array().into_iter().flatten() {
        let category = qa["category"].as_u64().unwrap_or(0);
        if !(1..=4).contains(&category) {
            continue;
        }
        let turns: BTreeSet<String> =
            norm_evidence(qa["evidence"].as_array().map(Vec::as_slice).unwrap_or(&[]))
                .into_iter()
                .collect();
        if turns.is_empty() {
            continue;
        }
        let sessions = turns.iter().filter_map(|t| session_of(t)).collect();
        questions.push(Question {
            text: qa["question"].as_str().unwrap_or_default().to_string(),
            category,
            turns,
            sessions,
        });
    }
    Ok((lines.join("\n"), questions))
}

/// The turn and the session each hit stands for.
fn hit_turn_and_session(hit: &RecallHit) -> (Option<String>, Option<u32>) {
    let session = hit.thread.as_ref().and_then(|t| {
        t.title
            .strip_prefix("Session ")
            .and_then(|n| n.parse().ok())
    });
    let turn = if hit.kind == "summary" {
        None
    } else {
        hit.source_external_ids.first().cloned()
    };
    (turn, session)
}

#[derive(Default, Clone)]
struct Score {
    n: f64,
    cells: HashMap<String, f64>,
}

impl Score {
    fn add(&mut self, q: &Question, hits: &[RecallHit]) {
        self.n += 1.0;
        let marks: Vec<(Option<String>, Option<u32>)> =
            hits.iter().map(hit_turn_and_session).collect();
        for k in KS
            .iter()
            .chain(ALL_KS.iter())
            .copied()
            .collect::<BTreeSet<_>>()
        {
            let top = &marks[..k.min(marks.len())];
            let turns: BTreeSet<&String> = top.iter().filter_map(|(t, _)| t.as_ref()).collect();
            let sessions: BTreeSet<u32> = top.iter().filter_map(|(_, s)| *s).collect();
            let any_t = q.turns.iter().any(|t| turns.contains(t));
            let all_t = q.turns.iter().all(|t| turns.contains(t));
            let any_s = q.sessions.iter().any(|s| sessions.contains(s));
            let all_s = q.sessions.iter().all(|s| sessions.contains(s));
            if KS.contains(&k) {
                *self.cells.entry(format!("turn any@{k}")).or_default() += any_t as u8 as f64;
                *self.cells.entry(format!("session any@{k}")).or_default() += any_s as u8 as f64;
            }
            if ALL_KS.contains(&k) {
                *self.cells.entry(format!("turn all@{k}")).or_default() += all_t as u8 as f64;
                *self.cells.entry(format!("session all@{k}")).or_default() += all_s as u8 as f64;
            }
        }
    }

    fn row(&self, label: &str) -> String {
        let cols = ["any@1", "any@5", "any@10", "all@5", "all@10"];
        let mut out = format!("| {label} | {} ", self.n as u64);
        for level in ["turn", "session"] {
            for c in cols {
                let v = self
                    .cells
                    .get(&format!("{level} {c}"))
                    .copied()
                    .unwrap_or(0.0)
                    / self.n.max(1.0);
                out.push_str(&format!("| {v:.3} "));
            }
        }
        out.push('|');
        out
    }
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
    let path = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .or_else(|| std::env::var("HELM_LOCOMO").ok())
        .unwrap_or_else(|| {
            // The benchmark data sits beside the repository, in `shared/`.
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/bench/locomo/locomo-dev.json"
            )
            .to_string()
        });
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    let dir = tempfile::tempdir()?;
    let options = helm_cli_defaults(dir.path().join("data"));
    let (helm, report) = Helm::init(options, InitOptions::default()).await?;
    println!(
        "LoCoMo retrieval, {} ({}), embedder: {}",
        path,
        data.as_array().map(|a| a.len()).unwrap_or(0),
        helm.embedding_model().unwrap_or("none (words only)")
    );

    let mut total = Score::default();
    let mut by_category: HashMap<u64, Score> = HashMap::new();
    let mut latencies = Vec::new();
    for sample in data.as_array().into_iter().flatten() {
        let id = sample["sample_id"]
            .as_str()
            .unwrap_or("sample")
            .to_lowercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
        let (jsonl, questions) = to_jsonl(sample)?;
        helm.create_channel(&report.captain, &id, "A LoCoMo conversation.")
            .await?;
        let channel: ChannelRef = id.parse()?;
        let started = Instant::now();
        let imported = helm
            .import_history(
                &report.captain,
                &channel,
                std::io::Cursor::new(jsonl.into_bytes()),
            )
            .await?;
        let import_time = started.elapsed();
        let embedded_at = Instant::now();
        let embedded = helm.embed_backlog(Some(&channel), |_, _| {}).await?;
        print!(
            "{id}: {} threads, {} messages, {} memory records imported in {:.0} ms; {embedded} embedded in {:.1} s; ",
            imported.threads,
            imported.messages,
            imported.memories,
            import_time.as_secs_f64() * 1e3,
            embedded_at.elapsed().as_secs_f64()
        );
        std::io::stdout().flush()?;
        for q in &questions {
            let t = Instant::now();
            let hits = helm
                .recall(&channel, RecallQuery::new(q.text.clone()))
                .await?;
            latencies.push(t.elapsed());
            total.add(q, &hits);
            by_category.entry(q.category).or_default().add(q, &hits);
        }
        println!("{} questions", questions.len());
    }
    latencies.sort();
    println!();
    println!(
        "| questions | n | turn any@1 | turn any@5 | turn any@10 | turn all@5 | turn all@10 | session any@1 | session any@5 | session any@10 | session all@5 | session all@10 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for cat in [1u64, 2, 3, 4] {
        if let Some(s) = by_category.get(&cat) {
            println!("{}", s.row(&format!("category {cat}")));
        }
    }
    println!("{}", total.row("all"));
    println!(
        "\nrecall latency over {} queries: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        latencies.len(),
        pct(&latencies, 0.5),
        pct(&latencies, 0.95),
        pct(&latencies, 0.99)
    );
    Ok(())
}

/// The options `1helm` itself uses for a data directory, so the figures are
/// those of the default configuration.
fn helm_cli_defaults(data: std::path::PathBuf) -> HelmOptions {
    let mut options = HelmOptions::new(&data);
    options.embedder = helm_core::memory::embed::local_embedder(&data).unwrap_or(None);
    options
}
