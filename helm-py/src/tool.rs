//! Python functions as tools of a channel's agent (`@channel.tool`), on
//! helm-core's `Tool` abstraction: the agent is offered the function's
//! name, docstring and a JSON Schema read from its type hints (or given);
//! the registry checks the arguments and the approval class, journals every
//! call as a tool action, and calls the function here, in this process.
//!
//! The function runs on one of the runtime's blocking threads holding the
//! GIL; an `async def` given to an `AsyncChannel` runs on the event loop
//! that was running when it was registered, one given to a blocking
//! `Channel` on the package's own loop. What it returns goes to the model: a `str` as it is, `None`
//! as `ok`, anything else as JSON. An exception is a tool error the model
//! reads (`error: ValueError: ...`); the turn goes on.

use std::sync::Arc;

use async_trait::async_trait;
use helm_core::model::ApprovalAction;
use helm_core::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, ToolSpec};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3_async_runtimes::TaskLocals;
use serde_json::Value;

use crate::errors::{failure, to_py};
use crate::runtime::await_python;

/// How a Python tool's calls are approved, from `approval="..."`.
pub fn approval_class(raw: &str) -> PyResult<ApprovalClass> {
    match raw {
        "none" => Ok(ApprovalClass::None),
        "policy" => Ok(ApprovalClass::Policy(ApprovalAction::ToolCall)),
        "always" => Ok(ApprovalClass::Always),
        other => Err(to_py(failure(
            helm_core::ErrorKind::Invalid,
            "invalid",
            format!(
                "approval {other:?} is not one of \"policy\" (the channel's approval rule for \
                 tool_call, the default), \"always\" or \"none\""
            ),
        ))),
    }
}

/// A Python callable serving as a tool.
pub struct PyTool {
    spec: ToolSpec,
    function: Arc<Py<PyAny>>,
    locals: Option<Arc<TaskLocals>>,
}

impl PyTool {
    /// The tool for `function`: `name`, `description` and `schema` default
    /// to what its signature, docstring and type hints say. An `async def`
    /// runs on the loop in `locals`, or on the package's own without one.
    pub fn new(
        py: Python<'_>,
        function: Py<PyAny>,
        name: Option<String>,
        description: Option<String>,
        schema: Option<&Bound<'_, PyAny>>,
        approval: ApprovalClass,
        locals: Option<Arc<TaskLocals>>,
    ) -> PyResult<Self> {
        let bound = function.bind(py);
        if !bound.is_callable() {
            return Err(to_py(failure(
                helm_core::ErrorKind::Invalid,
                "invalid",
                "a tool is a function (or another callable)",
            )));
        }
        let described = py
            .import("onehelm._tools")?
            .call_method1("describe", (bound,))
            .map_err(|e| {
                to_py(failure(
                    helm_core::ErrorKind::Invalid,
                    "invalid",
                    format!("cannot make a tool of {bound}: {e}"),
                ))
            })?;
        let (found_name, found_description, found_schema): (String, String, Bound<'_, PyAny>) =
            described.extract()?;
        let schema = match schema {
            Some(given) => given.clone(),
            None => found_schema,
        };
        let schema_text: String = py
            .import("json")?
            .call_method1("dumps", (schema,))?
            .extract()?;
        let schema: Value = serde_json::from_str(&schema_text).map_err(|e| {
            to_py(failure(
                helm_core::ErrorKind::Invalid,
                "invalid",
                format!("the tool's schema is not JSON: {e}"),
            ))
        })?;
        let spec = ToolSpec::new(
            name.unwrap_or(found_name),
            description.unwrap_or(found_description),
            schema,
            approval,
        )
        .map_err(|e| to_py(e.into()))?;
        Ok(PyTool {
            spec,
            function: Arc::new(function),
            locals,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

/// Calls the function with the arguments; its result as text for the model.
fn call_python(
    py: Python<'_>,
    function: &Py<PyAny>,
    locals: Option<&TaskLocals>,
    input: &Value,
) -> PyResult<String> {
    let json = py.import("json")?;
    let kwargs = json.call_method1("loads", (input.to_string(),))?;
    let kwargs = kwargs.cast::<PyDict>()?;
    let mut result = function.bind(py).call((), Some(kwargs))?;
    if result.hasattr("__await__")? {
        result = await_python(py, locals, result)?.into_bound(py);
    }
    if result.is_none() {
        Ok("ok".to_string())
    } else if let Ok(text) = result.cast::<PyString>() {
        Ok(text.to_string())
    } else {
        match json.call_method1("dumps", (&result,)) {
            Ok(text) => text.extract(),
            Err(_) => Ok(result.str()?.to_string()),
        }
    }
}

fn raised(py: Python<'_>, err: &PyErr) -> String {
    let kind = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    format!("{kind}: {}", err.value(py))
}

#[async_trait]
impl Tool for PyTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn check(&self, input: &Value) -> helm_core::Result<()> {
        let schema = &self.spec.input_schema;
        let Some(given) = input.as_object() else {
            return Err(helm_core::Error::invalid(
                "tool input",
                "it must be an object",
            ));
        };
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !given.contains_key(name) {
                    return Err(helm_core::Error::invalid(
                        "tool input",
                        format!("{name} is required ({})", self.spec.expected_input()),
                    ));
                }
            }
        }
        if schema.get("additionalProperties") == Some(&Value::Bool(false))
            && let Some(known) = schema.get("properties").and_then(Value::as_object)
            && let Some(extra) = given.keys().find(|k| !known.contains_key(*k))
        {
            return Err(helm_core::Error::invalid(
                "tool input",
                format!(
                    "{extra} is not an argument ({})",
                    self.spec.expected_input()
                ),
            ));
        }
        Ok(())
    }

    async fn call(&self, _cx: &ToolContext<'_>, input: Value) -> helm_core::Result<ToolOutput> {
        let function = self.function.clone();
        let locals = self.locals.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            Python::attach(|py| {
                call_python(py, &function, locals.as_deref(), &input).map_err(|e| raised(py, &e))
            })
        })
        .await
        .map_err(|e| helm_core::Error::Internal(format!("a Python tool's thread failed: {e}")))?;
        Ok(match outcome {
            Ok(text) => ToolOutput::text(text),
            Err(message) => ToolOutput::error(message),
        })
    }
}
