//! How a command or a terminal is launched in each isolation mode: the host
//! tools Helm relies on, the bubblewrap arguments, the scrubbed environment,
//! and the one-time probe that decides whether bubblewrap works here.
//!
//! Under bubblewrap, `bwrap` itself starts as the server's user (root on a
//! server) so that it can reach the workspace wherever the data root lives,
//! and the first thing inside the sandbox is `setpriv`, which drops to the
//! channel's own uid, clears supplementary groups, capabilities and the
//! bounding set, and sets no-new-privileges before it execs the shell. The
//! agent's processes therefore never hold root's uid or capabilities, inside
//! or outside the sandbox.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::computer::{AGENT_ROOT, Computer, Isolation, ResourceLimits};
use super::process_tree::ChildSetup;
use crate::error::{Error, Result};

/// The name the agent's account has inside a sandbox.
pub(crate) const AGENT_USER: &str = "agent";

const SAFE_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The host programs Helm launches sandboxes with, found once.
#[derive(Debug, Clone)]
pub(crate) struct HostTools {
    pub(crate) bwrap: Option<PathBuf>,
    pub(crate) setpriv: Option<PathBuf>,
    pub(crate) prlimit: Option<PathBuf>,
    pub(crate) unshare: Option<PathBuf>,
    /// bash, or sh where there is none.
    pub(crate) shell: PathBuf,
    /// Whether the shell is bash (login shells read `/etc/profile`).
    pub(crate) bash: bool,
    /// Whether the server runs as root (and so can switch uids).
    pub(crate) root: bool,
}

impl HostTools {
    /// Looks the tools up in the standard system directories (not the
    /// server's `PATH`, which says nothing about what exists in a sandbox).
    pub(crate) fn discover() -> Self {
        let bash = find("bash");
        HostTools {
            bwrap: find("bwrap"),
            setpriv: find("setpriv"),
            prlimit: find("prlimit"),
            unshare: find("unshare"),
            bash: bash.is_some(),
            shell: bash.unwrap_or_else(|| PathBuf::from("/bin/sh")),
            root: rustix::process::geteuid().is_root(),
        }
    }

    fn setpriv(&self) -> Result<&Path> {
        self.setpriv.as_deref().ok_or_else(|| {
            Error::Internal(
                "setpriv (util-linux) is needed to run channel commands as an unprivileged user; \
                 install util-linux"
                    .into(),
            )
        })
    }

    fn bwrap(&self) -> Result<&Path> {
        self.bwrap.as_deref().ok_or_else(|| {
            Error::Internal(
                "bubblewrap (bwrap) is not installed; install the bubblewrap package".into(),
            )
        })
    }

    /// `bash -lc CMD` or `sh -c CMD`.
    fn shell_command(&self, command: &str) -> Vec<OsString> {
        let flag = if self.bash { "-lc" } else { "-c" };
        vec![self.shell.clone().into(), flag.into(), command.into()]
    }

    /// An interactive login shell.
    fn login_shell(&self) -> Vec<OsString> {
        if self.bash {
            vec![self.shell.clone().into(), "-l".into()]
        } else {
            vec![self.shell.clone().into(), "-i".into()]
        }
    }
}

fn find(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.is_file())
}

/// What is launched.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Purpose<'a> {
    /// A shell command; `cwd` is relative to the workspace (already checked).
    Command {
        command: &'a str,
        cwd: Option<&'a Path>,
    },
    /// An interactive login shell on a terminal.
    Terminal,
}

/// A launch, ready for `std::process::Command` or portable-pty.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// argv, program first.
    pub(crate) argv: Vec<OsString>,
    /// The directory to start in (entered by the server before any uid
    /// switch, so its ancestors need not be open to the sandbox uid).
    pub(crate) cwd: PathBuf,
    /// The complete environment.
    pub(crate) env: Vec<(String, String)>,
    /// Work between fork and exec (commands); terminals carry the same as
    /// `prlimit`/`unshare`/`setpriv` prefixes in `argv` instead.
    pub(crate) setup: ChildSetup,
}

/// Plans a launch of `purpose` in `computer`.
pub(crate) fn plan(
    tools: &HostTools,
    limits: &ResourceLimits,
    computer: &Computer,
    purpose: Purpose<'_>,
    extra_env: &[(String, String)],
) -> Result<Launch> {
    let terminal = matches!(purpose, Purpose::Terminal);
    let mut env = base_env(computer, terminal);
    env.extend(extra_env.iter().cloned());
    match computer.isolation {
        Isolation::Host => {
            let (argv, cwd) = match purpose {
                Purpose::Command { command, cwd } => (
                    tools.shell_command(command),
                    cwd.map_or_else(
                        || computer.workspace.clone(),
                        |c| computer.workspace.join(c),
                    ),
                ),
                Purpose::Terminal => (tools.login_shell(), computer.workspace.clone()),
            };
            Ok(Launch {
                argv,
                cwd,
                env,
                setup: ChildSetup::default(),
            })
        }
        Isolation::Process => plan_process(tools, limits, computer, purpose, env),
        Isolation::Bubblewrap => plan_bubblewrap(tools, limits, computer, purpose, env),
        // Its commands and terminals run on its own host, through the
        // remote computer's ports; nothing of it launches here.
        Isolation::Remote => Err(Error::Refused(
            "this channel's computer is on another host; it runs its commands and \
             terminals there"
                .into(),
        )),
    }
}

fn plan_process(
    tools: &HostTools,
    limits: &ResourceLimits,
    computer: &Computer,
    purpose: Purpose<'_>,
    env: Vec<(String, String)>,
) -> Result<Launch> {
    let drop_to = computer.user.filter(|_| tools.root);
    let mut setup = ChildSetup::with_limits(
        limits,
        !matches!(purpose, Purpose::Terminal),
        drop_to.is_some(),
    );
    setup.no_new_privs = true;
    // Without root there is no way to leave the host's network here.
    setup.new_netns = !computer.network && tools.root;
    setup.drop_to = drop_to;
    // As root, a command gets a PID namespace of its own (util-linux
    // `unshare --pid --fork --kill-child`): when its first process dies
    // (killed, timed out, or because the server died and the parent-death
    // signal took it), the kernel kills everything else in it, double forks
    // and new sessions included. `setpriv` then drops the uid inside, and
    // restores the parent-death signal the uid change clears.
    let pid_namespace = match (tools.root, &tools.unshare, drop_to) {
        (true, Some(unshare), Some(user)) if tools.setpriv.is_some() => {
            let mut argv: Vec<OsString> = vec![
                unshare.clone().into(),
                "--pid".into(),
                "--fork".into(),
                "--kill-child=SIGKILL".into(),
                "--".into(),
            ];
            let mut setpriv = setpriv_prefix(tools, Some((user.uid, user.gid)))?;
            setpriv.insert(setpriv.len() - 1, "--pdeathsig=keep".into());
            argv.extend(setpriv);
            Some(argv)
        }
        _ => None,
    };
    match purpose {
        Purpose::Command { command, cwd } => {
            let mut argv = Vec::new();
            if let Some(prefix) = &pid_namespace {
                argv.extend(prefix.iter().cloned());
                // The uid is dropped by setpriv inside the namespace.
                setup.drop_to = None;
            }
            argv.extend(tools.shell_command(command));
            Ok(Launch {
                argv,
                cwd: cwd.map_or_else(
                    || computer.workspace.clone(),
                    |c| computer.workspace.join(c),
                ),
                env,
                setup,
            })
        }
        Purpose::Terminal => {
            let mut argv = prlimit_prefix(tools, &setup);
            let unshare = tools.unshare.as_ref();
            if setup.new_netns || pid_namespace.is_some() {
                let unshare = unshare.ok_or_else(|| {
                    Error::Internal(
                        "unshare (util-linux) is needed to keep a terminal off the network".into(),
                    )
                })?;
                argv.push(unshare.clone().into());
                if setup.new_netns {
                    argv.push("--net".into());
                }
                if pid_namespace.is_some() {
                    argv.extend([
                        "--pid".into(),
                        "--fork".into(),
                        "--kill-child=SIGKILL".into(),
                    ]);
                }
                argv.push("--".into());
            }
            let mut setpriv = setpriv_prefix(tools, drop_to.map(|u| (u.uid, u.gid)))?;
            if !setpriv.is_empty() {
                setpriv.insert(setpriv.len() - 1, "--pdeathsig=keep".into());
            }
            argv.extend(setpriv);
            argv.extend(tools.login_shell());
            Ok(Launch {
                argv,
                cwd: computer.workspace.clone(),
                env,
                setup: ChildSetup::default(),
            })
        }
    }
}

fn plan_bubblewrap(
    tools: &HostTools,
    limits: &ResourceLimits,
    computer: &Computer,
    purpose: Purpose<'_>,
    env: Vec<(String, String)>,
) -> Result<Launch> {
    let bwrap = tools.bwrap()?;
    let drop_to = computer.user.filter(|_| tools.root);
    let terminal = matches!(purpose, Purpose::Terminal);
    let setup = ChildSetup::with_limits(limits, !terminal, drop_to.is_some());

    // bwrap resolves its sources from its working directory; starting in the
    // workspace's parent keeps host paths out of its command line, which
    // every process in the sandbox can read as /proc/1/cmdline.
    let (cwd, ws_name) = match (computer.workspace.parent(), computer.workspace.file_name()) {
        (Some(parent), Some(name)) => (parent.to_path_buf(), PathBuf::from(name)),
        _ => {
            return Err(Error::invalid(
                "workspace",
                format!("{} cannot be a workspace", computer.workspace.display()),
            ));
        }
    };

    let mut argv: Vec<OsString> = Vec::new();
    if terminal {
        argv.extend(prlimit_prefix(tools, &setup));
    }
    argv.push(bwrap.into());
    let mut a = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
    a(&[
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]);
    if !tools.root {
        // Unprivileged bwrap needs a user namespace to do anything.
        a(&["--unshare-user"]);
    }
    if !computer.network {
        a(&["--unshare-net"]);
    }
    // No `--new-session`: a command has no controlling terminal to push
    // input into (TIOCSTI), since Helm starts it in a session of its own,
    // and keeping every process of the sandbox in that one session is what
    // lets Helm see when the last of them is gone. A terminal keeps its
    // session too: the shell needs the PTY as its controlling terminal.
    let hostname = if computer.hostname.is_empty() {
        "helm"
    } else {
        &computer.hostname
    };
    a(&["--hostname", hostname]);
    a(&["--ro-bind", "/usr", "/usr"]);
    for dir in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    argv.extend(["--symlink".into(), target.into_os_string(), dir.into()]);
                }
            }
            Ok(m) if m.is_dir() => argv.extend(["--ro-bind".into(), dir.into(), dir.into()]),
            _ => {}
        }
    }
    let mut a = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
    a(&["--ro-bind", "/etc", "/etc"]);
    if let Some(dir) = &computer.sandbox_dir {
        let rel = dir
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| dir.clone());
        for file in ["passwd", "group"] {
            argv.extend([
                "--ro-bind".into(),
                rel.join(file).into_os_string(),
                format!("/etc/{file}").into(),
            ]);
        }
    }
    if computer.network {
        // /etc/resolv.conf often points into /run, which is not mounted.
        if let Some(dir) = resolver_dir() {
            argv.extend(["--ro-bind-try".into(), dir.clone().into(), dir.into()]);
        }
    }
    let mut a = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
    a(&["--proc", "/proc", "--dev", "/dev"]);
    a(&[
        "--perms", "1777", "--tmpfs", "/dev/shm", "--perms", "1777", "--tmpfs", "/tmp",
    ]);
    argv.extend(["--bind".into(), ws_name.into_os_string(), AGENT_ROOT.into()]);
    for mount in &computer.mounts {
        check_mount_point(&mount.at)?;
        // bwrap would create the mount point's parents as root with mode
        // 0700, which the sandbox's own uid could not pass through.
        let mut parents: Vec<&Path> = Path::new(&mount.at)
            .ancestors()
            .skip(1)
            .filter(|p| *p != Path::new("/"))
            .collect();
        parents.reverse();
        for parent in parents {
            argv.extend([
                "--perms".into(),
                "0755".into(),
                "--dir".into(),
                parent.as_os_str().to_os_string(),
            ]);
        }
        argv.extend([
            "--ro-bind".into(),
            (&mount.host_path).into(),
            (&mount.at).into(),
        ]);
    }
    let chdir = match purpose {
        Purpose::Command { cwd: Some(dir), .. } => Path::new(AGENT_ROOT).join(dir),
        _ => PathBuf::from(AGENT_ROOT),
    };
    argv.extend(["--chdir".into(), chdir.into_os_string(), "--".into()]);
    argv.extend(setpriv_prefix(tools, drop_to.map(|u| (u.uid, u.gid)))?);
    match purpose {
        Purpose::Command { command, .. } => argv.extend(tools.shell_command(command)),
        Purpose::Terminal => argv.extend(tools.login_shell()),
    }
    Ok(Launch {
        argv,
        cwd,
        env,
        setup: if terminal {
            ChildSetup::default()
        } else {
            setup
        },
    })
}

/// `prlimit --x=N … --` when there is anything to limit and prlimit exists.
fn prlimit_prefix(tools: &HostTools, setup: &ChildSetup) -> Vec<OsString> {
    let args = setup.prlimit_args();
    match &tools.prlimit {
        Some(prlimit) if !args.is_empty() => {
            let mut argv: Vec<OsString> = vec![prlimit.clone().into()];
            argv.extend(args.into_iter().map(OsString::from));
            argv.push("--".into());
            argv
        }
        _ => Vec::new(),
    }
}

/// `setpriv` dropping to `uid`/`gid` with nothing privileged left, or
/// nothing when there is no uid to drop to.
fn setpriv_prefix(tools: &HostTools, user: Option<(u32, u32)>) -> Result<Vec<OsString>> {
    let Some((uid, gid)) = user else {
        return Ok(Vec::new());
    };
    Ok(vec![
        tools.setpriv()?.into(),
        format!("--reuid={uid}").into(),
        format!("--regid={gid}").into(),
        "--clear-groups".into(),
        "--inh-caps=-all".into(),
        "--bounding-set=-all".into(),
        "--no-new-privs".into(),
        "--".into(),
    ])
}

/// The environment commands start with: nothing of the server's, only
/// `PATH`, `HOME`, `LANG`, `TERM` and `USER` (then the caller's additions).
fn base_env(computer: &Computer, terminal: bool) -> Vec<(String, String)> {
    let term = if terminal { "xterm-256color" } else { "dumb" };
    let (path, home, user) = match computer.isolation {
        // A remote computer never launches here (`plan` refuses it); its
        // commands would see what a bubblewrap one sees.
        Isolation::Bubblewrap | Isolation::Remote => (
            SAFE_PATH.to_string(),
            AGENT_ROOT.to_string(),
            AGENT_USER.to_string(),
        ),
        Isolation::Process => (
            SAFE_PATH.to_string(),
            computer.workspace.display().to_string(),
            AGENT_USER.to_string(),
        ),
        Isolation::Host => (
            std::env::var("PATH").unwrap_or_else(|_| SAFE_PATH.to_string()),
            std::env::var("HOME").unwrap_or_else(|_| computer.workspace.display().to_string()),
            std::env::var("USER").unwrap_or_else(|_| "root".to_string()),
        ),
    };
    vec![
        ("PATH".into(), path),
        ("HOME".into(), home),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), term.into()),
        ("USER".into(), user),
    ]
}

/// The directory `/etc/resolv.conf` points into, when it is a link out of `/etc`.
fn resolver_dir() -> Option<String> {
    let target = std::fs::canonicalize("/etc/resolv.conf").ok()?;
    if target.starts_with("/etc") || target.starts_with("/usr") {
        return None;
    }
    Some(target.parent()?.to_str()?.to_string())
}

/// A read-only mount may not cover the workspace or what the sandbox itself
/// provides.
fn check_mount_point(at: &str) -> Result<()> {
    let path = Path::new(at);
    let clean = path.is_absolute()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir | std::path::Component::Normal(_)
            )
        });
    let reserved = [
        "/",
        "/workspace",
        "/proc",
        "/dev",
        "/tmp",
        "/usr",
        "/etc",
        "/bin",
        "/lib",
    ]
    .iter()
    .any(|r| path == Path::new(r) || (*r != "/" && path.starts_with(r)));
    if !clean || reserved {
        return Err(Error::invalid(
            "mount point",
            format!(
                "{at:?} must be an absolute path outside /workspace and the system directories"
            ),
        ));
    }
    Ok(())
}

/// The `passwd` and `group` files a sandbox sees: the agent under its uid.
pub(crate) fn identity_files(uid: u32, gid: u32) -> (String, String) {
    (
        format!(
            "root:x:0:0:root:/root:/usr/sbin/nologin\n\
             {AGENT_USER}:x:{uid}:{gid}:Channel agent:{AGENT_ROOT}:/bin/bash\n\
             nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        ),
        format!("root:x:0:\n{AGENT_USER}:x:{gid}:\nnogroup:x:65534:\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CapabilityPolicy;

    fn tools(root: bool) -> HostTools {
        HostTools {
            bwrap: Some("/usr/bin/bwrap".into()),
            setpriv: Some("/usr/bin/setpriv".into()),
            prlimit: Some("/usr/bin/prlimit".into()),
            unshare: Some("/usr/bin/unshare".into()),
            shell: "/bin/bash".into(),
            bash: true,
            root,
        }
    }

    fn computer() -> Computer {
        let world = crate::world::DataRoot::new("/srv/helm").world(crate::model::ChannelId(7));
        Computer::for_channel(
            crate::model::ChannelId(7),
            "launch",
            &world,
            Isolation::Bubblewrap,
            &CapabilityPolicy::default(),
            Some(crate::exec::SandboxUser {
                uid: 5007,
                gid: 5007,
            }),
        )
    }

    fn strings(argv: &[OsString]) -> Vec<String> {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn bubblewrap_drops_to_the_channel_uid_and_hides_host_paths() -> Result<()> {
        let launch = plan(
            &tools(true),
            &ResourceLimits::default(),
            &computer(),
            Purpose::Command {
                command: "ls",
                cwd: None,
            },
            &[],
        )?;
        let argv = strings(&launch.argv);
        let joined = argv.join(" ");
        assert!(joined.contains("--unshare-net"), "{joined}");
        assert!(joined.contains("--bind workspace /workspace"), "{joined}");
        assert!(
            joined.contains("--ro-bind state/sandbox/passwd /etc/passwd"),
            "{joined}"
        );
        assert!(joined.contains("--reuid=5007"), "{joined}");
        assert!(!joined.contains("/srv/helm"), "{joined}");
        assert_eq!(launch.cwd, PathBuf::from("/srv/helm/channels/7"));
        assert!(argv.ends_with(&["/bin/bash".into(), "-lc".into(), "ls".into()]));
        assert!(launch.env.contains(&("HOME".into(), "/workspace".into())));
        Ok(())
    }

    #[test]
    fn terminals_keep_their_session_and_carry_limits_as_prefixes() -> Result<()> {
        let launch = plan(
            &tools(true),
            &ResourceLimits::default(),
            &computer(),
            Purpose::Terminal,
            &[],
        )?;
        let argv = strings(&launch.argv);
        assert_eq!(argv[0], "/usr/bin/prlimit");
        assert!(!argv.iter().any(|a| a.starts_with("--cpu")));
        assert!(argv.ends_with(&["/bin/bash".into(), "-l".into()]));
        Ok(())
    }

    #[test]
    fn a_mount_points_parents_are_open_to_the_sandbox_uid() -> Result<()> {
        let mut c = computer();
        c.mounts.push(crate::model::ReadOnlyMount {
            host_path: "/srv/tools".into(),
            at: "/opt/tools/bin".into(),
        });
        let launch = plan(
            &tools(true),
            &ResourceLimits::default(),
            &c,
            Purpose::Command {
                command: "ls",
                cwd: None,
            },
            &[],
        )?;
        let joined = strings(&launch.argv).join(" ");
        assert!(
            joined.contains(
                "--perms 0755 --dir /opt --perms 0755 --dir /opt/tools --ro-bind /srv/tools /opt/tools/bin"
            ),
            "{joined}"
        );
        Ok(())
    }

    #[test]
    fn mounts_may_not_cover_the_workspace() {
        assert!(check_mount_point("/data/ref").is_ok());
        for bad in ["/workspace/x", "/", "relative", "/etc/x", "/data/../etc"] {
            assert!(check_mount_point(bad).is_err(), "{bad}");
        }
    }
}
