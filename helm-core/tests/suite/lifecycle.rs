use helm_core::ErrorKind;
use helm_core::model::{AgentStatus, ChannelRef, ChannelStatus, Role};

use super::kit::{Fixture, LAUNCH_PURPOSE};

#[tokio::test]
async fn archive_then_restore_keeps_the_same_agent_world() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let created = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let world = f.helm.data_root().world(created.channel.id);
    std::fs::write(world.workspace().join("plan.md"), "# Launch plan")?;

    let archived = f
        .helm
        .archive_channel(&f.captain, &"launch".parse()?)
        .await?;
    assert_eq!(archived.channel.status, ChannelStatus::Archived);
    assert_eq!(archived.agent.status, AgentStatus::Paused);
    assert_eq!(archived.agent.id, created.agent.id);
    assert!(
        world.workspace().join("plan.md").is_file(),
        "archive kept the workspace"
    );

    let restored = f
        .helm
        .restore_channel(&f.captain, &"launch".parse()?)
        .await?;
    assert_eq!(restored.channel.id, created.channel.id);
    assert_eq!(restored.agent.id, created.agent.id);
    assert_eq!(restored.agent.handle, created.agent.handle);
    assert_eq!(restored.profile, created.profile);
    assert_eq!(restored.agent.status, AgentStatus::Ready);
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("plan.md"))?,
        "# Launch plan"
    );
    assert_eq!(
        f.count("SELECT count(*) FROM agents")?,
        2,
        "restore made no new agent"
    );

    // Archiving twice is a clear conflict, not a silent success.
    f.helm
        .archive_channel(&f.captain, &"launch".parse()?)
        .await?;
    let err = f
        .helm
        .archive_channel(&f.captain, &"launch".parse()?)
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Conflict));
    Ok(())
}

#[tokio::test]
async fn delete_needs_archive_and_a_confirmation_naming_the_channel() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let created = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let target: ChannelRef = "launch".parse()?;

    let active = f
        .helm
        .delete_channel(&f.captain, &target, "launch")
        .await
        .err();
    let active = active.ok_or_else(|| anyhow::anyhow!("deleted an active channel"))?;
    assert_eq!(active.kind(), ErrorKind::Refused);
    assert!(active.to_string().contains("archive it"), "{active}");

    f.helm.archive_channel(&f.captain, &target).await?;
    for wrong in ["", "lunch", "main"] {
        let err = f
            .helm
            .delete_channel(&f.captain, &target, wrong)
            .await
            .err();
        assert_eq!(
            err.map(|e| e.kind()),
            Some(ErrorKind::Refused),
            "confirm {wrong:?}"
        );
    }
    assert!(f.helm.data_root().world(created.channel.id).root().is_dir());
    assert_eq!(
        f.count("SELECT count(*) FROM channels WHERE name = 'launch'")?,
        1
    );
    Ok(())
}

#[tokio::test]
async fn delete_removes_rows_and_files() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let created = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let id = created.channel.id.get();
    let world = f.helm.data_root().world(created.channel.id);
    std::fs::write(world.workspace().join("plan.md"), "# Launch plan")?;
    let target: ChannelRef = "#launch".parse()?;
    f.helm.archive_channel(&f.captain, &target).await?;
    f.helm
        .delete_channel(&f.captain, &target, "#launch")
        .await?;

    assert!(!world.root().exists(), "the tree is gone");
    assert!(helm_core_trash_is_empty(&f));
    assert_eq!(
        f.count(&format!("SELECT count(*) FROM channels WHERE id = {id}"))?,
        0
    );
    for table in [
        "channel_members",
        "agent_channels",
        "channel_workspaces",
        "model_policies",
        "messages",
        "threads",
    ] {
        let n = f.count(&format!(
            "SELECT count(*) FROM {table} WHERE channel_id = {id}"
        ))?;
        assert_eq!(n, 0, "{table} still has rows");
    }
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM agents WHERE id = {}",
            created.agent.id
        ))?,
        0
    );
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM agent_profiles WHERE agent_id = {}",
            created.agent.id
        ))?,
        0
    );
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM events WHERE channel_id = {id}"
        ))?,
        0
    );
    // The journal remembers that it happened.
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM journal WHERE channel_id = {id} AND action = 'channel.deleted'"
        ))?,
        1
    );
    let err = f.helm.channel(&target).await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::NotFound));

    // The name is free again and the new channel gets a new id and agent.
    let again = f
        .helm
        .create_channel(&f.captain, "launch", "Second launch")
        .await?;
    assert_ne!(again.channel.id, created.channel.id);
    assert_ne!(again.agent.id, created.agent.id);
    assert_eq!(again.agent.handle.as_str(), "launch-agent");
    Ok(())
}

fn helm_core_trash_is_empty(f: &Fixture) -> bool {
    let trash = f.data_dir().join("channels").join(".trash");
    std::fs::read_dir(&trash)
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}

#[tokio::test]
async fn main_and_skipper_are_protected() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let main: ChannelRef = "main".parse()?;
    let err = f.helm.archive_channel(&f.captain, &main).await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Refused));
    let err = f.helm.delete_channel(&f.captain, &main, "main").await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Refused));
    // The database refuses it as well.
    let db = f.raw_db()?;
    assert!(
        db.execute(
            "UPDATE channels SET status = 'archived' WHERE kind = 'home'",
            []
        )
        .is_err()
    );
    assert!(
        db.execute("DELETE FROM channels WHERE kind = 'home'", [])
            .is_err()
    );
    let home = f.helm.channel(&main).await?;
    assert_eq!(home.channel.status, ChannelStatus::Active);
    assert_eq!(home.agent.status, AgentStatus::Ready);
    Ok(())
}

#[tokio::test]
async fn only_managers_archive_and_only_admins_delete() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let member = f.helm.add_user(&f.captain, "mira", Role::Member).await?;
    let admin = f.helm.add_user(&f.captain, "ada", Role::Admin).await?;
    f.helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    f.helm
        .create_channel(&member, "garden", "Mira's garden plans.")
        .await?;

    let launch: ChannelRef = "launch".parse()?;
    let err = f.helm.archive_channel(&member, &launch).await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    // A creator manages their own channel but cannot delete it for good.
    let garden: ChannelRef = "garden".parse()?;
    f.helm.archive_channel(&member, &garden).await?;
    let err = f
        .helm
        .delete_channel(&member, &garden, "garden")
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    f.helm.delete_channel(&admin, &garden, "garden").await?;

    // Only the Captain makes admins; nobody makes a second Captain.
    let err = f.helm.add_user(&admin, "eve", Role::Admin).await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    let err = f
        .helm
        .add_user(&f.captain, "cap2", Role::Captain)
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Refused));
    let err = f.helm.add_user(&member, "x", Role::Member).await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    Ok(())
}

#[tokio::test]
async fn the_world_survives_a_restart() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let created = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let world = f.helm.data_root().world(created.channel.id);
    std::fs::write(world.workspace().join("notes.txt"), "kept")?;
    drop(f.helm.clone());
    let reopened = helm_core::Helm::open(helm_core::HelmOptions::new(f.data_dir())).await?;
    let again = reopened.channel(&"launch".parse()?).await?;
    assert_eq!(again, created);
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("notes.txt"))?,
        "kept"
    );
    Ok(())
}
