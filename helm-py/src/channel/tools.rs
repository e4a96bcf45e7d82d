//! `@channel.tool` and `remove_tool`, for both channel flavours: a Python
//! function given to the channel's agent as a tool.

use std::sync::Arc;

use pyo3::prelude::*;

use super::ChannelCore;
use crate::runtime::blocking;

/// `@channel.tool` for both flavours: registers `function` (returning it
/// unchanged), or, called with options only, returns the decorator.
pub(super) fn tool_decorator(
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
                // A blocking channel's caller waits with its thread, so a
                // loop running there could not run the tool.
                options
                    .asyncio
                    .then(|| crate::runtime::running_loop(py))
                    .flatten(),
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
                    asyncio: options.asyncio,
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
pub(super) struct ToolOptions {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) schema: Option<Py<PyAny>>,
    pub(super) approval: String,
    /// Whether an `AsyncChannel` registers it: its `async def` then runs
    /// on the loop running now, not on the package's own.
    pub(super) asyncio: bool,
}

pub(super) fn remove_tool(py: Python<'_>, core: &Arc<ChannelCore>, name: String) -> PyResult<()> {
    let (backend, key) = (core.backend.clone(), core.key.clone());
    blocking(
        py,
        async move { backend.unregister_tool(&key, &name).await },
    )
}
