//! Who belongs to a channel, and which channels a person sees.

use super::super::codec::{USER, now, parsed, ts, user_at};
use super::super::{events, failed};
use super::record::{self, record_journal};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{Actor, ChannelId, ChannelRef, Member, MemberRole, User, UserId};
use crate::store::postgres::prepared::Db;
use crate::store::rules;

async fn user(c: &impl Db, id: UserId) -> Result<User> {
    let row = c
        .query_opt(
            &format!("SELECT {USER} FROM users u WHERE u.id = $1"),
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a user"))?
        .ok_or_else(|| Error::not_found("user", id))?;
    user_at(&row, 0)
}

/// A channel's members, oldest first.
pub(crate) async fn list(c: &impl Db, channel: ChannelId) -> Result<Vec<Member>> {
    record::get(c, &ChannelRef::Id(channel)).await?;
    let rows = c
        .query(
            &format!(
                "SELECT {USER}, m.role, m.joined \
                 FROM channel_members m JOIN users u ON u.id = m.user_id \
                 WHERE m.channel_id = $1 ORDER BY m.joined, u.id"
            ),
            &[&channel.get()],
        )
        .await
        .map_err(failed("listing a channel's members"))?;
    rows.iter()
        .map(|r| {
            Ok(Member {
                user: user_at(r, 0)?,
                role: parsed(r, 6)?,
                joined: ts(r, 7)?,
            })
        })
        .collect()
}

/// Makes a person a member of a channel; a member already is one.
pub(crate) async fn add(
    c: &impl Db,
    channel: ChannelId,
    user_id: UserId,
    role: MemberRole,
    actor: &Actor,
) -> Result<Member> {
    let record = record::get(c, &ChannelRef::Id(channel)).await?;
    let person = user(c, user_id).await?;
    let joined = now();
    let added = c
        .execute(
            "INSERT INTO channel_members (channel_id, user_id, role, joined) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (channel_id, user_id) DO NOTHING",
            &[
                &channel.get(),
                &user_id.get(),
                &role.as_str(),
                &joined.as_millisecond(),
            ],
        )
        .await
        .map_err(failed("adding a channel member"))?;
    if added == 0 {
        return Err(Error::Conflict(format!(
            "{} is already a member of {}",
            person.name, record.channel.name
        )));
    }
    record_journal(
        c,
        Some(channel),
        Some(record.channel.name.as_str()),
        actor,
        "channel.member_added",
        &format!("{} joined {} as {role}", person.name, record.channel.name),
    )
    .await?;
    events::append(
        c,
        Some(channel),
        EventBody::ChannelMemberAdded {
            user_id: person.id,
            name: person.name.clone(),
            role,
        },
    )
    .await?;
    Ok(Member {
        user: person,
        role,
        joined,
    })
}

/// Removes a person from a channel.
pub(crate) async fn remove(
    c: &impl Db,
    channel: ChannelId,
    user_id: UserId,
    actor: &Actor,
) -> Result<()> {
    let record = record::get(c, &ChannelRef::Id(channel)).await?;
    let person = user(c, user_id).await?;
    let removed = c
        .execute(
            "DELETE FROM channel_members WHERE channel_id = $1 AND user_id = $2",
            &[&channel.get(), &user_id.get()],
        )
        .await
        .map_err(failed("removing a channel member"))?;
    if removed == 0 {
        return Err(Error::not_found("member", &person.name));
    }
    let by = rules::acting_person(actor);
    record_journal(
        c,
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
    )
    .await?;
    events::append(
        c,
        Some(channel),
        EventBody::ChannelMemberRemoved {
            user_id: person.id,
            name: person.name,
            by,
        },
    )
    .await?;
    Ok(())
}

/// Every public channel, and the private ones each of `users` belongs to.
pub(crate) async fn ids_all_see(c: &impl Db, users: &[UserId]) -> Result<Vec<ChannelId>> {
    let distinct: Vec<i64> = users
        .iter()
        .map(|u| u.get())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let rows = c
        .query(
            "SELECT id FROM channels WHERE status IN ('active', 'archived') \
             AND (visibility = 'public' \
             OR id IN (SELECT channel_id FROM channel_members WHERE user_id = ANY($1) \
                 GROUP BY channel_id HAVING count(*) = $2)) ORDER BY id",
            &[&distinct, &(distinct.len() as i64)],
        )
        .await
        .map_err(failed("listing the channels several people all see"))?;
    Ok(rows.iter().map(|r| ChannelId(r.get(0))).collect())
}

/// The live channels `user` belongs to, and every public one, by id.
pub(crate) async fn visible_ids(c: &impl Db, user: UserId) -> Result<Vec<ChannelId>> {
    let rows = c
        .query(
            "SELECT id FROM channels WHERE status IN ('active', 'archived') \
             AND (visibility = 'public' \
             OR id IN (SELECT channel_id FROM channel_members WHERE user_id = $1)) ORDER BY id",
            &[&user.get()],
        )
        .await
        .map_err(failed("listing the channels a person sees"))?;
    Ok(rows.iter().map(|r| ChannelId(r.get(0))).collect())
}
