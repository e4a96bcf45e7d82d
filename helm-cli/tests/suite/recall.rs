//! Recall as the README shows it, with the local model `scripts/test`
//! fetches: in a channel where every request names its agent, the word
//! they all share does not decide what comes first.

use super::kit::{Cli, path_str};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

/// A planning thread in which every request names `@launch-agent`, so
/// "launch" is in every message (each is searched with the one before it).
const HISTORY: &[(&str, &str)] = &[
    ("Ada", "@launch-agent draft the launch plan in plan.md"),
    (
        "launch-agent",
        "Here is the launch plan in plan.md: beta on the 3rd, press on the 10th.",
    ),
    (
        "Bob",
        "@launch-agent can we move the launch beta a day later?",
    ),
    ("launch-agent", "Yes: the launch beta moves to the 4th."),
    ("Ada", "@launch-agent who handles the launch press kit?"),
    ("launch-agent", "Bob handles the launch press kit."),
    (
        "Ada",
        "@launch-agent what budget do we have for the launch party?",
    ),
    ("launch-agent", "The launch party budget is 2000 EUR."),
];

const DECISION: &str = "Launch is on 12 March.";

#[test]
fn a_word_every_message_holds_does_not_outrank_the_answer() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    let create = cli.run(&["channel", "create", "launch", "--purpose", PURPOSE])?;
    assert_eq!(create.code, 0, "{}", create.stderr);
    let mut history = String::from(
        r#"{"type":"thread","id":"plan","title":"Launch plan","opened_at":"2026-11-02T09:00:00Z"}"#,
    );
    for (i, (author, text)) in HISTORY.iter().enumerate() {
        let line = serde_json::json!({
            "type": "message", "thread": "plan", "external_id": format!("plan-{i}"),
            "author": author, "text": text, "at": format!("2026-11-02T09:{i:02}:00Z"),
        });
        history.push('\n');
        history.push_str(&line.to_string());
    }
    let file = cli.dir.path().join("history.jsonl");
    std::fs::write(&file, history)?;
    let import = cli.run(&["import", "launch", path_str(&file)?])?;
    assert_eq!(import.code, 0, "{}", import.stderr);
    let add = cli.run(&["memory", "add", "launch", "--kind", "decision", DECISION])?;
    assert_eq!(add.code, 0, "{}", add.stderr);

    let first = |question: &str, env: &[(&str, &str)]| -> anyhow::Result<String> {
        let run = cli.run_with_env(&["--json", "recall", "launch", question], env)?;
        assert_eq!(run.code, 0, "{}", run.stderr);
        let hits = run.json()?;
        Ok(hits[0]["content"].as_str().unwrap_or_default().to_owned())
    };
    // By meaning, as the README asks it: every item matches "launch", so
    // the word list says nothing and the decision's meaning decides.
    // Required, so a missing model fails here saying so.
    let meaning = [("HELM_EMBEDDER", "required")];
    for question in ["when do we launch?", "what is the launch date?"] {
        assert_eq!(first(question, &meaning)?, DECISION, "{question}");
    }
    // A rarer word still counts.
    assert_eq!(
        first("who handles the press kit?", &meaning)?,
        "Bob handles the launch press kit."
    );
    // By words only, the common word's matches are all there is: recall
    // still answers with them rather than with nothing.
    let words = first("when do we launch?", &[("HELM_EMBEDDER", "off")])?;
    assert!(!words.is_empty(), "words only found nothing");
    Ok(())
}
