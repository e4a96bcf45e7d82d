//! `PostgresStore`'s workspace and channel areas against `SqliteStore`:
//! the same calls give the same records, errors, journal and events on
//! both (parity), and several nodes on one database racing for the same
//! bootstrap or channel name end with exactly one winner.

use anyhow::Context;
use helm_core::Error;
use helm_core::model::{
    Actor, AgentKind, CapabilityPolicy, ChannelName, ChannelRef, ChannelStatus, Handle, MemberRole,
    ModelChoice, Role, ThreadId, Visibility,
};
use helm_core::store::{
    Bootstrap, BootstrapPlan, ChannelFilter, ChannelPlan, ChannelRecord, ChannelStore,
    ChannelUpdate, EventStore, NewAgent, NewUser, PolicyScope, PostgresStore, SqliteStore,
    WorkspaceStore, WorldHook,
};
use helm_tests::postgres::fresh_database;
use serde_json::Value;
use tokio_postgres::NoTls;

/// A fresh SQLite store and a fresh PostgreSQL store, side by side.
struct Pair {
    sqlite: SqliteStore,
    pg: PostgresStore,
    url: String,
    _dir: tempfile::TempDir,
}

impl Pair {
    async fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let sqlite = SqliteStore::open(&dir.path().join("helm.db")).await?;
        let url = fresh_database().await?;
        let pg = PostgresStore::connect(&url).await?;
        Ok(Pair {
            sqlite,
            pg,
            url,
            _dir: dir,
        })
    }

    /// Bootstraps both, asserting they made the same world.
    async fn bootstrap(&self) -> anyhow::Result<Bootstrap> {
        let a = self.sqlite.bootstrap(plan(), no_world()).await?;
        let b = self.pg.bootstrap(plan(), no_world()).await?;
        same(&bootstrap_shape(&a), &bootstrap_shape(&b));
        Ok(b)
    }

    /// Both stores' events after `after`, without their times.
    async fn events_after(&self, after: u64) -> anyhow::Result<(Vec<Value>, Vec<Value>)> {
        let shape = |events: Vec<helm_core::events::Event>| {
            events
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "seq": e.seq,
                        "channel": e.channel_id,
                        "type": e.body.type_name(),
                        "body": timeless_of(&e.body),
                    })
                })
                .collect::<Vec<_>>()
        };
        Ok((
            shape(self.sqlite.events_after(after, 1000).await?),
            shape(self.pg.events_after(after, 1000).await?),
        ))
    }

    /// Asserts both stores hold the same events after `after`.
    async fn same_events(&self, after: u64) -> anyhow::Result<()> {
        let (a, b) = self.events_after(after).await?;
        same(&a, &b);
        Ok(())
    }

    /// Asserts both stores hold the same journal and counts.
    async fn same_state(&self) -> anyhow::Result<()> {
        // Journal ids are left out: a PostgreSQL identity taken by a
        // rolled-back write is not handed out again, as SQLite's rowid is.
        let journal = |entries: Vec<helm_core::store::JournalEntry>| {
            entries
                .iter()
                .map(|e| {
                    let mut v = timeless_of(e);
                    v["id"] = Value::Null;
                    v
                })
                .collect::<Vec<_>>()
        };
        same(
            &journal(self.sqlite.journal(None).await?),
            &journal(self.pg.journal(None).await?),
        );
        let (mut a, mut b) = (self.sqlite.stats().await?, self.pg.stats().await?);
        // Each store counts its own migrations.
        (a.schema_version, b.schema_version) = (0, 0);
        assert_eq!(a, b, "stats");
        let filter = ChannelFilter {
            include_archived: true,
        };
        let (a, b) = (
            self.sqlite.list_channels(filter).await?,
            self.pg.list_channels(filter).await?,
        );
        same(&timeless_of(&a), &timeless_of(&b));
        Ok(())
    }

    async fn sql(&self) -> anyhow::Result<tokio_postgres::Client> {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls).await?;
        tokio::spawn(connection);
        Ok(client)
    }
}

fn plan() -> BootstrapPlan {
    BootstrapPlan {
        workspace_name: "Parity".into(),
        captain_name: "captain".into(),
        home_purpose: "Where Skipper lives.".into(),
        skipper_instructions: "Keep the workspace in order.".into(),
    }
}

fn no_world() -> WorldHook {
    Box::new(|_| Ok(()))
}

fn failing_world() -> WorldHook {
    Box::new(|_| Err(Error::Internal("the world could not be made".into())))
}

fn channel_plan(
    boot: &Bootstrap,
    name: &str,
    visibility: Visibility,
) -> anyhow::Result<ChannelPlan> {
    let name = ChannelName::parse(name)?;
    Ok(ChannelPlan {
        handle: Handle::for_channel(&name, None),
        display_name: format!("{name} agent"),
        announcement: "{handle} is ready.".into(),
        name,
        purpose: "Parity work.".into(),
        visibility,
        created_by: boot.captain.clone(),
        instructions: String::new(),
        capability_policy: CapabilityPolicy::default(),
    })
}

/// A value as JSON without the keys that hold a time of day.
fn timeless(value: Value) -> Value {
    const TIMES: &[&str] = &[
        "created",
        "joined",
        "bound_at",
        "updated",
        "at",
        "queued_at",
        "started_at",
        "finished_at",
        "status_changed",
    ];
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !TIMES.contains(&k.as_str()))
                .map(|(k, v)| (k, timeless(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(timeless).collect()),
        other => other,
    }
}

fn timeless_of<T: serde::Serialize>(value: &T) -> Value {
    timeless(
        serde_json::to_value(value)
            .unwrap_or_else(|e| Value::String(format!("does not serialise: {e}"))),
    )
}

#[track_caller]
fn same<T: PartialEq + std::fmt::Debug>(sqlite: &T, pg: &T) {
    assert_eq!(sqlite, pg, "SQLite (left) and PostgreSQL (right) differ");
}

fn bootstrap_shape(b: &Bootstrap) -> Value {
    serde_json::json!({
        "created": b.created,
        "workspace": [b.workspace.id, &b.workspace.name],
        "captain": timeless_of(&b.captain),
        "home": timeless_of(&b.home),
    })
}

/// An error as the caller sees it: its kind and its sentence.
fn error_shape<T: serde::Serialize>(result: helm_core::Result<T>) -> String {
    match result {
        Ok(v) => format!("accepted: {}", timeless_of(&v)),
        Err(e) => {
            let kind = match &e {
                Error::Conflict(_) => "Conflict",
                Error::Refused(_) => "Refused",
                Error::NotFound { .. } => "NotFound",
                Error::Invalid { .. } => "Invalid",
                _ => "other",
            };
            format!("{kind}: {e}")
        }
    }
}

#[tokio::test]
async fn postgres_bootstrap_matches_sqlite_and_is_idempotent() -> anyhow::Result<()> {
    let pair = Pair::new().await?;
    assert!(pair.pg.workspace().await?.is_none());
    let first = pair.bootstrap().await?;
    assert!(first.created);
    assert_eq!(first.home.agent.kind, AgentKind::Skipper);
    let second = pair.bootstrap().await?;
    assert!(!second.created, "only the first call creates");
    assert_eq!(first.home.channel.id, second.home.channel.id);
    pair.same_events(0).await?;
    pair.same_state().await?;
    same(
        &timeless_of(&pair.sqlite.list_users().await?),
        &timeless_of(&pair.pg.list_users().await?),
    );
    let (a, b) = (
        pair.sqlite.rename_workspace("Renamed".into()).await?,
        pair.pg.rename_workspace("Renamed".into()).await?,
    );
    assert_eq!((a.id, a.name), (b.id, b.name));
    pair.same_events(0).await?;
    Ok(())
}

#[tokio::test]
async fn postgres_users_and_providers_match_sqlite() -> anyhow::Result<()> {
    let pair = Pair::new().await?;
    pair.bootstrap().await?;
    let ada = NewUser {
        name: "ada".into(),
        display_name: "Ada".into(),
        role: Role::Member,
    };
    let (a, b) = (
        pair.sqlite.insert_user(ada.clone()).await?,
        pair.pg.insert_user(ada.clone()).await?,
    );
    same(&timeless_of(&a), &timeless_of(&b));
    same(
        &error_shape(pair.sqlite.insert_user(ada.clone()).await),
        &error_shape(pair.pg.insert_user(ada).await),
    );
    same(
        &timeless_of(&pair.sqlite.user_by_name("ada").await?),
        &timeless_of(&pair.pg.user_by_name("ada").await?),
    );
    same(
        &error_shape(pair.sqlite.user_by_name("nobody").await),
        &error_shape(pair.pg.user_by_name("nobody").await),
    );
    same(
        &timeless_of(&pair.sqlite.user(b.id).await?),
        &timeless_of(&pair.pg.user(b.id).await?),
    );
    let provider: helm_core::provider::ProviderConfig =
        serde_json::from_value(serde_json::json!({
            "name": "local",
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key": "env:LOCAL_KEY",
            "default_model": "small",
            "extra_headers": {"x-team": "helm"},
        }))?;
    for p in [provider.clone(), provider] {
        pair.sqlite.put_provider(p.clone()).await?;
        pair.pg.put_provider(p).await?;
    }
    same(&pair.sqlite.providers().await?, &pair.pg.providers().await?);
    same(
        &pair.sqlite.provider("local").await?,
        &pair.pg.provider("local").await?,
    );
    same(
        &error_shape(pair.sqlite.provider("none").await),
        &error_shape(pair.pg.provider("none").await),
    );
    pair.same_state().await
}

#[tokio::test]
async fn postgres_provisioning_matches_sqlite_and_a_failing_world_leaves_nothing()
-> anyhow::Result<()> {
    let pair = Pair::new().await?;
    let boot = pair.bootstrap().await?;
    let research = channel_plan(&boot, "research", Visibility::Public)?;
    let (a, b) = (
        pair.sqlite
            .provision_channel(research.clone(), no_world())
            .await?,
        pair.pg.provision_channel(research, no_world()).await?,
    );
    same(&timeless_of(&a), &timeless_of(&b));
    let a_research = a.channel.id;
    let before = pair.pg.stats().await?;
    let ops = channel_plan(&boot, "ops", Visibility::Public)?;
    let (a, b) = (
        pair.sqlite
            .provision_channel(ops.clone(), failing_world())
            .await,
        pair.pg
            .provision_channel(ops.clone(), failing_world())
            .await,
    );
    same(&error_shape(a), &error_shape(b));
    assert_eq!(pair.pg.stats().await?, before, "nothing kept");
    assert!(
        pair.pg
            .channel(&ChannelRef::Name(ChannelName::parse("ops")?))
            .await
            .is_err()
    );
    pair.same_state().await?;
    pair.same_events(0).await?;
    // Lookups by name and id, and the listing, agree.
    for r in [
        ChannelRef::Name(ChannelName::parse("research")?),
        ChannelRef::Id(a_research),
    ] {
        same(
            &timeless_of(&pair.sqlite.channel(&r).await?),
            &timeless_of(&pair.pg.channel(&r).await?),
        );
    }
    // The name and the handle are still free. (PostgreSQL's identities do
    // not hand a rolled-back id out again, as SQLite's rowids do: the
    // channel gets the next one.)
    let (a, b) = (
        pair.sqlite
            .provision_channel(ops.clone(), no_world())
            .await?,
        pair.pg.provision_channel(ops, no_world()).await?,
    );
    assert_eq!(b.agent.handle, a.agent.handle);
    assert_eq!(b.channel.name, a.channel.name);
    assert!(b.channel.id > a_research);
    assert_eq!(
        pair.pg.list_channels(ChannelFilter::default()).await?.len(),
        3
    );
    Ok(())
}

#[tokio::test]
async fn postgres_refuses_what_sqlite_refuses_with_the_same_errors() -> anyhow::Result<()> {
    let pair = Pair::new().await?;
    let boot = pair.bootstrap().await?;
    let mut ids = Vec::new();
    for name in ["research", "ops"] {
        let p = channel_plan(&boot, name, Visibility::Public)?;
        pair.sqlite.provision_channel(p.clone(), no_world()).await?;
        ids.push(pair.pg.provision_channel(p, no_world()).await?);
    }
    let (research, ops) = (&ids[0], &ids[1]);
    let actor = Actor::user(&boot.captain);
    let spare = NewAgent {
        kind: AgentKind::Channel,
        handle: Handle::parse("spare")?,
        display_name: "Spare".into(),
    };
    let spare_id = pair.pg.insert_agent(spare.clone()).await?.id;
    assert_eq!(pair.sqlite.insert_agent(spare.clone()).await?.id, spare_id);
    let second_skipper = NewAgent {
        kind: AgentKind::Skipper,
        handle: Handle::parse("skipper-two")?,
        display_name: "Another Skipper".into(),
    };
    macro_rules! both {
        ($call:ident ( $($arg:expr),* )) => {{
            let a = error_shape(pair.sqlite.$call($($arg),*).await);
            let b = error_shape(pair.pg.$call($($arg),*).await);
            same(&a, &b);
            a
        }};
    }
    let second_resident = both!(bind_agent(spare_id, research.channel.id));
    assert!(second_resident.starts_with("Conflict"), "{second_resident}");
    let two_channels = both!(bind_agent(research.agent.id, ops.channel.id));
    assert!(two_channels.starts_with("Conflict"), "{two_channels}");
    let skipper_away = both!(bind_agent(boot.home.agent.id, research.channel.id));
    assert!(skipper_away.starts_with("Refused"), "{skipper_away}");
    let two_skippers = both!(insert_agent(second_skipper.clone()));
    assert!(two_skippers.starts_with("Conflict"), "{two_skippers}");
    let taken_handle = both!(insert_agent(spare.clone()));
    assert!(taken_handle.starts_with("Conflict"), "{taken_handle}");
    let twin = both!(provision_channel(
        channel_plan(&boot, "research", Visibility::Public)?,
        no_world()
    ));
    assert!(twin.starts_with("Conflict"), "{twin}");
    let home_archived = both!(set_channel_status(
        boot.home.channel.id,
        ChannelStatus::Archived,
        actor.clone()
    ));
    assert!(home_archived.starts_with("Refused"), "{home_archived}");
    let active_deleted = both!(delete_channel(ops.channel.id, actor.clone(), no_world()));
    assert!(active_deleted.starts_with("Refused"), "{active_deleted}");
    let renamed_onto = both!(update_channel(
        ops.channel.id,
        ChannelUpdate {
            name: Some("research".into()),
            purpose: None,
            instructions: None,
        },
        actor.clone()
    ));
    assert!(renamed_onto.starts_with("Conflict"), "{renamed_onto}");
    let home_renamed = both!(update_channel(
        boot.home.channel.id,
        ChannelUpdate {
            name: Some("lobby".into()),
            purpose: None,
            instructions: None,
        },
        actor.clone()
    ));
    assert!(home_renamed.starts_with("Refused"), "{home_renamed}");
    // Archived names stay taken; archiving twice is a conflict; a deleted
    // channel's name is free again.
    both!(set_channel_status(
        research.channel.id,
        ChannelStatus::Archived,
        actor.clone()
    ));
    let again = both!(set_channel_status(
        research.channel.id,
        ChannelStatus::Archived,
        actor.clone()
    ));
    assert!(again.starts_with("Conflict"), "{again}");
    let while_archived = both!(provision_channel(
        channel_plan(&boot, "research", Visibility::Public)?,
        no_world()
    ));
    assert!(while_archived.contains("archived"), "{while_archived}");
    // A tree that cannot be moved aside keeps the channel.
    let stuck = both!(delete_channel(
        research.channel.id,
        actor.clone(),
        failing_world()
    ));
    assert!(stuck.contains("the world could not be made"), "{stuck}");
    both!(channel(&ChannelRef::Id(research.channel.id)));
    both!(delete_channel(
        research.channel.id,
        actor.clone(),
        no_world()
    ));
    let gone = both!(channel(&ChannelRef::Id(research.channel.id)));
    assert!(gone.starts_with("NotFound"), "{gone}");
    // Renaming and editing agree too.
    both!(update_channel(
        ops.channel.id,
        ChannelUpdate {
            name: Some("operations".into()),
            purpose: Some("Keep things running.".into()),
            instructions: Some("Be brief.".into()),
        },
        actor.clone()
    ));
    both!(set_channel_status(
        ops.channel.id,
        ChannelStatus::Archived,
        actor.clone()
    ));
    both!(set_channel_status(
        ops.channel.id,
        ChannelStatus::Active,
        actor.clone()
    ));
    pair.same_events(0).await?;
    pair.same_state().await?;
    // A deleted channel's name is free again. (The refused inserts above
    // used up PostgreSQL identities, which are never handed out twice, so
    // the new rows' ids differ from SQLite's from here on.)
    let plan = channel_plan(&boot, "research", Visibility::Public)?;
    let (a, b) = (
        pair.sqlite
            .provision_channel(plan.clone(), no_world())
            .await?,
        pair.pg.provision_channel(plan, no_world()).await?,
    );
    assert_eq!(
        (&a.channel.name, &a.agent.handle),
        (&b.channel.name, &b.agent.handle)
    );
    assert!(b.channel.id > ops.channel.id);
    Ok(())
}

#[tokio::test]
async fn postgres_members_and_visible_channels_match_sqlite() -> anyhow::Result<()> {
    let pair = Pair::new().await?;
    let boot = pair.bootstrap().await?;
    let mut people = Vec::new();
    for (name, display_name) in [("ada", "Ada"), ("bob", "Bob")] {
        let person = NewUser {
            name: name.into(),
            display_name: display_name.into(),
            role: Role::Member,
        };
        pair.sqlite.insert_user(person.clone()).await?;
        people.push(pair.pg.insert_user(person).await?);
    }
    let [ada, bob] = <[_; 2]>::try_from(people).map_err(|_| anyhow::anyhow!("two people"))?;
    let mut made = Vec::new();
    for (name, visibility) in [
        ("secret", Visibility::Private),
        ("open", Visibility::Public),
    ] {
        let p = channel_plan(&boot, name, visibility)?;
        pair.sqlite.provision_channel(p.clone(), no_world()).await?;
        made.push(pair.pg.provision_channel(p, no_world()).await?);
    }
    let secret = made[0].channel.id;
    let actor = Actor::user(&boot.captain);
    macro_rules! both {
        ($call:ident ( $($arg:expr),* )) => {{
            let a = pair.sqlite.$call($($arg),*).await;
            let b = pair.pg.$call($($arg),*).await;
            let (a, b) = match (a, b) {
                (Ok(a), Ok(b)) => (timeless_of(&a), timeless_of(&b)),
                (a, b) => (Value::from(error_shape(a)), Value::from(error_shape(b))),
            };
            same(&a, &b);
            a
        }};
    }
    let outside = both!(visible_channel_ids(ada.id));
    assert!(
        !outside.to_string().contains(&secret.to_string()),
        "{outside}"
    );
    both!(add_channel_member(
        secret,
        ada.id,
        MemberRole::Member,
        actor.clone()
    ));
    let twice = both!(add_channel_member(
        secret,
        ada.id,
        MemberRole::Member,
        actor.clone()
    ));
    assert!(twice.to_string().contains("Conflict"), "{twice}");
    both!(channel_members(secret));
    let inside = both!(visible_channel_ids(ada.id));
    assert_ne!(inside, outside);
    // What several people all see: the private channel only when every one
    // of them belongs to it.
    assert_eq!(both!(channels_all_see(vec![ada.id])), inside);
    assert_eq!(both!(channels_all_see(vec![ada.id, ada.id])), inside);
    assert_eq!(both!(channels_all_see(vec![ada.id, bob.id])), outside);
    both!(add_channel_member(
        secret,
        bob.id,
        MemberRole::Member,
        actor.clone()
    ));
    assert_eq!(both!(channels_all_see(vec![ada.id, bob.id])), inside);
    assert_eq!(both!(channels_all_see(vec![])), outside);
    both!(remove_channel_member(secret, bob.id, actor.clone()));
    both!(remove_channel_member(secret, ada.id, actor.clone()));
    let again = both!(remove_channel_member(secret, ada.id, actor.clone()));
    assert!(again.to_string().contains("NotFound"), "{again}");
    both!(channel_members(secret));
    let nowhere = both!(channel_members(helm_core::model::ChannelId(9999)));
    assert!(nowhere.to_string().contains("NotFound"), "{nowhere}");
    assert_eq!(both!(visible_channel_ids(ada.id)), outside);
    both!(journal(Some(secret)));
    pair.same_events(0).await?;
    pair.same_state().await
}

/// Seeds a thread in `channel` on PostgreSQL with plain SQL (the thread
/// area is not in this store yet); with `turn`, a person's message that
/// woke the resident agent and its queued turn. Ids are the ones SQLite
/// gives the same post.
async fn seed_thread(
    db: &tokio_postgres::Client,
    record: &ChannelRecord,
    by: i64,
    turn: bool,
) -> anyhow::Result<ThreadId> {
    let channel = record.channel.id.get();
    let thread: i64 = db
        .query_one(
            "INSERT INTO threads (channel_id, title, status, opened_by, opened_at, updated_at)
             VALUES ($1, 'hello', 'open', $2, 0, 0) RETURNING id",
            &[&channel, &by],
        )
        .await?
        .get(0);
    let trigger: i64 = db
        .query_one(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id,
                 author_name, content, status, created, updated)
             VALUES ($1, $2, 'human', $3, 'captain', 'hello', 'complete', 0, 0) RETURNING id",
            &[&channel, &thread, &by],
        )
        .await?
        .get(0);
    db.execute(
        "UPDATE threads SET root_message_id = $2 WHERE id = $1",
        &[&thread, &trigger],
    )
    .await?;
    if turn {
        let agent = record.agent.id.get();
        let reply: i64 = db
            .query_one(
                "INSERT INTO messages (channel_id, thread_id, author_kind, author_agent_id,
                     author_name, content, status, created, updated)
                 VALUES ($1, $2, 'agent', $3, $4, '', 'pending', 0, 0)
                 RETURNING id",
                &[&channel, &thread, &agent, &record.agent.handle.as_str()],
            )
            .await?
            .get(0);
        db.execute(
            "INSERT INTO turns (channel_id, thread_id, agent_id, trigger_message_id,
                 reply_message_id, requested_by, state, provider, model, queued_at, model_level)
             VALUES ($1, $2, $3, $4, $5, $6, 'queued', 'mock', 'mock-1', 0, 'workspace')",
            &[&channel, &thread, &agent, &trigger, &reply, &by],
        )
        .await?;
    }
    Ok(ThreadId(thread))
}

/// The Captain's post in `channel` on SQLite, through the store's own call.
async fn post_on_sqlite(
    store: &SqliteStore,
    boot: &Bootstrap,
    record: &ChannelRecord,
    wake: bool,
) -> anyhow::Result<helm_core::store::Posted> {
    use helm_core::model::{PolicyLevel, TurnModel};
    use helm_core::store::{Admission, AdmissionModel, NewPost, ThreadStore};
    Ok(store
        .post_message(NewPost {
            channel_id: record.channel.id,
            thread_id: None,
            author: boot.captain.clone(),
            content: "hello".into(),
            resident: record.agent.clone(),
            mentions_resident: wake,
            calls_skipper: false,
            admission: Admission {
                model: AdmissionModel::Chosen(TurnModel {
                    provider: "mock".into(),
                    model: "mock-1".into(),
                    level: PolicyLevel::Workspace,
                }),
                capacity: 1,
            },
        })
        .await?)
}

#[tokio::test]
async fn postgres_model_policy_levels_match_sqlite() -> anyhow::Result<()> {
    let pair = Pair::new().await?;
    let boot = pair.bootstrap().await?;
    let mut made = Vec::new();
    for name in ["research", "ops"] {
        let p = channel_plan(&boot, name, Visibility::Public)?;
        pair.sqlite.provision_channel(p.clone(), no_world()).await?;
        made.push(pair.pg.provision_channel(p, no_world()).await?);
    }
    let (research, ops) = (made[0].channel.id, made[1].channel.id);
    let posted = post_on_sqlite(&pair.sqlite, &boot, &made[0], false).await?;
    let db = pair.sql().await?;
    let thread = seed_thread(&db, &made[0], boot.captain.id.get(), false).await?;
    assert_eq!(
        posted.thread.id, thread,
        "the seeded thread has SQLite's id"
    );
    let mark = pair.pg.stats().await?.last_event_seq;
    let actor = Actor::user(&boot.captain);
    let choice = |p: &str| Some(ModelChoice::new(p, Some(format!("{p}-model"))));
    macro_rules! both {
        ($call:ident ( $($arg:expr),* )) => {{
            let a = error_shape(pair.sqlite.$call($($arg),*).await);
            let b = error_shape(pair.pg.$call($($arg),*).await);
            same(&a, &b);
            a
        }};
    }
    both!(set_model_policy(
        PolicyScope::Workspace,
        choice("ws"),
        actor.clone()
    ));
    both!(model_policy(research, Some(thread)));
    both!(set_model_policy(
        PolicyScope::Channel(research),
        choice("ch"),
        actor.clone()
    ));
    both!(set_model_policy(
        PolicyScope::Session(thread),
        Some(ModelChoice::new("se", None)),
        actor.clone()
    ));
    let all = pair.pg.model_policy(research, Some(thread)).await?;
    assert_eq!(all.session, Some(ModelChoice::new("se", None)));
    assert_eq!(all.channel, choice("ch"));
    assert_eq!(all.workspace, choice("ws"));
    assert!(all.fallback.is_none());
    both!(model_policy(research, Some(thread)));
    let other = pair.pg.model_policy(ops, None).await?;
    assert!(other.channel.is_none() && other.session.is_none());
    both!(model_policy(ops, None));
    both!(set_model_policy(
        PolicyScope::Channel(research),
        None,
        actor.clone()
    ));
    let cleared = pair.pg.model_policy(research, None).await?;
    assert!(cleared.channel.is_none() && cleared.workspace == choice("ws"));
    both!(model_policy(research, Some(thread)));
    let missing = both!(set_model_policy(
        PolicyScope::Channel(helm_core::model::ChannelId(9999)),
        choice("x"),
        actor.clone()
    ));
    assert!(missing.starts_with("NotFound"), "{missing}");
    let missing = both!(set_model_policy(
        PolicyScope::Session(ThreadId(9999)),
        choice("x"),
        actor.clone()
    ));
    assert!(missing.starts_with("NotFound"), "{missing}");
    // The journal and the model events agree from here on (SQLite's post
    // wrote events the seeding did not).
    let (a, b) = pair.events_after(0).await?;
    let tail = |v: Vec<Value>| {
        v.into_iter()
            .filter(|e| e["type"] == "model.changed")
            .map(|mut e| {
                e["seq"] = Value::Null;
                e
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (tail(a), tail(b));
    assert_eq!(b.len(), 4, "{b:?}");
    same(&a, &b);
    assert!(pair.pg.stats().await?.last_event_seq > mark);
    same(
        &timeless_of(&pair.sqlite.journal(None).await?),
        &timeless_of(&pair.pg.journal(None).await?),
    );
    Ok(())
}

#[tokio::test]
async fn postgres_archiving_cancels_queued_turns_as_sqlite_does() -> anyhow::Result<()> {
    let pair = Pair::new().await?;
    let boot = pair.bootstrap().await?;
    let p = channel_plan(&boot, "research", Visibility::Public)?;
    pair.sqlite.provision_channel(p.clone(), no_world()).await?;
    let research = pair.pg.provision_channel(p, no_world()).await?;
    let posted = post_on_sqlite(&pair.sqlite, &boot, &research, true).await?;
    let turn = posted.turn.context("a queued turn")?;
    let db = pair.sql().await?;
    seed_thread(&db, &research, boot.captain.id.get(), true).await?;
    let (sqlite_mark, pg_mark) = (
        pair.sqlite.stats().await?.last_event_seq,
        pair.pg.stats().await?.last_event_seq,
    );
    let actor = Actor::user(&boot.captain);
    let (a, b) = (
        pair.sqlite
            .set_channel_status(research.channel.id, ChannelStatus::Archived, actor.clone())
            .await?,
        pair.pg
            .set_channel_status(research.channel.id, ChannelStatus::Archived, actor.clone())
            .await?,
    );
    same(&timeless_of(&a), &timeless_of(&b));
    let row = db
        .query_one(
            "SELECT t.state, m.status, m.content FROM turns t
             JOIN messages m ON m.id = t.reply_message_id WHERE t.id = $1",
            &[&turn.id.get()],
        )
        .await?;
    let (state, reply, content): (String, String, String) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(
        (state.as_str(), reply.as_str(), content.as_str()),
        ("cancelled", "stopped", "")
    );
    // The same events, in the same order, with the same payloads (the
    // seeded rows' times and counters aside).
    let strip = |v: Vec<helm_core::events::Event>| {
        v.iter()
            .map(|e| {
                let mut body = timeless_of(&e.body);
                if let Some(turn) = body.get_mut("turn") {
                    turn["hop"] = Value::Null;
                    turn["steps"] = Value::Null;
                }
                (e.body.type_name(), body)
            })
            .collect::<Vec<_>>()
    };
    let a = strip(pair.sqlite.events_after(sqlite_mark, 100).await?);
    let b = strip(pair.pg.events_after(pg_mark, 100).await?);
    let kinds: Vec<_> = b.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [
            "message.completed",
            "message.created",
            "turn.cancelled",
            "channel.archived",
            "agent.status"
        ]
    );
    same(&a, &b);
    let listed = pair.pg.list_channels(ChannelFilter::default()).await?;
    assert!(listed.iter().all(|c| c.channel.id != research.channel.id));
    same(
        &timeless_of(&pair.sqlite.journal(None).await?),
        &timeless_of(&pair.pg.journal(None).await?),
    );
    Ok(())
}

#[tokio::test]
async fn postgres_two_nodes_bootstrapping_at_once_make_one_world() -> anyhow::Result<()> {
    let url = fresh_database().await?;
    let (a, b) = tokio::try_join!(PostgresStore::connect(&url), PostgresStore::connect(&url))?;
    let (x, y) = tokio::join!(
        a.bootstrap(plan(), no_world()),
        b.bootstrap(plan(), no_world())
    );
    let (x, y) = (x?, y?);
    assert!(x.created != y.created, "exactly one node creates");
    assert_eq!(bootstrap_shape(&x)["home"], bootstrap_shape(&y)["home"]);
    assert_eq!(x.captain.id, y.captain.id);
    assert_eq!(x.workspace.id, y.workspace.id);
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await?;
    tokio::spawn(connection);
    let counts = client
        .query_one(
            "SELECT (SELECT count(*) FROM workspaces), \
                    (SELECT count(*) FROM users WHERE role = 'captain'), \
                    (SELECT count(*) FROM agents WHERE kind = 'skipper'), \
                    (SELECT count(*) FROM channels WHERE kind = 'home'), \
                    (SELECT count(*) FROM events)",
            &[],
        )
        .await?;
    let counts: Vec<i64> = (0..5).map(|i| counts.get(i)).collect();
    assert_eq!(counts, [1, 1, 1, 1, 2]);
    Ok(())
}

#[tokio::test]
async fn postgres_two_nodes_provisioning_one_name_make_one_channel() -> anyhow::Result<()> {
    let url = fresh_database().await?;
    let (a, b) = tokio::try_join!(PostgresStore::connect(&url), PostgresStore::connect(&url))?;
    let boot = a.bootstrap(plan(), no_world()).await?;
    for name in ["research", "ops", "launch"] {
        let p = channel_plan(&boot, name, Visibility::Public)?;
        let (x, y) = tokio::join!(
            a.provision_channel(p.clone(), no_world()),
            b.provision_channel(p, no_world())
        );
        let (won, lost) = match (x, y) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
            other => panic!("exactly one node provisions #{name}: {other:?}"),
        };
        assert!(
            matches!(&lost, Error::Conflict(m) if m == &format!("#{name} already exists")),
            "{lost:?}"
        );
        assert_eq!(
            won.agent.handle,
            Handle::for_channel(&ChannelName::parse(name)?, None)
        );
        for node in [&a, &b] {
            let seen = node.channel(&ChannelRef::Id(won.channel.id)).await?;
            assert_eq!(seen.agent.id, won.agent.id);
        }
    }
    let stats = b.stats().await?;
    assert_eq!((stats.channels_active, stats.agents), (4, 4));
    Ok(())
}
