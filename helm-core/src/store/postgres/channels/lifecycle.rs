//! A channel's lifecycle after provisioning: archiving (which withdraws its
//! queued turns) and restoring, edits, and permanent deletion. Each write
//! locks the channel's row first, so two nodes changing one channel take
//! turns instead of both acting on what they read.

use super::super::codec::now;
use super::super::turns;
use super::super::{events, failed};
use super::record::{self, lock, record_journal};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, AgentStatus, ChannelId, ChannelKind, ChannelName, ChannelRef, ChannelStatus, TurnId,
    TurnState,
};
use crate::provider::Usage;
use crate::store::postgres::prepared::Db;
use crate::store::types::TurnFinish;
use crate::store::types::{ChannelRecord, ChannelUpdate, WorldHook};

/// Archives or restores a channel, pausing or waking its agent.
pub(crate) async fn set_status(
    c: &impl Db,
    channel: ChannelId,
    status: ChannelStatus,
    actor: &Actor,
) -> Result<ChannelRecord> {
    lock(c, channel).await?;
    let before = record::get(c, &ChannelRef::Id(channel)).await?;
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
    let at = now().as_millisecond();
    c.execute(
        "UPDATE channels SET status = $1, status_changed = $2 WHERE id = $3",
        &[&status.as_str(), &at, &channel.get()],
    )
    .await
    .map_err(failed("changing a channel's status"))?;
    c.execute(
        "UPDATE agents SET status = $1 WHERE id = $2",
        &[&agent_status.as_str(), &before.agent.id.get()],
    )
    .await
    .map_err(failed("changing an agent's status"))?;
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
        c,
        Some(channel),
        Some(before.channel.name.as_str()),
        actor,
        action,
        &detail,
    )
    .await?;
    if status == ChannelStatus::Archived {
        cancel_queued(c, channel, &before.channel.name, actor).await?;
    }
    let after = record::get(c, &ChannelRef::Id(channel)).await?;
    let body = match status {
        ChannelStatus::Archived => EventBody::ChannelArchived {
            channel: after.channel.clone(),
        },
        ChannelStatus::Active => EventBody::ChannelRestored {
            channel: after.channel.clone(),
        },
    };
    events::append(c, Some(channel), body).await?;
    events::append(
        c,
        Some(channel),
        EventBody::AgentStatusChanged {
            agent_id: after.agent.id,
            status: agent_status,
        },
    )
    .await?;
    Ok(after)
}

/// Withdraws the archived channel's queued turns, visibly; they are not
/// replayed when the channel is restored. Each ends as the turn store ends
/// a cancelled turn (`turns::finish`), as SQLite's archiving does; one a
/// node started meanwhile is running, not queued, and is left to the
/// runtime, which stops it.
async fn cancel_queued(
    c: &impl Db,
    channel: ChannelId,
    name: &ChannelName,
    actor: &Actor,
) -> Result<()> {
    let queued: Vec<i64> = c
        .query(
            "SELECT id FROM turns WHERE channel_id = $1 AND state = 'queued' ORDER BY id",
            &[&channel.get()],
        )
        .await
        .map_err(failed("reading an archived channel's queued turns"))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for turn in queued {
        turns::finish(
            c,
            TurnId(turn),
            TurnFinish {
                state: TurnState::Cancelled,
                reply: String::new(),
                error: None,
                note: Some(crate::store::rules::archived_turn_note(name, actor)),
                steps: 0,
                usage: Usage::default(),
            },
            None,
        )
        .await?;
    }
    Ok(())
}

/// Permanently removes an archived channel with its agent, rows and events.
pub(crate) async fn delete(
    c: &impl Db,
    channel: ChannelId,
    actor: &Actor,
    world: WorldHook,
) -> Result<()> {
    lock(c, channel).await?;
    let record = record::get(c, &ChannelRef::Id(channel)).await?;
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
    // Rows that reference the channel go with it (ON DELETE CASCADE, word
    // search included: it is an index on those rows); the agent goes after
    // its binding, and its events after the channel.
    c.execute("DELETE FROM channels WHERE id = $1", &[&channel.get()])
        .await
        .map_err(failed("deleting a channel"))?;
    c.execute(
        "DELETE FROM agents WHERE id = $1",
        &[&record.agent.id.get()],
    )
    .await
    .map_err(failed("deleting a channel's agent"))?;
    c.execute(
        "DELETE FROM events WHERE channel_id = $1",
        &[&channel.get()],
    )
    .await
    .map_err(failed("deleting a channel's events"))?;
    record_journal(
        c,
        Some(channel),
        Some(record.channel.name.as_str()),
        actor,
        "channel.deleted",
        &format!(
            "{} and {} permanently deleted with their workspace, memory and history",
            record.channel.name, record.agent.handle
        ),
    )
    .await?;
    // The tree is moved aside before the event is numbered (see
    // provisioning); if that fails, nothing is removed.
    world(&record)?;
    events::append(
        c,
        None,
        EventBody::ChannelDeleted {
            id: channel,
            name: record.channel.name.as_str().to_string(),
        },
    )
    .await?;
    Ok(())
}

/// Renames a channel, or changes its purpose (and its agent's) or its
/// agent's instructions.
pub(crate) async fn update(
    c: &impl Db,
    channel: ChannelId,
    update: &ChannelUpdate,
    actor: &Actor,
) -> Result<ChannelRecord> {
    lock(c, channel).await?;
    let before = record::get(c, &ChannelRef::Id(channel)).await?;
    let at = now().as_millisecond();
    let renamed = match &update.name {
        Some(name) => {
            let name = ChannelName::parse(name)?;
            if before.channel.kind == ChannelKind::Home {
                return Err(Error::Refused(format!(
                    "{} is Skipper's home; its name is fixed",
                    before.channel.name
                )));
            }
            if name == before.channel.name {
                None
            } else {
                // The unique index on live names refuses a name in use.
                c.execute(
                    "UPDATE channels SET name = $2 WHERE id = $1",
                    &[&channel.get(), &name.as_str()],
                )
                .await
                .map_err(failed("renaming a channel"))?;
                Some(name)
            }
        }
        None => None,
    };
    if let Some(purpose) = &update.purpose {
        c.execute(
            "UPDATE channels SET purpose = $2 WHERE id = $1",
            &[&channel.get(), purpose],
        )
        .await
        .map_err(failed("changing a channel's purpose"))?;
        c.execute(
            "UPDATE agent_profiles SET purpose = $2, updated = $3 WHERE agent_id = $1",
            &[&before.agent.id.get(), purpose, &at],
        )
        .await
        .map_err(failed("changing an agent's purpose"))?;
    }
    if let Some(instructions) = &update.instructions {
        c.execute(
            "UPDATE agent_profiles SET instructions = $2, updated = $3 WHERE agent_id = $1",
            &[&before.agent.id.get(), instructions, &at],
        )
        .await
        .map_err(failed("changing an agent's instructions"))?;
    }
    let mut changed = Vec::new();
    if update.purpose.is_some() {
        changed.push("purpose");
    }
    if update.instructions.is_some() {
        changed.push("instructions");
    }
    if let Some(name) = &renamed {
        record_journal(
            c,
            Some(channel),
            Some(name.as_str()),
            actor,
            "channel.renamed",
            &format!(
                "{} renamed to {name}; {} keeps its handle",
                before.channel.name, before.agent.handle
            ),
        )
        .await?;
    }
    if !changed.is_empty() {
        record_journal(
            c,
            Some(channel),
            Some(before.channel.name.as_str()),
            actor,
            "channel.updated",
            &format!("{} changed: {}", before.channel.name, changed.join(", ")),
        )
        .await?;
    }
    let after = record::get(c, &ChannelRef::Id(channel)).await?;
    if renamed.is_some() {
        events::append(
            c,
            Some(channel),
            EventBody::ChannelRenamed {
                channel: after.channel.clone(),
                previous_name: before.channel.name.as_str().to_string(),
            },
        )
        .await?;
    }
    if !changed.is_empty() {
        events::append(
            c,
            Some(channel),
            EventBody::ChannelUpdated {
                channel: after.channel.clone(),
            },
        )
        .await?;
    }
    Ok(after)
}
