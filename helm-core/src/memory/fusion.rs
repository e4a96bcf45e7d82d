//! Fusion: from the candidate lists of one query to a ranked list of hits.
//!
//! Pure scoring over what the engine gathered (word matches, meaning
//! matches, the meaning matches of the query moved toward its first hits,
//! the times and the person the query names); it knows nothing of where
//! vectors or words are stored, so the index can change under it.
//!
//! 1. **Reciprocal-rank fusion** keyed by turn: a fact and the message it
//!    came from are one hit, shown as the fact.
//! 2. **Lifts** for items said within a time the query names, and for the
//!    one person it names.
//! 3. **Session pooling**: a thread whose items score well as a group (and
//!    whose summary matches) lifts its items: evidence for one question
//!    tends to sit together in one session. A summary is a hit of its own
//!    only where the words found it and none of its thread's items.
//! 4. **Thread spread**: an item whose thread is already shown above it
//!    needs a clear lead to be placed before one of another thread.
//! 5. **Diversity**: one place near the top goes to the best thread not yet
//!    covered, so one long thread cannot crowd out every other session.
//!
//! Every constant is a field of [`RecallTuning`]. Held out on LoCoMo (leave
//! one conversation out, `docs/memory.md`), pooling raises the turn level
//! and lowers the session level, and the spread gives most of that back;
//! expansion raises neither, so it is off by default.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::recall::{CandidateItem, ItemKey, MAX_LIMIT, RecallQuery};
use super::when::TimeSpan;
use crate::model::{MemoryKind, MemoryStatus, ThreadId};

/// The constants of fusion. [`RecallTuning::meaning`] and
/// [`RecallTuning::words`] are the defaults with and without an embedder.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecallTuning {
    /// The reciprocal-rank constant: small, so the top of each list dominates.
    pub rrf_k: f64,
    /// The weight of the meaning list (the word list weighs 1).
    pub dense_weight: f64,
    /// The weight of the expanded meaning list (0: no expansion, and no
    /// second scan).
    pub expansion_weight: f64,
    /// How a fact's rank counts against its message's in the word list.
    pub fact_weight: f64,
    /// The lift of an item said within a time the query names, in units of
    /// the best single-list score `1/(k+1)`.
    pub date_boost: f64,
    /// The lift of an item by the one person the query names, in the same units.
    pub speaker_boost: f64,
    /// How much of its thread's pooled score each item gets (0: none); an
    /// item outside every thread is pooled alone.
    pub session_weight: f64,
    /// How the second and third best items of a thread add to its pooled
    /// score (0: the best alone).
    pub pool_decay: f64,
    /// How much a thread's summary rank adds to the thread's pooled score.
    pub summary_weight: f64,
    /// The 1-based position kept for the best thread not yet covered (0: none).
    pub fill_position: usize,
    /// What an item loses, in the same units as the lifts, once an item of
    /// its thread is placed above it (0: none). Pooling draws a strong
    /// thread's items to the top; this spreads the first places over
    /// threads again, so pooling's gain at the turn level costs the
    /// session level little.
    #[serde(default)]
    pub thread_repeat_penalty: f64,
}

impl RecallTuning {
    /// The default with an embedder.
    pub const fn meaning() -> Self {
        RecallTuning {
            rrf_k: 5.0,
            dense_weight: 1.0,
            expansion_weight: 0.0,
            fact_weight: 0.8,
            date_boost: 1.0,
            speaker_boost: 0.5,
            session_weight: 0.5,
            pool_decay: 0.0,
            summary_weight: 1.0,
            fill_position: 0,
            thread_repeat_penalty: 0.75,
        }
    }

    /// The default by words only.
    pub const fn words() -> Self {
        RecallTuning {
            dense_weight: 0.0,
            speaker_boost: 1.0,
            summary_weight: 0.5,
            thread_repeat_penalty: 0.5,
            ..Self::meaning()
        }
    }
}

/// What the engine gathered for one query, before fusion.
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    /// Word matches, best first, with their BM25 scores.
    pub lexical: Vec<(ItemKey, f64)>,
    /// Meaning matches, best first, with their cosine similarity.
    pub dense: Vec<(ItemKey, f32)>,
    /// Meaning matches of the query moved toward its first hits.
    pub expanded: Vec<(ItemKey, f32)>,
    /// Every item in the lists, as the store describes it.
    pub items: HashMap<ItemKey, CandidateItem>,
    /// The times the query names.
    pub dates: Vec<TimeSpan>,
    /// The one person the query names, if exactly one.
    pub speaker: Option<String>,
    /// Word matches the meaning search could not see: not embedded yet (a
    /// record made a moment ago; the server embeds in the background), or
    /// shared from another channel. Empty when no meaning search ran.
    pub unseen_by_meaning: HashSet<ItemKey>,
}

/// A fused candidate before it becomes a hit.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// The item shown.
    pub item: CandidateItem,
    /// Its fused score.
    pub score: f64,
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

    /// Whether it was said within one of `dates`: by its own time (a
    /// message's, or a record's source message's), or for a summary by
    /// its thread's opening.
    fn said_within(&self, dates: &[TimeSpan]) -> bool {
        if dates.is_empty() {
            return false;
        }
        let at = if self.is_summary() {
            self.thread_opened.unwrap_or(self.said_at)
        } else {
            self.said_at
        };
        let day = at.to_zoned(jiff::tz::TimeZone::UTC).date();
        dates.iter().any(|d| d.covers(day))
    }
}

/// Fuses the candidates into at most `query.limit` ranked items. Records
/// recall may not return (forgotten, or superseded unless asked for) and
/// keys without an item are dropped first.
pub fn fuse(c: &Candidates, tuning: &RecallTuning, query: &RecallQuery) -> Vec<Ranked> {
    fuse_borrowed(c, tuning, query)
        .into_iter()
        .map(|r| Ranked {
            item: r.item.clone(),
            score: r.score,
        })
        .collect()
}

/// A candidate while fusion works: borrowed, so only the hits are copied.
struct Scored<'a> {
    item: &'a CandidateItem,
    score: f64,
}

fn fuse_borrowed<'a>(
    c: &'a Candidates,
    tuning: &RecallTuning,
    query: &RecallQuery,
) -> Vec<Scored<'a>> {
    let k = tuning.rrf_k;
    let allowed = |key: &ItemKey| {
        c.items.get(key).filter(|i| match i.status {
            None | Some(MemoryStatus::Current) => true,
            Some(MemoryStatus::Superseded) => query.include_superseded,
            Some(MemoryStatus::Forgotten) => false,
        })
    };

    // The word list without summaries, facts weighted down, re-sorted.
    let mut lexical: Vec<(&CandidateItem, f64)> = c
        .lexical
        .iter()
        .filter_map(|(key, score)| allowed(key).map(|i| (i, *score)))
        .filter(|(i, _)| !i.is_summary())
        .map(|(i, s)| {
            let w = if i.kind == Some(MemoryKind::Fact) {
                tuning.fact_weight
            } else {
                1.0
            };
            (i, s * w)
        })
        .collect();
    lexical.sort_by(|a, b| b.1.total_cmp(&a.1));
    let without_summaries = |list: &[(ItemKey, f32)]| -> Vec<&CandidateItem> {
        list.iter()
            .filter_map(|(key, _)| allowed(key))
            .filter(|i| !i.is_summary())
            .collect()
    };
    let only_summaries = |keys: &mut dyn Iterator<Item = &ItemKey>| -> Vec<&CandidateItem> {
        keys.filter_map(&allowed)
            .filter(|i| i.is_summary())
            .collect()
    };

    // Reciprocal-rank fusion keyed by turn: a record and its source message
    // are one hit, shown as the record (the curated form) when there is one.
    let mut fused: HashMap<i64, Scored<'a>> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    let mut lists: Vec<(Vec<&CandidateItem>, f64)> =
        vec![(lexical.iter().map(|(i, _)| *i).collect(), 1.0)];
    if tuning.dense_weight > 0.0 {
        lists.push((without_summaries(&c.dense), tuning.dense_weight));
    }
    if tuning.expansion_weight > 0.0 {
        lists.push((without_summaries(&c.expanded), tuning.expansion_weight));
    }
    // An item the meaning search could not see is not thereby far in
    // meaning: its word rank stands for the meaning lists too, or a record
    // made a moment ago would rank below everything found by both.
    let stand_in = if tuning.dense_weight > 0.0 {
        tuning.dense_weight + tuning.expansion_weight
    } else {
        0.0
    };
    for (n, (list, weight)) in lists.iter().enumerate() {
        for (rank, item) in list.iter().take(super::recall::DEPTH).enumerate() {
            let key = item.fusion_key();
            let weight = if n == 0 && c.unseen_by_meaning.contains(&item.key) {
                weight + stand_in
            } else {
                *weight
            };
            let add = weight / (k + rank as f64 + 1.0);
            match fused.get_mut(&key) {
                Some(r) => {
                    r.score += add;
                    if r.item.kind.is_none() && item.kind.is_some() {
                        r.item = item;
                    }
                }
                None => {
                    fused.insert(key, Scored { item, score: add });
                    order.push(key);
                }
            }
        }
    }

    let unit = 1.0 / (k + 1.0);
    for ranked in fused.values_mut() {
        if ranked.item.said_within(&c.dates) {
            ranked.score += tuning.date_boost * unit;
        }
        if let (Some(speaker), Some(author)) = (&c.speaker, &ranked.item.author)
            && author.eq_ignore_ascii_case(speaker)
        {
            ranked.score += tuning.speaker_boost * unit;
        }
    }
    let mut ranked: Vec<Scored<'a>> = order.iter().filter_map(|k| fused.remove(k)).collect();
    sort(&mut ranked);

    // Session pooling: each thread's best items, and its summary's ranks.
    let mut pooled: HashMap<ThreadId, (f64, usize)> = HashMap::new();
    for r in &ranked {
        if let Some(t) = r.item.thread_id {
            let (score, n) = pooled.entry(t).or_insert((0.0, 0));
            if *n < 3 {
                *score += r.score * tuning.pool_decay.powi(*n as i32);
                *n += 1;
            }
        }
    }
    let mut thread_score: HashMap<ThreadId, f64> =
        pooled.into_iter().map(|(t, (s, _))| (t, s)).collect();
    let mut thread_summary: HashMap<ThreadId, &CandidateItem> = HashMap::new();
    let lexical_summaries = only_summaries(&mut c.lexical.iter().map(|(k, _)| k));
    let dense_summaries = only_summaries(&mut c.dense.iter().map(|(k, _)| k));
    for (list, weight) in [
        (&lexical_summaries, 1.0),
        (&dense_summaries, tuning.dense_weight.min(1.0)),
    ] {
        for (rank, summary) in list.iter().enumerate() {
            if let Some(t) = summary.thread_id {
                let date = if summary.said_within(&c.dates) {
                    tuning.date_boost * unit
                } else {
                    0.0
                };
                *thread_score.entry(t).or_insert(0.0) +=
                    tuning.summary_weight * (weight / (k + rank as f64 + 1.0) + date);
                thread_summary.entry(t).or_insert(summary);
            }
        }
    }
    if tuning.session_weight > 0.0 {
        for r in &mut ranked {
            let pooled = match r.item.thread_id {
                Some(t) => thread_score.get(&t).copied(),
                // A record outside every thread is a group of one, or a
                // channel-wide decision would fall below a thread's items
                // only for standing alone.
                None => Some(r.score),
            };
            if let Some(s) = pooled {
                r.score += tuning.session_weight * s;
            }
        }
    }
    let word_ranks = c
        .lexical
        .iter()
        .filter_map(|(key, _)| allowed(key))
        .enumerate();
    ranked.extend(summaries_found_alone(
        word_ranks,
        &lexical,
        &thread_score,
        tuning,
    ));
    sort(&mut ranked);

    let limit = query.limit.clamp(1, MAX_LIMIT);
    if tuning.thread_repeat_penalty > 0.0 {
        spread_threads(&mut ranked, tuning.thread_repeat_penalty * unit, limit);
    }
    let fill = tuning.fill_position;
    let mut out: Vec<Scored<'a>> = Vec::with_capacity(limit);
    let mut rest = ranked.into_iter();
    let before_fill = if fill == 0 {
        limit
    } else {
        limit.min(fill - 1)
    };
    while out.len() < before_fill {
        match rest.next() {
            Some(r) => out.push(r),
            None => break,
        }
    }
    let mut remaining: Vec<Scored<'a>> = rest.collect();
    if fill > 0 && out.len() == fill - 1 && limit >= fill {
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
                out.push(Scored {
                    item: summary,
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

/// The summaries the words found in threads none of whose items they
/// found, as hits of their own. Otherwise a word only a summary holds would
/// find nothing to show: its thread's items are at best near in meaning,
/// and by words only there are none. Each such summary scores its rank in
/// the word list, plus its thread's pooled score as an item would; a
/// thread whose items the words found is shown by them, as before.
fn summaries_found_alone<'a>(
    word_ranks: impl Iterator<Item = (usize, &'a CandidateItem)>,
    lexical: &[(&CandidateItem, f64)],
    thread_score: &HashMap<ThreadId, f64>,
    tuning: &RecallTuning,
) -> Vec<Scored<'a>> {
    let mut worded: HashSet<ThreadId> = lexical.iter().filter_map(|(i, _)| i.thread_id).collect();
    let mut out = Vec::new();
    for (rank, item) in word_ranks {
        let Some(thread) = item.thread_id.filter(|_| item.is_summary()) else {
            continue;
        };
        // One summary a thread, its best.
        if worded.insert(thread) {
            let pooled = thread_score.get(&thread).copied().unwrap_or(0.0);
            out.push(Scored {
                item,
                score: 1.0 / (tuning.rrf_k + rank as f64 + 1.0) + tuning.session_weight * pooled,
            });
        }
    }
    out
}

/// How far down the ranking [`spread_threads`] looks for an item of a
/// thread not yet shown.
const SPREAD_WINDOW: usize = 60;

/// Orders the first `places` items greedily: each place takes the best item
/// of the first [`SPREAD_WINDOW`], less `penalty` if an item of its thread
/// is already placed, and its score becomes that value, so the scores read
/// best first as the list does (each place's value is at most the one
/// before: values only fall as threads are shown). The rest keep their
/// order, their scores capped at the last placed one.
fn spread_threads(ranked: &mut [Scored<'_>], penalty: f64, places: usize) {
    let window = ranked.len().min(SPREAD_WINDOW);
    let mut shown: HashSet<ThreadId> = HashSet::new();
    let placed = places.min(window);
    for place in 0..placed {
        let value = |r: &Scored<'_>| match r.item.thread_id {
            Some(t) if shown.contains(&t) => r.score - penalty,
            _ => r.score,
        };
        let mut best = place;
        for i in place + 1..window {
            // Strictly better only: among equals the earlier keeps its place.
            if value(&ranked[i]) > value(&ranked[best]) {
                best = i;
            }
        }
        let score = value(&ranked[best]);
        ranked[place..=best].rotate_right(1);
        ranked[place].score = score;
        if let Some(t) = ranked[place].item.thread_id {
            shown.insert(t);
        }
    }
    if placed > 0 {
        let mut floor = ranked[placed - 1].score;
        for r in &mut ranked[placed..] {
            r.score = r.score.min(floor);
            floor = r.score;
        }
    }
}

/// Best first; newer first among equals.
fn sort(ranked: &mut [Scored<'_>]) {
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.item.created.cmp(&a.item.created))
    });
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;
    use crate::model::{ChannelId, MessageId};

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
            said_at: Timestamp::UNIX_EPOCH,
            thread_opened: Some(Timestamp::UNIX_EPOCH),
            thread_title: Some(format!("thread {thread}")),
            status: kind.map(|_| MemoryStatus::Current),
            scope: None,
            turn: turn.map(MessageId),
            source_external_id: None,
            author: Some(author.into()),
        }
    }

    fn candidates(items: Vec<CandidateItem>, lexical: Vec<(i64, f64)>) -> Candidates {
        Candidates {
            lexical: lexical.into_iter().map(|(k, s)| (ItemKey(k), s)).collect(),
            items: items.into_iter().map(|i| (i.key, i)).collect(),
            ..Candidates::default()
        }
    }

    /// Every stage on (but pooling), independent of the shipped defaults.
    const STAGES: RecallTuning = RecallTuning {
        rrf_k: 5.0,
        dense_weight: 1.0,
        expansion_weight: 0.0,
        fact_weight: 0.8,
        date_boost: 1.0,
        speaker_boost: 0.5,
        session_weight: 0.0,
        pool_decay: 0.0,
        summary_weight: 0.5,
        fill_position: 5,
        thread_repeat_penalty: 0.0,
    };

    fn fuse_default(c: &Candidates) -> Vec<Ranked> {
        fuse(c, &STAGES, &RecallQuery::new("q"))
    }

    #[test]
    fn a_fact_and_its_message_are_one_hit() {
        let c = candidates(
            vec![
                item(2, 1, None, Some(1), "ann"),
                item(3, 1, Some(MemoryKind::Fact), Some(1), "ann"),
                item(4, 1, None, Some(2), "bob"),
            ],
            vec![(3, 9.0), (4, 5.0), (2, 4.0)],
        );
        let hits = fuse_default(&c);
        assert_eq!(hits.len(), 2);
        assert_eq!(
            hits[0].item.key,
            ItemKey(3),
            "the fact was seen first and stands for the turn"
        );
    }

    #[test]
    fn a_word_match_meaning_could_not_see_counts_its_word_rank_for_both() {
        // Messages 2 and 4 are found by words and by meaning; record 7 (not
        // embedded yet) leads the words.
        let mut c = candidates(
            vec![
                item(2, 1, None, Some(1), "ann"),
                item(4, 1, None, Some(2), "bob"),
                item(7, 1, Some(MemoryKind::Decision), None, "ann"),
            ],
            vec![(7, 9.0), (2, 5.0), (4, 4.0)],
        );
        c.dense = vec![(ItemKey(2), 0.8), (ItemKey(4), 0.7)];
        let keys = |hits: Vec<Ranked>| hits.iter().map(|h| h.item.key.0).collect::<Vec<_>>();
        assert_eq!(keys(fuse_default(&c)), [2, 4, 7], "unseen, it ranks last");
        c.unseen_by_meaning.insert(ItemKey(7));
        assert_eq!(keys(fuse_default(&c)), [7, 2, 4]);
        // By words only there is no meaning list to stand in for.
        let words = RecallTuning {
            dense_weight: 0.0,
            ..STAGES
        };
        let hits = fuse(&c, &words, &RecallQuery::new("q"));
        assert!(
            (hits[0].score - 1.0 / 6.0).abs() < 1e-12,
            "{}",
            hits[0].score
        );
    }

    #[test]
    fn a_summary_the_words_found_alone_is_a_hit_of_its_own() {
        // Thread 1's summary (9) holds the word, none of its messages do;
        // thread 2's message (4) and summary (10) both hold it.
        let items = vec![
            item(2, 1, None, Some(1), "ann"),
            item(9, 1, Some(MemoryKind::Summary), None, "helm"),
            item(4, 2, None, Some(2), "bob"),
            item(10, 2, Some(MemoryKind::Summary), None, "helm"),
        ];
        let mut c = candidates(items, vec![(9, 9.0), (10, 8.0), (4, 5.0)]);
        let keys = |c: &Candidates, t: &RecallTuning| -> Vec<i64> {
            fuse(c, t, &RecallQuery::new("q"))
                .iter()
                .map(|h| h.item.key.0)
                .collect()
        };
        let words = RecallTuning {
            dense_weight: 0.0,
            session_weight: 0.5,
            ..STAGES
        };
        // By words: thread 2 by its message (its summary lifts it), thread
        // 1 by its summary; before, thread 1 was not shown at all.
        assert_eq!(keys(&c, &words), [4, 9]);
        // By meaning, thread 1's message, near in meaning only, comes after
        // the summary that holds the word.
        c.dense = vec![(ItemKey(4), 0.5), (ItemKey(2), 0.4)];
        let meaning = RecallTuning {
            session_weight: 0.5,
            ..STAGES
        };
        let by_meaning = keys(&c, &meaning);
        let at = |key: i64| by_meaning.iter().position(|k| *k == key);
        assert!(at(9).is_some() && at(9) < at(2), "{by_meaning:?}");
        // Thread 2's summary stays out: its message stands for it.
        assert!(!by_meaning.contains(&10), "{by_meaning:?}");
        // A forgotten summary stays out.
        if let Some(summary) = c.items.get_mut(&ItemKey(9)) {
            summary.status = Some(MemoryStatus::Forgotten);
        }
        assert!(!keys(&c, &meaning).contains(&9));
    }

    #[test]
    fn the_fifth_place_goes_to_an_uncovered_thread() {
        let mut all = Vec::new();
        let mut lexical = Vec::new();
        for n in 0..6 {
            all.push(item(2 * (n + 1), 1, None, Some(n + 1), "ann"));
            lexical.push((2 * (n + 1), 10.0 - n as f64));
        }
        all.push(item(100, 2, None, Some(50), "bob"));
        lexical.push((100, 1.0));
        let hits = fuse_default(&candidates(all, lexical));
        let threads: Vec<i64> = hits
            .iter()
            .filter_map(|h| h.item.thread_id.map(|t| t.0))
            .collect();
        assert_eq!(&threads[..5], [1, 1, 1, 1, 2]);
    }

    #[test]
    fn a_thread_already_shown_gives_way_to_a_close_one_not_shown() {
        // Thread 1 holds the three best items, threads 2 and 3 one each
        // below them.
        let items = vec![
            item(2, 1, None, Some(1), "ann"),
            item(4, 1, None, Some(2), "ann"),
            item(6, 1, None, Some(3), "ann"),
            item(8, 2, None, Some(4), "bob"),
            item(10, 3, None, Some(5), "bob"),
        ];
        let lexical = vec![(2, 9.0), (4, 8.0), (6, 7.0), (8, 6.0), (10, 5.0)];
        let c = candidates(items, lexical);
        let keys = |t: &RecallTuning| -> Vec<i64> {
            fuse(&c, t, &RecallQuery::new("q"))
                .iter()
                .map(|h| h.item.key.0)
                .collect()
        };
        assert_eq!(keys(&STAGES), [2, 4, 6, 8, 10]);
        // Scores at k = 5: 1/6, 1/7, 1/8, 1/9, 1/10; the penalty is 0.25/6.
        let spread = RecallTuning {
            thread_repeat_penalty: 0.25,
            ..STAGES
        };
        // Thread 1's second (1/7 - 1/24) falls below thread 2's item (1/9)
        // but stays above thread 3's (1/10); its third (1/8 - 1/24) falls
        // below both.
        assert_eq!(keys(&spread), [2, 8, 4, 10, 6]);
        let hits = fuse(&c, &spread, &RecallQuery::new("q"));
        assert!(
            (hits[1].score - 1.0 / 9.0).abs() < 1e-12,
            "an item of a thread not shown keeps its own score"
        );
        assert!(
            (hits[2].score - (1.0 / 7.0 - 0.25 / 6.0)).abs() < 1e-12,
            "one of a thread shown scores what placed it: {hits:?}"
        );
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "the scores read best first, as the list does: {hits:?}"
        );
    }

    #[test]
    fn a_record_outside_every_thread_pools_as_a_group_of_one() {
        let mut decision = item(9, 1, Some(MemoryKind::Decision), None, "ann");
        decision.thread_id = None;
        let items = vec![
            decision,
            item(2, 1, None, Some(1), "ann"),
            item(4, 1, None, Some(2), "ann"),
        ];
        let c = candidates(items, vec![(9, 9.0), (2, 8.0), (4, 7.0)]);
        let pooled = RecallTuning {
            session_weight: 0.5,
            ..STAGES
        };
        let hits = fuse(&c, &pooled, &RecallQuery::new("q"));
        assert_eq!(hits[0].item.key, ItemKey(9), "{hits:?}");
        assert!((hits[0].score - 1.5 / 6.0).abs() < 1e-12, "{hits:?}");
    }

    #[test]
    fn superseded_only_on_request_and_forgotten_never() {
        let mut old = item(5, 1, Some(MemoryKind::Decision), None, "ann");
        old.status = Some(MemoryStatus::Superseded);
        let mut gone = item(7, 1, Some(MemoryKind::Fact), None, "ann");
        gone.status = Some(MemoryStatus::Forgotten);
        let c = candidates(vec![old, gone], vec![(5, 3.0), (7, 2.0)]);
        assert!(fuse_default(&c).is_empty());
        let mut q = RecallQuery::new("q");
        q.include_superseded = true;
        let hits = fuse(&c, &STAGES, &q);
        assert_eq!(
            hits.iter().map(|h| h.item.key).collect::<Vec<_>>(),
            [ItemKey(5)]
        );
    }

    #[test]
    fn named_people_and_times_lift_their_items() {
        let mut said_in_may = item(4, 2, None, Some(2), "bob");
        said_in_may.said_at = "2023-05-08T12:00:00Z"
            .parse()
            .unwrap_or(Timestamp::UNIX_EPOCH);
        let mut c = candidates(
            vec![item(2, 1, None, Some(1), "ann"), said_in_may],
            vec![(2, 5.0), (4, 4.9)],
        );
        assert_eq!(fuse_default(&c)[0].item.key, ItemKey(2));
        c.speaker = Some("Bob".into());
        assert_eq!(fuse_default(&c)[0].item.key, ItemKey(4));
        c.speaker = None;
        c.dates = vec![TimeSpan::EveryYear {
            month: 5,
            from: 8,
            to: 8,
        }];
        assert_eq!(fuse_default(&c)[0].item.key, ItemKey(4));
    }

    #[test]
    fn a_thread_that_scores_as_a_group_lifts_its_items() {
        // Thread 1 has the single best item; thread 2 has three good ones.
        let items = vec![
            item(2, 1, None, Some(1), "ann"),
            item(4, 2, None, Some(2), "ann"),
            item(6, 2, None, Some(3), "ann"),
            item(8, 2, None, Some(4), "ann"),
        ];
        let c = candidates(items, vec![(2, 9.0), (4, 8.0), (6, 7.0), (8, 6.0)]);
        let plain = fuse_default(&c);
        assert_eq!(plain[0].item.key, ItemKey(2));
        let pooled = RecallTuning {
            session_weight: 1.0,
            pool_decay: 0.5,
            ..STAGES
        };
        let hits = fuse(&c, &pooled, &RecallQuery::new("q"));
        assert_eq!(hits[0].item.key, ItemKey(4));
    }
}
