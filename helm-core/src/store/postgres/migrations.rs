//! The PostgreSQL schema's migrations: SQL files applied in order, all in
//! one transaction that holds an advisory lock, so that nodes starting
//! together wait for each other and apply each migration once (DDL is
//! transactional here: a failed migration leaves nothing behind).

use tokio_postgres::Client;

use super::failed;
use crate::error::Result;

/// Every migration, oldest first: (version, SQL).
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("migrations/001_foundation.sql")),
    (2, include_str!("migrations/002_audit_counter.sql")),
    (3, include_str!("migrations/003_thread_seq.sql")),
    (4, include_str!("migrations/004_turn_lease.sql")),
    (5, include_str!("migrations/005_turn_stop.sql")),
    (6, include_str!("migrations/006_thread_authors.sql")),
    (7, include_str!("migrations/007_vector_seq.sql")),
    (8, include_str!("migrations/008_live_turns_by_thread.sql")),
    (9, include_str!("migrations/009_nodes.sql")),
    (10, include_str!("migrations/010_node_numbers.sql")),
    (11, include_str!("migrations/011_embed_with_context.sql")),
    (12, include_str!("migrations/012_embed_long_texts.sql")),
    (13, include_str!("migrations/013_words_stemmed.sql")),
    (14, include_str!("migrations/014_events_by_kind.sql")),
    (15, include_str!("migrations/015_memory_forgotten_by.sql")),
    (16, include_str!("migrations/016_deactivated_people.sql")),
    (17, include_str!("migrations/017_tool_output.sql")),
    (18, include_str!("migrations/018_answered_calls.sql")),
];

/// The advisory lock key migrations hold ("helm" in ASCII).
const LOCK: i64 = 0x6865_6c6d;

/// Brings the schema up to date.
pub(super) async fn apply(client: &mut Client) -> Result<()> {
    let tx = client
        .transaction()
        .await
        .map_err(failed("starting the migrations"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
        .await
        .map_err(failed("waiting for the migration lock"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS helm_migrations (
             version  INTEGER PRIMARY KEY,
             applied  BIGINT  NOT NULL
         )",
    )
    .await
    .map_err(failed("creating the migrations table"))?;
    let applied: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM helm_migrations", &[])
        .await
        .map_err(failed("reading the applied migrations"))?
        .get(0);
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > applied) {
        tx.batch_execute(sql)
            .await
            .map_err(failed(format!("applying migration {version}")))?;
        tx.execute(
            "INSERT INTO helm_migrations (version, applied)
             VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)",
            &[version],
        )
        .await
        .map_err(failed(format!("recording migration {version}")))?;
    }
    tx.commit()
        .await
        .map_err(failed("committing the migrations"))
}
