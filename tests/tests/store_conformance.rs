//! The store conformance suite (`helm_tests::store_conformance`) against
//! each store. Another store joins by adding its factory and one
//! `store_conformance!` line.

use std::path::Path;
use std::sync::Arc;

use helm_core::store::{PostgresStore, SqliteStore, Store};
use helm_tests::store_conformance::{Subject, Tamper};

/// A fresh SQLite store in a temporary directory; tampering goes straight
/// at the database file, past the triggers that refuse it.
async fn sqlite() -> anyhow::Result<Subject> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("helm.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).await?);
    Ok(Subject {
        store,
        tamper: Some(Box::new(move |how| tamper_sqlite(&path, how))),
        keep: Box::new(dir),
    })
}

fn tamper_sqlite(path: &Path, how: Tamper) -> anyhow::Result<()> {
    let db = rusqlite::Connection::open(path)?;
    match how {
        Tamper::EditOutcome(id) => db.execute_batch(&format!(
            "DROP TRIGGER IF EXISTS audit_log_no_update; \
             UPDATE audit_log SET outcome = 'nothing happened' WHERE id = {id};"
        ))?,
        Tamper::RemoveLast => db.execute_batch(
            "DROP TRIGGER IF EXISTS audit_log_no_delete; \
             DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log);",
        )?,
    }
    Ok(())
}

mod sqlite {
    helm_tests::store_conformance!(super::sqlite);
}

/// A fresh database in the test PostgreSQL cluster; tampering goes in
/// through a second connection with the audit log's triggers disabled for
/// that one statement's transaction.
async fn postgres() -> anyhow::Result<Subject> {
    let url = helm_tests::postgres::fresh_database().await?;
    let store: Arc<dyn Store> = Arc::new(PostgresStore::connect(&url).await?);
    Ok(Subject {
        store,
        tamper: Some(Box::new(move |how| {
            let url = url.clone();
            // The hook is synchronous and called from the test's runtime:
            // the edit runs on a thread with a runtime of its own.
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?
                    .block_on(tamper_postgres(&url, how))
            })
            .join()
            .map_err(|_| anyhow::anyhow!("the tampering thread panicked"))?
        })),
        keep: Box::new(()),
    })
}

async fn tamper_postgres(url: &str, how: Tamper) -> anyhow::Result<()> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let edit = match how {
        Tamper::EditOutcome(id) => {
            format!("UPDATE audit_log SET outcome = 'nothing happened' WHERE id = {id};")
        }
        Tamper::RemoveLast => {
            "DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log);".to_string()
        }
    };
    // `replica` role skips ordinary triggers: the refusals a person with
    // the database's superuser could also switch off.
    client
        .batch_execute(&format!(
            "BEGIN; SET LOCAL session_replication_role = replica; {edit} COMMIT;"
        ))
        .await?;
    Ok(())
}

mod postgres {
    helm_tests::store_conformance!(super::postgres);
}

/// SQLite's `length` stops at a NUL character: a reply holding one still
/// gets exact offsets. (PostgreSQL refuses NUL in text, so this is
/// SQLite's alone.)
#[tokio::test]
async fn sqlite_counts_a_reply_holding_a_nul() -> anyhow::Result<()> {
    let subject = sqlite().await?;
    helm_tests::store_conformance::deltas_place_their_text(
        &subject,
        &["a\0é", "🙂", "b"],
        &[0, 3, 4],
    )
    .await
}

/// SQLite keeps where a streaming reply's deltas start with its turn, so a
/// process that finishes a turn another one streamed (a restart) still
/// drops the deltas from the log.
#[tokio::test]
async fn sqlite_drops_a_replys_deltas_after_a_restart() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("helm.db");
    let subject = Subject {
        store: Arc::new(SqliteStore::open(&path).await?),
        tamper: None,
        keep: Box::new(()),
    };
    let restarted = SqliteStore::open(&path).await?;
    helm_tests::store_conformance::a_reply_streamed_before_a_restart_leaves_the_log_once_finished(
        &subject, &restarted,
    )
    .await
}

/// Code holding a concrete store reaches every area through the prelude.
#[tokio::test]
async fn the_prelude_reaches_every_area_of_a_concrete_store() -> anyhow::Result<()> {
    use anyhow::ensure;
    use helm_core::model::{MemoryId, MessageId};
    use helm_core::store::prelude::*;
    use helm_core::store::{BootstrapPlan, ChannelFilter};

    let dir = tempfile::tempdir()?;
    let store = SqliteStore::open(dir.path().join("helm.db")).await?;
    let plan = BootstrapPlan {
        workspace_name: "Prelude".into(),
        captain_name: "captain".into(),
        home_purpose: "Home.".into(),
        skipper_instructions: "Steer.".into(),
    };
    let boot = store.bootstrap(plan, Box::new(|_| Ok(()))).await?;
    ensure!(store.workspace().await?.is_some());
    ensure!(store.list_channels(ChannelFilter::default()).await?.len() == 1);
    ensure!(store.message(MessageId(i64::MAX)).await.is_err());
    ensure!(store.running_turns().await?.is_empty());
    ensure!(store.memory(MemoryId(i64::MAX)).await.is_err());
    ensure!(store.invites().await?.is_empty());
    ensure!(store.escalations(false).await?.is_empty());
    ensure!(!store.events_after(0, 10).await?.is_empty());
    ensure!(boot.home.channel.name.as_str() == "main");
    Ok(())
}
