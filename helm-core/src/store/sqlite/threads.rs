//! Threads and human posts: opening a session, continuing it, and admitting
//! the turn a post wakes, all in the post's own transaction.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{ms, now, parsed, ts};
use super::messages::{self, NewMessage};
use super::turns;
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, Author, ChannelId, ChannelStatus, Message, MessageId, MessageStatus, Thread, ThreadId,
    ThreadStatus,
};
use crate::runtime::wake::{decided_by_message, should_wake, thread_title};
use crate::store::types::{NewPost, Posted, ThreadPage, ThreadTail, message_tokens};

const COLUMNS: &str = "t.id, t.channel_id, t.root_message_id, t.title, t.status, t.summary, \
    t.opened_by, t.opened_at, t.updated_at, t.external_id";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Thread> {
    Ok(Thread {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        root_message_id: r.get(2)?,
        title: r.get(3)?,
        status: parsed(r, 4)?,
        summary: r.get(5)?,
        opened_by: r.get(6)?,
        opened_at: ts(r, 7)?,
        updated_at: ts(r, 8)?,
        external_id: r.get(9)?,
    })
}

pub(super) fn get(conn: &Connection, id: ThreadId) -> Result<Thread> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM threads t WHERE t.id = ?1"))?
        .query_row([id], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found("thread", id))
}

/// Those of `ids` that are `channel`'s threads, in the order asked. The ids
/// travel as one JSON array, so the statement is the same (and cached)
/// whatever their number.
pub(super) fn among(
    conn: &Connection,
    channel: ChannelId,
    ids: &[ThreadId],
) -> Result<Vec<Thread>> {
    let ids =
        serde_json::Value::from(ids.iter().map(|id| id.get()).collect::<Vec<_>>()).to_string();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM json_each(?2) w JOIN threads t ON t.id = w.value \
         WHERE t.channel_id = ?1 ORDER BY w.key"
    ))?;
    let threads = stmt
        .query_map(params![channel, ids], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(threads)
}

/// A page of a channel's threads (see [`ThreadPage`]): one seek along
/// `threads_channel (channel_id, updated_at)` from the cursor.
pub(super) fn list(
    conn: &Connection,
    channel: ChannelId,
    page: &ThreadPage,
) -> Result<Vec<Thread>> {
    // The title words travel as one JSON array, so the statement is the
    // same (and cached) whatever their number.
    let titled = if page.titled.is_empty() {
        None
    } else {
        Some(serde_json::Value::from(page.titled.clone()).to_string())
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM threads t WHERE t.channel_id = ?1 \
         AND (?2 IS NULL OR t.updated_at < ?2 OR (t.updated_at = ?2 AND t.id < ?3)) \
         AND (?4 IS NULL OR (t.status = 'archived') = ?4) \
         AND (?5 IS NULL OR EXISTS (SELECT 1 FROM json_each(?5) w \
              WHERE instr(lower(t.title || ' ' || t.summary), lower(w.value)) > 0)) \
         ORDER BY t.updated_at DESC, t.id DESC LIMIT ?6"
    ))?;
    let threads = stmt
        .query_map(
            params![
                channel,
                page.before.map(|c| ms(c.updated_at)),
                page.before.map(|c| c.id),
                page.archived,
                titled,
                page.limit as i64
            ],
            from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(threads)
}

/// The thread's messages in server order, up to and including `up_to`.
pub(super) fn messages(
    conn: &Connection,
    thread: ThreadId,
    up_to: Option<MessageId>,
) -> Result<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM messages m WHERE m.thread_id = ?1 AND (?2 IS NULL OR m.id <= ?2) \
         ORDER BY m.id",
        messages::COLUMNS
    ))?;
    let rows = stmt
        .query_map(params![thread, up_to], |r| messages::from_row(r, 0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// How many messages of `thread` have ids in `(after, upto]`, where both are
/// its messages: the difference of their places (`seq`), or counted on the
/// (thread_id, id) index where a place is missing.
fn between(conn: &Connection, thread: ThreadId, after: i64, upto: i64) -> Result<usize> {
    let mut place =
        conn.prepare_cached("SELECT seq FROM messages WHERE id = ?1 AND thread_id = ?2")?;
    let mut seq = |id: i64| -> Result<Option<i64>> {
        Ok(place
            .query_row(params![id, thread], |r| r.get::<_, Option<i64>>(0))
            .optional()?
            .flatten())
    };
    if let (Some(a), Some(b)) = (seq(after)?, seq(upto)?) {
        return Ok((b - a).max(0) as usize);
    }
    let counted: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM messages WHERE thread_id = ?1 AND id > ?2 AND id <= ?3",
        )?
        .query_row(params![thread, after, upto], |r| r.get(0))?;
    Ok(counted as usize)
}

/// See [`crate::store::ThreadStore::thread_tail`].
pub(super) fn tail(
    conn: &Connection,
    thread: ThreadId,
    up_to: Option<MessageId>,
    budget_tokens: usize,
) -> Result<ThreadTail> {
    let up_to = up_to.map_or(i64::MAX, |m| m.0);
    let first = conn
        .prepare_cached(&format!(
            "SELECT {} FROM messages m WHERE m.thread_id = ?1 AND m.id <= ?2 ORDER BY m.id LIMIT 1",
            messages::COLUMNS
        ))?
        .query_row(params![thread, up_to], |r| messages::from_row(r, 0))
        .optional()?;
    let Some(first) = first else {
        return Ok(ThreadTail::default());
    };
    let mut budget = budget_tokens.saturating_sub(message_tokens(&first));
    let mut recent = Vec::new();
    let mut newest_omitted = None;
    {
        // Stepped one row at a time: reading stops at the first message
        // that does not fit.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {} FROM messages m WHERE m.thread_id = ?1 AND m.id <= ?2 AND m.id > ?3 \
             ORDER BY m.id DESC",
            messages::COLUMNS
        ))?;
        let mut rows = stmt.query(params![thread, up_to, first.id])?;
        while let Some(row) = rows.next()? {
            let message = messages::from_row(row, 0)?;
            let cost = message_tokens(&message);
            if cost > budget {
                newest_omitted = Some(message.id);
                break;
            }
            budget -= cost;
            recent.push(message);
        }
    }
    recent.reverse();
    let (omitted, uncovered) = match newest_omitted {
        None => (0, 0),
        Some(newest) => {
            let covered: i64 = conn
                .prepare_cached(
                    "SELECT coalesce(max(last_message_id), 0) FROM thread_summaries \
                     WHERE thread_id = ?1",
                )?
                .query_row([thread], |r| r.get(0))?;
            let omitted = between(conn, thread, first.id.0, newest.0)?;
            let uncovered = match covered.max(first.id.0) {
                from if from == first.id.0 => omitted,
                from if from >= newest.0 => 0,
                from => between(conn, thread, from, newest.0)?,
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

/// Marks `thread` active: new work in a resolved or failed session (a
/// message, a retried turn) reopens it, with its event.
pub(super) fn resume(tx: &mut Tx<'_>, thread: &Thread) -> Result<Thread> {
    let reopen = matches!(thread.status, ThreadStatus::Resolved | ThreadStatus::Failed)
        .then_some(ThreadStatus::Open);
    let touched = touch(tx, thread.id, reopen)?;
    if reopen.is_some() {
        tx.emit(
            Some(thread.channel_id),
            EventBody::ThreadUpdated {
                thread: touched.clone(),
            },
        )?;
    }
    Ok(touched)
}

fn touch(tx: &mut Tx<'_>, thread: ThreadId, status: Option<ThreadStatus>) -> Result<Thread> {
    let at = ms(now());
    match status {
        Some(status) => super::execute_cached(
            tx.conn(),
            "UPDATE threads SET status = ?1, updated_at = ?2 WHERE id = ?3",
            params![status.as_str(), at, thread],
        )?,
        None => super::execute_cached(
            tx.conn(),
            "UPDATE threads SET updated_at = ?1 WHERE id = ?2",
            params![at, thread],
        )?,
    };
    get(tx.conn(), thread)
}

pub(super) fn post(tx: &mut Tx<'_>, post: NewPost) -> Result<Posted> {
    let channel_status: String = tx
        .conn()
        .prepare_cached("SELECT status, name FROM channels WHERE id = ?1")?
        .query_row([post.channel_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::not_found("channel", post.channel_id))?;
    if channel_status.parse::<ChannelStatus>()? == ChannelStatus::Archived {
        return Err(Error::Refused(
            "the channel is archived; restore it to work there".into(),
        ));
    }
    let author = Author::Human {
        user_id: post.author.id,
        name: post.author.name.clone(),
    };

    let (thread, thread_created) = match post.thread_id {
        Some(id) => {
            let thread = get(tx.conn(), id)?;
            if thread.channel_id != post.channel_id {
                return Err(Error::not_found("thread", id));
            }
            if thread.status == ThreadStatus::Archived {
                return Err(Error::Refused(format!(
                    "thread {id} is archived; reopen it to continue"
                )));
            }
            (thread, false)
        }
        None => {
            let at = ms(now());
            super::execute_cached(
                tx.conn(),
                "INSERT INTO threads (channel_id, title, status, opened_by, opened_at, updated_at) \
                 VALUES (?1, ?2, 'open', ?3, ?4, ?4)",
                params![
                    post.channel_id,
                    thread_title(&post.content),
                    post.author.id,
                    at
                ],
            )?;
            let id = ThreadId(tx.conn().last_insert_rowid());
            (get(tx.conn(), id)?, true)
        }
    };

    let message = messages::insert(
        tx.conn(),
        NewMessage {
            channel_id: post.channel_id,
            thread_id: Some(thread.id),
            author: &author,
            content: &post.content,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )?;

    let thread = if thread_created {
        super::execute_cached(
            tx.conn(),
            "UPDATE threads SET root_message_id = ?1 WHERE id = ?2",
            params![message.id, thread.id],
        )?;
        let thread = get(tx.conn(), thread.id)?;
        tx.emit(
            Some(post.channel_id),
            EventBody::ThreadCreated {
                thread: thread.clone(),
            },
        )?;
        thread
    } else {
        if post.author.role.is_admin() {
            super::escalations::answer_handed(tx, &thread, &post.author)?;
        }
        resume(tx, &thread)?
    };
    super::recall::index_message(tx.conn(), &message)?;
    tx.emit(
        Some(post.channel_id),
        EventBody::MessageCreated {
            message: message.clone(),
        },
    )?;
    super::reading::record_mentions(tx, &message)?;

    // The thread's facts are read only when the message alone does not
    // decide, and each is an index seek, not a pass over the thread.
    let decided = decided_by_message(post.mentions_resident, post.calls_skipper);
    let wake = if let Some(wake) = decided {
        wake
    } else {
        let (other_humans, agent_replied): (bool, bool) = tx
            .conn()
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM messages WHERE thread_id = ?1 \
                   AND author_user_id > ?3) \
                 OR EXISTS (SELECT 1 FROM messages WHERE thread_id = ?1 AND author_user_id < ?3), \
                 EXISTS (SELECT 1 FROM messages WHERE thread_id = ?1 AND author_agent_id = ?2)",
            )?
            .query_row(params![thread.id, post.resident.id, post.author.id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        should_wake(false, false, agent_replied, 1 + usize::from(other_humans))
    };
    let mut turn = None;
    let mut ahead = 0;
    if wake {
        let queued: i64 = tx
            .conn()
            .prepare_cached(
                "SELECT count(*) FROM turns WHERE state = 'queued' AND channel_id = ?1 \
                 AND requested_by = ?2",
            )?
            .query_row(params![post.channel_id, post.author.id], |r| r.get(0))?;
        crate::store::rules::check_queued(&post.author, queued)?;
        let (admitted, before) = turns::admit(
            tx,
            &thread,
            &message,
            &post.resident,
            turns::Chain {
                requested_by: Some(post.author.id),
                hop: 0,
                escalation_id: None,
                admission: &post.admission,
            },
        )?;
        turn = Some(admitted);
        ahead = before;
    }
    let mut escalation = None;
    if post.calls_skipper {
        let reason = crate::runtime::wake::without_mentions(&post.content);
        let escalated = super::escalations::escalate(
            tx,
            crate::store::types::NewEscalation {
                thread_id: thread.id,
                from_agent_id: None,
                from_agent_handle: None,
                from_user_id: Some(post.author.id),
                reason,
                requested_by: Some(post.author.id),
                hop: 0,
                admission: post.admission.clone(),
            },
        )?;
        escalation = Some(escalated.escalation);
    }
    Ok(Posted {
        escalation,
        message,
        thread,
        thread_created,
        turn,
        ahead,
    })
}

pub(super) fn set_status(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    status: ThreadStatus,
    actor: &Actor,
) -> Result<Thread> {
    let before = get(tx.conn(), thread)?;
    if before.status == status {
        return Err(Error::Conflict(format!(
            "thread {thread} is already {status}"
        )));
    }
    let live: i64 = tx
        .conn()
        .prepare_cached(
            "SELECT count(*) FROM turns WHERE thread_id = ?1 AND state IN ('queued', 'running')",
        )?
        .query_row([thread], |r| r.get(0))?;
    if live > 0 && matches!(status, ThreadStatus::Resolved | ThreadStatus::Archived) {
        return Err(Error::Refused(format!(
            "thread {thread} has work in progress; stop it before marking it {status}"
        )));
    }
    let after = touch(tx, thread, Some(status))?;
    let detail = format!("thread {thread} ({}) marked {status}", before.title);
    journal_and_announce(tx, actor, &format!("thread.{status}"), &detail, after)
}

/// Gives a thread a new title (checked by the caller), with its journal
/// line and `thread.updated` event; refused while its channel is archived.
/// The same title again changes nothing and says nothing.
pub(super) fn rename(
    tx: &mut Tx<'_>,
    thread: ThreadId,
    title: &str,
    actor: &Actor,
) -> Result<Thread> {
    let before = get(tx.conn(), thread)?;
    let channel_status: String = tx
        .conn()
        .prepare_cached("SELECT status FROM channels WHERE id = ?1")?
        .query_row([before.channel_id], |r| r.get(0))?;
    if channel_status.parse::<ChannelStatus>()? == ChannelStatus::Archived {
        return Err(Error::Refused(
            "the channel is archived; restore it to rename its threads".into(),
        ));
    }
    if before.title == title {
        return Ok(before);
    }
    super::execute_cached(
        tx.conn(),
        "UPDATE threads SET title = ?1 WHERE id = ?2",
        params![title, thread],
    )?;
    let after = get(tx.conn(), thread)?;
    let detail = format!(
        "thread {thread} renamed from {:?} to {title:?}",
        before.title
    );
    journal_and_announce(tx, actor, "thread.renamed", &detail, after)
}

/// Journals a person's change to a thread and tells the channel's watchers
/// the thread as it now is, in the change's transaction.
fn journal_and_announce(
    tx: &mut Tx<'_>,
    actor: &Actor,
    action: &str,
    detail: &str,
    after: Thread,
) -> Result<Thread> {
    let channel = Some(after.channel_id);
    super::channels::record_journal(tx.conn(), channel, None, actor, action, detail)?;
    let event = EventBody::ThreadUpdated {
        thread: after.clone(),
    };
    tx.emit(channel, event)?;
    Ok(after)
}

/// Sets each failed thread's status to follow its latest ended turn where
/// they disagree (a thread left `failed` although a later turn completed,
/// as versions before this one did).
/// Returns how many changed.
pub(super) fn follow_latest_turns(tx: &mut Tx<'_>) -> Result<u64> {
    let mut stmt = tx.conn().prepare_cached(
        "SELECT t.id, t.status, (SELECT u.state FROM turns u WHERE u.thread_id = t.id \
             AND u.state NOT IN ('queued', 'running') ORDER BY u.id DESC LIMIT 1) \
         FROM threads t WHERE t.status = 'failed' \
         AND NOT EXISTS (SELECT 1 FROM turns l WHERE l.thread_id = t.id \
             AND l.state IN ('queued', 'running'))",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, ThreadId>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    drop(stmt);
    let mut changed = 0;
    for (id, status, latest) in rows {
        let Some(latest) = latest else { continue };
        let current: ThreadStatus = status.parse()?;
        let Some(next) = crate::store::rules::thread_status_after(latest.parse()?, current) else {
            continue;
        };
        let thread = touch(tx, id, Some(next))?;
        tx.emit(Some(thread.channel_id), EventBody::ThreadUpdated { thread })?;
        changed += 1;
    }
    Ok(changed)
}

/// Threads of a channel opened within `[from, to]` (Unix milliseconds).
pub(super) fn opened_between(
    conn: &Connection,
    channel: ChannelId,
    from: i64,
    to: i64,
) -> Result<Vec<ThreadId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM threads WHERE channel_id = ?1 AND opened_at BETWEEN ?2 AND ?3",
    )?;
    let ids = stmt
        .query_map(params![channel, from, to], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<ThreadId>>>()?;
    Ok(ids)
}

/// The distinct names that wrote in a channel's threads.
pub(super) fn authors(conn: &Connection, channel: ChannelId) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT author_name FROM messages WHERE channel_id = ?1 \
         AND author_kind IN ('human', 'guest', 'agent', 'skipper')",
    )?;
    let names = stmt
        .query_map([channel], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(names)
}
