//! [`NodeStore`] for [`PostgresStore`]: the nodes sharing the database and
//! the holder of each channel's computer (migration 009).

use async_trait::async_trait;

use super::codec::{ms, now};
use super::{PostgresStore, failed};
use crate::error::{Error, Result};
use crate::model::ChannelId;
use crate::store::NodeStore;
use crate::store::types::{ComputerHolder, NodeRecord};

#[async_trait]
impl NodeStore for PostgresStore {
    fn shared(&self) -> bool {
        true
    }

    async fn register_node(&self, node: NodeRecord) -> Result<()> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO nodes (id, computer_url, key_digest, started) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (id) DO UPDATE SET
                     computer_url = coalesce(EXCLUDED.computer_url, nodes.computer_url),
                     key_digest = EXCLUDED.key_digest, started = EXCLUDED.started",
                &[&node.id, &node.computer_url, &node.key_digest, &ms(now())],
            )
            .await
            .map_err(failed("registering this node"))?;
        Ok(())
    }

    async fn claim_computer(&self, channel: ChannelId, claimant: &str) -> Result<ComputerHolder> {
        const HOLDER: &str = "SELECT h.node_id, n.computer_url FROM computer_holders h
             LEFT JOIN nodes n ON n.id = h.node_id WHERE h.channel_id = $1";
        let client = self.client().await?;
        let read = |row: tokio_postgres::Row| ComputerHolder {
            node: row.get(0),
            computer_url: row.get(1),
        };
        // Nearly always held already: one read, no write.
        if let Some(row) = client
            .query_opt(HOLDER, &[&channel.get()])
            .await
            .map_err(failed("reading which node holds a channel's computer"))?
        {
            return Ok(read(row));
        }
        // Claimed only if the channel exists and no node holds it; of two
        // claimants at once, the primary key lets exactly one in.
        client
            .execute(
                "INSERT INTO computer_holders (channel_id, node_id, claimed)
                 SELECT id, $2, $3 FROM channels WHERE id = $1
                 ON CONFLICT (channel_id) DO NOTHING",
                &[&channel.get(), &claimant, &ms(now())],
            )
            .await
            .map_err(failed("claiming a channel's computer"))?;
        let row = client
            .query_opt(HOLDER, &[&channel.get()])
            .await
            .map_err(failed("reading which node holds a channel's computer"))?
            .ok_or_else(|| Error::not_found("channel", channel))?;
        Ok(read(row))
    }

    async fn node_by_key(&self, key_digest: &str) -> Result<Option<String>> {
        let client = self.client().await?;
        Ok(client
            .query_opt("SELECT id FROM nodes WHERE key_digest = $1", &[&key_digest])
            .await
            .map_err(failed("reading a node by its key"))?
            .map(|r| r.get(0)))
    }
}
