//! Plain, immutable records handed to Python: snapshots of core values with
//! Python types (`str`, `int`, `datetime`, `None`). They hold no connection
//! to the workspace; the live objects (`Channel`, `Thread`) are elsewhere.

use helm_core::exec as x;
use helm_core::memory::recall as r;
use helm_core::model as m;
use helm_core::provider as p;
use jiff::Timestamp;
use pyo3::prelude::*;

/// A person of the workspace.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct User {
    /// Their id.
    pub id: i64,
    /// Their unique name.
    pub name: String,
    /// The name shown for them.
    pub display_name: String,
    /// `captain`, `admin` or `member`.
    pub role: String,
    /// False once they are deactivated (they cannot sign in or act).
    pub active: bool,
}

#[pymethods]
impl User {
    fn __repr__(&self) -> String {
        format!("User(name={:?}, role={:?})", self.name, self.role)
    }
}

impl From<m::User> for User {
    fn from(u: m::User) -> Self {
        User {
            id: u.id.0,
            name: u.name,
            display_name: u.display_name,
            role: u.role.as_str().to_string(),
            active: u.deactivated.is_none(),
        }
    }
}

/// The tokens a run's model calls used, as the providers reported them.
#[pyclass(frozen, get_all, eq, module = "onehelm")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens, over every model call.
    pub input_tokens: u64,
    /// Completion tokens, over every model call.
    pub output_tokens: u64,
}

#[pymethods]
impl Usage {
    /// Both counts together.
    #[getter]
    fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    fn __repr__(&self) -> String {
        format!(
            "Usage(input_tokens={}, output_tokens={})",
            self.input_tokens, self.output_tokens
        )
    }
}

impl From<helm_core::provider::Usage> for Usage {
    fn from(u: helm_core::provider::Usage) -> Self {
        Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

/// The model that serves a channel's turns, and the level that chose it.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct Model {
    /// The provider's registry name.
    pub provider: String,
    /// The model; `None` means the provider's default.
    pub model: Option<String>,
    /// `session`, `channel`, `workspace`, `fallback`, or `turn` for the
    /// model that served a finished turn.
    pub level: String,
}

#[pymethods]
impl Model {
    fn __repr__(&self) -> String {
        format!(
            "Model(provider={:?}, model={}, level={:?})",
            self.provider,
            optional(self.model.as_ref()),
            self.level
        )
    }
}

impl From<m::ResolvedModel> for Model {
    fn from(r: m::ResolvedModel) -> Self {
        Model {
            provider: r.choice.provider,
            model: r.choice.model,
            level: r.level.as_str().to_string(),
        }
    }
}

impl Model {
    /// The model a turn or message was served by.
    pub fn served(choice: m::ModelChoice) -> Self {
        Model {
            provider: choice.provider,
            model: choice.model,
            level: "turn".to_string(),
        }
    }
}

/// One message of a thread.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct Message {
    /// Its id.
    pub id: i64,
    /// Its thread.
    pub thread_id: Option<i64>,
    /// `human`, `agent`, `system` or `guest`.
    pub author_kind: String,
    /// Who wrote it: a person's name, an agent's `@handle`, or `helm`.
    pub author: String,
    /// Its text.
    pub text: String,
    /// `complete`, `streaming`, `failed`, `stopped`, …
    pub status: String,
    /// The model that wrote it (agent messages).
    pub model: Option<Model>,
    /// When it was posted.
    pub created: Timestamp,
}

#[pymethods]
impl Message {
    fn __repr__(&self) -> String {
        format!(
            "Message(author={:?}, text={:?})",
            self.author,
            clip(&self.text)
        )
    }
}

impl From<m::Message> for Message {
    fn from(msg: m::Message) -> Self {
        let author_kind = match &msg.author {
            m::Author::Human { .. } => "human",
            m::Author::Agent { .. } => "agent",
            m::Author::System => "system",
            m::Author::Guest { .. } => "guest",
        };
        Message {
            id: msg.id.0,
            thread_id: msg.thread_id.map(|t| t.0),
            author_kind: author_kind.to_string(),
            author: msg.author.display(),
            text: msg.content,
            status: msg.status.as_str().to_string(),
            model: msg.served_by.map(Model::served),
            created: msg.created,
        }
    }
}

/// One journaled tool call of an agent.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct ToolAction {
    /// Its id in the journal.
    pub id: i64,
    /// The tool's name.
    pub tool: String,
    /// What it was asked to do, summarised.
    pub input: String,
    /// What came of it, summarised.
    pub result: String,
    /// What it gave back to the agent (a command's exit code and output),
    /// cut to 8 KiB; `None` while it runs or when it said no more.
    pub output: Option<String>,
    /// `running`, `ok`, `error`, `denied`, …
    pub status: String,
    /// How long it took, in milliseconds.
    pub duration_ms: Option<i64>,
    /// Its thread.
    pub thread_id: Option<i64>,
    /// Its turn.
    pub turn_id: Option<i64>,
    /// When it started.
    pub created: Timestamp,
}

#[pymethods]
impl ToolAction {
    fn __repr__(&self) -> String {
        format!("ToolAction(tool={:?}, status={:?})", self.tool, self.status)
    }
}

impl From<m::ToolAction> for ToolAction {
    fn from(a: m::ToolAction) -> Self {
        ToolAction {
            id: a.id.0,
            tool: a.tool,
            input: a.input_summary,
            result: a.result_summary,
            output: a.output,
            status: a.status.as_str().to_string(),
            duration_ms: a.duration_ms,
            thread_id: a.thread_id.map(|t| t.0),
            turn_id: a.turn_id.map(|t| t.0),
            created: a.created,
        }
    }
}

/// A record of a channel's memory.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct MemoryItem {
    /// Its id.
    pub id: i64,
    /// `decision`, `fact`, `preference`, `summary` or `artifact_ref`.
    pub kind: String,
    /// Its text.
    pub text: String,
    /// `channel`, `thread` or `workspace`.
    pub scope: String,
    /// `current`, `superseded` or `forgotten`.
    pub status: String,
    /// The thread it came from.
    pub thread_id: Option<i64>,
    /// Who wrote it (a person's name or an agent's handle), if known.
    pub author: Option<String>,
    /// Whether it is always in the agent's context.
    pub pinned: bool,
    /// When it was recorded.
    pub created: Timestamp,
    /// Who forgot it, while it is forgotten (unknown for records forgotten
    /// before Helm kept this).
    pub forgotten_by: Option<String>,
    /// When it was forgotten, while it is forgotten.
    pub forgotten_at: Option<Timestamp>,
}

#[pymethods]
impl MemoryItem {
    fn __repr__(&self) -> String {
        format!(
            "MemoryItem(kind={:?}, text={:?})",
            self.kind,
            clip(&self.text)
        )
    }
}

impl From<m::MemoryItem> for MemoryItem {
    fn from(i: m::MemoryItem) -> Self {
        MemoryItem {
            id: i.id.0,
            kind: i.kind.as_str().to_string(),
            text: i.content,
            scope: i.scope.as_str().to_string(),
            status: i.status.as_str().to_string(),
            thread_id: i.thread_id.map(|t| t.0),
            author: i.author_name,
            pinned: i.pinned,
            created: i.created,
            forgotten_by: i.forgotten_by,
            forgotten_at: i.forgotten_at,
        }
    }
}

/// One thing recall found: a memory record or a message, with provenance.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct RecallHit {
    /// `message`, or the memory record's kind (`decision`, `fact`, …).
    pub kind: String,
    /// The record's or the message's id.
    pub id: i64,
    /// Its fused score (higher is better).
    pub score: f64,
    /// Its text.
    pub text: String,
    /// The thread it belongs to.
    pub thread_id: Option<i64>,
    /// That thread's title.
    pub thread_title: Option<String>,
    /// Who wrote it, if known.
    pub author: Option<String>,
    /// When.
    pub created: Timestamp,
}

#[pymethods]
impl RecallHit {
    fn __repr__(&self) -> String {
        format!(
            "RecallHit(kind={:?}, score={:.3}, text={:?})",
            self.kind,
            self.score,
            clip(&self.text)
        )
    }
}

impl From<r::RecallHit> for RecallHit {
    fn from(h: r::RecallHit) -> Self {
        RecallHit {
            kind: h.kind,
            id: h.id,
            score: h.score,
            text: h.content,
            thread_id: h.thread.as_ref().map(|t| t.id.0),
            thread_title: h.thread.map(|t| t.title),
            author: h.author,
            created: h.created,
        }
    }
}

/// An entry of a channel's workspace.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct FileEntry {
    /// Its path as the agent sees it (`/workspace/...`).
    pub path: String,
    /// Its last component.
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it last changed.
    pub modified: Option<Timestamp>,
}

#[pymethods]
impl FileEntry {
    fn __repr__(&self) -> String {
        format!(
            "FileEntry(path={:?}, kind={:?}, size={})",
            self.path, self.kind, self.size
        )
    }
}

impl From<x::FileEntry> for FileEntry {
    fn from(e: x::FileEntry) -> Self {
        let kind = match e.kind {
            x::FileKind::File => "file",
            x::FileKind::Dir => "dir",
            x::FileKind::Symlink => "symlink",
            x::FileKind::Other => "other",
        };
        FileEntry {
            path: e.path,
            name: e.name,
            kind: kind.to_string(),
            size: e.size,
            modified: e.modified,
        }
    }
}

/// What a command run in a channel's computer did.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct CommandResult {
    /// Its exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The tail of its standard output.
    pub stdout: String,
    /// The tail of its standard error.
    pub stderr: String,
    /// Whether either stream was cut to its tail.
    pub truncated: bool,
    /// Whether it was killed for running past its timeout.
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The isolation it ran under: `bubblewrap`, `process` or `host`.
    pub isolation: String,
}

#[pymethods]
impl CommandResult {
    /// Whether it exited with 0.
    #[getter]
    fn ok(&self) -> bool {
        self.exit_code == Some(0)
    }

    fn __repr__(&self) -> String {
        let mut shown = format!("CommandResult(exit_code={}", optional(self.exit_code));
        if let Some(signal) = self.signal {
            shown.push_str(&format!(", signal={signal}"));
        }
        if self.timed_out {
            shown.push_str(", timed_out=True");
        }
        shown.push_str(&format!(", stdout={:?})", clip(&self.stdout)));
        shown
    }
}

impl From<x::CommandResult> for CommandResult {
    fn from(c: x::CommandResult) -> Self {
        CommandResult {
            exit_code: c.exit_code,
            signal: c.signal,
            stdout: c.stdout,
            stderr: c.stderr,
            truncated: c.truncated,
            timed_out: c.timed_out,
            duration_ms: c.duration_ms,
            isolation: c.isolation.as_str().to_string(),
        }
    }
}

/// A request for the Captain's (or an admin's) approval.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct Approval {
    /// Its id.
    pub id: i64,
    /// What kind of action: `host_command`, `install_package`, …
    pub action: String,
    /// Exactly what would be done.
    pub summary: String,
    /// Why the agent asks.
    pub reason: String,
    /// `pending`, `approved`, `denied` or `expired`.
    pub status: String,
    /// The thread it was asked in.
    pub thread_id: Option<i64>,
    /// When it expires (denied if undecided).
    pub expires: Timestamp,
}

#[pymethods]
impl Approval {
    fn __repr__(&self) -> String {
        format!(
            "Approval(id={}, action={:?}, status={:?})",
            self.id, self.action, self.status
        )
    }
}

impl From<m::Approval> for Approval {
    fn from(a: m::Approval) -> Self {
        Approval {
            id: a.id,
            action: a.action.as_str().to_string(),
            summary: a.summary,
            reason: a.reason,
            status: a.status.as_str().to_string(),
            thread_id: a.thread_id.map(|t| t.0),
            expires: a.expires,
        }
    }
}

/// A model provider's configuration (never a secret).
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct ProviderInfo {
    /// Its registry name.
    pub name: String,
    /// `openai` (any OpenAI-compatible server) or `anthropic`.
    pub kind: String,
    /// Its base URL.
    pub base_url: String,
    /// The environment variable that holds its key, if the key is kept in one.
    pub api_key_env: Option<String>,
    /// Where its key is kept, whatever the place: `env:VAR`, `file:/path` or
    /// `stored:NAME` (never the key itself).
    pub api_key_ref: Option<String>,
    /// The model used when a choice names none.
    pub default_model: Option<String>,
}

#[pymethods]
impl ProviderInfo {
    fn __repr__(&self) -> String {
        format!("ProviderInfo(name={:?}, kind={:?})", self.name, self.kind)
    }
}

impl From<p::ProviderConfig> for ProviderInfo {
    fn from(c: p::ProviderConfig) -> Self {
        ProviderInfo {
            name: c.name,
            kind: c.kind.as_str().to_string(),
            base_url: c.base_url,
            api_key_env: match &c.api_key {
                Some(p::ApiKeyRef::Env(var)) => Some(var.clone()),
                _ => None,
            },
            api_key_ref: c.api_key.map(|k| k.to_string()),
            default_model: c.default_model,
        }
    }
}

/// An optional value as Python shows it: the value, or `None` (Rust's
/// `Some(3)` means nothing to a Python reader).
pub fn optional<T: std::fmt::Debug>(value: Option<T>) -> String {
    value.map_or_else(|| "None".to_string(), |v| format!("{v:?}"))
}

/// The first line of a text, cut to a length a `repr` can show.
pub fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 60 || text.contains('\n') {
        let cut: String = line.chars().take(60).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// Adds the record classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<User>()?;
    module.add_class::<Model>()?;
    module.add_class::<Usage>()?;
    module.add_class::<Message>()?;
    module.add_class::<ToolAction>()?;
    module.add_class::<MemoryItem>()?;
    module.add_class::<RecallHit>()?;
    module.add_class::<FileEntry>()?;
    module.add_class::<CommandResult>()?;
    module.add_class::<Approval>()?;
    module.add_class::<ProviderInfo>()?;
    module.add_class::<ThreadInfo>()?;
    module.add_class::<ImportReport>()?;
    Ok(())
}

/// A thread (session) as it was when read.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct ThreadInfo {
    /// Its id.
    pub id: i64,
    /// Its channel.
    pub channel_id: i64,
    /// Its title (the start of its first message).
    pub title: String,
    /// `open`, `waiting`, `resolved`, `failed` or `archived`.
    pub status: String,
    /// Its rolling working summary.
    pub summary: String,
    /// When it was opened.
    pub opened_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

#[pymethods]
impl ThreadInfo {
    fn __repr__(&self) -> String {
        format!(
            "ThreadInfo(id={}, title={:?}, status={:?})",
            self.id,
            clip(&self.title),
            self.status
        )
    }
}

impl From<m::Thread> for ThreadInfo {
    fn from(t: m::Thread) -> Self {
        ThreadInfo {
            id: t.id.0,
            channel_id: t.channel_id.0,
            title: t.title,
            status: t.status.as_str().to_string(),
            summary: t.summary,
            opened_at: t.opened_at,
            updated_at: t.updated_at,
        }
    }
}

/// What a history import added.
#[pyclass(frozen, get_all, module = "onehelm")]
#[derive(Clone)]
pub struct ImportReport {
    /// Threads created.
    pub threads: usize,
    /// Messages created.
    pub messages: usize,
    /// Memory records created.
    pub memories: usize,
}

#[pymethods]
impl ImportReport {
    fn __repr__(&self) -> String {
        format!(
            "ImportReport(threads={}, messages={}, memories={})",
            self.threads, self.messages, self.memories
        )
    }
}

impl From<helm_core::memory::import::ImportReport> for ImportReport {
    fn from(r: helm_core::memory::import::ImportReport) -> Self {
        ImportReport {
            threads: r.threads,
            messages: r.messages,
            memories: r.memories,
        }
    }
}
