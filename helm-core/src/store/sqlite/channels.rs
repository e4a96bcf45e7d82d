//! Channels and their agent worlds: provisioning, lookup, lifecycle, and the
//! resident binding.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{json, ms, now, parsed, ts};
use super::messages::{self, NewMessage};
use super::workspace::workspace_id;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, Agent, AgentId, AgentKind, AgentProfile, AgentStatus, Author, Binding, Channel,
    ChannelId, ChannelKind, ChannelName, ChannelRef, ChannelStatus, Handle, MessageStatus, TurnId,
    TurnState, UserId,
};
use crate::provider::Usage;
use crate::store::types::{
    ChannelFilter, ChannelPlan, ChannelRecord, JournalEntry, NewAgent, TurnFinish, WorldHook,
};

/// A channel joined with its agent (Skipper for the home channel) and profile.
const RECORD_SELECT: &str = "SELECT c.id, c.name, c.purpose, c.kind, c.status, c.visibility, \
    c.created_by, c.created, \
    a.id, a.kind, a.name, a.display_name, a.status, a.created, \
    p.purpose, p.instructions, p.workspace_ref, p.memory_namespace, p.capability_policy \
    FROM channels c \
    LEFT JOIN agent_channels b ON b.channel_id = c.id \
    JOIN agents a ON a.id = CASE WHEN c.kind = 'home' \
        THEN (SELECT s.id FROM agents s WHERE s.workspace_id = c.workspace_id AND s.kind = 'skipper') \
        ELSE b.agent_id END \
    JOIN agent_profiles p ON p.agent_id = a.id";

fn record_from_row(r: &Row<'_>) -> rusqlite::Result<ChannelRecord> {
    let agent_id: AgentId = r.get(8)?;
    Ok(ChannelRecord {
        channel: Channel {
            id: r.get(0)?,
            name: ChannelName::from_stored(r.get(1)?),
            purpose: r.get(2)?,
            kind: parsed(r, 3)?,
            status: parsed(r, 4)?,
            visibility: parsed(r, 5)?,
            created_by: r.get(6)?,
            created: ts(r, 7)?,
        },
        agent: Agent {
            id: agent_id,
            kind: parsed(r, 9)?,
            handle: Handle::from_stored(r.get(10)?),
            display_name: r.get(11)?,
            status: parsed(r, 12)?,
            created: ts(r, 13)?,
        },
        profile: AgentProfile {
            agent_id,
            purpose: r.get(14)?,
            instructions: r.get(15)?,
            workspace_ref: r.get(16)?,
            memory_namespace: r.get(17)?,
            capability_policy: json(r, 18)?,
        },
    })
}

/// A channel with its agent, by id or name.
pub(super) fn get(conn: &Connection, channel: &ChannelRef) -> Result<ChannelRecord> {
    let found = match channel {
        ChannelRef::Id(id) => conn
            .prepare_cached(&format!("{RECORD_SELECT} WHERE c.id = ?1"))?
            .query_row([id], record_from_row)
            .optional()?,
        ChannelRef::Name(name) => conn
            .prepare_cached(&format!(
                "{RECORD_SELECT} WHERE c.workspace_id = ?1 AND c.name = ?2 \
                 AND c.status IN ('active', 'archived')"
            ))?
            .query_row(params![workspace_id(conn)?, name.as_str()], record_from_row)
            .optional()?,
    };
    found.ok_or_else(|| Error::not_found("channel", channel))
}

/// The home channel with Skipper.
pub(super) fn home(conn: &Connection) -> Result<ChannelRecord> {
    conn.prepare_cached(&format!(
        "{RECORD_SELECT} WHERE c.workspace_id = ?1 AND c.kind = 'home'"
    ))?
    .query_row([workspace_id(conn)?], record_from_row)
    .optional()?
    .ok_or_else(|| Error::Internal("the workspace has no #main".into()))
}

pub(super) fn list(conn: &Connection, filter: ChannelFilter) -> Result<Vec<ChannelRecord>> {
    // Filtering on the live-name index's own condition lets SQLite walk it in
    // name order instead of sorting.
    let status = if filter.include_archived {
        ""
    } else {
        "AND c.status = 'active'"
    };
    let mut stmt = conn.prepare_cached(&format!(
        "{RECORD_SELECT} WHERE c.workspace_id = ?1 AND c.status IN ('active', 'archived') \
         {status} ORDER BY c.name"
    ))?;
    let records = stmt
        .query_map([workspace_id(conn)?], record_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(records)
}

pub(super) fn add_member(
    conn: &Connection,
    channel: ChannelId,
    user: UserId,
    role: &str,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO channel_members (channel_id, user_id, role, joined) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (channel_id, user_id) DO NOTHING",
    )?
    .execute(params![channel, user, role, ms(now())])?;
    Ok(())
}

/// Picks the first free handle among `base`, `base-2`, `base-3`, …
fn free_handle(conn: &Connection, name: &ChannelName) -> Result<Handle> {
    let ws = workspace_id(conn)?;
    let mut stmt =
        conn.prepare_cached("SELECT 1 FROM agents WHERE workspace_id = ?1 AND name = ?2")?;
    for suffix in std::iter::once(None).chain((2..).map(Some)) {
        let handle = Handle::for_channel(name, suffix);
        if !stmt.exists(params![ws, handle.as_str()])? {
            return Ok(handle);
        }
    }
    Err(Error::Internal("no free handle".into()))
}

pub(super) fn provision(
    tx: &mut Tx<'_>,
    plan: ChannelPlan,
    world: WorldHook,
) -> Result<ChannelRecord> {
    let conn = tx.conn();
    let ws = workspace_id(conn)?;
    let created = now();
    let taken = conn
        .prepare_cached(
            "SELECT status FROM channels WHERE workspace_id = ?1 AND name = ?2 \
             AND status IN ('active', 'archived')",
        )?
        .query_row(params![ws, plan.name.as_str()], |r| r.get::<_, String>(0))
        .optional()?;
    if let Some(status) = taken {
        let hint = if status == "archived" {
            " (it is archived: restore it, or pick another name)"
        } else {
            ""
        };
        return Err(Error::Conflict(format!(
            "{} already exists{hint}",
            plan.name
        )));
    }

    conn.prepare_cached(
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, visibility, created_by, \
         created, status_changed) VALUES (?1, ?2, ?3, 'agent', 'active', ?4, ?5, ?6, ?6)",
    )?
    .execute(params![
        ws,
        plan.name.as_str(),
        plan.purpose,
        plan.visibility.as_str(),
        plan.created_by.id,
        ms(created)
    ])?;
    let channel_id = ChannelId(conn.last_insert_rowid());
    add_member(conn, channel_id, plan.created_by.id, "owner")?;

    let handle = free_handle(conn, &plan.name)?;
    conn.prepare_cached(
        "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
         VALUES (?1, 'channel', ?2, ?3, 'ready', ?4)",
    )?
    .execute(params![ws, handle.as_str(), plan.display_name, ms(created)])?;
    let agent_id = AgentId(conn.last_insert_rowid());

    let root = format!("channels/{channel_id}");
    let policy = serde_json::to_string(&plan.capability_policy)
        .map_err(|e| Error::Internal(format!("capability policy does not serialise: {e}")))?;
    conn.prepare_cached(
        "INSERT INTO agent_profiles (agent_id, purpose, instructions, workspace_ref, \
         memory_namespace, capability_policy, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        agent_id,
        plan.purpose,
        plan.instructions,
        root,
        format!("channel:{channel_id}"),
        policy,
        ms(created)
    ])?;
    bind(conn, agent_id, channel_id)?;
    conn.prepare_cached(
        "INSERT INTO channel_workspaces (channel_id, root, created) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![channel_id, root, ms(created)])?;
    // The channel inherits the workspace's model until someone overrides it.
    conn.prepare_cached(
        "INSERT INTO model_policies (workspace_id, scope, channel_id, updated) \
         VALUES (?1, 'channel', ?2, ?3)",
    )?
    .execute(params![ws, channel_id, ms(created)])?;

    let actor = Actor::user(&plan.created_by);
    record_journal(
        conn,
        Some(channel_id),
        Some(plan.name.as_str()),
        &actor,
        "channel.created",
        &format!("{} provisioned with {handle}", plan.name),
    )?;

    let record = get(conn, &ChannelRef::Id(channel_id))?;
    let skipper = home(conn)?.agent;
    let announcement = messages::insert(
        conn,
        NewMessage {
            channel_id,
            thread_id: None,
            author: &Author::Agent {
                agent_id: skipper.id,
                handle: skipper.handle,
                agent_kind: AgentKind::Skipper,
            },
            content: &plan.announcement.replace("{handle}", &handle.to_string()),
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )?;
    tx.emit(
        Some(channel_id),
        EventBody::ChannelCreated {
            channel: record.channel.clone(),
            agent: record.agent.clone(),
        },
    )?;
    tx.emit(
        Some(channel_id),
        EventBody::MessageCreated {
            message: announcement,
        },
    )?;
    world(&record)?;
    Ok(record)
}

pub(super) fn set_status(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    status: ChannelStatus,
    actor: &Actor,
) -> Result<ChannelRecord> {
    let before = get(tx.conn(), &ChannelRef::Id(channel))?;
    if before.channel.kind == ChannelKind::Home {
        return Err(Error::Refused(format!(
            "{} is Skipper's home and is always active",
            before.channel.name
        )));
    }
    if before.channel.status == status {
        return Err(Error::Conflict(format!(
            "{} is already {status}",
            before.channel.name
        )));
    }
    let agent_status = match status {
        ChannelStatus::Archived => AgentStatus::Paused,
        ChannelStatus::Active => AgentStatus::Ready,
    };
    let conn = tx.conn();
    let at = ms(now());
    conn.execute(
        "UPDATE channels SET status = ?1, status_changed = ?2 WHERE id = ?3",
        params![status.as_str(), at, channel],
    )?;
    conn.execute(
        "UPDATE agents SET status = ?1 WHERE id = ?2",
        params![agent_status.as_str(), before.agent.id],
    )?;
    let (action, detail) = match status {
        ChannelStatus::Archived => (
            "channel.archived",
            format!(
                "{} archived; {} paused, everything kept",
                before.channel.name, before.agent.handle
            ),
        ),
        ChannelStatus::Active => (
            "channel.restored",
            format!(
                "{} restored with {}",
                before.channel.name, before.agent.handle
            ),
        ),
    };
    record_journal(
        conn,
        Some(channel),
        Some(before.channel.name.as_str()),
        actor,
        action,
        &detail,
    )?;
    if status == ChannelStatus::Archived {
        // A paused agent starts nothing: work still waiting is withdrawn,
        // visibly, and is not replayed when the channel is restored.
        let queued: Vec<TurnId> = tx
            .conn()
            .prepare_cached("SELECT id FROM turns WHERE channel_id = ?1 AND state = 'queued'")?
            .query_map([channel], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for turn in queued {
            super::turns::finish(
                tx,
                turn,
                TurnFinish {
                    state: TurnState::Cancelled,
                    reply: String::new(),
                    error: None,
                    note: Some(crate::store::rules::archived_turn_note(
                        &before.channel.name,
                        actor,
                    )),
                    steps: 0,
                    usage: Usage::default(),
                },
            )?;
        }
    }
    let after = get(tx.conn(), &ChannelRef::Id(channel))?;
    let body = match status {
        ChannelStatus::Archived => EventBody::ChannelArchived {
            channel: after.channel.clone(),
        },
        ChannelStatus::Active => EventBody::ChannelRestored {
            channel: after.channel.clone(),
        },
    };
    tx.emit(Some(channel), body)?;
    tx.emit(
        Some(channel),
        EventBody::AgentStatusChanged {
            agent_id: after.agent.id,
            status: agent_status,
        },
    )?;
    Ok(after)
}

pub(super) fn delete(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    actor: &Actor,
    world: WorldHook,
) -> Result<()> {
    let record = get(tx.conn(), &ChannelRef::Id(channel))?;
    if record.channel.kind == ChannelKind::Home {
        return Err(Error::Refused(format!(
            "{} is Skipper's home and cannot be deleted",
            record.channel.name
        )));
    }
    if record.channel.status != ChannelStatus::Archived {
        return Err(Error::Refused(format!(
            "{} is active; archive it before deleting it permanently",
            record.channel.name
        )));
    }
    let conn = tx.conn();
    // Rows that reference the channel go with it (ON DELETE CASCADE); the
    // agent goes after its binding, and its events after the channel.
    conn.execute("DELETE FROM channels WHERE id = ?1", [channel])?;
    conn.execute("DELETE FROM agents WHERE id = ?1", [record.agent.id])?;
    conn.execute("DELETE FROM events WHERE channel_id = ?1", [channel])?;
    super::recall::remove_channel(conn, channel)?;
    record_journal(
        conn,
        Some(channel),
        Some(record.channel.name.as_str()),
        actor,
        "channel.deleted",
        &format!(
            "{} and {} permanently deleted with their workspace, memory and history",
            record.channel.name, record.agent.handle
        ),
    )?;
    tx.emit(
        None,
        EventBody::ChannelDeleted {
            id: channel,
            name: record.channel.name.as_str().to_string(),
        },
    )?;
    world(&record)
}

pub(super) fn insert_agent(conn: &Connection, agent: &NewAgent) -> Result<Agent> {
    let ws = workspace_id(conn)?;
    let created = now();
    conn.execute(
        "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
         VALUES (?1, ?2, ?3, ?4, 'ready', ?5)",
        params![
            ws,
            agent.kind.as_str(),
            agent.handle.as_str(),
            agent.display_name,
            ms(created)
        ],
    )?;
    Ok(Agent {
        id: AgentId(conn.last_insert_rowid()),
        kind: agent.kind,
        handle: agent.handle.clone(),
        display_name: agent.display_name.clone(),
        status: AgentStatus::Ready,
        created,
    })
}

pub(super) fn bind(conn: &Connection, agent: AgentId, channel: ChannelId) -> Result<Binding> {
    let bound_at = now();
    conn.prepare_cached(
        "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![agent, channel, ms(bound_at)])?;
    Ok(Binding {
        agent_id: agent,
        channel_id: channel,
        bound_at,
    })
}

/// Appends a lifecycle record.
pub(super) fn record_journal(
    conn: &Connection,
    channel: Option<ChannelId>,
    channel_name: Option<&str>,
    actor: &Actor,
    action: &str,
    detail: &str,
) -> Result<()> {
    let actor = serde_json::to_string(actor)
        .map_err(|e| Error::Internal(format!("actor does not serialise: {e}")))?;
    conn.prepare_cached(
        "INSERT INTO journal (channel_id, channel_name, actor, action, detail, created) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        channel,
        channel_name,
        actor,
        action,
        detail,
        ms(now())
    ])?;
    Ok(())
}

pub(super) fn journal(conn: &Connection, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, channel_id, channel_name, actor, action, detail, created FROM journal \
         WHERE ?1 IS NULL OR channel_id = ?1 ORDER BY id",
    )?;
    let entries = stmt
        .query_map([channel], |r| {
            Ok(JournalEntry {
                id: r.get(0)?,
                channel_id: r.get(1)?,
                channel_name: r.get(2)?,
                actor: json(r, 3)?,
                action: r.get(4)?,
                detail: r.get(5)?,
                created: ts(r, 6)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(entries)
}
