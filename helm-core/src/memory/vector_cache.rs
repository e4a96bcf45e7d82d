//! The channels' vectors recall keeps in memory between searches, bounded
//! by a byte budget (`memory.vector_cache_mb`).
//!
//! Loading a channel's vectors reads all of them from the store, so they are
//! kept for the next search; but a workspace with many large channels would
//! otherwise keep every one it ever searched (about 1.5 GB at a million
//! items). The cache holds at most the budget: inserting past it drops the
//! least recently searched channels first, and a channel larger than the
//! whole budget is searched but not kept. A search in progress holds its
//! channel's vectors (an `Arc`) until it ends, and a merge (see
//! [`ChannelVectors::merged`]) builds a channel's new matrix beside the old
//! one, so memory can briefly exceed the budget by the channels being
//! searched or merged at that moment.

use std::collections::HashMap;
use std::sync::Arc;

use super::vectors::ChannelVectors;
use crate::model::ChannelId;

/// The budget when the configuration names none: 256 MiB, about 340,000
/// items of 384 dimensions (in bfloat16).
pub const DEFAULT_VECTOR_CACHE_BYTES: usize = 256 << 20;

/// Channels' vectors, least recently used dropped first past the budget.
pub struct VectorCache {
    budget: usize,
    used: usize,
    clock: u64,
    entries: HashMap<ChannelId, Entry>,
}

struct Entry {
    vectors: Arc<ChannelVectors>,
    bytes: usize,
    last_used: u64,
}

/// How full the cache is, for status and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VectorCacheUse {
    /// Bytes of the vectors kept.
    pub bytes: usize,
    /// The budget.
    pub budget: usize,
    /// Channels whose vectors are kept.
    pub channels: usize,
    /// Of those, the channels searched through an index (large ones).
    pub indexed: usize,
}

impl VectorCache {
    /// An empty cache that keeps at most `budget` bytes.
    pub fn new(budget: usize) -> Self {
        VectorCache {
            budget,
            used: 0,
            clock: 0,
            entries: HashMap::new(),
        }
    }

    /// A channel's vectors if kept (it becomes the most recently used).
    pub fn get(&mut self, channel: ChannelId) -> Option<Arc<ChannelVectors>> {
        self.clock += 1;
        let entry = self.entries.get_mut(&channel)?;
        entry.last_used = self.clock;
        Some(entry.vectors.clone())
    }

    /// Keeps a channel's vectors, dropping the least recently used channels
    /// until they fit; vectors larger than the whole budget are not kept
    /// (the answer says whether they were).
    pub fn insert(&mut self, channel: ChannelId, vectors: Arc<ChannelVectors>) -> bool {
        self.remove(channel);
        let bytes = vectors.bytes();
        if bytes > self.budget {
            return false;
        }
        while self.used + bytes > self.budget {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(c, _)| *c)
            else {
                break;
            };
            self.remove(oldest);
        }
        self.clock += 1;
        self.used += bytes;
        self.entries.insert(
            channel,
            Entry {
                vectors,
                bytes,
                last_used: self.clock,
            },
        );
        true
    }

    /// Whether a channel's vectors are kept (without counting as a use).
    pub fn holds(&self, channel: ChannelId) -> bool {
        self.entries.contains_key(&channel)
    }

    /// Forgets a channel's vectors (they changed: read them again).
    pub fn remove(&mut self, channel: ChannelId) {
        if let Some(entry) = self.entries.remove(&channel) {
            self.used -= entry.bytes;
        }
    }

    /// How full it is.
    pub fn usage(&self) -> VectorCacheUse {
        VectorCacheUse {
            bytes: self.used,
            budget: self.budget,
            channels: self.entries.len(),
            indexed: self
                .entries
                .values()
                .filter(|e| e.vectors.is_indexed())
                .count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::recall::ItemKey;

    /// A channel's vectors of `items` rows of 4 dimensions.
    fn vectors(items: i64) -> Arc<ChannelVectors> {
        Arc::new(ChannelVectors::new(
            (0..items).map(|k| (ItemKey(k), vec![1.0; 4])).collect(),
        ))
    }

    #[test]
    fn past_the_budget_the_least_recently_searched_channel_goes_first() {
        let one = vectors(10).bytes();
        let mut cache = VectorCache::new(2 * one);
        cache.insert(ChannelId(1), vectors(10));
        cache.insert(ChannelId(2), vectors(10));
        // Channel 1 was searched since, so channel 2 is the one to go.
        assert!(cache.get(ChannelId(1)).is_some());
        cache.insert(ChannelId(3), vectors(10));
        assert!(cache.get(ChannelId(2)).is_none());
        assert!(cache.get(ChannelId(1)).is_some());
        assert!(cache.get(ChannelId(3)).is_some());
        assert_eq!(
            cache.usage(),
            VectorCacheUse {
                bytes: 2 * one,
                budget: 2 * one,
                channels: 2,
                indexed: 0,
            }
        );
    }

    #[test]
    fn vectors_larger_than_the_budget_are_not_kept_and_evict_nothing() {
        let mut cache = VectorCache::new(vectors(10).bytes());
        cache.insert(ChannelId(1), vectors(10));
        cache.insert(ChannelId(2), vectors(11));
        assert!(cache.get(ChannelId(2)).is_none());
        assert!(cache.get(ChannelId(1)).is_some());
    }

    #[test]
    fn replacing_or_removing_a_channel_keeps_the_count_right() {
        let mut cache = VectorCache::new(1 << 20);
        cache.insert(ChannelId(1), vectors(10));
        cache.insert(ChannelId(1), vectors(20));
        assert_eq!(cache.usage().bytes, vectors(20).bytes());
        assert_eq!(cache.usage().channels, 1);
        cache.remove(ChannelId(1));
        assert_eq!(cache.usage().bytes, 0);
        assert_eq!(cache.usage().channels, 0);
    }
}
