//! ThreadStore and MemoryStore on PostgreSQL: the same calls against a
//! fresh SqliteStore and a fresh PostgresStore give the same results
//! (parity), and two PostgresStore nodes writing into one thread at once
//! keep every message, each in its own place.
//!
//! Until the workspace and channel areas land on PostgreSQL, its side is
//! seeded with plain SQL ([`seed_postgres`]) mirroring what bootstrap and
//! provisioning write on SQLite, in the same order so ids agree.

use std::collections::BTreeSet;

use anyhow::Context;
use helm_core::memory::recall::{COMMON_WORDS_ONLY, ItemKey};
use helm_core::model::{
    Actor, Agent, AgentId, AgentKind, AgentStatus, AuthorType, ChannelId, ChannelName, Handle,
    MemoryKind, MemoryScope, MemorySource, MemoryStatus, Message, PolicyLevel, Role, Thread,
    ThreadId, ThreadStatus, TurnModel, User, UserId,
};
use helm_core::runtime::summary::{SessionSummary, SummaryTrigger};
use helm_core::store::{
    Admission, AdmissionModel, BootstrapPlan, ChannelPlan, EventStore, MemoryFilter, MemoryStore,
    NewMemory, NewPost, NewThreadSummary, Posted, PostgresStore, SqliteStore, ThreadStore,
    message_tokens,
};
use helm_core::store::{ChannelStore, WorkspaceStore};
use helm_tests::postgres::fresh_database;
use tokio_postgres::{Client, NoTls};

/// The areas these tests call: what both stores implement so far.
trait Areas: ThreadStore + MemoryStore + EventStore {}
impl<T: ThreadStore + MemoryStore + EventStore> Areas for T {}

async fn connect(url: &str) -> anyhow::Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// What a scenario posts with: the Captain, the research channel and its
/// resident agent.
#[derive(Clone)]
struct Seeded {
    captain: User,
    channel: ChannelId,
    resident: Agent,
}

fn admission() -> Admission {
    Admission {
        model: AdmissionModel::Chosen(TurnModel {
            provider: "mock".into(),
            model: "mock-1".into(),
            level: PolicyLevel::Workspace,
        }),
        capacity: 1,
    }
}

/// A workspace with `#main` and `#research`, bootstrapped and provisioned
/// by the SQLite store itself.
async fn sqlite() -> anyhow::Result<(tempfile::TempDir, SqliteStore, Seeded)> {
    let dir = tempfile::tempdir()?;
    let store = SqliteStore::open(dir.path().join("helm.db")).await?;
    let boot = store
        .bootstrap(
            BootstrapPlan {
                workspace_name: "Parity".into(),
                captain_name: "captain".into(),
                home_purpose: "Where Skipper lives.".into(),
                skipper_instructions: "Steer.".into(),
            },
            Box::new(|_| Ok(())),
        )
        .await?;
    let name = ChannelName::parse("research")?;
    let record = store
        .provision_channel(
            ChannelPlan {
                handle: Handle::for_channel(&name, None),
                display_name: "research agent".into(),
                announcement: "{handle} is ready.".into(),
                name,
                purpose: "Research.".into(),
                visibility: helm_core::model::Visibility::Public,
                created_by: boot.captain.clone(),
                instructions: String::new(),
                capability_policy: Default::default(),
            },
            Box::new(|_| Ok(())),
        )
        .await?;
    let seeded = Seeded {
        captain: boot.captain,
        channel: record.channel.id,
        resident: record.agent,
    };
    Ok((dir, store, seeded))
}

/// The same workspace written with SQL into a fresh PostgreSQL database:
/// the rows of 001_foundation.sql that bootstrap and provisioning write,
/// in the order they write them. (Bootstrap replaces this once the
/// workspace and channel areas are on PostgreSQL.)
async fn seed_postgres(url: &str) -> anyhow::Result<Seeded> {
    let db = connect(url).await?;
    let now = jiff::Timestamp::now().as_millisecond();
    let one = |sql: &'static str| {
        let db = &db;
        async move {
            let id: i64 = db.query_one(sql, &[&now]).await?.get(0);
            anyhow::Ok(id)
        }
    };
    let ws =
        one("INSERT INTO workspaces (name, created) VALUES ('Parity', $1) RETURNING id").await?;
    let captain = one(
        "INSERT INTO users (workspace_id, name, display_name, role, created) \
         VALUES (1, 'captain', 'captain', 'captain', $1) RETURNING id",
    )
    .await?;
    let home = one(
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, visibility, \
         created_by, created, status_changed) \
         VALUES (1, 'main', 'Where Skipper lives.', 'home', 'active', 'public', 1, $1, $1) \
         RETURNING id",
    )
    .await?;
    let skipper = one(
        "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
         VALUES (1, 'skipper', 'skipper', 'Skipper', 'ready', $1) RETURNING id",
    )
    .await?;
    one(
        "INSERT INTO messages (channel_id, author_kind, author_agent_id, author_name, content, \
         status, created, updated) \
         VALUES (1, 'skipper', 1, 'skipper', 'Welcome.', 'complete', $1, $1) RETURNING id",
    )
    .await?;
    let channel = one(
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, visibility, \
         created_by, created, status_changed) \
         VALUES (1, 'research', 'Research.', 'agent', 'active', 'public', 1, $1, $1) \
         RETURNING id",
    )
    .await?;
    let resident = one(
        "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
         VALUES (1, 'channel', 'research-agent', 'research agent', 'ready', $1) RETURNING id",
    )
    .await?;
    db.execute(
        "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES ($1, $2, $3)",
        &[&resident, &channel, &now],
    )
    .await?;
    db.execute(
        "INSERT INTO channel_members (channel_id, user_id, role, joined) \
         VALUES ($1, $2, 'owner', $3), ($4, $2, 'owner', $3)",
        &[&home, &captain, &now, &channel],
    )
    .await?;
    one(
        "INSERT INTO messages (channel_id, author_kind, author_agent_id, author_name, content, \
         status, created, updated) \
         VALUES (2, 'skipper', 1, 'skipper', '@research-agent is ready.', 'complete', $1, $1) \
         RETURNING id",
    )
    .await?;
    anyhow::ensure!((ws, home, skipper) == (1, 1, 1), "ids as SQLite gives them");
    let created = jiff::Timestamp::from_millisecond(now)?;
    Ok(Seeded {
        captain: User {
            id: UserId(captain),
            name: "captain".into(),
            display_name: "captain".into(),
            role: Role::Captain,
            created,
            deactivated: None,
        },
        channel: ChannelId(channel),
        resident: Agent {
            id: AgentId(resident),
            kind: AgentKind::Channel,
            handle: Handle::for_channel(&ChannelName::parse("research")?, None),
            display_name: "research agent".into(),
            status: AgentStatus::Ready,
            created,
        },
    })
}

/// A fresh PostgresStore with the seeded workspace.
async fn postgres() -> anyhow::Result<(String, PostgresStore, Seeded)> {
    let url = fresh_database().await?;
    let store = PostgresStore::connect(&url).await?;
    let seeded = seed_postgres(&url).await?;
    Ok((url, store, seeded))
}

/// A message without its time (the two stores write at different moments).
fn message_view(m: &Message) -> String {
    format!(
        "{} c{} t{:?} {:?} {:?} {}",
        m.id, m.channel_id, m.thread_id, m.author, m.status, m.content
    )
}

fn thread_view(t: &Thread) -> String {
    format!(
        "{} c{} root{:?} {:?} {} {:?} by{:?}",
        t.id, t.channel_id, t.root_message_id, t.title, t.status, t.summary, t.opened_by
    )
}

fn posted_view(p: &Posted) -> String {
    format!(
        "{} | {} | new={} | turn={:?} ahead={} | escalation={:?}",
        message_view(&p.message),
        thread_view(&p.thread),
        p.thread_created,
        p.turn.as_ref().map(|t| (
            t.id,
            t.thread_id,
            t.agent_id,
            t.trigger_message_id,
            t.reply_message_id,
            t.state,
            t.hop,
            t.escalation_id
        )),
        p.ahead,
        p.escalation
            .as_ref()
            .map(|e| (e.id, e.thread_id, e.reason.clone(), e.status)),
    )
}

fn post(seeded: &Seeded, thread: Option<ThreadId>, text: &str, wake: bool) -> NewPost {
    NewPost {
        channel_id: seeded.channel,
        thread_id: thread,
        author: seeded.captain.clone(),
        content: text.to_string(),
        resident: seeded.resident.clone(),
        mentions_resident: wake,
        calls_skipper: text.contains("@skipper"),
        admission: admission(),
    }
}

/// The kinds of the events a store appended after `after`.
async fn event_kinds(store: &dyn Areas, after: u64) -> anyhow::Result<Vec<String>> {
    Ok(store
        .events_after(after, 10_000)
        .await?
        .iter()
        .map(|e| e.body.type_name().to_string())
        .collect())
}

/// Everything a scenario observes, as text, so the two stores' runs can be
/// compared line by line.
type Transcript = Vec<String>;

fn outcome<T>(r: helm_core::Result<T>, view: impl FnOnce(&T) -> String) -> String {
    match r {
        Ok(v) => view(&v),
        Err(e) => format!("error: {e}"),
    }
}

async fn posting_scenario(store: &dyn Areas, s: &Seeded) -> anyhow::Result<Transcript> {
    let mut out = Transcript::new();
    let start = store
        .events_after(0, 10_000)
        .await?
        .last()
        .map_or(0, |e| e.seq);
    let opened = store
        .post_message(post(s, None, "What this thread is for.", false))
        .await?;
    out.push(posted_view(&opened));
    let thread = opened.thread.id;
    let woke = store
        .post_message(post(s, Some(thread), "@research-agent have a look", true))
        .await?;
    out.push(posted_view(&woke));
    let second = store
        .post_message(post(s, None, "@research-agent another thing", true))
        .await?;
    out.push(posted_view(&second));
    let called = store
        .post_message(post(s, Some(thread), "@skipper please help", false))
        .await?;
    out.push(posted_view(&called));
    let again = store
        .post_message(post(s, Some(thread), "@skipper still stuck", false))
        .await?;
    out.push(posted_view(&again));
    out.push(outcome(
        store
            .set_thread_status(thread, ThreadStatus::Resolved, Actor::user(&s.captain))
            .await,
        thread_view,
    ));
    out.push(outcome(
        store
            .post_message(post(s, Some(ThreadId(9_999)), "nowhere", false))
            .await,
        posted_view,
    ));
    let note = store
        .post_note(s.channel, None, "Helm was updated.".into())
        .await?;
    out.push(message_view(&note));
    let quiet = store
        .post_message(post(s, None, "A quiet thread.", false))
        .await?;
    out.push(outcome(
        store
            .set_thread_status(
                quiet.thread.id,
                ThreadStatus::Resolved,
                Actor::user(&s.captain),
            )
            .await,
        thread_view,
    ));
    out.push(outcome(
        store
            .set_thread_status(
                quiet.thread.id,
                ThreadStatus::Resolved,
                Actor::user(&s.captain),
            )
            .await,
        thread_view,
    ));
    // A resolved thread reopens when someone writes in it.
    let reopened = store
        .post_message(post(s, Some(quiet.thread.id), "One more thing.", false))
        .await?;
    out.push(posted_view(&reopened));
    store
        .set_thread_status(
            quiet.thread.id,
            ThreadStatus::Archived,
            Actor::user(&s.captain),
        )
        .await?;
    out.push(outcome(
        store
            .post_message(post(s, Some(quiet.thread.id), "Hello?", false))
            .await,
        posted_view,
    ));

    for t in store.threads(s.channel, 10).await? {
        out.push(thread_view(&t));
        for m in store.thread_messages(t.id, None).await? {
            out.push(format!("  {}", message_view(&m)));
        }
    }
    for m in store
        .messages_page(s.channel, None, Some(woke.message.id), 4)
        .await?
    {
        out.push(format!("page {}", message_view(&m)));
    }
    for m in store
        .messages_page(s.channel, Some(thread), None, 100)
        .await?
    {
        out.push(format!("thread page {}", message_view(&m)));
    }
    for m in store.messages_before(s.channel, None, None, 3).await? {
        out.push(format!("before {}", message_view(&m)));
    }
    for m in store
        .messages_before(s.channel, Some(thread), Some(called.message.id), 10)
        .await?
    {
        out.push(format!("thread before {}", message_view(&m)));
    }
    for item in store.feed(s.channel, None, 10).await? {
        out.push(format!(
            "feed {} | {:?} | {} | {:?}",
            message_view(&item.message),
            item.thread.as_ref().map(thread_view),
            item.replies,
            item.latest_reply.as_ref().map(message_view)
        ));
    }
    out.push(format!(
        "{:?}",
        store.message(opened.message.id).await?.content
    ));
    out.push(outcome(
        store.message(helm_core::model::MessageId(9_999)).await,
        message_view,
    ));
    out.push(outcome(store.thread(ThreadId(9_999)).await, thread_view));
    out.push(format!(
        "last human post matches: {}",
        store.last_human_post_at(thread).await? == Some(again.message.created)
    ));
    out.push(format!(
        "no human post: {:?}",
        store.last_human_post_at(ThreadId(9_999)).await?
    ));
    out.push(event_kinds(store, start).await?.join(" "));
    Ok(out)
}

fn assert_same(sqlite: &Transcript, postgres: &Transcript) {
    for (i, (a, b)) in sqlite.iter().zip(postgres).enumerate() {
        assert_eq!(a, b, "line {i} differs");
    }
    assert_eq!(sqlite.len(), postgres.len(), "as many lines");
}

#[tokio::test]
async fn posting_opens_threads_and_queues_turns_as_sqlite_does() -> anyhow::Result<()> {
    let (_dir, lite, ls) = sqlite().await?;
    let (_url, pg, ps) = postgres().await?;
    assert_eq!(
        ls.resident.handle, ps.resident.handle,
        "the seed mirrors provisioning"
    );
    let a = posting_scenario(&lite, &ls).await?;
    let b = posting_scenario(&pg, &ps).await?;
    assert_same(&a, &b);
    assert!(
        a[1].contains("turn=Some"),
        "a mention wakes the resident: {}",
        a[1]
    );
    assert!(
        a[2].contains("ahead=1"),
        "the second thread waits: {}",
        a[2]
    );
    assert!(
        a[3].contains("escalation=Some"),
        "@skipper opens a call: {}",
        a[3]
    );
    Ok(())
}

/// Marks an admitted turn's reply complete, as its finalizer would (the
/// turn area is not on PostgreSQL yet): same SQL on both stores.
const FINISH_TURNS: &str = "UPDATE messages SET status = 'complete', content = 'Done: ' || id \
     WHERE status = 'pending'; UPDATE turns SET state = 'completed' WHERE state = 'queued';";

async fn finish_turns_sqlite(dir: &tempfile::TempDir) -> anyhow::Result<()> {
    let db = rusqlite::Connection::open(dir.path().join("helm.db"))?;
    db.busy_timeout(std::time::Duration::from_secs(5))?;
    db.execute_batch(FINISH_TURNS)?;
    Ok(())
}

async fn finish_turns_postgres(url: &str) -> anyhow::Result<()> {
    connect(url).await?.batch_execute(FINISH_TURNS).await?;
    Ok(())
}

async fn tail_scenario(
    store: &dyn Areas,
    s: &Seeded,
    finish: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<Transcript> {
    let mut out = Transcript::new();
    let opened = store
        .post_message(post(s, None, "What this thread is for.", false))
        .await?;
    let thread = opened.thread.id;
    for i in 0..20 {
        store
            .post_message(post(
                s,
                Some(thread),
                &format!("message {i} {}", "words ".repeat(20)),
                false,
            ))
            .await?;
    }
    let all = store.thread_messages(thread, None).await?;
    out.push(format!("{} messages", all.len()));
    let budget = message_tokens(&all[0]) + 3 * message_tokens(&all[20]);
    let tail_view = |t: &helm_core::store::ThreadTail| {
        format!(
            "first {:?} recent {:?} omitted {} newest omitted {:?} uncovered {}",
            t.first.as_ref().map(|m| m.id),
            t.recent.iter().map(|m| m.id).collect::<Vec<_>>(),
            t.omitted,
            t.newest_omitted,
            t.uncovered
        )
    };
    let tail = store.thread_tail(thread, None, budget).await?;
    assert_eq!(tail.recent.len(), 3);
    assert_eq!(tail.omitted, 17, "between the first and the newest three");
    out.push(tail_view(&tail));
    out.push(tail_view(
        &store.thread_tail(thread, Some(all[10].id), budget).await?,
    ));
    out.push(tail_view(
        &store.thread_tail(thread, None, usize::MAX).await?,
    ));
    out.push(tail_view(&store.thread_tail(thread, None, 0).await?));
    out.push(tail_view(
        &store.thread_tail(ThreadId(9_999), None, budget).await?,
    ));

    // A summary is due once the resident has replied.
    out.push(format!(
        "due before a reply: {:?}",
        store.threads_due_for_summary(i64::MAX, 10).await?
    ));
    let woke = store
        .post_message(post(s, Some(thread), "@research-agent sum it up", true))
        .await?;
    out.push(posted_view(&woke));
    finish.await?;
    out.push(format!(
        "due after it: {:?}",
        store.threads_due_for_summary(i64::MAX, 10).await?
    ));
    out.push(format!(
        "not idle yet: {:?}",
        store.threads_due_for_summary(0, 10).await?
    ));
    let newest = store
        .thread_messages(thread, None)
        .await?
        .last()
        .map(|m| m.id)
        .context("messages")?;
    // A summary covering the first ten: only the rest stay uncovered.
    let summary = |last| NewThreadSummary {
        thread_id: thread,
        summary: SessionSummary {
            goal: "Find out.".into(),
            work_done: "Read.".into(),
            result: "Found.".into(),
            open_items: vec!["More.".into()],
            decisions: vec![],
        },
        trigger: SummaryTrigger::Request,
        provider: "mock".into(),
        model: "mock-1".into(),
        last_message_id: last,
        author: "research-agent".into(),
    };
    let first_summary = store.put_thread_summary(summary(all[10].id)).await?;
    out.push(format!("summary record {first_summary}"));
    out.push(tail_view(&store.thread_tail(thread, None, budget).await?));
    out.push(format!(
        "due after a partial summary: {:?}",
        store.threads_due_for_summary(i64::MAX, 10).await?
    ));
    let second_summary = store.put_thread_summary(summary(newest)).await?;
    out.push(format!(
        "summary record {second_summary}, first now {:?}",
        store.memory(first_summary).await?.status
    ));
    out.push(tail_view(&store.thread_tail(thread, None, budget).await?));
    out.push(format!(
        "due after the full summary: {:?}",
        store.threads_due_for_summary(i64::MAX, 10).await?
    ));
    out.push(thread_view(&store.thread(thread).await?));
    for m in store
        .list_memory(
            s.channel,
            MemoryFilter {
                include_inactive: true,
                ..Default::default()
            },
        )
        .await?
    {
        out.push(format!(
            "memory {} {} {} {:?} {:?}",
            m.id, m.kind, m.status, m.superseded_by, m.content
        ));
    }

    // Reading: the Captain's own posts are never unread.
    let captain = s.captain.clone();
    let unread_view = |u: Vec<helm_core::model::ChannelUnread>| {
        u.iter()
            .map(|c| {
                format!(
                    "{}: {:?} {} {}",
                    c.channel_id, c.last_read, c.unread, c.mentions
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push(unread_view(
        store
            .unread(captain.clone(), vec![s.channel, ChannelId(1)])
            .await?,
    ));
    let marker = store.mark_read(captain.id, all[5].id).await?;
    out.push(format!("marked {}", marker.message_id));
    let kept = store.mark_read(captain.id, all[2].id).await?;
    out.push(format!(
        "never back: {} (same time: {})",
        kept.message_id,
        kept.updated == marker.updated
    ));
    out.push(unread_view(
        store.unread(captain.clone(), vec![s.channel]).await?,
    ));
    out.push(outcome(
        store
            .mark_read(captain.id, helm_core::model::MessageId(9_999))
            .await,
        |m| m.message_id.to_string(),
    ));
    Ok(out)
}

#[tokio::test]
async fn tails_summaries_and_read_markers_match_sqlite() -> anyhow::Result<()> {
    let (dir, lite, ls) = sqlite().await?;
    let (url, pg, ps) = postgres().await?;
    let a = tail_scenario(&lite, &ls, finish_turns_sqlite(&dir)).await?;
    let b = tail_scenario(&pg, &ps, finish_turns_postgres(&url)).await?;
    assert_same(&a, &b);
    Ok(())
}

fn record(channel: ChannelId, content: &str, scope: MemoryScope) -> NewMemory {
    NewMemory {
        channel_id: channel,
        thread_id: None,
        kind: MemoryKind::Fact,
        content: content.to_string(),
        source: MemorySource::UserAction,
        source_message_id: None,
        author_type: AuthorType::Human,
        author_name: Some("captain".into()),
        scope,
        confidence: Some(0.9),
        pinned: false,
    }
}

/// Adds a record of each of `texts` to `channel`, in order.
async fn add_records(
    store: &dyn Areas,
    channel: ChannelId,
    texts: &[&str],
    scope: MemoryScope,
) -> anyhow::Result<Vec<helm_core::model::MemoryItem>> {
    let mut added = Vec::with_capacity(texts.len());
    for text in texts {
        added.push(store.add_memory(record(channel, text, scope)).await?);
    }
    Ok(added)
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

async fn memory_scenario(store: &dyn Areas, s: &Seeded) -> anyhow::Result<Transcript> {
    let mut out = Transcript::new();
    let item_view = |m: &helm_core::model::MemoryItem| {
        format!(
            "{} c{} {} {} pinned={} by {:?} {:?}",
            m.id, m.channel_id, m.kind, m.status, m.pinned, m.superseded_by, m.content
        )
    };
    let home = ChannelId(1);
    let zebra = store
        .add_memory(record(
            s.channel,
            "The zebra database runs nightly.",
            MemoryScope::Channel,
        ))
        .await?;
    let fridays = store
        .add_memory(record(
            s.channel,
            "Releases happen on Fridays.",
            MemoryScope::Channel,
        ))
        .await?;
    let elsewhere = store
        .add_memory(record(
            home,
            "Another zebra lives in main.",
            MemoryScope::Channel,
        ))
        .await?;
    let shared = store
        .add_memory(record(
            home,
            "Every zebra report goes to the Captain.",
            MemoryScope::Workspace,
        ))
        .await?;
    let asked = store
        .post_message(post(
            s,
            None,
            "Which cluster holds the penguin archive?",
            false,
        ))
        .await?;
    let answered = store
        .post_message(post(
            s,
            Some(asked.thread.id),
            "The north one, since March.",
            false,
        ))
        .await?;

    let newer = store
        .supersede_memory(
            zebra.id,
            record(
                s.channel,
                "The zebra database runs hourly.",
                MemoryScope::Channel,
            ),
        )
        .await?;
    out.push(item_view(&newer));
    out.push(outcome(
        store
            .supersede_memory(zebra.id, record(s.channel, "Again.", MemoryScope::Channel))
            .await,
        item_view,
    ));
    out.push(item_view(&store.pin_memory(newer.id, true).await?));
    out.push(outcome(store.pin_memory(zebra.id, true).await, item_view));
    let by = Actor::user(&s.captain);
    out.push(item_view(
        &store.forget_memory(fridays.id, by.clone()).await?,
    ));
    out.push(outcome(
        store.forget_memory(fridays.id, by.clone()).await,
        item_view,
    ));
    out.push(outcome(
        store.memory(helm_core::model::MemoryId(9_999)).await,
        item_view,
    ));
    for filter in [
        MemoryFilter::default(),
        MemoryFilter {
            include_inactive: true,
            ..Default::default()
        },
        MemoryFilter {
            include_inactive: true,
            limit: 2,
            ..Default::default()
        },
        MemoryFilter {
            kind: Some(MemoryKind::Summary),
            ..Default::default()
        },
    ] {
        let listed = store.list_memory(s.channel, filter.clone()).await?;
        out.push(format!(
            "{filter:?}: {}",
            listed.iter().map(item_view).collect::<Vec<_>>().join(" / ")
        ));
    }

    // Word search: the right item first, the same items found; scores are
    // each engine's own.
    for query in [
        words(&["zebra", "hourly"]),
        words(&["fridays", "releases"]),
        words(&["penguin", "archive"]),
        words(&["penguins", "archived"]),
        words(&["zebra"]),
        words(&["nothing", "matches", "this"]),
        vec![],
    ] {
        let hits = store.recall_lexical(s.channel, &query, 10, None).await?;
        assert!(
            hits.iter().all(|(_, score)| *score > 0.0),
            "scores are positive: {hits:?}"
        );
        assert!(
            hits.windows(2).all(|w| w[0].1 >= w[1].1),
            "best first: {hits:?}"
        );
        let found: BTreeSet<i64> = hits.iter().map(|(k, _)| k.0).collect();
        out.push(format!(
            "{query:?}: first {:?} of {found:?}",
            hits.first().map(|(k, _)| k.0)
        ));
    }
    let top = store
        .recall_lexical(s.channel, &words(&["zebra", "hourly"]), 10, None)
        .await?;
    assert_eq!(
        top.first().map(|(k, _)| *k),
        Some(ItemKey::memory(newer.id))
    );
    let keys: Vec<ItemKey> = store
        .recall_lexical(s.channel, &words(&["zebra"]), 10, None)
        .await?
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(
        keys.contains(&ItemKey::memory(shared.id)),
        "shared records are found"
    );
    assert!(
        !keys.contains(&ItemKey::memory(elsewhere.id)),
        "one channel's stay there"
    );
    // Words are matched by their stems, on both stores: "archived" finds
    // the question about the archive (and the reply it pairs with).
    let archived: BTreeSet<ItemKey> = store
        .recall_lexical(s.channel, &words(&["archived"]), 10, None)
        .await?
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        archived,
        BTreeSet::from([
            ItemKey::message(asked.message.id),
            ItemKey::message(answered.message.id)
        ]),
        "stemmed"
    );
    let penguin: Vec<ItemKey> = store
        .recall_lexical(s.channel, &words(&["penguin"]), 10, None)
        .await?
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(
        penguin.contains(&ItemKey::message(answered.message.id)),
        "a reply is found by the question it answers: {penguin:?}"
    );

    let mut wanted = keys.clone();
    wanted.push(ItemKey(999_999));
    wanted.push(ItemKey::message(answered.message.id));
    for item in store.recall_items(wanted).await? {
        out.push(format!(
            "item {} c{} t{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} opened={}",
            item.key.0,
            item.channel_id,
            item.thread_id,
            item.kind,
            item.author,
            item.content,
            item.status,
            item.scope,
            item.turn,
            item.source_external_id,
            item.thread_opened.is_some()
        ));
    }
    out.push(format!(
        "authors {:?}",
        store
            .channel_authors(s.channel)
            .await?
            .into_iter()
            .collect::<BTreeSet<_>>()
    ));
    out.push(format!(
        "opened {:?}",
        store.threads_opened_between(s.channel, 0, i64::MAX).await?
    ));
    out.push(format!(
        "external ids {:?}",
        store.thread_external_ids(asked.thread.id).await?
    ));

    // Vectors round-trip and take their items off the queue.
    let backlog = store.embed_backlog(None, 100, None).await?;
    for (key, channel, text) in &backlog {
        out.push(format!("queued {} c{channel} {text:?}", key.0));
    }
    // None has a vector yet, of any model.
    assert_eq!(
        store.embed_backlog(None, 100, Some("mini".into())).await?,
        backlog
    );
    // Newest first, and an answer is embedded with the question it answers.
    assert!(
        backlog.windows(2).all(|w| w[0].0 > w[1].0),
        "newest first: {backlog:?}"
    );
    let answer = backlog
        .iter()
        .find(|(key, _, _)| *key == ItemKey::message(answered.message.id))
        .map(|(_, _, text)| text.as_str());
    assert_eq!(
        answer,
        Some(
            "captain: The north one, since March.\n\
             captain: Which cluster holds the penguin archive?"
        ),
        "{backlog:?}"
    );
    out.push(format!(
        "backlog {} / research {}",
        store.embed_backlog_len(None).await?,
        store.embed_backlog_len(Some(s.channel)).await?
    ));
    let vectors: Vec<_> = backlog
        .iter()
        .enumerate()
        .map(|(i, (key, channel, _))| {
            let v = if i == 0 {
                vec![]
            } else {
                vec![i as f32, -0.5, 1e-3]
            };
            (*key, *channel, v)
        })
        .collect();
    store.put_embeddings("mini", vectors.clone()).await?;
    assert!(
        store
            .embed_backlog(None, 100, Some("mini".into()))
            .await?
            .is_empty()
    );
    let all = store.channel_vectors("mini", s.channel, 0).await?;
    // A vector stored again is numbered anew: a refresh reads only it.
    let again = vectors
        .iter()
        .skip(1)
        .find(|(_, channel, _)| *channel == s.channel)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("a vector of the channel"))?;
    store.put_embeddings("mini", vec![again]).await?;
    out.push(format!(
        "backlog after {}",
        store.embed_backlog_len(None).await?
    ));
    for (key, vector) in all.rows() {
        out.push(format!("vector {} {vector:?}", key.0));
    }
    let newer = store.channel_vectors("mini", s.channel, all.last).await?;
    assert!(newer.last > all.last, "{} after {}", newer.last, all.last);
    for (key, vector) in newer.rows() {
        out.push(format!("stored since {} {vector:?}", key.0));
    }
    let none = store.channel_vectors("mini", s.channel, newer.last).await?;
    out.push(format!("since the newest {}", none.len()));
    out.push(format!(
        "channels with vectors {:?}",
        store.vector_channels("mini").await?
    ));
    out.push(format!(
        "other model {}",
        store.channel_vectors("other", s.channel, 0).await?.len()
    ));
    assert_eq!(
        store.memory(zebra.id).await?.status,
        MemoryStatus::Superseded
    );
    Ok(out)
}

#[tokio::test]
async fn memory_records_recall_and_vectors_match_sqlite() -> anyhow::Result<()> {
    let (_dir, lite, ls) = sqlite().await?;
    let (_url, pg, ps) = postgres().await?;
    let a = memory_scenario(&lite, &ls).await?;
    let b = memory_scenario(&pg, &ps).await?;
    assert_same(&a, &b);
    Ok(())
}

/// The first word match for a name said in every record and a word said
/// once: the record with the rare word, though another says the name three
/// times; a match on the name alone scores below
/// [`COMMON_WORDS_ONLY`]. What the key was is returned, for the two stores
/// to agree.
async fn rare_word_scenario(store: &dyn Areas, s: &Seeded) -> anyhow::Result<Transcript> {
    let mut out = Transcript::new();
    let added = add_records(
        store,
        s.channel,
        &[
            "Caroline said Caroline would call Caroline's sister.",
            "Caroline went hiking.",
            "Caroline painted a sunset.",
            "Caroline read a book.",
            "The adoption agency called back.",
        ],
        MemoryScope::Channel,
    )
    .await?;
    let agency = added.last().context("no record added")?;
    let hits = store
        .recall_lexical(s.channel, &words(&["caroline", "adoption"]), 10, None)
        .await?;
    assert_eq!(
        hits.first().map(|(k, _)| *k),
        Some(ItemKey::memory(agency.id)),
        "the rare word weighs more than the common name: {hits:?}"
    );
    assert_eq!(hits.len(), 5, "every record holding either word: {hits:?}");
    // The name is in four of the five records: a match on it alone weighs
    // BM25's floor on either store, which is how recall tells that such a
    // match says nothing of an item; the rare word's is well above it.
    for (key, score) in &hits {
        if *key == ItemKey::memory(agency.id) {
            assert!(*score >= COMMON_WORDS_ONLY, "{hits:?}");
        } else {
            assert!(*score < COMMON_WORDS_ONLY, "{hits:?}");
        }
    }
    out.push(format!("{:?}", hits.first().map(|(k, _)| k.0)));
    Ok(out)
}

/// A word in many records another channel shares with the workspace, but
/// in one of this channel's three: it is not common here, so this
/// channel's match on it scores above [`COMMON_WORDS_ONLY`], and the shared
/// records are found as well.
async fn shared_word_scenario(store: &dyn Areas, s: &Seeded) -> anyhow::Result<Transcript> {
    let mut out = Transcript::new();
    let added = add_records(
        store,
        s.channel,
        &[
            "The fridge is empty.",
            "The north office opens at nine.",
            "The travel policy changed in May.",
        ],
        MemoryScope::Channel,
    )
    .await?;
    let own = added.last().context("no record added")?;
    let shared: Vec<String> = (1..=4)
        .map(|n| format!("Workspace policy {n} applies to every team."))
        .collect();
    let shared: Vec<&str> = shared.iter().map(String::as_str).collect();
    add_records(store, ChannelId(1), &shared, MemoryScope::Workspace).await?;
    let hits = store
        .recall_lexical(s.channel, &words(&["policy"]), 10, None)
        .await?;
    assert_eq!(
        hits.len(),
        5,
        "this channel's record and the shared ones: {hits:?}"
    );
    let score = hits
        .iter()
        .find(|(k, _)| *k == ItemKey::memory(own.id))
        .map(|(_, score)| *score);
    assert!(
        score.is_some_and(|s| s >= COMMON_WORDS_ONLY),
        "one record in three is not common here: {hits:?}"
    );
    out.push(format!("{}", hits.len()));
    Ok(out)
}

#[tokio::test]
async fn a_word_shared_by_other_channels_is_not_common_in_this_one_on_both_stores()
-> anyhow::Result<()> {
    let (_dir, lite, ls) = sqlite().await?;
    let (_url, pg, ps) = postgres().await?;
    let a = shared_word_scenario(&lite, &ls).await?;
    let b = shared_word_scenario(&pg, &ps).await?;
    assert_same(&a, &b);
    Ok(())
}

#[tokio::test]
async fn a_rare_word_outweighs_a_name_said_everywhere_on_both_stores() -> anyhow::Result<()> {
    let (_dir, lite, ls) = sqlite().await?;
    let (_url, pg, ps) = postgres().await?;
    let a = rare_word_scenario(&lite, &ls).await?;
    let b = rare_word_scenario(&pg, &ps).await?;
    assert_same(&a, &b);
    Ok(())
}

#[tokio::test]
async fn two_nodes_posting_into_one_thread_keep_every_message_in_its_place() -> anyhow::Result<()> {
    let (url, a, seeded) = postgres().await?;
    let b = PostgresStore::connect(&url).await?;
    let opened = a
        .post_message(post(&seeded, None, "Shared thread.", false))
        .await?;
    let thread = opened.thread.id;
    const EACH: usize = 25;
    let write = |store: PostgresStore, node: &'static str| {
        let seeded = seeded.clone();
        tokio::spawn(async move {
            for i in 0..EACH {
                store
                    .post_message(post(&seeded, Some(thread), &format!("{node} {i}"), false))
                    .await?;
            }
            anyhow::Ok(())
        })
    };
    let (ra, rb) = tokio::join!(write(a.clone(), "a"), write(b.clone(), "b"));
    ra??;
    rb??;
    let messages = a.thread_messages(thread, None).await?;
    assert_eq!(messages.len(), 1 + 2 * EACH, "every message kept");
    let db = connect(&url).await?;
    let places: Vec<i64> = db
        .query(
            "SELECT seq FROM messages WHERE thread_id = $1 ORDER BY id",
            &[&thread.get()],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let expected: Vec<i64> = (1..=(1 + 2 * EACH) as i64).collect();
    assert_eq!(places, expected, "places follow ids with no gaps or twins");
    // The tail's subtraction agrees with a count.
    let tail = b.thread_tail(thread, None, 0).await?;
    assert_eq!(tail.omitted, 2 * EACH);
    Ok(())
}

#[tokio::test]
async fn two_nodes_superseding_one_record_leave_one_replacement() -> anyhow::Result<()> {
    let (url, a, seeded) = postgres().await?;
    let b = PostgresStore::connect(&url).await?;
    let original = a
        .add_memory(record(
            seeded.channel,
            "The first word.",
            MemoryScope::Channel,
        ))
        .await?;
    let (ra, rb) = tokio::join!(
        a.supersede_memory(
            original.id,
            record(seeded.channel, "Node a's word.", MemoryScope::Channel)
        ),
        b.supersede_memory(
            original.id,
            record(seeded.channel, "Node b's word.", MemoryScope::Channel)
        ),
    );
    let won = [&ra, &rb].iter().filter(|r| r.is_ok()).count();
    assert_eq!(won, 1, "exactly one replaces it: {ra:?} / {rb:?}");
    let lost = [ra, rb]
        .into_iter()
        .find_map(|r| r.err())
        .context("one lost")?;
    assert!(
        matches!(lost, helm_core::Error::Conflict(_)),
        "the other is told: {lost}"
    );
    let current = a
        .list_memory(seeded.channel, MemoryFilter::default())
        .await?;
    assert_eq!(current.len(), 1, "one current record");
    Ok(())
}

async fn import_scenario(store: &dyn Areas, s: &Seeded) -> anyhow::Result<Transcript> {
    use helm_core::memory::import::{ImportMemory, ImportMessage, ImportPlan, ImportThread};
    let at = |s: i64| jiff::Timestamp::from_second(1_700_000_000 + s).ok();
    let plan = ImportPlan {
        threads: vec![ImportThread {
            id: "t-1".into(),
            title: "Launch review".into(),
            opened_at: None,
        }],
        messages: vec![
            ImportMessage {
                thread: "t-1".into(),
                external_id: "m-1".into(),
                author: "captain".into(),
                text: "When is the launch?".into(),
                at: at(0),
            },
            ImportMessage {
                thread: "t-1".into(),
                external_id: "m-2".into(),
                author: "a guest".into(),
                text: "Tuesday at noon.".into(),
                at: at(60),
            },
        ],
        memories: vec![ImportMemory {
            kind: MemoryKind::Decision,
            content: "The launch is on Tuesday.".into(),
            thread: Some("t-1".into()),
            source_external_id: Some("m-2".into()),
            confidence: None,
        }],
    };
    let mut out = Transcript::new();
    let report = store
        .import_history(s.channel, plan.clone(), Actor::user(&s.captain))
        .await?;
    out.push(format!("{report:?}"));
    out.push(outcome(
        store
            .import_history(s.channel, plan, Actor::user(&s.captain))
            .await,
        |r| format!("{r:?}"),
    ));
    for t in store.threads(s.channel, 10).await? {
        out.push(format!(
            "{} opened {} updated {}",
            thread_view(&t),
            t.opened_at,
            t.updated_at
        ));
        out.push(format!(
            "external ids {:?}",
            store.thread_external_ids(t.id).await?
        ));
        for m in store.thread_messages(t.id, None).await? {
            out.push(format!("  {} at {}", message_view(&m), m.created));
        }
    }
    let opened = store
        .threads_opened_between(s.channel, 1_700_000_000_000, 1_700_000_000_000 + 1_000)
        .await?;
    out.push(format!("opened then {opened:?}"));
    let hits = store
        .recall_lexical(s.channel, &words(&["launch", "tuesday"]), 10, None)
        .await?;
    // The same items; their order is each engine's ranking.
    let mut keys: Vec<ItemKey> = hits.iter().map(|(k, _)| *k).collect();
    keys.sort();
    out.push(format!(
        "found {:?}",
        keys.iter().map(|k| k.0).collect::<BTreeSet<_>>()
    ));
    for item in store.recall_items(keys).await? {
        out.push(format!(
            "item {} {:?} {:?} {:?} said {}",
            item.key.0, item.author, item.turn, item.source_external_id, item.said_at
        ));
    }
    out.push(format!(
        "backlog {}",
        store.embed_backlog_len(Some(s.channel)).await?
    ));
    Ok(out)
}

#[tokio::test]
async fn imported_history_matches_sqlite() -> anyhow::Result<()> {
    let (_dir, lite, ls) = sqlite().await?;
    let (_url, pg, ps) = postgres().await?;
    let a = import_scenario(&lite, &ls).await?;
    let b = import_scenario(&pg, &ps).await?;
    assert_same(&a, &b);
    assert!(
        a[1].starts_with("error:"),
        "a second import is refused: {}",
        a[1]
    );
    Ok(())
}

/// Gives `keys` a vector of model "mini" (the queue empties), then
/// replays the migrations from `version` on, as an upgrade from the one
/// before would run them on these rows; the keys queued after, in order.
async fn queued_by_migrations_from(
    url: &str,
    store: PostgresStore,
    s: &Seeded,
    keys: &[ItemKey],
    version: i32,
) -> anyhow::Result<Vec<i64>> {
    store
        .put_embeddings(
            "mini",
            keys.iter()
                .map(|k| (*k, s.channel, vec![0.6, 0.8]))
                .collect(),
        )
        .await?;
    assert_eq!(store.embed_backlog_len(None).await?, 0);
    connect(url)
        .await?
        .execute(
            "DELETE FROM helm_migrations WHERE version >= $1",
            &[&version],
        )
        .await?;
    drop(store);
    let store = PostgresStore::connect(url).await?;
    let mut queued: Vec<i64> = store
        .embed_backlog(None, 10, None)
        .await?
        .into_iter()
        .map(|(key, _, _)| key.0)
        .collect();
    queued.sort();
    // Meanwhile every queued item keeps its vector.
    assert!(
        store
            .embed_backlog(None, 10, Some("mini".into()))
            .await?
            .is_empty()
    );
    Ok(queued)
}

/// Migration 12 on a database with rows in it: only the items the old
/// embedder may have cut (250 characters or more) are queued to be
/// embedded again.
#[tokio::test]
async fn migration_12_queues_again_only_texts_the_old_embedder_may_have_cut() -> anyhow::Result<()>
{
    let (url, store, s) = postgres().await?;
    let long = "The venue contract, clause by clause. ".repeat(8);
    let asked = store
        .post_message(post(&s, None, "Where is the venue contract?", false))
        .await?;
    let answered = store
        .post_message(post(&s, Some(asked.thread.id), &long, false))
        .await?;
    let short = store
        .add_memory(record(
            s.channel,
            "Releases happen on Fridays.",
            MemoryScope::Channel,
        ))
        .await?;
    let kept = store
        .add_memory(record(s.channel, &long, MemoryScope::Channel))
        .await?;
    let keys = [
        ItemKey::message(asked.message.id),
        ItemKey::message(answered.message.id),
        ItemKey::memory(short.id),
        ItemKey::memory(kept.id),
    ];
    let queued = queued_by_migrations_from(&url, store, &s, &keys, 12).await?;
    let mut long_ones = vec![keys[1].0, keys[3].0];
    long_ones.sort();
    assert_eq!(queued, long_ones);
    Ok(())
}

/// Migration 11 on a database with rows in it: every embedded message is
/// queued again (to be embedded with the message before it), records are not.
#[tokio::test]
async fn migration_11_queues_again_every_embedded_message() -> anyhow::Result<()> {
    let (url, store, s) = postgres().await?;
    let asked = store
        .post_message(post(&s, None, "Where is the venue contract?", false))
        .await?;
    let answered = store
        .post_message(post(
            &s,
            Some(asked.thread.id),
            "In the legal share.",
            false,
        ))
        .await?;
    let fact = store
        .add_memory(record(
            s.channel,
            "Releases happen on Fridays.",
            MemoryScope::Channel,
        ))
        .await?;
    let keys = [
        ItemKey::message(asked.message.id),
        ItemKey::message(answered.message.id),
        ItemKey::memory(fact.id),
    ];
    let queued = queued_by_migrations_from(&url, store, &s, &keys, 11).await?;
    let mut messages = vec![keys[0].0, keys[1].0];
    messages.sort();
    assert_eq!(queued, messages);
    Ok(())
}

/// Migration 13 on a database with rows written before it (migration 1's
/// word indexes of the written forms, no `words` column): the rows are
/// searched by their stems after it, as rows written since are.
#[tokio::test]
async fn migration_13_gives_rows_written_before_it_their_stemmed_words() -> anyhow::Result<()> {
    let (url, store, s) = postgres().await?;
    // The schema as migration 12 left it.
    connect(&url)
        .await?
        .batch_execute(
            "DROP INDEX messages_words; DROP INDEX memory_items_words; \
             ALTER TABLE messages DROP COLUMN words; ALTER TABLE memory_items DROP COLUMN words; \
             CREATE INDEX messages_words ON messages USING gin (to_tsvector('simple', content)); \
             CREATE INDEX memory_items_words ON memory_items USING gin (to_tsvector('simple', content)); \
             DELETE FROM helm_migrations WHERE version >= 13",
        )
        .await?;
    let asked = store
        .post_message(post(&s, None, "Which cluster holds the archive?", false))
        .await?;
    let kept = store
        .add_memory(record(
            s.channel,
            "The archive moved to the north cluster.",
            MemoryScope::Channel,
        ))
        .await?;
    drop(store);
    let store = PostgresStore::connect(&url).await?;
    let found: BTreeSet<ItemKey> = store
        .recall_lexical(s.channel, &words(&["archived", "clusters"]), 10, None)
        .await?
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        found,
        BTreeSet::from([ItemKey::message(asked.message.id), ItemKey::memory(kept.id)])
    );
    Ok(())
}
