use helm_core::events::EventBody;

use super::kit::{Fixture, LAUNCH_PURPOSE};

#[tokio::test]
async fn changes_are_logged_in_order_and_resumable() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let mut live = f.helm.subscribe();
    let start = f.helm.store().stats().await?.last_event_seq;

    f.helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    f.helm
        .archive_channel(&f.captain, &"launch".parse()?)
        .await?;

    let logged = f.helm.store().events_after(start, 100).await?;
    let types: Vec<&str> = logged.iter().map(|e| e.body.type_name()).collect();
    assert_eq!(
        types,
        [
            "channel.created",
            "message.created",
            "channel.archived",
            "agent.status"
        ]
    );
    let seqs: Vec<u64> = logged.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert!(
        matches!(&logged[1].body, EventBody::MessageCreated { message } if message.content.contains("@launch-agent is ready"))
    );

    // Live subscribers saw the same events in the same order.
    for expected in &logged {
        let got = live.recv().await?;
        assert_eq!(&*got, expected);
    }
    // Resuming after the second event yields exactly the rest.
    let resumed = f.helm.store().events_after(logged[1].seq, 100).await?;
    assert_eq!(resumed, logged[2..]);

    // The log survives a restart.
    let reopened = helm_core::Helm::open(helm_core::HelmOptions::new(f.data_dir())).await?;
    assert_eq!(reopened.store().events_after(start, 100).await?, logged);

    // Events serialise with a dotted type tag.
    let json = serde_json::to_value(&logged[0])?;
    assert_eq!(json["type"], "channel.created");
    assert_eq!(json["channel"]["name"], "launch");
    Ok(())
}
