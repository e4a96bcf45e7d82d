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
//! Skipper's host computer stays on this host, as do terminals (not built
//! for a remote computer yet: they are refused with the reason).

mod client;
mod command;
mod files;

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
use super::provider::ComputerProvider;
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
/// Skipper (and for terminals' launcher).
pub struct RemoteComputers {
    executor: Arc<RemoteExecutor>,
    host: Arc<dyn ComputerProvider>,
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
    /// from `host`.
    pub fn new(url: &str, key: &str, host: Arc<dyn ComputerProvider>) -> Result<Self> {
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
