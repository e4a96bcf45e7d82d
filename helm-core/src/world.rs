//! The data root on disk and each channel's world in it:
//!
//! ```text
//! <data-root>/helm.db
//! <data-root>/state/procs/<pid>-<start>   (the process ledger)
//! <data-root>/channels/<channel-id>/{workspace,files,state,memory,profile}
//! ```
//!
//! The agent never sees these host paths; its computer shows `workspace/` as
//! `/workspace`. Deleted worlds are first moved to `channels/.trash` inside
//! the deleting transaction and removed after it commits, so a failed delete
//! can put them back and a crash leaves nothing half-removed in place.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::faults::{FaultPoint, Faults};
use crate::model::ChannelId;
use crate::replace_file::Keep;
use crate::store::ChannelRecord;

/// The directories of a channel's world, in creation order.
pub const WORLD_DIRS: [&str; 5] = ["workspace", "files", "state", "memory", "profile"];

const TRASH: &str = ".trash";
const ORPHANED: &str = ".orphaned";

/// A Helm data directory.
#[derive(Debug, Clone)]
pub struct DataRoot {
    root: PathBuf,
}

impl DataRoot {
    /// The data root at `root` (not created until [`DataRoot::create`]).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataRoot { root: root.into() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The SQLite database.
    pub fn db_path(&self) -> PathBuf {
        self.root.join("helm.db")
    }

    /// The process ledger: records of the commands and terminals started
    /// on this data root (see `exec::ledger`).
    pub fn procs_dir(&self) -> PathBuf {
        self.root.join("state").join("procs")
    }

    /// Where the channel worlds live.
    pub fn channels_dir(&self) -> PathBuf {
        self.root.join("channels")
    }

    /// The world of one channel.
    pub fn world(&self, channel: ChannelId) -> ChannelWorld {
        ChannelWorld {
            root: self.channels_dir().join(channel.to_string()),
        }
    }

    /// Whether `init` has run here.
    pub fn is_initialized(&self) -> bool {
        self.db_path().is_file()
    }

    /// Creates the data root and its `channels/` directory, closed to
    /// other users from the first moment (0700), and the database file
    /// (0600) so that SQLite, which gives its `-wal` and `-shm` files the
    /// database's mode, never makes a readable one. A data root made
    /// before Helm closed it is closed here.
    pub fn create(&self) -> Result<()> {
        self.create_dirs()?;
        self.close()
    }

    /// Creates the data root and `channels/` (0700), without a database
    /// file: for a node whose store is elsewhere (Postgres).
    pub fn create_dirs(&self) -> Result<()> {
        create_private_dir(&self.root)?;
        create_private_dir(&self.channels_dir())
    }

    /// Takes group and other users' read and write bits off the data root,
    /// `channels/` and the database files, and creates the database file
    /// 0600 if it does not exist yet. (Process isolation later opens the
    /// directories for traversal only, 0711; see `helm::computer`.)
    pub fn close(&self) -> Result<()> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        for dir in [self.root.clone(), self.channels_dir()] {
            if let Ok(meta) = std::fs::metadata(&dir)
                && meta.permissions().mode() & 0o066 != 0
            {
                restrict(&dir, 0o700)?;
            }
        }
        let db = self.db_path();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&db)
            .map_err(|e| Error::io("creating the database file", &db, e))?;
        for side in ["", "-wal", "-shm", "-journal"] {
            let path = PathBuf::from(format!("{}{side}", db.display()));
            if let Ok(meta) = std::fs::metadata(&path)
                && meta.permissions().mode() & 0o077 != 0
            {
                restrict(&path, 0o600)?;
            }
        }
        Ok(())
    }

    fn trash_dir(&self) -> PathBuf {
        self.channels_dir().join(TRASH)
    }

    /// Removes worlds left in the trash by a delete that committed but was
    /// interrupted before cleaning up.
    pub fn sweep_trash(&self) {
        let trash = self.trash_dir();
        if trash.exists()
            && let Err(e) = std::fs::remove_dir_all(&trash)
        {
            tracing::warn!(path = %trash.display(), error = %e, "could not empty the trash");
        }
    }

    /// Moves a world into the trash; returns where it went.
    pub(crate) fn trash(&self, world: &ChannelWorld) -> Result<Option<PathBuf>> {
        if !world.root.exists() {
            return Ok(None);
        }
        let trash = self.trash_dir();
        std::fs::create_dir_all(&trash).map_err(|e| Error::io("creating", &trash, e))?;
        let name = world
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let target = trash.join(format!("{name}-{}", unique_suffix()));
        std::fs::rename(&world.root, &target)
            .map_err(|e| Error::io("moving to the trash", &world.root, e))?;
        Ok(Some(target))
    }

    /// Moves a world found where a new channel's world must go (left by a
    /// provisioning attempt that crashed before committing) out of the way.
    /// It is kept, not deleted: it may be someone's data.
    fn set_aside(&self, world: &ChannelWorld) -> Result<()> {
        let orphaned = self.channels_dir().join(ORPHANED);
        std::fs::create_dir_all(&orphaned).map_err(|e| Error::io("creating", &orphaned, e))?;
        let name = world
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let target = orphaned.join(format!("{name}-{}", unique_suffix()));
        tracing::warn!(
            from = %world.root.display(),
            to = %target.display(),
            "a directory with no channel was in the way; set it aside"
        );
        std::fs::rename(&world.root, &target)
            .map_err(|e| Error::io("setting aside", &world.root, e))
    }

    /// Creates the world of a channel that is being provisioned: the five
    /// directories and the human-readable profile mirror. On failure it
    /// removes what it made, so the aborted transaction leaves no trace.
    pub(crate) fn create_world(
        &self,
        record: &ChannelRecord,
        faults: &Faults,
    ) -> Result<ChannelWorld> {
        let world = self.world(record.channel.id);
        if world.root.exists() {
            self.set_aside(&world)?;
        }
        let made = (|| {
            let workspace = world.workspace();
            std::fs::create_dir_all(&workspace)
                .map_err(|e| Error::io("creating", &workspace, e))?;
            faults.check(FaultPoint::MidWorld)?;
            world.ensure(record)?;
            faults.check(FaultPoint::BeforeCommit)
        })();
        if let Err(e) = made {
            if let Err(cleanup) = std::fs::remove_dir_all(&world.root) {
                tracing::warn!(path = %world.root.display(), error = %cleanup, "could not remove a half-made world");
            }
            return Err(e);
        }
        Ok(world)
    }
}

fn unique_suffix() -> String {
    format!(
        "{}-{}",
        jiff::Timestamp::now().as_millisecond(),
        std::process::id()
    )
}

/// Creates `dir` (and missing parents) with mode 0700; an existing one is
/// left as it is (see [`DataRoot::close`]).
pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("creating the data directory", dir, e))
}

/// Sets the permission bits of `path` to `mode`.
pub(crate) fn restrict(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io("setting the mode of", path, e))
}

/// One channel's world on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelWorld {
    root: PathBuf,
}

/// What `profile/agent.json` holds: the store's record, for people to read.
#[derive(Serialize)]
struct ProfileMirror<'a> {
    note: &'static str,
    #[serde(flatten)]
    record: &'a ChannelRecord,
}

impl ChannelWorld {
    /// The world's root (`channels/<id>`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The agent's `/workspace`.
    pub fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }

    /// Reserved, and empty: uploads go to the workspace's `uploads/`,
    /// where the agent sees them. Made with the world so that older and
    /// newer worlds have one shape.
    pub fn files(&self) -> PathBuf {
        self.root.join("files")
    }

    /// Runtime state and journals.
    pub fn state(&self) -> PathBuf {
        self.root.join("state")
    }

    /// Reserved, and empty: the channel's memory lives in the store.
    pub fn memory(&self) -> PathBuf {
        self.root.join("memory")
    }

    /// The profile mirror.
    pub fn profile(&self) -> PathBuf {
        self.root.join("profile")
    }

    /// Whether every directory of the world exists.
    pub fn is_complete(&self) -> bool {
        WORLD_DIRS.iter().all(|d| self.root.join(d).is_dir())
    }

    /// Creates whatever is missing and rewrites the profile mirror.
    ///
    /// Only the server reads a world: the root may be passed through (the
    /// agent's uid reaches its workspace that way in process isolation) and
    /// every directory in it is closed to everyone else. The workspace is
    /// the agent's: its computer hands it to the agent's uid.
    pub(crate) fn ensure(&self, record: &ChannelRecord) -> Result<()> {
        for dir in WORLD_DIRS {
            let path = self.root.join(dir);
            std::fs::create_dir_all(&path).map_err(|e| Error::io("creating", &path, e))?;
            restrict(&path, 0o700)?;
        }
        restrict(&self.root, 0o711)?;
        self.write_profile(record)
    }

    /// Rewrites the profile mirror after the record changed, if this
    /// world is on this node. With nodes sharing a store, a channel's world
    /// is made where it is used; a node that has none skips, and the nodes
    /// that have one rewrite theirs when they see the change in the live
    /// feed (`Runtime::follow_other_nodes`).
    pub(crate) fn mirror_profile(&self, record: &ChannelRecord) -> Result<()> {
        if !self.profile().is_dir() {
            return Ok(());
        }
        self.write_profile(record)
    }

    /// Rewrites `profile/agent.json` from the store's record.
    pub(crate) fn write_profile(&self, record: &ChannelRecord) -> Result<()> {
        let mirror = ProfileMirror {
            note: "A read-only mirror of this agent's profile; Helm's store holds the original.",
            record,
        };
        let text = serde_json::to_string_pretty(&mirror)
            .map_err(|e| Error::Internal(format!("profile does not serialise: {e}")))?;
        let path = self.profile().join("agent.json");
        // A request and the runtime following the same change may mirror
        // the profile at once (seen on PostgreSQL): each puts a whole file
        // in place, and the last one wins.
        crate::replace_file::replace(&path, text.as_bytes(), Keep::Mirror)
            .map_err(|e| Error::io("writing", &path, e))
    }
}

/// Folders a workspace scan does not descend into: tool caches and
/// dependency trees, which are not the channel's work.
const SCAN_SKIP: [&str; 6] = [
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".cache",
];
/// The most files one scan reports.
const SCAN_MAX: usize = 5000;

/// The most directories a scan through the files port lists (each is a
/// request to a remote computer).
const SCAN_DIRS_MAX: usize = 500;

/// [`scan_workspace`] through the files port, for a workspace that is not
/// on this disk (a remote computer's): the same files, folders skipped and
/// limits, listing at most [`SCAN_DIRS_MAX`] directories.
pub async fn scan_files(files: &dyn crate::exec::Files) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![String::from("/workspace")];
    let mut listed = 0;
    while let Some(dir) = stack.pop() {
        listed += 1;
        if listed > SCAN_DIRS_MAX {
            break;
        }
        for entry in files.list(&dir).await? {
            match entry.kind {
                crate::exec::FileKind::Dir
                    if !entry.name.starts_with('.')
                        && !SCAN_SKIP.contains(&entry.name.as_str()) =>
                {
                    stack.push(entry.path);
                }
                crate::exec::FileKind::File => {
                    found.push(entry.path);
                    if found.len() >= SCAN_MAX {
                        found.sort();
                        return Ok(found);
                    }
                }
                _ => {}
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The regular files under a workspace, as the agent sees them
/// (`/workspace/...`), skipping hidden folders and dependency trees and
/// never following links. Used to pick up files made in terminals and by
/// commands as artifacts.
pub fn scan_workspace(workspace: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![(workspace.to_path_buf(), String::from("/workspace"))];
    while let Some((dir, visible)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = format!("{visible}/{name}");
            if kind.is_dir() {
                if !name.starts_with('.') && !SCAN_SKIP.contains(&name.as_str()) {
                    stack.push((entry.path(), path));
                }
            } else if kind.is_file() {
                found.push(path);
                if found.len() >= SCAN_MAX {
                    return found;
                }
            }
        }
    }
    found.sort();
    found
}
