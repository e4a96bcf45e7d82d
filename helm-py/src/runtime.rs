//! One tokio runtime for the whole process, and the two ways Python waits
//! on it: [`blocking`] (the blocking classes) and [`awaitable`] (the asyncio
//! classes). Every call that may block goes through one of them.
//!
//! `blocking` releases the GIL for the whole wait, so other Python threads
//! run meanwhile, and wakes every [`SIGNAL_CHECK`] to let Python handle
//! signals: Ctrl-C raises `KeyboardInterrupt` in the waiting thread and
//! drops (cancels) the Rust future.
//!
//! `awaitable` hands each result to asyncio from a thread of the runtime;
//! at exit, [`settle`] waits for those hand-overs, so none is cut off by
//! the interpreter finalizing.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3_async_runtimes::TaskLocals;
use pyo3_async_runtimes::generic::{ContextExt, Runtime};

use crate::errors::{Result, to_py};

/// How often a blocking wait lets Python look at pending signals.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// At exit, the longest wait for results still being handed to asyncio
/// (each takes microseconds once it has the GIL).
const SETTLE_LIMIT: Duration = Duration::from_secs(1);

/// Results being handed to asyncio right now (see [`settle`]).
static HANDING_OVER: AtomicUsize = AtomicUsize::new(0);

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
    awaitable_py(py, async move { fut.await.map_err(to_py) })
}

/// [`awaitable`] for a future that already yields Python errors.
pub fn awaitable_py<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    pyo3_async_runtimes::generic::future_into_py::<Counted, F, T>(py, fut)
}

/// The asyncio loop running now, to remember when an `async def` tool or
/// provider method is given to an asyncio class; `None` outside a loop.
pub fn running_loop(py: Python<'_>) -> Option<std::sync::Arc<TaskLocals>> {
    TaskLocals::with_running_loop(py)
        .and_then(|l| l.copy_context(py))
        .ok()
        .map(std::sync::Arc::new)
}

/// Awaits a Python awaitable from one of the runtime's blocking threads (a
/// tool's or a provider's call), with the GIL released while it runs: on
/// the loop in `locals` (the one running when it was given to an asyncio
/// class), or else on the package's own loop (`onehelm._loop`), since a
/// blocking `Helm`'s caller runs none that is free while it waits.
pub fn await_python(
    py: Python<'_>,
    locals: Option<&TaskLocals>,
    awaitable: Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    match locals {
        Some(locals) => {
            let fut = pyo3_async_runtimes::into_future_with_locals(locals, awaitable)?;
            let handle = runtime().handle().clone();
            py.detach(move || handle.block_on(fut))
        }
        None => Ok(py
            .import("onehelm._loop")?
            .call_method1("run", (awaitable,))?
            .unbind()),
    }
}

tokio::task_local! {
    /// The asyncio loop (and context) a Rust future was started from.
    static LOCALS: TaskLocals;
}

/// pyo3-async-runtimes' glue on the shared runtime, with its hand-overs
/// counted: it hands a result to asyncio from a blocking thread, which is
/// what [`settle`] waits for.
struct Counted;

/// One hand-over under way; counted from before Python can see the result
/// until its thread has let go of Python.
struct HandOver;

impl HandOver {
    fn start() -> Self {
        HANDING_OVER.fetch_add(1, Ordering::SeqCst);
        HandOver
    }
}

impl Drop for HandOver {
    fn drop(&mut self) {
        HANDING_OVER.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Runtime for Counted {
    type JoinError = tokio::task::JoinError;
    type JoinHandle = tokio::task::JoinHandle<()>;

    fn spawn<F>(fut: F) -> Self::JoinHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        runtime().spawn(fut)
    }

    fn spawn_blocking<F>(f: F) -> Self::JoinHandle
    where
        F: FnOnce() + Send + 'static,
    {
        let hand_over = HandOver::start();
        runtime().spawn_blocking(move || {
            f();
            drop(hand_over);
        })
    }
}

impl ContextExt for Counted {
    fn scope<F, R>(locals: TaskLocals, fut: F) -> Pin<Box<dyn Future<Output = R> + Send>>
    where
        F: Future<Output = R> + Send + 'static,
    {
        Box::pin(LOCALS.scope(locals, fut))
    }

    fn get_task_locals() -> Option<TaskLocals> {
        LOCALS.try_with(|locals| locals.clone()).ok()
    }
}

/// Builds the runtime (called once, when the module is imported) and has
/// the interpreter [`settle`] it at exit.
pub fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("onehelm");
    pyo3_async_runtimes::tokio::init(builder);
    let settle = wrap_pyfunction!(settle, module)?;
    module
        .py()
        .import("atexit")?
        .call_method1("register", (settle,))?;
    Ok(())
}

/// Lets every result being handed to asyncio arrive before the interpreter
/// finalizes (Python calls it at exit, before finalizing).
///
/// A hand-over holds the GIL, lets go of it for a moment on the way
/// (asyncio's wake-up write) and takes it back. A program may end in that
/// moment: its `asyncio.run` returns and the interpreter starts finalizing.
/// Taking the GIL back from a finalizing interpreter kills the thread
/// half-way and aborts the process ("PyGILState_Release: thread state …
/// must be current when releasing"). So at exit the GIL is let go until no
/// hand-over is under way, for at most [`SETTLE_LIMIT`].
#[pyfunction]
fn settle(py: Python<'_>) {
    py.detach(|| {
        let started = Instant::now();
        while HANDING_OVER.load(Ordering::SeqCst) > 0 && started.elapsed() < SETTLE_LIMIT {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
