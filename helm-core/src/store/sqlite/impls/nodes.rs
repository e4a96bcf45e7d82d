//! [`NodeStore`] for [`SqliteStore`]: one node holds an SQLite store alone
//! (the data root's driver lock), so it holds every channel's computer and
//! no other node has a key to present.

use async_trait::async_trait;
use rusqlite::OptionalExtension;

use super::super::SqliteStore;
use crate::error::{Error, Result};
use crate::model::ChannelId;
use crate::store::NodeStore;
use crate::store::types::{NodeAddress, NodeRecord};

#[async_trait]
impl NodeStore for SqliteStore {
    fn shared(&self) -> bool {
        false
    }

    async fn register_node(&self, _node: NodeRecord) -> Result<u32> {
        Ok(0)
    }

    async fn claim_computer(&self, channel: ChannelId, claimant: &str) -> Result<NodeAddress> {
        let exists = self
            .read(move |c| {
                Ok(c.prepare_cached("SELECT 1 FROM channels WHERE id = ?1")?
                    .query_row([channel], |_| Ok(()))
                    .optional()?
                    .is_some())
            })
            .await?;
        if !exists {
            return Err(Error::not_found("channel", channel));
        }
        Ok(NodeAddress {
            node: claimant.to_string(),
            computer_url: None,
            url: None,
        })
    }

    async fn node_numbered(&self, _number: u32) -> Result<Option<NodeAddress>> {
        Ok(None)
    }

    async fn node_by_key(&self, _key_digest: &str) -> Result<Option<String>> {
        Ok(None)
    }
}
