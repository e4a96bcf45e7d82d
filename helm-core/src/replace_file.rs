//! Replacing a small file whole: the new bytes go to a temporary file of
//! this write's own beside it, which is then renamed over the old one, so a
//! reader (or a crash) sees the old file or the new one, never half of
//! either.
//!
//! The temporary's name is unique to the process and the write: with one
//! shared name, two writers of the same file at once (a request and the
//! runtime following the same change) truncated each other's temporary,
//! and the second rename failed because the first had taken its file.
//! A crash between the write and the rename leaves its temporary behind;
//! the next replacement of the same file removes those of processes that
//! are gone.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How a replaced file is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// As the umask allows, and not synced: a mirror of what the store
    /// holds, rewritten from it whenever it is lost.
    Mirror,
    /// Readable by the server's user only (0600, also when the old file
    /// was wider), and on disk before it replaces the old one: a key the
    /// server must neither lose nor show to agents on the same host.
    Secret,
}

/// Replaces `path` with `bytes`, whole. On failure the old file is as it
/// was and no temporary is left behind.
pub(crate) fn replace(path: &Path, bytes: &[u8], keep: Keep) -> std::io::Result<()> {
    let temporary = temporary_beside(path)?;
    let written =
        write_new(&temporary, bytes, keep).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_ok() {
        remove_leftovers(path);
    } else {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Removes the temporaries of `path` that processes which have since died
/// left behind (a crash before the rename). Best effort: they are only
/// clutter. A live process's temporary is kept, as it may be about to be
/// renamed; one whose process id a new process has taken stays until that
/// one is gone too.
fn remove_leftovers(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        // `<pid>.<n>`: the name of a temporary this module made.
        let Some(pid) = rest
            .split_once('.')
            .filter(|(_, n)| n.parse::<u64>().is_ok())
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A name in `path`'s folder no other write uses: `.<name>.<pid>.<n>.tmp`.
fn temporary_beside(path: &Path) -> std::io::Result<PathBuf> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    Ok(path.with_file_name(format!(
        ".{}.{}.{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    )))
}

fn write_new(temporary: &Path, bytes: &[u8], keep: Keep) -> std::io::Result<()> {
    let mut options = std::fs::File::options();
    options.write(true).create_new(true);
    if keep == Keep::Secret {
        options.mode(0o600);
    }
    let mut file = options.open(temporary)?;
    if keep == Keep::Secret {
        // `mode` is narrowed by the umask, never widened; this makes sure.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)?;
    if keep == Keep::Secret {
        file.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> std::io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                names.push(name);
            }
        }
        Ok(names)
    }

    #[test]
    fn writers_of_one_file_at_once_each_put_a_whole_file_in_place() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("agent.json");
        let texts: Vec<String> = (0..8).map(|i| format!("{i}").repeat(4096)).collect();
        std::thread::scope(|s| {
            let writers: Vec<_> = texts
                .iter()
                .map(|text| {
                    let path = &path;
                    s.spawn(move || {
                        (0..50).try_for_each(|_| replace(path, text.as_bytes(), Keep::Mirror))
                    })
                })
                .collect();
            writers.into_iter().try_for_each(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("panicked")))
            })
        })?;
        let kept = std::fs::read_to_string(&path)?;
        assert!(texts.contains(&kept), "a mixed file: {} bytes", kept.len());
        assert_eq!(leftovers(dir.path())?, Vec::<String>::new());
        Ok(())
    }

    #[test]
    fn a_replacement_removes_what_a_dead_process_left_and_keeps_a_live_ones() -> std::io::Result<()>
    {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("agent.json");
        // A process that has exited: its id names no process now.
        let mut gone = std::process::Command::new("true").spawn()?;
        gone.wait()?;
        let dead = format!(".agent.json.{}.3.tmp", gone.id());
        // Process 1 lives as long as the machine does.
        let live = ".agent.json.1.7.tmp".to_string();
        // Not this module's temporaries: another file's, and a user's file.
        let others = [".other.json.999999.1.tmp", ".agent.json.notes.tmp"];
        for name in [dead.as_str(), live.as_str()].into_iter().chain(others) {
            std::fs::write(dir.path().join(name), "left")?;
        }
        replace(&path, b"{}", Keep::Mirror)?;
        let mut kept = leftovers(dir.path())?;
        kept.sort();
        let mut expected = vec![live, others[0].to_string(), others[1].to_string()];
        expected.sort();
        assert_eq!(kept, expected);
        Ok(())
    }

    #[test]
    fn a_secret_is_private_even_over_a_wider_file() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("openai.key");
        std::fs::write(&path, "old")?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        replace(&path, b"sk-new", Keep::Secret)?;
        assert_eq!(std::fs::read_to_string(&path)?, "sk-new");
        assert_eq!(
            std::fs::metadata(&path)?.permissions().mode() & 0o777,
            0o600
        );
        Ok(())
    }

    #[test]
    fn a_failed_replacement_leaves_the_old_file_and_no_temporary() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        // A folder where the file should go: the rename over it fails.
        let path = dir.path().join("node-key");
        std::fs::create_dir(&path)?;
        std::fs::write(path.join("inside"), "kept")?;
        assert!(replace(&path, b"new", Keep::Secret).is_err());
        assert_eq!(std::fs::read_to_string(path.join("inside"))?, "kept");
        assert_eq!(leftovers(dir.path())?, Vec::<String>::new());
        assert!(replace(&dir.path().join("missing/dir/file"), b"x", Keep::Mirror).is_err());
        Ok(())
    }
}
