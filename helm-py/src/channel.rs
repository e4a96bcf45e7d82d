//! `Channel` and `AsyncChannel` (with their `memory` and `files`), and
//! `Thread` and `AsyncThread`: the live objects of a workspace. Each pair
//! shares one core; the blocking member waits with the GIL released, the
//! asyncio member returns awaitables.
//!
//! A channel object keeps a snapshot of the channel (name, purpose,
//! status) for its attributes, refreshed by the calls that change it and
//! by `refresh()`; it addresses the channel by id, so a rename elsewhere
//! does not lose it.

use std::sync::{Arc, Mutex};

use helm_core::ErrorKind;
use helm_core::ThreadFilter;
use helm_core::model::{
    ChannelId, MemoryId, MemoryKind, MemoryScope, ModelChoice, ThreadId, ThreadStatus,
};
use helm_core::store::{ChannelRecord, MemoryFilter, ThreadCursor};
use helm_core::{MemoryNote, NewNote};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::backend::{MemoryChange, RunRequest, SharedBackend};
use crate::errors::{Result, failure, to_py};
use crate::events::{AsyncTurnStream, Reply, TurnStream, reply_or_error};
use crate::records::{
    CommandResult, FileEntry, ImportReport, MemoryItem, Message, Model, RecallHit, ThreadInfo,
    ToolAction,
};
use crate::runtime::{awaitable, awaitable_py, blocking, interruptible};
use crate::turn::{self, Start, ThreadSlot, Until};

/// What a channel's objects share: the backend and the latest snapshot.
pub struct ChannelCore {
    backend: SharedBackend,
    record: Mutex<ChannelRecord>,
    /// The channel's id as the backends take it.
    key: String,
}

impl ChannelCore {
    fn new(backend: SharedBackend, record: ChannelRecord) -> Arc<Self> {
        Arc::new(ChannelCore {
            key: record.channel.id.to_string(),
            backend,
            record: Mutex::new(record),
        })
    }

    fn snapshot(&self) -> Option<ChannelRecord> {
        self.record.lock().ok().map(|r| r.clone())
    }

    fn set(&self, record: ChannelRecord) {
        if let Ok(mut r) = self.record.lock() {
            *r = record;
        }
    }

    fn get<T>(&self, f: impl FnOnce(&ChannelRecord) -> T, default: T) -> T {
        self.record.lock().map(|r| f(&r)).unwrap_or(default)
    }
}

/// The attribute getters both channel flavours share.
macro_rules! channel_attributes {
    ($class:ident) => {
        #[pymethods]
        impl $class {
            /// The channel's id.
            #[getter]
            fn id(&self) -> i64 {
                self.core.get(|r| r.channel.id.0, 0)
            }

            /// Its name, without `#`.
            #[getter]
            fn name(&self) -> String {
                self.core
                    .get(|r| r.channel.name.as_str().to_string(), String::new())
            }

            /// What it is for.
            #[getter]
            fn purpose(&self) -> String {
                self.core.get(|r| r.channel.purpose.clone(), String::new())
            }

            /// `active` or `archived`.
            #[getter]
            fn status(&self) -> String {
                self.core
                    .get(|r| r.channel.status.as_str().to_string(), String::new())
            }

            /// `agent` (a resident agent's channel) or `home` (`#main`, Skipper's).
            #[getter]
            fn kind(&self) -> String {
                self.core
                    .get(|r| r.channel.kind.as_str().to_string(), String::new())
            }

            /// `public` or `private`.
            #[getter]
            fn visibility(&self) -> String {
                self.core
                    .get(|r| r.channel.visibility.as_str().to_string(), String::new())
            }

            /// The resident agent's mention handle, such as `@launch-agent`.
            #[getter]
            fn agent(&self) -> String {
                self.core.get(|r| r.agent.handle.to_string(), String::new())
            }

            /// The resident agent's display name.
            #[getter]
            fn agent_name(&self) -> String {
                self.core
                    .get(|r| r.agent.display_name.clone(), String::new())
            }

            fn __repr__(&self) -> String {
                format!(
                    concat!(stringify!($class), "(#{} {}, {})"),
                    self.name(),
                    self.agent(),
                    self.status()
                )
            }
        }
    };
}

/// The model choice from `set_model`'s arguments (`None` clears it).
pub(crate) fn model_choice(
    provider: Option<String>,
    model: Option<String>,
) -> Result<Option<ModelChoice>> {
    match provider {
        Some(p) => Ok(Some(ModelChoice::new(p, model))),
        None if model.is_some() => Err(failure(
            ErrorKind::Invalid,
            "invalid",
            "a model needs its provider: set_model(provider, model)",
        )),
        None => Ok(None),
    }
}

/// A history to import, as Python gives it: the JSON Lines themselves
/// (`bytes`), or the path of a file holding them (`str` or `os.PathLike`).
#[derive(FromPyObject)]
pub enum HistorySource {
    /// The JSON Lines.
    Lines(Vec<u8>),
    /// A file holding them.
    Path(std::path::PathBuf),
}

impl HistorySource {
    /// The history's bytes (a file is read off the event loop's threads).
    async fn read(self) -> Result<Vec<u8>> {
        match self {
            HistorySource::Lines(bytes) => Ok(bytes),
            HistorySource::Path(path) => tokio::fs::read(&path).await.map_err(|e| {
                failure(
                    ErrorKind::Invalid,
                    "invalid",
                    format!("cannot read the history {}: {e}", path.display()),
                )
            }),
        }
    }
}

/// Imports `source` into the channel `key` (see `Channel.import_history`).
async fn import_from(
    backend: SharedBackend,
    key: String,
    source: HistorySource,
) -> Result<ImportReport> {
    let history = source.read().await?;
    backend
        .import_history(&key, history)
        .await
        .map(ImportReport::from)
}

fn memory_note(kind: &str, text: String, thread: Option<i64>, scope: &str) -> Result<MemoryNote> {
    Ok(MemoryNote {
        kind: kind.parse::<MemoryKind>()?,
        content: text,
        thread: thread.map(ThreadId),
        scope: scope.parse::<MemoryScope>()?,
    })
}

fn memory_filter(kind: Option<&str>, limit: usize, all: bool) -> Result<MemoryFilter> {
    Ok(MemoryFilter {
        kind: kind.map(str::parse::<MemoryKind>).transpose()?,
        thread: None,
        include_inactive: all,
        limit,
    })
}

/// A file's new contents: `str` (written as UTF-8) or `bytes`.
fn contents(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = value.cast::<PyString>() {
        Ok(text.to_str()?.as_bytes().to_vec())
    } else if let Ok(bytes) = value.cast::<PyBytes>() {
        Ok(bytes.as_bytes().to_vec())
    } else {
        Err(to_py(failure(
            ErrorKind::Invalid,
            "invalid",
            "a file's contents are str or bytes",
        )))
    }
}

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
struct ThreadListing {
    backend: SharedBackend,
    key: String,
    channel: Option<ChannelId>,
    filter: ThreadFilter,
    before: Option<Before>,
}

impl ThreadListing {
    /// The page's threads; a place to resume from is resolved first.
    async fn read(mut self, limit: usize) -> Result<Vec<helm_core::model::Thread>> {
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
    fn listing(
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

fn check_limit(limit: usize) -> Result<usize> {
    if (1..=1000).contains(&limit) {
        Ok(limit)
    } else {
        Err(failure(
            ErrorKind::Invalid,
            "invalid",
            format!("limit {limit} is out of range: ask for 1 to 1000"),
        ))
    }
}

/// Runs `ask` to its end; on Ctrl-C, stops the thread's work before
/// raising `KeyboardInterrupt`.
fn ask_blocking(
    py: Python<'_>,
    backend: SharedBackend,
    channel: String,
    start: Start,
    thread: Option<i64>,
    timeout: Option<f64>,
) -> PyResult<Reply> {
    let slot = ThreadSlot::default();
    let run = ask_future(
        backend.clone(),
        channel,
        start,
        thread,
        timeout,
        slot.clone(),
    );
    match interruptible(py, async move { run.await.map_err(to_py) }) {
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => {
            let thread = slot.lock().ok().and_then(|s| *s);
            if let Some(thread) = thread {
                blocking(py, async move { backend.stop_thread(thread).await })?;
            }
            Err(e)
        }
        other => other,
    }
}

async fn ask_future(
    backend: SharedBackend,
    channel: String,
    start: Start,
    thread: Option<i64>,
    timeout: Option<f64>,
    slot: ThreadSlot,
) -> Result<Reply> {
    let run = turn::run(
        backend,
        channel,
        start,
        thread.map(ThreadId),
        slot,
        Until::EndOrApproval,
        |_| {},
    );
    let result = match timeout {
        None => run.await?,
        Some(secs) => tokio::time::timeout(std::time::Duration::from_secs_f64(secs), run)
            .await
            .map_err(|_| {
                failure(
                    ErrorKind::Unavailable,
                    "timeout",
                    format!("no answer within {secs} s; the turn goes on in its thread"),
                )
            })??,
    };
    reply_or_error(result)
}

fn timeout_ok(timeout: Option<f64>) -> PyResult<()> {
    match timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => Err(to_py(failure(
            ErrorKind::Invalid,
            "invalid",
            format!("timeout {t} is not a positive number of seconds"),
        ))),
        _ => Ok(()),
    }
}

/// `@channel.tool` for both flavours: registers `function` (returning it
/// unchanged), or, called with options only, returns the decorator.
fn tool_decorator(
    py: Python<'_>,
    core: Arc<ChannelCore>,
    function: Option<Py<PyAny>>,
    options: ToolOptions,
) -> PyResult<Py<PyAny>> {
    let approval = crate::tool::approval_class(&options.approval)?;
    match function {
        Some(function) => {
            let tool = crate::tool::PyTool::new(
                py,
                function.clone_ref(py),
                options.name.clone(),
                options.description.clone(),
                options.schema.as_ref().map(|s| s.bind(py)),
                approval,
            )?;
            let key = core.key.clone();
            let backend = core.backend.clone();
            blocking(py, async move {
                backend.register_tool(&key, Arc::new(tool)).await
            })?;
            Ok(function)
        }
        None => {
            let decorate = move |args: &Bound<'_, pyo3::types::PyTuple>,
                                 _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>|
                  -> PyResult<Py<PyAny>> {
                let py = args.py();
                let function: Py<PyAny> = args.get_item(0)?.unbind();
                let options = ToolOptions {
                    name: options.name.clone(),
                    description: options.description.clone(),
                    schema: options.schema.as_ref().map(|s| s.clone_ref(py)),
                    approval: options.approval.clone(),
                };
                tool_decorator(py, core.clone(), Some(function), options)
            };
            Ok(
                pyo3::types::PyCFunction::new_closure(py, None, None, decorate)?
                    .into_any()
                    .unbind(),
            )
        }
    }
}

/// The options of `@channel.tool(...)`.
struct ToolOptions {
    name: Option<String>,
    description: Option<String>,
    schema: Option<Py<PyAny>>,
    approval: String,
}

fn remove_tool(py: Python<'_>, core: &Arc<ChannelCore>, name: String) -> PyResult<()> {
    let (backend, key) = (core.backend.clone(), core.key.clone());
    blocking(
        py,
        async move { backend.unregister_tool(&key, &name).await },
    )
}

/// A channel, with blocking calls.
#[pyclass(frozen, module = "onehelm")]
pub struct Channel {
    core: Arc<ChannelCore>,
}

channel_attributes!(Channel);

impl Channel {
    /// A channel object over `record`.
    pub fn new(backend: SharedBackend, record: ChannelRecord) -> Self {
        Channel {
            core: ChannelCore::new(backend, record),
        }
    }
}

#[pymethods]
impl Channel {
    /// Asks the resident agent (addressed for you unless the text mentions
    /// it or `@skipper`) in a new thread, or continues `thread`, and waits
    /// for the answer. A failed turn raises `ProviderError`; `timeout`
    /// (seconds) raises `Unavailable` and leaves the turn running.
    #[pyo3(signature = (text, *, thread=None, timeout=None))]
    fn ask(
        &self,
        py: Python<'_>,
        text: String,
        thread: Option<i64>,
        timeout: Option<f64>,
    ) -> PyResult<Reply> {
        timeout_ok(timeout)?;
        ask_blocking(
            py,
            self.core.backend.clone(),
            self.core.key.clone(),
            Start::Ask(text),
            thread,
            timeout,
        )
    }

    /// Like `ask`, but yields the turn's events as they happen:
    /// `TextDelta`, `ToolCall`, `ToolResult`, `ApprovalRequested`,
    /// `SkipperCalled`, `TurnEnded`.
    #[pyo3(signature = (text, *, thread=None))]
    fn stream(&self, text: String, thread: Option<i64>) -> TurnStream {
        TurnStream::start(
            self.core.backend.clone(),
            self.core.key.clone(),
            text,
            thread,
        )
    }

    /// The channel's threads (sessions), most recently active first, at
    /// most `limit`; with `search`, those whose title, summary or messages
    /// hold its words, best first (one page). `archived`: True for only
    /// archived ones, False for all others. `before`: the next page, after
    /// this thread (the last of the page before) or thread id.
    #[pyo3(signature = (*, limit=50, search=None, archived=None, before=None))]
    fn threads(
        &self,
        py: Python<'_>,
        limit: usize,
        search: Option<String>,
        archived: Option<bool>,
        before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Thread>> {
        let listing = self.core.listing(search, archived, before)?;
        let backend = self.core.backend.clone();
        let threads = blocking(py, listing.read(limit))?;
        Ok(threads
            .into_iter()
            .map(|t| Thread::new(backend.clone(), t))
            .collect())
    }

    /// One of the channel's threads, by id.
    fn thread(&self, py: Python<'_>, id: i64) -> PyResult<Thread> {
        let backend = self.core.backend.clone();
        let thread = blocking(py, {
            let backend = backend.clone();
            async move { backend.thread(ThreadId(id)).await }
        })?;
        Ok(Thread::new(backend, thread))
    }

    /// The channel's tool journal (or one thread's), newest last.
    #[pyo3(signature = (*, thread=None, limit=50))]
    fn activity(
        &self,
        py: Python<'_>,
        thread: Option<i64>,
        limit: usize,
    ) -> PyResult<Vec<ToolAction>> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        blocking(py, async move {
            let actions = backend
                .activity(&key, thread.map(ThreadId), check_limit(limit)?)
                .await?;
            Ok(actions.into_iter().map(ToolAction::from).collect())
        })
    }

    /// The channel's memory.
    #[getter]
    fn memory(&self) -> Memory {
        Memory {
            core: self.core.clone(),
        }
    }

    /// The files of the channel's workspace (`/workspace`).
    #[getter]
    fn files(&self) -> Files {
        Files {
            core: self.core.clone(),
        }
    }

    /// Imports a history (JSON Lines of threads, messages and memory
    /// records; docs/memory.md) into the channel: `source` is the lines
    /// (`bytes`) or a file's path. All or nothing: a bad line raises
    /// `InvalidInput` naming every bad line, and nothing is imported.
    fn import_history(&self, py: Python<'_>, source: HistorySource) -> PyResult<ImportReport> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        blocking(py, import_from(backend, key, source))
    }

    /// Runs a shell command in the channel's computer, as its agent would
    /// (in `/workspace`, under the channel's isolation), and waits for it.
    #[pyo3(signature = (command, *, cwd=None, timeout=None))]
    fn run(
        &self,
        py: Python<'_>,
        command: String,
        cwd: Option<String>,
        timeout: Option<f64>,
    ) -> PyResult<CommandResult> {
        timeout_ok(timeout)?;
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        let request = RunRequest {
            command,
            cwd,
            timeout_secs: timeout,
        };
        blocking(py, async move {
            backend.run(&key, request).await.map(CommandResult::from)
        })
    }

    /// The model that will serve the next turn (`None` if none is set
    /// anywhere).
    fn model(&self, py: Python<'_>) -> PyResult<Option<Model>> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        blocking(py, async move {
            Ok(backend.model(&key).await?.map(Model::from))
        })
    }

    /// Sets the channel's model (`set_model(None)` goes back to the
    /// workspace's); identity, memory, files and history stay. Returns the
    /// model that now serves it.
    #[pyo3(signature = (provider, model=None))]
    fn set_model(
        &self,
        py: Python<'_>,
        provider: Option<String>,
        model: Option<String>,
    ) -> PyResult<Option<Model>> {
        let choice = model_choice(provider, model).map_err(to_py)?;
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        blocking(py, async move {
            Ok(backend.set_model(&key, choice).await?.map(Model::from))
        })
    }

    /// Renames the channel live; its agent keeps its handle, files, memory
    /// and threads. The old name is free again.
    fn rename(&self, py: Python<'_>, name: String) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move {
            let record = core.backend.rename(&core.key, &name).await?;
            core.set(record);
            Ok(())
        })
    }

    /// Archives the channel: its agent is paused, everything is kept.
    fn archive(&self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move {
            let record = core.backend.archive(&core.key).await?;
            core.set(record);
            Ok(())
        })
    }

    /// Restores an archived channel with the same agent world.
    fn restore(&self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move {
            let record = core.backend.restore(&core.key).await?;
            core.set(record);
            Ok(())
        })
    }

    /// Deletes an archived channel and its agent world for good; `confirm`
    /// must be the channel's name.
    #[pyo3(signature = (*, confirm))]
    fn delete(&self, py: Python<'_>, confirm: String) -> PyResult<()> {
        let core = self.core.clone();
        blocking(
            py,
            async move { core.backend.delete(&core.key, &confirm).await },
        )
    }

    /// Gives the channel's agent a Python function as a tool: as
    /// `@channel.tool` or `@channel.tool(name=..., description=...,
    /// schema=..., approval=...)`. The name is the function's, the
    /// description its docstring, the input schema read from its type
    /// hints unless given. `approval` is `"policy"` (the channel's approval
    /// rule for `tool_call`: a member's call waits for the Captain unless a
    /// rule says otherwise), `"always"` or `"none"`. The function runs in
    /// this process and is returned unchanged. Embedded workspaces only.
    #[pyo3(signature = (function=None, *, name=None, description=None, schema=None, approval="policy"))]
    fn tool(
        &self,
        py: Python<'_>,
        function: Option<Py<PyAny>>,
        name: Option<String>,
        description: Option<String>,
        schema: Option<Py<PyAny>>,
        approval: &str,
    ) -> PyResult<Py<PyAny>> {
        let options = ToolOptions {
            name,
            description,
            schema,
            approval: approval.to_string(),
        };
        tool_decorator(py, self.core.clone(), function, options)
    }

    /// Takes a tool given with `tool` away again.
    fn remove_tool(&self, py: Python<'_>, name: String) -> PyResult<()> {
        remove_tool(py, &self.core, name)
    }

    /// Opens an interactive shell in the channel's computer (in
    /// `/workspace`); use it as a context manager so it is closed.
    #[pyo3(signature = (*, rows=24, cols=80))]
    fn terminal(
        &self,
        py: Python<'_>,
        rows: u16,
        cols: u16,
    ) -> PyResult<crate::terminal::Terminal> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        let core = blocking(
            py,
            async move { backend.open_terminal(&key, rows, cols).await },
        )?;
        Ok(crate::terminal::Terminal::new(core))
    }

    /// Reads the channel again (name, purpose, status).
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move {
            let record = core.backend.channel(&core.key).await?;
            core.set(record);
            Ok(())
        })
    }
}

/// A channel, with asyncio calls.
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncChannel {
    core: Arc<ChannelCore>,
}

channel_attributes!(AsyncChannel);

impl AsyncChannel {
    /// A channel object over `record`.
    pub fn new(backend: SharedBackend, record: ChannelRecord) -> Self {
        AsyncChannel {
            core: ChannelCore::new(backend, record),
        }
    }
}

#[pymethods]
impl AsyncChannel {
    /// Asks the resident agent and waits for the answer (see `Channel.ask`).
    #[pyo3(signature = (text, *, thread=None, timeout=None))]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        text: String,
        thread: Option<i64>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        timeout_ok(timeout)?;
        let run = ask_future(
            self.core.backend.clone(),
            self.core.key.clone(),
            Start::Ask(text),
            thread,
            timeout,
            ThreadSlot::default(),
        );
        awaitable(py, run)
    }

    /// Yields the turn's events as they happen (`async for`).
    #[pyo3(signature = (text, *, thread=None))]
    fn stream(&self, text: String, thread: Option<i64>) -> AsyncTurnStream {
        AsyncTurnStream::start(
            self.core.backend.clone(),
            self.core.key.clone(),
            text,
            thread,
        )
    }

    /// The channel's threads, a page at a time (see `Channel.threads`).
    #[pyo3(signature = (*, limit=50, search=None, archived=None, before=None))]
    fn threads<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        search: Option<String>,
        archived: Option<bool>,
        before: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let listing = self.core.listing(search, archived, before)?;
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            let threads = listing.read(limit).await?;
            Ok(threads
                .into_iter()
                .map(|t| AsyncThread::new(backend.clone(), t))
                .collect::<Vec<_>>())
        })
    }

    /// One of the channel's threads, by id.
    fn thread<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            let thread = backend.thread(ThreadId(id)).await?;
            Ok(AsyncThread::new(backend, thread))
        })
    }

    /// The channel's tool journal (or one thread's), newest last.
    #[pyo3(signature = (*, thread=None, limit=50))]
    fn activity<'py>(
        &self,
        py: Python<'py>,
        thread: Option<i64>,
        limit: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        awaitable(py, async move {
            let actions = backend
                .activity(&key, thread.map(ThreadId), check_limit(limit)?)
                .await?;
            Ok(actions
                .into_iter()
                .map(ToolAction::from)
                .collect::<Vec<_>>())
        })
    }

    /// The channel's memory.
    #[getter]
    fn memory(&self) -> AsyncMemory {
        AsyncMemory {
            core: self.core.clone(),
        }
    }

    /// The files of the channel's workspace.
    #[getter]
    fn files(&self) -> AsyncFiles {
        AsyncFiles {
            core: self.core.clone(),
        }
    }

    /// Imports a history into the channel (see `Channel.import_history`).
    fn import_history<'py>(
        &self,
        py: Python<'py>,
        source: HistorySource,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        awaitable(py, import_from(backend, key, source))
    }

    /// Runs a shell command in the channel's computer (see `Channel.run`).
    #[pyo3(signature = (command, *, cwd=None, timeout=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        command: String,
        cwd: Option<String>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        timeout_ok(timeout)?;
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        let request = RunRequest {
            command,
            cwd,
            timeout_secs: timeout,
        };
        awaitable(py, async move {
            backend.run(&key, request).await.map(CommandResult::from)
        })
    }

    /// The model that will serve the next turn.
    fn model<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        awaitable(py, async move {
            Ok(backend.model(&key).await?.map(Model::from))
        })
    }

    /// Sets (or with `None` clears) the channel's model.
    #[pyo3(signature = (provider, model=None))]
    fn set_model<'py>(
        &self,
        py: Python<'py>,
        provider: Option<String>,
        model: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let choice = model_choice(provider, model).map_err(to_py)?;
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        awaitable(py, async move {
            Ok(backend.set_model(&key, choice).await?.map(Model::from))
        })
    }

    /// Renames the channel live; its agent keeps its handle.
    fn rename<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let record = core.backend.rename(&core.key, &name).await?;
            core.set(record);
            Ok(())
        })
    }

    /// Archives the channel.
    fn archive<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let record = core.backend.archive(&core.key).await?;
            core.set(record);
            Ok(())
        })
    }

    /// Restores an archived channel.
    fn restore<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let record = core.backend.restore(&core.key).await?;
            core.set(record);
            Ok(())
        })
    }

    /// Deletes an archived channel for good; `confirm` must be its name.
    #[pyo3(signature = (*, confirm))]
    fn delete<'py>(&self, py: Python<'py>, confirm: String) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(
            py,
            async move { core.backend.delete(&core.key, &confirm).await },
        )
    }

    /// Gives the channel's agent a Python function as a tool: as
    /// `@channel.tool` or `@channel.tool(name=..., description=...,
    /// schema=..., approval=...)`. The name is the function's, the
    /// description its docstring, the input schema read from its type
    /// hints unless given. `approval` is `"policy"` (the channel's approval
    /// rule for `tool_call`: a member's call waits for the Captain unless a
    /// rule says otherwise), `"always"` or `"none"`. The function runs in
    /// this process and is returned unchanged; registering is quick local
    /// work and happens at once. `async def` tools run on the event loop
    /// running now. Embedded workspaces only.
    #[pyo3(signature = (function=None, *, name=None, description=None, schema=None, approval="policy"))]
    fn tool(
        &self,
        py: Python<'_>,
        function: Option<Py<PyAny>>,
        name: Option<String>,
        description: Option<String>,
        schema: Option<Py<PyAny>>,
        approval: &str,
    ) -> PyResult<Py<PyAny>> {
        let options = ToolOptions {
            name,
            description,
            schema,
            approval: approval.to_string(),
        };
        tool_decorator(py, self.core.clone(), function, options)
    }

    /// Takes a tool given with `tool` away again.
    fn remove_tool(&self, py: Python<'_>, name: String) -> PyResult<()> {
        remove_tool(py, &self.core, name)
    }

    /// Opens an interactive shell in the channel's computer (an awaitable
    /// of an `AsyncTerminal`; use `async with` on it so it is closed).
    #[pyo3(signature = (*, rows=24, cols=80))]
    fn terminal<'py>(&self, py: Python<'py>, rows: u16, cols: u16) -> PyResult<Bound<'py, PyAny>> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        awaitable(py, async move {
            let core = backend.open_terminal(&key, rows, cols).await?;
            Ok(crate::terminal::AsyncTerminal::new(core))
        })
    }

    /// Reads the channel again.
    fn refresh<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let record = core.backend.channel(&core.key).await?;
            core.set(record);
            Ok(())
        })
    }
}

/// A channel's memory (blocking).
#[pyclass(frozen, module = "onehelm")]
pub struct Memory {
    core: Arc<ChannelCore>,
}

#[pymethods]
impl Memory {
    /// The `k` best matches for `query` among the channel's memory and
    /// earlier threads, with where they came from.
    #[pyo3(signature = (query, k=5))]
    fn recall(&self, py: Python<'_>, query: String, k: i64) -> PyResult<Vec<RecallHit>> {
        // Below 1 is refused by the core as 0 hits asked: nothing overflows.
        let k = usize::try_from(k).unwrap_or(0);
        let core = self.core.clone();
        blocking(py, async move {
            let hits = core.backend.recall(&core.key, &query, k).await?;
            Ok(hits.into_iter().map(RecallHit::from).collect())
        })
    }

    /// Records something worth keeping: `kind` is `decision`, `fact`,
    /// `preference` or `artifact_ref`; `scope` is `channel` or `thread`.
    #[pyo3(signature = (kind, text, *, thread=None, scope="channel"))]
    fn add(
        &self,
        py: Python<'_>,
        kind: &str,
        text: String,
        thread: Option<i64>,
        scope: &str,
    ) -> PyResult<MemoryItem> {
        let note = memory_note(kind, text, thread, scope).map_err(to_py)?;
        let core = self.core.clone();
        blocking(py, async move {
            core.backend
                .remember(&core.key, note)
                .await
                .map(MemoryItem::from)
        })
    }

    /// The channel's memory records, newest first (only current ones unless
    /// `all`).
    #[pyo3(signature = (*, kind=None, limit=100, all=false))]
    fn list(
        &self,
        py: Python<'_>,
        kind: Option<&str>,
        limit: usize,
        all: bool,
    ) -> PyResult<Vec<MemoryItem>> {
        let filter = memory_filter(kind, check_limit(limit).map_err(to_py)?, all).map_err(to_py)?;
        let core = self.core.clone();
        blocking(py, async move {
            let items = core.backend.memory(&core.key, filter).await?;
            Ok(items.into_iter().map(MemoryItem::from).collect())
        })
    }

    /// Replaces a record's text; the old text is kept, superseded.
    fn edit(&self, py: Python<'_>, id: i64, text: String) -> PyResult<MemoryItem> {
        blocking(py, change(self.core.clone(), id, MemoryChange::Edit(text)))
    }

    /// Forgets a record: kept for provenance (saying who forgot it), never
    /// recalled again until restored. Its author and the channel's
    /// managers may.
    fn forget(&self, py: Python<'_>, id: i64) -> PyResult<MemoryItem> {
        blocking(py, change(self.core.clone(), id, MemoryChange::Forget))
    }

    /// Restores a forgotten record: current and recalled again. Whoever may
    /// forget it may restore it.
    fn restore(&self, py: Python<'_>, id: i64) -> PyResult<MemoryItem> {
        blocking(py, change(self.core.clone(), id, MemoryChange::Restore))
    }

    /// Pins a record (always in the agent's context), or unpins it.
    #[pyo3(signature = (id, pinned=true))]
    fn pin(&self, py: Python<'_>, id: i64, pinned: bool) -> PyResult<MemoryItem> {
        blocking(py, change(self.core.clone(), id, MemoryChange::Pin(pinned)))
    }
}

/// Changes one of the channel's records.
async fn change(core: Arc<ChannelCore>, id: i64, change: MemoryChange) -> Result<MemoryItem> {
    core.backend
        .change_memory(MemoryId(id), change)
        .await
        .map(MemoryItem::from)
}

/// A channel's memory (asyncio).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncMemory {
    core: Arc<ChannelCore>,
}

#[pymethods]
impl AsyncMemory {
    /// The `k` best matches for `query` (see `Memory.recall`).
    #[pyo3(signature = (query, k=5))]
    fn recall<'py>(&self, py: Python<'py>, query: String, k: i64) -> PyResult<Bound<'py, PyAny>> {
        let k = usize::try_from(k).unwrap_or(0);
        let core = self.core.clone();
        awaitable(py, async move {
            let hits = core.backend.recall(&core.key, &query, k).await?;
            Ok(hits.into_iter().map(RecallHit::from).collect::<Vec<_>>())
        })
    }

    /// Records something worth keeping (see `Memory.add`).
    #[pyo3(signature = (kind, text, *, thread=None, scope="channel"))]
    fn add<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        text: String,
        thread: Option<i64>,
        scope: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let note = memory_note(kind, text, thread, scope).map_err(to_py)?;
        let core = self.core.clone();
        awaitable(py, async move {
            core.backend
                .remember(&core.key, note)
                .await
                .map(MemoryItem::from)
        })
    }

    /// The channel's memory records, newest first.
    #[pyo3(signature = (*, kind=None, limit=100, all=false))]
    fn list<'py>(
        &self,
        py: Python<'py>,
        kind: Option<&str>,
        limit: usize,
        all: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = memory_filter(kind, check_limit(limit).map_err(to_py)?, all).map_err(to_py)?;
        let core = self.core.clone();
        awaitable(py, async move {
            let items = core.backend.memory(&core.key, filter).await?;
            Ok(items.into_iter().map(MemoryItem::from).collect::<Vec<_>>())
        })
    }

    /// Replaces a record's text (see `Memory.edit`).
    fn edit<'py>(&self, py: Python<'py>, id: i64, text: String) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, change(self.core.clone(), id, MemoryChange::Edit(text)))
    }

    /// Forgets a record (see `Memory.forget`).
    fn forget<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, change(self.core.clone(), id, MemoryChange::Forget))
    }

    /// Restores a forgotten record (see `Memory.restore`).
    fn restore<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, change(self.core.clone(), id, MemoryChange::Restore))
    }

    /// Pins or unpins a record (see `Memory.pin`).
    #[pyo3(signature = (id, pinned=true))]
    fn pin<'py>(&self, py: Python<'py>, id: i64, pinned: bool) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, change(self.core.clone(), id, MemoryChange::Pin(pinned)))
    }
}

/// The files of a channel's workspace (blocking). Paths are the agent's:
/// `/workspace/plan.md` or `plan.md`; nothing outside it is reachable.
#[pyclass(frozen, module = "onehelm")]
pub struct Files {
    core: Arc<ChannelCore>,
}

#[pymethods]
impl Files {
    /// A text file, whole.
    fn read(&self, py: Python<'_>, path: String) -> PyResult<String> {
        let core = self.core.clone();
        blocking(
            py,
            async move { core.backend.read_text(&core.key, &path).await },
        )
    }

    /// A file's bytes, whole.
    fn read_bytes<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyBytes>> {
        let core = self.core.clone();
        let bytes = blocking(py, async move {
            core.backend.read_bytes(&core.key, &path).await
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes a file (`str` or `bytes`), replacing it; parents are made.
    /// With `create=True` only a new file is made: one already there raises
    /// `ConflictError` and is left as it was.
    #[pyo3(signature = (path, content, *, create=false))]
    fn write(
        &self,
        py: Python<'_>,
        path: String,
        content: &Bound<'_, PyAny>,
        create: bool,
    ) -> PyResult<FileEntry> {
        let bytes = contents(content)?;
        let core = self.core.clone();
        blocking(py, async move {
            core.backend
                .write_file(&core.key, &path, bytes, create)
                .await
                .map(FileEntry::from)
        })
    }

    /// Saves a quick note as a new Markdown file in `/workspace/notes`,
    /// named `<day>-<title>.md` (`-2`, `-3`, … when taken; no file is ever
    /// replaced), and returns its entry.
    #[pyo3(signature = (text, *, title=None))]
    fn note(&self, py: Python<'_>, text: String, title: Option<String>) -> PyResult<FileEntry> {
        let core = self.core.clone();
        blocking(py, async move {
            let note = NewNote { text, title };
            core.backend
                .save_note(&core.key, note)
                .await
                .map(FileEntry::from)
        })
    }

    /// A directory's entries, by name (or a file's own entry).
    #[pyo3(signature = (path="/workspace"))]
    fn list(&self, py: Python<'_>, path: &str) -> PyResult<Vec<FileEntry>> {
        let (core, path) = (self.core.clone(), path.to_string());
        blocking(py, async move {
            let entries = core.backend.list_files(&core.key, &path).await?;
            Ok(entries.into_iter().map(FileEntry::from).collect())
        })
    }
}

/// The files of a channel's workspace (asyncio).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncFiles {
    core: Arc<ChannelCore>,
}

#[pymethods]
impl AsyncFiles {
    /// A text file, whole.
    fn read<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(
            py,
            async move { core.backend.read_text(&core.key, &path).await },
        )
    }

    /// A file's bytes, whole.
    fn read_bytes<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable_py(py, async move {
            let bytes = core
                .backend
                .read_bytes(&core.key, &path)
                .await
                .map_err(to_py)?;
            Python::attach(|py| Ok(PyBytes::new(py, &bytes).unbind()))
        })
    }

    /// Writes a file (`str` or `bytes`), replacing it, or with
    /// `create=True` only making a new one (see `Files.write`).
    #[pyo3(signature = (path, content, *, create=false))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        path: String,
        content: &Bound<'py, PyAny>,
        create: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = contents(content)?;
        let core = self.core.clone();
        awaitable(py, async move {
            core.backend
                .write_file(&core.key, &path, bytes, create)
                .await
                .map(FileEntry::from)
        })
    }

    /// Saves a quick note (see `Files.note`).
    #[pyo3(signature = (text, *, title=None))]
    fn note<'py>(
        &self,
        py: Python<'py>,
        text: String,
        title: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let note = NewNote { text, title };
            core.backend
                .save_note(&core.key, note)
                .await
                .map(FileEntry::from)
        })
    }

    /// A directory's entries, by name.
    #[pyo3(signature = (path="/workspace"))]
    fn list<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyAny>> {
        let (core, path) = (self.core.clone(), path.to_string());
        awaitable(py, async move {
            let entries = core.backend.list_files(&core.key, &path).await?;
            Ok(entries.into_iter().map(FileEntry::from).collect::<Vec<_>>())
        })
    }
}

/// What both thread flavours share: the thread as last read, which also
/// marks its place in the listing it came from (`threads(before=…)`).
struct ThreadCore {
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

    fn snapshot(&self) -> Option<helm_core::model::Thread> {
        self.thread.lock().ok().map(|t| t.clone())
    }

    fn info(&self) -> Option<ThreadInfo> {
        self.snapshot().map(ThreadInfo::from)
    }

    fn id(&self) -> i64 {
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
    core: Arc<ThreadCore>,
}

thread_attributes!(Thread);

impl Thread {
    fn new(backend: SharedBackend, thread: helm_core::model::Thread) -> Self {
        Thread {
            core: ThreadCore::new(backend, thread),
        }
    }
}

#[pymethods]
impl Thread {
    /// Its messages in server order.
    fn messages(&self, py: Python<'_>) -> PyResult<Vec<Message>> {
        let core = self.core.clone();
        blocking(py, async move {
            let messages = core.backend.messages(ThreadId(core.id())).await?;
            Ok(messages.into_iter().map(Message::from).collect())
        })
    }

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

    /// Marks the thread resolved (its summary is written by the serving
    /// model on a driving process).
    fn resolve(&self, py: Python<'_>) -> PyResult<()> {
        blocking(py, self.core.clone().set_status(ThreadStatus::Resolved))
    }

    /// Reopens a resolved, failed or archived thread.
    fn reopen(&self, py: Python<'_>) -> PyResult<()> {
        blocking(py, self.core.clone().set_status(ThreadStatus::Open))
    }

    /// Gives the thread a new title (trimmed; one line of 1 to 200
    /// characters).
    fn rename(&self, py: Python<'_>, title: String) -> PyResult<()> {
        blocking(py, self.core.clone().rename(title))
    }

    /// Archives the thread: kept, but listed apart
    /// (`channel.threads(archived=True)`) until it is reopened.
    /// `Conflict` when it is archived already.
    fn archive(&self, py: Python<'_>) -> PyResult<()> {
        blocking(py, self.core.clone().set_status(ThreadStatus::Archived))
    }

    /// Stops the thread's work: its running turn ends `stopped`.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move {
            core.backend.stop_thread(ThreadId(core.id())).await
        })
    }

    /// Reads the thread again (status, title, summary).
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move {
            let thread = core.backend.thread(ThreadId(core.id())).await?;
            core.set(thread);
            Ok(())
        })
    }
}

/// A thread, with asyncio calls.
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncThread {
    core: Arc<ThreadCore>,
}

thread_attributes!(AsyncThread);

impl AsyncThread {
    fn new(backend: SharedBackend, thread: helm_core::model::Thread) -> Self {
        AsyncThread {
            core: ThreadCore::new(backend, thread),
        }
    }
}

#[pymethods]
impl AsyncThread {
    /// Its messages in server order.
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let messages = core.backend.messages(ThreadId(core.id())).await?;
            Ok(messages.into_iter().map(Message::from).collect::<Vec<_>>())
        })
    }

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

    /// Marks the thread resolved.
    fn resolve<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, self.core.clone().set_status(ThreadStatus::Resolved))
    }

    /// Reopens a resolved, failed or archived thread.
    fn reopen<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, self.core.clone().set_status(ThreadStatus::Open))
    }

    /// Gives the thread a new title (see `Thread.rename`).
    fn rename<'py>(&self, py: Python<'py>, title: String) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, self.core.clone().rename(title))
    }

    /// Archives the thread (see `Thread.archive`).
    fn archive<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, self.core.clone().set_status(ThreadStatus::Archived))
    }

    /// Stops the thread's work.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            core.backend.stop_thread(ThreadId(core.id())).await
        })
    }

    /// Reads the thread again.
    fn refresh<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move {
            let thread = core.backend.thread(ThreadId(core.id())).await?;
            core.set(thread);
            Ok(())
        })
    }
}

impl ChannelCore {
    /// The snapshot, for the tool bridge.
    pub fn record(&self) -> Option<ChannelRecord> {
        self.snapshot()
    }
}

/// Adds the channel and thread classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Channel>()?;
    module.add_class::<AsyncChannel>()?;
    module.add_class::<Memory>()?;
    module.add_class::<AsyncMemory>()?;
    module.add_class::<Files>()?;
    module.add_class::<AsyncFiles>()?;
    module.add_class::<Thread>()?;
    module.add_class::<AsyncThread>()?;
    Ok(())
}
