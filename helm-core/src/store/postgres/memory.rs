//! [`MemoryStore`] for [`PostgresStore`]: each method one pooled connection,
//! and one transaction where it writes, with its events in that same
//! transaction, as the SQLite store does.

mod import;
pub(crate) mod recall;
pub(crate) mod records;

use async_trait::async_trait;

use super::PostgresStore;
use crate::error::Result;
use crate::memory::import::{ImportPlan, ImportReport};
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::memory::vectors::StoredVectors;
use crate::model::{Actor, ChannelId, MemoryId, MemoryItem, ThreadId};
use crate::store::MemoryStore;
use crate::store::types::{MemoryFilter, NewMemory};

pub(crate) use recall::index_message;

#[async_trait]
impl MemoryStore for PostgresStore {
    async fn add_memory(&self, memory: NewMemory) -> Result<MemoryItem> {
        in_tx!(self, "a memory record", |tx| records::insert(tx, memory))
    }

    async fn supersede_memory(&self, id: MemoryId, replacement: NewMemory) -> Result<MemoryItem> {
        in_tx!(self, "a memory edit", |tx| records::supersede(
            tx,
            id,
            replacement
        ))
    }

    async fn forget_memory(&self, id: MemoryId, by: Actor) -> Result<MemoryItem> {
        in_tx!(self, "forgetting a memory record", |tx| records::forget(
            tx, id, &by
        ))
    }

    async fn restore_memory(&self, id: MemoryId) -> Result<MemoryItem> {
        in_tx!(self, "restoring a memory record", |tx| records::restore(
            tx, id
        ))
    }

    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
        in_tx!(self, "pinning a memory record", |tx| records::pin(
            tx, id, pinned
        ))
    }

    async fn memory(&self, id: MemoryId) -> Result<MemoryItem> {
        let client = self.client().await?;
        records::get(&client, id).await
    }

    async fn list_memory(
        &self,
        channel: ChannelId,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>> {
        let client = self.client().await?;
        records::list(&client, channel, &filter).await
    }

    async fn import_history(
        &self,
        channel: ChannelId,
        plan: ImportPlan,
        actor: Actor,
    ) -> Result<ImportReport> {
        in_tx!(self, "an import", |tx| import::import(
            tx, channel, plan, &actor
        ))
    }

    async fn recall_lexical(
        &self,
        channel: ChannelId,
        terms: &[String],
        depth: usize,
        _walk: Option<usize>,
    ) -> Result<Vec<(ItemKey, f64)>> {
        let client = self.client().await?;
        recall::lexical(&client, channel, terms, depth).await
    }

    async fn recall_items(&self, keys: Vec<ItemKey>) -> Result<Vec<CandidateItem>> {
        let client = self.client().await?;
        recall::items(&client, &keys).await
    }

    async fn thread_external_ids(&self, thread: ThreadId) -> Result<Vec<String>> {
        let client = self.client().await?;
        recall::thread_external_ids(&client, thread).await
    }

    async fn threads_opened_between(
        &self,
        channel: ChannelId,
        from: i64,
        to: i64,
    ) -> Result<Vec<ThreadId>> {
        let client = self.client().await?;
        recall::threads_opened_between(&client, channel, from, to).await
    }

    async fn channel_authors(&self, channel: ChannelId) -> Result<Vec<String>> {
        let client = self.client().await?;
        recall::channel_authors(&client, channel).await
    }

    async fn embed_backlog(
        &self,
        channel: Option<ChannelId>,
        limit: usize,
        unembedded: Option<String>,
    ) -> Result<Vec<(ItemKey, ChannelId, String)>> {
        let client = self.client().await?;
        recall::backlog(&client, channel, limit, unembedded.as_deref()).await
    }

    async fn embed_backlog_len(&self, channel: Option<ChannelId>) -> Result<u64> {
        let client = self.client().await?;
        recall::backlog_len(&client, channel).await
    }

    async fn put_embeddings(
        &self,
        model: &str,
        vectors: Vec<(ItemKey, ChannelId, Vec<f32>)>,
    ) -> Result<()> {
        in_tx!(self, "storing vectors", |tx| recall::put_embeddings(
            tx, model, &vectors
        ))
    }

    async fn channel_vectors(
        &self,
        model: &str,
        channel: ChannelId,
        after: i64,
    ) -> Result<StoredVectors> {
        let client = self.client().await?;
        recall::vectors(&client, model, channel, after).await
    }

    async fn vector_channels(&self, model: &str) -> Result<Vec<(ChannelId, u64)>> {
        let client = self.client().await?;
        recall::vector_channels(&client, model).await
    }
}
