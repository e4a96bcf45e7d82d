//! Session summaries: a structured account of a thread (goal, work done,
//! result, open items, decisions), written by the model that serves the
//! channel when a thread is resolved, after long inactivity, when its
//! transcript no longer fits a turn's context, or on request. It becomes the
//! thread's rolling summary and a `summary` memory record of the thread, so
//! later threads recall it. Without a model there is no summary: Helm says so
//! and never invents one.
//!
//! A long thread's summary stands in for the messages its turns' contexts
//! leave out. It is refreshed only at a material boundary: once at least
//! [`RuntimeOptions::summary_refresh_messages`](super::RuntimeOptions)
//! messages have fallen out of the context since the summary last covered
//! them. Each turn adds about two messages, so with the default of 20 a long
//! thread pays one summary call per ten turns, never one per turn.

use serde::{Deserialize, Serialize};

use super::Runtime;
use super::context::estimate_tokens;
use crate::error::{Error, ProviderFailure, Result};
use crate::model::{Author, MessageId, ThreadId};
use crate::provider::{ChatMessage, ChatRequest};
use crate::store::{ChannelRecord, ThreadTail};

/// How many messages may fall out of a turn's context, uncovered by the
/// summary, before the summary is refreshed.
pub const SUMMARY_REFRESH_MESSAGES: usize = 20;

/// Whether a turn whose context was read as `tail` refreshes the thread's
/// summary first: only when at least `refresh_after` (at least 1) of the
/// messages left out are newer than what the summary covers.
pub fn refresh_due(tail: &ThreadTail, refresh_after: usize) -> bool {
    tail.uncovered >= refresh_after.max(1)
}

/// The transcript budget of the summarising request.
const SUMMARY_INPUT_TOKENS: usize = 12_000;

/// Why a summary is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryTrigger {
    /// The thread was resolved.
    Resolved,
    /// Nobody wrote in it for a long time.
    Inactivity,
    /// Its transcript outgrew a turn's context.
    Compaction,
    /// Someone asked for one.
    Request,
}

impl SummaryTrigger {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryTrigger::Resolved => "resolved",
            SummaryTrigger::Inactivity => "inactivity",
            SummaryTrigger::Compaction => "compaction",
            SummaryTrigger::Request => "request",
        }
    }
}

/// A structured session summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionSummary {
    /// What the session set out to do.
    pub goal: String,
    /// What was done.
    pub work_done: String,
    /// Where it ended up.
    pub result: String,
    /// What is still open.
    pub open_items: Vec<String>,
    /// What was decided.
    pub decisions: Vec<String>,
}

impl SessionSummary {
    /// The summary as one text, for people, for recall and for context.
    pub fn render(&self) -> String {
        let mut out = format!(
            "Goal: {}\nWork done: {}\nResult: {}",
            self.goal, self.work_done, self.result
        );
        if !self.decisions.is_empty() {
            out.push_str(&format!("\nDecisions: {}", self.decisions.join("; ")));
        }
        if !self.open_items.is_empty() {
            out.push_str(&format!("\nOpen items: {}", self.open_items.join("; ")));
        }
        out
    }

    /// Reads the model's answer: a JSON object, possibly wrapped in prose or
    /// a code fence.
    pub fn parse(text: &str) -> Option<SessionSummary> {
        let start = text.find('{')?;
        let end = text.rfind('}')?;
        let mut summary: SessionSummary = serde_json::from_str(text.get(start..=end)?).ok()?;
        summary.open_items.retain(|s| !s.trim().is_empty());
        summary.decisions.retain(|s| !s.trim().is_empty());
        (!summary.goal.trim().is_empty() || !summary.result.trim().is_empty()).then_some(summary)
    }
}

/// A written summary, with who wrote it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WrittenSummary {
    /// The thread.
    pub thread_id: ThreadId,
    /// The summary.
    pub summary: SessionSummary,
    /// Why it was written.
    pub trigger: SummaryTrigger,
    /// The provider that wrote it.
    pub provider: String,
    /// The model that wrote it.
    pub model: String,
    /// The memory record it became.
    pub memory_id: crate::model::MemoryId,
}

const INSTRUCTIONS: &str = "You write the durable record of a work session for a team's \
    long-term memory. Read the thread and answer with one JSON object and nothing else: \
    {\"goal\": \"...\", \"work_done\": \"...\", \"result\": \"...\", \"open_items\": [\"...\"], \
    \"decisions\": [\"...\"]}. Be specific: names, numbers, dates, file paths. Decisions are \
    things that were settled, each a self-contained sentence. Leave a list empty rather than \
    inventing.";

impl Runtime {
    /// Writes the summary of `thread` with the model that serves it now.
    pub(crate) async fn summarize(
        &self,
        thread: ThreadId,
        trigger: SummaryTrigger,
    ) -> Result<WrittenSummary> {
        self.summarize_through(thread, trigger, None).await
    }

    /// Writes the summary of `thread` up to and including `through` (the
    /// whole thread when `None`): the previous summary carried forward and
    /// the newest messages in range that fit.
    pub(crate) async fn summarize_through(
        &self,
        thread: ThreadId,
        trigger: SummaryTrigger,
        through: Option<MessageId>,
    ) -> Result<WrittenSummary> {
        let t = self.store.thread(thread).await?;
        let record: ChannelRecord = self
            .store
            .channel(&crate::model::ChannelRef::Id(t.channel_id))
            .await?;
        let tail = self
            .store
            .thread_tail(thread, through, SUMMARY_INPUT_TOKENS)
            .await?;
        let last = tail.newest().ok_or_else(|| {
            Error::invalid(
                "thread",
                format!("thread {thread} has no messages to summarise"),
            )
        })?;
        let (provider, choice) = self.model_for(t.channel_id, Some(thread)).await?;

        // The newest messages that fit, oldest first.
        let messages: Vec<&crate::model::Message> = tail.messages().collect();
        let mut lines: Vec<String> = Vec::new();
        let mut budget = SUMMARY_INPUT_TOKENS;
        for m in messages.iter().rev() {
            if m.content.trim().is_empty() || m.author == Author::System {
                continue;
            }
            let line = format!("{}: {}", m.author.display(), m.content);
            let cost = estimate_tokens(&line);
            if cost > budget {
                break;
            }
            budget -= cost;
            lines.push(line);
        }
        lines.reverse();
        // The previous summary stands for what is older than these lines.
        let earlier = if t.summary.trim().is_empty() {
            String::new()
        } else {
            format!(
                "The summary so far, of earlier messages:\n{}\n\n",
                t.summary.trim()
            )
        };
        let transcript = format!(
            "Channel {} ({}). Thread {} \"{}\".\n\n{earlier}{}",
            record.channel.name,
            record.channel.purpose,
            t.id,
            t.title,
            lines.join("\n\n")
        );
        let completion = provider
            .complete(ChatRequest {
                model: choice.model.clone().unwrap_or_default(),
                system: INSTRUCTIONS.to_string(),
                messages: vec![ChatMessage::User {
                    content: transcript,
                }]
                .into(),
                tools: Vec::new(),
                max_tokens: Some(1200),
                temperature: Some(0.0),
            })
            .await?;
        let summary = SessionSummary::parse(&completion.text).ok_or_else(|| {
            Error::provider(
                &choice.provider,
                ProviderFailure::MalformedStream,
                "the model did not answer with a summary in the expected JSON form; no summary was stored",
            )
        })?;
        let memory_id = self
            .store
            .put_thread_summary(crate::store::NewThreadSummary {
                thread_id: thread,
                summary: summary.clone(),
                trigger,
                provider: choice.provider.clone(),
                model: choice.model.clone().unwrap_or_default(),
                last_message_id: last,
                author: record.agent.handle.to_string(),
            })
            .await?;
        Ok(WrittenSummary {
            thread_id: thread,
            summary,
            trigger,
            provider: choice.provider,
            model: choice.model.unwrap_or_default(),
            memory_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_read_from_prose_and_fences() {
        let text = "Here it is:\n```json\n{\"goal\": \"Plan the launch\", \"work_done\": \"Wrote plan.md\", \
                    \"result\": \"Plan ready\", \"decisions\": [\"Beta on March 3\", \"\"]}\n```";
        let s = SessionSummary::parse(text);
        assert_eq!(
            s.as_ref().map(|s| s.decisions.clone()),
            Some(vec!["Beta on March 3".to_string()])
        );
        assert!(
            s.map(|s| s.render())
                .unwrap_or_default()
                .contains("Decisions: Beta on March 3")
        );
        assert_eq!(SessionSummary::parse("no json here"), None);
        assert_eq!(SessionSummary::parse("{\"goal\": \"\"}"), None);
    }
}
