//! Asking a resident agent and waiting for the answer: what `ask` and
//! `retry` of channels and threads alike run, blocking (Ctrl-C stops the
//! thread's work) or as an awaitable.

use helm_core::ErrorKind;
use helm_core::model::ThreadId;
use pyo3::prelude::*;

use crate::backend::SharedBackend;
use crate::errors::{Result, failure, to_py};
use crate::events::{Reply, reply_or_error};
use crate::runtime::{blocking, interruptible};
use crate::turn::{self, Start, ThreadSlot, Until};

/// Runs `ask` to its end; on Ctrl-C, stops the thread's work before
/// raising `KeyboardInterrupt`.
pub(super) fn ask_blocking(
    py: Python<'_>,
    backend: SharedBackend,
    channel: String,
    start: Start,
    thread: Option<i64>,
    timeout: Option<f64>,
) -> PyResult<Reply> {
    let slot = ThreadSlot::default();
    let run = ask_future(
        backend.clone(),
        channel,
        start,
        thread,
        timeout,
        slot.clone(),
    );
    match interruptible(py, async move { run.await.map_err(to_py) }) {
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => {
            let thread = slot.lock().ok().and_then(|s| *s);
            if let Some(thread) = thread {
                blocking(py, async move { backend.stop_thread(thread).await })?;
            }
            Err(e)
        }
        other => other,
    }
}

pub(super) async fn ask_future(
    backend: SharedBackend,
    channel: String,
    start: Start,
    thread: Option<i64>,
    timeout: Option<f64>,
    slot: ThreadSlot,
) -> Result<Reply> {
    let run = turn::run(
        backend,
        channel,
        start,
        thread.map(ThreadId),
        slot,
        Until::EndOrApproval,
        |_| {},
    );
    let result = match timeout {
        None => run.await?,
        Some(secs) => tokio::time::timeout(std::time::Duration::from_secs_f64(secs), run)
            .await
            .map_err(|_| {
                failure(
                    ErrorKind::Unavailable,
                    "timeout",
                    format!("no answer within {secs} s; the turn goes on in its thread"),
                )
            })??,
    };
    reply_or_error(result)
}
