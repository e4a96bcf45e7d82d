//! The process ledger: the commands and terminals a data root has running,
//! written down so that a server starting on it can end what an earlier
//! process left behind, and nothing else.
//!
//! Each command and terminal is the leader of a session of its own. When it
//! starts, a record `<data>/state/procs/<pid>-<start>` names it by its pid
//! and start time (`/proc/<pid>/stat` field 22, ticks since boot), and says
//! which process started it (the server, or `1helm exec`) and on which boot;
//! when it has been ended and its session cleared, the record goes.
//!
//! Why records and not a sweep by uid: channel uids are `sandbox_uid_base +
//! channel id`, the same in every data root on the host, so a uid says
//! nothing about whose process it is; a server killing every process under
//! channel uids kills other servers' commands and terminals. A record is
//! this data root's alone, and the sweep ([`Ledger::sweep`]) kills one only
//! when all of these hold:
//!
//! - it was written on this boot (start times count from boot);
//! - the process that started it is gone (same pid *and* start time, so a
//!   running `1helm exec` on the same data root keeps its commands);
//! - the leader is the same process (same pid and start time), or it is gone
//!   and members of its session or group remain: a pid is not handed out
//!   again while a session or process group still bears it as its id, so
//!   those members can only be the leader's. A pid alive with another start
//!   time was reused after everything of the old session ended: nothing of
//!   ours is left under it, and the unrelated process is not touched.
//!
//! What it does not cover: a process that left its session (`setsid`) in
//! process mode without a PID namespace (then it is in no record), and a
//! command whose record could not be written (a full disk; logged).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process_tree::{clear_session, live_session_members, start_time};
use crate::error::{Error, Result};

/// How long the sweep waits for one record's processes to be gone.
const SWEEP_WAIT: Duration = Duration::from_secs(2);

/// One process for as long as the host runs: its pid and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    pid: u32,
    start: u64,
}

impl Stamp {
    /// The running (or zombie) process `pid`, if there is one.
    fn of(pid: u32) -> Option<Stamp> {
        start_time(pid).map(|start| Stamp { pid, start })
    }

    /// Whether this very process still exists.
    fn alive(&self) -> bool {
        Stamp::of(self.pid) == Some(*self)
    }

    fn file_name(&self) -> String {
        format!("{}-{}", self.pid, self.start)
    }

    fn parse_file_name(name: &str) -> Option<Stamp> {
        let (pid, start) = name.split_once('-')?;
        Some(Stamp {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }
}

/// The records of one data root's running commands and terminals.
#[derive(Debug)]
pub(crate) struct Ledger {
    dir: PathBuf,
    /// This process, the owner of what it records.
    owner: Option<Stamp>,
    boot: String,
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Swept {
    /// Processes killed.
    pub(crate) killed: usize,
    /// Records of lost commands and terminals that were cleared.
    pub(crate) cleared: usize,
}

impl Ledger {
    /// The ledger in `dir` (created 0700: agents must not forge records).
    pub(crate) fn open(dir: PathBuf) -> Result<Ledger> {
        crate::world::create_private_dir(&dir)?;
        Ok(Ledger {
            dir,
            owner: Stamp::of(std::process::id()),
            boot: boot_id(),
        })
    }

    /// Records the leader `pid` just started; the record goes when the
    /// returned entry is dropped. A record that cannot be written is logged
    /// and the command runs on (the parent-death signal and the PID
    /// namespaces still end it with its parent).
    pub(crate) fn record(&self, pid: u32) -> Entry {
        let Some(leader) = Stamp::of(pid) else {
            return Entry { path: None };
        };
        let path = self.dir.join(leader.file_name());
        let owner = self.owner.map_or((0, 0), |o| (o.pid, o.start));
        let text = format!("boot {}\nowner {} {}\n", self.boot, owner.0, owner.1);
        match write_private(&path, &text) {
            Ok(()) => Entry { path: Some(path) },
            Err(e) => {
                tracing::warn!(pid, error = %e, "could not record a command in the process ledger");
                Entry { path: None }
            }
        }
    }

    /// Kills what the records say was lost: commands and terminals started
    /// on this boot by a process that is gone (see the module docs), and
    /// clears their records. Records of live owners stay.
    pub(crate) async fn sweep(&self) -> Swept {
        let mut swept = Swept::default();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return swept;
        };
        let names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        for name in names {
            let path = self.dir.join(&name);
            let record = std::fs::read_to_string(&path).ok();
            let verdict = match (Stamp::parse_file_name(&name), record.as_deref()) {
                (Some(leader), Some(text)) => self.judge(leader, text),
                // Not a record (or half-written by a crash): nothing to act on.
                _ => Verdict::Forget,
            };
            match verdict {
                Verdict::Keep => continue,
                Verdict::Forget => {}
                Verdict::Kill(leader) => {
                    let found = live_session_members(leader.pid);
                    if !clear_session(leader.pid, SWEEP_WAIT, false).await {
                        tracing::warn!(
                            pid = leader.pid,
                            "a lost command's processes did not end; the next start tries again"
                        );
                        continue;
                    }
                    swept.killed += found;
                    swept.cleared += 1;
                }
            }
            let _ = std::fs::remove_file(&path);
        }
        swept
    }

    fn judge(&self, leader: Stamp, text: &str) -> Verdict {
        let mut boot = None;
        let mut owner = None;
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("boot", id)) => boot = Some(id),
                Some(("owner", stamp)) => {
                    owner = stamp.split_once(' ').and_then(|(pid, start)| {
                        Some(Stamp {
                            pid: pid.parse().ok()?,
                            start: start.parse().ok()?,
                        })
                    });
                }
                _ => {}
            }
        }
        let (Some(boot), Some(owner)) = (boot, owner) else {
            return Verdict::Forget;
        };
        if boot != self.boot {
            // Nothing survives a reboot, and start times restart with it.
            return Verdict::Forget;
        }
        if owner.alive() {
            // Not lost: whoever started it still runs it.
            return Verdict::Keep;
        }
        match Stamp::of(leader.pid) {
            Some(now) if now != leader => Verdict::Forget,
            // The leader itself, or (gone) what is left of its session.
            _ => Verdict::Kill(leader),
        }
    }
}

enum Verdict {
    /// Its owner still runs: leave it.
    Keep,
    /// Nothing of it can be left: drop the record.
    Forget,
    /// Lost: kill its session, then drop the record.
    Kill(Stamp),
}

/// A command's or terminal's record; dropping it removes the record.
#[derive(Debug)]
pub(crate) struct Entry {
    path: Option<PathBuf>,
}

impl Entry {
    /// Leaves the record for the next start's sweep (processes of the
    /// session would not end).
    pub(crate) fn keep(mut self) {
        self.path = None;
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io("creating a process record", path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io("writing a process record", path, e))
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};

    /// A real `sleep` in a session of its own, like a command's leader
    /// (util-linux `setsid` execs it in place: its child is no group leader).
    /// A `sleep` that leads its own session. `spawn` returns once `setsid`
    /// is forked, before it has made the new session, so this waits until
    /// the session exists: a sweep before that would find nothing to end.
    fn session_leader() -> std::io::Result<Child> {
        let child = Command::new("setsid")
            .args(["sleep", "60"])
            .stdin(Stdio::null())
            .spawn()?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while live_session_members(child.id()) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(child)
    }

    fn running(child: &mut Child) -> bool {
        matches!(child.try_wait(), Ok(None))
    }

    /// Writes a record as a process that has died would have.
    fn record_as_dead_owner(ledger: &Ledger, leader: Stamp) -> std::io::Result<PathBuf> {
        let path = ledger.dir.join(leader.file_name());
        // A pid that is not running, with a start time no process has.
        std::fs::write(
            &path,
            format!("boot {}\nowner {} 1\n", ledger.boot, u32::MAX - 1),
        )?;
        Ok(path)
    }

    #[tokio::test]
    async fn a_lost_command_is_killed_and_its_record_cleared() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let ledger = Ledger::open(dir.path().join("procs"))?;
        let mut child = session_leader()?;
        let leader = Stamp::of(child.id()).ok_or_else(|| anyhow::anyhow!("no start time"))?;
        let path = record_as_dead_owner(&ledger, leader)?;
        let swept = ledger.sweep().await;
        assert_eq!(
            swept,
            Swept {
                killed: 1,
                cleared: 1
            }
        );
        child.wait()?;
        assert!(!path.exists());
        Ok(())
    }

    #[tokio::test]
    async fn a_pid_now_held_by_an_unrelated_process_is_not_killed() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let ledger = Ledger::open(dir.path().join("procs"))?;
        let mut child = session_leader()?;
        let now = Stamp::of(child.id()).ok_or_else(|| anyhow::anyhow!("no start time"))?;
        // The record is of an earlier process that had the same pid.
        let earlier = Stamp {
            pid: now.pid,
            start: now.start.saturating_sub(1),
        };
        let path = record_as_dead_owner(&ledger, earlier)?;
        let swept = ledger.sweep().await;
        assert_eq!(swept, Swept::default());
        assert!(running(&mut child), "the unrelated process was killed");
        assert!(!path.exists(), "the stale record is dropped");
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    #[tokio::test]
    async fn commands_of_a_live_owner_and_of_another_boot_are_left_alone() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let ledger = Ledger::open(dir.path().join("procs"))?;
        let mut child = session_leader()?;
        // Recorded by this (live) process: a running `1helm exec`, say.
        let entry = ledger.record(child.id());
        assert_eq!(ledger.sweep().await, Swept::default());
        assert!(running(&mut child));
        // Recorded on another boot by a dead owner.
        let leader = Stamp::of(child.id()).ok_or_else(|| anyhow::anyhow!("no start time"))?;
        entry.keep();
        let path = dir.path().join("procs").join(leader.file_name());
        std::fs::write(&path, format!("boot other\nowner {} 1\n", u32::MAX - 1))?;
        assert_eq!(ledger.sweep().await, Swept::default());
        assert!(running(&mut child));
        assert!(!path.exists());
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    #[test]
    fn a_record_goes_when_its_entry_is_dropped() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let ledger = Ledger::open(dir.path().join("procs"))?;
        let entry = ledger.record(std::process::id());
        assert_eq!(std::fs::read_dir(&ledger.dir)?.count(), 1);
        drop(entry);
        assert_eq!(std::fs::read_dir(&ledger.dir)?.count(), 0);
        Ok(())
    }
}
