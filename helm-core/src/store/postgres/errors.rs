//! Translating PostgreSQL's failures into Helm's errors, as the SQLite
//! store does: a constraint is the database enforcing a product rule, so
//! it becomes a conflict or a refusal with a sentence a person can act on.

use tokio_postgres::error::SqlState;

use crate::error::Error;

/// Known unique constraints (index names) and what they mean to a user.
const UNIQUE_MEANINGS: &[(&str, &str)] = &[
    (
        "agent_channels_channel_id_key",
        "this channel already has its resident agent; a channel has exactly one",
    ),
    (
        "agent_channels_agent_id_key",
        "this agent is already bound to a channel; a resident agent has exactly one",
    ),
    (
        "channels_live_name",
        "a channel with this name already exists (archived channels keep their names)",
    ),
    (
        "agents_workspace_id_name_key",
        "an agent with this handle already exists",
    ),
    ("agents_one_skipper", "a workspace has exactly one Skipper"),
    (
        "users_workspace_id_name_key",
        "a user with this name already exists",
    ),
    ("users_one_captain", "a workspace has exactly one Captain"),
    (
        "providers_name_key",
        "a provider with this name already exists",
    ),
];

/// Maps a PostgreSQL error to a store error saying what was being done;
/// product rules (constraints, the refusing triggers) to their own kinds.
pub(crate) fn failed(
    context: impl std::fmt::Display,
) -> impl FnOnce(tokio_postgres::Error) -> Error {
    move |e| {
        let Some(db) = e.as_db_error() else {
            return Error::Store {
                message: format!("{context}: {e}"),
                source: Some(Box::new(e)),
            };
        };
        let code = db.code();
        // PostgreSQL's text cannot hold U+0000 (SQLite's can): the text is
        // refused as the caller's, not failed as the store's.
        if *code == SqlState::CHARACTER_NOT_IN_REPERTOIRE {
            return Error::invalid(
                "text",
                "it contains a NUL character (U+0000), which this store cannot keep; remove it",
            );
        }
        if *code == SqlState::UNIQUE_VIOLATION {
            let constraint = db.constraint().unwrap_or_default();
            return Error::Conflict(
                UNIQUE_MEANINGS
                    .iter()
                    .find(|(name, _)| *name == constraint)
                    .map(|(_, m)| m.to_string())
                    .unwrap_or_else(|| format!("already exists ({constraint})")),
            );
        }
        // The schema's triggers raise product rules in plain words.
        if *code == SqlState::RAISE_EXCEPTION {
            return Error::Refused(db.message().to_string());
        }
        if *code == SqlState::FOREIGN_KEY_VIOLATION {
            return Error::Conflict(
                "refers to something that does not exist (or is still referred to)".into(),
            );
        }
        if *code == SqlState::CHECK_VIOLATION || *code == SqlState::NOT_NULL_VIOLATION {
            return Error::invalid("record", format!("rejected by the store: {}", db.message()));
        }
        if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
        {
            return Error::Busy(format!("{context}: the database is busy; try again"));
        }
        let message = match db.detail() {
            Some(detail) => format!("{context}: {} ({detail})", db.message()),
            None => format!("{context}: {}", db.message()),
        };
        Error::Store {
            message,
            source: Some(Box::new(e)),
        }
    }
}
