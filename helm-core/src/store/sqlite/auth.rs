//! Signing in as rows: password hashes, sessions, API tokens, invitations and
//! first-run setup. Secrets arrive already hashed; nothing here sees one.

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::channels::record_journal;
use super::codec::{ms, now, opt_ts, parsed, ts};
use super::workspace::{self, user_at, workspace_id};
use crate::auth::{ApiToken, Invite, Session};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{Role, User, UserId};
use crate::store::types::{
    CaptainSetup, InviteAcceptance, NewApiToken, NewInvite, NewUser, UserChange,
};

/// How long a token's recorded last use may lag; bounds writes on the hot
/// path of every authenticated request.
const LAST_USED_GRANULARITY_MS: i64 = 60_000;

/// The user columns, prefixed with `u.`, in `workspace::user_at` order.
const U: &str = "u.id, u.name, u.display_name, u.role, u.created, u.deactivated";

pub(super) fn setup_done(conn: &Connection) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT password_hash IS NOT NULL FROM users WHERE workspace_id = ?1 AND role = 'captain'",
        )?
        .query_row([workspace_id(conn)?], |r| r.get(0))
        .optional()?
        .unwrap_or(false))
}

pub(super) fn complete_setup(conn: &Connection, setup: &CaptainSetup) -> Result<User> {
    let changed = conn
        .prepare_cached(
            "UPDATE users SET name = ?2, display_name = ?3, password_hash = ?4 \
             WHERE workspace_id = ?1 AND role = 'captain' AND password_hash IS NULL",
        )?
        .execute(params![
            workspace_id(conn)?,
            setup.name,
            setup.display_name,
            setup.password_hash
        ])?;
    if changed == 0 {
        return Err(Error::Conflict(
            "setup is already complete; sign in as the Captain".into(),
        ));
    }
    workspace::captain(conn)
}

pub(super) fn user_credentials(
    conn: &Connection,
    name: &str,
) -> Result<Option<(User, Option<String>)>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {U}, u.password_hash FROM users u WHERE u.workspace_id = ?1 AND u.name = ?2"
        ))?
        .query_row(params![workspace_id(conn)?, name], |r| {
            Ok((user_at(r, 0)?, r.get(6)?))
        })
        .optional()?)
}

pub(super) fn set_password_hash(conn: &Connection, user: UserId, hash: Option<&str>) -> Result<()> {
    let changed = conn
        .prepare_cached("UPDATE users SET password_hash = ?2 WHERE id = ?1")?
        .execute(params![user, hash])?;
    if changed == 0 {
        return Err(Error::not_found("user", user));
    }
    Ok(())
}

/// Ends `user`'s sessions but `keep`.
pub(super) fn end_sessions_but(conn: &Connection, user: UserId, keep: Option<i64>) -> Result<()> {
    conn.prepare_cached("DELETE FROM sessions WHERE user_id = ?1 AND id IS NOT ?2")?
        .execute(params![user, keep])?;
    Ok(())
}

pub(super) fn update_user(tx: &mut Tx<'_>, id: UserId, change: &UserChange) -> Result<User> {
    let conn = tx.conn();
    let before = workspace::user(conn, id)?;
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
    let at = now();
    let deactivated = match change.active {
        Some(true) => None,
        Some(false) => Some(before.deactivated.unwrap_or(at)),
        None => before.deactivated,
    };
    if role == before.role && deactivated == before.deactivated {
        return Ok(before);
    }
    conn.prepare_cached("UPDATE users SET role = ?2, deactivated = ?3 WHERE id = ?1")?
        .execute(params![id, role.as_str(), deactivated.map(ms)])?;
    if role != before.role {
        record_journal(
            conn,
            None,
            None,
            &change.by,
            "user.role_changed",
            &format!("@{} is now {role} (was {})", before.name, before.role),
        )?;
    }
    if deactivated.is_some() && before.deactivated.is_none() {
        // Their sessions end now; their API tokens are kept but refused
        // while they are deactivated.
        conn.prepare_cached("DELETE FROM sessions WHERE user_id = ?1")?
            .execute([id])?;
        record_journal(
            conn,
            None,
            None,
            &change.by,
            "user.deactivated",
            &format!("@{} was deactivated", before.name),
        )?;
    }
    if deactivated.is_none() && before.deactivated.is_some() {
        record_journal(
            conn,
            None,
            None,
            &change.by,
            "user.reactivated",
            &format!("@{} was reactivated", before.name),
        )?;
    }
    let after = workspace::user(conn, id)?;
    tx.emit(
        None,
        EventBody::UserUpdated {
            user: after.clone(),
        },
    )?;
    Ok(after)
}

pub(super) fn insert_session(
    conn: &Connection,
    user: UserId,
    secret_hash: &str,
    expires: Timestamp,
) -> Result<Session> {
    let created = now();
    conn.prepare_cached("DELETE FROM sessions WHERE expires <= ?1")?
        .execute([ms(created)])?;
    conn.prepare_cached(
        "INSERT INTO sessions (user_id, secret_hash, created, expires) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![user, secret_hash, ms(created), ms(expires)])?;
    Ok(Session {
        id: conn.last_insert_rowid(),
        user_id: user,
        created,
        expires,
    })
}

pub(super) fn session_user(
    conn: &Connection,
    secret_hash: &str,
) -> Result<Option<(Session, User)>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT s.id, s.user_id, s.created, s.expires, {U} FROM sessions s \
             JOIN users u ON u.id = s.user_id WHERE s.secret_hash = ?1 AND s.expires > ?2"
        ))?
        .query_row(params![secret_hash, ms(now())], |r| {
            Ok((
                Session {
                    id: r.get(0)?,
                    user_id: r.get(1)?,
                    created: ts(r, 2)?,
                    expires: ts(r, 3)?,
                },
                user_at(r, 4)?,
            ))
        })
        .optional()?)
}

pub(super) fn delete_session(conn: &Connection, secret_hash: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("DELETE FROM sessions WHERE secret_hash = ?1")?
        .execute([secret_hash])?
        > 0)
}

const TOKEN_COLUMNS: &str =
    "t.id, t.user_id, t.name, t.prefix, t.created, t.expires, t.last_used, t.revoked";

fn token_from_row(r: &Row<'_>) -> rusqlite::Result<ApiToken> {
    Ok(ApiToken {
        id: r.get(0)?,
        user_id: r.get(1)?,
        name: r.get(2)?,
        prefix: r.get(3)?,
        created: ts(r, 4)?,
        expires: opt_ts(r, 5)?,
        last_used: opt_ts(r, 6)?,
        revoked: opt_ts(r, 7)?,
    })
}

fn token(conn: &Connection, id: i64) -> Result<ApiToken> {
    conn.prepare_cached(&format!(
        "SELECT {TOKEN_COLUMNS} FROM api_tokens t WHERE t.id = ?1"
    ))?
    .query_row([id], token_from_row)
    .optional()?
    .ok_or_else(|| Error::not_found("API token", id))
}

pub(super) fn insert_api_token(conn: &Connection, new: &NewApiToken) -> Result<ApiToken> {
    conn.prepare_cached(
        "INSERT INTO api_tokens (user_id, name, secret_hash, prefix, created, expires) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        new.user_id,
        new.name,
        new.secret_hash,
        new.prefix,
        ms(now()),
        new.expires.map(ms)
    ])?;
    token(conn, conn.last_insert_rowid())
}

pub(super) fn api_tokens(conn: &Connection, user: UserId) -> Result<Vec<ApiToken>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {TOKEN_COLUMNS} FROM api_tokens t WHERE t.user_id = ?1 ORDER BY t.id"
    ))?;
    let tokens = stmt
        .query_map([user], token_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(tokens)
}

/// The live token with this hash and its user, and whether its last use is
/// stale enough to record again.
pub(super) fn api_token_user(
    conn: &Connection,
    secret_hash: &str,
) -> Result<Option<(ApiToken, User, bool)>> {
    let at = ms(now());
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS}, {U} FROM api_tokens t JOIN users u ON u.id = t.user_id \
             WHERE t.secret_hash = ?1 AND t.revoked IS NULL \
             AND (t.expires IS NULL OR t.expires > ?2)"
        ))?
        .query_row(params![secret_hash, at], |r| {
            let token = token_from_row(r)?;
            let stale = token
                .last_used
                .is_none_or(|t| at - ms(t) >= LAST_USED_GRANULARITY_MS);
            Ok((token, user_at(r, 8)?, stale))
        })
        .optional()?)
}

pub(super) fn touch_api_token(conn: &Connection, id: i64) -> Result<()> {
    conn.prepare_cached("UPDATE api_tokens SET last_used = ?2 WHERE id = ?1")?
        .execute(params![id, ms(now())])?;
    Ok(())
}

pub(super) fn revoke_api_token(conn: &Connection, user: UserId, id: i64) -> Result<ApiToken> {
    let found = token(conn, id)?;
    if found.user_id != user {
        // Another person's token is as good as missing.
        return Err(Error::not_found("API token", id));
    }
    if found.revoked.is_some() {
        return Err(Error::Conflict(format!(
            "API token {id} is already revoked"
        )));
    }
    conn.prepare_cached("UPDATE api_tokens SET revoked = ?2 WHERE id = ?1")?
        .execute(params![id, ms(now())])?;
    token(conn, id)
}

const INVITE_COLUMNS: &str =
    "i.id, i.role, i.created_by, i.created, i.expires, i.accepted_by, i.accepted_at, i.revoked";

fn invite_from_row(r: &Row<'_>) -> rusqlite::Result<Invite> {
    Ok(Invite {
        id: r.get(0)?,
        role: parsed(r, 1)?,
        created_by: r.get(2)?,
        created: ts(r, 3)?,
        expires: ts(r, 4)?,
        accepted_by: r.get(5)?,
        accepted_at: opt_ts(r, 6)?,
        revoked: opt_ts(r, 7)?,
    })
}

fn invite(conn: &Connection, id: i64) -> Result<Invite> {
    conn.prepare_cached(&format!(
        "SELECT {INVITE_COLUMNS} FROM invites i WHERE i.id = ?1"
    ))?
    .query_row([id], invite_from_row)
    .optional()?
    .ok_or_else(|| Error::not_found("invitation", id))
}

pub(super) fn invite_by_hash(conn: &Connection, secret_hash: &str) -> Result<Option<Invite>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {INVITE_COLUMNS} FROM invites i WHERE i.secret_hash = ?1"
        ))?
        .query_row([secret_hash], invite_from_row)
        .optional()?)
}

pub(super) fn insert_invite(conn: &Connection, new: &NewInvite) -> Result<Invite> {
    conn.prepare_cached(
        "INSERT INTO invites (secret_hash, role, created_by, created, expires) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        new.secret_hash,
        new.role.as_str(),
        new.created_by,
        ms(now()),
        ms(new.expires)
    ])?;
    invite(conn, conn.last_insert_rowid())
}

pub(super) fn invites(conn: &Connection) -> Result<Vec<Invite>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {INVITE_COLUMNS} FROM invites i ORDER BY i.id DESC"
    ))?;
    let all = stmt
        .query_map([], invite_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(all)
}

pub(super) fn revoke_invite(conn: &Connection, id: i64) -> Result<Invite> {
    let found = invite(conn, id)?;
    if found.accepted_by.is_some() {
        return Err(Error::Conflict(format!(
            "invitation {id} was already accepted"
        )));
    }
    if found.revoked.is_some() {
        return Err(Error::Conflict(format!(
            "invitation {id} is already revoked"
        )));
    }
    conn.prepare_cached("UPDATE invites SET revoked = ?2 WHERE id = ?1")?
        .execute(params![id, ms(now())])?;
    invite(conn, id)
}

pub(super) fn accept_invite(tx: &mut Tx<'_>, acceptance: &InviteAcceptance) -> Result<User> {
    let conn = tx.conn();
    let at = ms(now());
    let live: Option<(i64, Role)> = conn
        .prepare_cached(
            "SELECT id, role FROM invites WHERE secret_hash = ?1 AND revoked IS NULL \
             AND accepted_by IS NULL AND expires > ?2",
        )?
        .query_row(params![acceptance.secret_hash, at], |r| {
            Ok((r.get(0)?, parsed(r, 1)?))
        })
        .optional()?;
    let Some((id, role)) = live else {
        return Err(Error::Unauthenticated(
            "this invitation is not valid: it is unknown, used, revoked or expired; ask for a \
             new one"
                .into(),
        ));
    };
    let user = workspace::insert_user(
        conn,
        &NewUser {
            name: acceptance.name.clone(),
            display_name: acceptance.display_name.clone(),
            role,
        },
    )?;
    set_password_hash(conn, user.id, Some(&acceptance.password_hash))?;
    conn.prepare_cached("UPDATE invites SET accepted_by = ?2, accepted_at = ?3 WHERE id = ?1")?
        .execute(params![id, user.id, at])?;
    Ok(user)
}
