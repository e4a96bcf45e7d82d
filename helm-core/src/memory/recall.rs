//! Recall: one query over a channel's memory records and message history.
//!
//! The types a recall speaks in: items ([`ItemKey`], [`CandidateItem`]),
//! the request ([`RecallQuery`]) and the hits ([`RecallHit`]) with their
//! provenance. The engine (`engine`) gathers candidates by words and by
//! meaning; `fusion` ranks them. Superseded records come back only on
//! request, forgotten ones never.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::fusion::RecallTuning;
use crate::model::{
    ChannelId, MemoryId, MemoryKind, MemoryScope, MemoryStatus, MessageId, ThreadId,
};

/// How many candidates each list contributes.
pub const DEPTH: usize = 100;
/// The most rows recall's word search walks in one large channel (of more
/// than four times this many rows) before it narrows to the rows holding
/// the question's rarer words: asked about words common in it (a name, a
/// common verb), such a channel would otherwise have tens of thousands of
/// matches ranked one by one. Smaller channels are always searched exactly.
pub const WORD_WALK: usize = 4096;
/// A word match scoring below this matched only words found in about half
/// of the channel's items or more. Both stores weigh such a word at BM25's
/// floor, 1e-6 (a word in at least half the items has no positive inverse
/// document frequency), so even dozens of them sum to far less, while a
/// word in fewer than half the items weighs more (in a channel of up to a
/// few thousand items, any such word). Where meaning ranks the items, such
/// a match says nothing of them (see `engine`).
pub const COMMON_WORDS_ONLY: f64 = 1e-3;
/// The most hits one recall returns.
pub const MAX_LIMIT: usize = 50;

/// What an FTS row (and an embedding) is: a message or a memory record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ItemKey(pub i64);

impl ItemKey {
    /// The key of a message.
    pub fn message(id: MessageId) -> Self {
        ItemKey(id.0 * 2)
    }

    /// The key of a memory record.
    pub fn memory(id: MemoryId) -> Self {
        ItemKey(id.0 * 2 + 1)
    }

    /// The message, if this is one.
    pub fn message_id(self) -> Option<MessageId> {
        (self.0 % 2 == 0).then_some(MessageId(self.0 / 2))
    }

    /// The memory record, if this is one.
    pub fn memory_id(self) -> Option<MemoryId> {
        (self.0 % 2 == 1).then_some(MemoryId(self.0 / 2))
    }
}

/// A candidate, as the store describes it.
#[derive(Debug, Clone)]
pub struct CandidateItem {
    /// Its key.
    pub key: ItemKey,
    /// Its channel.
    pub channel_id: ChannelId,
    /// Its thread.
    pub thread_id: Option<ThreadId>,
    /// `None` for a message, else the memory record's kind.
    pub kind: Option<MemoryKind>,
    /// Its text.
    pub content: String,
    /// When it was written.
    pub created: Timestamp,
    /// When what it says was said: a message's time, a record's source
    /// message's time, else the record's own.
    pub said_at: Timestamp,
    /// When its thread was opened.
    pub thread_opened: Option<Timestamp>,
    /// Its thread's title (read with the item, so a hit needs no second
    /// read to name its thread).
    pub thread_title: Option<String>,
    /// A memory record's status.
    pub status: Option<MemoryStatus>,
    /// A memory record's scope.
    pub scope: Option<MemoryScope>,
    /// The message it stands for: its own id, or a record's source message.
    pub turn: Option<MessageId>,
    /// The external id of that message (from an imported history).
    pub source_external_id: Option<String>,
    /// Who wrote it (a record's source message's author, when it has one).
    pub author: Option<String>,
}

/// A recall request.
#[derive(Debug, Clone)]
pub struct RecallQuery {
    /// The question, in natural language.
    pub text: String,
    /// At most this many hits (1 to 50).
    pub limit: usize,
    /// Include superseded records.
    pub include_superseded: bool,
    /// The clock relative times ("last week") are read against; `None`: now.
    pub as_of: Option<Timestamp>,
    /// Fusion's constants; `None`: the defaults for the recall mode in use.
    pub tuning: Option<RecallTuning>,
}

impl RecallQuery {
    /// A query for the default 10 hits.
    pub fn new(text: impl Into<String>) -> Self {
        RecallQuery {
            text: text.into(),
            limit: 10,
            include_superseded: false,
            as_of: None,
            tuning: None,
        }
    }
}

/// The thread a hit belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitThread {
    /// Its id.
    pub id: ThreadId,
    /// Its title.
    pub title: String,
}

/// One recalled item, with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub channel_id: ChannelId,
    /// The thread it belongs to.
    pub thread: Option<HitThread>,
    /// Who wrote it.
    pub author: Option<String>,
    /// When.
    pub created: Timestamp,
    /// A record's status (current, or superseded when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MemoryStatus>,
    /// The messages it came from: its own id, a record's source, or for a
    /// summary every message of its thread.
    pub source_message_ids: Vec<MessageId>,
    /// Those messages' external ids, where they have one.
    pub source_external_ids: Vec<String>,
}
