//! The recall engine: runs a query's word search and meaning search side by
//! side, expands the meaning search from the first hits, hands the
//! candidates to [`fusion`](super::fusion), and dresses the hits with their
//! provenance. It keeps each channel's vectors in memory (loaded on first
//! use), and embeds the items waiting in the store's queue.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::embed::{Embedder, normalize};
use super::fusion::{Candidates, Ranked, RecallTuning, fuse};
use super::query::{self, ParsedQuery};
use super::recall::{
    COMMON_WORDS_ONLY, CandidateItem, DEPTH, HitThread, ItemKey, RecallHit, RecallQuery, WORD_WALK,
};
use super::vector_cache::{DEFAULT_VECTOR_CACHE_BYTES, VectorCache, VectorCacheUse};
use super::vectors::ChannelVectors;
use crate::error::{Error, Result};
use crate::helm::Audience;
use crate::model::{ChannelId, MessageId};
use crate::store::Store;

/// The longest query accepted, in bytes.
pub const MAX_QUERY: usize = 16 * 1024;
/// How long a channel's list of author names is reused.
const AUTHORS_TTL: Duration = Duration::from_secs(60);
/// How many items one embedding batch takes.
const EMBED_BATCH: usize = 32;
/// The most bytes of text one embedding batch takes (a lone longer item
/// still goes alone): about 32 of the local model's 256-token windows of
/// English, what 32 messages cost at most. Bytes, not characters, because
/// a CJK character is a token of its own and three bytes. A long text is
/// read in several windows, and a batch of 32 long ones (an upgrade queues
/// exactly those again) would hold both cores for many seconds, with fresh
/// messages waiting behind it.
const EMBED_BATCH_BYTES: usize = 32_000;
/// How many first hits the expanded meaning search moves toward.
const EXPANSION_SEEDS: usize = 3;
/// How far it moves: the seeds' mean vector is added with this weight.
const EXPANSION_PULL: f32 = 1.0;

/// Recall over one store.
pub struct RecallEngine {
    store: Arc<dyn Store>,
    embedder: Option<Arc<dyn Embedder>>,
    vectors: Arc<Mutex<VectorCache>>,
    /// Channels whose vectors are being merged (and indexed) on a blocking
    /// thread, so a channel has one merge at a time.
    merging: Arc<Mutex<HashSet<ChannelId>>>,
    authors: Mutex<HashMap<ChannelId, CachedAuthors>>,
}

/// A channel's author names and when they were read.
type CachedAuthors = (Instant, Arc<Vec<String>>);

impl RecallEngine {
    /// An engine; without an embedder, recall works by words only. It
    /// keeps searched channels' vectors within the default budget
    /// ([`DEFAULT_VECTOR_CACHE_BYTES`]).
    pub fn new(store: Arc<dyn Store>, embedder: Option<Arc<dyn Embedder>>) -> Self {
        RecallEngine {
            store,
            embedder,
            vectors: Arc::new(Mutex::new(VectorCache::new(DEFAULT_VECTOR_CACHE_BYTES))),
            merging: Arc::new(Mutex::new(HashSet::new())),
            authors: Mutex::new(HashMap::new()),
        }
    }

    /// The same engine keeping at most `bytes` of channels' vectors.
    pub fn with_vector_cache(mut self, bytes: usize) -> Self {
        self.vectors = Arc::new(Mutex::new(VectorCache::new(bytes)));
        self
    }

    /// How much of the vector cache is in use.
    pub fn vector_cache(&self) -> Option<VectorCacheUse> {
        self.vectors.lock().ok().map(|c| c.usage())
    }

    /// Reads into memory the vectors of the channels embedded into most
    /// recently, while they fit the cache's room (evicting nothing), so
    /// their first search does not wait for them; a large one is indexed
    /// on a blocking thread as it would be on first search. Channels left
    /// out are read on their first search. Returns how many were read.
    pub async fn preload(&self) -> Result<usize> {
        let Some(embedder) = &self.embedder else {
            return Ok(0);
        };
        let Some(cache) = self.vector_cache() else {
            return Ok(0);
        };
        let row = ChannelVectors::row_bytes(embedder.dimensions());
        let mut room = cache.budget.saturating_sub(cache.bytes);
        let mut read = 0;
        for (channel, count) in self.store.vector_channels(embedder.model()).await? {
            let bytes = count as usize * row;
            let kept = self.vectors.lock().is_ok_and(|c| c.holds(channel));
            // A smaller channel further down may still fit.
            if kept || bytes > room {
                continue;
            }
            room -= bytes;
            self.channel_vectors(channel, embedder.model()).await?;
            read += 1;
        }
        Ok(read)
    }

    /// The embedder's model, if meaning-based recall is on.
    pub fn embedding_model(&self) -> Option<&str> {
        self.embedder.as_ref().map(|e| e.model())
    }

    /// The fusion constants in use when a query names none.
    pub fn default_tuning(&self) -> RecallTuning {
        if self.embedder.is_some() {
            RecallTuning::meaning()
        } else {
            RecallTuning::words()
        }
    }

    /// Recalls from `channel` (plus records shared with the workspace), for
    /// `audience`: an item of a channel the audience may not see never
    /// reaches the ranking, so it is neither returned nor crowds out others.
    /// The audience is required: there is no unfiltered recall.
    pub async fn recall(
        &self,
        audience: &Audience,
        channel: ChannelId,
        query: &RecallQuery,
    ) -> Result<Vec<RecallHit>> {
        let tuning = query.tuning.unwrap_or_else(|| self.default_tuning());
        let candidates = self.candidates(audience, channel, query, &tuning).await?;
        let ranked = fuse(&candidates, &tuning, query);
        self.dress(ranked).await
    }

    /// What recall gathers for `query` before fusion, for `audience`: word
    /// and meaning matches (and, when `tuning` weighs it, the expanded
    /// meaning search), the items they name that the audience may see, the
    /// times and the person the query names. Public so that fusion can be
    /// measured and tuned on fixed candidates.
    pub async fn candidates(
        &self,
        audience: &Audience,
        channel: ChannelId,
        query: &RecallQuery,
        tuning: &RecallTuning,
    ) -> Result<Candidates> {
        let text = query.text.trim();
        if text.is_empty() {
            return Err(Error::invalid(
                "query",
                "recall needs a question or some words",
            ));
        }
        if text.len() > MAX_QUERY {
            return Err(Error::invalid(
                "query",
                format!(
                    "{} bytes is over the {MAX_QUERY}-byte limit for a query",
                    text.len()
                ),
            ));
        }
        let today = query
            .as_of
            .unwrap_or_else(jiff::Timestamp::now)
            .to_zoned(jiff::tz::TimeZone::UTC)
            .date();
        let parsed = query::parse(text, today);
        // The query's words are searched on a store thread while the query
        // is embedded on another (one core: the embedder's few-row product),
        // its nearest vectors are found and their items read, so only the
        // word matches' items are read after both (docs/memory.md, "At
        // scale").
        let (meaning, lexical) = tokio::join!(
            async {
                let Some((vectors, query)) = self.embed_query(channel, text).await? else {
                    return Ok(None);
                };
                // Summaries are ranked in a list of their own; take enough
                // to hold them.
                let dense = vectors.nearest(&query, 2 * DEPTH);
                let items = self
                    .store
                    .recall_items(dense.iter().map(|(k, _)| *k).collect())
                    .await?;
                Ok::<_, Error>(Some(((vectors, query), dense, items)))
            },
            self.lexical(channel, &parsed),
        );
        let mut lexical = lexical?;
        let (meaning, dense, mut items) = match meaning? {
            Some((meaning, dense, items)) => (Some(meaning), dense, items),
            None => (None, Vec::new(), Vec::new()),
        };
        // A match on words found in most of the channel's items says nothing
        // of an item, yet its place in the word list counts as much as a
        // rare word's: in a channel where every message names
        // `@launch-agent`, "when do we launch?" matched them all, and their
        // all but arbitrary word order put a question about the press kit
        // above the decision "Launch is on 12 March.". Where meaning ranks
        // the items (there is a meaning list and it weighs), such matches
        // are dropped. Without meaning they are all there is, and an item
        // meaning cannot see yet (a record made a moment ago) keeps its
        // match, or it would not be found at all.
        if let Some((vectors, _)) = meaning.as_ref().filter(|_| tuning.dense_weight > 0.0) {
            lexical.retain(|(k, score)| *score >= COMMON_WORDS_ONLY || !vectors.contains(*k));
        }
        let unseen_by_meaning = match &meaning {
            Some((vectors, _)) => lexical
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| !vectors.contains(*k))
                .collect(),
            None => HashSet::new(),
        };
        let expanded = match &meaning {
            Some((vectors, query)) if tuning.expansion_weight > 0.0 => {
                expand(vectors, query, &lexical, &dense)
            }
            _ => Vec::new(),
        };

        let read: HashSet<ItemKey> = items.iter().map(|i| i.key).collect();
        let mut keys: Vec<ItemKey> = lexical
            .iter()
            .map(|(k, _)| *k)
            .chain(expanded.iter().map(|(k, _)| *k))
            .filter(|k| !read.contains(k))
            .collect();
        keys.sort();
        keys.dedup();
        if !keys.is_empty() {
            items.extend(self.store.recall_items(keys).await?);
        }
        let items: HashMap<ItemKey, CandidateItem> = items
            .into_iter()
            .filter(|i| {
                (i.channel_id == channel || i.scope == Some(crate::model::MemoryScope::Workspace))
                    && audience.sees_channel(i.channel_id)
            })
            .map(|i| (i.key, i))
            .collect();
        Ok(Candidates {
            lexical,
            dense,
            expanded,
            items,
            dates: parsed.dates,
            speaker: self.speaker(channel, text).await?,
            unseen_by_meaning,
        })
    }

    /// The pinned records of `channel` (always offered to its agent), when
    /// `audience` may see the channel; at most `limit`.
    pub async fn pinned(
        &self,
        audience: &Audience,
        channel: ChannelId,
        limit: usize,
    ) -> Result<Vec<crate::model::MemoryItem>> {
        if !audience.sees_channel(channel) {
            return Ok(Vec::new());
        }
        Ok(self
            .store
            .list_memory(
                channel,
                crate::store::MemoryFilter {
                    limit,
                    ..Default::default()
                },
            )
            .await?
            .into_iter()
            .filter(|m| m.pinned && m.status == crate::model::MemoryStatus::Current)
            .collect())
    }

    async fn lexical(
        &self,
        channel: ChannelId,
        parsed: &ParsedQuery,
    ) -> Result<Vec<(ItemKey, f64)>> {
        if parsed.terms.is_empty() {
            return Ok(Vec::new());
        }
        self.store
            .recall_lexical(channel, &parsed.terms, DEPTH, Some(WORD_WALK))
            .await
    }

    /// The channel's vectors and the query's; `None` without an embedder or
    /// vectors, or when embedding fails (recall then works by words).
    async fn embed_query(
        &self,
        channel: ChannelId,
        text: &str,
    ) -> Result<Option<(Arc<ChannelVectors>, Vec<f32>)>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        // Where the channel's vectors are kept and not empty, the query is
        // embedded (a few milliseconds on a blocking thread) while they are
        // refreshed (a store read, a round trip on PostgreSQL), which takes
        // the read off the critical path. Elsewhere the vectors come first,
        // so a channel with none costs no embedding (a provider's embedder
        // is paid by the call).
        let warm = self
            .vectors
            .lock()
            .ok()
            .and_then(|mut c| c.get(channel))
            .is_some_and(|v| !v.is_empty());
        let (vectors, query) = if warm {
            let (vectors, query) = tokio::join!(
                self.channel_vectors(channel, embedder.model()),
                embedder.embed_query(text)
            );
            (vectors?, query)
        } else {
            let vectors = self.channel_vectors(channel, embedder.model()).await?;
            if vectors.is_empty() {
                return Ok(None);
            }
            (vectors, embedder.embed_query(text).await)
        };
        // Meaning is an extra: if the embedder fails, recall still works by words.
        match query {
            Ok(query) => Ok(Some((vectors, query))),
            Err(e) => {
                tracing::warn!(error = %e, "embedding a query failed; recalling by words only");
                Ok(None)
            }
        }
    }

    /// A channel's vectors: those kept, refreshed with any stored since
    /// (one indexed read, usually of nothing), else all read from the
    /// store. Starts a merge when one is due.
    async fn channel_vectors(
        &self,
        channel: ChannelId,
        model: &str,
    ) -> Result<Arc<ChannelVectors>> {
        let kept = self.vectors.lock().ok().and_then(|mut c| c.get(channel));
        let after = kept.as_ref().map_or(0, |v| v.last_stored());
        let stored = self.store.channel_vectors(model, channel, after).await?;
        let (vectors, keep) = match kept {
            // Nothing new: what is kept stays as it is.
            Some(kept) if stored.is_empty() => (kept, true),
            kept => {
                let vectors = Arc::new(match kept {
                    Some(kept) => kept.with_newer(stored),
                    None => ChannelVectors::loaded(stored),
                });
                let keep = self
                    .vectors
                    .lock()
                    .is_ok_and(|mut cache| cache.insert(channel, vectors.clone()));
                (vectors, keep)
            }
        };
        if keep && vectors.wants_merge() {
            self.merge(channel, vectors.clone());
        }
        Ok(vectors)
    }

    /// Folds a channel's recent vectors into its main matrix (indexing it
    /// when large) on a blocking thread, and keeps the result with any
    /// vectors that arrived meanwhile. At most one merge per channel runs.
    fn merge(&self, channel: ChannelId, from: Arc<ChannelVectors>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if !self.merging.lock().is_ok_and(|mut m| m.insert(channel)) {
            return;
        }
        let (cache, merging) = (self.vectors.clone(), self.merging.clone());
        runtime.spawn_blocking(move || {
            let merged = from.merged();
            if let Ok(mut cache) = cache.lock()
                && let Some(now) = cache.get(channel)
                && let Some(rebased) = now.rebased(&from, &merged)
            {
                cache.insert(channel, Arc::new(rebased));
            }
            if let Ok(mut m) = merging.lock() {
                m.remove(&channel);
            }
        });
    }

    /// The one author the query names by name, if exactly one.
    async fn speaker(&self, channel: ChannelId, text: &str) -> Result<Option<String>> {
        let cached = self.authors.lock().ok().and_then(|m| {
            m.get(&channel)
                .filter(|(at, _)| at.elapsed() < AUTHORS_TTL)
                .map(|(_, a)| a.clone())
        });
        let authors = match cached {
            Some(a) => a,
            None => {
                let fresh = Arc::new(self.store.channel_authors(channel).await?);
                if let Ok(mut m) = self.authors.lock() {
                    m.insert(channel, (Instant::now(), fresh.clone()));
                }
                fresh
            }
        };
        let words: HashSet<String> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .map(|w| w.trim_start_matches('@').to_lowercase())
            .collect();
        let named: Vec<&String> = authors
            .iter()
            .filter(|a| words.contains(&a.to_lowercase()))
            .collect();
        Ok(match named.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        })
    }

    /// Adds provenance: the thread, the source messages and their external ids.
    async fn dress(&self, ranked: Vec<Ranked>) -> Result<Vec<RecallHit>> {
        let mut hits = Vec::with_capacity(ranked.len());
        for r in ranked {
            let item = r.item;
            let thread = item.thread_id.map(|id| HitThread {
                id,
                title: item.thread_title.clone().unwrap_or_default(),
            });
            let (kind, id) = match (item.kind, item.key.message_id(), item.key.memory_id()) {
                (None, Some(m), _) => ("message".to_string(), m.0),
                (Some(k), _, Some(m)) => (k.as_str().to_string(), m.0),
                _ => continue,
            };
            let (source_message_ids, source_external_ids) =
                match (item.kind, item.turn, item.thread_id) {
                    (Some(crate::model::MemoryKind::Summary), _, Some(t)) => {
                        let all = self.store.thread_external_ids(t).await?;
                        (Vec::new(), all)
                    }
                    (_, Some(m), _) => (
                        vec![m],
                        item.source_external_id.clone().into_iter().collect(),
                    ),
                    _ => (Vec::new(), Vec::new()),
                };
            hits.push(RecallHit {
                kind,
                id,
                score: r.score,
                content: item.content,
                channel_id: item.channel_id,
                thread,
                author: item.author,
                created: item.created,
                status: item.status,
                source_message_ids: source_message_ids.into_iter().collect::<Vec<MessageId>>(),
                source_external_ids,
            });
        }
        Ok(hits)
    }

    /// Embeds items waiting in the queue (of one channel, or all), calling
    /// `progress(done, total)` after each batch. Returns how many were
    /// embedded; without an embedder, nothing is.
    pub async fn embed_backlog(
        &self,
        channel: Option<ChannelId>,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64> {
        self.embed_queued(channel, Queued::All, progress).await
    }

    /// Embeds the whole queue at a pace that leaves the machine to the
    /// turns: after each full batch it waits as long as the batch took, so
    /// a large backlog (every message queued again by an upgrade) takes at
    /// most half of the time the embedder could have. Fresh items fit in one
    /// batch and are embedded at once.
    pub async fn embed_in_background(&self) -> Result<u64> {
        let mut told = false;
        let done = self
            .embed_queued(None, Queued::AllPaced, |_, total| {
                // A backlog beyond a few batches (an upgrade's, an
                // import's) is worth a word in the log.
                if !told && total > 4 * EMBED_BATCH as u64 {
                    told = true;
                    tracing::info!(total, "embedding queued items for recall in the background");
                }
            })
            .await?;
        if told {
            tracing::info!(done, "embedded the queued items for recall");
        }
        Ok(done)
    }

    /// Embeds the queued items of `channel` that have no vector yet, and
    /// leaves those waiting to be embedded again (after an upgrade) to the
    /// background: what a recall outside the server embeds first.
    pub async fn embed_unembedded(&self, channel: ChannelId) -> Result<u64> {
        self.embed_queued(Some(channel), Queued::Unembedded, |_, _| {})
            .await
    }

    async fn embed_queued(
        &self,
        channel: Option<ChannelId>,
        which: Queued,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64> {
        let Some(embedder) = &self.embedder else {
            return Ok(0);
        };
        let total = self.store.embed_backlog_len(channel).await?;
        let unembedded = (which == Queued::Unembedded).then(|| embedder.model().to_string());
        let mut done = 0u64;
        loop {
            let started = std::time::Instant::now();
            let mut batch = self
                .store
                .embed_backlog(channel, EMBED_BATCH, unembedded.clone())
                .await?;
            if batch.is_empty() {
                break;
            }
            // Those left out stay queued and come first next time; a batch
            // cut short counts as full for the pacing below.
            let within = within_bytes(batch.iter().map(|(_, _, t)| t.len()), EMBED_BATCH_BYTES);
            let full = batch.len() == EMBED_BATCH || within < batch.len();
            batch.truncate(within);
            let texts: Vec<String> = batch.iter().map(|(_, _, t)| t.clone()).collect();
            let vectors = embedder.embed(&texts).await?;
            let rows: Vec<_> = batch
                .iter()
                .zip(vectors)
                .map(|((key, ch, text), v)| {
                    (*key, *ch, if text.is_empty() { Vec::new() } else { v })
                })
                .collect();
            // Channels kept in memory read the new vectors on their next
            // search (`channel_vectors`), on this node or any other.
            self.store.put_embeddings(embedder.model(), rows).await?;
            done += batch.len() as u64;
            progress(done, total.max(done));
            if which == Queued::AllPaced && full {
                tokio::time::sleep(started.elapsed()).await;
            }
        }
        Ok(done)
    }
}

/// How many of the texts, of these lengths in bytes in order, one batch
/// takes: those whose lengths add up to at most `budget`, and always the first.
fn within_bytes(lengths: impl IntoIterator<Item = usize>, budget: usize) -> usize {
    let mut total = 0;
    let mut taken = 0;
    for len in lengths {
        total += len;
        if taken > 0 && total > budget {
            break;
        }
        taken += 1;
    }
    taken
}

/// Which queued items [`RecallEngine::embed_queued`] embeds, and how fast.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Queued {
    /// All, as fast as the embedder goes.
    All,
    /// All, waiting after each full batch as long as it took.
    AllPaced,
    /// Only those with no vector of the embedder's model yet.
    Unembedded,
}

/// The meaning search again, from the query moved toward its first hits
/// (the best of the word and meaning lists, fused by rank): it finds what
/// the first hits are about, which a question's own words may not reach.
fn expand(
    vectors: &ChannelVectors,
    query: &[f32],
    lexical: &[(ItemKey, f64)],
    dense: &[(ItemKey, f32)],
) -> Vec<(ItemKey, f32)> {
    // A fixed constant, so the seeds do not move with fusion's tuning.
    let k = 5.0;
    let mut seeds: HashMap<ItemKey, f64> = HashMap::new();
    for (rank, key) in lexical.iter().map(|(k, _)| *k).enumerate().take(DEPTH) {
        *seeds.entry(key).or_default() += 1.0 / (k + rank as f64 + 1.0);
    }
    for (rank, key) in dense.iter().map(|(k, _)| *k).enumerate().take(DEPTH) {
        *seeds.entry(key).or_default() += 1.0 / (k + rank as f64 + 1.0);
    }
    let mut seeds: Vec<(ItemKey, f64)> = seeds.into_iter().collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut moved = query.to_vec();
    let mut n = 0;
    for (key, _) in seeds {
        if n == EXPANSION_SEEDS {
            break;
        }
        if let Some(v) = vectors.get(key) {
            for (m, x) in moved.iter_mut().zip(v) {
                *m += EXPANSION_PULL * x / EXPANSION_SEEDS as f32;
            }
            n += 1;
        }
    }
    if n == 0 {
        return Vec::new();
    }
    normalize(&mut moved);
    vectors.nearest(&moved, DEPTH)
}

#[cfg(test)]
mod tests {
    use super::within_bytes;

    #[test]
    fn a_batch_stops_at_its_bytes_but_takes_at_least_one_text() {
        assert_eq!(within_bytes([10, 10, 10], 100), 3);
        assert_eq!(within_bytes([40, 40, 40], 100), 2);
        assert_eq!(within_bytes([40, 60, 1], 100), 2);
        // A text over the budget goes alone, and first.
        assert_eq!(within_bytes([500, 10], 100), 1);
        assert_eq!(within_bytes([10, 500, 10], 100), 1);
        assert_eq!(within_bytes(std::iter::empty(), 100), 0);
    }
}
