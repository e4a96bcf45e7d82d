//! Wire types of signing in: setup, sessions, tokens, invitations.

use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

use super::{Role, User};

/// Whether first-run setup is still to be done.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SetupStatus {
    /// True until the Captain has chosen a name and password.
    pub needed: bool,
    /// The workspace's name.
    pub workspace: String,
}

/// Who is signed in, and how.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Me {
    /// The person.
    pub user: User,
    /// `session` (a browser cookie) or `token` (an API token).
    pub via: String,
}

/// Whether the request carries a valid credential, and whose.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionState {
    /// The person signed in, if anyone is.
    pub user: Option<User>,
}

/// A session just opened; its secret travels in the `helm_session` cookie.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionInfo {
    /// The person signed in.
    pub user: User,
    /// When the session ends.
    pub expires: Timestamp,
}

/// An API token (never its secret).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApiToken {
    /// Its id.
    pub id: i64,
    /// What it is for.
    pub name: String,
    /// Its first characters.
    pub prefix: String,
    /// When it was made.
    pub created: Timestamp,
    /// When it stops working, if ever.
    pub expires: Option<Timestamp>,
    /// When it was last used (to the minute).
    pub last_used: Option<Timestamp>,
    /// When it was revoked.
    pub revoked: Option<Timestamp>,
}

impl From<helm_core::auth::ApiToken> for ApiToken {
    fn from(t: helm_core::auth::ApiToken) -> Self {
        ApiToken {
            id: t.id,
            name: t.name,
            prefix: t.prefix,
            created: t.created,
            expires: t.expires,
            last_used: t.last_used,
            revoked: t.revoked,
        }
    }
}

/// A new API token with its secret, shown this once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IssuedToken {
    /// The token's record.
    pub token: ApiToken,
    /// The secret: send it as `Authorization: Bearer <secret>`. It is not
    /// stored and cannot be shown again.
    pub secret: String,
}

/// An invitation (never its code).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Invite {
    /// Its id.
    pub id: i64,
    /// The role the newcomer gets.
    pub role: Role,
    /// Who invited.
    pub created_by: i64,
    /// When.
    pub created: Timestamp,
    /// When it stops working.
    pub expires: Timestamp,
    /// Who accepted it.
    pub accepted_by: Option<i64>,
    /// When.
    pub accepted_at: Option<Timestamp>,
    /// When it was revoked.
    pub revoked: Option<Timestamp>,
}

/// An invitation that can still be used, as its holder sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ValidInvite {
    /// The role the newcomer gets.
    pub role: Role,
    /// When it stops working.
    pub expires: Timestamp,
}

impl From<helm_core::auth::Invite> for Invite {
    fn from(i: helm_core::auth::Invite) -> Self {
        Invite {
            id: i.id,
            role: i.role.into(),
            created_by: i.created_by.0,
            created: i.created,
            expires: i.expires,
            accepted_by: i.accepted_by.map(|u| u.0),
            accepted_at: i.accepted_at,
            revoked: i.revoked,
        }
    }
}

/// A new invitation with its code, shown this once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IssuedInvite {
    /// The invitation.
    pub invite: Invite,
    /// The code the newcomer accepts it with.
    pub code: String,
    /// A link to accept it, when the server knows its public URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}
