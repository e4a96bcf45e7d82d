//! The store conformance suite (`helm_tests::store_conformance`) against
//! each store. Another store joins by adding its factory and one
//! `store_conformance!` line.

use std::path::Path;
use std::sync::Arc;

use helm_core::store::{SqliteStore, Store};
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
