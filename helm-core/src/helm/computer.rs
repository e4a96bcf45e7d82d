//! The channel computer, as the facade offers it: each channel's
//! [`Computer`], commands, file operations and terminals, with the actor's
//! authority checked and archived channels paused.
//!
//! The local executor is created (and bubblewrap probed) on first use, not
//! when Helm opens, so commands that never touch a computer pay nothing.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::error::{Error, Result};
use crate::exec::{
    CommandResult, CommandSpec, Computer, ComputerOptions, ConfinedFs, Executor, Isolation,
    LocalExecutor, RunningCommand, TerminalInfo, TerminalManager, TerminalSession, TerminalSize,
};
use crate::model::{ChannelKind, ChannelRef, ChannelStatus, User};
use crate::store::ChannelRecord;
use crate::world::DataRoot;

use super::Helm;

/// The computers of one data root: the executor, once probed, and the open
/// terminals. Shared by the facade and the agent turn.
pub(crate) struct ComputerState {
    options: ComputerOptions,
    root: DataRoot,
    executor: OnceCell<Arc<LocalExecutor>>,
    pub(crate) terminals: TerminalManager,
}

impl ComputerState {
    pub(crate) fn new(options: ComputerOptions, root: DataRoot) -> Self {
        ComputerState {
            options,
            root,
            executor: OnceCell::new(),
            terminals: TerminalManager::new(options.terminals),
        }
    }

    /// The executor (probing bubblewrap the first time).
    pub(crate) async fn executor(&self) -> Result<Arc<LocalExecutor>> {
        self.executor
            .get_or_try_init(|| async {
                let executor = LocalExecutor::new(&self.options)
                    .await?
                    .recording_in(self.root.procs_dir())?;
                if executor.sandbox_user(crate::model::ChannelId(1))?.is_some() {
                    close_data_root(&self.root, executor.channel_isolation())?;
                    close_worlds(&self.root, executor.channel_isolation())?;
                }
                Ok(Arc::new(executor))
            })
            .await
            .cloned()
    }

    /// The computer of a channel's agent (`#main`: the host, for Skipper).
    pub(crate) async fn computer_of(&self, record: &ChannelRecord) -> Result<Computer> {
        let executor = self.executor().await?;
        let id = record.channel.id;
        let world = self.root.world(id);
        if record.channel.kind == ChannelKind::Home {
            let mut computer = Computer::host(world.workspace());
            computer.channel = Some(id);
            computer.hostname = record.channel.name.as_str().to_string();
            return Ok(computer);
        }
        if executor.sandbox_user(id)?.is_some() {
            close_world(&world, executor.channel_isolation())?;
        }
        Ok(Computer::for_channel(
            id,
            record.channel.name.as_str(),
            &world,
            executor.channel_isolation(),
            &record.profile.capability_policy,
            executor.sandbox_user(id)?,
        ))
    }
}

impl Helm {
    /// The executor of this host's computers (probing bubblewrap the first
    /// time). Usable as an `Arc<dyn Executor>`.
    pub async fn executor(&self) -> Result<Arc<LocalExecutor>> {
        self.inner.computer.executor().await
    }

    /// The isolation channel computers get here.
    pub async fn isolation(&self) -> Result<Isolation> {
        Ok(self.executor().await?.channel_isolation())
    }

    /// Kills the commands and terminals an earlier process on this data
    /// root started and lost (see [`LocalExecutor::kill_leftovers`]); for a
    /// server at start. Returns how many processes were killed.
    pub async fn kill_leftover_commands(&self) -> Result<usize> {
        Ok(self.executor().await?.kill_leftovers().await)
    }

    /// The isolation channel computers use, if it is settled already (the
    /// first use of a computer settles it; this does not).
    pub fn isolation_in_use(&self) -> Option<Isolation> {
        self.inner
            .computer
            .executor
            .get()
            .map(|e| e.channel_isolation())
    }

    /// The computer of `channel`'s agent, for the agent turn: its workspace,
    /// isolation, network and uid. `#main` gets Skipper's host computer.
    /// Archived channels are refused.
    pub async fn computer(&self, channel: &ChannelRef) -> Result<Computer> {
        let record = self.channel(channel).await?;
        refuse_archived(&record, "use its computer")?;
        self.computer_of(&record).await
    }

    /// Skipper's computer: the host, starting in `dir`, with the server's
    /// authority.
    pub fn skipper_computer(&self, dir: impl Into<PathBuf>) -> Computer {
        Computer::host(dir)
    }

    /// Runs a command in `channel`'s computer on behalf of `actor`.
    pub async fn exec(
        &self,
        actor: &User,
        channel: &ChannelRef,
        spec: CommandSpec,
    ) -> Result<CommandResult> {
        let record = self.computer_channel(actor, channel).await?;
        refuse_archived(&record, "run commands")?;
        let computer = self.computer_of(&record).await?;
        self.executor().await?.run(&computer, spec).await
    }

    /// Starts a command in `channel`'s computer on behalf of `actor` and
    /// returns at once with a handle to poll, feed, wait for or kill it.
    /// Dropping the last handle kills the command.
    pub async fn start_command(
        &self,
        actor: &User,
        channel: &ChannelRef,
        spec: CommandSpec,
    ) -> Result<Arc<dyn RunningCommand>> {
        let record = self.computer_channel(actor, channel).await?;
        refuse_archived(&record, "run commands")?;
        let computer = self.computer_of(&record).await?;
        self.executor().await?.start(&computer, spec).await
    }

    /// The file operations of `channel`'s workspace, on behalf of `actor`.
    /// An archived channel's workspace can be read but not changed. On
    /// `#main`, Skipper's host computer, paths are the host's.
    pub async fn files(&self, actor: &User, channel: &ChannelRef) -> Result<ConfinedFs> {
        self.files_of(actor, channel, false).await
    }

    /// Like [`Helm::files`], but confined to the channel's workspace even on
    /// `#main`: what frontends that serve people over a network use, so
    /// that no request names a host path.
    pub async fn workspace_files(&self, actor: &User, channel: &ChannelRef) -> Result<ConfinedFs> {
        self.files_of(actor, channel, true).await
    }

    async fn files_of(
        &self,
        actor: &User,
        channel: &ChannelRef,
        confine: bool,
    ) -> Result<ConfinedFs> {
        let record = self.computer_channel(actor, channel).await?;
        let mut computer = self.computer_of(&record).await?;
        if confine && !computer.is_confined() {
            // Only the file API's view changes: it resolves paths inside
            // the workspace as it does for any confined computer.
            computer.isolation = Isolation::Process;
        }
        let files = ConfinedFs::new(&computer);
        Ok(if record.channel.status == ChannelStatus::Archived {
            files.read_only(format!(
                "{} is archived; restore it to change its workspace",
                record.channel.name
            ))
        } else {
            files
        })
    }

    /// Opens a terminal in `channel`'s computer on behalf of `actor`.
    pub async fn open_terminal(
        &self,
        actor: &User,
        channel: &ChannelRef,
        size: TerminalSize,
    ) -> Result<Arc<TerminalSession>> {
        let record = self.computer_channel(actor, channel).await?;
        refuse_archived(&record, "open terminals")?;
        let computer = self.computer_of(&record).await?;
        let executor = self.executor().await?;
        self.inner
            .computer
            .terminals
            .open_as(
                &executor,
                &computer,
                size,
                Some(crate::exec::Opener {
                    user: actor.id,
                    admin: actor.role.is_admin(),
                }),
            )
            .await
    }

    /// The open terminals: list, attach, close.
    pub fn terminals(&self) -> &TerminalManager {
        &self.inner.computer.terminals
    }

    /// The running terminals of `channel`, for `actor`.
    pub async fn channel_terminals(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<Vec<TerminalInfo>> {
        let record = self.computer_channel(actor, channel).await?;
        Ok(self.terminals().list(Some(record.channel.id)))
    }

    /// A running terminal `actor` may use (the same rules as its channel's
    /// computer); one of a channel they may not see is `not found`.
    pub async fn terminal(&self, actor: &User, id: u64) -> Result<Arc<TerminalSession>> {
        let session = self.terminals().get(id)?;
        let Some(channel) = session.channel() else {
            // Only the server's own host terminals have no channel.
            return Err(Error::not_found("terminal", id));
        };
        match self.computer_channel(actor, &ChannelRef::Id(channel)).await {
            Ok(_) => Ok(session),
            Err(Error::NotFound { .. }) => Err(Error::not_found("terminal", id)),
            Err(e) => Err(e),
        }
    }

    /// Closes a terminal `actor` may use: its shell and everything started
    /// in it end.
    pub async fn close_terminal(&self, actor: &User, id: u64) -> Result<()> {
        self.terminal(actor, id).await?;
        self.terminals().close(id).await
    }

    /// A channel whose computer `actor` may use: anyone who may see the
    /// channel (a hidden one is `not found`); for `#main`, which is
    /// Skipper's host computer, only the Captain and admins.
    pub async fn computer_channel(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<ChannelRecord> {
        let record = self.visible_channel(actor, channel).await?;
        if record.channel.kind == ChannelKind::Home && !actor.role.is_admin() {
            return Err(Error::Forbidden(format!(
                "{} runs on Skipper's host computer; only the Captain or an admin uses it",
                record.channel.name
            )));
        }
        Ok(record)
    }

    async fn computer_of(&self, record: &ChannelRecord) -> Result<Computer> {
        self.inner.computer.computer_of(record).await
    }
}

fn refuse_archived(record: &ChannelRecord, what: &str) -> Result<()> {
    if record.channel.status == ChannelStatus::Archived {
        return Err(Error::Refused(format!(
            "{} is archived, and its agent's computer is paused; restore it to {what}",
            record.channel.name
        )));
    }
    Ok(())
}

/// When the server is root and agents run as other uids, only the server
/// may read the data root. Under bubblewrap nobody else even enters it (the
/// sandbox is set up by root). In process mode the agent's uid must be able
/// to pass through it to reach its workspace by absolute path (`$HOME`), so
/// the directories may be traversed but not listed, and the database is
/// closed by its own mode.
fn close_data_root(root: &DataRoot, isolation: Isolation) -> Result<()> {
    let dir_mode = traversal_mode(isolation);
    set_mode(root.path(), dir_mode)?;
    set_mode(&root.channels_dir(), dir_mode)?;
    let db = root.db_path();
    for side in ["", "-wal", "-shm", "-journal"] {
        let path = PathBuf::from(format!("{}{side}", db.display()));
        if path.exists() {
            set_mode(&path, 0o600)?;
        }
    }
    if isolation == Isolation::Process {
        let closed: Vec<String> = root
            .path()
            .ancestors()
            .skip(1)
            .filter(|dir| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 == 0)
            })
            .map(|dir| dir.display().to_string())
            .collect();
        if !closed.is_empty() {
            tracing::warn!(
                closed = ?closed,
                "process isolation: agents cannot pass through these directories to their \
                 workspace by absolute path ($HOME and tools that use it fail); keep the data \
                 root under directories others may traverse, or use bubblewrap"
            );
        }
    }
    Ok(())
}

/// A channel's world: its root as the data root, every directory in it
/// closed to other users (worlds made before Helm closed them are closed
/// here).
fn close_world(world: &crate::world::ChannelWorld, isolation: Isolation) -> Result<()> {
    set_mode(world.root(), traversal_mode(isolation))?;
    let workspace = world.workspace();
    for dir in [
        world.files(),
        world.state(),
        world.memory(),
        world.profile(),
        workspace,
    ] {
        if dir.exists() {
            set_mode(&dir, 0o700)?;
        }
    }
    Ok(())
}

/// Closes every world under the data root (see [`close_world`]).
fn close_worlds(root: &DataRoot, isolation: Isolation) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(root.channels_dir()) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some(id) = name.to_str().and_then(|n| n.parse::<i64>().ok()) {
            close_world(&root.world(crate::model::ChannelId(id)), isolation)?;
        }
    }
    Ok(())
}

fn traversal_mode(isolation: Isolation) -> u32 {
    if isolation == Isolation::Process {
        0o711
    } else {
        0o700
    }
}

fn set_mode(path: &std::path::Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| Error::io("opening", path, e))?;
    if meta.permissions().mode() & 0o7777 != mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io("setting the mode of", path, e))?;
    }
    Ok(())
}
