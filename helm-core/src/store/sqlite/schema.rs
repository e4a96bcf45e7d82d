//! Versioned migrations, tracked in `PRAGMA user_version`. Each migration runs
//! in its own transaction; a database newer than this build is refused rather
//! than guessed at.

use rusqlite::Connection;

use crate::error::{Error, Result};

/// The migrations, in order; `user_version` counts how many have run.
const MIGRATIONS: &[(&str, &str)] = &[
    ("foundation", include_str!("migrations/001_foundation.sql")),
    ("turns", include_str!("migrations/002_turns.sql")),
    ("memory", include_str!("migrations/003_memory.sql")),
    ("auth", include_str!("migrations/004_auth.sql")),
    ("authority", include_str!("migrations/005_authority.sql")),
    ("ot_keys", include_str!("migrations/006_ot_keys.sql")),
    ("lifecycle", include_str!("migrations/007_lifecycle.sql")),
    ("mcp_pins", include_str!("migrations/008_mcp_pins.sql")),
    ("reading", include_str!("migrations/009_reading.sql")),
    ("thread_seq", include_str!("migrations/010_thread_seq.sql")),
    (
        "thread_authors",
        include_str!("migrations/011_thread_authors.sql"),
    ),
    (
        "shared_words",
        include_str!("migrations/012_shared_words.sql"),
    ),
    ("vector_seq", include_str!("migrations/013_vector_seq.sql")),
    (
        "live_turns_by_thread",
        include_str!("migrations/014_live_turns_by_thread.sql"),
    ),
    (
        "embed_with_context",
        include_str!("migrations/015_embed_with_context.sql"),
    ),
    (
        "merge_words_when_idle",
        include_str!("migrations/016_merge_words_when_idle.sql"),
    ),
    (
        "embed_long_texts",
        include_str!("migrations/017_embed_long_texts.sql"),
    ),
    (
        "events_by_kind",
        include_str!("migrations/018_events_by_kind.sql"),
    ),
    (
        "memory_forgotten_by",
        include_str!("migrations/019_memory_forgotten_by.sql"),
    ),
    (
        "deactivated_people",
        include_str!("migrations/020_deactivated_people.sql"),
    ),
    (
        "tool_output",
        include_str!("migrations/021_tool_output.sql"),
    ),
    (
        "turn_first_delta",
        include_str!("migrations/022_turn_first_delta.sql"),
    ),
    (
        "english_stems",
        include_str!("migrations/023_english_stems.sql"),
    ),
    (
        "answered_calls",
        include_str!("migrations/024_answered_calls.sql"),
    ),
];

/// Work a migration needs beyond its SQL, run after it in its transaction.
fn code_of(name: &str) -> Option<fn(&Connection) -> Result<()>> {
    match name {
        "shared_words" => Some(super::recall::migrate::move_channel_tables),
        "english_stems" => Some(super::recall::migrate::restem),
        _ => None,
    }
}

/// Applies every migration not yet applied.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, MIGRATIONS.len())
}

/// Applies the migrations not yet applied up to schema version `target`
/// (tests build databases of an older schema with it).
pub(super) fn migrate_to(conn: &mut Connection, target: usize) -> Result<()> {
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let known = MIGRATIONS.len() as i64;
    if current > known {
        return Err(Error::Store {
            message: format!(
                "the database has schema version {current}, newer than this Helm ({known}); \
                 upgrade Helm before opening it"
            ),
            source: None,
        });
    }
    // The word index's tokenizer must be known before a migration creates
    // or opens the index (the store registers it anyway; tests and tools
    // migrating a bare connection need it too).
    super::recall::words::prepare(conn)?;
    let pending = MIGRATIONS
        .iter()
        .enumerate()
        .take(target)
        .skip(current as usize);
    for (index, (name, sql)) in pending {
        let version = index as i64 + 1;
        let tx = conn.transaction()?;
        let run = || -> Result<()> {
            tx.execute_batch(sql)?;
            code_of(name).map_or(Ok(()), |code| code(&tx))
        };
        run().map_err(|e| Error::store(format_args!("migration {version} ({name}) failed"), e))?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::info!(version, name, "applied migration");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
