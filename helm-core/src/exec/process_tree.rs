//! Starting and ending process trees.
//!
//! Every command and terminal starts as the leader of a new session (and so
//! of a new process group). Ending it kills the group and then every process
//! still in the session, which also catches the jobs an interactive shell
//! moves into groups of their own. Under bubblewrap the sandbox's PID
//! namespace dies with its init as well, so nothing inside can outlive it;
//! in process mode a program that deliberately starts a new session of its
//! own escapes both (see `docs/security.md`).

use std::io;
use std::process::Command;

use rustix::process::{Pid, Resource, Rlimit, Signal};

use super::computer::{ResourceLimits, SandboxUser};

/// What a child does between `fork` and `exec`, decided in the parent.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ChildSetup {
    /// `(resource, limit)` pairs, already clamped to what may be set.
    limits: [Option<(Resource, u64)>; 5],
    /// Give it a network namespace of its own (no network). Needs root.
    pub(crate) new_netns: bool,
    /// Forbid gaining privileges through setuid binaries.
    pub(crate) no_new_privs: bool,
    /// Switch to this uid and gid (needs root).
    pub(crate) drop_to: Option<SandboxUser>,
    /// The pid of the process that spawns it: the child gets SIGKILL when
    /// its parent dies (set by [`install`]).
    parent: u32,
}

impl ChildSetup {
    /// A setup applying `limits`. `cpu` is false for terminals, which may
    /// idle for days; `processes` only applies to a uid of the sandbox's own.
    pub(crate) fn with_limits(limits: &ResourceLimits, cpu: bool, own_uid: bool) -> Self {
        let wanted = [
            (Resource::Cpu, limits.cpu_seconds.filter(|_| cpu)),
            (Resource::Fsize, limits.file_size_bytes),
            (Resource::Nproc, limits.processes.filter(|_| own_uid)),
            (Resource::Nofile, limits.open_files),
            (Resource::Core, Some(0)),
        ];
        let mut setup = ChildSetup::default();
        for (slot, (resource, value)) in setup.limits.iter_mut().zip(wanted) {
            *slot = value.map(|v| (resource, clamp_to_hard_limit(resource, v)));
        }
        setup
    }

    /// `prlimit` options for the same limits (terminals are spawned through
    /// portable-pty, which offers no hook between fork and exec).
    pub(crate) fn prlimit_args(&self) -> Vec<String> {
        self.limits
            .iter()
            .flatten()
            .map(|(resource, v)| {
                let name = match resource {
                    Resource::Cpu => "cpu",
                    Resource::Fsize => "fsize",
                    Resource::Nproc => "nproc",
                    Resource::Nofile => "nofile",
                    _ => "core",
                };
                format!("--{name}={v}")
            })
            .collect()
    }

    /// Applies the setup in the child. Only raw system calls: no allocation,
    /// no locks (it runs between fork and exec).
    fn apply(&self) -> io::Result<()> {
        rustix::process::setsid()?;
        for (resource, value) in self.limits.iter().flatten() {
            rustix::process::setrlimit(
                *resource,
                Rlimit {
                    current: Some(*value),
                    maximum: Some(*value),
                },
            )?;
        }
        if self.no_new_privs {
            rustix::thread::set_no_new_privs(true)?;
        }
        if let Some(user) = self.drop_to {
            use rustix::process::{Gid, Uid};
            use rustix::thread::{
                CapabilitySet, remove_capability_from_bounding_set, set_thread_groups,
                set_thread_res_gid, set_thread_res_uid,
            };
            let (uid, gid) = (Uid::from_raw(user.uid), Gid::from_raw(user.gid));
            // The bounding set goes first, while the capability to drop it
            // is still held; then groups, gid and uid.
            // (Capabilities this kernel does not know answer EINVAL.)
            for cap in 0..64u32 {
                let _ = remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(
                    1u64 << cap,
                ));
            }
            set_thread_groups(&[])?;
            set_thread_res_gid(gid, gid, gid)?;
            set_thread_res_uid(uid, uid, uid)?;
        }
        // Last, because changing credentials clears it: the child dies with
        // the process that started it, however that process ends (SIGKILL
        // included). If that process is already gone, do not start at all.
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
        if rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(self.parent)
        {
            return Err(io::Error::other(
                "the process that started this command is gone",
            ));
        }
        Ok(())
    }
}

/// Makes `command` apply `setup` in the child before it execs.
//
// This is one of the two places Helm uses `unsafe` (the other is
// `store::sqlite::recall::fts5`). `pre_exec` is unsafe because the
// closure runs in the forked child, where another thread of the parent may
// have held a lock (the allocator's, say) at the moment of the fork; only
// async-signal-safe work is sound there. The closure only copies a `Copy`
// value captured before the fork and makes raw system calls through rustix
// (setsid, setrlimit, unshare, prctl, setgroups, setresgid, setresuid), which
// neither allocate nor lock. `unshare` is unsafe in rustix only for
// `CLONE_FILES` (threads sharing a descriptor table); only `CLONE_NEWNET` is
// passed, in a child that has exactly one thread.
#[allow(unsafe_code)]
pub(crate) fn install(command: &mut Command, mut setup: ChildSetup) {
    use std::os::unix::process::CommandExt;
    setup.parent = std::process::id();
    let hook = move || {
        if setup.new_netns {
            // SAFETY: see above; NEWNET only, single-threaded child.
            unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET) }?;
        }
        setup.apply()
    };
    // SAFETY: see above; the hook only makes raw system calls.
    unsafe {
        command.pre_exec(hook);
    }
}

/// Raises this process's soft limit on open files to its hard limit, so a
/// server holding many connections (and the files its agents work on) runs
/// out late; returns the limit now in force. Commands started afterwards
/// still get the channels' own limit.
pub fn raise_open_files_limit() -> io::Result<u64> {
    let current = rustix::process::getrlimit(Resource::Nofile);
    let target = current.maximum;
    if current.current != target {
        rustix::process::setrlimit(
            Resource::Nofile,
            Rlimit {
                current: target,
                maximum: current.maximum,
            },
        )?;
    }
    Ok(target.unwrap_or(u64::MAX))
}

/// A spawn request for the spawner thread.
type SpawnJob = (
    tokio::process::Command,
    tokio::runtime::Handle,
    tokio::sync::oneshot::Sender<io::Result<tokio::process::Child>>,
);

/// Spawns `command` from one thread that lives as long as this process.
/// The parent-death signal is tied to the *thread* that forked, not to the
/// process: a command forked from a short-lived thread (a blocking pool
/// worker, or a caller's own thread running the runtime) would be killed
/// when that thread ends. From this thread it dies with the process only.
pub(crate) async fn spawn(command: tokio::process::Command) -> io::Result<tokio::process::Child> {
    static SPAWNER: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<SpawnJob>>> =
        std::sync::OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new()
            .name("helm-spawner".into())
            .spawn(move || {
                for (mut command, runtime, reply) in rx {
                    let _entered = runtime.enter();
                    let _ = reply.send(command.spawn());
                }
            });
        if let Err(e) = started {
            tracing::error!(error = %e, "could not start the spawner thread");
        }
        std::sync::Mutex::new(tx)
    });
    let (reply, answer) = tokio::sync::oneshot::channel();
    let job = (command, tokio::runtime::Handle::current(), reply);
    sender
        .lock()
        .map_err(|_| io::Error::other("the spawner is poisoned"))?
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    answer
        .await
        .map_err(|_| io::Error::other("the spawner thread dropped a request"))?
}

fn clamp_to_hard_limit(resource: Resource, value: u64) -> u64 {
    match rustix::process::getrlimit(resource).maximum {
        Some(hard) => value.min(hard),
        None => value,
    }
}

/// Kills the process group led by `leader` and everything left in its
/// session, at once. Safe to call when they are already gone; for drops and
/// for clearing out what a command left after it ended.
pub(crate) fn kill_tree(leader: u32) {
    let Some(pid) = pid(leader) else { return };
    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    for member in session_members(leader) {
        if let Some(p) = self::pid(member) {
            let _ = rustix::process::kill_process(p, Signal::KILL);
        }
    }
}

/// Kills a running bubblewrap sandbox in an order that leaves no zombie
/// behind: first everything in the session but its leader (bwrap's monitor),
/// so that the monitor reaps the sandbox's init and exits by itself, then
/// the leader, which the caller reaps. (Not for a shell leader: killed
/// last, a shell would run its next command first.) Blocking: it waits up
/// to half a second for the first step; run it off the async runtime.
pub(crate) fn kill_tree_settled(leader: u32) {
    let others = |sid| session_members(sid).into_iter().filter(move |p| *p != sid);
    for member in others(leader) {
        if let Some(p) = pid(member) {
            let _ = rustix::process::kill_process(p, Signal::KILL);
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    while others(leader).next().is_some() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    kill_tree(leader);
}

/// Kills the process group led by `leader` (one system call; see
/// [`clear_session`] for the rest of the session).
pub(crate) fn kill_group(leader: u32) {
    if let Some(pid) = pid(leader) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}

/// Kills whatever is still alive in session `sid` until nothing is, or
/// `within` has passed; returns whether it emptied. With `zombies_count`,
/// processes that have exited but wait to be reaped (by the host's init,
/// once orphaned) must be gone too. One scan of `/proc` when the session is
/// already empty.
pub(crate) async fn clear_session(
    sid: u32,
    within: std::time::Duration,
    zombies_count: bool,
) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let mut left = 0;
        for (member, state) in session_processes(sid) {
            if state == 'Z' {
                left += usize::from(zombies_count);
            } else if let Some(p) = pid(member) {
                left += 1;
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
        if left == 0 {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// The processes whose session id is `sid`, from `/proc`.
pub(crate) fn session_members(sid: u32) -> Vec<u32> {
    session_processes(sid)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// How many processes of session `sid` are alive (not zombies).
pub(crate) fn live_session_members(sid: u32) -> usize {
    session_processes(sid)
        .into_iter()
        .filter(|(_, state)| *state != 'Z')
        .count()
}

/// The processes of session `sid` with their states (`R`, `S`, `Z`…).
fn session_processes(sid: u32) -> Vec<(u32, char)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| match process_session(p) {
            Some((session, state)) if session == sid => Some((p, state)),
            _ => None,
        })
        .collect()
}

/// The session id and state of a process, from `/proc/<pid>/stat` (fields
/// after the command name, which may itself contain spaces and parentheses).
fn process_session(pid: u32) -> Option<(u32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    // state ppid pgrp session
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let session = fields.nth(2)?.parse().ok()?;
    Some((session, state))
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`
/// field 22): with the pid, it names one process for as long as the host
/// runs, where the pid alone may be reused. Zombies have one too.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    // Field 3 (state) is the first after the name; 22 is the 20th.
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn pid(raw: u32) -> Option<Pid> {
    i32::try_from(raw).ok().and_then(Pid::from_raw)
}

/// Waits, without reaping, until process `pid` has exited: its id stays
/// reserved (a zombie), so its group can still be killed safely afterwards.
/// Blocking; run it off the async runtime.
pub(crate) fn wait_exited_keep_zombie(pid: u32) -> io::Result<()> {
    use rustix::process::{WaitId, WaitIdOptions};
    let Some(p) = self::pid(pid) else {
        return Ok(());
    };
    loop {
        match rustix::process::waitid(
            WaitId::Pid(p),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_in_its_own_session_list() {
        let me = std::process::id();
        let sid = process_session(me).map(|(sid, _)| sid);
        assert!(sid.is_some());
        if let Some(sid) = sid {
            assert!(session_members(sid).contains(&me));
        }
    }

    #[test]
    fn prlimit_arguments_name_each_limit() {
        let limits = ResourceLimits {
            cpu_seconds: Some(5),
            file_size_bytes: Some(1 << 20),
            processes: Some(64),
            open_files: None,
        };
        let args = ChildSetup::with_limits(&limits, false, true).prlimit_args();
        assert!(args.contains(&"--fsize=1048576".to_string()));
        assert!(
            args.contains(&"--nproc=64".to_string())
                || args.iter().any(|a| a.starts_with("--nproc="))
        );
        assert!(args.contains(&"--core=0".to_string()));
        assert!(!args.iter().any(|a| a.starts_with("--cpu")));
    }
}
