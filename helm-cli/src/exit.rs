//! Exit codes, one per kind of failure, and the CLI's own hints for the
//! errors whose remedy is a command, mapped in this one place (core's
//! messages name no command or flag).

use helm_core::{Error, ErrorKind, ProviderFailure};

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

/// The next step for a core error, as a `1helm` command line.
pub fn hint_for(error: &Error) -> Option<String> {
    match error {
        Error::ConfirmationRequired { name, .. } => {
            Some(format!("run it again with --confirm {name}"))
        }
        Error::NotInitialized(_) => Some("run `1helm init` first (or pass --data DIR)".into()),
        Error::Served {
            server: Some(server),
            ..
        } => Some(format!(
            "work through it: 1helm --server {} --token TOKEN …",
            server.url
        )),
        Error::Busy(_) | Error::Served { .. } => Some(
            "with a server running, work through it: 1helm --server URL --token TOKEN …".into(),
        ),
        Error::Provider {
            failure: ProviderFailure::Unconfigured,
            ..
        } => Some(PROVIDER_HINT.into()),
        _ => hint_for_code(error.code(), &error.to_string()),
    }
}

/// Where the names that do exist are listed, for a thing not found by
/// name: `what` is the first word of core's "{what} {name} not found",
/// which a server passes on as it is, so `--server` gives the same hint.
fn listing_hint(what: &str) -> Option<String> {
    let (command, things) = match what {
        "channel" => (
            "1helm channel list --all",
            "the channels, archived ones too",
        ),
        "thread" => ("1helm thread list CHANNEL", "a channel's threads"),
        "user" => ("1helm user list", "the people"),
        "provider" => ("1helm provider list", "the providers"),
        "memory" => ("1helm memory list CHANNEL --all", "a channel's records"),
        _ => return None,
    };
    Some(format!("`{command}` lists {things}"))
}

/// The next step for an error a server reported, by its stable code and
/// its message.
pub fn hint_for_code(code: &str, message: &str) -> Option<String> {
    match code {
        "not_found" => listing_hint(message.split(' ').next().unwrap_or_default()),
        "model_unavailable" => Some(format!(
            "choose a model with `1helm channel set-model CHANNEL --provider NAME --model MODEL`, \
             or {PROVIDER_HINT}"
        )),
        "confirmation_required" => Some("run it again with --confirm NAME".into()),
        "missing_purpose" => Some(
            "say what it is for: 1helm channel create NAME --purpose \"what it is all about\""
                .into(),
        ),
        "conflict" if message.starts_with("a provider named") => {
            Some("run it again with --replace to replace that provider".into())
        }
        _ => None,
    }
}

const PROVIDER_HINT: &str = "register a provider with `1helm provider add NAME --kind openai \
    --base-url URL --model MODEL --default`";
