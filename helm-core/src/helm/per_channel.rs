//! Answers kept per channel for a while: where a channel's computer is
//! changes rarely, and asking the store on every command would cost a
//! round trip each.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::model::ChannelId;

/// One answer per channel, each trusted for `ttl` after it was put.
pub(crate) struct PerChannel<V> {
    ttl: Duration,
    entries: Mutex<HashMap<ChannelId, (V, Instant)>>,
}

impl<V: Clone> PerChannel<V> {
    pub(crate) fn new(ttl: Duration) -> Self {
        PerChannel {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// `channel`'s answer, if one was put less than `ttl` ago.
    pub(crate) fn get(&self, channel: ChannelId) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(&channel)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(value, _)| value.clone())
    }

    /// Keeps `value` as `channel`'s answer, from now.
    pub(crate) fn put(&self, channel: ChannelId, value: V) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.insert(channel, (value, Instant::now()));
    }
}
