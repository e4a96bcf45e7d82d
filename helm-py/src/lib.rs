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
//! - [`provider`]: a Python object as a model provider.
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
pub mod turn;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _onehelm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    records::register(m)?;
    events::register(m)?;
    provider::register(m)?;
    channel::register(m)?;
    m.add_class::<helm::Helm>()?;
    m.add_class::<helm::AsyncHelm>()?;
    m.add_class::<helm::Providers>()?;
    m.add_class::<helm::AsyncProviders>()?;
    Ok(())
}
