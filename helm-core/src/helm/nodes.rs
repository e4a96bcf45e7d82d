//! Several server nodes on one store: this node's identity, the key it
//! presents to the others, and the route to each channel's computer.
//!
//! A channel's computer (its `/workspace`, terminals, running commands)
//! lives on one host. The node that first uses it holds it for good (the
//! workspace is on that node's disk); every other node reaches it through
//! the holder's Open Terminal endpoint, with the key this node registered.
//! The holder checks that key against the store, so no secret is shared
//! in configuration and none is stored: only digests.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::auth::secret;
use crate::error::{Error, Result};
use crate::exec::{ComputerRoutes, RemoteComputer, Route};
use crate::model::ChannelId;
use crate::replace_file::{Keep, replace};
use crate::store::{NodeAddress, NodeRecord, Store};
use crate::world::DataRoot;

use super::per_channel::PerChannel;

/// How long a route is trusted before the store is asked again: a holder
/// never changes, but its address may (a node restarted on another port).
const ROUTE_TTL: Duration = Duration::from_secs(10);

/// This node, when several share a store. Set through
/// [`HelmOptions::node`](super::HelmOptions::node).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeOptions {
    /// Where the other nodes reach the channel computers this node holds:
    /// an Open Terminal endpoint URL with `{channel}` for the channel's id
    /// (helm-http serves `<its URL>/api/channels/{channel}/ot`). `None`:
    /// they cannot, and their calls to this node's computers fail saying so.
    pub computer_url: Option<String>,
    /// This node's own address (`http(s)://host:port`), where the other
    /// nodes pass on a person's requests for the terminals open here.
    /// `None`: they cannot, and those requests on other nodes fail saying so.
    pub url: Option<String>,
}

/// Another node of the store, where a person's request must go because
/// what it names lives in that node's memory (see
/// [`Helm::terminals_elsewhere`](super::Helm::terminals_elsewhere)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherNode {
    /// The node's id.
    pub id: String,
    /// Its address, `http(s)://host:port`.
    pub url: String,
}

/// The most node numbers a store gives: a terminal's id is its node's
/// number above 32 bits of its own, and must stay an exact number in
/// JavaScript (below 2^53).
const MAX_NODES: u32 = 1 << 20;

/// The routes of one node: which node holds each channel's computer.
pub(crate) struct NodeRoutes {
    store: Arc<dyn Store>,
    id: String,
    /// The number the store gave this node (see [`NodeStore::register_node`](crate::store::NodeStore::register_node)).
    number: u32,
    /// The key this node presents to the holders.
    key: String,
    /// The holder of each channel's computer.
    known: PerChannel<NodeAddress>,
}

impl NodeRoutes {
    /// Registers this node with the store (its key from `root`, kept across
    /// restarts, and where the others reach it, if it says); returns its
    /// routes.
    ///
    /// The key is the data root's, not the process's: a CLI and a server on
    /// one data root share its computers, so they are one node.
    pub(crate) async fn start(
        root: &DataRoot,
        store: Arc<dyn Store>,
        options: &NodeOptions,
    ) -> Result<Arc<NodeRoutes>> {
        let key = node_key(root)?;
        let digest = secret::digest(&key);
        let id = format!("node-{}", &digest[..12]);
        let number = store
            .register_node(NodeRecord {
                id: id.clone(),
                computer_url: options.computer_url.clone(),
                url: options.url.clone(),
                key_digest: digest,
            })
            .await?;
        if number >= MAX_NODES {
            return Err(Error::Internal(format!(
                "the store gave this node the number {number}, above the {MAX_NODES} nodes \
                 terminal ids can tell apart"
            )));
        }
        tracing::info!(node = %id, number, url = ?options.url, "registered this node");
        Ok(Arc::new(NodeRoutes {
            store,
            id,
            number,
            key,
            known: PerChannel::new(ROUTE_TTL),
        }))
    }

    /// This node's number, which the ids of the terminals it keeps carry.
    pub(crate) fn number(&self) -> u32 {
        self.number
    }

    /// The node that holds `channel`'s computer, making it this one if no
    /// node holds it yet.
    async fn holder(&self, channel: ChannelId) -> Result<NodeAddress> {
        if let Some(holder) = self.known.get(channel) {
            return Ok(holder);
        }
        let holder = self.store.claim_computer(channel, &self.id).await?;
        self.known.put(channel, holder.clone());
        Ok(holder)
    }

    /// The other node that holds `channel`'s computer, if another does.
    pub(crate) async fn other_holder(&self, channel: ChannelId) -> Result<Option<OtherNode>> {
        let holder = self.holder(channel).await?;
        if holder.node == self.id {
            return Ok(None);
        }
        reachable(holder, || format!("the computer of channel {channel}")).map(Some)
    }

    /// The other node numbered `number` (`None` when that is this node);
    /// `not found` as the terminal `id` when no node has that number.
    pub(crate) async fn other_numbered(&self, number: u32, id: u64) -> Result<Option<OtherNode>> {
        if number == self.number {
            return Ok(None);
        }
        let Some(node) = self.store.node_numbered(number).await? else {
            return Err(Error::not_found("terminal", id));
        };
        reachable(node, || format!("terminal {id}")).map(Some)
    }
}

/// Another node where the others reach it, or why they cannot.
fn reachable(node: NodeAddress, what: impl FnOnce() -> String) -> Result<OtherNode> {
    match node.url {
        Some(url) => Ok(OtherNode { id: node.node, url }),
        None => Err(Error::ComputerUnreachable(format!(
            "{} is on node {}, which gave no address the other nodes reach it at; give that \
             node its URL, or use it through that node",
            what(),
            node.node
        ))),
    }
}

#[async_trait]
impl ComputerRoutes for NodeRoutes {
    async fn route(&self, channel: ChannelId) -> Result<Route> {
        let holder = self.holder(channel).await?;
        Ok(if holder.node == self.id {
            Route::Here
        } else {
            let Some(url) = holder.computer_url else {
                return Err(Error::ComputerUnreachable(format!(
                    "the computer of channel {channel} is held by node {}, which gave no \
                     address the other nodes can reach it at; give that node its URL, or use \
                     this channel through that node",
                    holder.node
                )));
            };
            Route::At(RemoteComputer {
                url: url.replace("{channel}", &channel.to_string()),
                key: self.key.clone(),
                subdir: None,
            })
        })
    }
}

/// This node's key: made once, kept in the data root's `node-key` (0600).
fn node_key(root: &DataRoot) -> Result<String> {
    let path = root.path().join("node-key");
    match std::fs::read_to_string(&path) {
        Ok(key) if secret::looks_like(key.trim(), secret::NODE_KEY_PREFIX) => {
            return Ok(key.trim().to_string());
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("reading", &path, e)),
    }
    let key = secret::generate(secret::NODE_KEY_PREFIX)?;
    // Written whole or not at all, so a crash never leaves half a key.
    replace(&path, key.as_bytes(), Keep::Secret).map_err(|e| Error::io("writing", &path, e))?;
    Ok(key)
}
