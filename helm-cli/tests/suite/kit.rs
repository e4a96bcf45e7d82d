use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// A temporary data dir and a way to run `1helm` on it.
pub struct Cli {
    pub dir: TempDir,
}

/// What a run printed and how it exited.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::from_str(&self.stdout)?)
    }
}

impl Cli {
    /// A fresh data dir, initialised.
    pub fn init() -> anyhow::Result<Self> {
        let cli = Cli::empty()?;
        let run = cli.run(&["init"])?;
        anyhow::ensure!(run.code == 0, "init failed: {}", run.stderr);
        Ok(cli)
    }

    /// A data dir that does not exist yet.
    pub fn empty() -> anyhow::Result<Self> {
        Ok(Cli {
            dir: tempfile::tempdir()?,
        })
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs `1helm --data <dir> ARGS…`.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Run> {
        let data = self.data();
        let mut all = vec!["--data", path_str(&data)?];
        all.extend_from_slice(args);
        bare(&all)
    }
}

/// Runs `1helm ARGS…` with no data dir flag (and no HELM_DATA).
pub fn bare(args: &[&str]) -> anyhow::Result<Run> {
    let out = Command::cargo_bin("1helm")?
        .args(args)
        .env_remove("HELM_DATA")
        .output()?;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout)?,
        stderr: String::from_utf8(out.stderr)?,
    })
}

pub fn path_str(p: &Path) -> anyhow::Result<&str> {
    p.to_str()
        .ok_or_else(|| anyhow::anyhow!("non-UTF-8 temp path"))
}
