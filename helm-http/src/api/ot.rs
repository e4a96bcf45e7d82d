//! Wire types of Open Terminal keys (managed through the normal API) and of
//! the Open Terminal protocol itself (served under
//! `/api/channels/{channel}/ot/`), whose shapes follow that protocol's.

use std::collections::BTreeMap;

use helm_core::auth as a;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A channel's Open Terminal key (never its secret).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtKey {
    /// Its id.
    pub id: i64,
    /// The channel whose computer it opens.
    pub channel_id: i64,
    /// The key's first characters, to tell keys apart.
    pub prefix: String,
    /// Who made it; the key acts with their authority while they have it.
    pub created_by: i64,
    /// When it was made.
    pub created: Timestamp,
    /// When it was last used.
    pub last_used: Option<Timestamp>,
    /// When it was revoked.
    pub revoked: Option<Timestamp>,
}

impl From<a::OtKey> for OtKey {
    fn from(k: a::OtKey) -> Self {
        OtKey {
            id: k.id,
            channel_id: k.channel_id.0,
            prefix: k.prefix,
            created_by: k.created_by.0,
            created: k.created,
            last_used: k.last_used,
            revoked: k.revoked,
        }
    }
}

/// A channel's Open Terminal endpoint and key.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtKeyState {
    /// The live key, if the channel has one.
    pub key: Option<OtKey>,
    /// The URL to give an Open Terminal client.
    pub url: String,
}

/// A key that was just made: the secret is shown this once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtKeyIssued {
    /// The key.
    pub key: OtKey,
    /// The secret to give an Open Terminal client as its API key.
    pub secret: String,
    /// The URL to give an Open Terminal client.
    pub url: String,
}

/// `{"status": "ok"}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtStatus {
    /// Always `ok` (or `deleted`, `killed`).
    pub status: String,
}

/// What the server offers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtConfig {
    /// Feature flags: `terminal` (true), `notebooks` and `system` (false).
    pub features: BTreeMap<String, bool>,
}

/// Running a command.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct OtExecRequest {
    /// The shell command.
    pub command: String,
    /// The directory to start in (default `/workspace`).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
}

/// `?wait=&tail=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtExecQuery {
    /// Seconds to wait for the command to finish before answering (0–300).
    #[serde(default)]
    #[param(minimum = 0, maximum = 300)]
    pub wait: Option<f64>,
    /// Only the last N output entries.
    #[serde(default)]
    #[param(minimum = 1)]
    pub tail: Option<u32>,
}

/// `?wait=&offset=&tail=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtStatusQuery {
    /// Seconds to wait for the command to finish before answering (0–300).
    #[serde(default)]
    #[param(minimum = 0, maximum = 300)]
    pub wait: Option<f64>,
    /// Output entries to skip: the `next_offset` of the previous answer.
    #[serde(default)]
    #[param(minimum = 0)]
    pub offset: Option<u64>,
    /// Only the last N output entries.
    #[serde(default)]
    #[param(minimum = 1)]
    pub tail: Option<u32>,
}

/// `?force=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtKillQuery {
    /// Accepted for compatibility: a kill always ends the whole process tree.
    #[serde(default)]
    pub force: Option<bool>,
}

/// A chunk of a command's output.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtOutput {
    /// `stdout` or `stderr`.
    #[serde(rename = "type")]
    pub stream: String,
    /// The text.
    pub data: String,
}

/// A command and what it has printed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtProcess {
    /// Its id.
    pub id: String,
    /// The command line.
    pub command: String,
    /// The directory it started in (in the answer to starting it only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// `running`, `done` or `killed`.
    pub status: String,
    /// The exit code once done.
    pub exit_code: Option<i32>,
    /// Output entries after `offset`.
    pub output: Vec<OtOutput>,
    /// Whether entries were left out (by `tail`, or dropped past the
    /// command's output limit).
    pub truncated: bool,
    /// Pass as `offset` to get only newer output.
    pub next_offset: u64,
}

/// A command, for listings.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtProcessInfo {
    /// Its id.
    pub id: String,
    /// The command line.
    pub command: String,
    /// `running`, `done` or `killed`.
    pub status: String,
    /// The exit code once done.
    pub exit_code: Option<i32>,
}

/// Text for a command's stdin.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct OtInputRequest {
    /// The text (include newlines).
    pub input: String,
}

/// `?directory=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtListQuery {
    /// The directory (default `/workspace`).
    #[serde(default)]
    pub directory: Option<String>,
}

/// A directory entry.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtEntry {
    /// Its name.
    pub name: String,
    /// `file` or `directory`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification, in Unix seconds.
    pub modified: f64,
    /// Whether it may be written.
    pub writable: bool,
}

/// A directory listing.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtListing {
    /// The directory.
    pub dir: String,
    /// Whether it may be written.
    pub writable: bool,
    /// Its entries, by name.
    pub entries: Vec<OtEntry>,
}

/// `?path=&start_line=&end_line=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtReadQuery {
    /// The file.
    pub path: String,
    /// The first line (1-based).
    #[serde(default)]
    #[param(minimum = 1)]
    pub start_line: Option<u32>,
    /// The last line, inclusive.
    #[serde(default)]
    #[param(minimum = 1)]
    pub end_line: Option<u32>,
}

/// Text read from a file.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtFileText {
    /// The file.
    pub path: String,
    /// Lines in the file.
    pub total_lines: usize,
    /// The lines asked for.
    pub content: String,
}

/// `?path=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtPathQuery {
    /// The path.
    pub path: String,
}

/// Writing a file.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct OtWriteRequest {
    /// The file.
    pub path: String,
    /// Its text.
    pub content: String,
}

/// A file written.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtWritten {
    /// The file.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Creating a directory.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct OtMkdirRequest {
    /// The directory.
    pub path: String,
}

/// A path, as answered by mkdir.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtPath {
    /// The path.
    pub path: String,
}

/// A deleted path.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtDeleted {
    /// The path.
    pub path: String,
    /// `file` or `directory`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// Moving a file or directory.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct OtMoveRequest {
    /// What to move.
    pub source: String,
    /// Where to.
    pub destination: String,
}

/// A move done.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtMoved {
    /// Where it was.
    pub source: String,
    /// Where it is.
    pub destination: String,
}

/// `?directory=`: where an upload goes.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtUploadQuery {
    /// The directory.
    pub directory: String,
}

/// A terminal session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtTerminal {
    /// Its id.
    pub id: String,
    /// When it was opened (RFC 3339).
    pub created_at: String,
    /// The process id of its shell's session leader.
    pub pid: u32,
}

/// `?query=&path=&regex=&case_insensitive=&include=&match_per_line=&max_results=`
/// (read from the raw query, since `include` may repeat).
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // the parameters' documentation; the handler reads the query itself
pub struct OtGrepQuery {
    /// Text or regular expression to search for.
    pub query: String,
    /// The directory or file to search in (default the workspace).
    pub path: Option<String>,
    /// Whether `query` is a regular expression (default true).
    pub regex: Option<bool>,
    /// Match regardless of case (default false).
    pub case_insensitive: Option<bool>,
    /// Globs one of which a file's name must match (repeat the parameter).
    pub include: Option<Vec<String>>,
    /// Each matching line (default), or only the names of matching files.
    pub match_per_line: Option<bool>,
    /// The most matches returned (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub max_results: Option<u32>,
}

/// A matching line (or, without `match_per_line`, a matching file).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtGrepMatch {
    /// The file.
    pub file: String,
    /// The line number (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The line, without its line break.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// What a content search found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtGrepResult {
    /// What was searched for.
    pub query: String,
    /// Where.
    pub path: String,
    /// The matches, in path and line order.
    pub matches: Vec<OtGrepMatch>,
    /// Whether the search stopped at `max_results`.
    pub truncated: bool,
}

/// `?pattern=&path=&exclude=&type=&max_results=` (read from the raw query,
/// since `exclude` may repeat).
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // the parameters' documentation; the handler reads the query itself
pub struct OtGlobQuery {
    /// A glob matched against names and paths under `path`, such as `*.py`.
    pub pattern: String,
    /// The directory to search within (default the workspace).
    pub path: Option<String>,
    /// Globs of names or paths to leave out (repeat the parameter).
    pub exclude: Option<Vec<String>>,
    /// `file`, `directory` or `any` (default).
    #[param(pattern = "^(file|directory|any)$")]
    pub r#type: Option<String>,
    /// The most matches returned (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub max_results: Option<u32>,
}

/// A name that matched.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtGlobMatch {
    /// Its path, relative to the directory searched.
    pub path: String,
    /// `file` or `directory`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its last modification, in seconds since the epoch.
    pub modified: f64,
}

/// What a name search found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OtGlobResult {
    /// The pattern.
    pub pattern: String,
    /// The directory searched.
    pub path: String,
    /// The matches.
    pub matches: Vec<OtGlobMatch>,
    /// Whether the search stopped at `max_results`.
    pub truncated: bool,
}
