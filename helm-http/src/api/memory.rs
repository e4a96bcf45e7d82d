//! Mirrors of helm-core's memory records, recall hits, import reports and
//! session summaries, and the requests of the memory routes.

use helm_core::memory::import as imp;
use helm_core::memory::recall as rc;
use helm_core::model as m;
use helm_core::runtime::summary as sm;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::enums::*;

/// One piece of channel-owned knowledge, with its provenance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MemoryItem {
    /// Its id.
    pub id: i64,
    /// The owning channel.
    pub channel_id: i64,
    /// The thread it came from, if any.
    pub thread_id: Option<i64>,
    /// What kind of knowledge it is.
    pub kind: MemoryKind,
    /// Its text.
    pub content: String,
    /// Where it came from.
    pub source: MemorySource,
    /// The message it came from, if any.
    pub source_message_id: Option<i64>,
    /// Who authored it.
    pub author_type: AuthorType,
    /// The author's name or handle, when known.
    pub author_name: Option<String>,
    /// How widely it applies.
    pub scope: MemoryScope,
    /// Current, superseded or forgotten.
    pub status: MemoryStatus,
    /// The record that replaced it, when superseded.
    pub superseded_by: Option<i64>,
    /// For facts, how sure the author was (0 to 1).
    pub confidence: Option<f64>,
    /// Pinned records are always offered to the agent.
    pub pinned: bool,
    /// When it was recorded.
    pub created: Timestamp,
    /// Who forgot it (a person's name), while it is forgotten; null for
    /// records forgotten before Helm kept this.
    pub forgotten_by: Option<String>,
    /// When it was forgotten, while it is forgotten.
    pub forgotten_at: Option<Timestamp>,
}

impl From<m::MemoryItem> for MemoryItem {
    fn from(i: m::MemoryItem) -> Self {
        MemoryItem {
            id: i.id.0,
            channel_id: i.channel_id.0,
            thread_id: i.thread_id.map(|t| t.0),
            kind: i.kind.into(),
            content: i.content,
            source: i.source.into(),
            source_message_id: i.source_message_id.map(|m| m.0),
            author_type: i.author_type.into(),
            author_name: i.author_name,
            scope: i.scope.into(),
            status: i.status.into(),
            superseded_by: i.superseded_by.map(|s| s.0),
            confidence: i.confidence,
            pinned: i.pinned,
            created: i.created,
            forgotten_by: i.forgotten_by,
            forgotten_at: i.forgotten_at,
        }
    }
}

/// The thread a recall hit belongs to.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HitThread {
    /// Its id.
    pub id: i64,
    /// Its title.
    pub title: String,
}

/// One recalled item, with its provenance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecallHit {
    /// `message`, or the memory kind (`summary`, `decision`, `fact`, …).
    pub kind: String,
    /// The message's or the record's id.
    pub id: i64,
    /// The fused score (higher is better; comparable within one recall).
    pub score: f64,
    /// The text.
    pub content: String,
    /// The channel.
    pub channel_id: i64,
    /// The thread it belongs to.
    pub thread: Option<HitThread>,
    /// Who wrote it.
    pub author: Option<String>,
    /// When.
    pub created: Timestamp,
    /// A record's status (current, or superseded when asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<MemoryStatus>,
    /// The messages it came from.
    pub source_message_ids: Vec<i64>,
    /// Those messages' external ids, where they have one (imports).
    pub source_external_ids: Vec<String>,
}

impl From<rc::RecallHit> for RecallHit {
    fn from(h: rc::RecallHit) -> Self {
        RecallHit {
            kind: h.kind,
            id: h.id,
            score: h.score,
            content: h.content,
            channel_id: h.channel_id.0,
            thread: h.thread.map(|t| HitThread {
                id: t.id.0,
                title: t.title,
            }),
            author: h.author,
            created: h.created,
            status: h.status.map(Into::into),
            source_message_ids: h.source_message_ids.into_iter().map(|m| m.0).collect(),
            source_external_ids: h.source_external_ids,
        }
    }
}

/// What an import wrote.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ImportReport {
    /// Threads created.
    pub threads: usize,
    /// Messages created.
    pub messages: usize,
    /// Memory records created.
    pub memories: usize,
}

impl From<imp::ImportReport> for ImportReport {
    fn from(r: imp::ImportReport) -> Self {
        ImportReport {
            threads: r.threads,
            messages: r.messages,
            memories: r.memories,
        }
    }
}

/// A session summary.
#[derive(Debug, Clone, Serialize, ToSchema)]
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

/// A summary that was just written.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WrittenSummary {
    /// The thread.
    pub thread_id: i64,
    /// The summary.
    pub summary: SessionSummary,
    /// The provider that wrote it.
    pub provider: String,
    /// The model that wrote it.
    pub model: String,
    /// The memory record it became (kind `summary`).
    pub memory_id: i64,
}

impl From<sm::WrittenSummary> for WrittenSummary {
    fn from(w: sm::WrittenSummary) -> Self {
        WrittenSummary {
            thread_id: w.thread_id.0,
            summary: SessionSummary {
                goal: w.summary.goal,
                work_done: w.summary.work_done,
                result: w.summary.result,
                open_items: w.summary.open_items,
                decisions: w.summary.decisions,
            },
            provider: w.provider,
            model: w.model,
            memory_id: w.memory_id.0,
        }
    }
}

/// `?kind=&all=&thread=&limit=&before=`: which records to list, a page at
/// a time.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MemoryQuery {
    /// Only this kind: `summary`, `decision`, `fact`, `preference` or `artifact_ref`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Superseded and forgotten records too.
    #[serde(default)]
    pub all: Option<bool>,
    /// Only this thread's.
    #[serde(default)]
    #[param(minimum = 1)]
    pub thread: Option<i64>,
    /// At most this many, newest first (1–500; default 100).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
    /// The next page: the id of the last record of the page before (one
    /// of this channel's); the records listed after it, in the same order
    /// (pinned first, then newest first). A page shorter than `limit` is
    /// the last.
    #[serde(default)]
    #[param(minimum = 1)]
    pub before: Option<i64>,
}

/// `?q=&limit=&superseded=`: a recall.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecallQuery {
    /// The question, in natural language.
    pub q: String,
    /// At most this many hits (1–50; default 10).
    #[serde(default)]
    #[param(minimum = 1, maximum = 50)]
    pub limit: Option<u32>,
    /// Include superseded records.
    #[serde(default)]
    pub superseded: Option<bool>,
}

/// Adding a memory record by hand.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMemoryRequest {
    /// `decision`, `fact`, `preference` or `artifact_ref` (summaries are
    /// written by summarising a thread).
    pub kind: String,
    /// Its text (at most 8 KiB).
    pub content: String,
    /// The thread it belongs to.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// `thread`, `channel` (default) or `workspace`.
    #[serde(default)]
    pub scope: Option<String>,
}

/// Editing a memory record (the old one is kept, superseded).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditMemoryRequest {
    /// The new text.
    pub content: String,
}
