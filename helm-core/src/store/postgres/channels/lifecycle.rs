//! A channel's lifecycle after provisioning: archiving (which withdraws its
//! queued turns) and restoring, edits, and permanent deletion. Each write
//! locks the channel's row first, so two nodes changing one channel take
//! turns instead of both acting on what they read.

use tokio_postgres::{GenericClient, Row};

use super::super::codec::{now, opt_ts, parsed, ts};
use super::super::{events, failed};
use super::record::{self, lock, record_journal};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, AgentId, AgentStatus, Author, ChannelId, ChannelKind, ChannelName, ChannelRef,
    ChannelStatus, EscalationId, MessageId, MessageStatus, ModelChoice, ThreadId, Turn, TurnId,
    UserId,
};
use crate::store::types::{ChannelRecord, ChannelUpdate, WorldHook};

/// The turn columns [`turn_at`] reads.
const TURN: &str = "id, channel_id, thread_id, agent_id, trigger_message_id, \
    reply_message_id, state, provider, model, error, steps, queued_at, started_at, finished_at, \
    hop, escalation_id, requested_by, model_level";

fn turn_at(r: &Row) -> Result<Turn> {
    let provider: Option<String> = r.get(7);
    let model: Option<String> = r.get(8);
    let model_level: Option<&str> = r.get(17);
    Ok(Turn {
        id: TurnId(r.get(0)),
        channel_id: ChannelId(r.get(1)),
        thread_id: ThreadId(r.get(2)),
        agent_id: AgentId(r.get(3)),
        trigger_message_id: MessageId(r.get(4)),
        reply_message_id: MessageId(r.get(5)),
        state: parsed(r, 6)?,
        served_by: provider.map(|provider| ModelChoice { provider, model }),
        error: r.get(9),
        steps: u32::try_from(r.get::<_, i64>(10)).unwrap_or(u32::MAX),
        queued_at: ts(r, 11)?,
        started_at: opt_ts(r, 12)?,
        finished_at: opt_ts(r, 13)?,
        hop: u32::try_from(r.get::<_, i64>(14)).unwrap_or(u32::MAX),
        escalation_id: r.get::<_, Option<i64>>(15).map(EscalationId),
        requested_by: r.get::<_, Option<i64>>(16).map(UserId),
        model_level: match model_level {
            Some(_) => Some(parsed(r, 17)?),
            None => None,
        },
    })
}

/// Archives or restores a channel, pausing or waking its agent.
pub(crate) async fn set_status(
    c: &impl GenericClient,
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
/// replayed when the channel is restored. One statement claims them all,
/// so a node starting one of them meanwhile either got it first (it is
/// running, not queued) or finds it cancelled. Each ends as the turn store
/// ends a cancelled turn: its reply stopped and empty, a note in its
/// thread, the thread touched, `turn.cancelled`, the agent's status
/// recomputed. A queued turn never started a tool call, so none is ended.
async fn cancel_queued(
    c: &impl GenericClient,
    channel: ChannelId,
    name: &ChannelName,
    actor: &Actor,
) -> Result<()> {
    let at = now().as_millisecond();
    let rows = c
        .query(
            &format!(
                "UPDATE turns SET state = 'cancelled', error = NULL, steps = 0, \
                 input_tokens = 0, output_tokens = 0, finished_at = $2 \
                 WHERE channel_id = $1 AND state = 'queued' RETURNING {TURN}"
            ),
            &[&channel.get(), &at],
        )
        .await
        .map_err(failed("cancelling an archived channel's queued turns"))?;
    let mut turns = rows.iter().map(turn_at).collect::<Result<Vec<_>>>()?;
    turns.sort_by_key(|t| t.id);
    for turn in turns {
        let reply = reply_stopped(c, turn.reply_message_id).await?;
        events::append(
            c,
            Some(turn.channel_id),
            EventBody::MessageCompleted { message: reply },
        )
        .await?;
        let note = record::post(
            c,
            turn.channel_id,
            Some(turn.thread_id),
            &Author::System,
            &format!(
                "This turn was cancelled before it started: {name} was archived by {actor}. \
                 Restoring the channel does not run it; ask again then."
            ),
        )
        .await?;
        events::append(
            c,
            Some(turn.channel_id),
            EventBody::MessageCreated { message: note },
        )
        .await?;
        // A cancelled turn leaves its thread's status as it was.
        c.execute(
            "UPDATE threads SET updated_at = $2 WHERE id = $1",
            &[&turn.thread_id.get(), &now().as_millisecond()],
        )
        .await
        .map_err(failed("touching a thread"))?;
        let (agent, channel) = (turn.agent_id, turn.channel_id);
        events::append(c, Some(channel), EventBody::TurnCancelled { turn }).await?;
        agent_status_follows(c, agent, channel).await?;
    }
    Ok(())
}

/// Marks a cancelled turn's reply stopped and empty, and reads it back.
async fn reply_stopped(c: &impl GenericClient, id: MessageId) -> Result<crate::model::Message> {
    let row = c
        .query_one(
            "UPDATE messages SET status = $2, content = '', updated = $3 WHERE id = $1 \
             RETURNING id, channel_id, thread_id, author_kind, author_user_id, author_agent_id, \
             author_name, content, status, provider, model, external_id, created",
            &[
                &id.get(),
                &MessageStatus::Stopped.as_str(),
                &now().as_millisecond(),
            ],
        )
        .await
        .map_err(failed("stopping a cancelled turn's reply"))?;
    message_at(&row)
}

fn message_at(r: &Row) -> Result<crate::model::Message> {
    use crate::model::{AgentKind, Handle};
    let kind: &str = r.get(3);
    let name: String = r.get(6);
    let author = match kind {
        "human" => Author::Human {
            user_id: UserId(r.get(4)),
            name,
        },
        "agent" | "skipper" => Author::Agent {
            agent_id: AgentId(r.get(5)),
            handle: Handle::from_stored(name),
            agent_kind: if kind == "skipper" {
                AgentKind::Skipper
            } else {
                AgentKind::Channel
            },
        },
        "guest" => Author::Guest { name },
        _ => Author::System,
    };
    let provider: Option<String> = r.get(9);
    let model: Option<String> = r.get(10);
    Ok(crate::model::Message {
        id: MessageId(r.get(0)),
        channel_id: ChannelId(r.get(1)),
        thread_id: r.get::<_, Option<i64>>(2).map(ThreadId),
        author,
        content: r.get(7),
        status: parsed(r, 8)?,
        served_by: provider.map(|provider| ModelChoice { provider, model }),
        external_id: r.get(11),
        created: ts(r, 12)?,
    })
}

/// An agent's status after one of its turns ended: working while any of its
/// turns runs, paused in an archived channel, ready otherwise.
async fn agent_status_follows(
    c: &impl GenericClient,
    agent: AgentId,
    channel: ChannelId,
) -> Result<()> {
    let row = c
        .query_one(
            "SELECT a.status, a.kind, \
             coalesce((SELECT status = 'archived' FROM channels WHERE id = $2), false), \
             (SELECT count(*) FROM turns WHERE agent_id = $1 AND state = 'running') \
             FROM agents a WHERE a.id = $1",
            &[&agent.get(), &channel.get()],
        )
        .await
        .map_err(failed("reading an agent's status"))?;
    let (current, kind, archived, running): (&str, &str, bool, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let next = if running > 0 {
        AgentStatus::Working
    } else if archived && kind == "channel" {
        AgentStatus::Paused
    } else {
        AgentStatus::Ready
    };
    if current != next.as_str() {
        c.execute(
            "UPDATE agents SET status = $1 WHERE id = $2",
            &[&next.as_str(), &agent.get()],
        )
        .await
        .map_err(failed("changing an agent's status"))?;
        events::append(
            c,
            Some(channel),
            EventBody::AgentStatusChanged {
                agent_id: agent,
                status: next,
            },
        )
        .await?;
    }
    Ok(())
}

/// Permanently removes an archived channel with its agent, rows and events.
pub(crate) async fn delete(
    c: &impl GenericClient,
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
    c: &impl GenericClient,
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
