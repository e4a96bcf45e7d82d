//! Exit codes, one per kind of failure, mapped in this one place.

use helm_core::ErrorKind;

/// Success.
pub const OK: i32 = 0;
/// Helm's own failure.
pub const INTERNAL: i32 = 1;
/// Bad input or usage (clap uses 2 for usage errors too).
pub const USAGE: i32 = 2;
/// The named thing does not exist.
pub const NOT_FOUND: i32 = 3;
/// Clashes with existing state.
pub const CONFLICT: i32 = 4;
/// Refused by a product rule.
pub const REFUSED: i32 = 5;
/// Not available: not initialised, busy, or a server that cannot be reached.
pub const UNAVAILABLE: i32 = 6;
/// The acting user lacks the authority (or, with a server, the token was
/// refused).
pub const FORBIDDEN: i32 = 7;
/// A model provider (or another upstream service) failed.
pub const UPSTREAM: i32 = 8;
/// `1helm exec`: the command ran past its timeout and was killed (as
/// `timeout(1)` reports it). Otherwise `exec` exits with the command's code.
pub const TIMED_OUT: i32 = 124;

/// The exit code for a core error.
pub fn code_for(kind: ErrorKind) -> i32 {
    match kind {
        ErrorKind::Invalid => USAGE,
        ErrorKind::NotFound => NOT_FOUND,
        ErrorKind::Conflict => CONFLICT,
        ErrorKind::Refused => REFUSED,
        ErrorKind::Forbidden | ErrorKind::Unauthenticated => FORBIDDEN,
        ErrorKind::Unavailable => UNAVAILABLE,
        ErrorKind::Upstream => UPSTREAM,
        _ => INTERNAL,
    }
}
