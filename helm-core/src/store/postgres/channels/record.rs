//! Reading a channel with its agent and profile, and the small writes every
//! channel change shares: memberships, journal records and the messages
//! Skipper and Helm post themselves.

use serde::de::DeserializeOwned;
use tokio_postgres::Row;

use super::super::codec::{WORKSPACE, now, parsed, ts};
use super::super::failed;
use super::super::threads::rows::{NewMessage, insert_message};
use crate::error::{Error, Result};
use crate::model::{
    Actor, Agent, AgentId, AgentProfile, Author, Channel, ChannelId, ChannelName, ChannelRef,
    Handle, Message, MessageStatus, ThreadId, UserId, WorkspaceId,
};
use crate::store::postgres::prepared::Db;
use crate::store::types::{ChannelFilter, ChannelRecord, JournalEntry};

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

/// A JSON text column.
pub(crate) fn json<T: DeserializeOwned>(row: &Row, idx: usize) -> Result<T> {
    let text: &str = row.get(idx);
    serde_json::from_str(text).map_err(|e| Error::store("a stored JSON value", e))
}

fn record_at(r: &Row) -> Result<ChannelRecord> {
    let agent_id = AgentId(r.get(8));
    Ok(ChannelRecord {
        channel: Channel {
            id: ChannelId(r.get(0)),
            name: ChannelName::from_stored(r.get(1)),
            purpose: r.get(2),
            kind: parsed(r, 3)?,
            status: parsed(r, 4)?,
            visibility: parsed(r, 5)?,
            created_by: UserId(r.get(6)),
            created: ts(r, 7)?,
        },
        agent: Agent {
            id: agent_id,
            kind: parsed(r, 9)?,
            handle: Handle::from_stored(r.get(10)),
            display_name: r.get(11),
            status: parsed(r, 12)?,
            created: ts(r, 13)?,
        },
        profile: AgentProfile {
            agent_id,
            purpose: r.get(14),
            instructions: r.get(15),
            workspace_ref: r.get(16),
            memory_namespace: r.get(17),
            capability_policy: json(r, 18)?,
        },
    })
}

/// The workspace id, or an error if bootstrap has not run.
pub(crate) async fn workspace_id(c: &impl Db) -> Result<WorkspaceId> {
    c.query_opt("SELECT id FROM workspaces ORDER BY id LIMIT 1", &[])
        .await
        .map_err(failed("reading the workspace"))?
        .map(|r| WorkspaceId(r.get(0)))
        .ok_or_else(|| Error::Internal("the store has no workspace yet; run init".into()))
}

/// A channel with its agent, by id or by live name.
pub(crate) async fn get(c: &impl Db, channel: &ChannelRef) -> Result<ChannelRecord> {
    let row = match channel {
        ChannelRef::Id(id) => c
            .query_opt(&format!("{RECORD_SELECT} WHERE c.id = $1"), &[&id.get()])
            .await
            .map_err(failed("reading a channel"))?,
        // The workspace is read in the same statement: one round trip.
        ChannelRef::Name(name) => c
            .query_opt(
                &format!(
                    "{RECORD_SELECT} WHERE c.workspace_id = {WORKSPACE} AND c.name = $1 \
                     AND c.status IN ('active', 'archived')"
                ),
                &[&name.as_str()],
            )
            .await
            .map_err(failed("reading a channel"))?,
    };
    row.as_ref()
        .map(record_at)
        .transpose()?
        .ok_or_else(|| Error::not_found("channel", channel))
}

/// Locks a channel's row until the transaction ends, so that two nodes
/// changing one channel take turns; a missing channel is not found.
pub(crate) async fn lock(c: &impl Db, channel: ChannelId) -> Result<()> {
    c.query_opt(
        "SELECT 1 FROM channels WHERE id = $1 FOR UPDATE",
        &[&channel.get()],
    )
    .await
    .map_err(failed("locking a channel"))?
    .map(|_| ())
    .ok_or_else(|| Error::not_found("channel", ChannelRef::Id(channel)))
}

/// The home channel with Skipper.
pub(crate) async fn home(c: &impl Db) -> Result<ChannelRecord> {
    let ws = workspace_id(c).await?;
    let row = c
        .query_opt(
            &format!("{RECORD_SELECT} WHERE c.workspace_id = $1 AND c.kind = 'home'"),
            &[&ws.get()],
        )
        .await
        .map_err(failed("reading #main"))?
        .ok_or_else(|| Error::Internal("the workspace has no #main".into()))?;
    record_at(&row)
}

/// The workspace's Skipper (its agent row alone: what a call for Skipper
/// needs, without `#main`'s record).
pub(crate) async fn skipper(c: &impl Db) -> Result<Agent> {
    let ws = workspace_id(c).await?;
    let row = c
        .query_opt(
            "SELECT id, kind, name, display_name, status, created FROM agents \
             WHERE workspace_id = $1 AND kind = 'skipper'",
            &[&ws.get()],
        )
        .await
        .map_err(failed("reading Skipper"))?
        .ok_or_else(|| Error::Internal("the workspace has no Skipper".into()))?;
    Ok(Agent {
        id: AgentId(row.get(0)),
        kind: parsed(&row, 1)?,
        handle: Handle::from_stored(row.get::<_, String>(2)),
        display_name: row.get(3),
        status: parsed(&row, 4)?,
        created: ts(&row, 5)?,
    })
}

/// Live channels by name; archived ones only when asked for.
pub(crate) async fn list(c: &impl Db, filter: ChannelFilter) -> Result<Vec<ChannelRecord>> {
    let ws = workspace_id(c).await?;
    let status = if filter.include_archived {
        ""
    } else {
        "AND c.status = 'active'"
    };
    // Names compare byte-wise, as SQLite's BINARY collation does.
    let rows = c
        .query(
            &format!(
                "{RECORD_SELECT} WHERE c.workspace_id = $1 AND c.status IN ('active', 'archived') \
                 {status} ORDER BY c.name COLLATE \"C\""
            ),
            &[&ws.get()],
        )
        .await
        .map_err(failed("listing channels"))?;
    rows.iter().map(record_at).collect()
}

/// Makes `user` a member of `channel` unless they already are.
pub(crate) async fn add_member(
    c: &impl Db,
    channel: ChannelId,
    user: UserId,
    role: &str,
) -> Result<()> {
    c.execute(
        "INSERT INTO channel_members (channel_id, user_id, role, joined) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (channel_id, user_id) DO NOTHING",
        &[&channel.get(), &user.get(), &role, &now().as_millisecond()],
    )
    .await
    .map_err(failed("adding a channel member"))?;
    Ok(())
}

/// Appends a lifecycle record.
pub(crate) async fn record_journal(
    c: &impl Db,
    channel: Option<ChannelId>,
    channel_name: Option<&str>,
    actor: &Actor,
    action: &str,
    detail: &str,
) -> Result<()> {
    let actor = serde_json::to_string(actor)
        .map_err(|e| Error::Internal(format!("actor does not serialise: {e}")))?;
    c.execute(
        "INSERT INTO journal (channel_id, channel_name, actor, action, detail, created) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &channel.map(ChannelId::get),
            &channel_name,
            &actor,
            &action,
            &detail,
            &now().as_millisecond(),
        ],
    )
    .await
    .map_err(failed("writing the journal"))?;
    Ok(())
}

/// The journal, oldest first; of one channel or of everything.
pub(crate) async fn journal(c: &impl Db, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>> {
    let rows = c
        .query(
            "SELECT id, channel_id, channel_name, actor, action, detail, created FROM journal \
             WHERE $1::BIGINT IS NULL OR channel_id = $1 ORDER BY id",
            &[&channel.map(ChannelId::get)],
        )
        .await
        .map_err(failed("reading the journal"))?;
    rows.iter()
        .map(|r| {
            Ok(JournalEntry {
                id: r.get(0),
                channel_id: r.get::<_, Option<i64>>(1).map(ChannelId),
                channel_name: r.get(2),
                actor: json(r, 3)?,
                action: r.get(4),
                detail: r.get(5),
                created: ts(r, 6)?,
            })
        })
        .collect()
}

/// Posts a complete message that Skipper or Helm itself writes (a welcome,
/// an announcement, a note), outside the turn machinery.
pub(crate) async fn post(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
    author: &Author,
    content: &str,
) -> Result<Message> {
    if matches!(author, Author::Human { .. } | Author::Guest { .. }) {
        return Err(Error::Internal(
            "only Skipper, a channel agent or Helm posts outside a turn".into(),
        ));
    }
    insert_message(
        c,
        NewMessage {
            channel_id: channel,
            thread_id: thread,
            author,
            content,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )
    .await
}
