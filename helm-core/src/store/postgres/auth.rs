//! [`AuthStore`] for [`PostgresStore`]: password hashes, sessions, API
//! tokens, invitations and Open Terminal keys, as the SQLite store keeps
//! them. Secrets arrive already hashed; nothing here sees one.

use async_trait::async_trait;
use jiff::Timestamp;
use tokio_postgres::Row;

use super::channels::record::record_journal;
use super::codec::{USER, WORKSPACE, now, opt_ts, parsed, ts, user_at};
use super::{PostgresStore, failed};
use crate::auth::{ApiToken, Invite, OtKey, Session};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{ChannelId, Role, User, UserId};
use crate::store::AuthStore;
use crate::store::postgres::prepared::Db;
use crate::store::types::{
    CaptainSetup, InviteAcceptance, NewApiToken, NewInvite, NewOtKey, UserChange,
};

/// How long a token's or key's recorded last use may lag; bounds writes on
/// the hot path of every authenticated request.
const LAST_USED_GRANULARITY_MS: i64 = 60_000;

const TOKEN: &str =
    "t.id, t.user_id, t.name, t.prefix, t.created, t.expires, t.last_used, t.revoked";

fn token_at(row: &Row) -> Result<ApiToken> {
    Ok(ApiToken {
        id: row.get(0),
        user_id: UserId(row.get(1)),
        name: row.get(2),
        prefix: row.get(3),
        created: ts(row, 4)?,
        expires: opt_ts(row, 5)?,
        last_used: opt_ts(row, 6)?,
        revoked: opt_ts(row, 7)?,
    })
}

const INVITE: &str =
    "i.id, i.role, i.created_by, i.created, i.expires, i.accepted_by, i.accepted_at, i.revoked";

fn invite_at(row: &Row) -> Result<Invite> {
    Ok(Invite {
        id: row.get(0),
        role: parsed(row, 1)?,
        created_by: UserId(row.get(2)),
        created: ts(row, 3)?,
        expires: ts(row, 4)?,
        accepted_by: row.get::<_, Option<i64>>(5).map(UserId),
        accepted_at: opt_ts(row, 6)?,
        revoked: opt_ts(row, 7)?,
    })
}

const OT_KEY: &str =
    "k.id, k.channel_id, k.prefix, k.created_by, k.created, k.last_used, k.revoked";

fn ot_key_at(row: &Row) -> Result<OtKey> {
    Ok(OtKey {
        id: row.get(0),
        channel_id: ChannelId(row.get(1)),
        prefix: row.get(2),
        created_by: UserId(row.get(3)),
        created: ts(row, 4)?,
        last_used: opt_ts(row, 5)?,
        revoked: opt_ts(row, 6)?,
    })
}

/// Whether a recorded last use is old enough to record again.
fn stale(last_used: Option<Timestamp>, at: Timestamp) -> bool {
    last_used.is_none_or(|t| at.as_millisecond() - t.as_millisecond() >= LAST_USED_GRANULARITY_MS)
}

impl PostgresStore {
    async fn token(&self, id: i64) -> Result<ApiToken> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {TOKEN} FROM api_tokens t WHERE t.id = $1"),
                &[&id],
            )
            .await
            .map_err(failed("reading an API token"))?
            .ok_or_else(|| Error::not_found("API token", id))?;
        token_at(&row)
    }

    async fn invite(&self, id: i64) -> Result<Invite> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {INVITE} FROM invites i WHERE i.id = $1"),
                &[&id],
            )
            .await
            .map_err(failed("reading an invitation"))?
            .ok_or_else(|| Error::not_found("invitation", id))?;
        invite_at(&row)
    }
}

#[async_trait]
impl AuthStore for PostgresStore {
    async fn setup_done(&self) -> Result<bool> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT password_hash IS NOT NULL FROM users
                     WHERE workspace_id = {WORKSPACE} AND role = 'captain'"
                ),
                &[],
            )
            .await
            .map_err(failed("reading whether setup is done"))?;
        Ok(row.is_some_and(|r| r.get(0)))
    }

    async fn complete_setup(&self, setup: CaptainSetup) -> Result<User> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE users u SET name = $1, display_name = $2, password_hash = $3
                     WHERE u.workspace_id = {WORKSPACE} AND u.role = 'captain'
                       AND u.password_hash IS NULL
                     RETURNING {USER}"
                ),
                &[&setup.name, &setup.display_name, &setup.password_hash],
            )
            .await
            .map_err(failed("completing setup"))?
            .ok_or_else(|| {
                Error::Conflict("setup is already complete; sign in as the Captain".into())
            })?;
        user_at(&row, 0)
    }

    async fn user_credentials(&self, name: &str) -> Result<Option<(User, Option<String>)>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT {USER}, u.password_hash FROM users u
                     WHERE u.workspace_id = {WORKSPACE} AND u.name = $1"
                ),
                &[&name],
            )
            .await
            .map_err(failed("reading a user's credentials"))?;
        row.map(|r| Ok((user_at(&r, 0)?, r.get(6)))).transpose()
    }

    async fn update_user(&self, id: UserId, change: UserChange) -> Result<User> {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("changing a person"))?;
        // Locked, so two changes to one person apply one after the other.
        let before = tx
            .query_opt(
                &format!("SELECT {USER} FROM users u WHERE u.id = $1 FOR UPDATE"),
                &[&id.get()],
            )
            .await
            .map_err(failed("reading a user"))?
            .ok_or_else(|| Error::not_found("user", id))?;
        let before = user_at(&before, 0)?;
        let role = change.role.unwrap_or(before.role);
        if before.role == Role::Captain && (role != Role::Captain || change.active == Some(false)) {
            return Err(Error::Refused(
                "the Captain's role and access never change".into(),
            ));
        }
        if role == Role::Captain && before.role != Role::Captain {
            return Err(Error::Refused(
                "the workspace has one Captain; make them an admin instead".into(),
            ));
        }
        let deactivated = match change.active {
            Some(true) => None,
            Some(false) => Some(before.deactivated.unwrap_or_else(now)),
            None => before.deactivated,
        };
        if role == before.role && deactivated == before.deactivated {
            return Ok(before);
        }
        let row = tx
            .query_one(
                &format!(
                    "UPDATE users u SET role = $2, deactivated = $3 WHERE u.id = $1
                     RETURNING {USER}"
                ),
                &[
                    &id.get(),
                    &role.as_str(),
                    &deactivated.map(|t| t.as_millisecond()),
                ],
            )
            .await
            .map_err(failed("changing a person"))?;
        let after = user_at(&row, 0)?;
        if role != before.role {
            record_journal(
                &tx,
                None,
                None,
                &change.by,
                "user.role_changed",
                &format!("@{} is now {role} (was {})", before.name, before.role),
            )
            .await?;
        }
        if deactivated.is_some() && before.deactivated.is_none() {
            // Their sessions end now; their API tokens are kept but refused
            // while they are deactivated.
            tx.execute("DELETE FROM sessions WHERE user_id = $1", &[&id.get()])
                .await
                .map_err(failed("ending a person's sessions"))?;
            record_journal(
                &tx,
                None,
                None,
                &change.by,
                "user.deactivated",
                &format!("@{} was deactivated", before.name),
            )
            .await?;
        }
        if deactivated.is_none() && before.deactivated.is_some() {
            record_journal(
                &tx,
                None,
                None,
                &change.by,
                "user.reactivated",
                &format!("@{} was reactivated", before.name),
            )
            .await?;
        }
        super::events::append(
            &tx,
            None,
            EventBody::UserUpdated {
                user: after.clone(),
            },
        )
        .await?;
        tx.commit().await.map_err(failed("changing a person"))?;
        Ok(after)
    }

    async fn set_password_hash(
        &self,
        user: UserId,
        hash: Option<String>,
        keep: Option<i64>,
    ) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("setting a password"))?;
        let changed = tx
            .execute(
                "UPDATE users SET password_hash = $2 WHERE id = $1",
                &[&user.get(), &hash],
            )
            .await
            .map_err(failed("setting a password"))?;
        if changed == 0 {
            return Err(Error::not_found("user", user));
        }
        tx.execute(
            "DELETE FROM sessions WHERE user_id = $1 AND id IS DISTINCT FROM $2",
            &[&user.get(), &keep],
        )
        .await
        .map_err(failed("ending sessions"))?;
        tx.commit().await.map_err(failed("setting a password"))
    }

    async fn insert_session(
        &self,
        user: UserId,
        secret_hash: String,
        expires: Timestamp,
    ) -> Result<Session> {
        let created = now();
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("starting a session"))?;
        tx.execute(
            "DELETE FROM sessions WHERE expires <= $1",
            &[&created.as_millisecond()],
        )
        .await
        .map_err(failed("removing expired sessions"))?;
        let id: i64 = tx
            .query_one(
                "INSERT INTO sessions (user_id, secret_hash, created, expires)
                 VALUES ($1, $2, $3, $4) RETURNING id",
                &[
                    &user.get(),
                    &secret_hash,
                    &created.as_millisecond(),
                    &expires.as_millisecond(),
                ],
            )
            .await
            .map_err(failed("storing a session"))?
            .get(0);
        tx.commit().await.map_err(failed("storing a session"))?;
        Ok(Session {
            id,
            user_id: user,
            created,
            expires,
        })
    }

    async fn session_user(&self, secret_hash: &str) -> Result<Option<(Session, User)>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT s.id, s.user_id, s.created, s.expires, {USER} FROM sessions s
                     JOIN users u ON u.id = s.user_id
                     WHERE s.secret_hash = $1 AND s.expires > $2"
                ),
                &[&secret_hash, &now().as_millisecond()],
            )
            .await
            .map_err(failed("reading a session"))?;
        row.map(|r| {
            Ok((
                Session {
                    id: r.get(0),
                    user_id: UserId(r.get(1)),
                    created: ts(&r, 2)?,
                    expires: ts(&r, 3)?,
                },
                user_at(&r, 4)?,
            ))
        })
        .transpose()
    }

    async fn delete_session(&self, secret_hash: &str) -> Result<bool> {
        let client = self.client().await?;
        Ok(client
            .execute(
                "DELETE FROM sessions WHERE secret_hash = $1",
                &[&secret_hash],
            )
            .await
            .map_err(failed("ending a session"))?
            > 0)
    }

    async fn insert_api_token(&self, token: NewApiToken) -> Result<ApiToken> {
        let client = self.client().await?;
        let row = client
            .query_one(
                &format!(
                    "INSERT INTO api_tokens AS t (user_id, name, secret_hash, prefix, created, expires)
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING {TOKEN}"
                ),
                &[
                    &token.user_id.get(),
                    &token.name,
                    &token.secret_hash,
                    &token.prefix,
                    &now().as_millisecond(),
                    &token.expires.map(|t| t.as_millisecond()),
                ],
            )
            .await
            .map_err(failed("storing an API token"))?;
        token_at(&row)
    }

    async fn api_tokens(&self, user: UserId) -> Result<Vec<ApiToken>> {
        let client = self.client().await?;
        client
            .query(
                &format!("SELECT {TOKEN} FROM api_tokens t WHERE t.user_id = $1 ORDER BY t.id"),
                &[&user.get()],
            )
            .await
            .map_err(failed("listing API tokens"))?
            .iter()
            .map(token_at)
            .collect()
    }

    async fn api_token_user(&self, secret_hash: &str) -> Result<Option<(ApiToken, User)>> {
        let at = now();
        let client = self.client().await?;
        let Some(row) = client
            .query_opt(
                &format!(
                    "SELECT {TOKEN}, {USER} FROM api_tokens t JOIN users u ON u.id = t.user_id
                     WHERE t.secret_hash = $1 AND t.revoked IS NULL
                       AND (t.expires IS NULL OR t.expires > $2)"
                ),
                &[&secret_hash, &at.as_millisecond()],
            )
            .await
            .map_err(failed("reading an API token"))?
        else {
            return Ok(None);
        };
        let token = token_at(&row)?;
        if stale(token.last_used, at) {
            client
                .execute(
                    "UPDATE api_tokens SET last_used = $2 WHERE id = $1",
                    &[&token.id, &at.as_millisecond()],
                )
                .await
                .map_err(failed("recording an API token's use"))?;
        }
        Ok(Some((token, user_at(&row, 8)?)))
    }

    async fn revoke_api_token(&self, user: UserId, id: i64) -> Result<ApiToken> {
        let found = self.token(id).await?;
        if found.user_id != user {
            // Another person's token is as good as missing.
            return Err(Error::not_found("API token", id));
        }
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE api_tokens t SET revoked = $2 WHERE t.id = $1 AND t.revoked IS NULL
                     RETURNING {TOKEN}"
                ),
                &[&id, &now().as_millisecond()],
            )
            .await
            .map_err(failed("revoking an API token"))?
            .ok_or_else(|| Error::Conflict(format!("API token {id} is already revoked")))?;
        token_at(&row)
    }

    async fn insert_invite(&self, invite: NewInvite) -> Result<Invite> {
        let client = self.client().await?;
        let row = client
            .query_one(
                &format!(
                    "INSERT INTO invites AS i (secret_hash, role, created_by, created, expires)
                     VALUES ($1, $2, $3, $4, $5) RETURNING {INVITE}"
                ),
                &[
                    &invite.secret_hash,
                    &invite.role.as_str(),
                    &invite.created_by.get(),
                    &now().as_millisecond(),
                    &invite.expires.as_millisecond(),
                ],
            )
            .await
            .map_err(failed("storing an invitation"))?;
        invite_at(&row)
    }

    async fn invites(&self) -> Result<Vec<Invite>> {
        let client = self.client().await?;
        client
            .query(
                &format!("SELECT {INVITE} FROM invites i ORDER BY i.id DESC"),
                &[],
            )
            .await
            .map_err(failed("listing invitations"))?
            .iter()
            .map(invite_at)
            .collect()
    }

    async fn invite_by_hash(&self, secret_hash: &str) -> Result<Option<Invite>> {
        let client = self.client().await?;
        client
            .query_opt(
                &format!("SELECT {INVITE} FROM invites i WHERE i.secret_hash = $1"),
                &[&secret_hash],
            )
            .await
            .map_err(failed("reading an invitation"))?
            .as_ref()
            .map(invite_at)
            .transpose()
    }

    async fn revoke_invite(&self, id: i64) -> Result<Invite> {
        let found = self.invite(id).await?;
        if found.accepted_by.is_some() {
            return Err(Error::Conflict(format!(
                "invitation {id} was already accepted"
            )));
        }
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE invites i SET revoked = $2
                     WHERE i.id = $1 AND i.revoked IS NULL AND i.accepted_by IS NULL
                     RETURNING {INVITE}"
                ),
                &[&id, &now().as_millisecond()],
            )
            .await
            .map_err(failed("revoking an invitation"))?
            .ok_or_else(|| {
                Error::Conflict(format!("invitation {id} is already revoked or accepted"))
            })?;
        invite_at(&row)
    }

    async fn accept_invite(&self, acceptance: InviteAcceptance) -> Result<User> {
        let at = now().as_millisecond();
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("accepting an invitation"))?;
        // Locked, so two people racing for one invitation cannot both win.
        let live = tx
            .query_opt(
                "SELECT id, role FROM invites WHERE secret_hash = $1 AND revoked IS NULL
                   AND accepted_by IS NULL AND expires > $2
                 FOR UPDATE",
                &[&acceptance.secret_hash, &at],
            )
            .await
            .map_err(failed("reading an invitation"))?;
        let Some(live) = live else {
            return Err(Error::Unauthenticated(
                "this invitation is not valid: it is unknown, used, revoked or expired; ask for a \
                 new one"
                    .into(),
            ));
        };
        let id: i64 = live.get(0);
        let role: Role = parsed(&live, 1)?;
        let row = tx
            .query_one(
                &format!(
                    "INSERT INTO users AS u (workspace_id, name, display_name, role, created,
                                          password_hash)
                     VALUES ({WORKSPACE}, $1, $2, $3, $4, $5) RETURNING {USER}"
                ),
                &[
                    &acceptance.name,
                    &acceptance.display_name,
                    &role.as_str(),
                    &at,
                    &acceptance.password_hash,
                ],
            )
            .await
            .map_err(failed("adding the invited person"))?;
        let user = user_at(&row, 0)?;
        tx.execute(
            "UPDATE invites SET accepted_by = $2, accepted_at = $3 WHERE id = $1",
            &[&id, &user.id.get(), &at],
        )
        .await
        .map_err(failed("using the invitation"))?;
        tx.commit()
            .await
            .map_err(failed("accepting an invitation"))?;
        Ok(user)
    }

    async fn insert_ot_key(&self, key: NewOtKey, replace: bool) -> Result<OtKey> {
        let at = now().as_millisecond();
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(failed("storing an Open Terminal key"))?;
        if replace {
            tx.execute(
                "UPDATE ot_keys SET revoked = $2 WHERE channel_id = $1 AND revoked IS NULL",
                &[&key.channel_id.get(), &at],
            )
            .await
            .map_err(failed("revoking the old Open Terminal key"))?;
        }
        // Without `replace`, a live key makes the insert break the one-live-
        // key index, which is the conflict.
        let row = tx
            .query_one(
                &format!(
                    "INSERT INTO ot_keys AS k (channel_id, secret_hash, prefix, created_by, created)
                     VALUES ($1, $2, $3, $4, $5) RETURNING {OT_KEY}"
                ),
                &[
                    &key.channel_id.get(),
                    &key.secret_hash,
                    &key.prefix,
                    &key.created_by.get(),
                    &at,
                ],
            )
            .await
            .map_err(|e| match failed("storing an Open Terminal key")(e) {
                Error::Conflict(_) => Error::Conflict(
                    "this channel already has an Open Terminal key; rotate it to get a new one"
                        .into(),
                ),
                other => other,
            })?;
        tx.commit()
            .await
            .map_err(failed("storing an Open Terminal key"))?;
        ot_key_at(&row)
    }

    async fn ot_key(&self, channel: ChannelId) -> Result<Option<OtKey>> {
        let client = self.client().await?;
        client
            .query_opt(
                &format!(
                    "SELECT {OT_KEY} FROM ot_keys k WHERE k.channel_id = $1 AND k.revoked IS NULL"
                ),
                &[&channel.get()],
            )
            .await
            .map_err(failed("reading an Open Terminal key"))?
            .map(|r| ot_key_at(&r))
            .transpose()
    }

    async fn ot_key_by_hash(&self, secret_hash: &str) -> Result<Option<OtKey>> {
        let at = now();
        let client = self.client().await?;
        let Some(row) = client
            .query_opt(
                &format!(
                    "SELECT {OT_KEY} FROM ot_keys k WHERE k.secret_hash = $1 AND k.revoked IS NULL"
                ),
                &[&secret_hash],
            )
            .await
            .map_err(failed("reading an Open Terminal key"))?
        else {
            return Ok(None);
        };
        let key = ot_key_at(&row)?;
        if stale(key.last_used, at) {
            client
                .execute(
                    "UPDATE ot_keys SET last_used = $2 WHERE id = $1",
                    &[&key.id, &at.as_millisecond()],
                )
                .await
                .map_err(failed("recording an Open Terminal key's use"))?;
        }
        Ok(Some(key))
    }

    async fn revoke_ot_key(&self, channel: ChannelId) -> Result<OtKey> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE ot_keys k SET revoked = $2
                     WHERE k.channel_id = $1 AND k.revoked IS NULL RETURNING {OT_KEY}"
                ),
                &[&channel.get(), &now().as_millisecond()],
            )
            .await
            .map_err(failed("revoking an Open Terminal key"))?
            .ok_or_else(|| Error::not_found("Open Terminal key of channel", channel))?;
        ot_key_at(&row)
    }
}
