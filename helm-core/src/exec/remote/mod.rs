//! Channel computers on another host (`computer.at = "https://…"`), reached
//! over the Open Terminal HTTP protocol: commands through
//! [`RemoteExecutor`], files through [`RemoteFiles`].
//!
//! One URL serves every channel, or, with `{channel}` in it
//! (`https://box-{channel}.internal:8000`), each channel has a server of its
//! own. A server's home directory is the computer's `/workspace`; when
//! several channels share one server, each gets `channels/<id>` under that
//! home, so their files stay apart (the server's host keeps its commands
//! in their world: it is the isolation, not Helm).
//!
//! Terminals are shells on the server too, carried over its WebSocket
//! (see `terminal`), under the same limits as this host's. Skipper's host
//! computer stays on this host, terminals included.

mod client;
mod command;
mod files;
mod terminal;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use client::OtServer;
pub use command::{MAX_REMOTE_STDIN, RemoteExecutor};
pub use files::RemoteFiles;

use super::computer::{Computer, Isolation};
use super::files::{Files, FilesProvider, LocalFiles};
use super::port::Executor;
use super::provider::{ComputerProvider, LocalComputers};
use super::terminal::{
    Opener, TerminalInfo, TerminalManager, TerminalSession, TerminalSize, Terminals,
};
use crate::error::{Error, Result};
use crate::model::ChannelId;

/// How long a connection to a computer server may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A computer server: its URL (perhaps with `{channel}` for the channel's
/// id) and the key it takes.
#[derive(Clone, PartialEq, Eq)]
pub struct ComputerServer {
    /// The URL, `http(s)://`, perhaps with `{channel}`.
    pub url: String,
    /// Its key.
    pub key: String,
}

impl std::fmt::Debug for ComputerServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("ComputerServer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ComputerServer {
    /// A server at `url` with `key`; refused unless the URL is http(s) and
    /// the key is not empty.
    pub fn new(url: &str, key: &str) -> Result<Self> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::invalid(
                "computer URL",
                format!("{url:?}: give the computer server's http(s):// URL"),
            ));
        }
        if key.trim().is_empty() {
            return Err(Error::invalid(
                "computer key",
                "the key is empty; give the key the computer server was started with",
            ));
        }
        Ok(ComputerServer {
            url: url.trim_end_matches('/').to_string(),
            key: key.to_string(),
        })
    }

    /// Where `channel`'s computer is on it: with `{channel}` in the URL,
    /// that server's home; otherwise `channels/<id>` under the one
    /// server's home, so that channels sharing it keep their files apart.
    pub fn for_channel(&self, channel: ChannelId) -> RemoteComputer {
        let (url, subdir) = if self.url.contains("{channel}") {
            (self.url.replace("{channel}", &channel.to_string()), None)
        } else {
            (self.url.clone(), Some(format!("channels/{channel}")))
        };
        RemoteComputer {
            url,
            key: self.key.clone(),
            subdir,
        }
    }
}

/// One channel's computer behind an Open Terminal server.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteComputer {
    /// The server's URL.
    pub url: String,
    /// The key it takes.
    pub key: String,
    /// The directory under its home that is the computer's `/workspace`;
    /// `None`: its home.
    pub subdir: Option<String>,
}

impl std::fmt::Debug for RemoteComputer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("RemoteComputer")
            .field("url", &self.url)
            .field("subdir", &self.subdir)
            .finish_non_exhaustive()
    }
}

/// Where a channel's computer is, as [`ComputerRoutes`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// On this host.
    Here,
    /// Behind an Open Terminal server.
    At(RemoteComputer),
}

/// Says where each channel's computer is, for computers spread over
/// several hosts (the nodes that share a store each hold some).
#[async_trait]
pub trait ComputerRoutes: Send + Sync {
    /// Where `channel`'s computer is. Called on every use: an
    /// implementation caches what is costly to find.
    async fn route(&self, channel: ChannelId) -> Result<Route>;
}

/// How the servers of channel computers are found.
enum Placement {
    /// One server for every channel.
    One(ComputerServer),
    /// Each channel where its route says (this host's channels never get
    /// a server).
    Routed(Arc<dyn ComputerRoutes>),
}

/// Where channel computers are; the servers met so far.
pub(crate) struct Servers {
    placement: Placement,
    http: reqwest::Client,
    cache: Mutex<HashMap<ChannelId, Arc<OtServer>>>,
}

impl Servers {
    /// How they are placed, for `Debug` (never the key).
    pub(crate) fn describe(&self) -> &str {
        match &self.placement {
            Placement::One(server) => &server.url,
            Placement::Routed(_) => "routed per channel",
        }
    }

    /// The server of `computer`'s channel. With routes, the channel's
    /// route was settled by [`Servers::is_here`] when its computer was made.
    pub(crate) fn server_for(&self, computer: &Computer) -> Result<Arc<OtServer>> {
        let Some(channel) = computer.channel else {
            return Err(Error::Internal(
                "a remote computer was asked to run a computer of no channel".into(),
            ));
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(server) = cache.get(&channel) {
            return Ok(server.clone());
        }
        let Placement::One(one) = &self.placement else {
            return Err(Error::Internal(format!(
                "channel {channel}'s computer was used before its route was known"
            )));
        };
        let server = Arc::new(OtServer::new(self.http.clone(), &one.for_channel(channel)));
        cache.insert(channel, server.clone());
        Ok(server)
    }

    /// Whether `channel`'s computer is on this host (only routes say so).
    /// A routed channel's server is settled here: one at a new URL
    /// replaces the one met before.
    async fn is_here(&self, channel: ChannelId) -> Result<bool> {
        let Placement::Routed(routes) = &self.placement else {
            return Ok(false);
        };
        match routes.route(channel).await? {
            Route::Here => Ok(true),
            Route::At(remote) => {
                let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
                if cache.get(&channel).is_none_or(|s| !s.is(&remote)) {
                    let server = OtServer::new(self.http.clone(), &remote);
                    cache.insert(channel, Arc::new(server));
                }
                Ok(false)
            }
        }
    }
}

/// Channel computers on computer servers, and this host's computers for
/// Skipper; the workspace's terminals, on either.
pub struct RemoteComputers {
    executor: Arc<RemoteExecutor>,
    host: Arc<LocalComputers>,
    terminals: TerminalManager,
}

impl std::fmt::Debug for RemoteComputers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("RemoteComputers")
            .field("at", &self.executor.servers.describe())
            .finish_non_exhaustive()
    }
}

impl RemoteComputers {
    /// Channel computers at `url` (an `http(s)://` URL, perhaps with
    /// `{channel}`), authenticated with `key`; the host's own computers
    /// (and the terminal limits) from `host`.
    pub fn new(url: &str, key: &str, host: Arc<LocalComputers>) -> Result<Self> {
        Self::placed(Placement::One(ComputerServer::new(url, key)?), host)
    }

    /// Channel computers wherever `routes` says: on this host (`host`'s),
    /// or behind an Open Terminal server (another host's, or another
    /// node's, which holds the channel's computer).
    pub fn routed(routes: Arc<dyn ComputerRoutes>, host: Arc<LocalComputers>) -> Result<Self> {
        Self::placed(Placement::Routed(routes), host)
    }

    fn placed(placement: Placement, host: Arc<LocalComputers>) -> Result<Self> {
        let servers = Servers {
            placement,
            http: crate::provider::http::build_http_client(CONNECT_TIMEOUT)?,
            cache: Mutex::new(HashMap::new()),
        };
        Ok(RemoteComputers {
            executor: Arc::new(RemoteExecutor {
                servers: Arc::new(servers),
            }),
            terminals: TerminalManager::new(host.options().terminals),
            host,
        })
    }

    /// The same, with the ids of the terminals kept here carrying `node`,
    /// this node's number on a shared store (see
    /// [`terminal_node`](crate::exec::terminal_node)).
    pub fn on_node(mut self, node: u32) -> Self {
        self.terminals = TerminalManager::for_node(self.host.options().terminals, node);
        self
    }

    /// Whether some channels' computers may be on this host.
    fn routed_here(&self) -> bool {
        matches!(self.executor.servers.placement, Placement::Routed(_))
    }
}

#[async_trait]
impl ComputerProvider for RemoteComputers {
    async fn executor_for(&self, channel: ChannelId) -> Result<Arc<dyn Executor>> {
        if self.executor.servers.is_here(channel).await? {
            return self.host.host_executor().await;
        }
        Ok(self.executor.clone())
    }

    async fn host_executor(&self) -> Result<Arc<dyn Executor>> {
        self.host.host_executor().await
    }

    fn host_executor_if_ready(&self) -> Option<Arc<dyn Executor>> {
        self.host.host_executor_if_ready()
    }

    async fn channel_isolation(&self) -> Result<Isolation> {
        if self.routed_here() {
            // What this host's computers get; those held elsewhere are
            // their holder's.
            return self.host.channel_isolation().await;
        }
        Ok(Isolation::Remote)
    }

    fn channel_isolation_if_ready(&self) -> Option<Isolation> {
        if self.routed_here() {
            return self.host.channel_isolation_if_ready();
        }
        Some(Isolation::Remote)
    }
}

impl FilesProvider for RemoteComputers {
    fn files(&self, computer: &Computer, read_only: Option<String>) -> Result<Arc<dyn Files>> {
        if computer.isolation != Isolation::Remote {
            // Skipper's host computer, or a channel's held here.
            return LocalFiles.files(computer, read_only);
        }
        let server = self.executor.servers.server_for(computer)?;
        Ok(Arc::new(RemoteFiles::new(server, read_only)))
    }
}

#[async_trait]
impl Terminals for RemoteComputers {
    async fn open(
        &self,
        computer: &Computer,
        size: TerminalSize,
        opener: Option<Opener>,
    ) -> Result<Arc<TerminalSession>> {
        if computer.isolation != Isolation::Remote {
            // Skipper's host computer, or a channel's held here.
            let executor = self.host.local().await?;
            return self
                .terminals
                .open_as(&executor, computer, size, opener)
                .await;
        }
        let server = self.executor.servers.server_for(computer)?;
        let channel = computer.channel;
        self.terminals
            .open_with(computer, size, opener, |id, scrollback| {
                terminal::open(server, channel, id, size, scrollback)
            })
            .await
    }
    fn get(&self, id: u64) -> Result<Arc<TerminalSession>> {
        self.terminals.get(id)
    }
    fn list(&self, channel: Option<ChannelId>) -> Vec<TerminalInfo> {
        self.terminals.list(channel)
    }
    async fn close(&self, id: u64) -> Result<()> {
        self.terminals.close(id).await
    }
    async fn close_channel(&self, channel: ChannelId) -> Result<()> {
        self.terminals.close_channel(channel).await
    }
}
