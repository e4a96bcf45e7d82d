//! A turn's context is read from the thread's tail: the first message and
//! the newest ones within the budget, with what lies between counted and
//! what the summary does not cover told apart.

use helm_core::model::{MessageId, ThreadId};
use helm_core::store::message_tokens;

use super::kit::{Fixture, LAUNCH_PURPOSE};

/// A thread of `n` messages of the Captain's, written below the API, with
/// their places in the thread (`seq`) or, as a row from before them,
/// without; their ids, oldest first.
fn fill(
    f: &Fixture,
    channel: i64,
    n: usize,
    placed: bool,
) -> anyhow::Result<(ThreadId, Vec<MessageId>)> {
    let db = f.raw_db()?;
    db.execute(
        "INSERT INTO threads (channel_id, title, status, opened_by, opened_at, updated_at) \
         VALUES (?1, 'long', 'open', ?2, 0, 0)",
        rusqlite::params![channel, f.captain.id.get()],
    )?;
    let thread = db.last_insert_rowid();
    let mut ids = Vec::new();
    for m in 0..n {
        db.execute(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, author_name, \
             content, status, created, updated, seq) \
             VALUES (?1, ?2, 'human', ?3, 'captain', ?4, 'complete', 0, 0, ?5)",
            rusqlite::params![
                channel,
                thread,
                f.captain.id.get(),
                format!("message {m:04}"),
                placed.then_some(m as i64 + 1)
            ],
        )?;
        ids.push(MessageId(db.last_insert_rowid()));
    }
    Ok((ThreadId(thread), ids))
}

#[tokio::test]
async fn the_tail_is_the_first_message_and_the_newest_that_fit() -> anyhow::Result<()> {
    tail_of_a_long_thread(true).await
}

#[tokio::test]
async fn a_thread_without_places_is_counted_the_same() -> anyhow::Result<()> {
    tail_of_a_long_thread(false).await
}

#[tokio::test]
async fn posted_messages_take_the_next_place_in_their_thread() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let ch = helm_core::model::ChannelRef::Id(launch.channel.id);
    let first = f.helm.post_message(&f.captain, &ch, "one", None).await?;
    let thread = Some(first.thread.id);
    f.helm.post_message(&f.captain, &ch, "two", thread).await?;
    f.helm
        .post_message(&f.captain, &ch, "three", thread)
        .await?;
    let places: Vec<Option<i64>> = f
        .raw_db()?
        .prepare("SELECT seq FROM messages WHERE thread_id = ?1 ORDER BY id")?
        .query_map([first.thread.id.0], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    assert_eq!(places, [Some(1), Some(2), Some(3)]);
    Ok(())
}

async fn tail_of_a_long_thread(placed: bool) -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let (thread, ids) = fill(&f, launch.channel.id.get(), 1000, placed)?;
    let store = f.helm.store();

    let whole = store.thread_tail(thread, None, usize::MAX).await?;
    assert_eq!(whole.messages().count(), 1000);
    assert_eq!((whole.omitted, whole.uncovered), (0, 0));

    // Every message costs the same here: the budget holds the first and 9.
    let first = whole
        .first
        .clone()
        .ok_or_else(|| anyhow::anyhow!("no first"))?;
    let cost = message_tokens(&first);
    let tail = store.thread_tail(thread, Some(ids[499]), cost * 10).await?;
    assert_eq!(tail.first.as_ref().map(|m| m.id), Some(ids[0]));
    let recent: Vec<MessageId> = tail.recent.iter().map(|m| m.id).collect();
    assert_eq!(recent, ids[491..500]);
    assert_eq!(tail.omitted, 490);
    assert_eq!(tail.newest_omitted, Some(ids[490]));
    assert_eq!(tail.uncovered, 490, "no summary yet");
    assert_eq!(tail.newest(), Some(ids[499]));

    // A summary through message 480 leaves ten left out uncovered.
    f.raw_db()?.execute(
        "INSERT INTO thread_summaries (thread_id, goal, work_done, result, open_items, decisions, \
         trigger, provider, model, created, last_message_id) \
         VALUES (?1, 'g', 'w', 'r', '[]', '[]', 'compaction', 'p', 'm', 0, ?2)",
        rusqlite::params![thread.0, ids[480].0],
    )?;
    let tail = store.thread_tail(thread, Some(ids[499]), cost * 10).await?;
    assert_eq!((tail.omitted, tail.uncovered), (490, 10));

    // A budget smaller than the first message still gives the first.
    let tiny = store.thread_tail(thread, None, 1).await?;
    assert_eq!(tiny.first.as_ref().map(|m| m.id), Some(ids[0]));
    assert!(tiny.recent.is_empty());
    assert_eq!(tiny.omitted, 999);
    assert_eq!(tiny.newest(), Some(ids[999]));
    Ok(())
}
