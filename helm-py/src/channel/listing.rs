//! A channel's threads, a page at a time: `threads(…)`'s arguments read
//! on the Python thread, the page read off it, resuming after the thread
//! (or thread id) the page before ended with.

use helm_core::model::{ChannelId, ThreadId};
use helm_core::store::ThreadCursor;
use helm_core::{ErrorKind, ThreadFilter};
use pyo3::prelude::*;

use super::thread::{AsyncThread, Thread};
use super::{ChannelCore, check_limit};
use crate::backend::SharedBackend;
use crate::errors::{Result, failure, to_py};

/// Where `threads(before=…)` resumes.
enum Before {
    /// After a thread object, as it was read: exactly where its page ended,
    /// even if the thread was active since.
    Read(helm_core::model::Thread),
    /// After a thread id, as the thread is now.
    Id(ThreadId),
}

impl Before {
    /// A `Thread`, an `AsyncThread` or a thread id; anything else is
    /// invalid input.
    fn from_arg(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let core = if let Ok(thread) = value.cast::<Thread>() {
            thread.get().core.clone()
        } else if let Ok(thread) = value.cast::<AsyncThread>() {
            thread.get().core.clone()
        } else if let Ok(id) = value.extract::<i64>() {
            return Ok(Before::Id(ThreadId(id)));
        } else {
            return Err(to_py(failure(
                ErrorKind::Invalid,
                "invalid",
                "before is a thread from the page before, or a thread id",
            )));
        };
        Ok(match core.snapshot() {
            Some(thread) => Before::Read(thread),
            None => Before::Id(ThreadId(core.id())),
        })
    }
}

/// One `threads(…)` call, ready to read off the Python thread.
pub(super) struct ThreadListing {
    backend: SharedBackend,
    key: String,
    channel: Option<ChannelId>,
    filter: ThreadFilter,
    before: Option<Before>,
}

impl ThreadListing {
    /// The page's threads; a place to resume from is resolved first.
    pub(super) async fn read(mut self, limit: usize) -> Result<Vec<helm_core::model::Thread>> {
        let limit = check_limit(limit)?;
        self.filter.before = match (self.before, self.channel) {
            (None, _) => None,
            (Some(Before::Read(thread)), Some(channel)) => {
                Some(ThreadCursor::after_in(&thread, channel)?)
            }
            (Some(Before::Read(thread)), None) => {
                Some(self.backend.thread_cursor(&self.key, thread.id).await?)
            }
            (Some(Before::Id(id)), _) => Some(self.backend.thread_cursor(&self.key, id).await?),
        };
        Ok(self
            .backend
            .threads(&self.key, &self.filter, limit)
            .await?
            .threads)
    }
}

impl ChannelCore {
    /// A listing of this channel's threads, from `threads(…)`'s arguments.
    pub(super) fn listing(
        &self,
        search: Option<String>,
        archived: Option<bool>,
        before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ThreadListing> {
        Ok(ThreadListing {
            backend: self.backend.clone(),
            key: self.key.clone(),
            channel: self.snapshot().map(|r| r.channel.id),
            filter: ThreadFilter {
                archived,
                search,
                before: None,
            },
            before: before.map(Before::from_arg).transpose()?,
        })
    }
}
