//! Signing in: who a request comes from.
//!
//! People sign in with a name and a password (argon2id hashes, see
//! [`password`]); a browser then holds a session, a script an API token, and a
//! newcomer joins through an invitation. All three are long random secrets
//! handed out once ([`Issued`]) and stored only as their SHA-256 hash (see
//! [`secret`]), so a copy of the database lets nobody sign in.
//!
//! The rules (who may issue what, what a role may see) live in the facade
//! (`Helm::login`, `Helm::create_invite`, …); this module holds the records
//! and the primitives.

pub mod password;
pub mod secret;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{ChannelId, Role, User, UserId};

/// A browser session: created by signing in, ended by signing out or expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Its id (not the secret).
    pub id: i64,
    /// Whose it is.
    pub user_id: UserId,
    /// When it was created.
    pub created: Timestamp,
    /// When it stops working.
    pub expires: Timestamp,
}

/// An API token for scripts and the command line. The secret is shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiToken {
    /// Its id, used to revoke it.
    pub id: i64,
    /// Whose it is: requests made with it act as this user.
    pub user_id: UserId,
    /// What it is for, in its owner's words.
    pub name: String,
    /// The token's first characters, to tell tokens apart.
    pub prefix: String,
    /// When it was created.
    pub created: Timestamp,
    /// When it stops working, if ever.
    pub expires: Option<Timestamp>,
    /// When it was last used (updated at most once a minute).
    pub last_used: Option<Timestamp>,
    /// When it was revoked.
    pub revoked: Option<Timestamp>,
}

/// A channel's key for the Open Terminal protocol: whoever holds it uses
/// that channel's computer (commands, files, terminals) with the authority
/// of the person who made it, as long as that person still may. The secret
/// is shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtKey {
    /// Its id.
    pub id: i64,
    /// The channel whose computer it opens.
    pub channel_id: ChannelId,
    /// The key's first characters, to tell keys apart.
    pub prefix: String,
    /// Who made it.
    pub created_by: UserId,
    /// When it was made.
    pub created: Timestamp,
    /// When it was last used (updated at most once a minute).
    pub last_used: Option<Timestamp>,
    /// When it was revoked (rotated or revoked by hand).
    pub revoked: Option<Timestamp>,
}

/// An invitation to join the workspace with a role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invite {
    /// Its id, used to revoke it.
    pub id: i64,
    /// The role the newcomer gets.
    pub role: Role,
    /// Who invited.
    pub created_by: UserId,
    /// When.
    pub created: Timestamp,
    /// When it stops working.
    pub expires: Timestamp,
    /// Who accepted it, once someone has.
    pub accepted_by: Option<UserId>,
    /// When it was accepted.
    pub accepted_at: Option<Timestamp>,
    /// When it was revoked.
    pub revoked: Option<Timestamp>,
}

/// A record together with the secret that was just made for it. The secret
/// exists nowhere else: show it to its owner once.
#[derive(Debug, Clone)]
pub struct Issued<T> {
    /// The stored record.
    pub record: T,
    /// The secret (a session id, an API token or an invite code).
    pub secret: String,
}

/// Who a request comes from, once its secret has been checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The user acting.
    pub user: User,
    /// How they proved it.
    pub via: Credential,
}

/// How a request proved who it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Credential {
    /// A browser session.
    Session(i64),
    /// An API token.
    Token(i64),
}
