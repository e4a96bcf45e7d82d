//! The conformance cases. Each takes a fresh [`Subject`] and asserts what
//! the port promises, through the port alone.

use std::collections::HashSet;

use anyhow::{Context, ensure};
use helm_core::Error;
use helm_core::events::EventBody;
use helm_core::memory::recall::ItemKey;
use helm_core::model::{Actor, AuthorType, MemoryId, ThreadId};
use helm_core::model::{
    AgentKind, ChannelName, ChannelRef, ChannelStatus, Handle, MemoryKind, MemoryScope,
    MemorySource, MemoryStatus, ModelChoice, PolicyLevel, Role, ThreadStatus, TurnState,
};
use helm_core::store::{
    AuditRecord, ChannelFilter, InviteAcceptance, MemoryFilter, NewAgent, NewApiToken, NewInvite,
    NewMemory, NodeAddress, NodeRecord, PolicyScope, TurnFinish, UserChange, message_tokens,
};

use helm_core::provider::Usage;

use super::fixtures::{Fixture, admission, bootstrap_plan, completed, failing_world, no_world};
use super::{Subject, Tamper};

/// Bootstrapping twice creates once and returns the same world both times.
pub async fn bootstrap_is_idempotent(s: &Subject) -> anyhow::Result<()> {
    let store = s.store.as_ref();
    ensure!(
        store.workspace().await?.is_none(),
        "a fresh store has no workspace"
    );
    let first = store.bootstrap(bootstrap_plan(), no_world()).await?;
    let second = store.bootstrap(bootstrap_plan(), no_world()).await?;
    ensure!(
        first.created && !second.created,
        "only the first call creates"
    );
    ensure!(first.workspace.id == second.workspace.id);
    ensure!(first.captain.id == second.captain.id);
    ensure!(first.home.channel.id == second.home.channel.id);
    ensure!(first.home.agent.kind == AgentKind::Skipper);
    ensure!(store.list_users().await?.len() == 1, "one Captain");
    ensure!(
        store.list_channels(ChannelFilter::default()).await?.len() == 1,
        "only #main"
    );
    Ok(())
}

/// A channel has one resident agent, and an agent one channel.
pub async fn one_resident_agent_per_channel(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let ops = f.channel("ops").await?;
    let spare = f
        .store
        .insert_agent(NewAgent {
            kind: AgentKind::Channel,
            handle: Handle::parse("spare")?,
            display_name: "Spare".into(),
        })
        .await?;
    let second_resident = f.store.bind_agent(spare.id, research.channel.id).await;
    ensure!(
        second_resident.is_err(),
        "a second resident agent was bound: {second_resident:?}"
    );
    let second_channel = f.store.bind_agent(research.agent.id, ops.channel.id).await;
    ensure!(
        second_channel.is_err(),
        "an agent was bound to a second channel: {second_channel:?}"
    );
    let again = f
        .store
        .channel(&ChannelRef::Id(research.channel.id))
        .await?;
    ensure!(again.agent.id == research.agent.id, "the resident stays");
    Ok(())
}

/// There is one Skipper, and it is bound to no agent channel.
pub async fn one_skipper_and_skipper_stays_home(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let second = f
        .store
        .insert_agent(NewAgent {
            kind: AgentKind::Skipper,
            handle: Handle::parse("skipper-two")?,
            display_name: "Another Skipper".into(),
        })
        .await;
    ensure!(
        matches!(second, Err(Error::Conflict(_))),
        "a second Skipper was added: {second:?}"
    );
    let research = f.channel("research").await?;
    let bound = f
        .store
        .bind_agent(f.boot.home.agent.id, research.channel.id)
        .await;
    ensure!(bound.is_err(), "Skipper was bound to a channel: {bound:?}");
    let archive_home = f
        .store
        .set_channel_status(f.boot.home.channel.id, ChannelStatus::Archived, f.actor())
        .await;
    ensure!(
        archive_home.is_err(),
        "#main was archived: {archive_home:?}"
    );
    Ok(())
}

/// Live (active or archived) channel names are unique; a deleted channel's
/// name is free again.
pub async fn live_channel_names_are_unique(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let first = f.channel("research").await?;
    let twin = f
        .store
        .provision_channel(f.plan("research")?, no_world())
        .await;
    ensure!(
        matches!(twin, Err(Error::Conflict(_))),
        "a second live #research: {twin:?}"
    );
    f.store
        .set_channel_status(first.channel.id, ChannelStatus::Archived, f.actor())
        .await?;
    let while_archived = f
        .store
        .provision_channel(f.plan("research")?, no_world())
        .await;
    ensure!(
        matches!(while_archived, Err(Error::Conflict(_))),
        "an archived channel's name was reused: {while_archived:?}"
    );
    f.store
        .delete_channel(first.channel.id, f.actor(), no_world())
        .await?;
    let reused = f.channel("research").await?;
    ensure!(reused.channel.id != first.channel.id, "a new channel");
    ensure!(reused.channel.status == ChannelStatus::Active);
    Ok(())
}

/// When the world hook fails, provisioning leaves no row and no event.
pub async fn provisioning_is_all_or_nothing(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let before = f.store.stats().await?;
    let users = f.store.list_users().await?.len();
    let failed = f
        .store
        .provision_channel(f.plan("research")?, failing_world())
        .await;
    ensure!(failed.is_err(), "provisioning succeeded without its world");
    let after = f.store.stats().await?;
    ensure!(
        after.last_event_seq == before.last_event_seq,
        "no event kept"
    );
    ensure!(
        after.channels_active == before.channels_active,
        "no channel kept"
    );
    ensure!(after.agents == before.agents, "no agent kept");
    ensure!(after.messages == before.messages, "no announcement kept");
    ensure!(f.store.list_users().await?.len() == users);
    ensure!(
        f.store
            .channel(&ChannelRef::Name(ChannelName::parse("research")?))
            .await
            .is_err(),
        "the channel is not there"
    );
    // The name and the handle are still free.
    let plan = f.plan("research")?;
    let wanted = plan.handle.clone();
    let made = f.store.provision_channel(plan, no_world()).await?;
    ensure!(made.agent.handle == wanted, "{:?}", made.agent.handle);
    Ok(())
}

/// Events get strictly increasing `seq`s, live in the order they are kept,
/// and `events_after(seq)` catches up from any point without a gap.
pub async fn events_follow_commit_order_and_catch_up(s: &Subject) -> anyhow::Result<()> {
    let mut live = s.store.subscribe();
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let posted = f.post(&research, None, "first", false).await?;
    f.post(&research, Some(posted.thread.id), "second", false)
        .await?;
    let all = f.store.events_after(0, 10_000).await?;
    ensure!(
        all.len() >= 4,
        "bootstrap, provisioning and posts emit events"
    );
    let seqs: Vec<u64> = all.iter().map(|e| e.seq).collect();
    ensure!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "seq strictly increases: {seqs:?}"
    );
    ensure!(
        f.store.stats().await?.last_event_seq == *seqs.last().context("events")?,
        "stats knows the newest seq"
    );
    ensure!(
        f.store.event_head().await? == *seqs.last().context("events")?,
        "the event head is the newest seq"
    );
    let mid = seqs[seqs.len() / 2];
    let rest = f.store.events_after(mid, 10_000).await?;
    let expected: Vec<u64> = seqs.iter().copied().filter(|&q| q > mid).collect();
    ensure!(
        rest.iter().map(|e| e.seq).collect::<Vec<_>>() == expected,
        "catch-up from {mid} returns exactly what followed"
    );
    let limited = f.store.events_after(0, 2).await?;
    ensure!(
        limited.len() == 2 && limited[0].seq == seqs[0],
        "the limit keeps the oldest"
    );
    // A store may deliver its own events through its feed a moment after
    // the commit (Postgres reads them back from the log), so wait for as
    // many as were kept, then compare.
    let mut heard = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while heard.len() < seqs.len() {
        match tokio::time::timeout_at(deadline, live.recv()).await {
            Ok(Ok(event)) => heard.push(event.seq),
            _ => break,
        }
    }
    ensure!(heard == seqs, "live: {heard:?}, kept: {seqs:?}");
    Ok(())
}

/// A channel's events of chosen kinds come back newest first, only that
/// channel's, paged by `before`, however many messages lie between.
pub async fn a_channels_lifecycle_is_read_newest_first(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let other = f.channel("other").await?;
    let id = research.channel.id;
    f.store
        .set_channel_status(id, ChannelStatus::Archived, f.actor())
        .await?;
    for n in 0..5 {
        f.post(&other, None, &format!("chatter {n}"), false).await?;
    }
    f.store
        .set_channel_status(id, ChannelStatus::Active, f.actor())
        .await?;
    f.post(&research, None, "back at work", false).await?;
    let kinds = helm_core::events::LIFECYCLE_EVENTS;
    let story = f.store.channel_events(id, kinds, None, 10).await?;
    let names: Vec<&str> = story.iter().map(|e| e.body.type_name()).collect();
    ensure!(
        names == ["channel.restored", "channel.archived", "channel.created"],
        "{names:?}"
    );
    ensure!(
        story.iter().all(|e| e.channel_id == Some(id)),
        "only #research's"
    );
    let page = f
        .store
        .channel_events(id, kinds, Some(story[0].seq), 1)
        .await?;
    ensure!(
        page.len() == 1 && page[0].seq == story[1].seq,
        "before pages back: {page:?}"
    );
    let none = f
        .store
        .channel_events(id, &["channel.deleted"], None, 10)
        .await?;
    ensure!(none.is_empty(), "{none:?}");
    Ok(())
}

/// A thread's tail is its first message and the newest that fit the budget,
/// and it says how many were left out.
pub async fn thread_tail_keeps_to_its_budget(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let opened = f
        .post(&research, None, "What this thread is for.", false)
        .await?;
    let thread = opened.thread.id;
    for i in 0..20 {
        f.post(
            &research,
            Some(thread),
            &format!("message {i} {}", "words ".repeat(20)),
            false,
        )
        .await?;
    }
    let all = f.store.thread_messages(thread, None).await?;
    ensure!(all.len() == 21, "{} messages", all.len());
    let budget = message_tokens(&all[0]) + 3 * message_tokens(&all[20]);
    let tail = f.store.thread_tail(thread, None, budget).await?;
    ensure!(
        tail.first.as_ref().map(|m| m.id) == Some(all[0].id),
        "the first message leads"
    );
    let cost: usize = tail.messages().map(message_tokens).sum();
    ensure!(cost <= budget, "{cost} tokens over a budget of {budget}");
    ensure!(
        tail.recent.len() == 3,
        "{} recent messages",
        tail.recent.len()
    );
    let newest: Vec<_> = all[18..].iter().map(|m| m.id).collect();
    ensure!(
        tail.recent.iter().map(|m| m.id).collect::<Vec<_>>() == newest,
        "the newest, oldest first"
    );
    ensure!(tail.omitted == 17, "{} omitted", tail.omitted);
    ensure!(tail.newest_omitted == Some(all[17].id));
    let whole = f.store.thread_tail(thread, None, usize::MAX).await?;
    ensure!(whole.omitted == 0 && whole.recent.len() == 20, "all fit");
    Ok(())
}

/// A finished turn reads back with the tokens its model calls reported, and
/// with none when they reported nothing (no zeros made up).
pub async fn a_finished_turn_keeps_its_token_counts(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let mut turns = Vec::new();
    for (text, usage) in [
        (
            "@research count",
            Usage {
                input_tokens: 1200,
                output_tokens: 34,
            },
        ),
        ("@research again", Usage::default()),
    ] {
        let asked = f.post(&research, None, text, true).await?;
        let turn = asked.turn.context("a mention wakes")?;
        f.store.start_turn(turn.id, None).await?.context("claim")?;
        let finish = TurnFinish {
            usage,
            ..completed("Counted")
        };
        let ended = f
            .store
            .finish_turn(turn.id, finish)
            .await?
            .context("ends")?;
        turns.push((turn, ended));
    }
    let (counted, ended) = &turns[0];
    ensure!(
        ended.usage
            == Some(Usage {
                input_tokens: 1200,
                output_tokens: 34
            }),
        "the finished turn carries its usage: {:?}",
        ended.usage
    );
    let read = s.store.thread_turns(counted.thread_id).await?;
    ensure!(
        read.first().and_then(|t| t.usage)
            == Some(Usage {
                input_tokens: 1200,
                output_tokens: 34
            }),
        "read back: {read:?}"
    );
    let (unreported, _) = &turns[1];
    let read = s.store.thread_turns(unreported.thread_id).await?;
    ensure!(
        read.first().is_some_and(|t| t.usage.is_none()),
        "no counts reported, none read: {read:?}"
    );
    Ok(())
}

/// A failed turn runs again as a new turn for the same message, by the
/// person who asked; a turn that did not fail, or that its thread went on
/// after, is refused, so a second retry of the same failure is too.
pub async fn a_failed_turn_runs_again_once(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let mira = f.member("mira").await?;
    let asked = f
        .post(&research, None, "@research look it up", true)
        .await?;
    let failed = asked.turn.context("a mention wakes")?;
    f.store
        .start_turn(failed.id, None)
        .await?
        .context("claim")?;
    let failure = TurnFinish {
        state: TurnState::Failed,
        error: Some("the model is overloaded".into()),
        ..completed("")
    };
    f.store
        .finish_turn(failed.id, failure)
        .await?
        .context("ends")?;

    let again = s
        .store
        .retry_turn(failed.id, mira.clone(), admission())
        .await?;
    ensure!(
        again.id != failed.id && again.state == TurnState::Queued,
        "{again:?}"
    );
    ensure!(
        again.trigger_message_id != failed.trigger_message_id
            && again.agent_id == failed.agent_id
            && again.reply_message_id != failed.reply_message_id
            && again.requested_by == Some(mira.id),
        "the same agent, a new reply, asked by Mira: {again:?}"
    );
    // The failed session is open again while the agent works.
    let thread = s.store.thread(asked.thread.id).await?;
    ensure!(thread.status == ThreadStatus::Open, "{thread:?}");
    // Helm's note says who asked, and is what woke the agent.
    let messages = s.store.thread_messages(asked.thread.id, None).await?;
    let woke = messages.iter().find(|m| m.id == again.trigger_message_id);
    ensure!(
        woke.is_some_and(|m| m.content == "mira asked @research-agent to try again."),
        "{messages:?}"
    );
    let twice = s
        .store
        .retry_turn(failed.id, mira.clone(), admission())
        .await;
    ensure!(
        matches!(&twice, Err(Error::Conflict(m)) if m.contains("went on after")),
        "a second retry: {twice:?}"
    );
    // A turn that did not fail does not run again.
    f.store.start_turn(again.id, None).await?.context("claim")?;
    f.store
        .finish_turn(again.id, completed("Found it"))
        .await?
        .context("ends")?;
    let done = s
        .store
        .retry_turn(again.id, mira.clone(), admission())
        .await;
    ensure!(
        matches!(&done, Err(Error::Conflict(m)) if m.contains("only a failed or interrupted")),
        "a completed turn: {done:?}"
    );
    let turns = s.store.thread_turns(asked.thread.id).await?;
    ensure!(turns.len() == 2, "{turns:?}");
    Ok(())
}

/// A message that mentions nobody wakes the resident agent only in a thread
/// it has replied in and where one human speaks; the store reads both facts
/// from who wrote there before (either side of the poster's id).
pub async fn follow_ups_wake_the_agent_while_one_human_speaks(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let quiet = f.post(&research, None, "Notes for later.", false).await?;
    let unanswered = f
        .post(&research, Some(quiet.thread.id), "More notes.", false)
        .await?;
    ensure!(unanswered.turn.is_none(), "the agent never replied here");

    let asked = f.post(&research, None, "@research hello", true).await?;
    let thread = asked.thread.id;
    let turn = asked.turn.context("a mention wakes")?;
    f.store.start_turn(turn.id, None).await?.context("claim")?;
    f.store
        .finish_turn(turn.id, completed("Hello"))
        .await?
        .context("ends")?;
    let follow_up = f.post(&research, Some(thread), "And then?", false).await?;
    ensure!(follow_up.turn.is_some(), "a follow-up with one human wakes");

    let mira = f.member("mira").await?;
    let by_mira = f
        .post_as(&mira, &research, Some(thread), "I think so too.", false)
        .await?;
    ensure!(
        by_mira.turn.is_none(),
        "a second human's line does not wake"
    );
    let captain_again = f.post(&research, Some(thread), "Agreed.", false).await?;
    ensure!(
        captain_again.turn.is_none(),
        "with two humans only mentions wake"
    );
    let mentioned = f
        .post(&research, Some(thread), "@research summarise", true)
        .await?;
    ensure!(mentioned.turn.is_some(), "a mention still wakes");
    Ok(())
}

/// Memory records are listed current-first and found by their words.
pub async fn memory_records_are_listed_and_recalled(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let ops = f.channel("ops").await?;
    let record = |channel, content: &str| NewMemory {
        channel_id: channel,
        thread_id: None,
        kind: MemoryKind::Fact,
        content: content.to_string(),
        source: MemorySource::UserAction,
        source_message_id: None,
        author_type: AuthorType::Human,
        author_name: Some("captain".into()),
        scope: MemoryScope::Channel,
        confidence: Some(0.9),
        pinned: false,
    };
    let zebra = f
        .store
        .add_memory(record(
            research.channel.id,
            "The zebra database runs nightly.",
        ))
        .await?;
    f.store
        .add_memory(record(ops.channel.id, "Another zebra lives in ops."))
        .await?;
    let listed = f
        .store
        .list_memory(research.channel.id, MemoryFilter::default())
        .await?;
    ensure!(
        listed.iter().any(|m| m.id == zebra.id),
        "the record is listed"
    );
    ensure!(
        listed.iter().all(|m| m.channel_id == research.channel.id),
        "one channel's"
    );
    let hits = f
        .store
        .recall_lexical(research.channel.id, &["zebra".to_string()], 10, None)
        .await?;
    let keys: Vec<ItemKey> = hits.iter().map(|(k, _)| *k).collect();
    ensure!(
        keys.contains(&ItemKey::memory(zebra.id)),
        "found by its word: {keys:?}"
    );
    let items = f.store.recall_items(keys).await?;
    ensure!(
        items.iter().all(|i| i.channel_id == research.channel.id),
        "word search stays in its channel"
    );
    // Items come in the order asked for; unknown ones are left out.
    let second = f
        .store
        .add_memory(record(research.channel.id, "A second record."))
        .await?;
    let asked = vec![
        ItemKey::memory(second.id),
        ItemKey::message(helm_core::model::MessageId(1 << 40)),
        ItemKey::memory(zebra.id),
    ];
    let got: Vec<ItemKey> = f
        .store
        .recall_items(asked)
        .await?
        .iter()
        .map(|i| i.key)
        .collect();
    ensure!(
        got == vec![ItemKey::memory(second.id), ItemKey::memory(zebra.id)],
        "in the order asked, unknown keys left out: {got:?}"
    );
    let newer = f
        .store
        .supersede_memory(
            zebra.id,
            record(research.channel.id, "The zebra database runs hourly."),
        )
        .await?;
    ensure!(f.store.memory(zebra.id).await?.status == MemoryStatus::Superseded);
    let current = f
        .store
        .list_memory(research.channel.id, MemoryFilter::default())
        .await?;
    ensure!(
        current.iter().any(|m| m.id == newer.id) && !current.iter().any(|m| m.id == zebra.id),
        "superseded records leave the current list"
    );
    let pinned = f.store.pin_memory(newer.id, true).await?;
    ensure!(pinned.pinned);
    let forgotten = f.store.forget_memory(newer.id, f.actor()).await?;
    ensure!(forgotten.status == MemoryStatus::Forgotten);
    Ok(())
}

/// A forgotten record says who forgot it and when, unpinned; restoring it
/// makes it current again with that cleared; each change is a
/// `memory.changed` event, and repeating either is a conflict.
pub async fn a_forgotten_record_says_who_and_comes_back(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let ada = f.member("ada").await?;
    let item = f
        .store
        .add_memory(NewMemory {
            channel_id: research.channel.id,
            thread_id: None,
            kind: MemoryKind::Decision,
            content: "We launch on Friday.".into(),
            source: MemorySource::UserAction,
            source_message_id: None,
            author_type: AuthorType::Human,
            author_name: Some("captain".into()),
            scope: MemoryScope::Channel,
            confidence: None,
            pinned: true,
        })
        .await?;
    ensure!(item.forgotten_by.is_none() && item.forgotten_at.is_none());
    let before = f.store.event_head().await?;
    let forgotten = f.store.forget_memory(item.id, Actor::user(&ada)).await?;
    ensure!(forgotten.status == MemoryStatus::Forgotten, "{forgotten:?}");
    ensure!(
        forgotten.forgotten_by.as_deref() == Some("ada"),
        "who forgot it: {:?}",
        forgotten.forgotten_by
    );
    ensure!(forgotten.forgotten_at.is_some(), "when");
    ensure!(!forgotten.pinned, "forgetting unpins");
    ensure!(
        f.store.memory(item.id).await? == forgotten,
        "read back as returned"
    );
    let current = f
        .store
        .list_memory(research.channel.id, MemoryFilter::default())
        .await?;
    ensure!(!current.iter().any(|m| m.id == item.id), "out of the list");
    match f.store.forget_memory(item.id, f.actor()).await {
        Err(Error::Conflict(_)) => {}
        other => anyhow::bail!("forgetting twice: {other:?}"),
    }
    let restored = f.store.restore_memory(item.id).await?;
    ensure!(restored.status == MemoryStatus::Current, "{restored:?}");
    ensure!(
        restored.forgotten_by.is_none() && restored.forgotten_at.is_none(),
        "restoring clears who forgot it: {restored:?}"
    );
    ensure!(!restored.pinned, "it comes back unpinned");
    let current = f
        .store
        .list_memory(research.channel.id, MemoryFilter::default())
        .await?;
    ensure!(current.iter().any(|m| m.id == item.id), "back in the list");
    match f.store.restore_memory(item.id).await {
        Err(Error::Conflict(_)) => {}
        other => anyhow::bail!("restoring a current record: {other:?}"),
    }
    match f.store.restore_memory(MemoryId(1 << 40)).await {
        Err(Error::NotFound { .. }) => {}
        other => anyhow::bail!("restoring no record: {other:?}"),
    }
    let changes: Vec<_> = f
        .store
        .events_after(before, 100)
        .await?
        .into_iter()
        .filter_map(|e| match &e.body {
            EventBody::MemoryChanged { item: changed } if changed.id == item.id => {
                Some(changed.status)
            }
            _ => None,
        })
        .collect();
    ensure!(
        changes == [MemoryStatus::Forgotten, MemoryStatus::Current],
        "one memory.changed each: {changes:?}"
    );
    Ok(())
}

/// A thread takes a new title with a `thread.updated` event; the same
/// title again changes nothing; an archived channel refuses.
pub async fn renaming_a_thread_is_one_event(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let posted = f
        .post(&research, None, "look into the zebra", false)
        .await?;
    let id = posted.thread.id;
    let before = f.store.event_head().await?;
    let renamed = f
        .store
        .rename_thread(id, "Zebra database audit".into(), f.actor())
        .await?;
    ensure!(renamed.title == "Zebra database audit", "{renamed:?}");
    ensure!(renamed.status == posted.thread.status, "the status stays");
    ensure!(f.store.thread(id).await?.title == "Zebra database audit");
    let listed = f.store.threads(research.channel.id, 10).await?;
    ensure!(
        listed
            .iter()
            .any(|t| t.id == id && t.title == renamed.title),
        "listed under its new title"
    );
    let again = f
        .store
        .rename_thread(id, "Zebra database audit".into(), f.actor())
        .await?;
    ensure!(again.title == renamed.title);
    let updates: Vec<String> = f
        .store
        .events_after(before, 100)
        .await?
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ThreadUpdated { thread } if thread.id == id => Some(thread.title),
            _ => None,
        })
        .collect();
    ensure!(
        updates == ["Zebra database audit"],
        "one thread.updated with the new title: {updates:?}"
    );
    match f
        .store
        .rename_thread(ThreadId(1 << 40), "Nothing".into(), f.actor())
        .await
    {
        Err(Error::NotFound { .. }) => {}
        other => anyhow::bail!("renaming no thread: {other:?}"),
    }
    f.store
        .set_channel_status(research.channel.id, ChannelStatus::Archived, f.actor())
        .await?;
    match f
        .store
        .rename_thread(id, "While archived".into(), f.actor())
        .await
    {
        Err(Error::Refused(_)) => {}
        other => anyhow::bail!("renaming in an archived channel: {other:?}"),
    }
    ensure!(f.store.thread(id).await?.title == "Zebra database audit");
    Ok(())
}

/// The audit chain verifies intact, and an edit or a removed last row
/// breaks it where it happened.
pub async fn audit_chain_is_checked(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let start = helm_core::audit::verify(f.store).await?.rows;
    for i in 0..3 {
        f.store
            .audit(AuditRecord {
                channel_id: Some(f.boot.home.channel.id),
                thread_id: None,
                agent: Some("skipper".into()),
                asker: Some("captain".into()),
                action: format!("conformance.step{i}"),
                input_summary: format!("step {i}"),
                outcome: "ok".into(),
            })
            .await?;
    }
    let rows = f.store.audit_chain(0, 10_000).await?;
    ensure!(rows.len() as u64 == start + 3, "{} rows", rows.len());
    ensure!(
        rows.windows(2)
            .all(|w| w[0].id < w[1].id && w[1].prev_hash == w[0].hash),
        "rows come in order, each linked to the one before"
    );
    let page = f.store.audit_chain(rows[0].id, 1).await?;
    ensure!(page.len() == 1 && page[0].id == rows[1].id, "paged by id");
    let intact = helm_core::audit::verify(f.store).await?;
    ensure!(intact.intact() && intact.rows == start + 3, "{intact:?}");
    let Some(tamper) = &s.tamper else {
        return Ok(());
    };
    let last = rows.last().context("rows")?.id;
    tamper(Tamper::RemoveLast)?;
    let cut = helm_core::audit::verify(f.store).await?;
    ensure!(cut.first_bad_row == Some(last), "{cut:?}");
    let edited = rows[rows.len() - 2].id;
    tamper(Tamper::EditOutcome(edited))?;
    let changed = helm_core::audit::verify(f.store).await?;
    ensure!(changed.first_bad_row == Some(edited), "{changed:?}");
    ensure!(
        changed.problem.unwrap_or_default().contains("edited"),
        "the edit is named"
    );
    Ok(())
}

/// Queued turns start oldest first, one per thread and within the agent's
/// capacity; each is claimed once and ends once.
pub async fn turns_are_claimed_in_order_once(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let a = f.post(&research, None, "@research first", true).await?;
    let a_next = f
        .post(&research, Some(a.thread.id), "@research again", true)
        .await?;
    let b = f.post(&research, None, "@research other", true).await?;
    let (ta, ta2, tb) = (
        a.turn.context("a turn")?,
        a_next.turn.context("a second turn")?,
        b.turn.context("b turn")?,
    );
    ensure!(ta.state == TurnState::Queued && ta.id < ta2.id && ta2.id < tb.id);
    ensure!(
        a_next.ahead >= 1,
        "the second turn of a thread waits: {}",
        a_next.ahead
    );
    let runnable = f.store.runnable_turns(2).await?;
    ensure!(
        runnable.iter().map(|t| t.id).collect::<Vec<_>>() == vec![ta.id, tb.id],
        "one per thread, oldest first: {runnable:?}"
    );
    let one = f.store.runnable_turns(1).await?;
    ensure!(
        one.len() == 1 && one[0].id == ta.id,
        "capacity 1 gives the oldest"
    );
    let claimed = f
        .store
        .start_turn(ta.id, None)
        .await?
        .context("claimable")?;
    ensure!(claimed.state == TurnState::Running);
    ensure!(
        f.store.start_turn(ta.id, None).await?.is_none(),
        "claimed once"
    );
    ensure!(
        f.store.runnable_turns(1).await?.is_empty(),
        "the agent is at capacity"
    );
    ensure!(
        f.store
            .running_turns()
            .await?
            .iter()
            .map(|t| t.id)
            .collect::<Vec<_>>()
            == vec![ta.id]
    );
    ensure!(f.store.append_reply(ta.id, "Hello".into()).await?);
    let finish = || completed("Hello there");
    let ended = f
        .store
        .finish_turn(ta.id, finish())
        .await?
        .context("ends")?;
    ensure!(ended.state == TurnState::Completed);
    ensure!(
        f.store.finish_turn(ta.id, finish()).await?.is_none(),
        "ends once"
    );
    ensure!(
        !f.store.append_reply(ta.id, "late".into()).await?,
        "a final reply stays"
    );
    let reply = f.store.message(ta.reply_message_id).await?;
    ensure!(reply.content == "Hello there", "{:?}", reply.content);
    let next = f.store.runnable_turns(1).await?;
    ensure!(
        next.first().map(|t| t.id) == Some(ta2.id),
        "then the thread's next turn: {next:?}"
    );
    let counts = f.store.turn_counts().await?;
    let count = |state| {
        counts
            .iter()
            .find(|(s, _)| *s == state)
            .map_or(0, |(_, n)| *n)
    };
    ensure!(
        count(TurnState::Completed) == 1 && count(TurnState::Queued) == 2,
        "{counts:?}"
    );
    Ok(())
}

/// Each `message.delta` says where its text goes: the length of the reply
/// before it, in characters (Unicode scalar values), whatever their size
/// in UTF-8 or UTF-16.
pub async fn a_reply_delta_says_where_its_text_goes(s: &Subject) -> anyhow::Result<()> {
    // Two bytes and one UTF-16 unit, four bytes and two units, ASCII.
    deltas_place_their_text(s, &["Hé", "🙂", "llo", "é🙂é"], &[0, 2, 3, 6]).await
}

/// A turn of a new channel, started, whose reply streamed `chunks`; with
/// the event head before the first chunk.
async fn streamed(
    f: &Fixture<'_>,
    chunks: &[&str],
) -> anyhow::Result<(helm_core::model::Turn, u64)> {
    let research = f.channel("research").await?;
    let posted = f.post(&research, None, "@research write", true).await?;
    let turn = posted.turn.context("a turn")?;
    f.store
        .start_turn(turn.id, None)
        .await?
        .context("claimable")?;
    let before = f.store.event_head().await?;
    for chunk in chunks {
        ensure!(f.store.append_reply(turn.id, chunk.to_string()).await?);
    }
    Ok((turn, before))
}

/// Appends `chunks` to a running turn's reply and checks its deltas'
/// offsets are `offsets`, and that placing each chunk at its offset gives
/// the stored text.
pub async fn deltas_place_their_text(
    s: &Subject,
    chunks: &[&str],
    offsets: &[u64],
) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let (turn, before) = streamed(&f, chunks).await?;
    let deltas: Vec<(u64, String)> = f
        .store
        .events_after(before, 100)
        .await?
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::MessageDelta {
                message_id,
                text,
                offset,
                ..
            } if message_id == turn.reply_message_id => Some((offset, text)),
            _ => None,
        })
        .collect();
    ensure!(
        deltas.iter().map(|(o, _)| *o).collect::<Vec<_>>() == offsets,
        "{deltas:?}"
    );
    let mut placed: Vec<char> = Vec::new();
    for (offset, text) in &deltas {
        placed.truncate(*offset as usize);
        placed.extend(text.chars());
    }
    let stored = f.store.message(turn.reply_message_id).await?.content;
    ensure!(stored == chunks.concat(), "{stored:?}");
    ensure!(
        placed.into_iter().collect::<String>() == stored,
        "{deltas:?}"
    );
    Ok(())
}

/// A reply streamed by `s` and finished by `restarted`, the same database
/// opened again (a restart mid-turn), still leaves the event log once
/// finished: its deltas go, as they do when one process does both. For a
/// store whose turns are leased to the process that claimed them
/// (PostgreSQL), a restart ends them through recovery instead.
pub async fn a_reply_streamed_before_a_restart_leaves_the_log_once_finished(
    s: &Subject,
    restarted: &dyn helm_core::store::Store,
) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let (turn, before) = streamed(&f, &["Half ", "an answer"]).await?;
    restarted
        .finish_turn(turn.id, completed("Half an answer"))
        .await?
        .context("ends")?;
    let left: Vec<&str> = restarted
        .events_after(before, 100)
        .await?
        .iter()
        .map(|e| e.body.type_name())
        .collect();
    ensure!(!left.contains(&"message.delta"), "{left:?}");
    ensure!(left.contains(&"message.completed"), "{left:?}");
    Ok(())
}

/// An invitation is accepted once; an API token works until revoked.
pub async fn invites_and_tokens_work_once(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let invite = f
        .store
        .insert_invite(NewInvite {
            secret_hash: "invite-hash".into(),
            role: Role::Member,
            created_by: f.captain().id,
            expires,
        })
        .await?;
    ensure!(f.store.invites().await?.iter().any(|i| i.id == invite.id));
    let accept = |name: &str| InviteAcceptance {
        secret_hash: "invite-hash".into(),
        name: name.into(),
        display_name: name.into(),
        password_hash: "$argon2id$not-checked-here".into(),
    };
    let newcomer = f.store.accept_invite(accept("newcomer")).await?;
    ensure!(newcomer.role == Role::Member);
    ensure!(f.store.user_by_name("newcomer").await?.id == newcomer.id);
    let twice = f.store.accept_invite(accept("latecomer")).await;
    ensure!(twice.is_err(), "an invitation was used twice: {twice:?}");
    ensure!(
        f.store.user_by_name("latecomer").await.is_err(),
        "nobody added"
    );
    ensure!(
        f.store.revoke_invite(invite.id).await.is_err(),
        "a used invite stays used"
    );

    let token = f
        .store
        .insert_api_token(NewApiToken {
            user_id: newcomer.id,
            name: "ci".into(),
            secret_hash: "token-hash".into(),
            prefix: "hlm_abc".into(),
            expires: None,
        })
        .await?;
    let (found, user) = f
        .store
        .api_token_user("token-hash")
        .await?
        .context("the token works")?;
    ensure!(found.id == token.id && user.id == newcomer.id);
    ensure!(f.store.api_token_user("other-hash").await?.is_none());
    ensure!(
        f.store
            .revoke_api_token(f.captain().id, token.id)
            .await
            .is_err(),
        "only its owner revokes it"
    );
    let revoked = f.store.revoke_api_token(newcomer.id, token.id).await?;
    ensure!(revoked.revoked.is_some());
    ensure!(
        f.store.api_token_user("token-hash").await?.is_none(),
        "revoked tokens fail"
    );
    ensure!(
        f.store.api_tokens(newcomer.id).await?.len() == 1,
        "kept on the record"
    );
    Ok(())
}

/// A person's role changes and they are deactivated and reactivated in one
/// write each, journaled and announced; a deactivated person's sessions end,
/// their tokens and listing show it, and the Captain's standing never
/// changes.
pub async fn roles_and_deactivation_are_kept(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let ada = f.member("ada").await?;
    ensure!(ada.is_active() && ada.deactivated.is_none());
    let change = |role: Option<Role>, active: Option<bool>| UserChange {
        role,
        active,
        by: f.actor(),
    };
    let seq_before = f.store.event_head().await?;

    let admin = f
        .store
        .update_user(ada.id, change(Some(Role::Admin), None))
        .await?;
    ensure!(admin.role == Role::Admin && admin.is_active());
    ensure!(f.store.user(ada.id).await?.role == Role::Admin);

    let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    f.store
        .insert_session(ada.id, "ada-session".into(), expires)
        .await?;
    f.store
        .insert_api_token(NewApiToken {
            user_id: ada.id,
            name: "ci".into(),
            secret_hash: "ada-token".into(),
            prefix: "helm_ada".into(),
            expires: None,
        })
        .await?;
    let off = f
        .store
        .update_user(ada.id, change(Some(Role::Member), Some(false)))
        .await?;
    ensure!(
        off.role == Role::Member,
        "both changes in one write: {off:?}"
    );
    let when = off.deactivated.context("deactivated")?;
    ensure!(
        f.store.session_user("ada-session").await?.is_none(),
        "deactivating ends the person's sessions"
    );
    let (_, holder) = f
        .store
        .api_token_user("ada-token")
        .await?
        .context("the token is kept, for the facade to refuse")?;
    ensure!(
        holder.deactivated == Some(when),
        "the token's holder shows it"
    );
    let listed = f.store.list_users().await?;
    let listed = listed
        .iter()
        .find(|u| u.id == ada.id)
        .context("still listed")?;
    ensure!(listed.deactivated == Some(when), "the listing shows it");
    let (by_name, _) = f
        .store
        .user_credentials("ada")
        .await?
        .context("credentials")?;
    ensure!(by_name.deactivated == Some(when));
    let again = f
        .store
        .update_user(ada.id, change(None, Some(false)))
        .await?;
    ensure!(
        again.deactivated == Some(when),
        "deactivating again keeps when"
    );

    let on = f
        .store
        .update_user(ada.id, change(None, Some(true)))
        .await?;
    ensure!(on.is_active() && on.role == Role::Member);
    ensure!(
        f.store.api_token_user("ada-token").await?.is_some(),
        "a reactivated person's tokens work again"
    );

    let captain = f.captain().id;
    for refused in [
        change(Some(Role::Member), None),
        change(Some(Role::Admin), None),
        change(None, Some(false)),
    ] {
        let result = f.store.update_user(captain, refused).await;
        ensure!(
            matches!(result, Err(Error::Refused(_))),
            "the Captain's standing changed: {result:?}"
        );
    }
    ensure!(f.store.user(captain).await?.role == Role::Captain);
    ensure!(f.store.user(captain).await?.is_active());
    let second = f
        .store
        .update_user(ada.id, change(Some(Role::Captain), None))
        .await;
    ensure!(
        matches!(second, Err(Error::Refused(_))),
        "a second Captain: {second:?}"
    );
    let missing = f
        .store
        .update_user(helm_core::model::UserId(9_999), change(None, Some(false)))
        .await;
    ensure!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );

    let actions: Vec<String> = f
        .store
        .journal(None)
        .await?
        .into_iter()
        .filter(|e| e.action.starts_with("user."))
        .map(|e| e.action)
        .collect();
    ensure!(
        actions
            == [
                "user.role_changed",
                "user.role_changed",
                "user.deactivated",
                "user.reactivated"
            ],
        "journal: {actions:?}"
    );
    let updates: Vec<_> = f
        .store
        .events_after(seq_before, 100)
        .await?
        .into_iter()
        .filter_map(|e| match &e.body {
            EventBody::UserUpdated { user } => Some((user.role, user.is_active())),
            _ => None,
        })
        .collect();
    ensure!(
        updates
            == [
                (Role::Admin, true),
                (Role::Member, false),
                (Role::Member, true)
            ],
        "one user.updated per change made: {updates:?}"
    );
    Ok(())
}

/// The workspace, channel and session levels of the model policy are kept
/// apart, each set and cleared on its own; the most specific wins.
pub async fn model_policy_levels_are_kept_apart(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let ops = f.channel("ops").await?;
    let thread = f.post(&research, None, "hello", false).await?.thread.id;
    let choice = |p: &str| Some(ModelChoice::new(p, Some(format!("{p}-model"))));
    f.store
        .set_model_policy(PolicyScope::Workspace, choice("ws"), f.actor())
        .await?;
    let inherited = f
        .store
        .model_policy(research.channel.id, Some(thread))
        .await?;
    ensure!(inherited.workspace == choice("ws") && inherited.channel.is_none());
    ensure!(inherited.resolve().map(|r| r.level) == Some(PolicyLevel::Workspace));
    f.store
        .set_model_policy(
            PolicyScope::Channel(research.channel.id),
            choice("ch"),
            f.actor(),
        )
        .await?;
    f.store
        .set_model_policy(PolicyScope::Session(thread), choice("se"), f.actor())
        .await?;
    let all = f
        .store
        .model_policy(research.channel.id, Some(thread))
        .await?;
    ensure!(
        all.session == choice("se") && all.channel == choice("ch") && all.workspace == choice("ws"),
        "{all:?}"
    );
    ensure!(all.fallback.is_none(), "the fallback is the caller's");
    ensure!(all.resolve().map(|r| r.level) == Some(PolicyLevel::Session));
    let other = f.store.model_policy(ops.channel.id, None).await?;
    ensure!(
        other.channel.is_none() && other.session.is_none(),
        "{other:?}"
    );
    f.store
        .set_model_policy(PolicyScope::Channel(research.channel.id), None, f.actor())
        .await?;
    let cleared = f.store.model_policy(research.channel.id, None).await?;
    ensure!(
        cleared.channel.is_none() && cleared.workspace == choice("ws"),
        "{cleared:?}"
    );
    Ok(())
}

/// Archiving a channel cancels its queued turns and none of its turns is
/// runnable until it is restored.
pub async fn archiving_a_channel_cancels_its_queued_turns(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let posted = f.post(&research, None, "@research please", true).await?;
    let turn = posted.turn.context("a turn")?;
    let archived = f
        .store
        .set_channel_status(research.channel.id, ChannelStatus::Archived, f.actor())
        .await?;
    ensure!(archived.channel.status == ChannelStatus::Archived);
    ensure!(f.store.turn(turn.id).await?.state == TurnState::Cancelled);
    ensure!(f.store.runnable_turns(4).await?.is_empty());
    let listed = f.store.list_channels(ChannelFilter::default()).await?;
    ensure!(
        !listed.iter().any(|c| c.channel.id == research.channel.id),
        "archived channels are left out by default"
    );
    let with_archived = f
        .store
        .list_channels(ChannelFilter {
            include_archived: true,
        })
        .await?;
    ensure!(
        with_archived
            .iter()
            .any(|c| c.channel.id == research.channel.id)
    );
    Ok(())
}

/// The facts the rails count from: when a person last wrote in a thread,
/// and the hops of the turns admitted since.
pub async fn hop_facts_follow_the_last_human_post(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let research = f.channel("research").await?;
    let empty = ThreadId(i64::MAX);
    ensure!(f.store.last_human_post_at(empty).await?.is_none());
    let posted = f.post(&research, None, "@research go", true).await?;
    let thread = posted.thread.id;
    let at = f
        .store
        .last_human_post_at(thread)
        .await?
        .context("a person wrote")?;
    ensure!(
        at == posted.message.created,
        "{at} vs {}",
        posted.message.created
    );
    let hops = f.store.turn_hops_since(thread, Some(at)).await?;
    ensure!(
        hops == vec![0],
        "a person's post wakes a hop-0 turn: {hops:?}"
    );
    let all = f.store.turn_hops_since(thread, None).await?;
    ensure!(all == vec![0]);
    let later = at + jiff::SignedDuration::from_hours(1);
    ensure!(
        f.store
            .turn_hops_since(thread, Some(later))
            .await?
            .is_empty()
    );
    let unique: HashSet<_> = f
        .store
        .thread_turns(thread)
        .await?
        .iter()
        .map(|t| t.id)
        .collect();
    ensure!(unique.len() == 1);
    Ok(())
}

/// A channel's computer has one holder: the first node to claim it, whoever
/// asks later, and only a channel that exists is claimed. A store several
/// nodes share knows them by their keys; one a node holds alone makes every
/// claimant the holder and knows no keys.
pub async fn each_computer_has_one_holder(s: &Subject) -> anyhow::Result<()> {
    let f = Fixture::new(s.store.as_ref()).await?;
    let lab = f.channel("lab").await?;
    let store = &f.store;
    let mut numbers = Vec::new();
    for (id, url) in [("node-a", Some("http://a:7400")), ("node-b", None)] {
        let number = store
            .register_node(NodeRecord {
                id: id.into(),
                computer_url: url.map(|u| format!("{u}/ot/{{channel}}")),
                url: url.map(str::to_string),
                key_digest: format!("digest-of-{id}"),
            })
            .await?;
        numbers.push(number);
    }
    let missing = store
        .claim_computer(helm_core::model::ChannelId(999_999), "node-a")
        .await;
    ensure!(
        matches!(missing, Err(Error::NotFound { .. })),
        "a channel that does not exist: {missing:?}"
    );
    let first = store.claim_computer(lab.channel.id, "node-a").await?;
    ensure!(
        first.node == "node-a",
        "the first claimant holds it: {first:?}"
    );
    let later = store.claim_computer(lab.channel.id, "node-b").await?;
    if !store.shared() {
        ensure!(later.node == "node-b", "alone, every claimant: {later:?}");
        ensure!(store.node_by_key("digest-of-node-a").await?.is_none());
        ensure!(numbers == [0, 0], "alone, the one node is 0: {numbers:?}");
        ensure!(store.node_numbered(0).await?.is_none());
        return Ok(());
    }
    let a_at = NodeAddress {
        node: "node-a".into(),
        computer_url: Some("http://a:7400/ot/{channel}".into()),
        url: Some("http://a:7400".into()),
    };
    ensure!(
        later == a_at,
        "a later claimant is told the holder and its addresses: {later:?}"
    );
    ensure!(
        numbers[0] != numbers[1] && numbers.iter().all(|n| *n > 0),
        "each node has a number of its own: {numbers:?}"
    );
    // A start that says nothing of its address keeps the one recorded, and
    // the node keeps its number.
    let number = store
        .register_node(NodeRecord {
            id: "node-a".into(),
            computer_url: None,
            url: None,
            key_digest: "digest-of-node-a".into(),
        })
        .await?;
    ensure!(number == numbers[0], "{number} after {numbers:?}");
    let again = store.claim_computer(lab.channel.id, "node-b").await?;
    ensure!(again == a_at, "{again:?}");
    ensure!(store.node_numbered(numbers[0]).await? == Some(a_at));
    let b = store.node_numbered(numbers[1]).await?;
    ensure!(
        b.as_ref()
            .is_some_and(|b| b.node == "node-b" && b.url.is_none()),
        "{b:?}"
    );
    ensure!(store.node_numbered(999_999).await?.is_none());
    ensure!(store.node_by_key("digest-of-node-b").await?.as_deref() == Some("node-b"));
    ensure!(store.node_by_key("digest-of-nobody").await?.is_none());
    // Two nodes claiming a new channel's computer at once: one holds it,
    // and both are told the same.
    for name in ["race-1", "race-2", "race-3"] {
        let race = f.channel(name).await?;
        let (a, b) = tokio::join!(
            store.claim_computer(race.channel.id, "node-a"),
            store.claim_computer(race.channel.id, "node-b")
        );
        let (a, b) = (a?, b?);
        ensure!(a == b, "{name}: {a:?} against {b:?}");
    }
    Ok(())
}
