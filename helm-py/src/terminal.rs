//! `Terminal` and `AsyncTerminal`: an interactive shell in a channel's
//! computer (a PTY in `/workspace`, under the channel's isolation), held
//! open by a context manager and closed (its processes killed) when it
//! ends.
//!
//! Output is read as it comes: `read(timeout)` returns what arrived within
//! the wait (the scrollback first), `expect(text, timeout)` reads until
//! `text` has appeared. Embedded workspaces only: over a server, terminals
//! are a WebSocket (see docs/http.md), which this package does not speak yet.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use helm_core::ErrorKind;
use helm_core::exec::{TerminalEvent, TerminalSession, TerminalSize};
use helm_core::{Helm, model::User};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::errors::{Result, failure, to_py};
use crate::runtime::{awaitable, blocking};

/// What both flavours share: the session and this viewer's place in it.
pub struct TerminalCore {
    helm: Helm,
    actor: User,
    session: Arc<TerminalSession>,
    events: tokio::sync::Mutex<broadcast::Receiver<TerminalEvent>>,
    /// Output received but not read yet (the scrollback, at first).
    pending: Mutex<Vec<u8>>,
    exit_code: Mutex<Option<Option<i32>>>,
}

impl TerminalCore {
    /// Opens a shell in `channel`'s computer as `actor`.
    pub async fn open(
        helm: Helm,
        actor: User,
        channel: String,
        rows: u16,
        cols: u16,
    ) -> Result<Self> {
        let channel = channel.parse()?;
        let session = helm
            .open_terminal(&actor, &channel, TerminalSize { rows, cols })
            .await?;
        let subscription = session.subscribe();
        Ok(TerminalCore {
            helm,
            actor,
            session,
            events: tokio::sync::Mutex::new(subscription.events),
            pending: Mutex::new(subscription.scrollback),
            exit_code: Mutex::new(None),
        })
    }

    fn take_pending(&self) -> Vec<u8> {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Output that arrives within `wait` (returns early once some came).
    async fn read(&self, wait: Duration) -> Result<Vec<u8>> {
        let mut out = self.take_pending();
        if !out.is_empty() {
            return Ok(out);
        }
        let mut events = self.events.lock().await;
        let event = match tokio::time::timeout(wait, events.recv()).await {
            Err(_) => return Ok(out),
            Ok(event) => event,
        };
        match event {
            Ok(TerminalEvent::Output { data }) => {
                out.extend_from_slice(&data);
                // Take what else is already there, then return.
                while let Ok(TerminalEvent::Output { data }) = events.try_recv() {
                    out.extend_from_slice(&data);
                }
            }
            Ok(TerminalEvent::Closed { exit_code }) => {
                if let Ok(mut e) = self.exit_code.lock() {
                    *e = Some(exit_code);
                }
            }
            Err(RecvError::Lagged(_)) => {
                // Fell behind the live output: start again from the
                // scrollback, which holds what was missed.
                *events = self.session.subscribe().events;
                out = self.session.scrollback();
            }
            Err(RecvError::Closed) => {}
        }
        Ok(out)
    }

    /// Reads until `needle` has appeared (or `wait` is over: `Unavailable`).
    async fn expect(&self, needle: String, wait: Duration) -> Result<String> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            seen.extend(self.read(left.min(Duration::from_millis(200))).await?);
            let text = String::from_utf8_lossy(&seen).into_owned();
            if let Some(at) = text.find(&needle) {
                // What follows the needle stays for the next read.
                let rest = text.as_bytes()[at + needle.len()..].to_vec();
                if let Ok(mut p) = self.pending.lock() {
                    let mut again = rest;
                    again.extend(std::mem::take(&mut *p));
                    *p = again;
                }
                return Ok(text[..at + needle.len()].to_string());
            }
            if left.is_zero() || self.exited().is_some() {
                return Err(failure(
                    ErrorKind::Unavailable,
                    "timeout",
                    format!(
                        "{needle:?} did not appear within {wait:?}; the terminal printed {text:?}"
                    ),
                ));
            }
        }
    }

    async fn write(&self, bytes: Vec<u8>) -> Result<()> {
        Ok(self.session.write(&bytes).await?)
    }

    fn exited(&self) -> Option<Option<i32>> {
        self.exit_code.lock().ok().and_then(|e| *e)
    }

    async fn close(&self) -> Result<()> {
        if !self.session.is_running() {
            return Ok(());
        }
        match self
            .helm
            .close_terminal(&self.actor, self.session.id())
            .await
        {
            Ok(()) => Ok(()),
            // Already gone (closed elsewhere, or the shell ended).
            Err(helm_core::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

fn bytes_of(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = data.cast::<PyString>() {
        Ok(text.to_str()?.as_bytes().to_vec())
    } else if let Ok(bytes) = data.cast::<PyBytes>() {
        Ok(bytes.as_bytes().to_vec())
    } else {
        Err(to_py(failure(
            ErrorKind::Invalid,
            "invalid",
            "write str or bytes to a terminal",
        )))
    }
}

fn seconds(timeout: f64) -> PyResult<Duration> {
    if timeout.is_finite() && timeout >= 0.0 {
        Ok(Duration::from_secs_f64(timeout))
    } else {
        Err(to_py(failure(
            ErrorKind::Invalid,
            "invalid",
            format!("timeout {timeout} is not a number of seconds"),
        )))
    }
}

macro_rules! terminal_attributes {
    ($class:ident) => {
        #[pymethods]
        impl $class {
            /// The terminal's id.
            #[getter]
            fn id(&self) -> u64 {
                self.core.session.id()
            }

            /// Whether its shell still runs.
            #[getter]
            fn running(&self) -> bool {
                self.core.session.is_running()
            }

            /// The shell's exit code once it ended and that was read
            /// (`None` before, or when a signal ended it).
            #[getter]
            fn exit_code(&self) -> Option<i32> {
                self.core.exited().flatten()
            }

            /// Sets the terminal's size.
            fn resize(&self, rows: u16, cols: u16) -> PyResult<()> {
                self.core
                    .session
                    .resize(TerminalSize { rows, cols })
                    .map_err(|e| to_py(e.into()))
            }

            fn __repr__(&self) -> String {
                format!(
                    concat!(stringify!($class), "(id={}, running={})"),
                    self.core.session.id(),
                    self.core.session.is_running()
                )
            }
        }
    };
}

/// An interactive shell in a channel's computer (blocking).
#[pyclass(frozen, module = "onehelm")]
pub struct Terminal {
    core: Arc<TerminalCore>,
}

terminal_attributes!(Terminal);

impl Terminal {
    /// Wraps an open terminal.
    pub fn new(core: TerminalCore) -> Self {
        Terminal {
            core: Arc::new(core),
        }
    }
}

#[pymethods]
impl Terminal {
    /// Types `data` (`str` or `bytes`; end a command with `"\n"`).
    fn write(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let (core, bytes) = (self.core.clone(), bytes_of(data)?);
        blocking(py, async move { core.write(bytes).await })
    }

    /// What the terminal printed within `timeout` seconds (the scrollback
    /// first); returns as soon as something came. Escape sequences are kept.
    #[pyo3(signature = (timeout=1.0))]
    fn read(&self, py: Python<'_>, timeout: f64) -> PyResult<String> {
        let (core, wait) = (self.core.clone(), seconds(timeout)?);
        let bytes = blocking(py, async move { core.read(wait).await })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Reads until `text` has appeared and returns everything up to it;
    /// `Unavailable` (`timeout`) if it does not within `timeout` seconds.
    #[pyo3(signature = (text, timeout=10.0))]
    fn expect(&self, py: Python<'_>, text: String, timeout: f64) -> PyResult<String> {
        let (core, wait) = (self.core.clone(), seconds(timeout)?);
        blocking(py, async move { core.expect(text, wait).await })
    }

    /// Closes the terminal: its shell and everything started in it end.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        blocking(py, async move { core.close().await })
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

/// An interactive shell in a channel's computer (asyncio).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncTerminal {
    core: Arc<TerminalCore>,
}

terminal_attributes!(AsyncTerminal);

impl AsyncTerminal {
    /// Wraps an open terminal.
    pub fn new(core: TerminalCore) -> Self {
        AsyncTerminal {
            core: Arc::new(core),
        }
    }
}

#[pymethods]
impl AsyncTerminal {
    /// Types `data` (`str` or `bytes`).
    fn write<'py>(&self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let (core, bytes) = (self.core.clone(), bytes_of(data)?);
        awaitable(py, async move { core.write(bytes).await })
    }

    /// What the terminal printed within `timeout` seconds.
    #[pyo3(signature = (timeout=1.0))]
    fn read<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Bound<'py, PyAny>> {
        let (core, wait) = (self.core.clone(), seconds(timeout)?);
        awaitable(py, async move {
            Ok(String::from_utf8_lossy(&core.read(wait).await?).into_owned())
        })
    }

    /// Reads until `text` has appeared (see `Terminal.expect`).
    #[pyo3(signature = (text, timeout=10.0))]
    fn expect<'py>(
        &self,
        py: Python<'py>,
        text: String,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (core, wait) = (self.core.clone(), seconds(timeout)?);
        awaitable(py, async move { core.expect(text, wait).await })
    }

    /// Closes the terminal.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable(py, async move { core.close().await })
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
        self.close(py)
    }
}

/// Adds the terminal classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Terminal>()?;
    module.add_class::<AsyncTerminal>()?;
    Ok(())
}
