//! Provisioning a channel's whole agent world in one transaction, and the
//! agent and binding rows it is made of.

use super::super::codec::now;
use super::super::{events, failed};
use super::record::{self, add_member, record_journal, workspace_id};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, Agent, AgentId, AgentKind, AgentStatus, Author, Binding, ChannelId, ChannelName,
    ChannelRef, Handle, WorkspaceId,
};
use crate::store::postgres::prepared::Db;
use crate::store::types::{ChannelPlan, ChannelRecord, NewAgent, WorldHook};

/// Inserts the channel row unless a live channel has the name; a second
/// node provisioning the same name waits here for the first to commit.
async fn insert_channel(
    c: &impl Db,
    ws: WorkspaceId,
    plan: &ChannelPlan,
    created: i64,
) -> Result<ChannelId> {
    let inserted = c
        .query_opt(
            "INSERT INTO channels (workspace_id, name, purpose, kind, status, visibility, \
             created_by, created, status_changed) \
             VALUES ($1, $2, $3, 'agent', 'active', $4, $5, $6, $6) \
             ON CONFLICT (workspace_id, name) WHERE status IN ('active', 'archived') DO NOTHING \
             RETURNING id",
            &[
                &ws.get(),
                &plan.name.as_str(),
                &plan.purpose,
                &plan.visibility.as_str(),
                &plan.created_by.id.get(),
                &created,
            ],
        )
        .await
        .map_err(failed("creating a channel"))?;
    if let Some(row) = inserted {
        return Ok(ChannelId(row.get(0)));
    }
    let status: Option<String> = c
        .query_opt(
            "SELECT status FROM channels WHERE workspace_id = $1 AND name = $2 \
             AND status IN ('active', 'archived')",
            &[&ws.get(), &plan.name.as_str()],
        )
        .await
        .map_err(failed("reading a channel's name"))?
        .map(|r| r.get(0));
    let hint = if status.as_deref() == Some("archived") {
        " (it is archived: restore it, or pick another name)"
    } else {
        ""
    };
    Err(Error::Conflict(format!(
        "{} already exists{hint}",
        plan.name
    )))
}

/// Inserts the channel's agent under the first free handle among `base`,
/// `base-2`, `base-3`, …; a handle another node takes meanwhile is skipped.
async fn insert_resident(
    c: &impl Db,
    ws: WorkspaceId,
    name: &ChannelName,
    display_name: &str,
    created: i64,
) -> Result<(AgentId, Handle)> {
    for suffix in std::iter::once(None).chain((2..).map(Some)) {
        let handle = Handle::for_channel(name, suffix);
        let row = c
            .query_opt(
                "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
                 VALUES ($1, 'channel', $2, $3, 'ready', $4) \
                 ON CONFLICT (workspace_id, name) DO NOTHING RETURNING id",
                &[&ws.get(), &handle.as_str(), &display_name, &created],
            )
            .await
            .map_err(failed("creating a channel's agent"))?;
        if let Some(row) = row {
            return Ok((AgentId(row.get(0)), handle));
        }
    }
    Err(Error::Internal("no free handle".into()))
}

/// Provisions a channel and its agent world; runs `world` before the caller
/// commits, so a failing world leaves nothing behind.
pub(crate) async fn provision(
    c: &impl Db,
    plan: ChannelPlan,
    world: WorldHook,
) -> Result<ChannelRecord> {
    let ws = workspace_id(c).await?;
    let created = now().as_millisecond();
    let channel_id = insert_channel(c, ws, &plan, created).await?;
    add_member(c, channel_id, plan.created_by.id, "owner").await?;
    let (agent_id, handle) =
        insert_resident(c, ws, &plan.name, &plan.display_name, created).await?;

    let root = format!("channels/{channel_id}");
    let policy = serde_json::to_string(&plan.capability_policy)
        .map_err(|e| Error::Internal(format!("capability policy does not serialise: {e}")))?;
    c.execute(
        "INSERT INTO agent_profiles (agent_id, purpose, instructions, workspace_ref, \
         memory_namespace, capability_policy, updated) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &agent_id.get(),
            &plan.purpose,
            &plan.instructions,
            &root,
            &format!("channel:{channel_id}"),
            &policy,
            &created,
        ],
    )
    .await
    .map_err(failed("creating a channel's agent profile"))?;
    bind(c, agent_id, channel_id).await?;
    c.execute(
        "INSERT INTO channel_workspaces (channel_id, root, created) VALUES ($1, $2, $3)",
        &[&channel_id.get(), &root, &created],
    )
    .await
    .map_err(failed("recording a channel's workspace"))?;
    // The channel inherits the workspace's model until someone overrides it.
    c.execute(
        "INSERT INTO model_policies (workspace_id, scope, channel_id, updated) \
         VALUES ($1, 'channel', $2, $3)",
        &[&ws.get(), &channel_id.get(), &created],
    )
    .await
    .map_err(failed("creating a channel's model policy"))?;

    let actor = Actor::user(&plan.created_by);
    record_journal(
        c,
        Some(channel_id),
        Some(plan.name.as_str()),
        &actor,
        "channel.created",
        &format!("{} provisioned with {handle}", plan.name),
    )
    .await?;

    let record = record::get(c, &ChannelRef::Id(channel_id)).await?;
    let skipper = record::skipper(c).await?;
    let announcement = record::post(
        c,
        channel_id,
        None,
        &Author::Agent {
            agent_id: skipper.id,
            handle: skipper.handle,
            agent_kind: AgentKind::Skipper,
        },
        &plan.announcement.replace("{handle}", &handle.to_string()),
    )
    .await?;
    // The world is made before the events are numbered: numbering holds the
    // one counter row every writer on every node waits for, until commit.
    world(&record)?;
    events::append(
        c,
        Some(channel_id),
        EventBody::ChannelCreated {
            channel: record.channel.clone(),
            agent: record.agent.clone(),
        },
    )
    .await?;
    events::append(
        c,
        Some(channel_id),
        EventBody::MessageCreated {
            message: announcement,
        },
    )
    .await?;
    Ok(record)
}

/// Adds an unbound agent.
pub(crate) async fn insert_agent(c: &impl Db, agent: &NewAgent) -> Result<Agent> {
    let ws = workspace_id(c).await?;
    let created = now();
    let id: i64 = c
        .query_one(
            "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
             VALUES ($1, $2, $3, $4, 'ready', $5) RETURNING id",
            &[
                &ws.get(),
                &agent.kind.as_str(),
                &agent.handle.as_str(),
                &agent.display_name,
                &created.as_millisecond(),
            ],
        )
        .await
        .map_err(failed("adding an agent"))?
        .get(0);
    Ok(Agent {
        id: AgentId(id),
        kind: agent.kind,
        handle: agent.handle.clone(),
        display_name: agent.display_name.clone(),
        status: AgentStatus::Ready,
        created,
    })
}

/// Binds a resident agent; the schema refuses a second resident, a second
/// channel and any Skipper binding.
pub(crate) async fn bind(c: &impl Db, agent: AgentId, channel: ChannelId) -> Result<Binding> {
    let bound_at = now();
    c.execute(
        "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES ($1, $2, $3)",
        &[&agent.get(), &channel.get(), &bound_at.as_millisecond()],
    )
    .await
    .map_err(failed("binding an agent"))?;
    Ok(Binding {
        agent_id: agent,
        channel_id: channel,
        bound_at,
    })
}

/// What a second resident for a channel is told (the meaning of the
/// channel's unique binding in `errors.rs`).
const CHANNEL_HAS_RESIDENT: &str =
    "this channel already has its resident agent; a channel has exactly one";

/// [`bind`] on its own (outside a transaction). Binding an agent that is
/// already bound to a channel that already has a resident breaks two rules
/// at once; SQLite names the channel's, PostgreSQL would name the first
/// index it checks, so the channel's is named here too.
pub(crate) async fn bind_alone(c: &impl Db, agent: AgentId, channel: ChannelId) -> Result<Binding> {
    match bind(c, agent, channel).await {
        Err(Error::Conflict(meaning)) => {
            let resident = c
                .query_opt(
                    "SELECT 1 FROM agent_channels WHERE channel_id = $1",
                    &[&channel.get()],
                )
                .await
                .map_err(failed("reading a channel's binding"))?
                .is_some();
            Err(Error::Conflict(if resident {
                CHANNEL_HAS_RESIDENT.to_string()
            } else {
                meaning
            }))
        }
        other => other,
    }
}
