//! Read markers, mentions, unread counts, the channel feed and pages that
//! run backwards from the newest message: what a person's client needs to
//! open a channel where they left it.

use rusqlite::{Connection, OptionalExtension, params};

use super::Tx;
use super::codec::{ms, now, ts};
use super::messages;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Author, ChannelId, ChannelUnread, FeedItem, Message, MessageId, MessageStatus, ReadMarker,
    ThreadId, UNREAD_CAP, User, UserId, Workspace,
};
use crate::runtime::wake::person_mentions;
use crate::store::rules::COUNTS_AS_REPLY;

/// Moves `user`'s marker in the message's channel forward to `message`
/// (never back). Emits `channel.read` when it moved.
pub(super) fn mark_read(tx: &mut Tx<'_>, user: UserId, message: MessageId) -> Result<ReadMarker> {
    let channel: ChannelId = tx
        .conn()
        .prepare_cached("SELECT channel_id FROM messages WHERE id = ?1")?
        .query_row([message], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::not_found("message", message))?;
    let current: Option<(MessageId, jiff::Timestamp)> = tx
        .conn()
        .prepare_cached(
            "SELECT last_read, updated FROM read_markers WHERE user_id = ?1 AND channel_id = ?2",
        )?
        .query_row(params![user, channel], |r| Ok((r.get(0)?, ts(r, 1)?)))
        .optional()?;
    if let Some((last, updated)) = current
        && last >= message
    {
        return Ok(ReadMarker {
            channel_id: channel,
            message_id: last,
            updated,
        });
    }
    let at = now();
    tx.conn()
        .prepare_cached(
            "INSERT INTO read_markers (user_id, channel_id, last_read, updated) \
             VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (user_id, channel_id) DO UPDATE SET last_read = excluded.last_read, \
             updated = excluded.updated",
        )?
        .execute(params![user, channel, message, ms(at)])?;
    tx.emit(
        Some(channel),
        EventBody::ChannelRead {
            user_id: user,
            message_id: message,
        },
    )?;
    Ok(ReadMarker {
        channel_id: channel,
        message_id: message,
        updated: at,
    })
}

/// What `user` has not read in each of `channels`. Without a marker, a
/// channel counts from when the person joined the workspace.
pub(super) fn unread(
    conn: &Connection,
    user: &User,
    channels: &[ChannelId],
) -> Result<Vec<ChannelUnread>> {
    let mut marker = conn.prepare_cached(
        "SELECT last_read FROM read_markers WHERE user_id = ?1 AND channel_id = ?2",
    )?;
    let mut count = conn.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.channel_id = ?1 AND m.id > ?2 \
         AND m.created >= ?3 AND NOT (m.author_kind = 'human' AND m.author_user_id = ?4) \
         LIMIT ?5)",
    )?;
    let mut mentioned = conn.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM mentions WHERE user_id = ?1 AND channel_id = ?2 \
         AND message_id > ?3 LIMIT ?4)",
    )?;
    let joined = ms(user.created);
    let mut out = Vec::with_capacity(channels.len());
    for &channel in channels {
        let last: Option<MessageId> = marker
            .query_row(params![user.id, channel], |r| r.get(0))
            .optional()?;
        let after = last.map_or(0, |m| m.0);
        let unread: i64 = count
            .query_row(params![channel, after, joined, user.id, UNREAD_CAP], |r| {
                r.get(0)
            })?;
        let mentions: i64 =
            mentioned.query_row(params![user.id, channel, after, UNREAD_CAP], |r| r.get(0))?;
        out.push(ChannelUnread {
            channel_id: channel,
            last_read: last,
            unread: unread as u32,
            mentions: mentions as u32,
        });
    }
    Ok(out)
}

/// Records who a finished message mentions and tells each of them: the
/// people named `@name` who may see its channel, other than its author.
/// System notes and imported history notify nobody.
pub(super) fn record_mentions(tx: &mut Tx<'_>, message: &Message) -> Result<()> {
    if matches!(message.author, Author::System | Author::Guest { .. })
        || message.status != MessageStatus::Complete
    {
        return Ok(());
    }
    let names = person_mentions(&message.content);
    if names.is_empty() {
        return Ok(());
    }
    let author = match &message.author {
        Author::Human { user_id, .. } => Some(*user_id),
        _ => None,
    };
    let mut found = Vec::new();
    {
        let mut stmt = tx.conn().prepare_cached(
            "SELECT u.id FROM users u, channels c WHERE c.id = ?1 AND u.name = ?2 \
             AND (c.visibility = 'public' OR u.role IN ('captain', 'admin') OR EXISTS \
             (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = u.id))",
        )?;
        for name in &names {
            if let Some(id) = stmt
                .query_row(params![message.channel_id, name], |r| r.get::<_, UserId>(0))
                .optional()?
                && Some(id) != author
                && !found.contains(&id)
            {
                found.push(id);
            }
        }
    }
    for user in found {
        mention(tx, message, user)?;
    }
    Ok(())
}

/// Tells `user` of `message` (once): their mention badge and notice.
pub(super) fn mention(tx: &mut Tx<'_>, message: &Message, user: UserId) -> Result<()> {
    let inserted = tx
        .conn()
        .prepare_cached(
            "INSERT OR IGNORE INTO mentions (message_id, user_id, channel_id) \
             VALUES (?1, ?2, ?3)",
        )?
        .execute(params![message.id, user, message.channel_id])?;
    if inserted > 0 {
        tx.emit(
            Some(message.channel_id),
            EventBody::MentionCreated {
                user_id: user,
                message: message.clone(),
            },
        )?;
    }
    Ok(())
}

/// The newest `limit` messages of a channel (or of one thread) before
/// `before` (the newest of all without it), oldest first.
pub(super) fn messages_before(
    conn: &Connection,
    channel: ChannelId,
    thread: Option<ThreadId>,
    before: Option<MessageId>,
    limit: usize,
) -> Result<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM messages m WHERE m.channel_id = ?1 AND (?2 IS NULL OR m.thread_id = ?2) \
         AND m.id < ?3 ORDER BY m.id DESC LIMIT ?4",
        messages::COLUMNS
    ))?;
    let mut rows = stmt
        .query_map(
            params![
                channel,
                thread,
                before.map_or(i64::MAX, |m| m.0),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| messages::from_row(r, 0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.reverse();
    Ok(rows)
}

/// The newest `limit` entries of a channel's feed before the message
/// `before`, oldest first: each thread's root (with the thread, its reply
/// count and newest reply) and the announcements made outside threads.
pub(super) fn feed(
    conn: &Connection,
    channel: ChannelId,
    before: Option<MessageId>,
    limit: usize,
) -> Result<Vec<FeedItem>> {
    let mut roots = conn.prepare_cached(&format!(
        "SELECT {}, t.id FROM messages m LEFT JOIN threads t ON t.root_message_id = m.id \
         WHERE m.channel_id = ?1 AND (m.thread_id IS NULL OR t.id IS NOT NULL) AND m.id < ?2 \
         ORDER BY m.id DESC LIMIT ?3",
        messages::COLUMNS
    ))?;
    let width = messages::COLUMNS.split(',').count();
    let found = roots
        .query_map(
            params![
                channel,
                before.map_or(i64::MAX, |m| m.0),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| {
                Ok((
                    messages::from_row(r, 0)?,
                    r.get::<_, Option<ThreadId>>(width)?,
                ))
            },
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // Counted as the thread shows them (Helm's failure notes are not
    // replies); the newest message is the newest word, whatever it is.
    let mut replies = conn.prepare_cached(&format!(
        "SELECT count(*) FILTER (WHERE {COUNTS_AS_REPLY}), max(id) FROM messages \
         WHERE thread_id = ?1 AND id <> ?2"
    ))?;
    let mut items = Vec::with_capacity(found.len());
    for (message, thread_id) in found.into_iter().rev() {
        let (thread, count, latest) = match thread_id {
            Some(id) => {
                let (count, latest): (i64, Option<MessageId>) =
                    replies.query_row(params![id, message.id], |r| Ok((r.get(0)?, r.get(1)?)))?;
                let latest = latest.map(|m| messages::get(conn, m)).transpose()?;
                (Some(super::threads::get(conn, id)?), count as u32, latest)
            }
            None => (None, 0, None),
        };
        items.push(FeedItem {
            message,
            thread,
            replies: count,
            latest_reply: latest,
        });
    }
    Ok(items)
}

/// Renames the workspace.
pub(super) fn rename_workspace(tx: &mut Tx<'_>, name: &str) -> Result<Workspace> {
    let id: i64 = tx
        .conn()
        .prepare_cached("SELECT id FROM workspaces ORDER BY id LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::Internal("the store has no workspace yet; run init".into()))?;
    tx.conn().execute(
        "UPDATE workspaces SET name = ?2 WHERE id = ?1",
        params![id, name],
    )?;
    let workspace = super::workspace::workspace(tx.conn())?
        .ok_or_else(|| Error::Internal("the workspace vanished".into()))?;
    tx.emit(
        None,
        EventBody::WorkspaceUpdated {
            workspace: workspace.clone(),
        },
    )?;
    Ok(workspace)
}
