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

/// Where channel computers are, and their key; the servers met so far.
pub(crate) struct Servers {
    /// The URL, perhaps with `{channel}` for the channel's id.
    template: String,
    key: String,
    http: reqwest::Client,
    cache: Mutex<HashMap<ChannelId, Arc<OtServer>>>,
}

impl Servers {
    /// Whether each channel has a server of its own.
    fn per_channel(&self) -> bool {
        self.template.contains("{channel}")
    }

    /// The server of `computer`'s channel.
    pub(crate) fn server_for(&self, computer: &Computer) -> Result<Arc<OtServer>> {
        let Some(channel) = computer.channel else {
            return Err(Error::Internal(
                "a remote computer was asked to run a computer of no channel".into(),
            ));
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let server = cache.entry(channel).or_insert_with(|| {
            let (base, subdir) = if self.per_channel() {
                (
                    self.template.replace("{channel}", &channel.to_string()),
                    None,
                )
            } else {
                (self.template.clone(), Some(format!("channels/{channel}")))
            };
            Arc::new(OtServer::new(self.http.clone(), &base, &self.key, subdir))
        });
        Ok(server.clone())
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
            .field("at", &self.executor.servers.template)
            .finish_non_exhaustive()
    }
}

impl RemoteComputers {
    /// Channel computers at `url` (an `http(s)://` URL, perhaps with
    /// `{channel}`), authenticated with `key`; the host's own computers
    /// (and the terminal limits) from `host`.
    pub fn new(url: &str, key: &str, host: Arc<LocalComputers>) -> Result<Self> {
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
        let servers = Servers {
            template: url.trim_end_matches('/').to_string(),
            key: key.to_string(),
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
}

#[async_trait]
impl ComputerProvider for RemoteComputers {
    async fn executor_for(&self, _channel: ChannelId) -> Result<Arc<dyn Executor>> {
        Ok(self.executor.clone())
    }

    async fn host_executor(&self) -> Result<Arc<dyn Executor>> {
        self.host.host_executor().await
    }

    fn host_executor_if_ready(&self) -> Option<Arc<dyn Executor>> {
        self.host.host_executor_if_ready()
    }

    async fn channel_isolation(&self) -> Result<Isolation> {
        Ok(Isolation::Remote)
    }

    fn channel_isolation_if_ready(&self) -> Option<Isolation> {
        Some(Isolation::Remote)
    }
}

impl FilesProvider for RemoteComputers {
    fn files(&self, computer: &Computer, read_only: Option<String>) -> Result<Arc<dyn Files>> {
        if computer.isolation != Isolation::Remote {
            // Skipper's host computer.
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
            // Skipper's host computer.
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
