//! The [`AuthStore`] port: signing in: first-run setup, passwords, sessions,
//! API tokens, invitations and Open Terminal keys.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::auth::{ApiToken, Invite, OtKey, Session};
use crate::error::Result;
use crate::model::{ChannelId, User, UserId};
use crate::store::types::{
    CaptainSetup, InviteAcceptance, NewApiToken, NewInvite, NewOtKey, UserChange,
};

/// Signing in: first-run setup, passwords, sessions, API tokens, invitations
/// and Open Terminal keys.
#[async_trait]
pub trait AuthStore: Send + Sync + 'static {
    /// Whether first-run setup is done (the Captain has a password).
    async fn setup_done(&self) -> Result<bool>;

    /// Completes first-run setup: names the Captain and sets their password,
    /// only while the Captain has none ([`Error::Conflict`](crate::Error) after).
    async fn complete_setup(&self, setup: CaptainSetup) -> Result<User>;

    /// A user and their password hash (if they have one), by name.
    async fn user_credentials(&self, name: &str) -> Result<Option<(User, Option<String>)>>;

    /// Sets or clears a user's password hash, and ends their sessions but
    /// `keep` (the one the change was made from, if any), in one
    /// transaction: whoever held the old password is signed out.
    async fn set_password_hash(
        &self,
        user: UserId,
        hash: Option<String>,
        keep: Option<i64>,
    ) -> Result<()>;

    /// Changes a person's role and/or whether they are active, in one
    /// transaction with a journal entry for each change made (none when
    /// nothing changes). Deactivating ends their sessions. The Captain's
    /// role and standing never change ([`Error::Refused`](crate::Error)),
    /// nor is anyone made Captain.
    async fn update_user(&self, user: UserId, change: UserChange) -> Result<User>;

    /// Stores a session (and drops expired ones).
    async fn insert_session(
        &self,
        user: UserId,
        secret_hash: String,
        expires: Timestamp,
    ) -> Result<Session>;

    /// The unexpired session with this secret hash, with its user.
    async fn session_user(&self, secret_hash: &str) -> Result<Option<(Session, User)>>;

    /// Ends a session; false if there was none.
    async fn delete_session(&self, secret_hash: &str) -> Result<bool>;

    /// Stores an API token.
    async fn insert_api_token(&self, token: NewApiToken) -> Result<ApiToken>;

    /// A user's API tokens, revoked ones included, oldest first.
    async fn api_tokens(&self, user: UserId) -> Result<Vec<ApiToken>>;

    /// The live (unrevoked, unexpired) API token with this secret hash, with
    /// its user; records the use.
    async fn api_token_user(&self, secret_hash: &str) -> Result<Option<(ApiToken, User)>>;

    /// Revokes one of `user`'s API tokens.
    async fn revoke_api_token(&self, user: UserId, id: i64) -> Result<ApiToken>;

    /// Stores an invitation.
    async fn insert_invite(&self, invite: NewInvite) -> Result<Invite>;

    /// Every invitation, newest first.
    async fn invites(&self) -> Result<Vec<Invite>>;

    /// The invitation whose code hashes to `secret_hash`, whatever its
    /// state (used, revoked and expired ones too).
    async fn invite_by_hash(&self, secret_hash: &str) -> Result<Option<Invite>>;

    /// Revokes an unused invitation.
    async fn revoke_invite(&self, id: i64) -> Result<Invite>;

    /// Accepts a live invitation: adds the person with the invitation's role
    /// and marks it used, in one transaction.
    async fn accept_invite(&self, acceptance: InviteAcceptance) -> Result<User>;

    /// Stores a channel's Open Terminal key. With `replace`, its live key
    /// is revoked in the same transaction; without, a live key is a
    /// [`Error::Conflict`](crate::Error).
    async fn insert_ot_key(&self, key: NewOtKey, replace: bool) -> Result<OtKey>;

    /// A channel's live Open Terminal key, if any.
    async fn ot_key(&self, channel: ChannelId) -> Result<Option<OtKey>>;

    /// The live Open Terminal key with this secret hash; records the use.
    async fn ot_key_by_hash(&self, secret_hash: &str) -> Result<Option<OtKey>>;

    /// Revokes a channel's live Open Terminal key.
    async fn revoke_ot_key(&self, channel: ChannelId) -> Result<OtKey>;
}
