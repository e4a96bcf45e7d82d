//! The computer provider port: which [`Executor`] each channel's computer
//! runs on.
//!
//! The facade never names an executor type; it asks its provider for the
//! executor of a channel every time it needs one. [`LocalComputers`] (the
//! default) answers with this host's [`LocalExecutor`] for every channel;
//! [`OneExecutor`] answers with any executor an embedding application or a
//! test supplies. A provider that keeps some channels' computers on other
//! hosts answers per channel, which is why the question takes the channel.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::OnceCell;

use super::computer::{ComputerOptions, Isolation};
use super::local::LocalExecutor;
use super::port::Executor;
use crate::error::Result;
use crate::model::ChannelId;

/// Chooses the executor each channel's computer runs on.
#[async_trait]
pub trait ComputerProvider: Send + Sync {
    /// The executor `channel`'s computer runs on. Called on every use, so
    /// an implementation caches what is costly to make.
    async fn executor_for(&self, channel: ChannelId) -> Result<Arc<dyn Executor>>;

    /// The executor of this host's own computers: Skipper's host computer,
    /// and what host-wide operations (killing what a lost server left,
    /// reporting the isolation in use) ask.
    async fn host_executor(&self) -> Result<Arc<dyn Executor>>;

    /// [`host_executor`](Self::host_executor) if it is made already,
    /// without making it (a status page must not probe bubblewrap).
    fn host_executor_if_ready(&self) -> Option<Arc<dyn Executor>>;

    /// The isolation channel computers get. Default: the host executor's
    /// (one executor for all); a provider that keeps channels elsewhere
    /// says where.
    async fn channel_isolation(&self) -> Result<Isolation> {
        Ok(self.host_executor().await?.channel_isolation())
    }

    /// [`channel_isolation`](Self::channel_isolation) if it is known
    /// without making an executor.
    fn channel_isolation_if_ready(&self) -> Option<Isolation> {
        self.host_executor_if_ready().map(|e| e.channel_isolation())
    }
}

/// This host's computers: one [`LocalExecutor`], made (and bubblewrap
/// probed) on first use, not when Helm opens, so that commands that never
/// touch a computer pay nothing.
pub struct LocalComputers {
    options: ComputerOptions,
    /// The data root's process ledger (`state/procs`), if commands are
    /// recorded for the sweep after a crash.
    ledger_dir: Option<PathBuf>,
    executor: OnceCell<Arc<LocalExecutor>>,
}

impl std::fmt::Debug for LocalComputers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalComputers")
            .field("isolation", &self.options.isolation)
            .field("ledger_dir", &self.ledger_dir)
            .finish_non_exhaustive()
    }
}

impl LocalComputers {
    /// This host's computers with `options`, recording what they start in
    /// the process ledger at `ledger_dir` (see
    /// [`LocalExecutor::recording_in`]).
    pub fn new(options: ComputerOptions, ledger_dir: Option<PathBuf>) -> Self {
        LocalComputers {
            options,
            ledger_dir,
            executor: OnceCell::new(),
        }
    }

    /// The options its computers are made with.
    pub fn options(&self) -> &ComputerOptions {
        &self.options
    }

    /// The local executor itself (made the first time).
    pub async fn local(&self) -> Result<Arc<LocalExecutor>> {
        self.executor
            .get_or_try_init(|| async {
                let mut executor = LocalExecutor::new(&self.options).await?;
                if let Some(dir) = &self.ledger_dir {
                    executor = executor.recording_in(dir.clone())?;
                }
                Ok(Arc::new(executor))
            })
            .await
            .cloned()
    }
}

#[async_trait]
impl ComputerProvider for LocalComputers {
    async fn executor_for(&self, _channel: ChannelId) -> Result<Arc<dyn Executor>> {
        Ok(self.local().await?)
    }

    async fn host_executor(&self) -> Result<Arc<dyn Executor>> {
        Ok(self.local().await?)
    }

    fn host_executor_if_ready(&self) -> Option<Arc<dyn Executor>> {
        self.executor.get().map(|e| e.clone() as Arc<dyn Executor>)
    }
}

/// One executor for every channel and the host: what an application that
/// brings its own executor (or a test that wraps the local one) injects.
pub struct OneExecutor(pub Arc<dyn Executor>);

#[async_trait]
impl ComputerProvider for OneExecutor {
    async fn executor_for(&self, _channel: ChannelId) -> Result<Arc<dyn Executor>> {
        Ok(self.0.clone())
    }

    async fn host_executor(&self) -> Result<Arc<dyn Executor>> {
        Ok(self.0.clone())
    }

    fn host_executor_if_ready(&self) -> Option<Arc<dyn Executor>> {
        Some(self.0.clone())
    }
}
