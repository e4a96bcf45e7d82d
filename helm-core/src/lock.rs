//! Who holds a data root.
//!
//! A running server owns its data root: it alone writes the store, drives the
//! turns and publishes live events, so every change reaches its listeners. It
//! holds an exclusive lock on `<data>/server.lock` and describes itself in
//! `<data>/server.json` (its URL and pid). A command working on the data root
//! directly holds the same lock shared for as long as it runs, so a command
//! refuses while a server runs (and names the server to talk to instead), and
//! a server does not start under a running command. The operating system
//! releases the lock when its holder exits, crashed or not, so a stale
//! `server.json` never blocks anyone.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const LOCK_FILE: &str = "server.lock";
const INFO_FILE: &str = "server.json";

/// What a running server says about itself in `server.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Where clients reach it, such as `http://127.0.0.1:7400`.
    pub url: String,
    /// Its process id.
    pub pid: u32,
    /// When it started.
    pub started: Timestamp,
}

/// A held lock on a data root; released when dropped.
#[derive(Debug)]
pub struct DataLock {
    _file: Option<File>,
    /// `server.json`, removed on release, for a server's lock.
    info: Option<PathBuf>,
}

impl DataLock {
    /// Takes the data root for a server, waiting up to `wait` for commands
    /// that are using it to finish. Fails with [`Error::Busy`] if another
    /// server holds it.
    pub fn server(root: &Path, info: &ServerInfo, wait: Duration) -> Result<DataLock> {
        crate::world::create_private_dir(root)?;
        let file = open(root)?;
        let deadline = std::time::Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if let Some(other) = running_server(root) {
                        return Err(Error::Busy(format!(
                            "another helm-http server (pid {}) already serves {} at {}",
                            other.pid,
                            root.display(),
                            other.url
                        )));
                    }
                    if std::time::Instant::now() >= deadline {
                        return Err(Error::Busy(format!(
                            "another program is using {} (a 1helm command or a script that opened it); \
                             start the server when it has finished",
                            root.display()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(TryLockError::Error(e)) => {
                    return Err(Error::io("locking", root.join(LOCK_FILE), e));
                }
            }
        }
        let path = root.join(INFO_FILE);
        let text = serde_json::to_string_pretty(info)
            .map_err(|e| Error::Internal(format!("server info does not serialise: {e}")))?;
        write_private(&path, text.as_bytes()).map_err(|e| Error::io("writing", &path, e))?;
        Ok(DataLock {
            _file: Some(file),
            info: Some(path),
        })
    }

    /// Takes the data root for a command that works on it directly. Fails
    /// with [`Error::Served`], naming the server's URL, while a server holds it.
    /// A data root that does not exist yet needs no lock.
    pub fn command(root: &Path) -> Result<DataLock> {
        if !root.is_dir() {
            return Ok(DataLock {
                _file: None,
                info: None,
            });
        }
        let file = open(root)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(DataLock {
                _file: Some(file),
                info: None,
            }),
            Err(TryLockError::WouldBlock) => Err(Error::Served {
                dir: root.to_path_buf(),
                server: running_server(root),
            }),
            Err(TryLockError::Error(e)) => Err(Error::io("locking", root.join(LOCK_FILE), e)),
        }
    }
}

impl Drop for DataLock {
    fn drop(&mut self) {
        if let Some(path) = &self.info {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The server described in `server.json`, if the file exists and reads.
pub fn running_server(root: &Path) -> Option<ServerInfo> {
    let text = std::fs::read_to_string(root.join(INFO_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `bytes` to `path` readable by the server's user only (0600), also
/// when the file existed with a wider mode: agents in process mode run on
/// the same host and must not read what the server keeps there.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

fn open(root: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = root.join(LOCK_FILE);
    File::options()
        .mode(0o600)
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("opening the server lock", &path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_excludes_commands_and_commands_delay_a_server() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("helm-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("mkdir", &dir, e))?;
        let info = ServerInfo {
            url: "http://127.0.0.1:7999".into(),
            pid: 42,
            started: Timestamp::now(),
        };
        {
            let _command = DataLock::command(&dir)?;
            let refused = DataLock::server(&dir, &info, Duration::from_millis(150));
            assert!(matches!(refused, Err(Error::Busy(m)) if m.contains("1helm command")));
        }
        {
            let _server = DataLock::server(&dir, &info, Duration::ZERO)?;
            assert_eq!(running_server(&dir), Some(info.clone()));
            let refused = DataLock::command(&dir);
            assert!(
                matches!(&refused, Err(e @ Error::Served { server: Some(s), .. })
                    if s.url == "http://127.0.0.1:7999" && e.to_string().contains("at http://127.0.0.1:7999")),
                "{refused:?}"
            );
        }
        assert_eq!(running_server(&dir), None);
        assert!(DataLock::command(&dir).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }
}
