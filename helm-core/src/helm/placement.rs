//! Where each channel's computer runs: the configured default (this host,
//! or a computer server), or a computer named in the configuration that
//! the channel chose when it was made; with several nodes on one store,
//! a channel on this host's kind of computer is on the node that holds it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::exec::{ComputerRoutes, ComputerServer, Route};
use crate::model::{ChannelId, ChannelKind, ChannelRef};
use crate::store::Store;

use super::nodes::NodeRoutes;
use super::per_channel::PerChannel;

/// How long a channel's choice is trusted before the store is asked again.
const CHOICE_TTL: Duration = Duration::from_secs(10);

/// Where channel computers run, as configured (`[computer] at` and
/// `[computers.<name>]`). Set through
/// [`HelmOptions::computers`](super::HelmOptions::computers); ignored when
/// [`HelmOptions::ports`](super::HelmOptions::ports) names computer ports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComputerPlacement {
    /// Where channels that chose no computer run: this host (`None`) or a
    /// computer server.
    pub default: Option<ComputerServer>,
    /// The computers a channel may choose when it is made, by name.
    pub named: BTreeMap<String, ComputerServer>,
}

impl ComputerPlacement {
    /// Checks that `name` is a computer a channel may choose here.
    pub fn check(&self, name: &str) -> Result<()> {
        if self.named.contains_key(name) {
            return Ok(());
        }
        let known: Vec<&str> = self.named.keys().map(String::as_str).collect();
        Err(Error::invalid(
            "computer",
            if known.is_empty() {
                format!(
                    "{name:?}: this workspace names no computers a channel may choose; leave \
                     it out for the default"
                )
            } else {
                format!(
                    "{name:?} is not one of this workspace's computers ({}); leave it out for \
                     the default",
                    known.join(", ")
                )
            },
        ))
    }
}

/// Where a channel's computer is when it chose none.
pub(crate) enum DefaultRoute {
    /// This host.
    Here,
    /// The node that holds it (several nodes on one store).
    Nodes(Arc<NodeRoutes>),
    /// A computer server.
    Server(ComputerServer),
}

/// The routes of channels that may choose their computer.
pub(crate) struct ChannelRoutes {
    store: Arc<dyn Store>,
    named: BTreeMap<String, ComputerServer>,
    default: DefaultRoute,
    /// Each channel's choice, and when it was read.
    choices: PerChannel<Choice>,
}

/// Where a channel's computer is, as the channel says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    /// `#main`: Skipper's host computer, on every node.
    Host,
    /// The default.
    Default,
    /// A computer the configuration names.
    Named(String),
}

impl ChannelRoutes {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        named: BTreeMap<String, ComputerServer>,
        default: DefaultRoute,
    ) -> Self {
        ChannelRoutes {
            store,
            named,
            default,
            choices: PerChannel::new(CHOICE_TTL),
        }
    }

    /// Where `channel` said its computer is (`Host` for `#main`, whose
    /// computer is each node's host).
    async fn choice(&self, channel: ChannelId) -> Result<Choice> {
        if let Some(choice) = self.choices.get(channel) {
            return Ok(choice);
        }
        let record = self.store.channel(&ChannelRef::Id(channel)).await?;
        let choice = if record.channel.kind == ChannelKind::Home {
            Choice::Host
        } else {
            match record.profile.capability_policy.computer {
                Some(name) => Choice::Named(name),
                None => Choice::Default,
            }
        };
        self.choices.put(channel, choice.clone());
        Ok(choice)
    }

    /// Whether another node holds `channel`'s computer (it is on the
    /// default, and nodes share the store), so that node had better run
    /// its turns: there its commands run where the computer is, and its
    /// MCP servers over stdio can start.
    pub(crate) async fn held_by_another_node(&self, channel: ChannelId) -> Result<bool> {
        let DefaultRoute::Nodes(nodes) = &self.default else {
            return Ok(false);
        };
        if self.choice(channel).await? != Choice::Default {
            return Ok(false);
        }
        Ok(matches!(nodes.route(channel).await?, Route::At(_)))
    }
}

#[async_trait]
impl ComputerRoutes for ChannelRoutes {
    async fn route(&self, channel: ChannelId) -> Result<Route> {
        if let Choice::Named(name) = self.choice(channel).await? {
            return match self.named.get(&name) {
                Some(server) => Ok(Route::At(server.for_channel(channel))),
                None => Err(Error::ComputerUnreachable(format!(
                    "channel {channel} runs on the computer {name:?}, which this server's \
                     configuration does not name; name it again (every node must name the same \
                     computers)"
                ))),
            };
        }
        match &self.default {
            DefaultRoute::Here => Ok(Route::Here),
            DefaultRoute::Nodes(nodes) => nodes.route(channel).await,
            DefaultRoute::Server(server) => Ok(Route::At(server.for_channel(channel))),
        }
    }
}
