//! A turn's typed events as Python sees them, the `Reply` a run ends with,
//! and the two streams that yield them: [`TurnStream`] (a blocking
//! iterator) and [`AsyncTurnStream`] (an async iterator).
//!
//! A stream runs the follower (`turn::run`) as a task on the shared runtime
//! and receives its events over a channel, so the turn proceeds while
//! Python is busy between events; the events wait for it in order.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyKeyboardInterrupt, PyStopAsyncIteration};
use pyo3::prelude::*;
use tokio::sync::mpsc;

use crate::backend::SharedBackend;
use crate::errors::{Failure, to_py};
use crate::records::{Approval, Model, ThreadInfo, ToolAction};
use crate::runtime::{awaitable, awaitable_py, blocking, interruptible, runtime};
use crate::turn::{self, RunResult, ThreadSlot, TurnEvent, TurnOutcome};

/// More of an agent's reply.
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct TextDelta {
    /// The text to append.
    pub text: String,
    /// The writing agent's `@handle`.
    pub agent: String,
}

#[pymethods]
impl TextDelta {
    fn __repr__(&self) -> String {
        format!("TextDelta(text={:?})", self.text)
    }
}

/// An agent started a tool call (journaled as a tool action).
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// What it was asked to do, summarised.
    pub input: String,
    /// The tool action's id in the journal.
    pub action_id: i64,
}

#[pymethods]
impl ToolCall {
    fn __repr__(&self) -> String {
        format!("ToolCall(tool={:?}, input={:?})", self.tool, self.input)
    }
}

/// A tool call finished.
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct ToolResult {
    /// The tool's name.
    pub tool: String,
    /// `ok`, `error`, `denied`, …
    pub status: String,
    /// What came of it, summarised.
    pub result: String,
    /// How long it took, in milliseconds.
    pub duration_ms: Option<i64>,
    /// The tool action's id in the journal.
    pub action_id: i64,
}

#[pymethods]
impl ToolResult {
    fn __repr__(&self) -> String {
        format!("ToolResult(tool={:?}, status={:?})", self.tool, self.status)
    }
}

/// Skipper was called into the thread.
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct SkipperCalled {
    /// Why.
    pub reason: String,
    /// The escalation's id.
    pub escalation_id: i64,
}

#[pymethods]
impl SkipperCalled {
    fn __repr__(&self) -> String {
        format!("SkipperCalled(reason={:?})", self.reason)
    }
}

/// A turn ended. A run may hold several (the resident's, Skipper's, the
/// resident's again); the stream stops after the last.
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct TurnEnded {
    /// The turn.
    pub turn_id: i64,
    /// The agent whose turn it was.
    pub agent: String,
    /// `completed`, `waiting`, `failed`, `stopped`, `cancelled` or `interrupted`.
    pub state: String,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Its reply's final text.
    pub text: String,
    /// The model that served it.
    pub model: Option<Model>,
}

#[pymethods]
impl TurnEnded {
    fn __repr__(&self) -> String {
        format!("TurnEnded(agent={:?}, state={:?})", self.agent, self.state)
    }
}

impl From<TurnOutcome> for TurnEnded {
    fn from(o: TurnOutcome) -> Self {
        TurnEnded {
            turn_id: o.turn_id,
            agent: o.agent,
            state: o.state,
            error: o.error,
            text: o.text,
            model: o.model,
        }
    }
}

macro_rules! approval_event {
    ($name:ident, $doc:literal, $decide:ident, $ret:ty) => {
        #[doc = $doc]
        #[pyclass(frozen, module = "onehelm")]
        pub struct $name {
            /// The request.
            #[pyo3(get)]
            pub approval: Approval,
            backend: SharedBackend,
        }

        #[pymethods]
        impl $name {
            /// The request's id.
            #[getter]
            fn id(&self) -> i64 {
                self.approval.id
            }

            /// What kind of action waits: `host_command`, `install_package`, …
            #[getter]
            fn action(&self) -> String {
                self.approval.action.clone()
            }

            /// Exactly what would be done.
            #[getter]
            fn summary(&self) -> String {
                self.approval.summary.clone()
            }

            /// Why the agent asks.
            #[getter]
            fn reason(&self) -> String {
                self.approval.reason.clone()
            }

            /// Approves the action (as the acting person, who must be the
            /// Captain or an admin); the waiting turn goes on.
            #[pyo3(signature = (note=None))]
            fn approve<'py>(&self, py: Python<'py>, note: Option<String>) -> PyResult<$ret> {
                $decide(py, self.backend.clone(), self.approval.id, true, note)
            }

            /// Denies the action; the agent is told and the turn goes on.
            #[pyo3(signature = (note=None))]
            fn deny<'py>(&self, py: Python<'py>, note: Option<String>) -> PyResult<$ret> {
                $decide(py, self.backend.clone(), self.approval.id, false, note)
            }

            fn __repr__(&self) -> String {
                format!(
                    concat!(stringify!($name), "(id={}, action={:?}, summary={:?})"),
                    self.approval.id, self.approval.action, self.approval.summary
                )
            }
        }
    };
}

fn decide_blocking(
    py: Python<'_>,
    backend: SharedBackend,
    id: i64,
    approve: bool,
    note: Option<String>,
) -> PyResult<Approval> {
    blocking(py, async move {
        backend.decide(id, approve, note).await.map(Approval::from)
    })
}

fn decide_async(
    py: Python<'_>,
    backend: SharedBackend,
    id: i64,
    approve: bool,
    note: Option<String>,
) -> PyResult<Bound<'_, PyAny>> {
    awaitable(py, async move {
        backend.decide(id, approve, note).await.map(Approval::from)
    })
}

approval_event!(
    ApprovalRequested,
    "An action waits for approval; `approve()` or `deny()` decides it.",
    decide_blocking,
    Approval
);
approval_event!(
    AsyncApprovalRequested,
    "An action waits for approval; `await approve()` or `await deny()` decides it.",
    decide_async,
    Bound<'py, PyAny>
);

/// What a run ended with: the final text, the thread, the model that
/// served it and the tool actions taken. `str(reply)` is the text.
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct Reply {
    /// The agent's final answer.
    pub text: String,
    /// The thread (session) it happened in, as it is now.
    pub thread: ThreadInfo,
    /// The model that served the last turn.
    pub model: Option<Model>,
    /// Every tool call of the run, in order.
    pub actions: Vec<ToolAction>,
    /// The last turn's end state (`completed`, `waiting`, `stopped`, …).
    pub state: String,
    /// The last turn's id.
    pub turn_id: i64,
    /// Why the last turn failed, if it did.
    pub error: Option<String>,
    /// The approvals `ask` stopped at (state `waiting`): the agent goes on
    /// once the Captain or an admin gives them.
    pub waiting_for: Vec<i64>,
    /// The tokens every model call of the run used (the agent's, and
    /// Skipper's when it was called in); `None` when a provider reported
    /// none or the run stopped at an approval.
    pub usage: Option<crate::records::Usage>,
}

#[pymethods]
impl Reply {
    /// The thread's id.
    #[getter]
    fn thread_id(&self) -> i64 {
        self.thread.id
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Reply(state={:?}, thread={}, text={:?})",
            self.state,
            self.thread.id,
            crate::records::clip(&self.text)
        )
    }
}

impl From<RunResult> for Reply {
    fn from(r: RunResult) -> Self {
        Reply {
            text: r.text,
            thread: r.thread.into(),
            model: r.model,
            actions: r.actions,
            state: r.state,
            turn_id: r.turn_id,
            error: r.error,
            waiting_for: r.waiting_for,
            usage: r.usage.map(Into::into),
        }
    }
}

/// A failed turn is an error for `ask` (the text would not be an answer);
/// other end states are returned as they are.
pub fn reply_or_error(result: RunResult) -> Result<Reply, Failure> {
    if result.state == "failed" {
        return Err(crate::errors::failure(
            helm_core::ErrorKind::Upstream,
            "turn_failed",
            format!(
                "the turn in thread {} failed: {}",
                result.thread.id,
                result.error.as_deref().unwrap_or("no reason given")
            ),
        ));
    }
    Ok(result.into())
}

/// One Python object for an event, in the flavour of its stream.
fn event_object(
    py: Python<'_>,
    event: TurnEvent,
    backend: &SharedBackend,
    asynchronous: bool,
) -> PyResult<Py<PyAny>> {
    Ok(match event {
        TurnEvent::TextDelta { text, agent } => Py::new(py, TextDelta { text, agent })?.into_any(),
        TurnEvent::ToolCall(a) => Py::new(
            py,
            ToolCall {
                tool: a.tool,
                input: a.input,
                action_id: a.id,
            },
        )?
        .into_any(),
        TurnEvent::ToolResult(a) => Py::new(
            py,
            ToolResult {
                tool: a.tool,
                status: a.status,
                result: a.result,
                duration_ms: a.duration_ms,
                action_id: a.id,
            },
        )?
        .into_any(),
        TurnEvent::ApprovalRequested(approval) if asynchronous => Py::new(
            py,
            AsyncApprovalRequested {
                approval,
                backend: backend.clone(),
            },
        )?
        .into_any(),
        TurnEvent::ApprovalRequested(approval) => Py::new(
            py,
            ApprovalRequested {
                approval,
                backend: backend.clone(),
            },
        )?
        .into_any(),
        TurnEvent::SkipperCalled {
            reason,
            escalation_id,
        } => Py::new(
            py,
            SkipperCalled {
                reason,
                escalation_id,
            },
        )?
        .into_any(),
        TurnEvent::TurnEnded(outcome) => Py::new(py, TurnEnded::from(outcome))?.into_any(),
    })
}

enum Item {
    Event(TurnEvent),
    Done(Box<RunResult>),
    Failed(Failure),
}

/// What both stream flavours share: the running follower and its output.
struct StreamState {
    backend: SharedBackend,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Item>>,
    slot: ThreadSlot,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    reply: Mutex<Option<Py<Reply>>>,
}

impl StreamState {
    fn start(backend: SharedBackend, channel: String, text: String, thread: Option<i64>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let slot = ThreadSlot::default();
        let events = tx.clone();
        let task = runtime().spawn(turn::run(
            backend.clone(),
            channel,
            turn::Start::Ask(text),
            thread.map(helm_core::model::ThreadId),
            slot.clone(),
            turn::Until::End,
            move |event| {
                let _ = events.send(Item::Event(event));
            },
        ));
        let task = runtime().spawn(async move {
            let item = match task.await {
                Ok(Ok(result)) => Item::Done(Box::new(result)),
                Ok(Err(failure)) => Item::Failed(failure),
                Err(_) => return,
            };
            let _ = tx.send(item);
        });
        StreamState {
            backend,
            rx: tokio::sync::Mutex::new(rx),
            slot,
            task: Mutex::new(Some(task)),
            reply: Mutex::new(None),
        }
    }

    /// The next item, `None` once the run is over.
    async fn next(&self) -> Option<Item> {
        self.rx.lock().await.recv().await
    }

    /// Turns an item into the Python event, or ends the stream.
    fn to_python(
        &self,
        py: Python<'_>,
        item: Option<Item>,
        asynchronous: bool,
    ) -> PyResult<Option<Py<PyAny>>> {
        match item {
            Some(Item::Event(event)) => {
                event_object(py, event, &self.backend, asynchronous).map(Some)
            }
            Some(Item::Done(result)) => {
                let reply = Py::new(py, Reply::from(*result))?;
                if let Ok(mut slot) = self.reply.lock() {
                    *slot = Some(reply);
                }
                Ok(None)
            }
            Some(Item::Failed(failure)) => Err(to_py(failure)),
            None => Ok(None),
        }
    }

    fn reply(&self, py: Python<'_>) -> Option<Py<Reply>> {
        self.reply
            .lock()
            .ok()
            .and_then(|r| r.as_ref().map(|r| r.clone_ref(py)))
    }

    /// Whether the run is still going.
    fn running(&self) -> bool {
        self.task
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(|t| !t.is_finished()))
            .unwrap_or(false)
    }

    /// Stops the run's thread (its running turn ends `stopped`) if the run
    /// is still going, and stops following.
    async fn stop(backend: SharedBackend, slot: ThreadSlot) -> crate::errors::Result<()> {
        let thread = slot.lock().ok().and_then(|s| *s);
        if let Some(thread) = thread {
            backend.stop_thread(thread).await?;
        }
        Ok(())
    }

    fn abort(&self) {
        if let Some(task) = self.task.lock().ok().and_then(|mut t| t.take()) {
            task.abort();
        }
    }
}

/// The events of one run, as a blocking iterator (`for event in stream`).
/// The GIL is released while waiting; Ctrl-C stops the run's thread and
/// raises `KeyboardInterrupt`. `reply` is set once the iterator is spent.
#[pyclass(module = "onehelm")]
pub struct TurnStream {
    state: StreamState,
}

impl TurnStream {
    /// Starts the run.
    pub fn start(
        backend: SharedBackend,
        channel: String,
        text: String,
        thread: Option<i64>,
    ) -> Self {
        TurnStream {
            state: StreamState::start(backend, channel, text, thread),
        }
    }
}

#[pymethods]
impl TurnStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let state = &self.state;
        match interruptible(py, async { Ok(state.next().await) }) {
            Ok(item) => state.to_python(py, item, false),
            Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
                let (backend, slot) = (state.backend.clone(), state.slot.clone());
                state.abort();
                blocking(py, StreamState::stop(backend, slot))?;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// The run's `Reply`, once the stream has ended (else `None`).
    #[getter]
    fn reply(&self, py: Python<'_>) -> Option<Py<Reply>> {
        self.state.reply(py)
    }

    /// Stops the run: its thread's running turn ends `stopped`, and the
    /// stream yields nothing more.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let (backend, slot) = (self.state.backend.clone(), self.state.slot.clone());
        let running = self.state.running();
        self.state.abort();
        if running {
            blocking(py, StreamState::stop(backend, slot))?;
        }
        Ok(())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

/// The events of one run, as an async iterator (`async for event in
/// stream`). Cancelling the consumer does not stop the turn; `aclose()`
/// does. `reply` is set once the iterator is spent.
#[pyclass(module = "onehelm")]
pub struct AsyncTurnStream {
    state: Arc<StreamState>,
}

impl AsyncTurnStream {
    /// Starts the run.
    pub fn start(
        backend: SharedBackend,
        channel: String,
        text: String,
        thread: Option<i64>,
    ) -> Self {
        AsyncTurnStream {
            state: Arc::new(StreamState::start(backend, channel, text, thread)),
        }
    }
}

#[pymethods]
impl AsyncTurnStream {
    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.state.clone();
        awaitable_py(py, async move {
            let item = state.next().await;
            Python::attach(|py| match state.to_python(py, item, true)? {
                Some(event) => Ok(event),
                None => Err(PyStopAsyncIteration::new_err(())),
            })
        })
    }

    /// The run's `Reply`, once the stream has ended (else `None`).
    #[getter]
    fn reply(&self, py: Python<'_>) -> Option<Py<Reply>> {
        self.state.reply(py)
    }

    /// Stops the run: its thread's running turn ends `stopped`.
    fn aclose<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (backend, slot) = (self.state.backend.clone(), self.state.slot.clone());
        let running = self.state.running();
        self.state.abort();
        awaitable(py, async move {
            if running {
                StreamState::stop(backend, slot).await?;
            }
            Ok(())
        })
    }

    fn __aenter__<'py>(slf: PyRef<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this: Py<PyAny> = slf.into_pyobject(py)?.into_any().unbind();
        awaitable(py, async move { Ok(this) })
    }

    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.aclose(py)
    }
}

/// Adds the event classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<TextDelta>()?;
    module.add_class::<ToolCall>()?;
    module.add_class::<ToolResult>()?;
    module.add_class::<ApprovalRequested>()?;
    module.add_class::<AsyncApprovalRequested>()?;
    module.add_class::<SkipperCalled>()?;
    module.add_class::<TurnEnded>()?;
    module.add_class::<Reply>()?;
    module.add_class::<TurnStream>()?;
    module.add_class::<AsyncTurnStream>()?;
    Ok(())
}
