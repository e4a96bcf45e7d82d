//! Model policy rows: one per level, a NULL provider meaning "inherit".

use super::super::codec::now;
use super::super::{events, failed};
use super::record::{record_journal, workspace_id};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{Actor, ChannelId, ModelChoice, ModelPolicy, PolicyLevel, ThreadId};
use crate::store::postgres::prepared::Db;
use crate::store::types::PolicyScope;

/// The stored choices that apply in `channel` (and `thread`): every level
/// in one statement, since a turn reads them as it starts and again as it
/// runs.
pub(crate) async fn get(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
) -> Result<ModelPolicy> {
    let rows = c
        .query(
            "SELECT scope, provider, model FROM model_policies \
             WHERE (scope = 'session' AND thread_id = $1) \
                OR (scope = 'channel' AND channel_id = $2) \
                OR scope = 'workspace'",
            &[&thread.map(ThreadId::get), &channel.get()],
        )
        .await
        .map_err(failed("reading the model policy"))?;
    let mut policy = ModelPolicy {
        session: None,
        channel: None,
        workspace: None,
        fallback: None,
    };
    for row in rows {
        // A NULL provider is a level that inherits.
        let Some(provider) = row.get::<_, Option<String>>(1) else {
            continue;
        };
        let choice = Some(ModelChoice {
            provider,
            model: row.get(2),
        });
        match row.get::<_, &str>(0) {
            "session" => policy.session = choice,
            "channel" => policy.channel = choice,
            _ => policy.workspace = choice,
        }
    }
    Ok(policy)
}

/// Sets the choice at one level, with a journal record and a
/// `model.changed` event.
pub(crate) async fn set(
    c: &impl Db,
    scope: PolicyScope,
    choice: Option<ModelChoice>,
    actor: &Actor,
) -> Result<()> {
    let choice = choice.as_ref();
    let ws = workspace_id(c).await?.get();
    let provider = choice.map(|c| c.provider.as_str());
    let model = choice.and_then(|c| c.model.as_deref());
    let at = now().as_millisecond();
    // One upsert per level; `$2` is the channel or thread it is keyed by.
    let (sql, key) = match scope {
        PolicyScope::Workspace => (
            "INSERT INTO model_policies (workspace_id, scope, provider, model, updated) \
             SELECT $1::BIGINT, 'workspace', $3::TEXT, $4::TEXT, $5::BIGINT \
             WHERE $2::BIGINT IS NULL \
             ON CONFLICT (workspace_id) WHERE scope = 'workspace' \
             DO UPDATE SET provider = excluded.provider, model = excluded.model, \
             updated = excluded.updated",
            None,
        ),
        PolicyScope::Channel(channel) => (
            "INSERT INTO model_policies (workspace_id, scope, channel_id, provider, model, updated) \
             SELECT $1::BIGINT, 'channel', id, $3::TEXT, $4::TEXT, $5::BIGINT FROM channels \
             WHERE id = $2 \
             ON CONFLICT (channel_id) WHERE scope = 'channel' \
             DO UPDATE SET provider = excluded.provider, model = excluded.model, \
             updated = excluded.updated",
            Some(channel.get()),
        ),
        PolicyScope::Session(thread) => (
            "INSERT INTO model_policies (workspace_id, scope, channel_id, thread_id, provider, \
             model, updated) SELECT $1::BIGINT, 'session', channel_id, id, $3::TEXT, $4::TEXT, \
             $5::BIGINT FROM threads WHERE id = $2 \
             ON CONFLICT (thread_id) WHERE scope = 'session' \
             DO UPDATE SET provider = excluded.provider, model = excluded.model, \
             updated = excluded.updated",
            Some(thread.get()),
        ),
    };
    let changed = c
        .execute(sql, &[&ws, &key, &provider, &model, &at])
        .await
        .map_err(failed("setting the model policy"))?;
    if changed == 0 {
        return Err(match scope {
            PolicyScope::Channel(c) => Error::not_found("channel", c),
            PolicyScope::Session(t) => Error::not_found("thread", t),
            PolicyScope::Workspace => Error::Internal("workspace policy row missing".into()),
        });
    }
    let (level, channel, thread) = match scope {
        PolicyScope::Workspace => (PolicyLevel::Workspace, None, None),
        PolicyScope::Channel(ch) => (PolicyLevel::Channel, Some(ch), None),
        PolicyScope::Session(t) => {
            let channel = c
                .query_one("SELECT channel_id FROM threads WHERE id = $1", &[&t.get()])
                .await
                .map_err(failed("reading a thread's channel"))?
                .get(0);
            (PolicyLevel::Session, Some(ChannelId(channel)), Some(t))
        }
    };
    let described = match choice {
        Some(ch) => match &ch.model {
            Some(m) => format!("{} / {m}", ch.provider),
            None => format!("{} (its default model)", ch.provider),
        },
        None => "inherited".to_string(),
    };
    let detail = match thread {
        Some(t) => format!("the model of thread {t} is now {described}"),
        None => format!("the {level} model is now {described}"),
    };
    let channel_name: Option<String> = match channel {
        Some(ch) => c
            .query_opt("SELECT name FROM channels WHERE id = $1", &[&ch.get()])
            .await
            .map_err(failed("reading a channel's name"))?
            .map(|r| r.get(0)),
        None => None,
    };
    record_journal(
        c,
        channel,
        channel_name.as_deref(),
        actor,
        "model.changed",
        &detail,
    )
    .await?;
    events::append(
        c,
        channel,
        EventBody::ModelChanged {
            level,
            thread_id: thread,
            choice: choice.cloned(),
            by: actor.to_string(),
        },
    )
    .await?;
    Ok(())
}
