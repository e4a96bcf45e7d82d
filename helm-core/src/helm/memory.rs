//! Memory and recall, as the facade offers them.

use std::io::BufRead;

use crate::error::{Error, Result};
use crate::memory::fusion::{Candidates, RecallTuning};
use crate::memory::import::{ImportReport, parse_history};
use crate::memory::recall::{RecallHit, RecallQuery};
use crate::model::{
    Actor, AuthorType, ChannelRef, MemoryId, MemoryItem, MemoryKind, MemoryScope, MemorySource,
    MemoryStatus, ThreadId, User,
};
use crate::store::{MemoryFilter, NewMemory};

use super::{Audience, Helm};

/// The longest memory record accepted, in bytes.
pub const MAX_MEMORY: usize = 8 * 1024;

/// A record a person adds by hand.
#[derive(Debug, Clone)]
pub struct MemoryNote {
    /// Its kind.
    pub kind: MemoryKind,
    /// Its text.
    pub content: String,
    /// The thread it belongs to, if any.
    pub thread: Option<ThreadId>,
    /// How widely it applies (default: the channel).
    pub scope: MemoryScope,
}

fn check_content(content: &str) -> Result<String> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Err(Error::invalid("memory", "a memory record needs some text"));
    }
    if trimmed.len() > MAX_MEMORY {
        return Err(Error::invalid(
            "memory",
            format!(
                "{} bytes is over the {MAX_MEMORY}-byte limit; keep records short",
                trimmed.len()
            ),
        ));
    }
    Ok(trimmed.to_string())
}

impl Helm {
    /// Recalls from a channel's memory and history (plus records shared with
    /// the workspace), with provenance, as the operator of the data
    /// directory (who sees everything; see [`Audience::operator`]). Serving
    /// people, use [`Helm::recall_as`].
    pub async fn recall(&self, channel: &ChannelRef, query: RecallQuery) -> Result<Vec<RecallHit>> {
        let record = self.channel(channel).await?;
        self.inner
            .recall
            .recall(&Audience::operator(), record.channel.id, &query)
            .await
    }

    /// What recall gathers for `query` in a channel before fusion, for
    /// measuring and tuning fusion on fixed candidates (the LoCoMo bench):
    /// [`crate::memory::fusion::fuse`] turns it into what
    /// [`Helm::recall`] would return with the same tuning. As the operator,
    /// like [`Helm::recall`].
    pub async fn recall_candidates(
        &self,
        channel: &ChannelRef,
        query: &RecallQuery,
        tuning: &RecallTuning,
    ) -> Result<Candidates> {
        let record = self.channel(channel).await?;
        self.inner
            .recall
            .candidates(&Audience::operator(), record.channel.id, query, tuning)
            .await
    }

    /// The fusion constants recall uses when a query names none: those
    /// for recall by meaning with an embedder, by words without.
    pub fn recall_tuning(&self) -> RecallTuning {
        self.inner.recall.default_tuning()
    }

    /// A channel's memory records: current ones, or all with `include_inactive`.
    pub async fn memory_list(
        &self,
        channel: &ChannelRef,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>> {
        let record = self.channel(channel).await?;
        self.inner
            .store
            .list_memory(record.channel.id, filter)
            .await
    }

    /// A memory record.
    pub async fn memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.inner.store.memory(id).await
    }

    /// A memory record of a channel `actor` may see; otherwise `not found`.
    pub async fn visible_memory(&self, actor: &User, id: MemoryId) -> Result<MemoryItem> {
        let item = self.inner.store.memory(id).await?;
        match self
            .visible_channel(actor, &ChannelRef::Id(item.channel_id))
            .await
        {
            Ok(_) => Ok(item),
            Err(Error::NotFound { .. }) => Err(Error::not_found("memory", id)),
            Err(e) => Err(e),
        }
    }

    /// The memory records of a channel `actor` may see, a page at a time:
    /// `filter.before` names the last record of the page before, which
    /// must be one of this channel's (otherwise invalid input).
    pub async fn channel_memory(
        &self,
        actor: &User,
        channel: &ChannelRef,
        filter: MemoryFilter,
    ) -> Result<Vec<MemoryItem>> {
        let record = self.visible_channel(actor, channel).await?;
        if let Some(thread) = filter.thread {
            let found = self.inner.store.thread(thread).await?;
            if found.channel_id != record.channel.id {
                return Err(Error::not_found("thread", thread));
            }
        }
        if let Some(before) = filter.before {
            // A record of another channel marks no place in this list: a
            // page cut at it would silently skip or repeat records.
            let known = match self.inner.store.memory(before).await {
                Ok(item) => item.channel_id == record.channel.id,
                Err(Error::NotFound { .. }) => false,
                Err(e) => return Err(e),
            };
            if !known {
                return Err(Error::invalid(
                    "page",
                    format!(
                        "memory record {before} is not in {}; page on from the last record listed",
                        record.channel.name
                    ),
                ));
            }
        }
        self.inner
            .store
            .list_memory(record.channel.id, filter)
            .await
    }

    /// Recalls from a channel `actor` may see. Records another channel
    /// shared with the workspace come back only when `actor` may see that
    /// channel too, so a private channel's memory never leaks through them.
    pub async fn recall_as(
        &self,
        actor: &User,
        channel: &ChannelRef,
        query: RecallQuery,
    ) -> Result<Vec<RecallHit>> {
        use crate::memory::recall::MAX_LIMIT;
        if !(1..=MAX_LIMIT).contains(&query.limit) {
            return Err(Error::invalid(
                "limit",
                format!("a recall returns 1 to {MAX_LIMIT} hits; ask for that many"),
            ));
        }
        let record = self.visible_channel(actor, channel).await?;
        let audience = self.audience(actor).await?;
        self.inner
            .recall
            .recall(&audience, record.channel.id, &query)
            .await
    }

    /// Adds a record by hand, as `actor`.
    pub async fn remember(
        &self,
        actor: &User,
        channel: &ChannelRef,
        note: MemoryNote,
    ) -> Result<MemoryItem> {
        let record = self.visible_channel(actor, channel).await?;
        let content = check_content(&note.content)?;
        if let Some(thread) = note.thread {
            let t = self.inner.store.thread(thread).await?;
            if t.channel_id != record.channel.id {
                return Err(Error::not_found("thread", thread));
            }
        }
        if note.kind == MemoryKind::Summary {
            return Err(Error::invalid(
                "memory kind",
                "summaries are written by summarising a thread, not added by hand",
            ));
        }
        self.inner
            .store
            .add_memory(NewMemory {
                channel_id: record.channel.id,
                thread_id: note.thread,
                kind: note.kind,
                content,
                source: MemorySource::UserAction,
                source_message_id: None,
                author_type: AuthorType::Human,
                author_name: Some(actor.name.clone()),
                scope: note.scope,
                confidence: None,
                pinned: false,
            })
            .await
    }

    /// Edits a record, as `actor`: the old one is kept as superseded,
    /// linked to the new one, which is `actor`'s. Whoever may forget a
    /// record may edit it ([`Helm::may_change_memory`]).
    pub async fn edit_memory(
        &self,
        actor: &User,
        id: MemoryId,
        content: &str,
    ) -> Result<MemoryItem> {
        let old = self.visible_memory(actor, id).await?;
        self.check_may_change_memory(actor, &old, "edit").await?;
        let content = check_content(content)?;
        self.inner
            .store
            .supersede_memory(
                id,
                NewMemory {
                    channel_id: old.channel_id,
                    thread_id: old.thread_id,
                    kind: old.kind,
                    content,
                    source: MemorySource::UserAction,
                    source_message_id: old.source_message_id,
                    author_type: AuthorType::Human,
                    author_name: Some(actor.name.clone()),
                    scope: old.scope,
                    confidence: old.confidence,
                    pinned: old.pinned,
                },
            )
            .await
    }

    /// Forgets a record, as `actor`: it stays for provenance, saying who
    /// forgot it and when, but is never recalled until restored. Its
    /// author and the channel's managers forget it
    /// ([`Helm::may_change_memory`]).
    pub async fn forget_memory(&self, actor: &User, id: MemoryId) -> Result<MemoryItem> {
        let item = self.visible_memory(actor, id).await?;
        self.check_may_change_memory(actor, &item, "forget").await?;
        self.inner.store.forget_memory(id, Actor::user(actor)).await
    }

    /// Brings a forgotten record back to current, as `actor` (whoever may
    /// forget it may restore it). It comes back unpinned.
    pub async fn restore_memory(&self, actor: &User, id: MemoryId) -> Result<MemoryItem> {
        let item = self.visible_memory(actor, id).await?;
        self.check_may_change_memory(actor, &item, "restore")
            .await?;
        self.inner.store.restore_memory(id).await
    }

    /// Whether `actor` may change `item`: edit, pin or unpin, forget and
    /// restore it. The person who wrote it may, and whoever manages its
    /// channel (the Captain, admins, its creator and owners). Records
    /// written by agents or by Helm (summaries, imports) have no person
    /// behind them, so they are the managers' to change: a member who
    /// sees one that is wrong asks a manager, as for anyone else's record.
    /// Seeing a record is not enough: a change reaches everyone the
    /// channel's agent serves.
    pub async fn may_change_memory(&self, actor: &User, item: &MemoryItem) -> Result<bool> {
        if item.author_type == AuthorType::Human
            && item.author_name.as_deref() == Some(actor.name.as_str())
        {
            return Ok(true);
        }
        let record = self.channel(&ChannelRef::Id(item.channel_id)).await?;
        self.manages_channel(actor, &record.channel).await
    }

    /// [`Helm::may_change_memory`] as a `forbidden` error naming who may
    /// `verb` the record.
    async fn check_may_change_memory(
        &self,
        actor: &User,
        item: &MemoryItem,
        verb: &str,
    ) -> Result<()> {
        if self.may_change_memory(actor, item).await? {
            return Ok(());
        }
        let author = match (&item.author_type, &item.author_name) {
            (AuthorType::Human, Some(name)) => format!("its author ({name}), "),
            _ => String::new(),
        };
        let record = self.channel(&ChannelRef::Id(item.channel_id)).await?;
        Err(Error::Forbidden(format!(
            "only {author}the Captain, an admin or an owner of {} may {verb} memory {}; ask one of them",
            record.channel.name, item.id
        )))
    }

    /// Pins (always offered to the agent) or unpins a record, as `actor`:
    /// whoever may forget it ([`Helm::may_change_memory`]).
    pub async fn pin_memory(&self, actor: &User, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
        let item = self.visible_memory(actor, id).await?;
        let verb = if pinned { "pin" } else { "unpin" };
        self.check_may_change_memory(actor, &item, verb).await?;
        if item.status != MemoryStatus::Current && pinned {
            return Err(Error::Conflict(format!(
                "memory {id} is {}; pin the current record",
                item.status
            )));
        }
        self.inner.store.pin_memory(id, pinned).await
    }

    /// Imports a JSON Lines history into a channel: checked whole, written in
    /// one transaction, nothing left behind on failure. The channel's
    /// managers import.
    pub async fn import_history(
        &self,
        actor: &User,
        channel: &ChannelRef,
        reader: impl BufRead + Send + 'static,
    ) -> Result<ImportReport> {
        let record = self.visible_channel(actor, channel).await?;
        if !self.manages_channel(actor, &record.channel).await? {
            return Err(Error::Forbidden(format!(
                "only the Captain, an admin or an owner of {} imports history into it",
                record.channel.name
            )));
        }
        let plan = tokio::task::spawn_blocking(move || parse_history(reader))
            .await
            .map_err(|e| Error::Internal(format!("import task failed: {e}")))??;
        self.inner
            .store
            .import_history(record.channel.id, plan, Actor::user(actor))
            .await
    }

    /// Embeds the items waiting for meaning-based recall (of one channel, or
    /// all), reporting `(done, total)` as it goes. Without an embedder this
    /// does nothing and returns 0.
    pub async fn embed_backlog(
        &self,
        channel: Option<&ChannelRef>,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64> {
        let channel = match channel {
            Some(c) => Some(self.channel(c).await?.channel.id),
            None => None,
        };
        self.inner.recall.embed_backlog(channel, progress).await
    }

    /// Embeds the queued items of `channel` that have no vector yet, so a
    /// recall made outside the server finds them by meaning; items queued
    /// to be embedded again keep their vector until the server gets to
    /// them. Returns how many were embedded.
    pub async fn embed_unembedded(&self, channel: &ChannelRef) -> Result<u64> {
        let channel = self.channel(channel).await?.channel.id;
        self.inner.recall.embed_unembedded(channel).await
    }

    /// How many items wait to be embedded.
    pub async fn embed_backlog_len(&self, channel: Option<&ChannelRef>) -> Result<u64> {
        let channel = match channel {
            Some(c) => Some(self.channel(c).await?.channel.id),
            None => None,
        };
        self.inner.store.embed_backlog_len(channel).await
    }

    /// How recall works here: by meaning with which model, or by words
    /// only and why.
    pub fn recall_mode(&self) -> &crate::memory::config::RecallMode {
        &self.inner.recall_mode
    }

    /// Reads the vectors of the most recently embedded channels into
    /// memory while they fit recall's cache, off any request, so their
    /// first search does not wait for them (a server calls it at start).
    /// Returns how many channels were read.
    pub async fn preload_recall(&self) -> Result<usize> {
        self.inner.recall.preload().await
    }

    /// How much of recall's vector cache is in use (`memory.vector_cache_mb`).
    pub fn vector_cache(&self) -> Option<crate::memory::vector_cache::VectorCacheUse> {
        self.inner.recall.vector_cache()
    }

    /// The embedding model recall uses, if any.
    pub fn embedding_model(&self) -> Option<&str> {
        self.inner.recall.embedding_model()
    }
}
