//! The `Helm` facade: the one entry point every frontend uses.
//!
//! `Helm` is cheap to clone (it is an `Arc`) and safe to share across tasks. It
//! owns the data root, the store and the workspace identity; its methods take
//! the acting [`User`] and check that user's authority before touching
//! anything.

mod access;
mod announced_files;
mod announced_terminals;
mod artifacts;
mod auth;
mod authority;
mod channels;
pub(crate) mod computer;
mod converse;
mod lifecycle;
mod mcp;
mod memory;
mod nodes;
mod notes;
mod ot_keys;
mod people;
mod per_channel;
mod placement;
mod providers;
mod reading;
mod status;
mod threads;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::broadcast;

pub(crate) use access::may_see;
pub use access::{Audience, MAX_INSTRUCTIONS};
pub use artifacts::RESCAN_AUTHOR;
pub use auth::{AccountRequest, MAX_INVITE_TTL};
pub use channels::NewChannel;
pub(crate) use channels::{provision_channel, set_model_policy};
pub use computer::ComputerPorts;
pub use converse::{Conversation, ConversationUpdate};
pub(crate) use lifecycle::{change_status, delete_channel};
pub(crate) use mcp::{
    describe as describe_mcp_server, put_server as put_mcp_server,
    remove_server as remove_mcp_server,
};
pub use memory::MemoryNote;
pub use nodes::{NodeOptions, OtherNode};
pub use notes::{MAX_NOTE_BYTES, MAX_TITLE_CHARS, NOTES_DIR, NewNote};
pub use people::PersonChange;
pub use placement::ComputerPlacement;
pub use reading::MAX_WORKSPACE_NAME;
pub use status::Status;
pub use threads::{MAX_THREAD_TITLE, PostedMessage, ThreadFilter, ThreadList};

use crate::config::StoreUrl;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::exec::ComputerOptions;
use crate::faults::Faults;
use crate::memory::config::{EmbedderSetting, MemoryConfig, RecallMode, WordsOnlyReason};
use crate::memory::embed::Embedder;
use crate::memory::engine::RecallEngine;
use crate::model::{ModelChoice, Role, User, Workspace, validate_new_user_name};
use crate::provider::{HttpOptions, ProviderRegistry};
use crate::runtime::{Runtime, RuntimeOptions, RuntimeParts};
use crate::store::{BootstrapPlan, NewUser, SqliteStore, Store, WorldHook};
use crate::world::DataRoot;

/// `#main`'s purpose.
const HOME_PURPOSE: &str = "Skipper's home: workspace-wide questions, new channels, and anything \
                            that needs the operator.";

/// Skipper's standing instructions.
const SKIPPER_INSTRUCTIONS: &str = "You are Skipper, the workspace operator and chief of staff. \
    Channel agents call you into their threads when they need something outside their world. \
    Act visibly, record what you change, and ask the Captain when final authority is needed.";

/// Where a workspace's state lives, as the options choose it.
enum StoreChoice {
    /// An SQLite file: the data root's `helm.db`, or the file `store` names
    /// (a relative path from the data root).
    Sqlite(PathBuf),
    /// A PostgreSQL database, shared by every node that names it.
    Postgres(String),
}

impl StoreChoice {
    fn of(root: &DataRoot, store: Option<&StoreUrl>) -> StoreChoice {
        match store {
            None => StoreChoice::Sqlite(root.db_path()),
            Some(StoreUrl::Postgres(url)) => StoreChoice::Postgres(url.clone()),
            Some(url @ StoreUrl::Sqlite(_)) => StoreChoice::Sqlite(
                url.sqlite_path(root.path())
                    .unwrap_or_else(|| root.db_path()),
            ),
        }
    }
}

/// Connects to a Postgres store and brings its schema up to date.
#[cfg(feature = "postgres")]
async fn postgres_store(url: &str, options: &HelmOptions) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(
        crate::store::PostgresStore::connect_with(url, options.runtime.turn_lease).await?,
    ))
}

/// This build has no Postgres store.
#[cfg(not(feature = "postgres"))]
async fn postgres_store(url: &str, _options: &HelmOptions) -> Result<Arc<dyn Store>> {
    Err(Error::NotBuiltIn(format!(
        "Postgres store (store = {}); this build was made without the `postgres` feature: use \
         an SQLite store",
        StoreUrl::Postgres(url.to_string())
    )))
}

fn create_private_file(path: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map(|_| ())
        .map_err(|e| Error::io("creating the database file", path, e))
}

/// The data root's absolute path, refused when something other than a
/// directory is there (a file given by mistake would fail later, deep in
/// creating or opening the store, with an I/O error that does not say so).
fn absolute(dir: &std::path::Path) -> Result<PathBuf> {
    let path = std::path::absolute(dir).map_err(|e| Error::io("resolving", dir, e))?;
    if path.exists() && !path.is_dir() {
        return Err(Error::invalid(
            "data directory",
            format!(
                "{} is not a directory; give a directory (it is created if it does not exist)",
                path.display()
            ),
        ));
    }
    Ok(path)
}

/// How to open a data directory.
#[derive(Clone)]
pub struct HelmOptions {
    /// The data root (`./helm-data` in the CLI by default).
    pub data_dir: PathBuf,
    /// The store; `None`: `helm.db` in the data root.
    pub store: Option<StoreUrl>,
    /// The model used when no session, channel or workspace choice is set.
    pub fallback_model: Option<ModelChoice>,
    /// Tunables of the turn engine.
    pub runtime: RuntimeOptions,
    /// Timeouts and retries of provider requests.
    pub provider_http: HttpOptions,
    /// The embedder for meaning-based recall; without one, recall works by words.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Memory's configuration: whether the embedder is required.
    pub memory: MemoryConfig,
    /// Why there is no embedder, when a frontend looked for one (see
    /// [`HelmOptions::load_local_embedder`]); shown in the recall mode.
    pub words_only_reason: Option<WordsOnlyReason>,
    /// How channel computers are isolated and limited.
    pub computer: ComputerOptions,
    /// What runs channel computers' commands, files and terminals; this
    /// host's implementations by default (with a store several nodes
    /// share, this host's for the channels whose computers this node
    /// holds, the holder's for the rest).
    pub ports: ComputerPorts,
    /// Where channel computers run: the default and the computers a
    /// channel may choose (this host for all, by default).
    pub computers: ComputerPlacement,
    /// This node, when several share the store.
    pub node: NodeOptions,
    /// Where the secrets that credential grants and MCP servers name are
    /// looked up (the server's environment by default).
    pub secrets: Arc<dyn crate::secrets::SecretStore>,
}

impl HelmOptions {
    /// Options for the data root at `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        HelmOptions {
            data_dir: data_dir.into(),
            store: None,
            fallback_model: None,
            runtime: RuntimeOptions::default(),
            provider_http: HttpOptions::default(),
            embedder: None,
            memory: MemoryConfig::default(),
            words_only_reason: None,
            computer: ComputerOptions::default(),
            ports: ComputerPorts::default(),
            computers: ComputerPlacement::default(),
            node: NodeOptions::default(),
            secrets: Arc::new(crate::secrets::EnvSecrets),
        }
    }

    /// Loads the local embedding model as `self.memory` says, for
    /// `data_dir`: sets [`HelmOptions::embedder`], or records why recall
    /// works by words. Fails when the model is required and missing, or
    /// present and unreadable.
    pub fn load_local_embedder(&mut self) -> Result<()> {
        let (embedder, reason) =
            crate::memory::config::load_local_embedder(&self.data_dir, &self.memory)?;
        self.embedder = embedder;
        self.words_only_reason = reason;
        Ok(())
    }
}

/// What `init` sets up the first time.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The workspace's name.
    pub workspace_name: String,
    /// The Captain's user name.
    pub captain_name: String,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            workspace_name: "Helm".to_string(),
            captain_name: "captain".to_string(),
        }
    }
}

/// The outcome of [`Helm::init`].
#[derive(Debug, Clone)]
pub struct InitReport {
    /// True if this call created the workspace; false if it already existed.
    pub created: bool,
    /// The workspace.
    pub workspace: Workspace,
    /// The Captain.
    pub captain: User,
}

/// A Helm workspace, opened on its data root.
#[derive(Clone)]
pub struct Helm {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    root: DataRoot,
    store: Arc<dyn Store>,
    workspace: std::sync::RwLock<Workspace>,
    fallback_model: Option<ModelChoice>,
    providers: Arc<ProviderRegistry>,
    runtime: Arc<Runtime>,
    recall: Arc<RecallEngine>,
    recall_mode: RecallMode,
    computer: Arc<computer::ComputerState>,
    faults: Faults,
    /// The channel whose computer this process serves to other Helm
    /// servers, and the digest of the key they present (see
    /// [`Helm::serve_computer`]).
    served_computer: std::sync::OnceLock<(crate::model::ChannelId, String)>,
}

impl Helm {
    /// Creates the data root, the workspace, the Captain, `#main` and Skipper,
    /// unless they exist already; then opens it. Idempotent.
    pub async fn init(options: HelmOptions, init: InitOptions) -> Result<(Helm, InitReport)> {
        validate_new_user_name(&init.captain_name)?;
        if init.workspace_name.trim().is_empty() {
            return Err(Error::invalid("workspace name", "it must not be empty"));
        }
        let root = DataRoot::new(absolute(&options.data_dir)?);
        let store: Arc<dyn Store> = match StoreChoice::of(&root, options.store.as_ref()) {
            StoreChoice::Sqlite(db) => {
                root.create()?;
                if db != root.db_path() {
                    // As the data root's own: made 0600 before SQLite opens
                    // it, so its -wal and -shm files are never readable by
                    // others either.
                    create_private_file(&db)?;
                }
                Arc::new(SqliteStore::open_mapped(db, options.memory.read_map_bytes()).await?)
            }
            StoreChoice::Postgres(url) => {
                let store = postgres_store(&url, &options).await?;
                root.create_dirs()?;
                store
            }
        };
        Self::bootstrap(root, store, init, options).await
    }

    /// Opens an initialised data root.
    pub async fn open(options: HelmOptions) -> Result<Helm> {
        let root = DataRoot::new(absolute(&options.data_dir)?);
        let store: Arc<dyn Store> = match StoreChoice::of(&root, options.store.as_ref()) {
            StoreChoice::Sqlite(db) => {
                if !db.is_file() {
                    return Err(Error::NotInitialized(options.data_dir));
                }
                root.close()?;
                Arc::new(SqliteStore::open_mapped(db, options.memory.read_map_bytes()).await?)
            }
            // A node joining a shared database brings its own data root
            // (its channels' computers); the workspace is the database's.
            StoreChoice::Postgres(url) => {
                let store = postgres_store(&url, &options).await?;
                root.create_dirs()?;
                store
            }
        };
        Self::with_store(root, store, options).await
    }

    /// Opens a workspace over a store supplied by the embedding application.
    /// The store must already be bootstrapped (see [`Helm::init_with_store`]).
    /// `options.data_dir` is ignored in favour of `root`.
    pub async fn with_store(
        root: DataRoot,
        store: Arc<dyn Store>,
        options: HelmOptions,
    ) -> Result<Helm> {
        let workspace = store
            .workspace()
            .await?
            .ok_or_else(|| Error::NotInitialized(root.path().to_path_buf()))?;
        root.sweep_trash();
        let providers = Arc::new(
            ProviderRegistry::new(options.provider_http.clone())
                .with_secrets_dir(root.path().join("secrets")),
        );

        let recall_mode = RecallMode::of(options.embedder.as_ref(), options.words_only_reason);
        if let RecallMode::Words { reason } = recall_mode
            && options.memory.embedder == EmbedderSetting::Required
        {
            return Err(crate::memory::config::required_but_missing(
                root.path(),
                reason,
            ));
        }
        // Frontends warn in their own way (the server at start, `1helm
        // recall` beside its hits); the library only logs.
        tracing::info!("recall works {}", recall_mode.describe());
        let recall = Arc::new(
            RecallEngine::new(store.clone(), options.embedder.clone())
                .with_vector_cache(options.memory.vector_cache_bytes()),
        );
        let computer = Arc::new(
            computer::ComputerState::open(options.computer, root.clone(), &store, &options).await?,
        );
        let faults = Faults::default();
        // Skipper's tools act through a narrow authority service over the
        // same store and data root, not through the facade.
        let authority = Arc::new(crate::tool::authority::Authority::new(
            store.clone(),
            root.clone(),
            faults.clone(),
        ));
        let inner = Arc::new(Inner {
            runtime: Arc::new(Runtime::new(RuntimeParts {
                store: store.clone(),
                root: root.clone(),
                providers: providers.clone(),
                fallback_model: options.fallback_model.clone(),
                options: options.runtime,
                computers: computer.clone(),
                recall: recall.clone(),
                authority,
                secrets: options.secrets.clone(),
            })),
            recall,
            recall_mode,
            computer,
            root,
            store,
            workspace: std::sync::RwLock::new(workspace),
            fallback_model: options.fallback_model,
            providers,
            faults,
            served_computer: std::sync::OnceLock::new(),
        });
        Ok(Helm { inner })
    }

    /// Like [`Helm::init`], over a store supplied by the embedding application.
    pub async fn init_with_store(
        root: DataRoot,
        store: Arc<dyn Store>,
        init: InitOptions,
        options: HelmOptions,
    ) -> Result<(Helm, InitReport)> {
        root.create()?;
        Self::bootstrap(root, store, init, options).await
    }

    async fn bootstrap(
        root: DataRoot,
        store: Arc<dyn Store>,
        init: InitOptions,
        options: HelmOptions,
    ) -> Result<(Helm, InitReport)> {
        let plan = BootstrapPlan {
            workspace_name: init.workspace_name.trim().to_string(),
            captain_name: init.captain_name.clone(),
            home_purpose: HOME_PURPOSE.to_string(),
            skipper_instructions: SKIPPER_INSTRUCTIONS.to_string(),
        };
        let world_root = root.clone();
        // #main's world is ensured on every init, which also repairs it.
        let world: WorldHook = Box::new(move |home| world_root.world(home.channel.id).ensure(home));
        let boot = store.bootstrap(plan, world).await?;
        let helm = Self::with_store(root, store, options).await?;
        if boot.created {
            tracing::info!(workspace = %boot.workspace.name, captain = %boot.captain.name, "initialised");
        }
        let report = InitReport {
            created: boot.created,
            workspace: boot.workspace,
            captain: boot.captain,
        };
        Ok((helm, report))
    }

    /// The store, for operations the facade does not wrap.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// The data root.
    pub fn data_root(&self) -> &DataRoot {
        &self.inner.root
    }

    /// The workspace (as of its last rename).
    pub fn workspace(&self) -> Workspace {
        match self.inner.workspace.read() {
            Ok(workspace) => workspace.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Fault injection for tests (armed only with the `test-support` feature).
    pub fn faults(&self) -> &Faults {
        &self.inner.faults
    }

    /// Live events as they are committed; see [`Store::subscribe`].
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.inner.store.subscribe()
    }

    /// The Captain.
    pub async fn captain(&self) -> Result<User> {
        let users = self.inner.store.list_users().await?;
        users
            .into_iter()
            .find(|u| u.role == Role::Captain)
            .ok_or_else(|| Error::Internal("the workspace has no Captain".into()))
    }

    /// A user by name.
    pub async fn user(&self, name: &str) -> Result<User> {
        self.inner.store.user_by_name(name).await
    }

    /// Every user.
    pub async fn users(&self) -> Result<Vec<User>> {
        self.inner.store.list_users().await
    }

    /// Adds a person to the workspace. Only the Captain and admins may, and
    /// only the Captain may make admins.
    pub async fn add_user(&self, actor: &User, name: &str, role: Role) -> Result<User> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin adds people".into(),
            ));
        }
        match role {
            Role::Captain => {
                return Err(Error::Refused(
                    "the workspace already has its Captain; add an admin instead".into(),
                ));
            }
            Role::Admin if actor.role != Role::Captain => {
                return Err(Error::Forbidden("only the Captain makes admins".into()));
            }
            _ => {}
        }
        validate_new_user_name(name)?;
        self.inner
            .store
            .insert_user(NewUser {
                name: name.to_string(),
                display_name: name.to_string(),
                role,
            })
            .await
    }
}
