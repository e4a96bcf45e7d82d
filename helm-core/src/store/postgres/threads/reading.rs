//! Reading threads back: a thread's messages and its budgeted tail, pages
//! of a channel, the feed, read markers, mentions and unread counts.

use super::super::codec::{ms, now, ts};
use super::super::events::append;
use super::super::failed;
use super::rows::{MESSAGE, MESSAGE_WIDTH, THREAD, message, message_at, thread, thread_at};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Author, ChannelId, ChannelUnread, FeedItem, Message, MessageId, MessageStatus, ReadMarker,
    Thread, ThreadId, UNREAD_CAP, User, UserId,
};
use crate::runtime::wake::person_mentions;
use crate::store::postgres::prepared::Db;
use crate::store::rules::COUNTS_AS_REPLY;
use crate::store::types::{ThreadPage, ThreadTail, message_tokens};

/// A `usize` limit as SQL's BIGINT.
pub(crate) fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Rows read per step of a tail: reading stops at the first message that
/// does not fit, so a long thread costs what the budget holds, not its
/// length.
const TAIL_STEP: i64 = 32;

/// Those of `ids` that are `channel`'s threads, in the order asked.
pub(super) async fn among(
    c: &impl Db,
    channel: ChannelId,
    ids: &[ThreadId],
) -> Result<Vec<Thread>> {
    let ids: Vec<i64> = ids.iter().map(|id| id.get()).collect();
    c.query(
        &format!(
            "SELECT {THREAD} FROM unnest($2::BIGINT[]) WITH ORDINALITY AS w(id, place) \
             JOIN threads t ON t.id = w.id WHERE t.channel_id = $1 ORDER BY w.place"
        ),
        &[&channel.get(), &ids],
    )
    .await
    .map_err(failed("reading threads"))?
    .iter()
    .map(thread_at)
    .collect()
}

/// A page of a channel's threads (see [`ThreadPage`]), most recently
/// active first.
pub(super) async fn threads(
    c: &impl Db,
    channel: ChannelId,
    page: &ThreadPage,
) -> Result<Vec<Thread>> {
    let titled: Option<Vec<&str>> =
        (!page.titled.is_empty()).then(|| page.titled.iter().map(String::as_str).collect());
    c.query(
        &format!(
            "SELECT {THREAD} FROM threads t WHERE t.channel_id = $1 \
             AND ($2::BIGINT IS NULL OR t.updated_at < $2 \
                  OR (t.updated_at = $2 AND t.id < $3::BIGINT)) \
             AND ($4::BOOLEAN IS NULL OR (t.status = 'archived') = $4) \
             AND ($5::TEXT[] IS NULL OR EXISTS (SELECT 1 FROM unnest($5::TEXT[]) AS w(word) \
                  WHERE strpos(lower(t.title || ' ' || t.summary), lower(w.word)) > 0)) \
             ORDER BY t.updated_at DESC, t.id DESC LIMIT $6"
        ),
        &[
            &channel.get(),
            &page.before.map(|b| ms(b.updated_at)),
            &page.before.map(|b| b.id.get()),
            &page.archived,
            &titled,
            &limit(page.limit),
        ],
    )
    .await
    .map_err(failed("listing threads"))?
    .iter()
    .map(thread_at)
    .collect()
}

/// A thread's messages in server order, up to and including `up_to`.
pub(super) async fn thread_messages(
    c: &impl Db,
    id: ThreadId,
    up_to: Option<MessageId>,
) -> Result<Vec<Message>> {
    c.query(
        &format!(
            "SELECT {MESSAGE} FROM messages m WHERE m.thread_id = $1 AND m.id <= $2 ORDER BY m.id"
        ),
        &[&id.get(), &up_to.map_or(i64::MAX, MessageId::get)],
    )
    .await
    .map_err(failed("reading a thread's messages"))?
    .iter()
    .map(|r| message_at(r, 0))
    .collect()
}

/// How many messages of `thread` have ids in `(after, upto]`, both its
/// messages: the difference of their places, or counted where one has none.
async fn between(c: &impl Db, thread: ThreadId, after: i64, upto: i64) -> Result<usize> {
    let rows = c
        .query(
            "SELECT id, seq FROM messages WHERE id IN ($1, $2) AND thread_id = $3",
            &[&after, &upto, &thread.get()],
        )
        .await
        .map_err(failed("reading messages' places"))?;
    let place = |id: i64| {
        rows.iter()
            .find(|r| r.get::<_, i64>(0) == id)
            .and_then(|r| r.get::<_, Option<i64>>(1))
    };
    if let (Some(a), Some(b)) = (place(after), place(upto)) {
        return Ok((b - a).max(0) as usize);
    }
    let counted: i64 = c
        .query_one(
            "SELECT count(*) FROM messages WHERE thread_id = $1 AND id > $2 AND id <= $3",
            &[&thread.get(), &after, &upto],
        )
        .await
        .map_err(failed("counting a thread's messages"))?
        .get(0);
    Ok(counted as usize)
}

/// See [`crate::store::ThreadStore::thread_tail`].
pub(super) async fn tail(
    c: &impl Db,
    id: ThreadId,
    up_to: Option<MessageId>,
    budget_tokens: usize,
) -> Result<ThreadTail> {
    let up_to = up_to.map_or(i64::MAX, MessageId::get);
    let first = c
        .query_opt(
            &format!(
                "SELECT {MESSAGE} FROM messages m WHERE m.thread_id = $1 AND m.id <= $2 \
                 ORDER BY m.id LIMIT 1"
            ),
            &[&id.get(), &up_to],
        )
        .await
        .map_err(failed("reading a thread's first message"))?;
    let Some(first) = first.map(|r| message_at(&r, 0)).transpose()? else {
        return Ok(ThreadTail::default());
    };
    let mut budget = budget_tokens.saturating_sub(message_tokens(&first));
    let mut recent = Vec::new();
    let mut newest_omitted = None;
    let mut below = up_to.saturating_add(1);
    'reading: loop {
        let rows = c
            .query(
                &format!(
                    "SELECT {MESSAGE} FROM messages m WHERE m.thread_id = $1 AND m.id < $2 \
                     AND m.id > $3 ORDER BY m.id DESC LIMIT $4"
                ),
                &[&id.get(), &below, &first.id.get(), &TAIL_STEP],
            )
            .await
            .map_err(failed("reading a thread's tail"))?;
        let full = rows.len() as i64 == TAIL_STEP;
        for row in &rows {
            let message = message_at(row, 0)?;
            below = message.id.get();
            let cost = message_tokens(&message);
            if cost > budget {
                newest_omitted = Some(message.id);
                break 'reading;
            }
            budget -= cost;
            recent.push(message);
        }
        if !full {
            break;
        }
    }
    recent.reverse();
    let (omitted, uncovered) = match newest_omitted {
        None => (0, 0),
        Some(newest) => {
            let covered: i64 = c
                .query_one(
                    "SELECT coalesce(max(last_message_id), 0) FROM thread_summaries \
                     WHERE thread_id = $1",
                    &[&id.get()],
                )
                .await
                .map_err(failed("reading a thread's summaries"))?
                .get(0);
            let omitted = between(c, id, first.id.get(), newest.get()).await?;
            let uncovered = match covered.max(first.id.get()) {
                from if from == first.id.get() => omitted,
                from if from >= newest.get() => 0,
                from => between(c, id, from, newest.get()).await?,
            };
            (omitted, uncovered)
        }
    };
    Ok(ThreadTail {
        first: Some(first),
        recent,
        omitted,
        newest_omitted,
        uncovered,
    })
}

/// A page of a channel's messages (or one thread's) after `after`, oldest
/// first.
pub(super) async fn messages_page(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
    after: Option<MessageId>,
    n: usize,
) -> Result<Vec<Message>> {
    c.query(
        &format!(
            "SELECT {MESSAGE} FROM messages m WHERE m.channel_id = $1 \
             AND ($2::BIGINT IS NULL OR m.thread_id = $2) AND m.id > $3 ORDER BY m.id LIMIT $4"
        ),
        &[
            &channel.get(),
            &thread.map(ThreadId::get),
            &after.map_or(0, MessageId::get),
            &limit(n),
        ],
    )
    .await
    .map_err(failed("reading a page of messages"))?
    .iter()
    .map(|r| message_at(r, 0))
    .collect()
}

/// The newest `n` messages of a channel (or one thread) before `before`,
/// oldest first.
pub(super) async fn messages_before(
    c: &impl Db,
    channel: ChannelId,
    thread: Option<ThreadId>,
    before: Option<MessageId>,
    n: usize,
) -> Result<Vec<Message>> {
    let mut messages = c
        .query(
            &format!(
                "SELECT {MESSAGE} FROM messages m WHERE m.channel_id = $1 \
                 AND ($2::BIGINT IS NULL OR m.thread_id = $2) AND m.id < $3 \
                 ORDER BY m.id DESC LIMIT $4"
            ),
            &[
                &channel.get(),
                &thread.map(ThreadId::get),
                &before.map_or(i64::MAX, MessageId::get),
                &limit(n),
            ],
        )
        .await
        .map_err(failed("reading earlier messages"))?
        .iter()
        .map(|r| message_at(r, 0))
        .collect::<Result<Vec<_>>>()?;
    messages.reverse();
    Ok(messages)
}

/// The newest `n` entries of a channel's feed before `before`, oldest
/// first: each thread's root (with the thread, its reply count and newest
/// reply) and the announcements made outside threads.
pub(super) async fn feed(
    c: &impl Db,
    channel: ChannelId,
    before: Option<MessageId>,
    n: usize,
) -> Result<Vec<FeedItem>> {
    let found = c
        .query(
            &format!(
                "SELECT {MESSAGE}, t.id FROM messages m \
                 LEFT JOIN threads t ON t.root_message_id = m.id \
                 WHERE m.channel_id = $1 AND (m.thread_id IS NULL OR t.id IS NOT NULL) \
                 AND m.id < $2 ORDER BY m.id DESC LIMIT $3"
            ),
            &[
                &channel.get(),
                &before.map_or(i64::MAX, MessageId::get),
                &limit(n),
            ],
        )
        .await
        .map_err(failed("reading a channel's feed"))?;
    let mut items = Vec::with_capacity(found.len());
    for row in found.iter().rev() {
        let root = message_at(row, 0)?;
        let thread_id: Option<i64> = row.get(MESSAGE_WIDTH);
        let (thread_row, replies, latest_reply) = match thread_id {
            Some(id) => {
                let counted = c
                    .query_one(
                        &format!(
                            "SELECT count(*) FILTER (WHERE {COUNTS_AS_REPLY}), max(id) \
                             FROM messages WHERE thread_id = $1 AND id <> $2"
                        ),
                        &[&id, &root.id.get()],
                    )
                    .await
                    .map_err(failed("counting a thread's replies"))?;
                let latest = match counted.get::<_, Option<i64>>(1) {
                    Some(m) => Some(message(c, MessageId(m)).await?),
                    None => None,
                };
                (
                    Some(thread(c, ThreadId(id)).await?),
                    counted.get::<_, i64>(0) as u32,
                    latest,
                )
            }
            None => (None, 0, None),
        };
        items.push(FeedItem {
            message: root,
            thread: thread_row,
            replies,
            latest_reply,
        });
    }
    Ok(items)
}

/// Moves `user`'s marker in the message's channel forward to `message`
/// (never back), in one statement so two nodes marking at once cannot move
/// it back; emits `channel.read` when it moved.
pub(super) async fn mark_read(tx: &impl Db, user: UserId, id: MessageId) -> Result<ReadMarker> {
    let channel = ChannelId(
        tx.query_opt(
            "SELECT channel_id FROM messages WHERE id = $1",
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a message's channel"))?
        .ok_or_else(|| Error::not_found("message", id))?
        .get(0),
    );
    let at = now();
    let moved = tx
        .execute(
            "INSERT INTO read_markers (user_id, channel_id, last_read, updated) \
             VALUES ($1, $2, $3, $4) \
             ON CONFLICT (user_id, channel_id) DO UPDATE SET last_read = excluded.last_read, \
             updated = excluded.updated WHERE read_markers.last_read < excluded.last_read",
            &[&user.get(), &channel.get(), &id.get(), &at.as_millisecond()],
        )
        .await
        .map_err(failed("moving a read marker"))?;
    if moved == 0 {
        let row = tx
            .query_one(
                "SELECT last_read, updated FROM read_markers \
                 WHERE user_id = $1 AND channel_id = $2",
                &[&user.get(), &channel.get()],
            )
            .await
            .map_err(failed("reading a read marker"))?;
        return Ok(ReadMarker {
            channel_id: channel,
            message_id: MessageId(row.get(0)),
            updated: ts(&row, 1)?,
        });
    }
    append(
        tx,
        Some(channel),
        EventBody::ChannelRead {
            user_id: user,
            message_id: id,
        },
    )
    .await?;
    Ok(ReadMarker {
        channel_id: channel,
        message_id: id,
        updated: at,
    })
}

/// What `user` has not read in each of `channels`. Without a marker, a
/// channel counts from when the person joined the workspace.
pub(super) async fn unread(
    c: &impl Db,
    user: &User,
    channels: &[ChannelId],
) -> Result<Vec<ChannelUnread>> {
    let cap = i64::from(UNREAD_CAP);
    let joined = user.created.as_millisecond();
    let mut out = Vec::with_capacity(channels.len());
    for &channel in channels {
        let row = c
            .query_one(
                "WITH marker AS (SELECT max(last_read) AS last FROM read_markers \
                     WHERE user_id = $2 AND channel_id = $1) \
                 SELECT (SELECT last FROM marker), \
                   (SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.channel_id = $1 \
                      AND m.id > coalesce((SELECT last FROM marker), 0) AND m.created >= $3 \
                      AND NOT (m.author_kind = 'human' AND m.author_user_id = $2) \
                      LIMIT $4) AS u), \
                   (SELECT count(*) FROM (SELECT 1 FROM mentions WHERE user_id = $2 \
                      AND channel_id = $1 AND message_id > coalesce((SELECT last FROM marker), 0) \
                      LIMIT $4) AS n)",
                &[&channel.get(), &user.id.get(), &joined, &cap],
            )
            .await
            .map_err(failed("counting unread messages"))?;
        out.push(ChannelUnread {
            channel_id: channel,
            last_read: row.get::<_, Option<i64>>(0).map(MessageId),
            unread: row.get::<_, i64>(1) as u32,
            mentions: row.get::<_, i64>(2) as u32,
        });
    }
    Ok(out)
}

/// Records who a finished message mentions and tells each of them: the
/// people named `@name` who may see its channel, other than its author.
/// System notes and imported history notify nobody.
pub(crate) async fn record_mentions(tx: &impl Db, message: &Message) -> Result<()> {
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
    for name in &names {
        let id = tx
            .query_opt(
                "SELECT u.id FROM users u, channels c WHERE c.id = $1 AND u.name = $2 \
                 AND (c.visibility = 'public' OR u.role IN ('captain', 'admin') OR EXISTS \
                 (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id \
                  AND cm.user_id = u.id))",
                &[&message.channel_id.get(), name],
            )
            .await
            .map_err(failed("finding who a message mentions"))?
            .map(|r| UserId(r.get(0)));
        if let Some(id) = id
            && Some(id) != author
            && !found.contains(&id)
        {
            found.push(id);
        }
    }
    for user in found {
        mention(tx, message, user).await?;
    }
    Ok(())
}

/// Tells `user` of `message` (once): their mention badge and notice.
pub(crate) async fn mention(tx: &impl Db, message: &Message, user: UserId) -> Result<()> {
    let inserted = tx
        .execute(
            "INSERT INTO mentions (message_id, user_id, channel_id) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING",
            &[&message.id.get(), &user.get(), &message.channel_id.get()],
        )
        .await
        .map_err(failed("recording a mention"))?;
    if inserted > 0 {
        append(
            tx,
            Some(message.channel_id),
            EventBody::MentionCreated {
                user_id: user,
                message: message.clone(),
            },
        )
        .await?;
    }
    Ok(())
}
