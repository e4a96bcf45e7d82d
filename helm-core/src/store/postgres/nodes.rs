//! [`NodeStore`] for [`PostgresStore`]: the nodes sharing the database and
//! the holder of each channel's computer (migrations 009 and 010).

use async_trait::async_trait;

use super::codec::{ms, now};
use super::{PostgresStore, failed};
use crate::error::{Error, Result};
use crate::model::ChannelId;
use crate::store::NodeStore;
use crate::store::postgres::prepared::Db;
use crate::store::types::{NodeAddress, NodeRecord};

#[async_trait]
impl NodeStore for PostgresStore {
    fn shared(&self) -> bool {
        true
    }

    async fn register_node(&self, node: NodeRecord) -> Result<u32> {
        let client = self.client().await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] = [
            &node.id,
            &node.computer_url,
            &node.url,
            &node.key_digest,
            &ms(now()),
        ];
        // A node that has started before keeps its number: updated in
        // place, so that no number is drawn for it again.
        let known = client
            .query_opt(
                "UPDATE nodes SET computer_url = coalesce($2, computer_url),
                     url = coalesce($3, url), key_digest = $4, started = $5
                 WHERE id = $1 RETURNING number",
                &params,
            )
            .await
            .map_err(failed("registering this node"))?;
        let row = match known {
            Some(row) => row,
            None => client
                .query_one(
                    "INSERT INTO nodes (id, computer_url, url, key_digest, started)
                     VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (id) DO UPDATE SET
                         computer_url = coalesce(EXCLUDED.computer_url, nodes.computer_url),
                         url = coalesce(EXCLUDED.url, nodes.url),
                         key_digest = EXCLUDED.key_digest, started = EXCLUDED.started
                     RETURNING number",
                    &params,
                )
                .await
                .map_err(failed("registering this node"))?,
        };
        let number: i32 = row.get(0);
        u32::try_from(number)
            .map_err(|_| Error::Internal(format!("node {} has the number {number}", node.id)))
    }

    async fn claim_computer(&self, channel: ChannelId, claimant: &str) -> Result<NodeAddress> {
        const HOLDER: &str = "SELECT h.node_id, n.computer_url, n.url FROM computer_holders h
             LEFT JOIN nodes n ON n.id = h.node_id WHERE h.channel_id = $1";
        let client = self.client().await?;
        // Nearly always held already: one read, no write.
        if let Some(row) = client
            .query_opt(HOLDER, &[&channel.get()])
            .await
            .map_err(failed("reading which node holds a channel's computer"))?
        {
            return Ok(address(&row));
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
        Ok(address(&row))
    }

    async fn node_numbered(&self, number: u32) -> Result<Option<NodeAddress>> {
        let Ok(number) = i32::try_from(number) else {
            return Ok(None);
        };
        let client = self.client().await?;
        Ok(client
            .query_opt(
                "SELECT id, computer_url, url FROM nodes WHERE number = $1",
                &[&number],
            )
            .await
            .map_err(failed("reading a node by its number"))?
            .map(|row| address(&row)))
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

/// A node's address from a row of (id, computer URL, URL).
fn address(row: &tokio_postgres::Row) -> NodeAddress {
    NodeAddress {
        node: row.get(0),
        computer_url: row.get(1),
        url: row.get(2),
    }
}
