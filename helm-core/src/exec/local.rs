//! [`LocalExecutor`]: the executor port on this host, in the isolation mode
//! the deployment chose (bubblewrap, process, or host for Skipper).

use std::collections::HashSet;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::{Notify, watch};

use super::command::{CommandPoll, CommandResult, CommandSpec};
use super::computer::{
    Computer, ComputerOptions, Isolation, IsolationChoice, ResourceLimits, SandboxUser,
};
use super::files;
use super::output::{OutputTail, tail_text};
use super::port::{Executor, RunningCommand};
use super::process_tree::{self, install, kill_tree, kill_tree_settled};
use super::sandbox::{self, HostTools, Launch, Purpose};
use crate::error::{Error, Result};

/// How long the output pipes may stay open after a command has ended (held
/// by a process that escaped its group) before Helm stops reading them.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Commands ids, unique in this process.
static NEXT_COMMAND: AtomicU64 = AtomicU64::new(1);

/// Runs commands on this host.
pub struct LocalExecutor {
    tools: HostTools,
    limits: ResourceLimits,
    uid_base: u32,
    /// The isolation channel computers get here.
    channel_isolation: Isolation,
    /// Workspaces whose ownership and sandbox files are in place.
    prepared: Mutex<HashSet<(PathBuf, Option<u32>)>>,
}

impl std::fmt::Debug for LocalExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalExecutor")
            .field("isolation", &self.channel_isolation)
            .field("root", &self.tools.root)
            .finish_non_exhaustive()
    }
}

impl LocalExecutor {
    /// Finds the host tools, probes bubblewrap once when the choice needs it,
    /// and settles the isolation channel computers get.
    pub async fn new(options: &ComputerOptions) -> Result<Self> {
        let tools = HostTools::discover();
        let probe_user = if tools.root {
            Some(SandboxUser {
                uid: options.sandbox_uid_base,
                gid: options.sandbox_uid_base,
            })
        } else {
            None
        };
        let isolation = match options.isolation {
            IsolationChoice::Process => {
                warn_process_mode("process isolation was chosen");
                Isolation::Process
            }
            IsolationChoice::Bubblewrap => match probe_bubblewrap(&tools, probe_user).await {
                Ok(()) => Isolation::Bubblewrap,
                Err(reason) => {
                    return Err(Error::Internal(format!(
                        "bubblewrap isolation was chosen but does not work here: {reason}"
                    )));
                }
            },
            IsolationChoice::Auto => match probe_bubblewrap(&tools, probe_user).await {
                Ok(()) => Isolation::Bubblewrap,
                Err(reason) => {
                    warn_process_mode(&format!("bubblewrap does not work here ({reason})"));
                    Isolation::Process
                }
            },
        };
        if isolation == Isolation::Process && tools.root && tools.setpriv.is_none() {
            tracing::warn!(
                "setpriv (util-linux) is missing: terminals cannot drop to the sandbox uid"
            );
        }
        tracing::info!(%isolation, root = tools.root, "channel computers ready");
        Ok(LocalExecutor {
            tools,
            limits: options.limits,
            uid_base: options.sandbox_uid_base,
            channel_isolation: isolation,
            prepared: Mutex::new(HashSet::new()),
        })
    }

    /// The isolation channel computers get on this host.
    pub fn channel_isolation(&self) -> Isolation {
        self.channel_isolation
    }

    /// The unprivileged identity of channel `channel`, when the server runs
    /// as root (otherwise commands keep the server's uid).
    pub fn sandbox_user(&self, channel: crate::model::ChannelId) -> Result<Option<SandboxUser>> {
        if self.tools.root {
            SandboxUser::for_channel(self.uid_base, channel).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Plans a launch in `computer` after making sure its workspace is ready.
    pub(crate) async fn launch(
        &self,
        computer: &Computer,
        purpose: Purpose<'_>,
        env: &[(String, String)],
    ) -> Result<Launch> {
        if computer.isolation == Isolation::Bubblewrap
            && self.channel_isolation != Isolation::Bubblewrap
        {
            return Err(Error::Refused(
                "this computer needs bubblewrap, which does not work on this host".into(),
            ));
        }
        self.prepare(computer).await?;
        sandbox::plan(&self.tools, &self.limits, computer, purpose, env)
    }

    /// Gives the workspace to the sandbox user and writes the sandbox's
    /// identity files, once per workspace in this process.
    async fn prepare(&self, computer: &Computer) -> Result<()> {
        if !computer.is_confined() {
            return Ok(());
        }
        let user = computer.user.filter(|_| self.tools.root);
        let key = (computer.workspace.clone(), user.map(|u| u.uid));
        if self
            .prepared
            .lock()
            .map(|p| p.contains(&key))
            .unwrap_or(false)
        {
            return Ok(());
        }
        let computer = computer.clone();
        let own_uid = rustix::process::geteuid().as_raw();
        let own_gid = rustix::process::getegid().as_raw();
        tokio::task::spawn_blocking(move || prepare_workspace(&computer, user, (own_uid, own_gid)))
            .await
            .map_err(|e| Error::Internal(format!("preparing a workspace failed: {e}")))??;
        if let Ok(mut prepared) = self.prepared.lock() {
            prepared.insert(key);
        }
        Ok(())
    }

    async fn start_command(
        &self,
        computer: &Computer,
        spec: CommandSpec,
        keep_stdin: bool,
    ) -> Result<Arc<LocalCommand>> {
        spec.validate()?;
        let cwd = match &spec.cwd {
            Some(dir) => Some(files::resolve_dir(computer, dir).await?),
            None => None,
        };
        let launch = self
            .launch(
                computer,
                Purpose::Command {
                    command: &spec.command,
                    cwd: cwd.as_deref(),
                },
                &spec.env,
            )
            .await?;
        let Some((program, args)) = launch.argv.split_first() else {
            return Err(Error::Internal("an empty command line was planned".into()));
        };
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if spec.stdin.is_some() || keep_stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        install(&mut command, launch.setup);
        let mut child = tokio::process::Command::from(command)
            .spawn()
            .map_err(|e| {
                Error::Internal(format!(
                    "could not start {}: {e}",
                    program.to_string_lossy()
                ))
            })?;
        let pid = child
            .id()
            .ok_or_else(|| Error::Internal("a command ended before it had an id".into()))?;
        let started = Instant::now();
        let id = NEXT_COMMAND.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(id, pid, isolation = %computer.isolation, "command started");

        let shared = Arc::new(Shared {
            stdout: Mutex::new(OutputTail::new(spec.output_limit)),
            stderr: Mutex::new(OutputTail::new(spec.output_limit)),
            cursors: Mutex::new((0, 0)),
        });
        let mut stdin = child.stdin.take();
        if let Some(bytes) = spec.stdin.clone()
            && let Some(mut pipe) = stdin.take()
        {
            // A command that does not read its input must not block us;
            // dropping the pipe afterwards closes it.
            tokio::spawn(async move {
                let _ = pipe.write_all(&bytes).await;
            });
        }
        let readers = [
            child
                .stdout
                .take()
                .map(|out| tokio::spawn(read_into(out, shared.clone(), true))),
            child
                .stderr
                .take()
                .map(|err| tokio::spawn(read_into(err, shared.clone(), false))),
        ];
        let kill = Arc::new(Notify::new());
        let (done_tx, done_rx) = watch::channel(None);
        let supervisor = Supervisor {
            pid,
            child,
            readers,
            shared: shared.clone(),
            kill: kill.clone(),
            timeout: spec.timeout,
            started,
            isolation: computer.isolation,
        };
        tokio::spawn(supervisor.run(done_tx));
        Ok(Arc::new(LocalCommand {
            id,
            shared,
            stdin: tokio::sync::Mutex::new(stdin),
            kill,
            done: done_rx,
        }))
    }
}

#[async_trait]
impl Executor for LocalExecutor {
    async fn start(
        &self,
        computer: &Computer,
        spec: CommandSpec,
    ) -> Result<Arc<dyn RunningCommand>> {
        let keep_stdin = spec.stdin.is_none();
        Ok(self.start_command(computer, spec, keep_stdin).await?)
    }

    async fn run(&self, computer: &Computer, spec: CommandSpec) -> Result<CommandResult> {
        let running = self.start_command(computer, spec, false).await?;
        running.wait().await
    }
}

fn warn_process_mode(why: &str) {
    tracing::warn!(
        "{why}: channel commands run with PROCESS isolation, which is weaker than bubblewrap: \
         agents see the host's file system and processes with an unprivileged uid's permissions, \
         and a command that starts its own session can outlive its timeout. Install bubblewrap \
         for real isolation."
    );
}

/// Runs `true` the way a channel command would run (a scratch workspace, the
/// same namespaces, the same uid switch) to learn whether bubblewrap works.
async fn probe_bubblewrap(
    tools: &HostTools,
    user: Option<SandboxUser>,
) -> std::result::Result<(), String> {
    if tools.bwrap.is_none() {
        return Err("bwrap is not installed".into());
    }
    if user.is_some() && tools.setpriv.is_none() {
        return Err("setpriv (util-linux) is not installed".into());
    }
    let scratch = std::env::temp_dir().join(format!(
        "helm-probe-{}-{}",
        std::process::id(),
        NEXT_COMMAND.fetch_add(1, Ordering::Relaxed)
    ));
    let workspace = scratch.join("workspace");
    std::fs::create_dir_all(&workspace)
        .map_err(|e| format!("cannot make a scratch workspace: {e}"))?;
    let outcome = async {
        if let Some(u) = user {
            std::os::unix::fs::chown(&workspace, Some(u.uid), Some(u.gid))
                .map_err(|e| format!("cannot hand the scratch workspace to uid {}: {e}", u.uid))?;
        }
        let computer = Computer {
            channel: None,
            hostname: "probe".into(),
            workspace: workspace.clone(),
            sandbox_dir: None,
            isolation: Isolation::Bubblewrap,
            network: false,
            mounts: Vec::new(),
            user,
        };
        let launch = sandbox::plan(
            tools,
            &ResourceLimits::default(),
            &computer,
            Purpose::Command {
                command: "test -w /workspace && test ! -e /workspace/../root",
                cwd: None,
            },
            &[],
        )
        .map_err(|e| e.to_string())?;
        let Some((program, args)) = launch.argv.split_first() else {
            return Err("empty plan".to_string());
        };
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        install(&mut command, launch.setup);
        let run = tokio::process::Command::from(command)
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .map_err(|_| "it did not answer within 10 s".to_string())?
            .map_err(|e| format!("it did not start: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "it failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }
    .await;
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

/// Hands the workspace to the sandbox user (first use, or after the uid
/// scheme changed) and writes the identity files the sandbox shows.
fn prepare_workspace(
    computer: &Computer,
    user: Option<SandboxUser>,
    own: (u32, u32),
) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let ws = &computer.workspace;
    let meta = std::fs::metadata(ws).map_err(|e| Error::io("opening the workspace", ws, e))?;
    if let Some(user) = user {
        if meta.uid() != user.uid || meta.gid() != user.gid {
            let dir = rustix::fs::open(
                ws,
                rustix::fs::OFlags::RDONLY
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(|e| Error::io("opening the workspace", ws, e.into()))?;
            files::walk::chown_tree(std::os::fd::AsFd::as_fd(&dir), user.uid, user.gid)
                .map_err(|e| Error::io("handing the workspace to its sandbox user", ws, e))?;
        }
        if meta.permissions().mode() & 0o777 != 0o700 {
            std::fs::set_permissions(ws, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| Error::io("closing the workspace to other users", ws, e))?;
        }
    }
    if computer.isolation == Isolation::Bubblewrap
        && let Some(dir) = &computer.sandbox_dir
    {
        let (uid, gid) = user.map_or(own, |u| (u.uid, u.gid));
        let (passwd, group) = sandbox::identity_files(uid, gid);
        std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
        for (name, text) in [("passwd", passwd), ("group", group)] {
            let path = dir.join(name);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(&path, text).map_err(|e| Error::io("writing", &path, e))?;
            }
        }
    }
    Ok(())
}

/// The output a command has written, shared by its readers, its supervisor
/// and its handle.
struct Shared {
    stdout: Mutex<OutputTail>,
    stderr: Mutex<OutputTail>,
    /// Stream offsets up to which `poll` has reported.
    cursors: Mutex<(u64, u64)>,
}

impl Shared {
    fn tails(&self) -> (OutputTail, OutputTail) {
        let out = self
            .stdout
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        let err = self
            .stderr
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        (out, err)
    }
}

async fn read_into(mut pipe: impl AsyncRead + Unpin, shared: Arc<Shared>, stdout: bool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let tail = if stdout {
                    &shared.stdout
                } else {
                    &shared.stderr
                };
                if let Ok(mut tail) = tail.lock() {
                    tail.push(&buf[..n]);
                }
            }
        }
    }
}

/// Watches one command from start to end: its timeout, kill requests, the
/// clean-up of what it started, and its result.
struct Supervisor {
    pid: u32,
    child: tokio::process::Child,
    readers: [Option<tokio::task::JoinHandle<()>>; 2],
    shared: Arc<Shared>,
    kill: Arc<Notify>,
    timeout: Option<Duration>,
    started: Instant,
    isolation: Isolation,
}

impl Supervisor {
    async fn run(mut self, done: watch::Sender<Option<CommandResult>>) {
        let pid = self.pid;
        // If this task is dropped unfinished (the runtime shutting down), the
        // command must still not outlive it.
        let mut guard = KillOnDrop(Some(pid));
        let timeout = self.timeout;
        // Wait for the exit without reaping, so the process group id cannot
        // be reused before the group has been killed.
        let mut exited =
            tokio::task::spawn_blocking(move || process_tree::wait_exited_keep_zombie(pid));
        let deadline = async move {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let (mut timed_out, mut killed, mut ended) = (false, false, false);
        let kill = self.kill.clone();
        tokio::select! {
            _ = &mut exited => ended = true,
            _ = deadline => timed_out = true,
            _ = kill.notified() => killed = true,
        }
        if ended {
            // It is gone (not yet reaped, so its group id is still its
            // own): nothing it started may outlive it.
            kill_tree(pid);
        } else {
            if self.isolation == Isolation::Bubblewrap {
                let _ = tokio::task::spawn_blocking(move || kill_tree_settled(pid)).await;
            } else {
                kill_tree(pid);
            }
            let _ = exited.await;
        }
        // A sandbox's init may still be clearing out its namespace, and
        // killed stragglers take a moment to die.
        if !process_tree::session_emptied(pid, DRAIN_GRACE, false).await {
            tracing::warn!(pid, "processes of a finished command are still alive");
        }
        let status = self.child.wait().await;
        for reader in self.readers.iter_mut().flatten() {
            if tokio::time::timeout(DRAIN_GRACE, &mut *reader)
                .await
                .is_err()
            {
                reader.abort();
            }
        }
        let (exit_code, signal) = match &status {
            Ok(s) => (s.code(), s.signal()),
            Err(_) => (None, None),
        };
        if timed_out || killed {
            tracing::debug!(pid, timed_out, killed, "command ended early");
        }
        let (out, err) = self.shared.tails();
        let result = CommandResult {
            exit_code: if timed_out || killed { None } else { exit_code },
            signal: if timed_out || killed { Some(9) } else { signal },
            stdout: tail_text(&out.bytes(), out.truncated()),
            stderr: tail_text(&err.bytes(), err.truncated()),
            stdout_bytes: out.total(),
            stderr_bytes: err.total(),
            truncated: out.truncated() || err.truncated(),
            timed_out,
            killed: killed && !timed_out,
            duration_ms: self.started.elapsed().as_millis() as u64,
            isolation: self.isolation,
        };
        guard.0 = None;
        let _ = done.send(Some(result));
    }
}

/// Kills a process tree when dropped while still armed.
struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            kill_tree(pid);
        }
    }
}

/// A command started by [`LocalExecutor`].
struct LocalCommand {
    id: u64,
    shared: Arc<Shared>,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    kill: Arc<Notify>,
    done: watch::Receiver<Option<CommandResult>>,
}

impl Drop for LocalCommand {
    fn drop(&mut self) {
        // The last handle is gone: nobody can stop it any more, so stop it now.
        if self.done.borrow().is_none() {
            self.kill.notify_one();
        }
    }
}

#[async_trait]
impl RunningCommand for LocalCommand {
    fn id(&self) -> u64 {
        self.id
    }

    fn poll(&self) -> CommandPoll {
        // Read the result first: output seen after it is complete.
        let result = self.done.borrow().clone();
        let (out, err) = self.shared.tails();
        let mut cursors = self
            .shared
            .cursors
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let (new_out, next_out, missed_out) = out.since(cursors.0);
        let (new_err, next_err, missed_err) = err.since(cursors.1);
        *cursors = (next_out, next_err);
        CommandPoll {
            running: result.is_none(),
            stdout: tail_text(&new_out, missed_out > 0),
            stderr: tail_text(&new_err, missed_err > 0),
            missed_bytes: missed_out + missed_err,
            result,
        }
    }

    async fn write_stdin(&self, bytes: &[u8]) -> Result<()> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(Error::Refused(format!(
                "command {}'s stdin is closed",
                self.id
            )));
        };
        let written = async {
            pipe.write_all(bytes).await?;
            pipe.flush().await
        };
        written.await.map_err(|e| {
            Error::Refused(format!("command {} is not reading its stdin: {e}", self.id))
        })
    }

    async fn close_stdin(&self) -> Result<()> {
        self.stdin.lock().await.take();
        Ok(())
    }

    async fn kill(&self) -> Result<CommandResult> {
        self.kill.notify_one();
        self.wait().await
    }

    async fn wait(&self) -> Result<CommandResult> {
        let mut done = self.done.clone();
        let result = done
            .wait_for(Option::is_some)
            .await
            .map_err(|_| Error::Internal(format!("command {} lost its supervisor", self.id)))?;
        result
            .clone()
            .ok_or_else(|| Error::Internal("a finished command has no result".into()))
    }
}
