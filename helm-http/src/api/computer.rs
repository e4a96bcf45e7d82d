//! Mirrors of helm-core's file entries, artifacts and terminals, and the
//! requests of the files, artifacts and terminals routes.

use helm_core::exec as x;
use helm_core::model as m;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// What kind of thing a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl From<x::FileKind> for FileKind {
    fn from(kind: x::FileKind) -> Self {
        match kind {
            x::FileKind::File => FileKind::File,
            x::FileKind::Dir => FileKind::Dir,
            x::FileKind::Symlink => FileKind::Symlink,
            x::FileKind::Other => FileKind::Other,
        }
    }
}

/// A file or directory of a channel's workspace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileEntry {
    /// The path as the agent sees it (`/workspace/...`).
    pub path: String,
    /// The last component of the path.
    pub name: String,
    /// What it is.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits (`420` is `0o644`).
    pub mode: u32,
    /// Number of hard links.
    pub links: u64,
    /// Last modification.
    pub modified: Option<Timestamp>,
    /// Where a symbolic link points (as written in the link).
    pub link_target: Option<String>,
    /// The contents' version, when the server just wrote them (a save
    /// answers it): give it back as `base_version` on the next save.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl From<x::FileEntry> for FileEntry {
    fn from(e: x::FileEntry) -> Self {
        FileEntry {
            path: e.path,
            name: e.name,
            kind: e.kind.into(),
            size: e.size,
            mode: e.mode,
            links: e.links,
            modified: e.modified,
            link_target: e.link_target,
            version: None,
        }
    }
}

/// Text read from a file.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FileText {
    /// The agent-visible path.
    pub path: String,
    /// The lines read, each with its newline.
    pub content: String,
    /// The first line returned (1-based; 0 when none was).
    pub start_line: usize,
    /// The last line returned.
    pub end_line: usize,
    /// Lines in the file (counted up to where reading stopped).
    pub total_lines: usize,
    /// Whether reading stopped at the 1 MiB limit before the range ended.
    pub truncated: bool,
    /// The whole file's version, when it was read whole: give it back as
    /// `base_version` when saving, to be told (409) if someone saved it
    /// meanwhile instead of replacing their work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl From<x::FileText> for FileText {
    fn from(t: x::FileText) -> Self {
        // Read whole when it starts at line 1 and nothing was left out.
        let whole = !t.truncated && t.start_line <= 1 && t.end_line == t.total_lines;
        FileText {
            version: whole.then(|| x::content_version(t.content.as_bytes())),
            path: t.path,
            content: t.content,
            start_line: t.start_line,
            end_line: t.end_line,
            total_lines: t.total_lines,
            truncated: t.truncated,
        }
    }
}

/// What an artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    /// A file in the channel's workspace.
    File,
    /// A file uploaded by a person.
    Upload,
    /// A URL or service outside the workspace.
    Link,
}

impl From<m::ArtifactKind> for ArtifactKind {
    fn from(kind: m::ArtifactKind) -> Self {
        match kind {
            m::ArtifactKind::File => ArtifactKind::File,
            m::ArtifactKind::Upload => ArtifactKind::Upload,
            m::ArtifactKind::Link => ArtifactKind::Link,
        }
    }
}

/// A file or output a channel's work produced.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Artifact {
    /// Its id.
    pub id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The thread that made it, if known.
    pub thread_id: Option<i64>,
    /// Its agent-visible path (`/workspace/...`) or its URL.
    pub path: String,
    /// File, upload or link.
    pub kind: ArtifactKind,
    /// Who made it (`@launch-agent`, a person's name, or `terminal`).
    pub created_by: String,
    /// When it was first recorded.
    pub created: Timestamp,
}

impl From<m::Artifact> for Artifact {
    fn from(a: m::Artifact) -> Self {
        Artifact {
            id: a.id.0,
            channel_id: a.channel_id.0,
            thread_id: a.thread_id.map(|t| t.0),
            path: a.path,
            kind: a.kind.into(),
            created_by: a.created_by,
            created: a.created,
        }
    }
}

/// An uploaded file and the artifact it was recorded as.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Upload {
    /// The file as it now is in the workspace.
    pub file: FileEntry,
    /// Its artifact (kind `upload`).
    pub artifact: Artifact,
}

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct TerminalSize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

/// An open terminal.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Terminal {
    /// Its id.
    pub id: u64,
    /// The channel whose computer it runs in.
    pub channel_id: Option<i64>,
    /// The isolation it runs under: `bubblewrap`, `process` or `host`.
    pub isolation: String,
    /// Its current size.
    pub size: TerminalSize,
    /// When it was opened.
    pub started: Timestamp,
    /// Whether its shell is still running.
    pub running: bool,
    /// The shell's exit code, once it has ended.
    pub exit_code: Option<i32>,
    /// The id of the person who opened it, when a person did.
    pub opened_by: Option<i64>,
    /// Its number among its channel's terminals since the server started
    /// (1, 2, …, never reused while it runs): what people call it, "Shell
    /// 2". Ids are unique across restarts but large.
    pub number: Option<u32>,
}

impl From<x::TerminalInfo> for Terminal {
    fn from(t: x::TerminalInfo) -> Self {
        Terminal {
            id: t.id,
            channel_id: t.channel.map(|c| c.0),
            isolation: t.isolation.as_str().to_string(),
            size: TerminalSize {
                rows: t.size.rows,
                cols: t.size.cols,
            },
            started: t.started,
            running: t.running,
            exit_code: t.exit_code,
            opened_by: t.opened_by.map(|u| u.0),
            number: t.number,
        }
    }
}

/// `?path=`: a path in the workspace.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PathQuery {
    /// An agent-visible path (`/workspace/notes.md` or `notes.md`); the
    /// workspace itself when absent.
    #[serde(default)]
    pub path: Option<String>,
}

/// `?path=&start=&end=`: which lines of a file to read.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReadQuery {
    /// The file.
    pub path: String,
    /// The first line (1-based; default 1).
    #[serde(default)]
    #[param(minimum = 1)]
    pub start: Option<u32>,
    /// The last line, inclusive (default: to the end).
    #[serde(default)]
    #[param(minimum = 1)]
    pub end: Option<u32>,
}

/// `?path=`: the file to download.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DownloadQuery {
    /// The file.
    pub path: String,
}

/// `?path=&recursive=`: what to delete.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeleteFileQuery {
    /// The file, link or directory.
    pub path: String,
    /// Delete a directory with everything in it (default: only an empty one).
    #[serde(default)]
    pub recursive: Option<bool>,
}

/// `?dir=&name=`: where an upload goes.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// The directory to upload into (default `/workspace/uploads`).
    #[serde(default)]
    pub dir: Option<String>,
    /// The file's name: required for a raw body; for a multipart form, it
    /// replaces the part's own file name.
    #[serde(default)]
    pub name: Option<String>,
    /// What to do with a name that exists: `replace` it (the default),
    /// `refuse` the whole upload (409, before anything is written), or
    /// `keep_both` (the upload takes the first free name: `plan-2.md`, …).
    #[serde(default)]
    #[param(inline)]
    pub exists: IfExists,
}

/// What an upload does with a name that is taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IfExists {
    /// The upload replaces the file.
    #[default]
    Replace,
    /// The whole upload is refused (409) before anything is written.
    Refuse,
    /// The upload takes the first free numbered name (`plan-2.md`, …).
    KeepBoth,
}

/// A multipart upload: one or more parts named `file`, each with a file name.
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file's bytes.
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
}

/// Writing a text file.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileRequest {
    /// The file (created with its parent directories when missing).
    pub path: String,
    /// Its new contents.
    pub content: String,
    /// Replace it only if it still has this version (as read, or as the
    /// last save answered): 409 if someone saved it meanwhile, the file
    /// left as it is.
    #[serde(default)]
    pub base_version: Option<String>,
    /// Only create: when true, a path that exists is refused (409) and
    /// left as it was, and a new file appears whole or not at all.
    #[serde(default)]
    pub create: bool,
}

/// A quick note, saved as a new Markdown file in `/workspace/notes`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteRequest {
    /// The note's Markdown (at most 1 MiB).
    #[serde(default)]
    pub text: String,
    /// A title: the note's first line (`# title`) and its file name (one
    /// line, at most 200 characters). Without one, the name comes from the
    /// text's first line.
    #[serde(default)]
    pub title: Option<String>,
}

/// Creating a directory.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MkdirRequest {
    /// The directory (its missing parents are made too).
    pub path: String,
}

/// Moving (renaming) a file or directory.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    /// What to move.
    pub from: String,
    /// Where to (must not exist).
    pub to: String,
}

/// `?thread=`: one thread's artifacts.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ArtifactQuery {
    /// Only this thread's.
    #[serde(default)]
    #[param(minimum = 1)]
    pub thread: Option<i64>,
}

/// Opening a terminal.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenTerminalRequest {
    /// Rows (default 24).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 500)]
    pub rows: Option<u16>,
    /// Columns (default 80).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub cols: Option<u16>,
}
