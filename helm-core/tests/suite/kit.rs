//! A temporary, initialised workspace for each test.

use std::path::PathBuf;

use helm_core::model::User;
use helm_core::{Helm, HelmOptions, InitOptions};
use tempfile::TempDir;

pub struct Fixture {
    pub dir: TempDir,
    pub helm: Helm,
    pub captain: User,
}

impl Fixture {
    pub async fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let (helm, report) = Helm::init(
            HelmOptions::new(dir.path().join("data")),
            InitOptions::default(),
        )
        .await?;
        Ok(Fixture {
            dir,
            helm,
            captain: report.captain,
        })
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A raw connection to the database file, to prove rules hold below the API.
    pub fn raw_db(&self) -> anyhow::Result<rusqlite::Connection> {
        let conn = rusqlite::Connection::open(self.data_dir().join("helm.db"))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(conn)
    }

    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        Ok(self.raw_db()?.query_row(sql, [], |r| r.get(0))?)
    }
}

pub const LAUNCH_PURPOSE: &str = "This channel owns planning and coordinating the product launch.";
