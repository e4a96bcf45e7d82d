//! [`MemoryStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;

use super::super::{SqliteStore, import, memory, recall, threads};
use crate::error::Result;
use crate::memory::import::{ImportPlan, ImportReport};
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::memory::vectors::StoredVectors;
use crate::model::{Actor, ChannelId, MemoryId, MemoryItem, ThreadId};
use crate::store::MemoryStore;
use crate::store::types::{MemoryFilter, NewMemory};

#[async_trait]
impl MemoryStore for SqliteStore {
    async fn add_memory(&self, memory: NewMemory) -> Result<MemoryItem> {
        self.write(move |tx| memory::insert(tx, memory)).await
    }

    async fn supersede_memory(&self, id: MemoryId, replacement: NewMemory) -> Result<MemoryItem> {
        self.write(move |tx| memory::supersede(tx, id, replacement))
            .await
    }

    async fn forget_memory(&self, id: MemoryId, by: Actor) -> Result<MemoryItem> {
        self.write(move |tx| memory::forget(tx, id, &by)).await
    }

    async fn restore_memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.write(move |tx| memory::restore(tx, id)).await
    }

    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
        self.write(move |tx| memory::pin(tx, id, pinned)).await
    }

    async fn memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.read(move |c| memory::get(c, id)).await
    }

    async fn list_memory(
        &self,
        channel: ChannelId,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>> {
        self.read(move |c| memory::list(c, channel, &filter)).await
    }

    async fn import_history(
        &self,
        channel: ChannelId,
        plan: ImportPlan,
        actor: Actor,
    ) -> Result<ImportReport> {
        self.write_apart(move |tx| import::import(tx, channel, plan, &actor))
            .await
    }

    async fn recall_lexical(
        &self,
        channel: ChannelId,
        terms: &[String],
        depth: usize,
        walk: Option<usize>,
    ) -> Result<Vec<(ItemKey, f64)>> {
        let terms = terms.to_vec();
        self.read(move |c| recall::lexical(c, channel, &terms, depth, walk))
            .await
    }

    async fn recall_items(&self, keys: Vec<ItemKey>) -> Result<Vec<CandidateItem>> {
        self.read(move |c| recall::items(c, &keys)).await
    }

    async fn thread_external_ids(&self, thread: ThreadId) -> Result<Vec<String>> {
        self.read(move |c| recall::thread_external_ids(c, thread))
            .await
    }

    async fn threads_opened_between(
        &self,
        channel: ChannelId,
        from: i64,
        to: i64,
    ) -> Result<Vec<ThreadId>> {
        self.read(move |c| threads::opened_between(c, channel, from, to))
            .await
    }

    async fn channel_authors(&self, channel: ChannelId) -> Result<Vec<String>> {
        self.read(move |c| threads::authors(c, channel)).await
    }

    async fn embed_backlog(
        &self,
        channel: Option<ChannelId>,
        limit: usize,
        unembedded: Option<String>,
    ) -> Result<Vec<(ItemKey, ChannelId, String)>> {
        self.read(move |c| recall::backlog(c, channel, limit, unembedded.as_deref()))
            .await
    }

    async fn embed_backlog_len(&self, channel: Option<ChannelId>) -> Result<u64> {
        self.read(move |c| recall::backlog_len(c, channel)).await
    }

    async fn put_embeddings(
        &self,
        model: &str,
        vectors: Vec<(ItemKey, ChannelId, Vec<f32>)>,
    ) -> Result<()> {
        let model = model.to_string();
        self.write_apart(move |tx| recall::put_embeddings(tx.conn(), &model, &vectors))
            .await
    }

    async fn channel_vectors(
        &self,
        model: &str,
        channel: ChannelId,
        after: i64,
    ) -> Result<StoredVectors> {
        let model = model.to_string();
        self.read(move |c| recall::vectors(c, &model, channel, after))
            .await
    }

    async fn vector_channels(&self, model: &str) -> Result<Vec<(ChannelId, u64)>> {
        let model = model.to_string();
        self.read(move |c| recall::vector_channels(c, &model)).await
    }
}
