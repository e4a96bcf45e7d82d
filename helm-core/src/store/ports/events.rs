//! The [`EventStore`] port: the durable records, that is the event log with
//! its live feed, and the audit log.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::broadcast;

use crate::error::Result;
use crate::events::{Event, EventBody};
use crate::model::{AuditEntry, ChannelId};
use crate::store::types::AuditRecord;

/// The durable records: the event log with its live feed, and the audit log.
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// Durable events with `seq > after`, oldest first, at most `limit`.
    async fn events_after(&self, after: u64, limit: usize) -> Result<Vec<Event>>;

    /// A channel's events of the given types (as [`EventBody::type_name`]
    /// names them), newest first, before `before` (a `seq`) when given, at
    /// most `limit`.
    async fn channel_events(
        &self,
        channel: ChannelId,
        types: &[&'static str],
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Event>>;

    /// The newest event's `seq` (0 for an empty log): where a follower
    /// that wants only what happens from now on starts. One index lookup,
    /// unlike the counts of `stats`.
    async fn event_head(&self) -> Result<u64>;

    /// Live events as they are committed, in `seq` order. Subscribe before
    /// reading [`EventStore::events_after`] to resume without a gap. Shared,
    /// so a slot of the feed's buffer is a pointer and each subscriber's
    /// receive is a reference count, not a copy of the event.
    fn subscribe(&self) -> broadcast::Receiver<Arc<Event>>;

    /// Appends an event that describes a change made outside the store
    /// (a person's file saved in a workspace) and publishes it once
    /// committed, like any other.
    async fn record_event(&self, channel: Option<ChannelId>, body: EventBody) -> Result<Event>;

    /// Appends to the audit log.
    async fn audit(&self, entry: AuditRecord) -> Result<()>;

    /// The newest `limit` audit rows (of one channel, or all), oldest first.
    async fn audit_log(&self, channel: Option<ChannelId>, limit: usize) -> Result<Vec<AuditEntry>>;

    /// Up to `limit` audit rows with ids above `after`, in id order, as
    /// stored: [`crate::audit::verify`] checks their hash chain.
    async fn audit_chain(&self, after: i64, limit: usize) -> Result<Vec<AuditEntry>>;

    /// The highest audit row id ever given out, even if that row is gone
    /// (so rows removed from the end of the log can be told).
    async fn audit_head(&self) -> Result<i64>;
}
