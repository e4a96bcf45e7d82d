//! Translating SQLite's failures into Helm's errors. Constraint violations are
//! the database enforcing a product rule, so they become conflicts or refusals
//! with a sentence a person can act on, never a raw SQL message.

use rusqlite::ffi;

use crate::error::Error;

/// Known unique constraints and what they mean to a user.
const UNIQUE_MEANINGS: &[(&str, &str)] = &[
    (
        "agent_channels.channel_id",
        "this channel already has its resident agent; a channel has exactly one",
    ),
    (
        "agent_channels.agent_id",
        "this agent is already bound to a channel; a resident agent has exactly one",
    ),
    (
        "channels.workspace_id, channels.name",
        "a channel with this name already exists (archived channels keep their names)",
    ),
    (
        "agents.workspace_id, agents.name",
        "an agent with this handle already exists",
    ),
    ("agents.workspace_id", "a workspace has exactly one Skipper"),
    (
        "users.workspace_id, users.name",
        "a user with this name already exists",
    ),
    ("users.workspace_id", "a workspace has exactly one Captain"),
    ("providers.name", "a provider with this name already exists"),
];

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(code, Some(msg)) = &e {
            match code.extended_code {
                ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                    let columns = msg.trim_start_matches("UNIQUE constraint failed: ");
                    let meaning = UNIQUE_MEANINGS
                        .iter()
                        .find(|(cols, _)| *cols == columns)
                        .map(|(_, m)| m.to_string())
                        .unwrap_or_else(|| format!("already exists ({columns})"));
                    return Error::Conflict(meaning);
                }
                // Our triggers raise product rules in plain words.
                ffi::SQLITE_CONSTRAINT_TRIGGER => return Error::Refused(msg.clone()),
                ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                    return Error::Conflict(
                        "refers to something that does not exist (or is still referred to)".into(),
                    );
                }
                ffi::SQLITE_CONSTRAINT_CHECK | ffi::SQLITE_CONSTRAINT_NOTNULL => {
                    return Error::invalid("record", format!("rejected by the store: {msg}"));
                }
                _ => {}
            }
        }
        if let rusqlite::Error::SqliteFailure(code, _) = &e
            && matches!(
                code.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            )
        {
            return Error::Busy("the database is locked by another process; try again".into());
        }
        Error::Store {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_failure_keeps_the_driver_error_as_its_source() -> anyhow::Result<()> {
        let conn = rusqlite::Connection::open_in_memory()?;
        let Err(failure) = conn.execute("INSERT INTO no_such_table VALUES (1)", []) else {
            anyhow::bail!("an insert into a missing table succeeded");
        };
        let error = Error::from(failure);
        assert_eq!(error.code(), "store");
        let source = std::error::Error::source(&error)
            .ok_or_else(|| anyhow::anyhow!("the driver's error was dropped"))?;
        assert!(source.to_string().contains("no_such_table"), "{source}");
        Ok(())
    }
}
