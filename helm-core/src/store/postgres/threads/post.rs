//! Human posts and thread status changes, each one transaction that holds
//! the thread's row lock: posts into one thread from several nodes take
//! their turns, and a status change cannot cross a post that reopens or
//! wakes the thread.

use super::super::authority::escalations;
use super::super::channels::record::record_journal;
use super::super::codec::now;
use super::super::events::append;
use super::super::failed;
use super::super::turns::{self, Chain};
use super::reading::record_mentions;
use super::rows::{NewMessage, THREAD, insert_message, lock_thread, thread_at};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{Actor, Author, ChannelStatus, MessageStatus, Thread, ThreadId, ThreadStatus};
use crate::runtime::wake::{decided_by_message, should_wake, thread_title, without_mentions};
use crate::store::postgres::prepared::Db;
use crate::store::types::{NewEscalation, NewPost, Posted};

/// Marks a thread active now (and sets its status, if given); the thread
/// as it now is, from the same statement.
/// Marks `thread` active: new work in a resolved or failed session (a
/// message, a retried turn) reopens it, with its event.
pub(crate) async fn resume(tx: &impl Db, thread: &Thread) -> Result<Thread> {
    let reopen = matches!(thread.status, ThreadStatus::Resolved | ThreadStatus::Failed)
        .then_some(ThreadStatus::Open);
    let touched = touch(tx, thread.id, reopen).await?;
    if reopen.is_some() {
        append(
            tx,
            Some(thread.channel_id),
            EventBody::ThreadUpdated {
                thread: touched.clone(),
            },
        )
        .await?;
    }
    Ok(touched)
}

async fn touch(tx: &impl Db, id: ThreadId, status: Option<ThreadStatus>) -> Result<Thread> {
    let at = now().as_millisecond();
    let row = tx
        .query_opt(
            &format!(
                "UPDATE threads AS t SET status = coalesce($1, t.status), updated_at = $2 \
                 WHERE t.id = $3 RETURNING {THREAD}"
            ),
            &[&status.map(|s| s.as_str()), &at, &id.get()],
        )
        .await
        .map_err(failed("updating a thread"))?
        .ok_or_else(|| Error::not_found("thread", id))?;
    thread_at(&row)
}

/// See [`crate::store::ThreadStore::post_message`].
pub(super) async fn post(tx: &impl Db, post: NewPost) -> Result<Posted> {
    // Shared: the channel cannot be archived while the post is written.
    let status: String = tx
        .query_opt(
            "SELECT status FROM channels WHERE id = $1 FOR SHARE",
            &[&post.channel_id.get()],
        )
        .await
        .map_err(failed("reading a channel"))?
        .ok_or_else(|| Error::not_found("channel", post.channel_id))?
        .get(0);
    if status.parse::<ChannelStatus>()? == ChannelStatus::Archived {
        return Err(Error::Refused(
            "the channel is archived; restore it to work there".into(),
        ));
    }
    let author = Author::Human {
        user_id: post.author.id,
        name: post.author.name.clone(),
    };

    let (thread_row, thread_created) = match post.thread_id {
        Some(id) => {
            let found = lock_thread(tx, id).await?;
            if found.channel_id != post.channel_id {
                return Err(Error::not_found("thread", id));
            }
            if found.status == ThreadStatus::Archived {
                return Err(Error::Refused(format!(
                    "thread {id} is archived; reopen it to continue"
                )));
            }
            (found, false)
        }
        None => {
            let at = now().as_millisecond();
            let row = tx
                .query_one(
                    &format!(
                        "INSERT INTO threads AS t (channel_id, title, status, opened_by, \
                         opened_at, updated_at) VALUES ($1, $2, 'open', $3, $4, $4) \
                         RETURNING {THREAD}"
                    ),
                    &[
                        &post.channel_id.get(),
                        &thread_title(&post.content),
                        &post.author.id.get(),
                        &at,
                    ],
                )
                .await
                .map_err(failed("opening a thread"))?;
            (thread_at(&row)?, true)
        }
    };

    let message = insert_message(
        tx,
        NewMessage {
            channel_id: post.channel_id,
            thread_id: Some(thread_row.id),
            author: &author,
            content: &post.content,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )
    .await?;

    let thread_row = if thread_created {
        let row = tx
            .query_one(
                &format!(
                    "UPDATE threads AS t SET root_message_id = $1 WHERE t.id = $2 \
                     RETURNING {THREAD}"
                ),
                &[&message.id.get(), &thread_row.id.get()],
            )
            .await
            .map_err(failed("setting a thread's first message"))?;
        let opened = thread_at(&row)?;
        append(
            tx,
            Some(post.channel_id),
            EventBody::ThreadCreated {
                thread: opened.clone(),
            },
        )
        .await?;
        opened
    } else {
        if post.author.role.is_admin() {
            escalations::answer_handed(tx, &thread_row, &post.author).await?;
        }
        resume(tx, &thread_row).await?
    };
    super::super::memory::index_message(tx, &message).await?;
    append(
        tx,
        Some(post.channel_id),
        EventBody::MessageCreated {
            message: message.clone(),
        },
    )
    .await?;
    record_mentions(tx, &message).await?;

    // The thread's facts are read only when the message alone does not
    // decide, and each is an index seek, not a pass over the thread.
    let decided = decided_by_message(post.mentions_resident, post.calls_skipper);
    let wake = if let Some(wake) = decided {
        wake
    } else {
        let row = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM messages WHERE thread_id = $1 \
                   AND author_user_id > $3) \
                 OR EXISTS (SELECT 1 FROM messages WHERE thread_id = $1 AND author_user_id < $3), \
                 EXISTS (SELECT 1 FROM messages WHERE thread_id = $1 AND author_agent_id = $2)",
                &[
                    &thread_row.id.get(),
                    &post.resident.id.get(),
                    &post.author.id.get(),
                ],
            )
            .await
            .map_err(failed("reading who wrote in a thread"))?;
        let (other_humans, agent_replied): (bool, bool) = (row.get(0), row.get(1));
        should_wake(false, false, agent_replied, 1 + usize::from(other_humans))
    };
    let mut turn = None;
    let mut ahead = 0;
    if wake {
        let queued: i64 = tx
            .query_one(
                "SELECT count(*) FROM turns WHERE state = 'queued' AND channel_id = $1 \
                 AND requested_by = $2",
                &[&post.channel_id.get(), &post.author.id.get()],
            )
            .await
            .map_err(failed("counting a person's queued turns"))?
            .get(0);
        crate::store::rules::check_queued(&post.author, queued)?;
        let (admitted, before) = turns::admit(
            tx,
            &thread_row,
            &message,
            &post.resident,
            Chain {
                requested_by: Some(post.author.id),
                hop: 0,
                escalation_id: None,
                admission: &post.admission,
            },
        )
        .await?;
        turn = Some(admitted);
        ahead = before;
    }
    let mut escalation = None;
    if post.calls_skipper {
        let escalated = escalations::escalate(
            tx,
            NewEscalation {
                thread_id: thread_row.id,
                from_agent_id: None,
                from_agent_handle: None,
                from_user_id: Some(post.author.id),
                reason: without_mentions(&post.content),
                requested_by: Some(post.author.id),
                hop: 0,
                admission: post.admission.clone(),
            },
        )
        .await?;
        escalation = Some(escalated.escalation);
    }
    Ok(Posted {
        escalation,
        message,
        thread: thread_row,
        thread_created,
        turn,
        ahead,
    })
}

/// See [`crate::store::ThreadStore::set_thread_status`].
pub(super) async fn set_status(
    tx: &impl Db,
    id: ThreadId,
    status: ThreadStatus,
    actor: &Actor,
) -> Result<Thread> {
    let before = lock_thread(tx, id).await?;
    if before.status == status {
        return Err(Error::Conflict(format!("thread {id} is already {status}")));
    }
    let live: i64 = tx
        .query_one(
            "SELECT count(*) FROM turns WHERE thread_id = $1 AND state IN ('queued', 'running')",
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a thread's work in progress"))?
        .get(0);
    if live > 0 && matches!(status, ThreadStatus::Resolved | ThreadStatus::Archived) {
        return Err(Error::Refused(format!(
            "thread {id} has work in progress; stop it before marking it {status}"
        )));
    }
    let after = touch(tx, id, Some(status)).await?;
    let detail = format!("thread {id} ({}) marked {status}", before.title);
    journal_and_announce(tx, actor, after, &format!("thread.{status}"), &detail).await
}

/// See [`crate::store::ThreadStore::rename_thread`]. The channel's row is
/// shared so it cannot be archived while the rename is written.
pub(super) async fn rename(
    tx: &impl Db,
    id: ThreadId,
    title: &str,
    actor: &Actor,
) -> Result<Thread> {
    let before = lock_thread(tx, id).await?;
    let status: String = tx
        .query_one(
            "SELECT status FROM channels WHERE id = $1 FOR SHARE",
            &[&before.channel_id.get()],
        )
        .await
        .map_err(failed("reading a channel"))?
        .get(0);
    if status.parse::<ChannelStatus>()? == ChannelStatus::Archived {
        return Err(Error::Refused(
            "the channel is archived; restore it to rename its threads".into(),
        ));
    }
    if before.title == title {
        return Ok(before);
    }
    let row = tx
        .query_one(
            &format!("UPDATE threads AS t SET title = $1 WHERE t.id = $2 RETURNING {THREAD}"),
            &[&title, &id.get()],
        )
        .await
        .map_err(failed("renaming a thread"))?;
    let detail = format!("thread {id} renamed from {:?} to {title:?}", before.title);
    journal_and_announce(tx, actor, thread_at(&row)?, "thread.renamed", &detail).await
}

/// Journals a person's change to a thread and tells the channel's watchers
/// the thread as it now is, in the change's transaction.
async fn journal_and_announce(
    tx: &impl Db,
    actor: &Actor,
    after: Thread,
    action: &str,
    detail: &str,
) -> Result<Thread> {
    let channel = Some(after.channel_id);
    record_journal(tx, channel, None, actor, action, detail).await?;
    let event = EventBody::ThreadUpdated {
        thread: after.clone(),
    };
    append(tx, channel, event).await?;
    Ok(after)
}

/// When a person last wrote in a thread.
pub(super) async fn last_human_post_at(
    c: &impl Db,
    id: ThreadId,
) -> Result<Option<jiff::Timestamp>> {
    let row = c
        .query_one(
            "SELECT max(created) FROM messages WHERE thread_id = $1 AND author_kind = 'human'",
            &[&id.get()],
        )
        .await
        .map_err(failed("reading a thread's last human post"))?;
    super::super::codec::opt_ts(&row, 0)
}
