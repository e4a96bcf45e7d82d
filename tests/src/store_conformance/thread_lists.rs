//! Conformance cases for listing a channel's threads page by page and
//! searching them.

use std::collections::HashSet;

use anyhow::ensure;
use helm_core::model::{ThreadId, ThreadStatus};
use helm_core::store::{MatchedIn, ThreadCursor, ThreadPage, search_threads};

use super::Subject;
use super::fixtures::Fixture;

fn page(before: Option<ThreadCursor>, archived: Option<bool>, limit: usize) -> ThreadPage {
    ThreadPage {
        before,
        archived,
        titled: Vec::new(),
        limit,
    }
}

/// Threads read by id come back in the order asked, in one read; an id of
/// another channel's thread, or of no thread, is left out.
pub async fn threads_are_read_by_id_in_the_order_asked(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let other = f.channel("other").await?;
    let mut made: Vec<ThreadId> = Vec::new();
    for i in 0..4 {
        let posted = f
            .post(&research, None, &format!("session number {i}"), false)
            .await?;
        made.push(posted.thread.id);
    }
    let elsewhere = f.post(&other, None, "not research", false).await?.thread.id;
    let none = ThreadId(made[3].get() + elsewhere.get() + 1000);
    let asked = [made[2], elsewhere, made[0], none, made[3]];
    let read = f.store.threads_in(research.channel.id, &asked).await?;
    let ids: Vec<ThreadId> = read.iter().map(|t| t.id).collect();
    ensure!(
        ids == vec![made[2], made[0], made[3]],
        "the channel's own, in the order asked: {ids:?}"
    );
    ensure!(
        read.iter()
            .all(|t| t.channel_id == research.channel.id && t.title.starts_with("session number")),
        "whole threads: {read:?}"
    );
    let nothing = f.store.threads_in(research.channel.id, &[]).await?;
    ensure!(nothing.is_empty(), "no ids, no threads: {nothing:?}");
    Ok(())
}

/// Paging by cursor reaches every thread once, even when a thread not yet
/// listed, and one already listed, are updated between pages; the archived
/// filter keeps archived threads apart.
pub async fn thread_pages_neither_repeat_nor_skip(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let channel = research.channel.id;
    let mut made: Vec<ThreadId> = Vec::new();
    for i in 0..23 {
        let posted = f
            .post(&research, None, &format!("session number {i}"), false)
            .await?;
        made.push(posted.thread.id);
    }
    let first = f.store.thread_page(channel, page(None, None, 5)).await?;
    ensure!(first.len() == 5, "a first page of 5: {}", first.len());
    let ids: Vec<ThreadId> = first.iter().map(|t| t.id).collect();
    let newest: Vec<ThreadId> = made.iter().rev().take(5).copied().collect();
    ensure!(ids == newest, "newest first: {ids:?} vs {newest:?}");

    // Meanwhile: the oldest thread (not listed yet) and one already listed
    // get new messages, so both move to the head of the list.
    let (oldest, listed) = (made[0], first[2].id);
    f.post(&research, Some(oldest), "more on the oldest", false)
        .await?;
    f.post(&research, Some(listed), "more on a listed one", false)
        .await?;

    let mut seen: Vec<ThreadId> = ids.clone();
    let mut cursor = first.last().map(ThreadCursor::after);
    loop {
        let next = f.store.thread_page(channel, page(cursor, None, 5)).await?;
        if next.is_empty() {
            break;
        }
        seen.extend(next.iter().map(|t| t.id));
        cursor = next.last().map(ThreadCursor::after);
    }
    let distinct: HashSet<ThreadId> = seen.iter().copied().collect();
    ensure!(distinct.len() == seen.len(), "no thread twice: {seen:?}");
    // The updated, not yet listed thread moved ahead of the cursor: the
    // reader hears of it by its event, and the head of a fresh list has it.
    let expected: HashSet<ThreadId> = made.iter().copied().filter(|t| *t != oldest).collect();
    ensure!(distinct == expected, "every other thread once: {seen:?}");
    let head = f.store.thread_page(channel, page(None, None, 2)).await?;
    let head: HashSet<ThreadId> = head.iter().map(|t| t.id).collect();
    ensure!(
        head == HashSet::from([oldest, listed]),
        "updated threads lead: {head:?}"
    );

    // Archived threads only under their filter.
    f.store
        .set_thread_status(made[3], ThreadStatus::Archived, f.actor())
        .await?;
    let live = f
        .store
        .thread_page(channel, page(None, Some(false), 100))
        .await?;
    ensure!(live.len() == 22, "all but the archived one: {}", live.len());
    ensure!(live.iter().all(|t| t.id != made[3]));
    let archived = f
        .store
        .thread_page(channel, page(None, Some(true), 100))
        .await?;
    ensure!(
        archived.iter().map(|t| t.id).collect::<Vec<_>>() == [made[3]],
        "only the archived one: {archived:?}"
    );
    ensure!(f.store.threads(channel, 100).await?.len() == 23);
    Ok(())
}

/// A search finds threads by their title and by a word only in their
/// messages (as the word index reads it: stemmed), with a snippet and the
/// message it matched, keeps to the channel and the archived filter.
pub async fn threads_are_found_by_title_and_message_text(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let other = f.channel("other").await?;
    let channel = research.channel.id;
    let titled = f
        .post(&research, None, "Walrus migration plan", false)
        .await?
        .thread;
    let said = f.post(&research, None, "weekly notes", false).await?.thread;
    let deep = f
        .post(
            &research,
            Some(said.id),
            "we saw two walrus colonies resting on the northern ice shelf",
            false,
        )
        .await?;
    // Enough other talk that the searched words are rare in the channel,
    // as word ranking wants them to be.
    for topic in [
        "budget review",
        "hiring loop",
        "release checklist",
        "office move",
    ] {
        f.post(&research, None, topic, false).await?;
    }
    f.post(&other, None, "walrus elsewhere", false).await?;

    let hits = search_threads(f.store, channel, "the walrus", None, 10).await?;
    let ids: Vec<ThreadId> = hits.iter().map(|h| h.thread.id).collect();
    ensure!(
        ids == [titled.id, said.id],
        "title first, then text: {ids:?}"
    );
    let by_text = &hits[1];
    ensure!(by_text.matched_in == MatchedIn::Message, "{by_text:?}");
    ensure!(by_text.message_id == Some(deep.message.id), "{by_text:?}");
    ensure!(
        by_text.snippet.contains("walrus colonies resting"),
        "{}",
        by_text.snippet
    );

    // "colony" is only in a message, and only as "colonies".
    let only_text = search_threads(f.store, channel, "colony", None, 10).await?;
    ensure!(
        only_text.iter().map(|h| h.thread.id).collect::<Vec<_>>() == [said.id],
        "a word only in a message, by its stem: {only_text:?}"
    );
    ensure!(
        only_text[0].snippet.contains("colonies"),
        "{}",
        only_text[0].snippet
    );

    f.store
        .set_thread_status(said.id, ThreadStatus::Archived, f.actor())
        .await?;
    let live = search_threads(f.store, channel, "shelf", Some(false), 10).await?;
    ensure!(live.is_empty(), "archived threads left out: {live:?}");
    let archived = search_threads(f.store, channel, "shelf", Some(true), 10).await?;
    ensure!(archived.len() == 1, "{archived:?}");
    ensure!(
        search_threads(f.store, channel, "the of", None, 10)
            .await?
            .is_empty(),
        "stop words alone find nothing"
    );
    Ok(())
}

/// A title with every word of the search is found, and first, however many
/// newer titles share one common word of it.
pub async fn a_title_with_every_word_outranks_many_newer_with_one(
    s: &Subject,
) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let budget = f
        .post(&research, None, "Quarterly budget session", false)
        .await?
        .thread
        .id;
    for i in 0..110 {
        f.post(&research, None, &format!("Weekly sync session {i}"), false)
            .await?;
    }
    let hits = search_threads(
        f.store,
        research.channel.id,
        "quarterly budget session",
        None,
        10,
    )
    .await?;
    ensure!(
        hits.first().map(|h| h.thread.id) == Some(budget),
        "the thread titled with every word first: {:?}",
        hits.iter().map(|h| &h.thread.title).collect::<Vec<_>>()
    );
    Ok(())
}
