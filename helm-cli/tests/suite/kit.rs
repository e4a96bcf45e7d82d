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
        let dir = tempfile::tempdir()?;
        // As a deployment should be: the data root's parents may be passed
        // through (process isolation reaches the workspace that way).
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )?;
        Ok(Cli { dir })
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs `1helm --data <dir> ARGS…`.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Run> {
        self.run_with_env(args, &[])
    }

    /// Runs `1helm --data <dir> ARGS…` with `input` on its stdin.
    pub fn run_with_stdin(&self, args: &[&str], input: &str) -> anyhow::Result<Run> {
        let data = self.data();
        let out = Command::cargo_bin("1helm")?
            .arg("--data")
            .arg(&data)
            .args(args)
            .env_remove("HELM_DATA")
            .env_remove("HELM_ISOLATION")
            .write_stdin(input)
            .output()?;
        Ok(Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout)?,
            stderr: String::from_utf8(out.stderr)?,
        })
    }

    /// Runs `1helm --data <dir> ARGS…` with extra environment variables.
    pub fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<Run> {
        let data = self.data();
        let mut all = vec!["--data", path_str(&data)?];
        all.extend_from_slice(args);
        bare_with_env(&all, env)
    }

    /// Like [`Cli::run_with_env`], from the temporary directory rather than
    /// the checkout, so the embedding model a checkout keeps in `models/`
    /// is not found (it is looked for from the current directory up).
    pub fn run_without_model(&self, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<Run> {
        run_outside(self.dir.path(), &self.data(), args, env)
    }
}

/// Runs `1helm --data DATA ARGS…` from `cwd` (a directory outside the
/// repository), so the embedding model is found only where `env` points.
pub fn run_outside(
    cwd: &Path,
    data: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> anyhow::Result<Run> {
    let out = Command::cargo_bin("1helm")?
        .current_dir(cwd)
        .arg("--data")
        .arg(data)
        .args(args)
        .env_remove("HELM_DATA")
        .env_remove("HELM_ISOLATION")
        .env_remove("HELM_EMBED_MODEL")
        .env_remove("HELM_EMBEDDER")
        .envs(env.iter().copied())
        .output()?;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout)?,
        stderr: String::from_utf8(out.stderr)?,
    })
}

/// Runs `1helm ARGS…` with no data dir flag (and no HELM_DATA).
pub fn bare(args: &[&str]) -> anyhow::Result<Run> {
    bare_with_env(args, &[])
}

fn bare_with_env(args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<Run> {
    let out = Command::cargo_bin("1helm")?
        .args(args)
        .env_remove("HELM_DATA")
        .env_remove("HELM_ISOLATION")
        .envs(env.iter().copied())
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
