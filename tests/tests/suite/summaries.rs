//! A long thread's summary policy: a turn reads only what fits its budget,
//! the summary is refreshed only once enough has fallen out of the context
//! (one extra model call per ten turns, never one per turn), and what is
//! left out is what the refreshed summary was written from.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use helm_core::model::{ChannelRef, ThreadId, TurnState};
use helm_core::provider::{
    ChatMessage, ChatRequest, EventStream, Provider, Scripted, ScriptedReply,
};
use helm_tests::TestHelm;

/// How the summariser's requests begin.
const SUMMARY_SYSTEM: &str = "You write the durable record of a work session";

/// One model call: whether it wrote a summary, and everything it was sent.
struct Call {
    summary: bool,
    text: String,
}

/// Answers summary requests with a summary and turn requests with a reply,
/// noting every call in order.
#[derive(Default)]
struct Noting {
    calls: Mutex<Vec<Call>>,
}

#[async_trait]
impl Provider for Noting {
    async fn stream(&self, request: ChatRequest) -> helm_core::Result<EventStream> {
        let summary = request.system.starts_with(SUMMARY_SYSTEM);
        let mut text = request.system.clone();
        for m in request.messages.iter() {
            match m {
                ChatMessage::User { content }
                | ChatMessage::Assistant { content, .. }
                | ChatMessage::Tool { content, .. } => {
                    text.push('\n');
                    text.push_str(content);
                }
            }
        }
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(Call { summary, text });
        }
        let answer = Scripted::new();
        answer.push(ScriptedReply::text(if summary {
            "{\"goal\": \"Plan the launch\", \"work_done\": \"Went through the items\", \
             \"result\": \"In progress\"}"
        } else {
            "Noted, that item is handled and filed."
        }));
        answer.stream(request).await
    }
}

#[tokio::test]
async fn a_long_thread_refreshes_its_summary_once_per_ten_turns() -> anyhow::Result<()> {
    // A small budget makes the thread long after a few turns.
    let t = TestHelm::with_options(|o| o.runtime.transcript_budget_tokens = 600).await?;
    let noting = Arc::new(Noting::default());
    t.use_provider("noting", noting.clone()).await?;
    t.helm.start_runtime().await?;
    t.helm
        .create_channel(&t.captain, "launch", "Planning the launch.")
        .await?;
    let ch: ChannelRef = "launch".parse()?;
    let turns = 32;
    let mut thread: Option<ThreadId> = None;
    // Per turn: whether it refreshed the summary first, and its own request.
    let mut refreshed = Vec::new();
    let mut requests = Vec::new();
    let mut summaries = Vec::new();
    for i in 0..turns {
        let before = noting.calls.lock().map(|c| c.len()).unwrap_or(0);
        let posted = t
            .helm
            .post_message(
                &t.captain,
                &ch,
                &format!("@launch-agent please handle item {i:03} of the launch checklist"),
                thread,
            )
            .await?;
        thread = Some(posted.thread.id);
        let turn = t
            .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
            .await?;
        assert_eq!(turn.state, TurnState::Completed);
        let calls = noting.calls.lock().map_err(|_| anyhow::anyhow!("lock"))?;
        let mine = &calls[before..];
        assert_eq!(
            mine.iter().filter(|c| !c.summary).count(),
            1,
            "one turn call in turn {i}"
        );
        let summary = mine.iter().find(|c| c.summary).map(|c| c.text.clone());
        refreshed.push(summary.is_some());
        if let Some(s) = summary {
            summaries.push((i, s));
        }
        requests.push(
            mine.iter()
                .find(|c| !c.summary)
                .map(|c| c.text.clone())
                .unwrap_or_default(),
        );
    }
    let at: Vec<usize> = (0..turns).filter(|&i| refreshed[i]).collect();
    // Twenty messages (ten turns of a question and its answer) fall out of
    // the context between refreshes.
    assert_eq!(at, [20, 30], "turns that refreshed the summary");
    let calls = noting.calls.lock().map(|c| c.len()).unwrap_or(0);
    assert_eq!(calls, turns + at.len());

    for (i, summary) in &summaries {
        let request = &requests[*i];
        // The turn after a refresh works from the summary and the tail…
        assert!(request.contains("Session summary so far"), "{request}");
        assert!(request.contains("left out here for length"), "{request}");
        // …and the items it left out are what the summary was written from.
        let oldest_kept = (1..*i)
            .find(|k| request.contains(&format!("item {k:03} ")))
            .ok_or_else(|| anyhow::anyhow!("no item kept in turn {i}"))?;
        let left_out = format!("item {:03} ", oldest_kept - 1);
        assert!(!request.contains(&left_out), "{request}");
        assert!(summary.contains(&left_out), "turn {i}: {summary}");
        // A refresh after the first carries the previous summary forward.
        if *i != at[0] {
            assert!(summary.contains("The summary so far"), "{summary}");
        }
    }
    Ok(())
}

/// Answers turns, and summary requests with something that is not a summary.
struct NoSummaries;

#[async_trait]
impl Provider for NoSummaries {
    async fn stream(&self, request: ChatRequest) -> helm_core::Result<EventStream> {
        let summary = request.system.starts_with(SUMMARY_SYSTEM);
        let answer = Scripted::new();
        answer.push(ScriptedReply::text(if summary {
            "Sorry, I would rather not."
        } else {
            "Done."
        }));
        answer.stream(request).await
    }
}

#[tokio::test]
async fn a_resolved_thread_whose_summary_fails_says_so_once() -> anyhow::Result<()> {
    let t = TestHelm::with_options(|o| {
        o.runtime.summary_scan_every = std::time::Duration::from_millis(100);
    })
    .await?;
    t.use_provider("stubborn", Arc::new(NoSummaries)).await?;
    t.helm.start_runtime().await?;
    t.helm
        .create_channel(&t.captain, "launch", "Planning the launch.")
        .await?;
    let ch: ChannelRef = "launch".parse()?;
    let posted = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent close the venue item", None)
        .await?;
    t.wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    let thread = posted.thread.id;
    t.helm
        .set_thread_status(&t.captain, thread, helm_core::model::ThreadStatus::Resolved)
        .await?;
    // The people who resolved it were told the summary goes to memory; the
    // thread says it did not, once (the next try is minutes away).
    let said = "The session summary of this thread could not be written yet";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let notes = loop {
        let notes: Vec<String> = t
            .helm
            .thread_messages(thread)
            .await?
            .into_iter()
            .filter(|m| m.content.starts_with(said))
            .map(|m| m.content)
            .collect();
        if !notes.is_empty() || std::time::Instant::now() > deadline {
            break notes;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("Helm tries again in 15 minutes"),
        "{}",
        notes[0]
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let again = t.helm.thread_messages(thread).await?;
    assert_eq!(
        again.iter().filter(|m| m.content.starts_with(said)).count(),
        1
    );
    let status = t.helm.store().thread(thread).await?.status;
    assert_eq!(
        status,
        helm_core::model::ThreadStatus::Resolved,
        "still resolved"
    );
    Ok(())
}
