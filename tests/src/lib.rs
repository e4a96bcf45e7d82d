//! Helm's shared test kit: temporary workspaces, mock model servers
//! ([`mock`]) and fixtures. Other crates' tests use it through `helm-tests`
//! so that no test double lives only under `cfg(test)`.

use std::path::{Path, PathBuf};

use helm_core::model::User;
use helm_core::{Helm, HelmOptions, InitOptions};
use tempfile::TempDir;

pub mod mock;

/// A fresh, initialised workspace in a temporary data directory that is
/// removed when this value is dropped.
pub struct TestHelm {
    /// The temporary directory holding the data root.
    pub dir: TempDir,
    /// The opened workspace.
    pub helm: Helm,
    /// Its Captain.
    pub captain: User,
}

impl TestHelm {
    /// Initialises a workspace in a new temporary directory.
    pub async fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let (helm, report) = Helm::init(
            HelmOptions::new(dir.path().join("data")),
            InitOptions::default(),
        )
        .await?;
        Ok(TestHelm {
            dir,
            helm,
            captain: report.captain,
        })
    }

    /// The data root.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Opens the same data root again, as a restarted process would.
    pub async fn reopen(&self) -> anyhow::Result<Helm> {
        Ok(Helm::open(HelmOptions::new(self.data_dir())).await?)
    }
}

/// Lists the entries of a directory by name, sorted (empty if it is missing).
pub fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
