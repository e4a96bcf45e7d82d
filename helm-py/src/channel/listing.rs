//! A channel's threads, a page at a time: `threads(…)`'s arguments read
//! on the Python thread, the page read off it, resuming after the thread
//! (or thread id) the page before ended with; and `iter_threads(…)`, every
//! thread, a page read only when the walk reaches it.

use std::collections::VecDeque;
use std::sync::Arc;

use helm_core::model::{ChannelId, ThreadId};
use helm_core::store::ThreadCursor;
use helm_core::{ErrorKind, ThreadFilter, ThreadList};
use pyo3::exceptions::PyStopAsyncIteration;
use pyo3::prelude::*;

use super::thread::{AsyncThread, Thread};
use super::{ChannelCore, check_limit, check_range};
use crate::backend::SharedBackend;
use crate::errors::{Result, failure, to_py};
use crate::runtime::{awaitable_py, blocking};

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
    /// One page of threads: the first, or the one after the place the
    /// listing resumes from (resolved on the first read, then kept as the
    /// filter's cursor).
    async fn page(&mut self, limit: usize) -> Result<ThreadList> {
        if let Some(before) = &self.before {
            let cursor = match (before, self.channel) {
                (Before::Read(thread), Some(channel)) => ThreadCursor::after_in(thread, channel)?,
                (Before::Read(thread), None) => {
                    self.backend.thread_cursor(&self.key, thread.id).await?
                }
                (Before::Id(id), _) => self.backend.thread_cursor(&self.key, *id).await?,
            };
            self.filter.before = Some(cursor);
            self.before = None;
        }
        self.backend.threads(&self.key, &self.filter, limit).await
    }

    /// The page's threads (`threads(…)`).
    pub(super) async fn read(mut self, limit: usize) -> Result<Vec<helm_core::model::Thread>> {
        let limit = check_limit(limit)?;
        Ok(self.page(limit).await?.threads)
    }

    /// A walk over every thread of the listing, `page_size` at a time
    /// (`iter_threads(…)`); it reads nothing until asked for a thread.
    pub(super) fn walk(self, page_size: usize) -> Result<ThreadWalk> {
        Ok(ThreadWalk {
            page_size: check_range("page_size", page_size)?,
            listing: self,
            read: VecDeque::new(),
            more: true,
        })
    }
}

/// A lazy walk over a channel's threads: the threads of the page read last,
/// and whether another page follows. A page is read only when the one
/// before is used up and the core said more remain (its `next`), so a walk
/// that stops early reads no page it did not need, and the last page is
/// never followed by an empty one.
pub(super) struct ThreadWalk {
    listing: ThreadListing,
    page_size: usize,
    read: VecDeque<helm_core::model::Thread>,
    more: bool,
}

impl ThreadWalk {
    /// The next thread, reading the next page when this one is used up;
    /// `None` at the end. A failed read leaves the walk where it was, so
    /// asking again retries that page.
    pub(super) async fn next(&mut self) -> Result<Option<helm_core::model::Thread>> {
        if self.read.is_empty() && self.more {
            let page = self.listing.page(self.page_size).await?;
            // A search answers with one ranked page: no `next`, one page.
            self.more = page.next.is_some();
            self.listing.filter.before = page.next;
            self.read = page.threads.into();
        }
        Ok(self.read.pop_front())
    }

    /// The backend the walk's threads are read from (for their objects).
    pub(super) fn backend(&self) -> SharedBackend {
        self.listing.backend.clone()
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

/// A walk shared by an iterator and the reads it has under way.
type SharedWalk = Arc<tokio::sync::Mutex<ThreadWalk>>;

/// Every thread of a channel, newest first, read a page at a time as the
/// loop reaches it (`Channel.iter_threads`).
#[pyclass(frozen, module = "onehelm")]
pub struct ThreadIterator {
    walk: SharedWalk,
    backend: SharedBackend,
}

impl ThreadIterator {
    pub(super) fn new(walk: ThreadWalk) -> Self {
        ThreadIterator {
            backend: walk.backend(),
            walk: Arc::new(tokio::sync::Mutex::new(walk)),
        }
    }
}

#[pymethods]
impl ThreadIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Thread>> {
        let walk = self.walk.clone();
        let thread = blocking(py, async move { walk.lock().await.next().await })?;
        Ok(thread.map(|t| Thread::new(self.backend.clone(), t)))
    }
}

/// Every thread of a channel, read a page at a time as the `async for`
/// loop reaches it (`AsyncChannel.iter_threads`).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncThreadIterator {
    walk: SharedWalk,
    backend: SharedBackend,
}

impl AsyncThreadIterator {
    pub(super) fn new(walk: ThreadWalk) -> Self {
        AsyncThreadIterator {
            backend: walk.backend(),
            walk: Arc::new(tokio::sync::Mutex::new(walk)),
        }
    }
}

#[pymethods]
impl AsyncThreadIterator {
    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (walk, backend) = (self.walk.clone(), self.backend.clone());
        awaitable_py(py, async move {
            match walk.lock().await.next().await.map_err(to_py)? {
                Some(thread) => Ok(AsyncThread::new(backend, thread)),
                None => Err(PyStopAsyncIteration::new_err(())),
            }
        })
    }
}
