//! The exception hierarchy and the one place errors become exceptions.
//!
//! Every failure from the core (embedded) or a server (connected) arrives as
//! a [`Failure`]: a class ([`ErrorKind`]), a stable code and a message. The
//! class picks the exception, in [`to_py`] only; `.code` carries the code, so
//! a script can tell `not_initialized` from `busy` without reading messages.

use helm_core::ErrorKind;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::{PyTypeInfo, create_exception};

/// A failure from either backend: helm-client's error type, which both the
/// core's and a server's errors become.
pub type Failure = helm_client::Error;

/// The result type of the backends.
pub type Result<T, E = Failure> = std::result::Result<T, E>;

create_exception!(
    onehelm,
    HelmError,
    PyException,
    "Every error onehelm raises: `.code` is a stable code such as `not_found`."
);
create_exception!(
    onehelm,
    InvalidInput,
    HelmError,
    "A value was malformed: fix the call."
);
create_exception!(
    onehelm,
    NotFound,
    HelmError,
    "The named thing does not exist (or is not visible to you)."
);
create_exception!(
    onehelm,
    Conflict,
    HelmError,
    "The change clashes with existing state (a taken name)."
);
create_exception!(
    onehelm,
    Refused,
    HelmError,
    "Refused by a rule of the product (an archived channel, a missing confirmation)."
);
create_exception!(
    onehelm,
    Forbidden,
    HelmError,
    "The acting person lacks the authority."
);
create_exception!(
    onehelm,
    Unauthenticated,
    HelmError,
    "The server did not accept the token."
);
create_exception!(
    onehelm,
    Unavailable,
    HelmError,
    "Not available now: not initialised, busy, or a server that cannot be reached."
);
create_exception!(
    onehelm,
    ProviderError,
    HelmError,
    "A model provider failed."
);

/// The exception for a failure, with `.code` set.
pub fn to_py(mut failure: Failure) -> PyErr {
    // The core says a server holds the directory; how to reach it is ours
    // to say, in Python's terms.
    if failure.code == "busy" {
        failure
            .message
            .push_str(" (onehelm.Helm.connect(url, token) works through it)");
    }
    let err = match failure.kind {
        ErrorKind::Invalid => InvalidInput::new_err(failure.message),
        ErrorKind::NotFound => NotFound::new_err(failure.message),
        ErrorKind::Conflict => Conflict::new_err(failure.message),
        ErrorKind::Refused => Refused::new_err(failure.message),
        ErrorKind::Forbidden => Forbidden::new_err(failure.message),
        ErrorKind::Unauthenticated => Unauthenticated::new_err(failure.message),
        ErrorKind::Unavailable => Unavailable::new_err(failure.message),
        ErrorKind::Upstream => ProviderError::new_err(failure.message),
        _ => HelmError::new_err(failure.message),
    };
    Python::attach(|py| {
        // Setting an attribute on a fresh exception cannot fail in practice;
        // if it did, the exception still carries its class and message.
        let _ = err.value(py).setattr("code", failure.code);
    });
    err
}

/// A failure made on this side (bad arguments the core never sees).
pub fn failure(kind: ErrorKind, code: &str, message: impl Into<String>) -> Failure {
    Failure {
        kind,
        code: code.to_string(),
        message: message.into(),
    }
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("HelmError", HelmError::type_object(py))?;
    m.add("InvalidInput", InvalidInput::type_object(py))?;
    m.add("NotFound", NotFound::type_object(py))?;
    m.add("Conflict", Conflict::type_object(py))?;
    m.add("Refused", Refused::type_object(py))?;
    m.add("Forbidden", Forbidden::type_object(py))?;
    m.add("Unauthenticated", Unauthenticated::type_object(py))?;
    m.add("Unavailable", Unavailable::type_object(py))?;
    m.add("ProviderError", ProviderError::type_object(py))?;
    Ok(())
}
