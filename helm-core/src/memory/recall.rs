//! Recall: one query over a channel's memory records and message history.
//!
//! Words always (FTS5 BM25 over each item and the message before it);
//! meaning too when an embedder is configured; fused by reciprocal rank
//! (k = 5) with a fact counting for the message it came from. Items of
//! threads opened on a date the query names, and items by a person the query
//! names, get a boost. The fifth hit goes to the best thread not yet covered,
//! so one long thread cannot crowd out every other session. Superseded
//! records come back only on request, forgotten ones never.
//!
//! The design and its constants come from measurements on LoCoMo (see
//! `docs/memory.md`).

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{
    ChannelId, MemoryId, MemoryKind, MemoryScope, MemoryStatus, MessageId, ThreadId,
};

/// The reciprocal-rank constant: small, so the top of each list dominates.
pub const RRF_K: f64 = 5.0;
/// How many candidates each list contributes.
pub const DEPTH: usize = 100;
/// Facts rank a little below the messages they summarise in the word list.
const FACT_WEIGHT: f64 = 0.8;
/// Boosts, in units of the best possible single-list score `1/(k+1)`.
const DATE_BOOST: f64 = 1.0;
const SPEAKER_BOOST: f64 = 0.5;
const SPEAKER_BOOST_WORDS_ONLY: f64 = 1.0;
/// How much a thread's summary rank adds to the thread's score.
const SUMMARY_WEIGHT: f64 = 0.5;
/// The position (1-based) kept for the best thread not yet covered.
const FILL_POSITION: usize = 5;
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

impl CandidateItem {
    fn is_summary(&self) -> bool {
        self.kind == Some(MemoryKind::Summary)
    }

    /// What fusion groups by: the message a record came from, else itself.
    fn fusion_key(&self) -> i64 {
        match self.turn {
            Some(m) => ItemKey::message(m).0,
            None => self.key.0,
        }
    }
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
}

impl RecallQuery {
    /// A query for the default 10 hits.
    pub fn new(text: impl Into<String>) -> Self {
        RecallQuery {
            text: text.into(),
            limit: 10,
            include_superseded: false,
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

/// The ranked lists fusion works from.
#[derive(Debug, Default)]
pub struct Lists {
    /// Word matches, best first, with their BM25 scores.
    pub lexical: Vec<(ItemKey, f64)>,
    /// Meaning matches, best first.
    pub dense: Vec<ItemKey>,
    /// Threads opened on a date the query names.
    pub date_threads: HashSet<ThreadId>,
    /// The one person the query names, if exactly one.
    pub speaker: Option<String>,
}

/// A fused candidate before it becomes a hit.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// The item shown.
    pub item: CandidateItem,
    /// Its fused score.
    pub score: f64,
}

/// Fuses the lists into at most `limit` ranked items. `items` describes
/// every key in the lists; unknown keys and records recall may not return
/// (forgotten, or superseded unless asked for) are dropped first.
pub fn fuse(
    lists: &Lists,
    items: &HashMap<ItemKey, CandidateItem>,
    query: &RecallQuery,
) -> Vec<Ranked> {
    let k = RRF_K;
    let allowed = |key: &ItemKey| {
        items.get(key).filter(|i| match i.status {
            None | Some(MemoryStatus::Current) => true,
            Some(MemoryStatus::Superseded) => query.include_superseded,
            Some(MemoryStatus::Forgotten) => false,
        })
    };

    // The word list without summaries, facts weighted down, re-sorted.
    let mut lexical: Vec<(&CandidateItem, f64)> = lists
        .lexical
        .iter()
        .filter_map(|(key, score)| allowed(key).map(|i| (i, *score)))
        .filter(|(i, _)| !i.is_summary())
        .map(|(i, s)| {
            (
                i,
                if i.kind == Some(MemoryKind::Fact) {
                    s * FACT_WEIGHT
                } else {
                    s
                },
            )
        })
        .collect();
    lexical.sort_by(|a, b| b.1.total_cmp(&a.1));
    let lexical_summaries: Vec<&CandidateItem> = lists
        .lexical
        .iter()
        .filter_map(|(key, _)| allowed(key))
        .filter(|i| i.is_summary())
        .collect();
    let dense: Vec<&CandidateItem> = lists
        .dense
        .iter()
        .filter_map(&allowed)
        .filter(|i| !i.is_summary())
        .take(DEPTH)
        .collect();
    let dense_summaries: Vec<&CandidateItem> = lists
        .dense
        .iter()
        .filter_map(&allowed)
        .filter(|i| i.is_summary())
        .collect();

    // Reciprocal-rank fusion keyed by message: a record and its source
    // message are one hit, shown as the record (the curated form) when
    // there is one, else as the message.
    let mut fused: HashMap<i64, Ranked> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    let lists_used = [
        lexical.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        dense.clone(),
    ];
    for list in &lists_used {
        for (rank, item) in list.iter().enumerate() {
            let key = item.fusion_key();
            let add = 1.0 / (k + rank as f64 + 1.0);
            match fused.get_mut(&key) {
                Some(r) => {
                    r.score += add;
                    if r.item.kind.is_none() && item.kind.is_some() {
                        r.item = (*item).clone();
                    }
                }
                None => {
                    fused.insert(
                        key,
                        Ranked {
                            item: (*item).clone(),
                            score: add,
                        },
                    );
                    order.push(key);
                }
            }
        }
    }

    let unit = 1.0 / (k + 1.0);
    let speaker_boost = if lists.dense.is_empty() {
        SPEAKER_BOOST_WORDS_ONLY
    } else {
        SPEAKER_BOOST
    };
    for ranked in fused.values_mut() {
        if ranked
            .item
            .thread_id
            .is_some_and(|t| lists.date_threads.contains(&t))
        {
            ranked.score += DATE_BOOST * unit;
        }
        if let (Some(speaker), Some(author)) = (&lists.speaker, &ranked.item.author)
            && author.eq_ignore_ascii_case(speaker)
        {
            ranked.score += speaker_boost * unit;
        }
    }

    let mut ranked: Vec<Ranked> = order.iter().filter_map(|k| fused.remove(k)).collect();
    // Best first; newer first among equals.
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.item.created.cmp(&a.item.created))
    });

    // Thread scores: the best item in the thread, plus its summary's ranks.
    let mut thread_score: HashMap<ThreadId, f64> = HashMap::new();
    for r in &ranked {
        if let Some(t) = r.item.thread_id {
            let s = thread_score.entry(t).or_insert(0.0);
            *s = s.max(r.score);
        }
    }
    let mut thread_summary: HashMap<ThreadId, &CandidateItem> = HashMap::new();
    for list in [&lexical_summaries, &dense_summaries] {
        for (rank, summary) in list.iter().enumerate() {
            if let Some(t) = summary.thread_id {
                *thread_score.entry(t).or_insert(0.0) += SUMMARY_WEIGHT / (k + rank as f64 + 1.0);
                thread_summary.entry(t).or_insert(summary);
            }
        }
    }

    let limit = query.limit.clamp(1, MAX_LIMIT);
    let mut out: Vec<Ranked> = Vec::with_capacity(limit);
    let mut rest = ranked.into_iter();
    while out.len() < limit.min(FILL_POSITION - 1) {
        match rest.next() {
            Some(r) => out.push(r),
            None => break,
        }
    }
    let mut remaining: Vec<Ranked> = rest.collect();
    if out.len() == FILL_POSITION - 1 && limit >= FILL_POSITION {
        let covered: HashSet<ThreadId> = out.iter().filter_map(|r| r.item.thread_id).collect();
        let best_uncovered = thread_score
            .iter()
            .filter(|(t, _)| !covered.contains(t))
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(t, s)| (*t, *s));
        if let Some((thread, score)) = best_uncovered {
            if let Some(pos) = remaining
                .iter()
                .position(|r| r.item.thread_id == Some(thread))
            {
                out.push(remaining.remove(pos));
            } else if let Some(summary) = thread_summary.get(&thread) {
                out.push(Ranked {
                    item: (*summary).clone(),
                    score,
                });
            }
        }
    }
    for r in remaining {
        if out.len() >= limit {
            break;
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(
        key: i64,
        thread: i64,
        kind: Option<MemoryKind>,
        turn: Option<i64>,
        author: &str,
    ) -> CandidateItem {
        CandidateItem {
            key: ItemKey(key),
            channel_id: ChannelId(1),
            thread_id: Some(ThreadId(thread)),
            kind,
            content: format!("item {key}"),
            created: Timestamp::UNIX_EPOCH,
            status: kind.map(|_| MemoryStatus::Current),
            scope: None,
            turn: turn.map(MessageId),
            source_external_id: None,
            author: Some(author.into()),
        }
    }

    fn map(items: Vec<CandidateItem>) -> HashMap<ItemKey, CandidateItem> {
        items.into_iter().map(|i| (i.key, i)).collect()
    }

    #[test]
    fn a_fact_and_its_message_are_one_hit() {
        let items = map(vec![
            item(2, 1, None, Some(1), "ann"),
            item(3, 1, Some(MemoryKind::Fact), Some(1), "ann"),
            item(4, 1, None, Some(2), "bob"),
        ]);
        let lists = Lists {
            lexical: vec![(ItemKey(3), 9.0), (ItemKey(4), 5.0), (ItemKey(2), 4.0)],
            ..Lists::default()
        };
        let hits = fuse(&lists, &items, &RecallQuery::new("q"));
        assert_eq!(hits.len(), 2);
        assert_eq!(
            hits[0].item.key,
            ItemKey(3),
            "the fact was seen first and stands for the turn"
        );
    }

    #[test]
    fn the_fifth_place_goes_to_an_uncovered_thread() {
        let mut all = Vec::new();
        let mut lexical = Vec::new();
        for n in 0..6 {
            all.push(item(2 * (n + 1), 1, None, Some(n + 1), "ann"));
            lexical.push((ItemKey(2 * (n + 1)), 10.0 - n as f64));
        }
        all.push(item(100, 2, None, Some(50), "bob"));
        lexical.push((ItemKey(100), 1.0));
        let lists = Lists {
            lexical,
            ..Lists::default()
        };
        let hits = fuse(&lists, &map(all), &RecallQuery::new("q"));
        let threads: Vec<i64> = hits
            .iter()
            .filter_map(|h| h.item.thread_id.map(|t| t.0))
            .collect();
        assert_eq!(&threads[..5], [1, 1, 1, 1, 2]);
    }

    #[test]
    fn superseded_only_on_request_and_forgotten_never() {
        let mut old = item(5, 1, Some(MemoryKind::Decision), None, "ann");
        old.status = Some(MemoryStatus::Superseded);
        let mut gone = item(7, 1, Some(MemoryKind::Fact), None, "ann");
        gone.status = Some(MemoryStatus::Forgotten);
        let items = map(vec![old, gone]);
        let lists = Lists {
            lexical: vec![(ItemKey(5), 3.0), (ItemKey(7), 2.0)],
            ..Lists::default()
        };
        assert!(fuse(&lists, &items, &RecallQuery::new("q")).is_empty());
        let mut q = RecallQuery::new("q");
        q.include_superseded = true;
        let hits = fuse(&lists, &items, &q);
        assert_eq!(
            hits.iter().map(|h| h.item.key).collect::<Vec<_>>(),
            [ItemKey(5)]
        );
    }

    #[test]
    fn named_people_and_dates_lift_their_items() {
        let items = map(vec![
            item(2, 1, None, Some(1), "ann"),
            item(4, 2, None, Some(2), "bob"),
        ]);
        let mut lists = Lists {
            lexical: vec![(ItemKey(2), 5.0), (ItemKey(4), 4.9)],
            ..Lists::default()
        };
        lists.speaker = Some("Bob".into());
        assert_eq!(
            fuse(&lists, &items, &RecallQuery::new("q"))[0].item.key,
            ItemKey(4)
        );
        lists.speaker = None;
        lists.date_threads.insert(ThreadId(2));
        assert_eq!(
            fuse(&lists, &items, &RecallQuery::new("q"))[0].item.key,
            ItemKey(4)
        );
    }
}
