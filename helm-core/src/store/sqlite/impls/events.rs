//! [`EventStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::super::{SqliteStore, audit, events};
use crate::error::Result;
use crate::events::{Event, EventBody};
use crate::model::{AuditEntry, ChannelId};
use crate::store::EventStore;
use crate::store::types::AuditRecord;

#[async_trait]
impl EventStore for SqliteStore {
    async fn events_after(&self, after: u64, limit: usize) -> Result<Vec<Event>> {
        self.read(move |c| events::after(c, after, limit)).await
    }

    async fn channel_events(
        &self,
        channel: ChannelId,
        types: &[&'static str],
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Event>> {
        let types = types.to_vec();
        self.read(move |c| events::of_channel(c, channel, &types, before, limit))
            .await
    }

    async fn event_head(&self) -> Result<u64> {
        self.read(events::head).await
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.inner.live.subscribe()
    }

    async fn record_event(&self, channel: Option<ChannelId>, body: EventBody) -> Result<Event> {
        self.write(move |tx| tx.emit(channel, body)).await
    }

    async fn audit(&self, entry: AuditRecord) -> Result<()> {
        self.write(move |tx| {
            audit::append(
                tx.conn(),
                audit::AuditInput {
                    channel_id: entry.channel_id,
                    thread_id: entry.thread_id,
                    agent: entry.agent.as_deref(),
                    asker: entry.asker.as_deref(),
                    action: &entry.action,
                    input_summary: &entry.input_summary,
                    outcome: &entry.outcome,
                },
            )
        })
        .await
    }

    async fn audit_log(&self, channel: Option<ChannelId>, limit: usize) -> Result<Vec<AuditEntry>> {
        self.read(move |c| audit::list(c, channel, limit)).await
    }

    async fn audit_chain(&self, after: i64, limit: usize) -> Result<Vec<AuditEntry>> {
        self.read(move |c| audit::chain(c, after, limit)).await
    }

    async fn audit_head(&self) -> Result<i64> {
        self.read(audit::head).await
    }
}
