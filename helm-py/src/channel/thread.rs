//! `Thread` and `AsyncThread`: a thread (a durable work session) of a
//! channel, over one `ThreadCore` that keeps the thread as last read.

use std::sync::{Arc, Mutex};

use helm_core::model::{ThreadId, ThreadStatus};
use pyo3::prelude::*;

use super::ask::{ask_blocking, ask_future};
use super::timeout_ok;
use super::twins::twins;
use crate::backend::SharedBackend;
use crate::errors::Result;
use crate::events::{AsyncTurnStream, Reply, TurnStream};
use crate::records::{Message, ThreadInfo};
use crate::runtime::awaitable;
use crate::turn::{Start, ThreadSlot};

/// What both thread flavours share: the thread as last read, which also
/// marks its place in the listing it came from (`threads(before=…)`).
pub(super) struct ThreadCore {
    backend: SharedBackend,
    thread: Mutex<helm_core::model::Thread>,
}

impl ThreadCore {
    fn new(backend: SharedBackend, thread: helm_core::model::Thread) -> Arc<Self> {
        Arc::new(ThreadCore {
            backend,
            thread: Mutex::new(thread),
        })
    }

    pub(super) fn snapshot(&self) -> Option<helm_core::model::Thread> {
        self.thread.lock().ok().map(|t| t.clone())
    }

    fn info(&self) -> Option<ThreadInfo> {
        self.snapshot().map(ThreadInfo::from)
    }

    pub(super) fn id(&self) -> i64 {
        self.thread.lock().map(|t| t.id.0).unwrap_or(0)
    }

    fn set(&self, thread: helm_core::model::Thread) {
        if let Ok(mut t) = self.thread.lock() {
            *t = thread;
        }
    }

    async fn set_status(self: Arc<Self>, status: ThreadStatus) -> Result<()> {
        let thread = self
            .backend
            .set_thread_status(ThreadId(self.id()), status)
            .await?;
        self.set(thread);
        Ok(())
    }

    async fn rename(self: Arc<Self>, title: String) -> Result<()> {
        let thread = self
            .backend
            .rename_thread(ThreadId(self.id()), &title)
            .await?;
        self.set(thread);
        Ok(())
    }

    fn channel_key(&self) -> String {
        self.thread
            .lock()
            .map(|t| t.channel_id.to_string())
            .unwrap_or_default()
    }
}

macro_rules! thread_attributes {
    ($class:ident) => {
        #[pymethods]
        impl $class {
            /// The thread's id.
            #[getter]
            fn id(&self) -> i64 {
                self.core.id()
            }

            /// Its channel's id.
            #[getter]
            fn channel_id(&self) -> i64 {
                self.core.info().map(|i| i.channel_id).unwrap_or(0)
            }

            /// Its title.
            #[getter]
            fn title(&self) -> String {
                self.core.info().map(|i| i.title).unwrap_or_default()
            }

            /// `open`, `waiting`, `resolved`, `failed` or `archived`.
            #[getter]
            fn status(&self) -> String {
                self.core.info().map(|i| i.status).unwrap_or_default()
            }

            /// Its rolling working summary.
            #[getter]
            fn summary(&self) -> String {
                self.core.info().map(|i| i.summary).unwrap_or_default()
            }

            /// A plain snapshot of the thread.
            #[getter]
            fn info(&self) -> Option<ThreadInfo> {
                self.core.info()
            }

            fn __repr__(&self) -> String {
                format!(
                    concat!(stringify!($class), "(id={}, status={:?}, title={:?})"),
                    self.id(),
                    self.status(),
                    crate::records::clip(&self.title())
                )
            }
        }
    };
}

/// A thread (a durable work session), with blocking calls.
#[pyclass(frozen, module = "onehelm")]
pub struct Thread {
    pub(super) core: Arc<ThreadCore>,
}

thread_attributes!(Thread);

impl Thread {
    pub(super) fn new(backend: SharedBackend, thread: helm_core::model::Thread) -> Self {
        Thread {
            core: ThreadCore::new(backend, thread),
        }
    }
}

/// A thread, with asyncio calls.
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncThread {
    pub(super) core: Arc<ThreadCore>,
}

thread_attributes!(AsyncThread);

impl AsyncThread {
    pub(super) fn new(backend: SharedBackend, thread: helm_core::model::Thread) -> Self {
        AsyncThread {
            core: ThreadCore::new(backend, thread),
        }
    }
}

twins! {
    Thread / AsyncThread;

    /// Its messages in server order.
    async
    /// Its messages in server order.
    fn messages(&self) -> Vec<Message> {
        let core = self.core.clone();
        async move {
            let messages = core.backend.messages(ThreadId(core.id())).await?;
            Ok(messages.into_iter().map(Message::from).collect::<Vec<_>>())
        }
    }

    /// Marks the thread resolved (its summary is written by the serving
    /// model on a driving process).
    async
    /// Marks the thread resolved.
    fn resolve(&self) -> () {
        self.core.clone().set_status(ThreadStatus::Resolved)
    }

    /// Reopens a resolved, failed or archived thread.
    async
    /// Reopens a resolved, failed or archived thread.
    fn reopen(&self) -> () {
        self.core.clone().set_status(ThreadStatus::Open)
    }

    /// Gives the thread a new title (trimmed; one line of 1 to 200
    /// characters).
    async
    /// Gives the thread a new title (see `Thread.rename`).
    fn rename(&self, title: String) -> () {
        self.core.clone().rename(title)
    }

    /// Archives the thread: kept, but listed apart
    /// (`channel.threads(archived=True)`) until it is reopened.
    /// `Conflict` when it is archived already.
    async
    /// Archives the thread (see `Thread.archive`).
    fn archive(&self) -> () {
        self.core.clone().set_status(ThreadStatus::Archived)
    }

    /// Stops the thread's work: its running turn ends `stopped`.
    async
    /// Stops the thread's work.
    fn stop(&self) -> () {
        let core = self.core.clone();
        async move { core.backend.stop_thread(ThreadId(core.id())).await }
    }

    /// Reads the thread again (status, title, summary).
    async
    /// Reads the thread again.
    fn refresh(&self) -> () {
        let core = self.core.clone();
        async move {
            let thread = core.backend.thread(ThreadId(core.id())).await?;
            core.set(thread);
            Ok(())
        }
    }
}

#[pymethods]
impl Thread {
    /// Continues the thread with a question for the resident agent.
    #[pyo3(signature = (text, *, timeout=None))]
    fn ask(&self, py: Python<'_>, text: String, timeout: Option<f64>) -> PyResult<Reply> {
        timeout_ok(timeout)?;
        let (backend, channel) = (self.core.backend.clone(), self.core.channel_key());
        ask_blocking(
            py,
            backend,
            channel,
            Start::Ask(text),
            Some(self.core.id()),
            timeout,
        )
    }

    /// Runs the thread's failed (or interrupted) last turn again and waits
    /// for the answer, as `ask` does: Helm notes in the thread who asked,
    /// and the agent answers anew. `Conflict` when the last turn did not
    /// fail or the thread went on after it.
    #[pyo3(signature = (*, timeout=None))]
    fn retry(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Reply> {
        timeout_ok(timeout)?;
        let (backend, channel) = (self.core.backend.clone(), self.core.channel_key());
        ask_blocking(
            py,
            backend,
            channel,
            Start::Retry,
            Some(self.core.id()),
            timeout,
        )
    }

    /// Continues the thread, yielding the turn's events.
    fn stream(&self, text: String) -> TurnStream {
        TurnStream::start(
            self.core.backend.clone(),
            self.core.channel_key(),
            text,
            Some(self.core.id()),
        )
    }
}

#[pymethods]
impl AsyncThread {
    /// Continues the thread with a question for the resident agent.
    #[pyo3(signature = (text, *, timeout=None))]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        text: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        timeout_ok(timeout)?;
        let run = ask_future(
            self.core.backend.clone(),
            self.core.channel_key(),
            Start::Ask(text),
            Some(self.core.id()),
            timeout,
            ThreadSlot::default(),
        );
        awaitable(py, run)
    }

    /// Runs the thread's failed last turn again (see `Thread.retry`).
    #[pyo3(signature = (*, timeout=None))]
    fn retry<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        timeout_ok(timeout)?;
        let run = ask_future(
            self.core.backend.clone(),
            self.core.channel_key(),
            Start::Retry,
            Some(self.core.id()),
            timeout,
            ThreadSlot::default(),
        );
        awaitable(py, run)
    }

    /// Continues the thread, yielding the turn's events.
    fn stream(&self, text: String) -> AsyncTurnStream {
        AsyncTurnStream::start(
            self.core.backend.clone(),
            self.core.channel_key(),
            text,
            Some(self.core.id()),
        )
    }
}
