//! The recall engine: runs a query's word search and meaning search side by
//! side, fuses them, and dresses the hits with their provenance. It keeps
//! each channel's vectors in memory (loaded on first use), and embeds the
//! items waiting in the store's queue.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::ToSpan;

use super::embed::Embedder;
use super::query::{self, ParsedQuery};
use super::recall::{
    CandidateItem, DEPTH, HitThread, ItemKey, Lists, Ranked, RecallHit, RecallQuery, fuse,
};
use crate::error::{Error, Result};
use crate::helm::Audience;
use crate::model::{ChannelId, MessageId, ThreadId};
use crate::store::Store;

/// The longest query accepted, in bytes.
pub const MAX_QUERY: usize = 16 * 1024;
/// How long a channel's list of author names is reused.
const AUTHORS_TTL: Duration = Duration::from_secs(60);
/// How many items one embedding batch takes.
const EMBED_BATCH: usize = 32;

/// One channel's vectors, as a dense matrix.
struct ChannelVectors {
    keys: Vec<ItemKey>,
    data: Vec<f32>,
    dim: usize,
}

impl ChannelVectors {
    /// The `n` keys closest to `query` (cosine on unit vectors), best first.
    fn nearest(&self, query: &[f32], n: usize) -> Vec<ItemKey> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut scored: Vec<(f32, ItemKey)> = self
            .data
            .chunks_exact(self.dim)
            .zip(&self.keys)
            .map(|(v, k)| (dot(v, query), *k))
            .collect();
        let n = n.min(scored.len());
        if n == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(n - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(n);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, k)| k).collect()
    }
}

/// A dot product written so the compiler vectorises it (eight lanes).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = a.len() / 8;
    for i in 0..chunks {
        for lane in 0..8 {
            acc[lane] += a[i * 8 + lane] * b[i * 8 + lane];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..a.len() {
        sum += a[i] * b[i];
    }
    sum
}

/// Recall over one store.
pub struct RecallEngine {
    store: Arc<dyn Store>,
    embedder: Option<Arc<dyn Embedder>>,
    vectors: Mutex<HashMap<ChannelId, Arc<ChannelVectors>>>,
    authors: Mutex<HashMap<ChannelId, CachedAuthors>>,
}

/// A channel's author names and when they were read.
type CachedAuthors = (Instant, Arc<Vec<String>>);

impl RecallEngine {
    /// An engine; without an embedder, recall works by words only.
    pub fn new(store: Arc<dyn Store>, embedder: Option<Arc<dyn Embedder>>) -> Self {
        RecallEngine {
            store,
            embedder,
            vectors: Mutex::new(HashMap::new()),
            authors: Mutex::new(HashMap::new()),
        }
    }

    /// The embedder's model, if meaning-based recall is on.
    pub fn embedding_model(&self) -> Option<&str> {
        self.embedder.as_ref().map(|e| e.model())
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
        let parsed = query::parse(text);
        let (lexical, dense) =
            tokio::join!(self.lexical(channel, &parsed), self.dense(channel, text));
        let lexical = lexical?;
        let dense = dense?;

        let mut keys: Vec<ItemKey> = lexical.iter().map(|(k, _)| *k).collect();
        keys.extend(dense.iter().copied());
        keys.sort();
        keys.dedup();
        let items: HashMap<ItemKey, CandidateItem> = self
            .store
            .recall_items(keys)
            .await?
            .into_iter()
            .filter(|i| {
                (i.channel_id == channel || i.scope == Some(crate::model::MemoryScope::Workspace))
                    && audience.sees_channel(i.channel_id)
            })
            .map(|i| (i.key, i))
            .collect();

        let lists = Lists {
            lexical,
            dense,
            date_threads: self.date_threads(channel, &parsed).await?,
            speaker: self.speaker(channel, text).await?,
        };
        let ranked = fuse(&lists, &items, query);
        self.dress(ranked).await
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
        match &parsed.fts {
            Some(fts) => self.store.recall_lexical(channel, fts, DEPTH).await,
            None => Ok(Vec::new()),
        }
    }

    async fn dense(&self, channel: ChannelId, text: &str) -> Result<Vec<ItemKey>> {
        let Some(embedder) = &self.embedder else {
            return Ok(Vec::new());
        };
        let vectors = self.channel_vectors(channel, embedder.model()).await?;
        if vectors.keys.is_empty() {
            return Ok(Vec::new());
        }
        // Meaning is an extra: if the embedder fails, recall still works by words.
        let query = match embedder.embed(&[text.to_string()]).await {
            Ok(q) => q,
            Err(e) => {
                tracing::warn!(error = %e, "embedding a query failed; recalling by words only");
                return Ok(Vec::new());
            }
        };
        let Some(query) = query.first() else {
            return Ok(Vec::new());
        };
        // Summaries are ranked in a list of their own; take enough to hold them.
        Ok(vectors.nearest(query, 2 * DEPTH))
    }

    async fn channel_vectors(
        &self,
        channel: ChannelId,
        model: &str,
    ) -> Result<Arc<ChannelVectors>> {
        if let Some(v) = self
            .vectors
            .lock()
            .ok()
            .and_then(|m| m.get(&channel).cloned())
        {
            return Ok(v);
        }
        let rows = self.store.channel_vectors(model, channel).await?;
        let dim = rows.first().map(|(_, v)| v.len()).unwrap_or(0);
        let mut keys = Vec::with_capacity(rows.len());
        let mut data = Vec::with_capacity(rows.len() * dim);
        for (key, vector) in rows {
            if vector.len() == dim {
                keys.push(key);
                data.extend_from_slice(&vector);
            }
        }
        let loaded = Arc::new(ChannelVectors { keys, data, dim });
        if let Ok(mut map) = self.vectors.lock() {
            map.insert(channel, loaded.clone());
        }
        Ok(loaded)
    }

    async fn date_threads(
        &self,
        channel: ChannelId,
        parsed: &ParsedQuery,
    ) -> Result<HashSet<ThreadId>> {
        let mut threads = HashSet::new();
        for (start, end) in &parsed.dates {
            // A day of slack on each side: "on the 13th" often means the evening before or after.
            let from = start
                .saturating_sub(1.day())
                .to_zoned(jiff::tz::TimeZone::UTC);
            let to = end
                .saturating_add(2.days())
                .to_zoned(jiff::tz::TimeZone::UTC);
            if let (Ok(from), Ok(to)) = (from, to) {
                let found = self
                    .store
                    .threads_opened_between(
                        channel,
                        from.timestamp().as_millisecond(),
                        to.timestamp().as_millisecond() - 1,
                    )
                    .await?;
                threads.extend(found);
            }
        }
        Ok(threads)
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
        let mut titles: HashMap<ThreadId, String> = HashMap::new();
        let mut hits = Vec::with_capacity(ranked.len());
        for r in ranked {
            let item = r.item;
            let thread = match item.thread_id {
                Some(t) => {
                    if let std::collections::hash_map::Entry::Vacant(slot) = titles.entry(t) {
                        let title = self
                            .store
                            .thread(t)
                            .await
                            .map(|th| th.title)
                            .unwrap_or_default();
                        slot.insert(title);
                    }
                    Some(HitThread {
                        id: t,
                        title: titles.get(&t).cloned().unwrap_or_default(),
                    })
                }
                None => None,
            };
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
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64> {
        let Some(embedder) = &self.embedder else {
            return Ok(0);
        };
        let total = self.store.embed_backlog_len(channel).await?;
        let mut done = 0u64;
        loop {
            let batch = self.store.embed_backlog(channel, EMBED_BATCH).await?;
            if batch.is_empty() {
                break;
            }
            let texts: Vec<String> = batch.iter().map(|(_, _, t)| t.clone()).collect();
            let vectors = embedder.embed(&texts).await?;
            let rows: Vec<_> = batch
                .iter()
                .zip(vectors)
                .map(|((key, ch, text), v)| {
                    (*key, *ch, if text.is_empty() { Vec::new() } else { v })
                })
                .collect();
            let touched: HashSet<ChannelId> = rows.iter().map(|(_, c, _)| *c).collect();
            self.store.put_embeddings(embedder.model(), rows).await?;
            if let Ok(mut cache) = self.vectors.lock() {
                for c in touched {
                    cache.remove(&c);
                }
            }
            done += batch.len() as u64;
            progress(done, total.max(done));
        }
        Ok(done)
    }
}
