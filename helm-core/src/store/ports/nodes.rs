//! The [`NodeStore`] port: the server nodes that share a store, and which
//! of them holds each channel's computer.
//!
//! A channel's computer (its `/workspace`, terminals and running commands)
//! lives on one host. With several nodes on one store, the node that first
//! uses a channel's computer holds it for good; the others reach it
//! through that node, authenticated with the key it registered. A store one
//! node holds alone (SQLite) has nothing to share: the asking node holds
//! every computer.

use async_trait::async_trait;

use crate::error::Result;
use crate::model::ChannelId;
use crate::store::types::{NodeAddress, NodeRecord};

/// The nodes that share the store, and where each channel's computer is.
#[async_trait]
pub trait NodeStore: Send + Sync + 'static {
    /// Whether several nodes may share this store (and so route computers).
    fn shared(&self) -> bool;

    /// Records a node as it starts: its id, where the others reach it and
    /// its computers (each kept from an earlier start when `None`: a CLI on
    /// a server's data root is that node, and says nothing of its address),
    /// and the digest of the key it presents to them. Returns the node's
    /// number: given at its first start and kept, different for each node
    /// of the store (0 on a store one node holds alone).
    async fn register_node(&self, node: NodeRecord) -> Result<u32>;

    /// The node that holds `channel`'s computer, making it `claimant` if no
    /// node holds it yet (of two claimants at once, exactly one wins).
    async fn claim_computer(&self, channel: ChannelId, claimant: &str) -> Result<NodeAddress>;

    /// The node [`register_node`](Self::register_node) gave `number`, if any.
    async fn node_numbered(&self, number: u32) -> Result<Option<NodeAddress>>;

    /// The id of the node whose key has the digest `key_digest`, if any.
    async fn node_by_key(&self, key_digest: &str) -> Result<Option<String>>;
}
