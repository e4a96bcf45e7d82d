//! Channel membership, channel edits and message pages.

use rusqlite::{Connection, params};

use super::Tx;
use super::channels::{self, record_journal};
use super::codec::{ms, now, parsed, ts};
use super::messages;
use super::workspace;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, ChannelId, ChannelKind, ChannelName, ChannelRef, Member, MemberRole, Message, MessageId,
    ThreadId, TurnState, UserId,
};
use crate::store::rules;
use crate::store::types::{ChannelRecord, ChannelUpdate};

pub(super) fn list(conn: &Connection, channel: ChannelId) -> Result<Vec<Member>> {
    channels::get(conn, &ChannelRef::Id(channel))?;
    let mut stmt = conn.prepare_cached(
        "SELECT u.id, u.name, u.display_name, u.role, u.created, u.deactivated, m.role, m.joined \
         FROM channel_members m JOIN users u ON u.id = m.user_id \
         WHERE m.channel_id = ?1 ORDER BY m.joined, u.id",
    )?;
    let members = stmt
        .query_map([channel], |r| {
            Ok(Member {
                user: workspace::user_at(r, 0)?,
                role: parsed(r, 6)?,
                joined: ts(r, 7)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(members)
}

pub(super) fn add(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    user: UserId,
    role: MemberRole,
    actor: &Actor,
) -> Result<Member> {
    let record = channels::get(tx.conn(), &ChannelRef::Id(channel))?;
    let person = workspace::user(tx.conn(), user)?;
    let joined = now();
    let added = tx
        .conn()
        .prepare_cached(
            "INSERT INTO channel_members (channel_id, user_id, role, joined) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (channel_id, user_id) DO NOTHING",
        )?
        .execute(params![channel, user, role.as_str(), ms(joined)])?;
    if added == 0 {
        return Err(Error::Conflict(format!(
            "{} is already a member of {}",
            person.name, record.channel.name
        )));
    }
    record_journal(
        tx.conn(),
        Some(channel),
        Some(record.channel.name.as_str()),
        actor,
        "channel.member_added",
        &format!("{} joined {} as {role}", person.name, record.channel.name),
    )?;
    tx.emit(
        Some(channel),
        EventBody::ChannelMemberAdded {
            user_id: person.id,
            name: person.name.clone(),
            role,
        },
    )?;
    Ok(Member {
        user: person,
        role,
        joined,
    })
}

pub(super) fn remove(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    user: UserId,
    actor: &Actor,
) -> Result<()> {
    let record = channels::get(tx.conn(), &ChannelRef::Id(channel))?;
    let person = workspace::user(tx.conn(), user)?;
    let removed = tx
        .conn()
        .prepare_cached("DELETE FROM channel_members WHERE channel_id = ?1 AND user_id = ?2")?
        .execute(params![channel, user])?;
    if removed == 0 {
        return Err(Error::not_found("member", &person.name));
    }
    let by = rules::acting_person(actor);
    record_journal(
        tx.conn(),
        Some(channel),
        Some(record.channel.name.as_str()),
        actor,
        "channel.member_removed",
        &rules::member_removed_entry(
            &person.name,
            record.channel.name.as_str(),
            actor,
            by == Some(person.id),
        ),
    )?;
    tx.emit(
        Some(channel),
        EventBody::ChannelMemberRemoved {
            user_id: person.id,
            name: person.name,
            by,
        },
    )?;
    Ok(())
}

pub(super) fn visible_ids(conn: &Connection, user: UserId) -> Result<Vec<ChannelId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM channels WHERE status IN ('active', 'archived') AND (visibility = 'public' \
         OR id IN (SELECT channel_id FROM channel_members WHERE user_id = ?1)) ORDER BY id",
    )?;
    let ids = stmt
        .query_map([user], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

/// Every public channel, and the private ones each of `users` belongs to.
pub(super) fn ids_all_see(conn: &Connection, users: &[UserId]) -> Result<Vec<ChannelId>> {
    let distinct: std::collections::BTreeSet<i64> = users.iter().map(|u| u.0).collect();
    // A JSON array of integers, read back by `json_each`.
    let list = format!(
        "[{}]",
        distinct
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM channels WHERE status IN ('active', 'archived') AND (visibility = 'public' \
         OR id IN (SELECT channel_id FROM channel_members \
             WHERE user_id IN (SELECT value FROM json_each(?1)) \
             GROUP BY channel_id HAVING count(*) = ?2)) ORDER BY id",
    )?;
    let ids = stmt
        .query_map(params![list, distinct.len() as i64], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

pub(super) fn update_channel(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    update: &ChannelUpdate,
    actor: &Actor,
) -> Result<ChannelRecord> {
    let before = channels::get(tx.conn(), &ChannelRef::Id(channel))?;
    let at = ms(now());
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
                tx.conn()
                    .prepare_cached("UPDATE channels SET name = ?2 WHERE id = ?1")?
                    .execute(params![channel, name.as_str()])?;
                Some(name)
            }
        }
        None => None,
    };
    if let Some(purpose) = &update.purpose {
        tx.conn()
            .prepare_cached("UPDATE channels SET purpose = ?2 WHERE id = ?1")?
            .execute(params![channel, purpose])?;
        tx.conn()
            .prepare_cached(
                "UPDATE agent_profiles SET purpose = ?2, updated = ?3 WHERE agent_id = ?1",
            )?
            .execute(params![before.agent.id, purpose, at])?;
    }
    if let Some(instructions) = &update.instructions {
        tx.conn()
            .prepare_cached(
                "UPDATE agent_profiles SET instructions = ?2, updated = ?3 WHERE agent_id = ?1",
            )?
            .execute(params![before.agent.id, instructions, at])?;
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
            tx.conn(),
            Some(channel),
            Some(name.as_str()),
            actor,
            "channel.renamed",
            &format!(
                "{} renamed to {name}; {} keeps its handle",
                before.channel.name, before.agent.handle
            ),
        )?;
    }
    if !changed.is_empty() {
        record_journal(
            tx.conn(),
            Some(channel),
            Some(before.channel.name.as_str()),
            actor,
            "channel.updated",
            &format!("{} changed: {}", before.channel.name, changed.join(", ")),
        )?;
    }
    let after = channels::get(tx.conn(), &ChannelRef::Id(channel))?;
    if renamed.is_some() {
        tx.emit(
            Some(channel),
            EventBody::ChannelRenamed {
                channel: after.channel.clone(),
                previous_name: before.channel.name.as_str().to_string(),
            },
        )?;
    }
    if !changed.is_empty() {
        tx.emit(
            Some(channel),
            EventBody::ChannelUpdated {
                channel: after.channel.clone(),
            },
        )?;
    }
    Ok(after)
}

pub(super) fn messages_page(
    conn: &Connection,
    channel: ChannelId,
    thread: Option<ThreadId>,
    after: Option<MessageId>,
    limit: usize,
) -> Result<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM messages m WHERE m.channel_id = ?1 AND (?2 IS NULL OR m.thread_id = ?2) \
         AND m.id > ?3 ORDER BY m.id LIMIT ?4",
        messages::COLUMNS
    ))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt
        .query_map(
            params![channel, thread, after.map_or(0, |m| m.0), limit],
            |r| messages::from_row(r, 0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub(super) fn turn_counts(conn: &Connection) -> Result<Vec<(TurnState, u64)>> {
    let mut stmt =
        conn.prepare_cached("SELECT state, count(*) FROM turns GROUP BY state ORDER BY state")?;
    let counts = stmt
        .query_map([], |r| Ok((parsed(r, 0)?, r.get::<_, i64>(1)? as u64)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(counts)
}
