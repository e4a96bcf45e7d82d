//! One tokio runtime for the whole process, and the two ways Python waits
//! on it: [`blocking`] (the blocking classes) and [`awaitable`] (the asyncio
//! classes). Every call that may block goes through one of them.
//!
//! `blocking` releases the GIL for the whole wait, so other Python threads
//! run meanwhile, and wakes every [`SIGNAL_CHECK`] to let Python handle
//! signals: Ctrl-C raises `KeyboardInterrupt` in the waiting thread and
//! drops (cancels) the Rust future.

use std::future::Future;
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors::{Result, to_py};

/// How often a blocking wait lets Python look at pending signals.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// The shared runtime (pyo3-async-runtimes' own, so asyncio awaitables and
/// blocking calls run on the same one).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Runs `fut` to completion on the shared runtime with the GIL released,
/// mapping its failure to the exception hierarchy. Ctrl-C (any signal whose
/// handler raises) interrupts the wait and drops the future.
///
/// Works from any thread that is not itself running async code, including
/// the runtime's blocking threads (where Python tools and providers run).
pub fn blocking<F, T>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = Result<T>> + Send,
    T: Send,
{
    interruptible(py, async move { fut.await.map_err(to_py) })
}

/// [`blocking`] for a future that already yields Python errors.
pub fn interruptible<F, T>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = PyResult<T>> + Send,
    T: Send,
{
    let handle = runtime().handle().clone();
    py.detach(move || {
        handle.block_on(async move {
            let mut fut = std::pin::pin!(fut);
            loop {
                tokio::select! {
                    out = &mut fut => return out,
                    _ = tokio::time::sleep(SIGNAL_CHECK) => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}

/// `fut` as a Python awaitable on the running asyncio loop, mapping its
/// failure to the exception hierarchy. Cancelling the awaitable drops the
/// future.
pub fn awaitable<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    pyo3_async_runtimes::tokio::future_into_py(py, async move { fut.await.map_err(to_py) })
}

/// Builds the runtime (called once, when the module is imported).
pub fn init() {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("onehelm");
    pyo3_async_runtimes::tokio::init(builder);
}
