//! What a command runs on: a [`Computer`] (a directory, how it is isolated,
//! whether it may reach the network), and the deployment policy that picks
//! the isolation ([`ComputerOptions`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{CapabilityPolicy, ChannelId, ReadOnlyMount};
use crate::world::ChannelWorld;

/// Where a channel's workspace appears to its agent, in every isolation mode
/// that confines it.
pub const AGENT_ROOT: &str = "/workspace";

/// The first sandbox uid: channel `n` runs as `base + n` when the server runs
/// as root. High enough to clash with no ordinary account.
pub const DEFAULT_SANDBOX_UID_BASE: u32 = 1_900_000_000;

/// How a computer keeps its commands in their world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// bubblewrap: own mount, PID, IPC and UTS namespaces (and network when
    /// the policy says so); only `/workspace` of the host is writable.
    Bubblewrap,
    /// An ordinary process confined by its working directory, a scrubbed
    /// environment, resource limits and an unprivileged uid. Weaker: it sees
    /// the host's file system and processes with that uid's permissions.
    Process,
    /// No sandbox: Skipper's computer, on the host with the server's authority.
    Host,
    /// On another host, behind a computer server Helm reaches over HTTP
    /// (`computer.at`): that host keeps the commands in their world; Helm
    /// still refuses every path outside `/workspace`.
    Remote,
}

impl Isolation {
    /// Its name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Bubblewrap => "bubblewrap",
            Isolation::Process => "process",
            Isolation::Host => "host",
            Isolation::Remote => "remote",
        }
    }
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The deployment's choice of isolation for channel computers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IsolationChoice {
    /// bubblewrap if it works here (probed once), else `process` with a warning.
    #[default]
    Auto,
    /// bubblewrap, or an error if it does not work here.
    Bubblewrap,
    /// The weaker process isolation, even where bubblewrap works.
    Process,
}

impl FromStr for IsolationChoice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(IsolationChoice::Auto),
            "bubblewrap" | "bwrap" => Ok(IsolationChoice::Bubblewrap),
            "process" => Ok(IsolationChoice::Process),
            _ => Err(Error::invalid(
                "isolation",
                format!("{s:?}: choose auto, bubblewrap or process"),
            )),
        }
    }
}

impl fmt::Display for IsolationChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IsolationChoice::Auto => "auto",
            IsolationChoice::Bubblewrap => "bubblewrap",
            IsolationChoice::Process => "process",
        })
    }
}

/// Per-process resource limits (`setrlimit`) for commands and terminals in
/// channel computers. `None` leaves the server's own limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResourceLimits {
    /// CPU seconds per process (commands only: a terminal may idle for days).
    pub cpu_seconds: Option<u64>,
    /// The largest file a process may write.
    pub file_size_bytes: Option<u64>,
    /// Processes and threads of the sandbox uid (only applied when the server
    /// runs as root, because without a uid of its own the count would include
    /// the server's).
    pub processes: Option<u64>,
    /// Open files per process.
    pub open_files: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            cpu_seconds: Some(3600),
            file_size_bytes: Some(16 << 30),
            processes: Some(1024),
            open_files: Some(8192),
        }
    }
}

/// How many terminals may be open, and how much of their output is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TerminalLimits {
    /// Open terminals per channel.
    pub per_channel: usize,
    /// Open terminals in the whole workspace.
    pub total: usize,
    /// Open terminals one member (not the Captain or an admin) may hold.
    pub per_person: usize,
    /// Of `total`, how many only the Captain and admins may take, so that
    /// members together can never lock them out of every computer.
    pub admin_reserve: usize,
    /// Bytes of recent output kept for viewers who attach later.
    pub scrollback_bytes: usize,
}

impl Default for TerminalLimits {
    fn default() -> Self {
        TerminalLimits {
            per_channel: 4,
            total: 32,
            per_person: 4,
            admin_reserve: 4,
            scrollback_bytes: 256 * 1024,
        }
    }
}

/// The deployment policy for channel computers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComputerOptions {
    /// Which isolation channel computers get.
    pub isolation: IsolationChoice,
    /// Channel `n` runs as uid and gid `sandbox_uid_base + n` when the server
    /// runs as root. Give each installation on one host its own range.
    pub sandbox_uid_base: u32,
    /// Resource limits of channel commands and terminals.
    pub limits: ResourceLimits,
    /// Terminal limits.
    pub terminals: TerminalLimits,
}

impl Default for ComputerOptions {
    fn default() -> Self {
        ComputerOptions {
            isolation: IsolationChoice::Auto,
            sandbox_uid_base: DEFAULT_SANDBOX_UID_BASE,
            limits: ResourceLimits::default(),
            terminals: TerminalLimits::default(),
        }
    }
}

/// The unprivileged identity a channel's commands run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxUser {
    /// The uid.
    pub uid: u32,
    /// The gid.
    pub gid: u32,
}

impl SandboxUser {
    /// Channel `channel`'s identity under `base`, or an error when the sum
    /// leaves the range of ordinary uids.
    pub fn for_channel(base: u32, channel: ChannelId) -> Result<Self> {
        let uid = u32::try_from(channel.get())
            .ok()
            .and_then(|n| base.checked_add(n))
            .filter(|uid| *uid < u32::MAX - 1)
            .ok_or_else(|| {
                Error::Internal(format!(
                    "channel {channel} has no sandbox uid under base {base}; lower sandbox_uid_base"
                ))
            })?;
        Ok(SandboxUser { uid, gid: uid })
    }
}

/// A computer: the directory its commands start in and the rules they run
/// under. A channel's computer shows its workspace as `/workspace`; Skipper's
/// runs on the host.
///
/// The host path in `workspace` is for Helm, never for the agent: everything
/// an agent sees names `/workspace/...`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Computer {
    /// The channel it belongs to (`None` for a bare host computer).
    pub channel: Option<ChannelId>,
    /// The host name shown inside the sandbox (the channel's name).
    pub hostname: String,
    /// The host directory that is `/workspace` (or the working directory in
    /// `host` mode).
    pub workspace: PathBuf,
    /// Where Helm may keep the computer's own files (`state/sandbox` of the
    /// channel's world), if anywhere.
    pub sandbox_dir: Option<PathBuf>,
    /// The isolation its commands run under.
    pub isolation: Isolation,
    /// Whether commands may reach the network.
    pub network: bool,
    /// Extra read-only mounts (bubblewrap only).
    pub mounts: Vec<ReadOnlyMount>,
    /// The unprivileged identity commands run as (when the server is root).
    pub user: Option<SandboxUser>,
}

impl Computer {
    /// A channel's computer over its world, under `policy`.
    pub fn for_channel(
        channel: ChannelId,
        hostname: &str,
        world: &ChannelWorld,
        isolation: Isolation,
        policy: &CapabilityPolicy,
        user: Option<SandboxUser>,
    ) -> Self {
        Computer {
            channel: Some(channel),
            hostname: hostname.to_string(),
            workspace: world.workspace(),
            sandbox_dir: Some(world.state().join("sandbox")),
            isolation,
            network: policy.network,
            mounts: policy.mounts.clone(),
            user,
        }
    }

    /// Skipper's computer: no sandbox, starting in `dir`, with the server's
    /// authority and network.
    pub fn host(dir: impl Into<PathBuf>) -> Self {
        Computer {
            channel: None,
            hostname: String::new(),
            workspace: dir.into(),
            sandbox_dir: None,
            isolation: Isolation::Host,
            network: true,
            mounts: Vec::new(),
            user: None,
        }
    }

    /// Whether paths are confined to the workspace (every mode but `host`).
    pub fn is_confined(&self) -> bool {
        self.isolation != Isolation::Host
    }

    /// The directory as the computer's user sees it: `/workspace`, or the
    /// host path in `host` mode.
    pub fn visible_root(&self) -> String {
        if self.is_confined() {
            AGENT_ROOT.to_string()
        } else {
            self.workspace.display().to_string()
        }
    }

    /// The host directory that is `/workspace`.
    pub fn workspace_dir(&self) -> &Path {
        &self.workspace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse() -> Result<()> {
        assert_eq!(
            "bwrap".parse::<IsolationChoice>()?,
            IsolationChoice::Bubblewrap
        );
        assert_eq!(" Auto ".parse::<IsolationChoice>()?, IsolationChoice::Auto);
        assert!("docker".parse::<IsolationChoice>().is_err());
        Ok(())
    }

    #[test]
    fn sandbox_uids_stay_in_range() -> Result<()> {
        assert_eq!(SandboxUser::for_channel(1000, ChannelId(7))?.uid, 1007);
        assert!(SandboxUser::for_channel(u32::MAX - 3, ChannelId(7)).is_err());
        Ok(())
    }
}
