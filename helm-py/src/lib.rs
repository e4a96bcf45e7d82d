//! `onehelm`: Python bindings for Helm.
//!
//! The module is built with maturin as `onehelm._onehelm`; the Python package
//! in `python/onehelm` wraps it. This first cut exposes the version only; the
//! channel API arrives with its issue.

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _onehelm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
