//! Request bodies and query parameters.

use std::collections::BTreeMap;

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

/// First-run setup: the Captain's account.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetupRequest {
    /// Login and mention name: lowercase letters, digits, `-`, `_`, `.`,
    /// starting with a letter, at most 32 characters.
    pub name: String,
    /// Shown name (default: the login name).
    #[serde(default)]
    pub display_name: Option<String>,
    /// At least 10 characters.
    pub password: String,
    /// The server's one-time setup code: printed when the server starts
    /// and kept in the file `setup-code` in its data directory (or preset by
    /// whoever started it). Without it, or with a wrong one, setup answers
    /// `403` with code `bad_setup_code`.
    #[serde(default)]
    pub setup_code: Option<String>,
}

/// Signing in.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    /// The login name.
    pub name: String,
    /// The password.
    pub password: String,
}

/// Setting a password.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordRequest {
    /// The new password (at least 10 characters).
    pub password: String,
}

/// Changing one's own password.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnPasswordRequest {
    /// The new password: at least 10 characters, at most 1024 bytes.
    pub password: String,
    /// The current password: required (and must match, `422` otherwise)
    /// unless the account has no password yet.
    #[serde(default)]
    pub current_password: Option<String>,
}

/// Changing a person: their role, whether they are active, or both (checked
/// together, applied together).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserChangeRequest {
    /// `admin` or `member` (the Captain only; the Captain's own never
    /// changes).
    #[serde(default)]
    pub role: Option<String>,
    /// `false` deactivates (sessions end, API tokens are refused), `true`
    /// reactivates. The Captain and admins, for members; only the Captain,
    /// for admins; never the Captain, never oneself.
    #[serde(default)]
    pub active: Option<bool>,
}

/// Adding a person directly (people usually join by invitation).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUserRequest {
    /// Login and mention name.
    pub name: String,
    /// `member` (default) or `admin` (the Captain only).
    #[serde(default)]
    pub role: Option<String>,
    /// A first password; without one the person cannot sign in until an
    /// admin gives them one.
    #[serde(default)]
    pub password: Option<String>,
}

/// Inviting a person.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewInviteRequest {
    /// `member` (default) or `admin` (the Captain only).
    #[serde(default)]
    pub role: Option<String>,
    /// How long the invitation stays open, in hours (default 168, at most 720).
    #[serde(default)]
    pub expires_in_hours: Option<u32>,
}

/// Checking an invitation before joining with it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInviteRequest {
    /// The invitation code.
    pub code: String,
}

/// Accepting an invitation.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptInviteRequest {
    /// The invitation code.
    pub code: String,
    /// The login name to take.
    pub name: String,
    /// Shown name (default: the login name).
    #[serde(default)]
    pub display_name: Option<String>,
    /// At least 10 characters.
    pub password: String,
}

/// Making an API token.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTokenRequest {
    /// What it is for.
    pub name: String,
    /// Days until it stops working (1 to 3650); never when absent.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 3650)]
    pub expires_in_days: Option<u32>,
}

/// Creating a channel.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewChannelRequest {
    /// Its name, such as `launch`.
    pub name: String,
    /// What the channel is all about (required).
    pub purpose: String,
    /// `public` (default) or `private`.
    #[serde(default)]
    pub visibility: Option<String>,
    /// Extra operating instructions for its agent.
    #[serde(default)]
    pub instructions: Option<String>,
    /// The computer its agent works on: one of the names `GET /api/status`
    /// lists under `computers`; absent: the workspace's default. Chosen
    /// once: the workspace lives there.
    #[serde(default)]
    pub computer: Option<String>,
}

/// Renaming a channel, or changing its purpose or its agent's instructions
/// (any of them, at least one).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelUpdateRequest {
    /// The new name, unique among live (active and archived) channels. The
    /// agent keeps its handle; `#main` keeps its name.
    #[serde(default)]
    pub name: Option<String>,
    /// The new purpose.
    #[serde(default)]
    pub purpose: Option<String>,
    /// The new operating instructions.
    #[serde(default)]
    pub instructions: Option<String>,
}

/// Adding a person to a channel.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMemberRequest {
    /// The person's id.
    pub user_id: i64,
    /// `member` (default) or `owner`.
    #[serde(default)]
    pub role: Option<String>,
}

/// Posting a message.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PostRequest {
    /// The text; mention the channel's agent (such as `@launch-agent`) to wake it.
    pub text: String,
    /// The thread to continue; a new thread starts without it.
    #[serde(default)]
    pub thread_id: Option<i64>,
}

/// Posting in a thread.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadPostRequest {
    /// The text.
    pub text: String,
}

/// Changing a thread's status by hand.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadStatusRequest {
    /// `resolved`, `open` (reopen) or `archived`.
    pub status: String,
}

/// Renaming a thread.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameThreadRequest {
    /// The new title: one line of 1 to 200 characters (trimmed).
    pub title: String,
}

/// Choosing a model at one level; `provider: null` clears the choice so the
/// level inherits.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelChoiceRequest {
    /// The provider's registry name, or null to inherit.
    pub provider: Option<String>,
    /// The model; the provider's default when absent.
    #[serde(default)]
    pub model: Option<String>,
}

/// Registering (or replacing) a provider, or trying one before it is
/// registered. Name the server's environment variable (or file) that holds
/// its key (`api_key_env`), or, when registering, give the key itself once
/// (`api_key`): the server keeps it in its data directory and never shows it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderRequest {
    /// A unique name.
    pub name: String,
    /// `openai` (and compatible servers) or `anthropic`.
    pub kind: String,
    /// The base URL, such as `https://api.openai.com/v1`.
    pub base_url: String,
    /// Where the server finds the key: its environment variable
    /// (`OPENAI_API_KEY`, or `env:OPENAI_API_KEY`), a file on it
    /// (`file:/run/secrets/openai`), or the key it keeps already for this
    /// provider (`stored:NAME`).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The key itself, to keep on the server (in the data directory's
    /// `secrets/`, readable only by the server): it is never shown again.
    /// Give this or `api_key_env`, not both.
    #[serde(default)]
    pub api_key: Option<String>,
    /// The default model.
    #[serde(default)]
    pub default_model: Option<String>,
    /// Extra headers sent with every request.
    #[serde(default)]
    pub extra_headers: BTreeMap<String, String>,
    /// Make it the workspace's default model.
    #[serde(default)]
    pub make_default: bool,
    /// Replace the provider of that name, if there is one (without it, a
    /// name already registered is 409).
    #[serde(default)]
    pub replace: bool,
}

/// `?all=`: include archived channels.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChannelListQuery {
    /// Include archived channels.
    #[serde(default)]
    pub all: bool,
}

/// `?channel=`: the channel a terminal's viewer expects it in.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TerminalSocketQuery {
    /// The channel's id the viewer expects the terminal in: a terminal of
    /// another channel is `404` (a page left open across a restart asks
    /// for an id, and is never attached to another channel's shell).
    #[serde(default)]
    pub channel: Option<i64>,
}

/// `?confirm=`: the channel's name again.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// The channel's name, to confirm a permanent deletion.
    #[serde(default)]
    pub confirm: Option<String>,
}

/// `?limit=`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LimitQuery {
    /// How many (at most 500; default 50).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
}

/// `?limit=&before_updated_at=&before_id=&archived=&q=&ids=` for a
/// channel's threads.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ThreadListQuery {
    /// How many (at most 500; default 50).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
    /// The next page: the `updated_at` of the last thread of the page
    /// before, exactly as listed; goes with `before_id`.
    #[serde(default)]
    #[param(value_type = Option<String>, format = DateTime)]
    pub before_updated_at: Option<jiff::Timestamp>,
    /// The next page: the id of the last thread of the page before; goes
    /// with `before_updated_at`.
    #[serde(default)]
    pub before_id: Option<i64>,
    /// `true`: only archived threads; `false`: all but archived ones;
    /// absent: every thread.
    #[serde(default)]
    pub archived: Option<bool>,
    /// Search: threads whose title, summary or messages hold these words,
    /// best first, each with `matched`. One ranked page (no cursor).
    #[serde(default)]
    pub q: Option<String>,
    /// These threads, by id, comma-separated (at most 100): the ones of
    /// this channel, in the order given; an id of no thread here is left
    /// out. For a view naming threads beyond the pages it loaded.
    #[serde(default)]
    #[param(example = "12,40,41")]
    pub ids: Option<String>,
}

/// `?before=&limit=` for a channel's lifecycle.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LifecycleQuery {
    /// Only events older than this one (its `seq`): the next page back.
    #[serde(default)]
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// How many of the most recent (at most 500; default 100).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
}

/// `?thread=&limit=&before=` for the tool journal.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ActivityQuery {
    /// Only this thread.
    #[serde(default)]
    #[param(minimum = 1)]
    pub thread: Option<i64>,
    /// How many of the most recent (at most 500; default 100).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
    /// The next page back: only actions older than this one (the id of the
    /// first, oldest, action of the page before). A page shorter than
    /// `limit` holds the oldest.
    #[serde(default)]
    #[param(minimum = 1)]
    pub before: Option<i64>,
}

/// `?after=&limit=` (forwards), `?before=` or `?newest=true` (backwards)
/// for message pages.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Return messages after this message id.
    #[serde(default)]
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Return the messages just before this message id (newest of them
    /// last); the page says `next_before` while there are older ones.
    #[serde(default)]
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// Return the newest messages (as `before` past the last one).
    #[serde(default)]
    pub newest: bool,
    /// How many (at most 500; default 100).
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
}

/// `?after=&limit=` for the event log.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventQuery {
    /// Return events after this sequence number (0: from the beginning;
    /// absent on a WebSocket: only new events).
    #[serde(default)]
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// How many the page may scan (at most 1000; default 500).
    #[serde(default)]
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

/// `?before=&limit=` for the channel feed.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// Return entries before this message id (the newest without it).
    #[serde(default)]
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// How many (at most 200; default 50).
    #[serde(default)]
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

/// Marking a channel read.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadRequest {
    /// The newest message of the channel the person has seen.
    pub message_id: i64,
}

/// Renaming the workspace.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceUpdateRequest {
    /// Its new name (1 to 64 characters).
    pub name: String,
}
