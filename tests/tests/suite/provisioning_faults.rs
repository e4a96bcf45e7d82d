//! A failure at any step of provisioning leaves no half channel, and a retry
//! yields exactly one agent.

use helm_core::faults::FaultPoint;
use helm_core::model::ChannelRef;
use helm_tests::{TestHelm, dir_names};

async fn counts(t: &TestHelm) -> anyhow::Result<(u64, u64)> {
    let stats = t.helm.store().stats().await?;
    Ok((
        stats.channels_active + stats.channels_archived,
        stats.agents,
    ))
}

#[tokio::test]
async fn a_retry_after_a_failure_at_any_step_yields_one_agent() -> anyhow::Result<()> {
    for point in [
        FaultPoint::BeforeWorld,
        FaultPoint::MidWorld,
        FaultPoint::BeforeCommit,
    ] {
        let t = TestHelm::new().await?;
        let before = counts(&t).await?;
        let worlds_before = dir_names(&t.data_dir().join("channels"));
        let events_before = t.helm.store().stats().await?.last_event_seq;

        t.helm.faults().fail_once_at(point);
        let err = t
            .helm
            .create_channel(&t.captain, "launch", "The product launch.")
            .await
            .err();
        assert!(
            err.is_some(),
            "{point:?}: the injected failure did not surface"
        );

        // Nothing of the channel exists: no rows, no tree, no events.
        assert_eq!(counts(&t).await?, before, "{point:?}: rows left behind");
        assert_eq!(
            dir_names(&t.data_dir().join("channels")),
            worlds_before,
            "{point:?}: tree left behind"
        );
        assert_eq!(
            t.helm.store().stats().await?.last_event_seq,
            events_before,
            "{point:?}: events leaked"
        );
        assert!(
            t.helm
                .channel(&"launch".parse::<ChannelRef>()?)
                .await
                .is_err()
        );

        // The retry succeeds with exactly one resident agent and a whole world.
        let record = t
            .helm
            .create_channel(&t.captain, "launch", "The product launch.")
            .await?;
        assert_eq!(counts(&t).await?, (before.0 + 1, before.1 + 1), "{point:?}");
        assert_eq!(
            record.agent.handle.as_str(),
            "launch-agent",
            "{point:?}: handle drifted"
        );
        assert!(t.helm.data_root().world(record.channel.id).is_complete());

        // A second retry (the first one did succeed) never makes a second agent.
        let again = t
            .helm
            .create_channel(&t.captain, "launch", "The product launch.")
            .await;
        assert!(again.is_err());
        assert_eq!(counts(&t).await?, (before.0 + 1, before.1 + 1), "{point:?}");
    }
    Ok(())
}

#[tokio::test]
async fn a_leftover_tree_from_a_crash_is_set_aside_not_reused() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    // A crash after the tree was made but before the commit leaves a directory
    // under the id the next channel will get.
    let next_id = t.helm.store().stats().await?.channels_active + 1;
    let stale = t
        .data_dir()
        .join("channels")
        .join(next_id.to_string())
        .join("workspace");
    std::fs::create_dir_all(&stale)?;
    std::fs::write(stale.join("stale.txt"), "from a crashed attempt")?;

    let record = t
        .helm
        .create_channel(&t.captain, "launch", "The product launch.")
        .await?;
    let world = t.helm.data_root().world(record.channel.id);
    assert!(
        !world.workspace().join("stale.txt").exists(),
        "the new world inherited stale files"
    );
    let orphaned = dir_names(&t.data_dir().join("channels").join(".orphaned"));
    assert_eq!(
        orphaned.len(),
        1,
        "the stale tree was kept aside: {orphaned:?}"
    );
    Ok(())
}
