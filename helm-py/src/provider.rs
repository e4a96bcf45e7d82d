//! A Python object as a model provider: helm-core's `Provider` port served
//! by `stream(request)` or `complete(request)` of an object in this
//! process. The turn engine calls it like any adapter.
//!
//! The object is called on one of the runtime's blocking threads, holding
//! the GIL only while Python runs. A plain method runs there; an `async`
//! one (a coroutine, or an async generator for `stream`) runs on the event
//! loop that was running when it was registered through `AsyncHelm`, or on
//! the package's own loop when registered through a blocking `Helm`. `stream` yields
//! `str` pieces of text and `ModelToolCall`s; `complete` returns a `str` or
//! a `ModelResponse`. A Python exception fails the turn with a
//! `ProviderError` that names it.

use std::sync::Arc;

use async_trait::async_trait;
use futures_core::Stream;
use helm_core::error::{Error, ProviderFailure, Result};
use helm_core::provider::{
    ChatRequest, EventStream, FinishReason, Provider, StreamEvent, ToolCall,
};
use pyo3::exceptions::PyStopAsyncIteration;
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3_async_runtimes::TaskLocals;
use tokio::sync::mpsc;

/// A tool call a Python provider makes (yielded by `stream`, or listed in
/// a `ModelResponse`).
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct ModelToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
    /// The call's id (one is made up when not given).
    pub id: Option<String>,
}

#[pymethods]
impl ModelToolCall {
    /// A call of tool `name` with `arguments` (a `dict`, or JSON text).
    #[new]
    #[pyo3(signature = (name, arguments=None, id=None))]
    fn py_new(
        py: Python<'_>,
        name: String,
        arguments: Option<&Bound<'_, PyAny>>,
        id: Option<String>,
    ) -> PyResult<Self> {
        let arguments = match arguments {
            None => "{}".to_string(),
            Some(a) if a.is_instance_of::<PyString>() => a.extract()?,
            Some(a) => py.import("json")?.call_method1("dumps", (a,))?.extract()?,
        };
        Ok(ModelToolCall {
            name,
            arguments,
            id,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ModelToolCall(name={:?}, arguments={})",
            self.name, self.arguments
        )
    }
}

/// A whole answer of a Python provider's `complete`.
#[pyclass(frozen, get_all, module = "onehelm")]
pub struct ModelResponse {
    /// The answer text.
    pub text: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ModelToolCall>,
}

#[pymethods]
impl ModelResponse {
    /// An answer: text, tool calls, or both.
    #[new]
    #[pyo3(signature = (text="", tool_calls=None))]
    fn py_new(text: &str, tool_calls: Option<Vec<Py<ModelToolCall>>>) -> Self {
        ModelResponse {
            text: text.to_string(),
            tool_calls: tool_calls
                .unwrap_or_default()
                .iter()
                .map(|c| c.get().clone())
                .collect(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "ModelResponse(text={:?}, tool_calls={})",
            crate::records::clip(&self.text),
            self.tool_calls.len()
        )
    }
}

/// What the provider is asked: the model, the system prompt, the
/// conversation and the tools the model may call.
#[pyclass(frozen, module = "onehelm")]
pub struct ModelRequest {
    request: ChatRequest,
}

#[pymethods]
impl ModelRequest {
    /// The model asked for.
    #[getter]
    fn model(&self) -> String {
        self.request.model.clone()
    }

    /// The system prompt (identity, purpose, memory, the `/workspace`
    /// contract).
    #[getter]
    fn system(&self) -> String {
        self.request.system.clone()
    }

    /// The conversation: dicts with `role` (`user`, `assistant`, `tool`)
    /// and `content`; assistant messages may have `tool_calls`, tool
    /// results have `call_id` and `is_error`.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_value(py, &self.request.messages)
    }

    /// The tools: dicts with `name`, `description` and `parameters` (a
    /// JSON Schema).
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_value(py, &self.request.tools)
    }

    /// The last user message's text as the model sees it (a convenience for
    /// simple providers): a thread can have several people, so each of their
    /// messages starts with its author's name (`ada: @launch-agent hi`).
    #[getter]
    fn prompt(&self) -> String {
        self.request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                helm_core::provider::ChatMessage::User { content } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The upper bound on output tokens, if any.
    #[getter]
    fn max_tokens(&self) -> Option<u32> {
        self.request.max_tokens
    }

    fn __repr__(&self) -> String {
        format!(
            "ModelRequest(model={:?}, messages={}, tools={})",
            self.request.model,
            self.request.messages.len(),
            self.request.tools.len()
        )
    }
}

fn json_value<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A Python object serving as a provider.
pub struct PyProvider {
    name: String,
    object: Arc<Py<PyAny>>,
    /// The loop its `async` methods run on: the one running when it was
    /// registered through `AsyncHelm`; `None` for the package's own.
    locals: Option<Arc<TaskLocals>>,
}

impl PyProvider {
    /// Wraps `object`, checking it has `stream` or `complete`; its `async`
    /// methods run on the loop in `locals` (the package's own without one).
    pub fn new(
        py: Python<'_>,
        name: String,
        object: Py<PyAny>,
        locals: Option<Arc<TaskLocals>>,
    ) -> PyResult<Self> {
        let bound = object.bind(py);
        if !(bound.hasattr("stream")? || bound.hasattr("complete")?) {
            return Err(crate::errors::to_py(crate::errors::failure(
                helm_core::ErrorKind::Invalid,
                "invalid",
                format!(
                    "provider {name:?} must have a stream(request) or complete(request) method"
                ),
            )));
        }
        Ok(PyProvider {
            name,
            object: Arc::new(object),
            locals,
        })
    }
}

type Sender = mpsc::UnboundedSender<Result<StreamEvent>>;

/// The failure for a Python exception raised by the provider.
fn raised(name: &str, py: Python<'_>, err: PyErr) -> Error {
    let text = err
        .value(py)
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| err.to_string());
    Error::provider(
        name,
        ProviderFailure::Server,
        format!("the Python provider raised {text}"),
    )
}

/// Runs the provider's method for one request, sending its events.
struct Call {
    name: String,
    object: Arc<Py<PyAny>>,
    locals: Option<Arc<TaskLocals>>,
    tx: Sender,
    calls: usize,
}

impl Call {
    fn send(&self, event: StreamEvent) -> bool {
        self.tx.send(Ok(event)).is_ok()
    }

    /// One item the provider produced: text, or a tool call.
    fn item(&mut self, item: &Bound<'_, PyAny>) -> Result<bool> {
        if let Ok(text) = item.cast::<PyString>() {
            let text = text.to_string();
            return Ok(text.is_empty() || self.send(StreamEvent::TextDelta { text }));
        }
        if let Ok(call) = item.cast::<ModelToolCall>() {
            let call = call.get().clone();
            self.tool_call(call);
            return Ok(!self.tx.is_closed());
        }
        Err(Error::provider(
            &self.name,
            ProviderFailure::MalformedStream,
            format!(
                "the Python provider produced {}; produce str text or onehelm.ModelToolCall",
                item.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ),
        ))
    }

    fn tool_call(&mut self, call: ModelToolCall) {
        let index = self.calls;
        self.calls += 1;
        let id = call.id.unwrap_or_else(|| format!("call_{}", index + 1));
        self.send(StreamEvent::ToolCallStart {
            index,
            id: id.clone(),
            name: call.name.clone(),
        });
        self.send(StreamEvent::ToolCallComplete {
            index,
            call: ToolCall {
                id,
                name: call.name,
                arguments: call.arguments,
            },
        });
    }

    fn finish(&self) {
        let reason = if self.calls > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        self.send(StreamEvent::Finish { reason });
    }

    /// Awaits a Python awaitable on the provider's loop, with the GIL
    /// released while it runs.
    fn wait(&self, py: Python<'_>, awaitable: Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::runtime::await_python(py, self.locals.as_deref(), awaitable)
    }

    fn run(&mut self, py: Python<'_>, request: ChatRequest) -> Result<()> {
        let name = self.name.clone();
        let fail = |py: Python<'_>, e: PyErr| raised(&name, py, e);
        let object = self.object.bind(py).clone();
        let request = Py::new(py, ModelRequest { request }).map_err(|e| fail(py, e))?;
        if object.hasattr("stream").map_err(|e| fail(py, e))? {
            let produced = object
                .call_method1("stream", (request,))
                .map_err(|e| fail(py, e))?;
            if produced.hasattr("__anext__").map_err(|e| fail(py, e))? {
                loop {
                    let next = produced
                        .call_method0("__anext__")
                        .map_err(|e| fail(py, e))?;
                    match self.wait(py, next) {
                        Ok(item) => {
                            if !self.item(item.bind(py))? {
                                return Ok(());
                            }
                        }
                        Err(e) if e.is_instance_of::<PyStopAsyncIteration>(py) => break,
                        Err(e) => return Err(fail(py, e)),
                    }
                }
            } else {
                let iterator = produced.try_iter().map_err(|e| fail(py, e))?;
                for item in iterator {
                    let item = item.map_err(|e| fail(py, e))?;
                    if !self.item(&item)? {
                        return Ok(());
                    }
                }
            }
        } else {
            let mut answer = object
                .call_method1("complete", (request,))
                .map_err(|e| fail(py, e))?;
            if answer.hasattr("__await__").map_err(|e| fail(py, e))? {
                answer = self
                    .wait(py, answer)
                    .map_err(|e| fail(py, e))?
                    .into_bound(py);
            }
            if let Ok(response) = answer.cast::<ModelResponse>() {
                let response = response.get();
                if !response.text.is_empty() {
                    self.send(StreamEvent::TextDelta {
                        text: response.text.clone(),
                    });
                }
                for call in response.tool_calls.clone() {
                    self.tool_call(call);
                }
            } else if !self.item(&answer)? {
                return Ok(());
            }
        }
        self.finish();
        Ok(())
    }
}

struct Receiver(mpsc::UnboundedReceiver<Result<StreamEvent>>);

impl Stream for Receiver {
    type Item = Result<StreamEvent>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

#[async_trait]
impl Provider for PyProvider {
    async fn stream(&self, request: ChatRequest) -> Result<EventStream> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut call = Call {
            name: self.name.clone(),
            object: self.object.clone(),
            locals: self.locals.clone(),
            tx: tx.clone(),
            calls: 0,
        };
        // The Python code runs off the async workers; its events arrive as
        // they are produced.
        tokio::task::spawn_blocking(move || {
            if let Err(e) = Python::attach(|py| call.run(py, request)) {
                let _ = tx.send(Err(e));
            }
        });
        Ok(Box::pin(Receiver(rx)))
    }
}

/// Adds the provider classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<ModelToolCall>()?;
    module.add_class::<ModelResponse>()?;
    module.add_class::<ModelRequest>()?;
    Ok(())
}
