//! `onehelm`: Python bindings for Helm.
//!
//! The native module `onehelm._onehelm`, built with maturin; the Python
//! package `python/onehelm` re-exports it with its stubs. The design:
//!
//! - [`backend`]: one [`Backend`](backend::Backend) trait, implemented
//!   in-process over helm-core's facade (`Helm.open(path)`) and over a
//!   running server through helm-client (`Helm.connect(url, token)`).
//! - [`helm`], [`channel`]: the live objects, each in a blocking and an
//!   asyncio flavour over one shared core.
//! - [`runtime`]: the one tokio runtime and the helpers every call goes
//!   through (GIL released, Ctrl-C honoured; or an asyncio awaitable).
//! - [`turn`], [`events`]: a turn followed from post to end, as typed events.
//! - [`provider`]: a Python object as a model provider; [`tool`]: a Python
//!   function as a tool of a channel's agent (`@channel.tool`).
//! - [`errors`]: the exception hierarchy, mapped from the core's error kinds
//!   in one place.
//! - [`records`]: the plain records handed to Python.

pub mod backend;
pub mod channel;
pub mod errors;
pub mod events;
pub mod helm;
pub mod provider;
pub mod records;
pub mod runtime;
pub mod terminal;
pub mod tool;
pub mod turn;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _onehelm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::init(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    records::register(m)?;
    events::register(m)?;
    provider::register(m)?;
    channel::register(m)?;
    terminal::register(m)?;
    m.add_class::<helm::Helm>()?;
    m.add_class::<helm::AsyncHelm>()?;
    m.add_class::<helm::Providers>()?;
    m.add_class::<helm::AsyncProviders>()?;
    m.add_function(wrap_pyfunction!(_bench_rust, m)?)?;
    Ok(())
}

/// The same backend call as `channel.memory.recall(arg, 5)` (`op` =
/// `recall`) or `channel.files.read(arg)` (`op` = `read`), made `n` times
/// straight from Rust on the shared runtime: the baseline the benchmark
/// (`helm-py/bench/overhead.py`) compares the Python call with. Returns
/// each call's duration in nanoseconds.
#[pyfunction]
fn _bench_rust(
    py: Python<'_>,
    helm: &Bound<'_, helm::Helm>,
    channel: String,
    op: String,
    arg: String,
    n: usize,
) -> PyResult<Vec<u64>> {
    let backend = helm.get().core().backend().clone();
    runtime::blocking(py, async move {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let started = std::time::Instant::now();
            match op.as_str() {
                "recall" => {
                    std::hint::black_box(backend.recall(&channel, &arg, 5).await?);
                }
                "read" => {
                    std::hint::black_box(backend.read_text(&channel, &arg).await?);
                }
                other => {
                    return Err(errors::failure(
                        helm_core::ErrorKind::Invalid,
                        "invalid",
                        format!("no benchmark op {other:?}: recall or read"),
                    ));
                }
            }
            times.push(started.elapsed().as_nanos() as u64);
        }
        Ok(times)
    })
}
