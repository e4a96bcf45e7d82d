//! [`AuthStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;

use super::super::{SqliteStore, auth, ot_keys};
use crate::auth::{ApiToken, Invite, OtKey, Session};
use crate::error::Result;
use crate::model::{ChannelId, User, UserId};
use crate::store::AuthStore;
use crate::store::types::{
    CaptainSetup, InviteAcceptance, NewApiToken, NewInvite, NewOtKey, UserChange,
};

#[async_trait]
impl AuthStore for SqliteStore {
    async fn setup_done(&self) -> Result<bool> {
        self.read_here(auth::setup_done).await
    }

    async fn complete_setup(&self, setup: CaptainSetup) -> Result<User> {
        self.write(move |tx| auth::complete_setup(tx.conn(), &setup))
            .await
    }

    async fn user_credentials(&self, name: &str) -> Result<Option<(User, Option<String>)>> {
        let name = name.to_string();
        self.read(move |c| auth::user_credentials(c, &name)).await
    }

    async fn set_password_hash(
        &self,
        user: UserId,
        hash: Option<String>,
        keep: Option<i64>,
    ) -> Result<()> {
        self.write(move |tx| {
            auth::set_password_hash(tx.conn(), user, hash.as_deref())?;
            auth::end_sessions_but(tx.conn(), user, keep)
        })
        .await
    }

    async fn update_user(&self, user: UserId, change: UserChange) -> Result<User> {
        self.write(move |tx| auth::update_user(tx, user, &change))
            .await
    }

    async fn insert_session(
        &self,
        user: UserId,
        secret_hash: String,
        expires: jiff::Timestamp,
    ) -> Result<Session> {
        self.write(move |tx| auth::insert_session(tx.conn(), user, &secret_hash, expires))
            .await
    }

    async fn session_user(&self, secret_hash: &str) -> Result<Option<(Session, User)>> {
        self.read_here(|c| auth::session_user(c, secret_hash)).await
    }

    async fn delete_session(&self, secret_hash: &str) -> Result<bool> {
        let hash = secret_hash.to_string();
        self.write(move |tx| auth::delete_session(tx.conn(), &hash))
            .await
    }

    async fn insert_api_token(&self, token: NewApiToken) -> Result<ApiToken> {
        self.write(move |tx| auth::insert_api_token(tx.conn(), &token))
            .await
    }

    async fn api_tokens(&self, user: UserId) -> Result<Vec<ApiToken>> {
        self.read(move |c| auth::api_tokens(c, user)).await
    }

    async fn api_token_user(&self, secret_hash: &str) -> Result<Option<(ApiToken, User)>> {
        let found = self
            .read_here(|c| auth::api_token_user(c, secret_hash))
            .await?;
        Ok(match found {
            Some((token, user, stale)) => {
                if stale {
                    let id = token.id;
                    self.write(move |tx| auth::touch_api_token(tx.conn(), id))
                        .await?;
                }
                Some((token, user))
            }
            None => None,
        })
    }

    async fn revoke_api_token(&self, user: UserId, id: i64) -> Result<ApiToken> {
        self.write(move |tx| auth::revoke_api_token(tx.conn(), user, id))
            .await
    }

    async fn insert_invite(&self, invite: NewInvite) -> Result<Invite> {
        self.write(move |tx| auth::insert_invite(tx.conn(), &invite))
            .await
    }

    async fn invites(&self) -> Result<Vec<Invite>> {
        self.read(auth::invites).await
    }

    async fn invite_by_hash(&self, secret_hash: &str) -> Result<Option<Invite>> {
        let hash = secret_hash.to_string();
        self.read(move |c| auth::invite_by_hash(c, &hash)).await
    }

    async fn revoke_invite(&self, id: i64) -> Result<Invite> {
        self.write(move |tx| auth::revoke_invite(tx.conn(), id))
            .await
    }

    async fn accept_invite(&self, acceptance: InviteAcceptance) -> Result<User> {
        self.write(move |tx| auth::accept_invite(tx, &acceptance))
            .await
    }

    async fn insert_ot_key(&self, key: NewOtKey, replace: bool) -> Result<OtKey> {
        self.write(move |tx| ot_keys::insert(tx.conn(), &key, replace))
            .await
    }

    async fn ot_key(&self, channel: ChannelId) -> Result<Option<OtKey>> {
        self.read(move |c| ot_keys::live(c, channel)).await
    }

    async fn ot_key_by_hash(&self, secret_hash: &str) -> Result<Option<OtKey>> {
        let hash = secret_hash.to_string();
        let found = self.read(move |c| ot_keys::by_hash(c, &hash)).await?;
        Ok(match found {
            Some((key, stale)) => {
                if stale {
                    let id = key.id;
                    self.write(move |tx| ot_keys::touch(tx.conn(), id)).await?;
                }
                Some(key)
            }
            None => None,
        })
    }

    async fn revoke_ot_key(&self, channel: ChannelId) -> Result<OtKey> {
        self.write(move |tx| ot_keys::revoke(tx.conn(), channel))
            .await
    }
}
