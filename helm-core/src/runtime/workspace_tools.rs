//! The channel workspace as the built-in tools see it: agent-visible paths
//! (`/workspace/...` or relative) translated to the channel's directory and
//! confined to it, and commands run with the workspace as their fixed cwd
//! and a scrubbed environment.

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::error::{Error, Result};

/// The agent-visible root of a channel's computer.
pub const WORKSPACE: &str = "/workspace";
/// The tail of stdout and stderr each kept from a command.
const OUTPUT_TAIL: usize = 16 * 1024;

/// One channel's workspace, for the built-in tools.
#[derive(Debug, Clone)]
pub struct WorkspaceTools {
    root: PathBuf,
}

/// What a command did.
#[derive(Debug, Clone)]
pub struct CommandRun {
    /// Its exit code; `None` when killed.
    pub exit_code: Option<i32>,
    /// The tail of its stdout.
    pub stdout: String,
    /// The tail of its stderr.
    pub stderr: String,
    /// Whether output was cut to its tail.
    pub truncated: bool,
    /// Whether it was killed for running too long.
    pub timed_out: bool,
    /// The isolation mode it ran under.
    pub isolation: String,
}

impl WorkspaceTools {
    /// The tools for the workspace directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        WorkspaceTools { root: root.into() }
    }

    /// Translates an agent-visible path to a host path inside the workspace,
    /// refusing anything that would leave it.
    fn resolve(&self, path: &str) -> Result<(PathBuf, String)> {
        let trimmed = path.trim();
        let relative = if trimmed == WORKSPACE {
            ""
        } else if let Some(rest) = trimmed.strip_prefix("/workspace/") {
            rest
        } else if trimmed.starts_with('/') {
            return Err(Error::invalid(
                "path",
                format!("{trimmed} is outside /workspace; use a path under /workspace"),
            ));
        } else {
            trimmed
        };
        let mut host = self.root.clone();
        let mut visible = PathBuf::from(WORKSPACE);
        for component in Path::new(relative).components() {
            match component {
                Component::Normal(part) => {
                    host.push(part);
                    visible.push(part);
                }
                Component::CurDir => {}
                _ => {
                    return Err(Error::invalid(
                        "path",
                        format!("{trimmed} escapes /workspace (\"..\" is not allowed)"),
                    ));
                }
            }
        }
        // Symlinks must not lead out: check the deepest existing ancestor.
        let canonical_root = self
            .root
            .canonicalize()
            .map_err(|e| Error::io("opening the workspace", &self.root, e))?;
        let mut probe = host.as_path();
        loop {
            if let Ok(real) = probe.canonicalize() {
                if !real.starts_with(&canonical_root) {
                    return Err(Error::Refused(format!(
                        "{trimmed} leads outside /workspace through a link"
                    )));
                }
                break;
            }
            match probe.parent() {
                Some(parent) => probe = parent,
                None => break,
            }
        }
        Ok((host, visible.to_string_lossy().into_owned()))
    }

    /// Reads a UTF-8 text file.
    pub async fn read_file(&self, path: &str) -> Result<String> {
        let (host, visible) = self.resolve(path)?;
        let bytes = tokio::fs::read(&host).await.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::not_found("file", &visible),
            _ => Error::invalid("path", format!("cannot read {visible}: {e}")),
        })?;
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid("file", format!("{visible} is not UTF-8 text")))
    }

    /// Creates or replaces a file; returns its agent-visible path.
    pub async fn write_file(&self, path: &str, content: &str) -> Result<String> {
        let (host, visible) = self.resolve(path)?;
        if visible == WORKSPACE {
            return Err(Error::invalid("path", "write_file needs a file name"));
        }
        if let Some(parent) = host.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                Error::invalid("path", format!("cannot create folders for {visible}: {e}"))
            })?;
        }
        // Re-check after creating folders, in case one of them is a link.
        self.resolve(path)?;
        tokio::fs::write(&host, content)
            .await
            .map_err(|e| Error::invalid("path", format!("cannot write {visible}: {e}")))?;
        Ok(visible)
    }

    /// Lists a folder: `name/` for folders, `name (N bytes)` for files.
    pub async fn list_files(&self, path: &str) -> Result<Vec<String>> {
        let (host, visible) = self.resolve(path)?;
        let mut dir = tokio::fs::read_dir(&host)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::not_found("folder", &visible),
                _ => Error::invalid("path", format!("cannot list {visible}: {e}")),
            })?;
        let mut entries = Vec::new();
        while let Some(entry) = dir
            .next_entry()
            .await
            .map_err(|e| Error::invalid("path", format!("cannot list {visible}: {e}")))?
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.metadata().await {
                Ok(m) if m.is_dir() => entries.push(format!("{name}/")),
                Ok(m) => entries.push(format!("{name} ({} bytes)", m.len())),
                Err(_) => entries.push(name),
            }
        }
        entries.sort();
        Ok(entries)
    }

    /// Runs `command` with bash in the workspace, killing it after `timeout`.
    pub async fn run_command(&self, command: &str, timeout: Duration) -> Result<CommandRun> {
        let mut child = tokio::process::Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.root)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .map_err(|e| Error::Internal(format!("cannot start bash: {e}")))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let out_task = tokio::spawn(read_tail(stdout));
        let err_task = tokio::spawn(read_tail(stderr));
        let (exit_code, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => (
                status
                    .map_err(|e| Error::Internal(format!("waiting for a command: {e}")))?
                    .code(),
                false,
            ),
            Err(_) => {
                let _ = child.kill().await;
                (None, true)
            }
        };
        let (stdout, out_cut) = out_task.await.unwrap_or_default();
        let (stderr, err_cut) = err_task.await.unwrap_or_default();
        Ok(CommandRun {
            exit_code,
            stdout,
            stderr,
            truncated: out_cut || err_cut,
            timed_out,
            isolation: "process".into(),
        })
    }
}

async fn read_tail<R: tokio::io::AsyncRead + Unpin>(reader: Option<R>) -> (String, bool) {
    let Some(mut reader) = reader else {
        return (String::new(), false);
    };
    let mut tail: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > OUTPUT_TAIL {
                    let cut = tail.len() - OUTPUT_TAIL;
                    tail.drain(..cut);
                    truncated = true;
                }
            }
        }
    }
    (String::from_utf8_lossy(&tail).into_owned(), truncated)
}
