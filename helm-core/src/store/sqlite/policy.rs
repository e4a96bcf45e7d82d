//! Model policy rows: one per level, a NULL provider meaning "inherit".

use rusqlite::{Connection, OptionalExtension, params};

use super::codec::{ms, now};
use super::workspace::workspace_id;
use crate::error::{Error, Result};
use crate::model::{ChannelId, ModelChoice, ModelPolicy, ThreadId};
use crate::store::types::PolicyScope;

fn choice_at(conn: &Connection, sql: &str, key: Option<i64>) -> Result<Option<ModelChoice>> {
    let row = conn
        .prepare_cached(sql)?
        .query_row([key], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
            ))
        })
        .optional()?;
    Ok(match row {
        Some((Some(provider), model)) => Some(ModelChoice { provider, model }),
        _ => None,
    })
}

pub(super) fn get(
    conn: &Connection,
    channel: ChannelId,
    thread: Option<ThreadId>,
) -> Result<ModelPolicy> {
    let session = match thread {
        Some(t) => choice_at(
            conn,
            "SELECT provider, model FROM model_policies WHERE scope = 'session' AND thread_id = ?1",
            Some(t.0),
        )?,
        None => None,
    };
    Ok(ModelPolicy {
        session,
        channel: choice_at(
            conn,
            "SELECT provider, model FROM model_policies WHERE scope = 'channel' AND channel_id = ?1",
            Some(channel.0),
        )?,
        workspace: choice_at(
            conn,
            "SELECT provider, model FROM model_policies WHERE scope = 'workspace' AND ?1 IS NULL",
            None,
        )?,
        fallback: None,
    })
}

pub(super) fn set(
    conn: &Connection,
    scope: PolicyScope,
    choice: Option<&ModelChoice>,
) -> Result<()> {
    let ws = workspace_id(conn)?;
    let provider = choice.map(|c| c.provider.as_str());
    let model = choice.and_then(|c| c.model.as_deref());
    let at = ms(now());
    let changed = match scope {
        PolicyScope::Workspace => conn.execute(
            "INSERT INTO model_policies (workspace_id, scope, provider, model, updated) \
             VALUES (?1, 'workspace', ?2, ?3, ?4) \
             ON CONFLICT (workspace_id) WHERE scope = 'workspace' \
             DO UPDATE SET provider = excluded.provider, model = excluded.model, \
             updated = excluded.updated",
            params![ws, provider, model, at],
        )?,
        PolicyScope::Channel(channel) => conn.execute(
            "INSERT INTO model_policies (workspace_id, scope, channel_id, provider, model, updated) \
             SELECT ?1, 'channel', id, ?3, ?4, ?5 FROM channels WHERE id = ?2 \
             ON CONFLICT (channel_id) WHERE scope = 'channel' \
             DO UPDATE SET provider = excluded.provider, model = excluded.model, \
             updated = excluded.updated",
            params![ws, channel, provider, model, at],
        )?,
        PolicyScope::Session(thread) => conn.execute(
            "INSERT INTO model_policies (workspace_id, scope, channel_id, thread_id, provider, \
             model, updated) SELECT ?1, 'session', channel_id, id, ?3, ?4, ?5 FROM threads \
             WHERE id = ?2 \
             ON CONFLICT (thread_id) WHERE scope = 'session' \
             DO UPDATE SET provider = excluded.provider, model = excluded.model, \
             updated = excluded.updated",
            params![ws, thread, provider, model, at],
        )?,
    };
    if changed == 0 {
        return Err(match scope {
            PolicyScope::Channel(c) => Error::not_found("channel", c),
            PolicyScope::Session(t) => Error::not_found("thread", t),
            PolicyScope::Workspace => Error::Internal("workspace policy row missing".into()),
        });
    }
    Ok(())
}
