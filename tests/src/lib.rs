//! Helm's shared test kit: temporary workspaces and, as later issues add
//! them, mock model servers and fixtures. Other crates' tests use it through
//! `helm-tests` so that no test double lives only under `cfg(test)`.

use std::path::{Path, PathBuf};

use helm_core::exec::IsolationChoice;
use helm_core::model::User;
use helm_core::{Helm, HelmOptions, InitOptions};
use tempfile::TempDir;

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
        Self::with_isolation(IsolationChoice::Auto).await
    }

    /// Initialises a workspace whose channel computers use `isolation`.
    pub async fn with_isolation(isolation: IsolationChoice) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        // As a deployment should be: the data root's parents may be passed
        // through (process isolation reaches the workspace that way).
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )?;
        let mut options = HelmOptions::new(dir.path().join("data"));
        options.computer.isolation = isolation;
        let (helm, report) = Helm::init(options, InitOptions::default()).await?;
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

/// Whether this process runs as root (then each channel's commands run as a
/// uid of their own, and process isolation can rely on it).
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// A string no other test or process uses.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{prefix}{}{nanos}", std::process::id())
}
