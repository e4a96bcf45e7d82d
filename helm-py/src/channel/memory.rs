//! `Memory` and `AsyncMemory`: a channel's memory (`channel.memory`),
//! recalled, recorded, listed and changed, with the helpers that turn
//! their arguments into the core's.

use std::sync::Arc;

use helm_core::MemoryNote;
use helm_core::model::{MemoryId, MemoryKind, MemoryScope, ThreadId};
use helm_core::store::MemoryFilter;
use pyo3::prelude::*;

use super::twins::twins;
use super::{ChannelCore, check_limit};
use crate::backend::MemoryChange;
use crate::errors::{Result, to_py};
use crate::records::{MemoryItem, RecallHit};

fn memory_note(kind: &str, text: String, thread: Option<i64>, scope: &str) -> Result<MemoryNote> {
    Ok(MemoryNote {
        kind: kind.parse::<MemoryKind>()?,
        content: text,
        thread: thread.map(ThreadId),
        scope: scope.parse::<MemoryScope>()?,
    })
}

fn memory_filter(
    kind: Option<&str>,
    limit: usize,
    all: bool,
    before: Option<i64>,
) -> Result<MemoryFilter> {
    Ok(MemoryFilter {
        kind: kind.map(str::parse::<MemoryKind>).transpose()?,
        thread: None,
        include_inactive: all,
        limit,
        before: before.map(MemoryId),
    })
}

/// A channel's memory (blocking).
#[pyclass(frozen, module = "onehelm")]
pub struct Memory {
    pub(super) core: Arc<ChannelCore>,
}

/// A channel's memory (asyncio).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncMemory {
    pub(super) core: Arc<ChannelCore>,
}

twins! {
    Memory / AsyncMemory;

    /// The `k` best matches for `query` among the channel's memory and
    /// earlier threads, with where they came from.
    async
    /// The `k` best matches for `query` (see `Memory.recall`).
    #[pyo3(signature = (query, k=5))]
    fn recall(&self, query: String, k: i64) -> Vec<RecallHit> {
        // Below 1 is refused by the core as 0 hits asked: nothing overflows.
        let k = usize::try_from(k).unwrap_or(0);
        let core = self.core.clone();
        async move {
            let hits = core.backend.recall(&core.key, &query, k).await?;
            Ok(hits.into_iter().map(RecallHit::from).collect::<Vec<_>>())
        }
    }

    /// Records something worth keeping: `kind` is `decision`, `fact`,
    /// `preference` or `artifact_ref`; `scope` is `channel` or `thread`.
    async
    /// Records something worth keeping (see `Memory.add`).
    #[pyo3(signature = (kind, text, *, thread=None, scope="channel"))]
    fn add(&self, kind: &str, text: String, thread: Option<i64>, scope: &str) -> MemoryItem {
        let note = memory_note(kind, text, thread, scope).map_err(to_py)?;
        let core = self.core.clone();
        async move {
            core.backend
                .remember(&core.key, note)
                .await
                .map(MemoryItem::from)
        }
    }

    /// The channel's memory records, pinned first, then newest first (only
    /// current ones unless `all`); `before` (a record's id, the last of the
    /// page before) gives the next page.
    async
    /// The channel's memory records, a page at a time (see `Memory.list`).
    #[pyo3(signature = (*, kind=None, limit=100, all=false, before=None))]
    fn list(
        &self,
        kind: Option<&str>,
        limit: usize,
        all: bool,
        before: Option<i64>,
    ) -> Vec<MemoryItem> {
        let limit = check_limit(limit).map_err(to_py)?;
        let filter = memory_filter(kind, limit, all, before).map_err(to_py)?;
        let core = self.core.clone();
        async move {
            let items = core.backend.memory(&core.key, filter).await?;
            Ok(items.into_iter().map(MemoryItem::from).collect::<Vec<_>>())
        }
    }

    /// Replaces a record's text; the old text is kept, superseded.
    async
    /// Replaces a record's text (see `Memory.edit`).
    fn edit(&self, id: i64, text: String) -> MemoryItem {
        change(self.core.clone(), id, MemoryChange::Edit(text))
    }

    /// Forgets a record: kept for provenance (saying who forgot it), never
    /// recalled again until restored. Its author and the channel's
    /// managers may.
    async
    /// Forgets a record (see `Memory.forget`).
    fn forget(&self, id: i64) -> MemoryItem {
        change(self.core.clone(), id, MemoryChange::Forget)
    }

    /// Restores a forgotten record: current and recalled again. Whoever may
    /// forget it may restore it.
    async
    /// Restores a forgotten record (see `Memory.restore`).
    fn restore(&self, id: i64) -> MemoryItem {
        change(self.core.clone(), id, MemoryChange::Restore)
    }

    /// Pins a record (always in the agent's context), or unpins it.
    async
    /// Pins or unpins a record (see `Memory.pin`).
    #[pyo3(signature = (id, pinned=true))]
    fn pin(&self, id: i64, pinned: bool) -> MemoryItem {
        change(self.core.clone(), id, MemoryChange::Pin(pinned))
    }
}

/// Changes one of the channel's records.
async fn change(core: Arc<ChannelCore>, id: i64, change: MemoryChange) -> Result<MemoryItem> {
    core.backend
        .change_memory(MemoryId(id), change)
        .await
        .map(MemoryItem::from)
}
