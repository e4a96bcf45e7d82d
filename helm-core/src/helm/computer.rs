//! The channel computer, as the facade offers it: each channel's
//! [`Computer`], commands, file operations and terminals, with the actor's
//! authority checked and archived channels paused.
//!
//! Commands, files and terminals go through ports ([`ComputerProvider`],
//! [`FilesProvider`], [`Terminals`]) chosen in [`ComputerPorts`]; nothing
//! here names the local implementations except to make them the defaults.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::error::{Error, Result};
use crate::exec::files::{LockedFiles, PathLocks};
use crate::exec::{
    CommandResult, CommandSpec, Computer, ComputerOptions, ComputerProvider, ComputerRoutes,
    Executor, Files, FilesProvider, Isolation, LocalComputers, LocalFiles, LocalTerminals,
    RemoteComputers, Route, RunningCommand, TerminalInfo, TerminalSession, TerminalSize, Terminals,
};
use crate::model::{ChannelId, ChannelKind, ChannelRef, ChannelStatus, User};
use crate::store::{ChannelRecord, Store};
use crate::world::DataRoot;

use super::nodes::{NodeRoutes, OtherNode};
use super::placement::{ChannelRoutes, ComputerPlacement, DefaultRoute};
use super::{Helm, HelmOptions};

/// The computer ports a Helm is built with; each left `None` is this
/// host's implementation. Set through [`HelmOptions::ports`](super::HelmOptions::ports).
#[derive(Clone, Default)]
pub struct ComputerPorts {
    /// Which executor each channel's computer runs on (default:
    /// [`LocalComputers`], this host's [`LocalExecutor`](crate::exec::LocalExecutor)
    /// for all).
    pub computers: Option<Arc<dyn ComputerProvider>>,
    /// The files of each computer (default: [`LocalFiles`], a
    /// [`ConfinedFs`](crate::exec::ConfinedFs) per workspace).
    pub files: Option<Arc<dyn FilesProvider>>,
    /// The workspace's terminals (default: [`LocalTerminals`], PTYs here
    /// with [`ComputerOptions::terminals`]' limits).
    pub terminals: Option<Arc<dyn Terminals>>,
}

/// The computers of one data root, through their ports. Shared by the
/// facade and the agent turn.
pub(crate) struct ComputerState {
    root: DataRoot,
    computers: Arc<dyn ComputerProvider>,
    files: Arc<dyn FilesProvider>,
    pub(crate) terminals: Arc<dyn Terminals>,
    /// Set once the data root is closed to the agents' uids (see
    /// [`close_data_root`]), which the first executor that runs agents as
    /// other users triggers.
    closed: OnceCell<()>,
    /// With a store several nodes share (and no computer ports given):
    /// which node holds each channel's computer.
    nodes: Option<Arc<NodeRoutes>>,
    /// The routes of channels whose computers may be on other nodes.
    routes: Option<Arc<ChannelRoutes>>,
    /// Where computers are placed, for checking a new channel's choice.
    placement: ComputerPlacement,
    /// The files' write locks, shared by people's saves and the agents'
    /// file tools.
    file_locks: Arc<PathLocks>,
}

impl ComputerState {
    /// The computers of `root`: the ports `options` gives; or, without
    /// them, as `options.computers` places them, with the channels this
    /// node holds on this host and the others' on their holder when nodes
    /// share the store (this node registers with the store here).
    pub(crate) async fn open(
        computer: ComputerOptions,
        root: DataRoot,
        store: &Arc<dyn Store>,
        options: &HelmOptions,
    ) -> Result<Self> {
        let placement = options.computers.clone();
        let ports = &options.ports;
        if ports.computers.is_some() || ports.files.is_some() || ports.terminals.is_some() {
            return Ok(Self::new(
                computer,
                root,
                ports.clone(),
                placement,
                None,
                None,
            ));
        }
        // On a store several nodes share, this node registers whatever its
        // computers are: a channel's terminals live in its holder's memory.
        let nodes = match store.shared() {
            true => Some(NodeRoutes::start(&root, store.clone(), &options.node).await?),
            false => None,
        };
        let number = nodes.as_ref().map_or(0, |n| n.number());
        let default = match (&placement.default, &nodes) {
            (Some(server), _) => DefaultRoute::Server(server.clone()),
            (None, Some(nodes)) => DefaultRoute::Nodes(nodes.clone()),
            (None, None) => DefaultRoute::Here,
        };
        let host = Arc::new(LocalComputers::new(computer, Some(root.procs_dir())));
        let (computers, routes) = match default {
            DefaultRoute::Here if placement.named.is_empty() => {
                let ports = ComputerPorts::default();
                return Ok(Self::new(computer, root, ports, placement, nodes, None));
            }
            DefaultRoute::Server(server) if placement.named.is_empty() => {
                (RemoteComputers::new(&server.url, &server.key, host)?, None)
            }
            default => {
                let named = placement.named.clone();
                let routes = Arc::new(ChannelRoutes::new(store.clone(), named, default));
                (RemoteComputers::routed(routes.clone(), host)?, Some(routes))
            }
        };
        let computers = Arc::new(computers.on_node(number));
        let ports = ComputerPorts {
            computers: Some(computers.clone()),
            files: Some(computers.clone()),
            terminals: Some(computers),
        };
        Ok(Self::new(computer, root, ports, placement, nodes, routes))
    }

    /// Whether this node holds `channel`'s computer, making it the holder
    /// if no node is yet (always true without nodes).
    pub(crate) async fn holds(&self, channel: ChannelId) -> Result<bool> {
        match &self.nodes {
            Some(nodes) => Ok(nodes.route(channel).await? == Route::Here),
            None => Ok(true),
        }
    }

    /// The other node that holds `channel`'s computer, if nodes share the
    /// store and another does.
    pub(crate) async fn other_holder(&self, channel: ChannelId) -> Result<Option<OtherNode>> {
        match &self.nodes {
            Some(nodes) => nodes.other_holder(channel).await,
            None => Ok(None),
        }
    }

    /// The other node that keeps terminal `id`, if nodes share the store
    /// and the id carries another's number.
    pub(crate) async fn terminal_node(&self, id: u64) -> Result<Option<OtherNode>> {
        match &self.nodes {
            Some(nodes) => {
                nodes
                    .other_numbered(crate::exec::terminal_node(id), id)
                    .await
            }
            None => Ok(None),
        }
    }

    /// Whether another node of the store holds `channel`'s computer (see
    /// [`ChannelRoutes::held_by_another_node`]); false when that cannot be
    /// told, so the turn runs here rather than not at all.
    pub(crate) async fn held_elsewhere(&self, channel: ChannelId) -> bool {
        match &self.routes {
            Some(routes) => routes
                .held_by_another_node(channel)
                .await
                .unwrap_or_else(|e| {
                    tracing::debug!(channel = %channel, error = %e, "where is its computer?");
                    false
                }),
            None => false,
        }
    }

    /// Checks that a new channel may choose the computer `name`.
    pub(crate) fn check_choice(&self, name: &str) -> Result<()> {
        self.placement.check(name)
    }

    fn new(
        options: ComputerOptions,
        root: DataRoot,
        ports: ComputerPorts,
        placement: ComputerPlacement,
        nodes: Option<Arc<NodeRoutes>>,
        routes: Option<Arc<ChannelRoutes>>,
    ) -> Self {
        // The local computers are made (not probed) even when commands go
        // elsewhere: the default terminals launch through them.
        let local = Arc::new(LocalComputers::new(options, Some(root.procs_dir())));
        let number = nodes.as_ref().map_or(0, |n| n.number());
        let terminals = ports.terminals.unwrap_or_else(|| {
            Arc::new(LocalTerminals::for_node(
                options.terminals,
                local.clone(),
                number,
            ))
        });
        ComputerState {
            computers: ports.computers.unwrap_or(local),
            files: ports.files.unwrap_or_else(|| Arc::new(LocalFiles)),
            terminals,
            root,
            closed: OnceCell::new(),
            nodes,
            routes,
            placement,
            file_locks: Arc::default(),
        }
    }

    /// The host's executor (probing bubblewrap the first time, for the local one).
    pub(crate) async fn host_executor(&self) -> Result<Arc<dyn Executor>> {
        let executor = self.computers.host_executor().await?;
        self.close_once(executor.as_ref()).await?;
        Ok(executor)
    }

    /// The executor `channel`'s computer runs on.
    pub(crate) async fn executor_for(&self, channel: ChannelId) -> Result<Arc<dyn Executor>> {
        let executor = self.computers.executor_for(channel).await?;
        self.close_once(executor.as_ref()).await?;
        Ok(executor)
    }

    /// The executor that runs `computer`'s commands: its channel's, or the
    /// host's for a bare host computer.
    pub(crate) async fn executor_of(&self, computer: &Computer) -> Result<Arc<dyn Executor>> {
        match computer.channel {
            // `#main`'s computer is Skipper's, on the host, wherever the
            // channels' computers are.
            Some(channel) if computer.isolation != Isolation::Host => {
                self.executor_for(channel).await
            }
            _ => self.host_executor().await,
        }
    }

    /// The files of `computer`'s workspace (read-only with a reason).
    pub(crate) fn files_of(
        &self,
        computer: &Computer,
        read_only: Option<String>,
    ) -> Result<Arc<dyn Files>> {
        let files = self.files.files(computer, read_only)?;
        Ok(Arc::new(LockedFiles::new(
            files,
            self.file_locks.clone(),
            computer,
        )))
    }

    /// When agents run as other uids of this host, only the server may read
    /// the data root; done once, by whichever executor is asked first.
    async fn close_once(&self, executor: &dyn Executor) -> Result<()> {
        self.closed
            .get_or_try_init(|| async {
                if executor.sandbox_user(ChannelId(1))?.is_some() {
                    close_data_root(&self.root, executor.channel_isolation())?;
                    close_worlds(&self.root, executor.channel_isolation())?;
                }
                Ok::<(), Error>(())
            })
            .await
            .map(|_| ())
    }

    /// The computer of a channel's agent (`#main`: the host, for Skipper).
    pub(crate) async fn computer_of(&self, record: &ChannelRecord) -> Result<Computer> {
        let id = record.channel.id;
        let world = self.root.world(id);
        if !world.is_complete() {
            // With a store several nodes share, a channel made on another
            // node has no world on this one yet: this node makes its own
            // on first use (docs/operations.md, "Several nodes").
            world.ensure(record)?;
        }
        if record.channel.kind == ChannelKind::Home {
            // Skipper's host computer still settles the host executor
            // first, as every computer use did (it closes the data root).
            self.host_executor().await?;
            let mut computer = Computer::host(world.workspace());
            computer.channel = Some(id);
            computer.hostname = record.channel.name.as_str().to_string();
            return Ok(computer);
        }
        let executor = self.executor_for(id).await?;
        let user = executor.sandbox_user(id)?;
        if user.is_some() {
            close_world(&world, executor.channel_isolation())?;
        }
        Ok(Computer::for_channel(
            id,
            record.channel.name.as_str(),
            &world,
            executor.channel_isolation(),
            &record.profile.capability_policy,
            user,
        ))
    }
}

impl Helm {
    /// The executor of this host's computers (probing bubblewrap the first
    /// time, for the local one): the one [`ComputerPorts::computers`] gives
    /// for the host.
    pub async fn executor(&self) -> Result<Arc<dyn Executor>> {
        self.inner.computer.host_executor().await
    }

    /// The executor `channel`'s computer runs on.
    pub async fn executor_for(&self, channel: &ChannelRef) -> Result<Arc<dyn Executor>> {
        let record = self.channel(channel).await?;
        self.inner.computer.executor_for(record.channel.id).await
    }

    /// The isolation channel computers get here.
    pub async fn isolation(&self) -> Result<Isolation> {
        // The host executor settles first: it closes the data root.
        self.executor().await?;
        self.inner.computer.computers.channel_isolation().await
    }

    /// Kills the commands and terminals an earlier process on this data
    /// root started and lost (see [`Executor::kill_leftovers`]); for a
    /// server at start. Returns how many processes were killed.
    pub async fn kill_leftover_commands(&self) -> Result<usize> {
        Ok(self.executor().await?.kill_leftovers().await)
    }

    /// The computers a new channel may choose, by name (the configured
    /// `[computers.<name>]`).
    pub fn computer_choices(&self) -> Vec<String> {
        self.inner
            .computer
            .placement
            .named
            .keys()
            .cloned()
            .collect()
    }

    /// The isolation channel computers use, if it is settled already (the
    /// first use of a computer settles it; this does not).
    pub fn isolation_in_use(&self) -> Option<Isolation> {
        self.inner.computer.computers.channel_isolation_if_ready()
    }

    /// The isolation channel computers use, settling it now if no computer
    /// was used yet (bubblewrap is probed once): what the server's status
    /// and its first-run page tell the Captain.
    pub async fn channel_isolation(&self) -> Result<Isolation> {
        self.inner.computer.computers.channel_isolation().await
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
        let executor = self.inner.computer.executor_of(&computer).await?;
        executor.run(&computer, spec).await
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
        let executor = self.inner.computer.executor_of(&computer).await?;
        executor.start(&computer, spec).await
    }

    /// The file operations of `channel`'s workspace, on behalf of `actor`.
    /// An archived channel's workspace can be read but not changed. On
    /// `#main`, Skipper's host computer, paths are the host's.
    pub async fn files(&self, actor: &User, channel: &ChannelRef) -> Result<Arc<dyn Files>> {
        self.files_of(actor, channel, false).await
    }

    /// Like [`Helm::files`], but confined to the channel's workspace even on
    /// `#main`: what frontends that serve people over a network use, so
    /// that no request names a host path.
    pub async fn workspace_files(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<Arc<dyn Files>> {
        self.files_of(actor, channel, true).await
    }

    async fn files_of(
        &self,
        actor: &User,
        channel: &ChannelRef,
        confine: bool,
    ) -> Result<Arc<dyn Files>> {
        let record = self.computer_channel(actor, channel).await?;
        let mut computer = self.computer_of(&record).await?;
        if confine && !computer.is_confined() {
            // Only the file API's view changes: it resolves paths inside
            // the workspace as it does for any confined computer.
            computer.isolation = Isolation::Process;
        }
        let read_only = (record.channel.status == ChannelStatus::Archived).then(|| {
            format!(
                "{} is archived; restore it to change its workspace",
                record.channel.name
            )
        });
        let files = self.inner.computer.files_of(&computer, read_only)?;
        Ok(Arc::new(super::announced_files::AnnouncedFiles::new(
            files,
            self.inner.store.clone(),
            record.channel.id,
            actor,
        )))
    }

    /// Opens a terminal in `channel`'s computer on behalf of `actor`; the
    /// channel is told when it opens and when it ends (`terminal.opened`,
    /// `terminal.closed`).
    pub async fn open_terminal(
        &self,
        actor: &User,
        channel: &ChannelRef,
        size: TerminalSize,
    ) -> Result<Arc<TerminalSession>> {
        let record = self.computer_channel(actor, channel).await?;
        refuse_archived(&record, "open terminals")?;
        let computer = self.computer_of(&record).await?;
        let session = self
            .inner
            .computer
            .terminals
            .open(
                &computer,
                size,
                Some(crate::exec::Opener {
                    user: actor.id,
                    admin: actor.role.is_admin(),
                }),
            )
            .await?;
        super::announced_terminals::announce(&self.inner.store, record.channel.id, actor, &session)
            .await;
        Ok(session)
    }

    /// The open terminals: list, attach, close.
    pub fn terminals(&self) -> &dyn Terminals {
        self.inner.computer.terminals.as_ref()
    }

    /// The other node that keeps `channel`'s terminals, when nodes share
    /// the store and another holds the channel's computer (`None`: this
    /// node keeps them). A frontend passes a person's requests for them on
    /// to that node, once `actor` was found allowed to use the computer.
    pub async fn terminals_elsewhere(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<Option<OtherNode>> {
        let record = self.computer_channel(actor, channel).await?;
        self.inner.computer.other_holder(record.channel.id).await
    }

    /// The other node that keeps terminal `id` (its id carries that node's
    /// number), when nodes share the store (`None`: this node keeps it,
    /// if anyone does). A frontend passes a person's requests for it on
    /// to that node, which checks who may use it.
    pub async fn terminal_elsewhere(&self, id: u64) -> Result<Option<OtherNode>> {
        self.inner.computer.terminal_node(id).await
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
        // Its other viewers are told who ended it.
        self.terminal(actor, id).await?.closing_by(actor.id);
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

    pub(super) async fn computer_of(&self, record: &ChannelRecord) -> Result<Computer> {
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
