//! Open Terminal keys as rows. Secrets arrive already hashed.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::codec::{ms, now, ts};
use crate::auth::OtKey;
use crate::error::{Error, Result};
use crate::model::ChannelId;
use crate::store::types::NewOtKey;

/// How long a key's recorded last use may lag (as for API tokens).
const LAST_USED_GRANULARITY_MS: i64 = 60_000;

const COLUMNS: &str = "id, channel_id, prefix, created_by, created, last_used, revoked";

fn from_row(r: &Row<'_>) -> rusqlite::Result<OtKey> {
    Ok(OtKey {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        prefix: r.get(2)?,
        created_by: r.get(3)?,
        created: ts(r, 4)?,
        last_used: r
            .get::<_, Option<i64>>(5)?
            .and_then(|v| jiff::Timestamp::from_millisecond(v).ok()),
        revoked: r
            .get::<_, Option<i64>>(6)?
            .and_then(|v| jiff::Timestamp::from_millisecond(v).ok()),
    })
}

/// The channel's live key, if any.
pub(super) fn live(conn: &Connection, channel: ChannelId) -> Result<Option<OtKey>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM ot_keys WHERE channel_id = ?1 AND revoked IS NULL"
        ))?
        .query_row([channel], from_row)
        .optional()?)
}

/// Stores a key. With `replace`, the channel's live key is revoked first;
/// without, a live key is a conflict.
pub(super) fn insert(conn: &Connection, new: &NewOtKey, replace: bool) -> Result<OtKey> {
    let at = ms(now());
    if replace {
        conn.prepare_cached(
            "UPDATE ot_keys SET revoked = ?2 WHERE channel_id = ?1 AND revoked IS NULL",
        )?
        .execute(params![new.channel_id, at])?;
    } else if live(conn, new.channel_id)?.is_some() {
        return Err(Error::Conflict(
            "this channel already has an Open Terminal key; rotate it to get a new one".into(),
        ));
    }
    conn.prepare_cached(
        "INSERT INTO ot_keys (channel_id, secret_hash, prefix, created_by, created) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        new.channel_id,
        new.secret_hash,
        new.prefix,
        new.created_by,
        at
    ])?;
    let id = conn.last_insert_rowid();
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM ot_keys WHERE id = ?1"))?
        .query_row([id], from_row)?)
}

/// The live key with this secret hash, and whether its last use is stale.
pub(super) fn by_hash(conn: &Connection, secret_hash: &str) -> Result<Option<(OtKey, bool)>> {
    let found = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM ot_keys WHERE secret_hash = ?1 AND revoked IS NULL"
        ))?
        .query_row([secret_hash], from_row)
        .optional()?;
    let at = ms(now());
    Ok(found.map(|key| {
        let stale = key
            .last_used
            .is_none_or(|t| at - ms(t) > LAST_USED_GRANULARITY_MS);
        (key, stale)
    }))
}

/// Records that a key was used.
pub(super) fn touch(conn: &Connection, id: i64) -> Result<()> {
    conn.prepare_cached("UPDATE ot_keys SET last_used = ?2 WHERE id = ?1")?
        .execute(params![id, ms(now())])?;
    Ok(())
}

/// Revokes the channel's live key.
pub(super) fn revoke(conn: &Connection, channel: ChannelId) -> Result<OtKey> {
    let key = live(conn, channel)?
        .ok_or_else(|| Error::not_found("Open Terminal key of channel", channel))?;
    conn.prepare_cached("UPDATE ot_keys SET revoked = ?2 WHERE id = ?1")?
        .execute(params![key.id, ms(now())])?;
    Ok(OtKey {
        revoked: Some(now()),
        ..key
    })
}
