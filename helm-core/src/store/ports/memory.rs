//! The [`MemoryStore`] port: channel memory: records, imports, and what recall
//! reads (word matches, vectors, filters).

use async_trait::async_trait;

use crate::error::Result;
use crate::memory::import::{ImportPlan, ImportReport};
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::memory::vectors::StoredVectors;
use crate::model::{Actor, ChannelId, MemoryId, MemoryItem, ThreadId};
use crate::store::types::{MemoryFilter, NewMemory};

/// Channel memory: records, imports, and what recall reads (word matches,
/// vectors, filters).
#[async_trait]
pub trait MemoryStore: Send + Sync + 'static {
    /// Adds a memory record.
    async fn add_memory(&self, memory: NewMemory) -> Result<MemoryItem>;

    /// Replaces a current record with a new one that supersedes it.
    async fn supersede_memory(&self, id: MemoryId, replacement: NewMemory) -> Result<MemoryItem>;

    /// Marks a record forgotten by `by`, now: kept for provenance, never
    /// recalled, unpinned; with its `memory.changed` event. A record
    /// already forgotten is a conflict.
    async fn forget_memory(&self, id: MemoryId, by: Actor) -> Result<MemoryItem>;

    /// Brings a forgotten record back to current (unpinned, who forgot it
    /// cleared), with its `memory.changed` event. A record that is not
    /// forgotten is a conflict.
    async fn restore_memory(&self, id: MemoryId) -> Result<MemoryItem>;

    /// Pins or unpins a current record.
    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> Result<MemoryItem>;

    /// A memory record.
    async fn memory(&self, id: MemoryId) -> Result<MemoryItem>;

    /// A channel's memory records, pinned first, then newest first.
    async fn list_memory(
        &self,
        channel: ChannelId,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>>;

    /// Writes a checked history into a channel in one transaction.
    async fn import_history(
        &self,
        channel: ChannelId,
        plan: ImportPlan,
        actor: Actor,
    ) -> Result<ImportReport>;

    /// The best matches in a channel (and among records shared with the
    /// workspace) of any of `terms`, best first, at most `depth`, with
    /// positive scores (higher is better). Each term is letters and digits
    /// only (see [`crate::memory::query::ParsedQuery::terms`]); no terms, no
    /// matches. A term found in at least half of the channel's items weighs
    /// 1e-6, so an item matching only such terms scores below
    /// [`crate::memory::recall::COMMON_WORDS_ONLY`].
    ///
    /// `walk` bounds how many matching rows a store that ranks them one by
    /// one may walk in a large channel before it narrows the search to the
    /// rows holding the rarer terms (SQLite's word index; see
    /// [`crate::memory::recall::WORD_WALK`]); `None` ranks every match.
    /// PostgreSQL ranks every match whatever it is.
    async fn recall_lexical(
        &self,
        channel: ChannelId,
        terms: &[String],
        depth: usize,
        walk: Option<usize>,
    ) -> Result<Vec<(ItemKey, f64)>>;

    /// Recall's view of the given items (unknown keys are left out).
    async fn recall_items(&self, keys: Vec<ItemKey>) -> Result<Vec<CandidateItem>>;

    /// The external ids of a thread's messages.
    async fn thread_external_ids(&self, thread: ThreadId) -> Result<Vec<String>>;

    /// Threads of a channel opened within `[from, to]` (Unix milliseconds).
    async fn threads_opened_between(
        &self,
        channel: ChannelId,
        from: i64,
        to: i64,
    ) -> Result<Vec<ThreadId>>;

    /// The names that wrote in a channel (people, guests, agents).
    async fn channel_authors(&self, channel: ChannelId) -> Result<Vec<String>>;

    /// Items waiting to be embedded, newest first, with the text to embed.
    /// With `unembedded` a model's name, only those with no vector of that
    /// model yet, not those waiting to be embedded again.
    async fn embed_backlog(
        &self,
        channel: Option<ChannelId>,
        limit: usize,
        unembedded: Option<String>,
    ) -> Result<Vec<(ItemKey, ChannelId, String)>>;

    /// How many items wait to be embedded.
    async fn embed_backlog_len(&self, channel: Option<ChannelId>) -> Result<u64>;

    /// Stores vectors for `model` and takes their items off the queue.
    async fn put_embeddings(
        &self,
        model: &str,
        vectors: Vec<(ItemKey, ChannelId, Vec<f32>)>,
    ) -> Result<()>;

    /// A channel's vectors for `model` stored after the store's number
    /// `after` (0: all of them), with the number of the newest. Numbers
    /// grow in the order vectors become visible, so a reader that asks
    /// again with the newest number it saw misses nothing.
    async fn channel_vectors(
        &self,
        model: &str,
        channel: ChannelId,
        after: i64,
    ) -> Result<StoredVectors>;

    /// The channels holding vectors for `model` and how many each holds,
    /// the channel with the most recently stored vector first: what recall
    /// reads into memory ahead of the first search.
    async fn vector_channels(&self, model: &str) -> Result<Vec<(ChannelId, u64)>>;
}
