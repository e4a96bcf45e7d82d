//! The store areas [`PostgresStore`] implements so far, each method one
//! pooled connection (and one transaction where it writes).

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::{PostgresStore, audit, events, failed};
use crate::audit::AuditFields;
use crate::error::Result;
use crate::events::{Event, EventBody};
use crate::model::{AuditEntry, ChannelId};
use crate::store::EventStore;
use crate::store::types::AuditRecord;

/// A `usize` limit as SQL's BIGINT.
fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn events_after(&self, after: u64, n: usize) -> Result<Vec<Event>> {
        let client = self.client().await?;
        events::after(&**client, after, limit(n)).await
    }

    async fn channel_events(
        &self,
        channel: ChannelId,
        types: &[&'static str],
        before: Option<u64>,
        n: usize,
    ) -> Result<Vec<Event>> {
        let client = self.client().await?;
        events::of_channel(&**client, channel, types, before, limit(n)).await
    }

    async fn event_head(&self) -> Result<u64> {
        let client = self.client().await?;
        events::head(&**client).await
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.live.subscribe()
    }

    async fn record_event(&self, channel: Option<ChannelId>, body: EventBody) -> Result<Event> {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("starting an event append"))?;
        let event = events::append(&tx, channel, body).await?;
        tx.commit()
            .await
            .map_err(failed("committing an event append"))?;
        Ok(event)
    }

    async fn audit(&self, entry: AuditRecord) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("starting an audit append"))?;
        audit::append(
            &tx,
            AuditFields {
                channel_id: entry.channel_id,
                thread_id: entry.thread_id,
                agent: entry.agent.as_deref(),
                asker: entry.asker.as_deref(),
                action: &entry.action,
                input_summary: &entry.input_summary,
                outcome: &entry.outcome,
            },
        )
        .await?;
        tx.commit()
            .await
            .map_err(failed("committing an audit append"))
    }

    async fn audit_log(&self, channel: Option<ChannelId>, n: usize) -> Result<Vec<AuditEntry>> {
        let client = self.client().await?;
        audit::list(&client, channel, limit(n)).await
    }

    async fn audit_chain(&self, after: i64, n: usize) -> Result<Vec<AuditEntry>> {
        let client = self.client().await?;
        audit::chain(&client, after, limit(n)).await
    }

    async fn audit_head(&self) -> Result<i64> {
        let client = self.client().await?;
        audit::head(&client).await
    }
}
