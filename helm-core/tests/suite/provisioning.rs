use helm_core::model::{AgentKind, AgentStatus, ChannelKind, ChannelRef, ChannelStatus};
use helm_core::store::ChannelFilter;
use helm_core::world::WORLD_DIRS;

use super::kit::{Fixture, LAUNCH_PURPOSE};

#[tokio::test]
async fn init_creates_main_with_skipper_and_is_idempotent() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let home = f.helm.channel(&"main".parse()?).await?;
    assert_eq!(home.channel.kind, ChannelKind::Home);
    assert_eq!(home.agent.kind, AgentKind::Skipper);
    assert_eq!(home.agent.handle.to_string(), "@skipper");
    assert_eq!(f.captain.role, helm_core::model::Role::Captain);

    let (again, report) = helm_core::Helm::init(
        helm_core::HelmOptions::new(f.data_dir()),
        helm_core::InitOptions::default(),
    )
    .await?;
    assert!(!report.created);
    assert_eq!(report.captain.id, f.captain.id);
    assert_eq!(
        again.channel(&"main".parse()?).await?.agent.id,
        home.agent.id
    );
    assert_eq!(
        f.count("SELECT count(*) FROM agents WHERE kind = 'skipper'")?,
        1
    );
    assert_eq!(f.count("SELECT count(*) FROM users")?, 1);
    assert_eq!(f.count("SELECT count(*) FROM channels")?, 1);
    Ok(())
}

#[tokio::test]
async fn provisioning_creates_exactly_one_bound_agent_and_the_tree() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let record = f
        .helm
        .create_channel(&f.captain, "#launch", LAUNCH_PURPOSE)
        .await?;

    assert_eq!(record.channel.name.as_str(), "launch");
    assert_eq!(record.channel.purpose, LAUNCH_PURPOSE);
    assert_eq!(record.channel.status, ChannelStatus::Active);
    assert_eq!(record.channel.kind, ChannelKind::Agent);
    assert_eq!(record.agent.kind, AgentKind::Channel);
    assert_eq!(record.agent.status, AgentStatus::Ready);
    assert_eq!(record.agent.handle.to_string(), "@launch-agent");
    assert_eq!(record.agent.display_name, "Launch Agent");
    assert_eq!(record.profile.purpose, LAUNCH_PURPOSE);
    assert_eq!(
        record.profile.memory_namespace,
        format!("channel:{}", record.channel.id)
    );
    assert_eq!(
        record.profile.workspace_ref,
        format!("channels/{}", record.channel.id)
    );
    assert!(
        !record.profile.capability_policy.network,
        "network is off by default"
    );

    let id = record.channel.id.get();
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM agent_channels WHERE channel_id = {id}"
        ))?,
        1
    );
    assert_eq!(
        f.count("SELECT count(*) FROM agents WHERE kind = 'channel'")?,
        1
    );
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM channel_members WHERE channel_id = {id} AND role = 'owner'"
        ))?,
        1
    );
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM channel_workspaces WHERE channel_id = {id}"
        ))?,
        1
    );
    assert_eq!(
        f.count(&format!("SELECT count(*) FROM model_policies WHERE scope = 'channel' AND channel_id = {id} AND provider IS NULL"))?,
        1,
        "the channel inherits the workspace model"
    );
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM journal WHERE channel_id = {id} AND action = 'channel.created'"
        ))?,
        1
    );

    // Skipper announces the new agent in the channel.
    let announcement: String = f.raw_db()?.query_row(
        &format!(
            "SELECT content FROM messages WHERE channel_id = {id} AND author_kind = 'skipper'"
        ),
        [],
        |r| r.get(0),
    )?;
    assert!(
        announcement.starts_with("@launch-agent is ready."),
        "{announcement}"
    );

    let world = f.helm.data_root().world(record.channel.id);
    for dir in WORLD_DIRS {
        assert!(world.root().join(dir).is_dir(), "{dir} missing");
    }
    let profile: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        world.profile().join("agent.json"),
    )?)?;
    assert_eq!(profile["agent"]["handle"], "launch-agent");
    assert_eq!(profile["channel"]["purpose"], LAUNCH_PURPOSE);
    Ok(())
}

#[tokio::test]
async fn two_channels_have_different_workspaces_and_agents() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let a = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let b = f
        .helm
        .create_channel(&f.captain, "finance", "Budgets and invoices.")
        .await?;
    assert_ne!(a.agent.id, b.agent.id);
    assert_ne!(a.profile.workspace_ref, b.profile.workspace_ref);
    assert_ne!(a.profile.memory_namespace, b.profile.memory_namespace);
    let wa = f.helm.data_root().world(a.channel.id).workspace();
    let wb = f.helm.data_root().world(b.channel.id).workspace();
    assert_ne!(wa, wb);
    assert!(wa.is_dir() && wb.is_dir());
    Ok(())
}

#[tokio::test]
async fn handles_stay_unique_when_names_collide() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let a = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    // `launch_` and `launch-` both derive the handle launch-agent.
    let b = f
        .helm
        .create_channel(&f.captain, "launch_", "The launch party.")
        .await?;
    let c = f
        .helm
        .create_channel(&f.captain, "launch-", "Launch retro.")
        .await?;
    assert_eq!(a.agent.handle.as_str(), "launch-agent");
    assert_eq!(b.agent.handle.as_str(), "launch-agent-2");
    assert_eq!(c.agent.handle.as_str(), "launch-agent-3");
    Ok(())
}

#[tokio::test]
async fn duplicate_names_are_refused_and_change_nothing() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    f.helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let err = f
        .helm
        .create_channel(&f.captain, "#Launch", "another")
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("duplicate accepted"))?;
    assert_eq!(err.kind(), helm_core::ErrorKind::Conflict);
    assert_eq!(err.to_string(), "#launch already exists");

    // An archived channel keeps its name.
    f.helm
        .archive_channel(&f.captain, &"launch".parse()?)
        .await?;
    let err = f
        .helm
        .create_channel(&f.captain, "launch", "again")
        .await
        .err();
    assert!(
        err.map(|e| e.to_string().contains("archived"))
            .unwrap_or(false)
    );
    assert_eq!(f.count("SELECT count(*) FROM channels")?, 2);
    assert_eq!(f.count("SELECT count(*) FROM agents")?, 2);
    Ok(())
}

#[tokio::test]
async fn list_shows_active_channels_and_archived_on_request() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    for name in ["ops", "launch", "finance"] {
        f.helm.create_channel(&f.captain, name, "work").await?;
    }
    f.helm.archive_channel(&f.captain, &"ops".parse()?).await?;
    let names = |records: Vec<helm_core::store::ChannelRecord>| {
        records
            .into_iter()
            .map(|r| r.channel.name.as_str().to_string())
            .collect::<Vec<_>>()
    };
    let active = f.helm.channels(ChannelFilter::default()).await?;
    assert_eq!(names(active), ["finance", "launch", "main"]);
    let all = f
        .helm
        .channels(ChannelFilter {
            include_archived: true,
        })
        .await?;
    assert_eq!(names(all), ["finance", "launch", "main", "ops"]);
    // Ids work as references too.
    let launch = f.helm.channel(&"launch".parse()?).await?;
    let by_id = f.helm.channel(&ChannelRef::Id(launch.channel.id)).await?;
    assert_eq!(by_id, launch);
    Ok(())
}

/// `store = "sqlite://…"` puts the workspace's state in that file (a
/// relative path in the data directory), made private; reopening finds it.
#[tokio::test]
async fn a_store_url_names_the_sqlite_file() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    let mut options = helm_core::HelmOptions::new(dir.path().join("data"));
    options.store = Some("sqlite://state.db".parse()?);
    let (helm, _) =
        helm_core::Helm::init(options.clone(), helm_core::InitOptions::default()).await?;
    let file = dir.path().join("data/state.db");
    assert!(file.is_file());
    assert_eq!(std::fs::metadata(&file)?.permissions().mode() & 0o077, 0);
    // The data directory's own helm.db is only the empty placeholder.
    let placeholder = std::fs::metadata(dir.path().join("data/helm.db"))?;
    assert_eq!(placeholder.len(), 0);
    let name = helm.workspace().name;
    drop(helm);
    let reopened = helm_core::Helm::open(options).await?;
    assert_eq!(reopened.workspace().name, name);
    Ok(())
}

/// The profile mirror is rewritten by whoever changes a channel, and by the
/// runtime following the change, at the same time: every one of those
/// changes must succeed, and once they have returned the mirror is whole
/// and holds the record as the store has it, not an older one put back by
/// a slower writer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_all_rewrite_the_profile_mirror() -> anyhow::Result<()> {
    let f = std::sync::Arc::new(Fixture::new().await?);
    f.helm.start_runtime().await?;
    let record = f
        .helm
        .create_channel(&f.captain, "#mirror", LAUNCH_PURPOSE)
        .await?;
    let mut edits = tokio::task::JoinSet::new();
    for i in 0..40 {
        let f = f.clone();
        edits.spawn(async move {
            f.helm
                .update_channel(
                    &f.captain,
                    &ChannelRef::Id(record.channel.id),
                    helm_core::store::ChannelUpdate {
                        purpose: Some(format!("Purpose number {i} of the mirror test.")),
                        ..Default::default()
                    },
                )
                .await
        });
    }
    while let Some(edit) = edits.join_next().await {
        edit??;
    }
    let world = f.helm.data_root().world(record.channel.id);
    let profile: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        world.profile().join("agent.json"),
    )?)?;
    let purpose = profile["channel"]["purpose"].as_str().unwrap_or_default();
    let stored = f.helm.channel(&ChannelRef::Id(record.channel.id)).await?;
    assert_eq!(purpose, stored.channel.purpose.as_str(), "{profile}");
    assert!(purpose.starts_with("Purpose number "), "{profile}");
    let leftovers: Vec<_> = std::fs::read_dir(world.profile())?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    Ok(())
}
