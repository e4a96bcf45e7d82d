//! [`LocalExecutor`]: the executor port on this host, in the isolation mode
//! the deployment chose (bubblewrap, process, or host for Skipper).

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::AsyncWriteExt;
use tokio::sync::{Notify, watch};

use super::command::{CommandResult, CommandSpec};
use super::computer::{
    Computer, ComputerOptions, Isolation, IsolationChoice, ResourceLimits, SandboxUser,
};
use super::files;
use super::ledger::Ledger;
use super::output::OutputTail;
use super::port::{Executor, RunningCommand};
use super::process_tree::install;
use super::running::{LocalCommand, Shared, Supervisor, read_into};
use super::sandbox::{self, HostTools, Launch, Purpose};
use super::stdio::{STDIO_STDERR_TAIL, StdioHandle, StdioProcess, StdioSpec};
use crate::error::{Error, Result};

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
    /// Where the commands and terminals it starts are recorded, for the
    /// sweep of what a lost process left (none: not recorded).
    ledger: Option<Ledger>,
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
                warn_process_mode("process isolation was chosen", tools.root);
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
                    warn_process_mode(
                        &format!("bubblewrap does not work here ({reason})"),
                        tools.root,
                    );
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
            ledger: None,
        })
    }

    /// Records the commands and terminals it starts in the process ledger
    /// at `dir` (a data root's `state/procs`), so that
    /// [`kill_leftovers`](Self::kill_leftovers) can later end what this
    /// process leaves behind if it dies.
    pub fn recording_in(mut self, dir: PathBuf) -> Result<Self> {
        self.ledger = Some(Ledger::open(dir)?);
        Ok(self)
    }

    /// The process ledger, when it records.
    pub(crate) fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// The isolation channel computers get on this host.
    pub fn channel_isolation(&self) -> Isolation {
        self.channel_isolation
    }

    /// Kills what an earlier process on the same data root started and
    /// lost: the commands and terminals in its process ledger whose owner
    /// (a server, `1helm exec`) is gone, identified by pid *and* start time,
    /// so that another data root's or another server's processes, and a
    /// process that merely reuses a pid, are never touched (see
    /// `exec::ledger`). For a server at start. Returns how many processes
    /// were killed.
    pub async fn kill_leftovers(&self) -> usize {
        let Some(ledger) = &self.ledger else {
            return 0;
        };
        let swept = ledger.sweep().await;
        if swept.killed > 0 {
            tracing::warn!(
                killed = swept.killed,
                commands = swept.cleared,
                "killed what an earlier server left running"
            );
        }
        swept.killed
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
        let stdin = if spec.stdin.is_some() || keep_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let program = launch.argv.first().cloned().unwrap_or_default();
        let command = planned_command(launch, stdin, Stdio::piped())?;
        let mut child = super::process_tree::spawn(tokio::process::Command::from(command))
            .await
            .map_err(|e| {
                Error::Internal(format!(
                    "could not start {}: {e}",
                    program.to_string_lossy()
                ))
            })?;
        let pid = child
            .id()
            .ok_or_else(|| Error::Internal("a command ended before it had an id".into()))?;
        let record = self.ledger.as_ref().map(|l| l.record(pid));
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
            record,
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
    fn channel_isolation(&self) -> Isolation {
        LocalExecutor::channel_isolation(self)
    }

    fn sandbox_user(&self, channel: crate::model::ChannelId) -> Result<Option<SandboxUser>> {
        LocalExecutor::sandbox_user(self, channel)
    }

    async fn kill_leftovers(&self) -> usize {
        LocalExecutor::kill_leftovers(self).await
    }

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

    async fn spawn_stdio(&self, computer: &Computer, spec: StdioSpec) -> Result<StdioProcess> {
        let line = spec.command_line();
        // The same checks a command gets (names, NUL bytes).
        CommandSpec {
            env: spec.env.clone(),
            ..CommandSpec::new(line.clone())
        }
        .validate()?;
        let launch = self
            .launch(
                computer,
                Purpose::Command {
                    command: &line,
                    cwd: None,
                },
                &spec.env,
            )
            .await?;
        let command = planned_command(launch, Stdio::piped(), Stdio::piped())?;
        let mut child = tokio::process::Command::from(command)
            .spawn()
            .map_err(|e| Error::Internal(format!("could not start {}: {e}", spec.program)))?;
        let pid = child
            .id()
            .ok_or_else(|| Error::Internal("a program ended before it had an id".into()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Error::Internal(
                "a program started without its pipes".into(),
            ));
        };
        let tail = Arc::new(Mutex::new(OutputTail::new(STDIO_STDERR_TAIL)));
        let reading = tail.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut stderr = stderr;
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = reading.lock() {
                    t.push(&buf[..n]);
                }
            }
        });
        let (exited_tx, exited) = watch::channel(false);
        tokio::spawn(async move {
            // As for commands: wait without reaping, end what it started,
            // then reap, so the group id is not reused meanwhile.
            let _ = tokio::task::spawn_blocking(move || {
                super::process_tree::wait_exited_keep_zombie(pid)
            })
            .await;
            super::process_tree::kill_group(pid);
            let _ = child.wait().await;
            let _ = exited_tx.send(true);
        });
        tracing::debug!(pid, isolation = %computer.isolation, program = %spec.program, "stdio program started");
        Ok(StdioProcess {
            stdout: Box::new(stdout),
            stdin: Box::new(stdin),
            handle: StdioHandle {
                pid,
                stderr: tail,
                exited,
            },
        })
    }
}

/// Turns a planned launch into a process builder: the planned argv, a clean
/// environment of exactly the planned variables, the planned directory, the
/// fork-to-exec setup, and stderr piped (every caller keeps its tail).
fn planned_command(launch: Launch, stdin: Stdio, stdout: Stdio) -> Result<std::process::Command> {
    let Some((program, args)) = launch.argv.split_first() else {
        return Err(Error::Internal("an empty command line was planned".into()));
    };
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&launch.cwd)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped());
    install(&mut command, launch.setup);
    Ok(command)
}

fn warn_process_mode(why: &str, root: bool) {
    if root {
        tracing::warn!(
            "{why}: channel commands run with PROCESS isolation, which is weaker than \
             bubblewrap: each channel's uid keeps it out of the others' files and the data root, \
             but agents see the host's file system and processes as an unprivileged user would, \
             share /tmp, and a command that starts a session of its own can outlive its timeout. \
             Install bubblewrap for real isolation."
        );
    } else {
        tracing::warn!(
            "{why}: channel commands run with PROCESS isolation and the server is not root, so \
             they run as the server's own user and can read everything it can (only the file \
             tools are confined). Install bubblewrap for real isolation."
        );
    }
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
        let command =
            planned_command(launch, Stdio::null(), Stdio::null()).map_err(|e| e.to_string())?;
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
