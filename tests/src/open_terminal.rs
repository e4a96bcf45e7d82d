//! The real Open Terminal server (`open-terminal` from PyPI, pinned in
//! `tests/clients/requirements.txt` and installed in `target/clients-venv`
//! by `scripts/setup-clients`), started on a free loopback port with its
//! own home, key and log directory, and stopped when dropped: what the
//! remote computer's tests run channel computers on.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A running Open Terminal server.
pub struct OpenTerminal {
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The key it was started with.
    pub key: String,
    /// Its home directory (resolved), where relative paths start.
    pub home: PathBuf,
    child: Child,
    _dir: TempDir,
}

impl Drop for OpenTerminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `open-terminal` executable in the clients' venv.
fn executable() -> anyhow::Result<PathBuf> {
    let exe =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/clients-venv/bin/open-terminal");
    anyhow::ensure!(
        exe.is_file(),
        "the Open Terminal server is not installed at {}: run scripts/setup-clients \
         (scripts/test does)",
        exe.display()
    );
    Ok(exe)
}

impl OpenTerminal {
    /// Starts a server with a fresh key and waits until it answers.
    pub async fn start() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        for sub in ["home", "config", "state", "logs"] {
            std::fs::create_dir(dir.path().join(sub))?;
        }
        let home = std::fs::canonicalize(dir.path().join("home"))?;
        let key = crate::unique("ot-key-");
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let log = std::fs::File::create(dir.path().join("server.log"))?;
        let mut command = Command::new(executable()?);
        command
            .args(["run", "--host", "127.0.0.1", "--port", &port.to_string()])
            .arg("--cwd")
            .arg(&home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("OPEN_TERMINAL_LOG_DIR", dir.path().join("logs"))
            .env("OPEN_TERMINAL_API_KEY", &key)
            .env("SHELL", "/bin/sh")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let mut child = command.spawn()?;
        let url = format!("http://127.0.0.1:{port}");
        for _ in 0..300 {
            if let Some(status) = child.try_wait()? {
                let log = std::fs::read_to_string(dir.path().join("server.log"))?;
                anyhow::bail!("open-terminal exited with {status}: {log}");
            }
            if healthy(port).await {
                return Ok(OpenTerminal {
                    url,
                    key,
                    home,
                    child,
                    _dir: dir,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = child.kill();
        anyhow::bail!("open-terminal did not answer on port {port} within 30 s")
    }
}

/// Whether `GET /health` on `port` answers 200.
async fn healthy(port: u16) -> bool {
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/1.1 200")
}
