//! The one error type of helm-core.
//!
//! Every failure a user can cause has its own variant with a message that says
//! what was wrong and what to do. Frontends never match on message text: they
//! map [`Error::kind`] (or the variant itself) to an exit code, an HTTP status or
//! a Python exception, each in one place.
//!
//! Messages are protocol-neutral: they name no CLI flag, command or HTTP
//! route, since the same error reaches a terminal, a browser and Python.
//! Where the remedy is a step in one frontend's syntax, that frontend adds
//! it as a hint when it maps the variant (such as
//! [`Error::ConfirmationRequired`] or [`Error::ModelUnavailable`]).

use std::path::PathBuf;

/// The result type of helm-core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, in terms a frontend can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A value given by a user or an agent is malformed (a name, a path, an argument).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was invalid, such as "channel name".
        what: &'static str,
        /// Why, and what would be accepted.
        reason: String,
    },

    /// A configuration value is wrong: its dotted key, where it was set
    /// (a file, an environment variable, the command line) and why.
    #[error("{key} (from {origin}): {reason}")]
    Config {
        /// The setting, such as `replies.max_tokens`.
        key: String,
        /// Where it was set, for people.
        origin: String,
        /// Why it is wrong, and what would be accepted.
        reason: String,
    },

    /// Something was chosen that this build of Helm does not have (a
    /// Postgres store, a remote computer).
    #[error("this build has no {0}")]
    NotBuiltIn(String),

    /// A channel was created without saying what it is for.
    #[error("What is this channel all about?")]
    MissingPurpose,

    /// The named thing does not exist (or the actor may not see it).
    #[error("{what} {name} not found")]
    NotFound {
        /// The kind of thing, such as "channel".
        what: &'static str,
        /// The name or id that was looked up.
        name: String,
    },

    /// The operation would break a uniqueness rule or clash with the current state.
    #[error("{0}")]
    Conflict(String),

    /// The operation is understood but refused by a rule of the product
    /// (a protected channel, a channel that is still active).
    #[error("{0}")]
    Refused(String),

    /// An irreversible operation needs the thing's name repeated to go ahead.
    #[error("{action}; to go ahead, confirm by naming it: {name}")]
    ConfirmationRequired {
        /// What would happen, for people.
        action: String,
        /// The name that confirms it.
        name: String,
    },

    /// No model can serve an agent's turn (none chosen, a provider that is
    /// gone, a model it no longer serves); the message says what to choose.
    /// Checked when a message is accepted, so nothing is stored.
    #[error("{0}")]
    ModelUnavailable(String),

    /// The actor lacks the authority for this operation.
    #[error("not allowed: {0}")]
    Forbidden(String),

    /// The request did not prove who it comes from: no credentials, or a
    /// wrong password, an unknown or expired session, token or invitation.
    #[error("{0}")]
    Unauthenticated(String),

    /// The credential is right but its person is deactivated: they cannot
    /// sign in, and their sessions and tokens are refused until the Captain
    /// or an admin reactivates them.
    #[error("{0}")]
    Deactivated(String),

    /// A channel's computer lives on another host and cannot be used now:
    /// its server is down or unreachable, refused Helm's key, or lost a
    /// command. The message names the server and what went wrong.
    #[error("{0}")]
    ComputerUnreachable(String),

    /// The data directory has not been initialised.
    #[error("no Helm data at {}: initialise it first", .0.display())]
    NotInitialized(PathBuf),

    /// The data directory is held by another process (a running server).
    #[error("{0}")]
    Busy(String),

    /// A helm-http server serves the data directory: work through it. Its
    /// code is `busy`, as for [`Error::Busy`]; each frontend says how to
    /// reach the server in its own terms.
    #[error("{}", served(.dir, .server.as_ref()))]
    Served {
        /// The data directory.
        dir: PathBuf,
        /// The server, as its `server.json` describes it, if that reads.
        server: Option<crate::lock::ServerInfo>,
    },

    /// A local model's file is not on disk (such as the embedding model's weights).
    #[error("{} is missing: {help}", .path.display())]
    ModelMissing {
        /// The file that was looked for.
        path: PathBuf,
        /// How to get it.
        help: String,
    },

    /// A file-system operation on Helm's own data failed.
    #[error("{action} {}: {source}", .path.display())]
    Io {
        /// What Helm was doing.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A model provider failed or could not be reached.
    #[error("provider {provider}: {message}")]
    Provider {
        /// The provider's registry name (or kind, before it has one).
        provider: String,
        /// What kind of failure it was.
        failure: ProviderFailure,
        /// What happened, for people; never contains a secret.
        message: String,
    },

    /// The store failed in a way that is not the caller's fault.
    #[error("storage error: {message}")]
    Store {
        /// What failed, in words (the source's own message included).
        message: String,
        /// The database driver's error, kept so a caller or a log can walk
        /// the chain (`std::error::Error::source`).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },

    /// A bug or an impossible state; the message is for the operator's logs.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The ways a model provider can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProviderFailure {
    /// The key was missing or refused (HTTP 401/403).
    Unauthorized,
    /// The model or endpoint does not exist (HTTP 404).
    NotFound,
    /// The provider rejected the request (HTTP 400/422).
    BadRequest,
    /// Too many requests (HTTP 429), after retries.
    RateLimited,
    /// The provider failed (HTTP 5xx), after retries.
    Server,
    /// The provider could not be reached (DNS, connect, TLS), after retries.
    Unreachable,
    /// No answer within the time allowed.
    Timeout,
    /// The response was cut off or could not be parsed.
    MalformedStream,
    /// The provider does not offer this (such as embeddings).
    Unsupported,
    /// No provider is configured, or its configuration is incomplete.
    Unconfigured,
}

/// Coarse classes of [`Error`], for frontends that map errors to codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: fix the request.
    Invalid,
    /// The target does not exist.
    NotFound,
    /// Clashes with existing state.
    Conflict,
    /// Refused by a product rule.
    Refused,
    /// The actor lacks authority.
    Forbidden,
    /// The caller has not proved who they are.
    Unauthenticated,
    /// Not available right now (not initialised, busy).
    Unavailable,
    /// A model provider (or another upstream service) failed.
    Upstream,
    /// Helm's own failure.
    Internal,
}

impl Error {
    /// A store failure caused by `source`, described as `context: source`.
    pub fn store(
        context: impl std::fmt::Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Store {
            message: format!("{context}: {source}"),
            source: Some(Box::new(source)),
        }
    }

    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        Error::Invalid {
            what,
            reason: reason.into(),
        }
    }

    /// Shorthand for [`Error::NotFound`].
    pub fn not_found(what: &'static str, name: impl ToString) -> Self {
        Error::NotFound {
            what,
            name: name.to_string(),
        }
    }

    /// Shorthand for [`Error::Provider`].
    pub fn provider(
        provider: impl Into<String>,
        failure: ProviderFailure,
        message: impl Into<String>,
    ) -> Self {
        Error::Provider {
            provider: provider.into(),
            failure,
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Invalid { .. } | Error::MissingPurpose | Error::Config { .. } => {
                ErrorKind::Invalid
            }
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::Conflict(_) | Error::ModelUnavailable(_) => ErrorKind::Conflict,
            Error::Refused(_) | Error::ConfirmationRequired { .. } => ErrorKind::Refused,
            Error::Forbidden(_) => ErrorKind::Forbidden,
            Error::Unauthenticated(_) | Error::Deactivated(_) => ErrorKind::Unauthenticated,
            Error::NotInitialized(_)
            | Error::Busy(_)
            | Error::Served { .. }
            | Error::ModelMissing { .. }
            | Error::NotBuiltIn(_)
            | Error::ComputerUnreachable(_) => ErrorKind::Unavailable,
            Error::Provider { .. } => ErrorKind::Upstream,
            Error::Io { .. } | Error::Store { .. } | Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// A stable machine-readable code, such as `not_found` or `missing_purpose`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Invalid { .. } => "invalid",
            Error::MissingPurpose => "missing_purpose",
            Error::Config { .. } => "config",
            Error::NotBuiltIn(_) => "not_built_in",
            Error::NotFound { .. } => "not_found",
            Error::Conflict(_) => "conflict",
            Error::Refused(_) => "refused",
            Error::ConfirmationRequired { .. } => "confirmation_required",
            Error::ModelUnavailable(_) => "model_unavailable",
            Error::Forbidden(_) => "forbidden",
            Error::Unauthenticated(_) => "unauthenticated",
            Error::Deactivated(_) => "deactivated",
            Error::NotInitialized(_) => "not_initialized",
            Error::Busy(_) | Error::Served { .. } => "busy",
            Error::ComputerUnreachable(_) => "computer_unreachable",
            Error::ModelMissing { .. } => "model_missing",
            Error::Provider { .. } => "provider",
            Error::Io { .. } => "io",
            Error::Store { .. } => "store",
            Error::Internal(_) => "internal",
        }
    }
}

/// What [`Error::Served`] says.
fn served(dir: &std::path::Path, server: Option<&crate::lock::ServerInfo>) -> String {
    match server {
        Some(server) => format!(
            "a helm-http server (pid {}) is serving {} at {}; work through the server instead",
            server.pid,
            dir.display(),
            server.url
        ),
        None => format!(
            "a helm-http server is serving {}; work through the server instead",
            dir.display()
        ),
    }
}
