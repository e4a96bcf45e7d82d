//! Model policy rows: one per level, a NULL provider meaning "inherit".

use rusqlite::{Connection, OptionalExtension, params};

use super::Tx;
use super::codec::{ms, now};
use super::workspace::workspace_id;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{Actor, ChannelId, ModelChoice, ModelPolicy, PolicyLevel, ThreadId};
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

/// Sets the choice at one level, with a journal record and a
/// `model.changed` event.
pub(super) fn set(
    tx: &mut Tx<'_>,
    scope: PolicyScope,
    choice: Option<ModelChoice>,
    actor: &Actor,
) -> Result<()> {
    let conn = tx.conn();
    let choice = choice.as_ref();
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
    let (level, channel, thread) = match scope {
        PolicyScope::Workspace => (PolicyLevel::Workspace, None, None),
        PolicyScope::Channel(c) => (PolicyLevel::Channel, Some(c), None),
        PolicyScope::Session(t) => {
            let channel: ChannelId = conn
                .prepare_cached("SELECT channel_id FROM threads WHERE id = ?1")?
                .query_row([t], |r| r.get(0))?;
            (PolicyLevel::Session, Some(channel), Some(t))
        }
    };
    let described = match choice {
        Some(c) => match &c.model {
            Some(m) => format!("{} / {m}", c.provider),
            None => format!("{} (its default model)", c.provider),
        },
        None => "inherited".to_string(),
    };
    let detail = match thread {
        Some(t) => format!("the model of thread {t} is now {described}"),
        None => format!("the {level} model is now {described}"),
    };
    let channel_name: Option<String> = match channel {
        Some(c) => conn
            .prepare_cached("SELECT name FROM channels WHERE id = ?1")?
            .query_row([c], |r| r.get(0))
            .optional()?,
        None => None,
    };
    super::channels::record_journal(
        conn,
        channel,
        channel_name.as_deref(),
        actor,
        "model.changed",
        &detail,
    )?;
    let by = actor.to_string();
    tx.emit(
        channel,
        EventBody::ModelChanged {
            level,
            thread_id: thread,
            choice: choice.cloned(),
            by,
        },
    )?;
    Ok(())
}
