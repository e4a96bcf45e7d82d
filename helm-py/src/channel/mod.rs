//! The live objects of a workspace's channels: `Channel` and
//! `AsyncChannel`, with their `memory` (in `memory`), `files` (in `files`)
//! and threads (in `thread`). Each blocking and asyncio pair shares one
//! core; the blocking member waits with the GIL released, the asyncio
//! member returns awaitables.
//!
//! A channel object keeps a snapshot of the channel (name, purpose,
//! status) for its attributes, refreshed by the calls that change it and
//! by `refresh()`; it addresses the channel by id, so a rename elsewhere
//! does not lose it.
//!
//! This file holds the two channel classes, the core and attribute getters
//! they share, and the argument checks every part uses. Beside it: `ask`
//! (a question run to its answer, for channels and threads alike),
//! `listing` (a channel's threads, a page at a time, and the iterators over
//! them all), `tools` (`@channel.tool`) and `twins` (the macro that writes
//! a blocking method and its asyncio twin from one body).

mod ask;
mod files;
mod listing;
mod memory;
mod thread;
mod tools;
mod twins;

use std::sync::{Arc, Mutex};

use helm_core::ErrorKind;
use helm_core::model::{ModelChoice, ThreadId};
use helm_core::store::ChannelRecord;
use pyo3::prelude::*;

use crate::backend::{RunRequest, SharedBackend};
use crate::errors::{Result, failure, to_py};
use crate::events::{AsyncTurnStream, Reply, TurnStream};
use crate::records::{CommandResult, ImportReport, Model, ToolAction};
use crate::runtime::{awaitable, blocking};
use crate::turn::{Start, ThreadSlot};

use ask::{ask_blocking, ask_future};
pub use files::{AsyncFiles, Files};
pub use listing::{AsyncThreadIterator, ThreadIterator};
pub use memory::{AsyncMemory, Memory};
pub use thread::{AsyncThread, Thread};
use tools::{ToolOptions, remove_tool, tool_decorator};
use twins::twins;

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

    /// Keeps the channel as a change answered with it.
    fn keep(&self, changed: Result<ChannelRecord>) -> Result<()> {
        self.set(changed?);
        Ok(())
    }

    fn get<T>(&self, f: impl FnOnce(&ChannelRecord) -> T, default: T) -> T {
        self.record.lock().map(|r| f(&r)).unwrap_or(default)
    }
}

impl ChannelCore {
    /// The snapshot, for the tool bridge.
    pub fn record(&self) -> Option<ChannelRecord> {
        self.snapshot()
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

/// A page size every listing serves (threads, activity, memory): 1 to
/// 1000.
fn check_limit(limit: usize) -> Result<usize> {
    check_range("limit", limit)
}

/// [`check_limit`] for a page size given as the argument `name`.
fn check_range(name: &str, size: usize) -> Result<usize> {
    if (1..=1000).contains(&size) {
        Ok(size)
    } else {
        Err(failure(
            ErrorKind::Invalid,
            "invalid",
            format!("{name} {size} is out of range: ask for 1 to 1000"),
        ))
    }
}

/// A `timeout` (of `ask`, `retry`, `run`), when given, is a positive,
/// finite number of seconds.
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

twins! {
    Channel / AsyncChannel;

    /// The channel's tool journal (or one thread's), newest last.
    async
    /// The channel's tool journal (or one thread's), newest last.
    #[pyo3(signature = (*, thread=None, limit=50))]
    fn activity(&self, thread: Option<i64>, limit: usize) -> Vec<ToolAction> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        async move {
            let actions = backend
                .activity(&key, thread.map(ThreadId), check_limit(limit)?)
                .await?;
            Ok(actions.into_iter().map(ToolAction::from).collect::<Vec<_>>())
        }
    }

    /// Imports a history (JSON Lines of threads, messages and memory
    /// records; docs/memory.md) into the channel: `source` is the lines
    /// (`bytes`) or a file's path. All or nothing: a bad line raises
    /// `InvalidInput` naming every bad line, and nothing is imported.
    async
    /// Imports a history into the channel (see `Channel.import_history`).
    fn import_history(&self, source: HistorySource) -> ImportReport {
        import_from(self.core.backend.clone(), self.core.key.clone(), source)
    }

    /// Runs a shell command in the channel's computer, as its agent would
    /// (in `/workspace`, under the channel's isolation), and waits for it.
    async
    /// Runs a shell command in the channel's computer (see `Channel.run`).
    #[pyo3(signature = (command, *, cwd=None, timeout=None))]
    fn run(&self, command: String, cwd: Option<String>, timeout: Option<f64>) -> CommandResult {
        timeout_ok(timeout)?;
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        let request = RunRequest {
            command,
            cwd,
            timeout_secs: timeout,
        };
        async move { backend.run(&key, request).await.map(CommandResult::from) }
    }

    /// The model that will serve the next turn (`None` if none is set
    /// anywhere).
    async
    /// The model that will serve the next turn.
    fn model(&self) -> Option<Model> {
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        async move { Ok(backend.model(&key).await?.map(Model::from)) }
    }

    /// Sets the channel's model (`set_model(None)` goes back to the
    /// workspace's); identity, memory, files and history stay. Returns the
    /// model that now serves it.
    async
    /// Sets (or with `None` clears) the channel's model.
    #[pyo3(signature = (provider, model=None))]
    fn set_model(&self, provider: Option<String>, model: Option<String>) -> Option<Model> {
        let choice = model_choice(provider, model).map_err(to_py)?;
        let (backend, key) = (self.core.backend.clone(), self.core.key.clone());
        async move { Ok(backend.set_model(&key, choice).await?.map(Model::from)) }
    }

    /// Renames the channel live; its agent keeps its handle, files, memory
    /// and threads. The old name is free again.
    async
    /// Renames the channel live; its agent keeps its handle.
    fn rename(&self, name: String) -> () {
        let core = self.core.clone();
        async move { core.keep(core.backend.rename(&core.key, &name).await) }
    }

    /// Archives the channel: its agent is paused, everything is kept.
    async
    /// Archives the channel.
    fn archive(&self) -> () {
        let core = self.core.clone();
        async move { core.keep(core.backend.archive(&core.key).await) }
    }

    /// Restores an archived channel with the same agent world.
    async
    /// Restores an archived channel.
    fn restore(&self) -> () {
        let core = self.core.clone();
        async move { core.keep(core.backend.restore(&core.key).await) }
    }

    /// Deletes an archived channel and its agent world for good; `confirm`
    /// must be the channel's name.
    async
    /// Deletes an archived channel for good; `confirm` must be its name.
    #[pyo3(signature = (*, confirm))]
    fn delete(&self, confirm: String) -> () {
        let core = self.core.clone();
        async move { core.backend.delete(&core.key, &confirm).await }
    }

    /// Reads the channel again (name, purpose, status).
    async
    /// Reads the channel again.
    fn refresh(&self) -> () {
        let core = self.core.clone();
        async move { core.keep(core.backend.channel(&core.key).await) }
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

    /// All the channel's threads, most recently active first, as an
    /// iterator that reads them `page_size` at a time, each page only when
    /// the loop reaches it: a loop that stops early reads no more.
    /// `search`, `archived` and `before` as for `threads` (a search is one
    /// ranked page, at most `page_size`).
    #[pyo3(signature = (*, page_size=50, search=None, archived=None, before=None))]
    fn iter_threads(
        &self,
        page_size: usize,
        search: Option<String>,
        archived: Option<bool>,
        before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ThreadIterator> {
        let listing = self.core.listing(search, archived, before)?;
        Ok(ThreadIterator::new(listing.walk(page_size).map_err(to_py)?))
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

    /// Gives the channel's agent a Python function as a tool: as
    /// `@channel.tool` or `@channel.tool(name=..., description=...,
    /// schema=..., approval=...)`. The name is the function's, the
    /// description its docstring, the input schema read from its type
    /// hints unless given. `approval` is `"policy"` (the channel's approval
    /// rule for `tool_call`: a member's call waits for the Captain unless a
    /// rule says otherwise), `"always"` or `"none"`. The function runs in
    /// this process and is returned unchanged; an `async def` runs on a
    /// loop of the package's own. Embedded workspaces only.
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
            asyncio: false,
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

    /// All the channel's threads, read a page at a time as the `async for`
    /// loop reaches it (see `Channel.iter_threads`).
    #[pyo3(signature = (*, page_size=50, search=None, archived=None, before=None))]
    fn iter_threads(
        &self,
        page_size: usize,
        search: Option<String>,
        archived: Option<bool>,
        before: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<AsyncThreadIterator> {
        let listing = self.core.listing(search, archived, before)?;
        Ok(AsyncThreadIterator::new(
            listing.walk(page_size).map_err(to_py)?,
        ))
    }

    /// One of the channel's threads, by id.
    fn thread<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyAny>> {
        let backend = self.core.backend.clone();
        awaitable(py, async move {
            let thread = backend.thread(ThreadId(id)).await?;
            Ok(AsyncThread::new(backend, thread))
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
            asyncio: true,
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
    module.add_class::<ThreadIterator>()?;
    module.add_class::<AsyncThreadIterator>()?;
    Ok(())
}
