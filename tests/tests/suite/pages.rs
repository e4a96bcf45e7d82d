//! A channel's memory outgrows a page: every record is reached a page at a
//! time, pinned ones first, on both stores alike.

use helm_core::ErrorKind;
use helm_core::MemoryNote;
use helm_core::model::{ChannelRef, MemoryId, MemoryKind, MemoryScope};
use helm_core::store::MemoryFilter;
use helm_tests::TestHelm;

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

fn fact(text: &str) -> MemoryNote {
    MemoryNote {
        kind: MemoryKind::Fact,
        content: text.into(),
        thread: None,
        scope: MemoryScope::Channel,
    }
}

#[tokio::test]
async fn memory_pages_reach_every_record_once_in_order_on_both_stores() -> anyhow::Result<()> {
    for (store, t) in [
        ("SQLite", TestHelm::new().await?),
        ("PostgreSQL", TestHelm::on_postgres().await?),
    ] {
        t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
        t.helm.create_channel(&t.captain, "ops", PURPOSE).await?;
        let launch: ChannelRef = "launch".parse()?;
        let mut ids = Vec::new();
        for n in 0..7 {
            let item = t
                .helm
                .remember(&t.captain, &launch, fact(&format!("Fact number {n}.")))
                .await?;
            ids.push(item.id);
        }
        // Two old records pinned: they lead every listing.
        t.helm.pin_memory(&t.captain, ids[1], true).await?;
        t.helm.pin_memory(&t.captain, ids[3], true).await?;
        let expected: Vec<MemoryId> =
            [ids[3], ids[1], ids[6], ids[5], ids[4], ids[2], ids[0]].into();
        let page = |before: Option<MemoryId>| MemoryFilter {
            limit: 3,
            before,
            ..Default::default()
        };
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let items = t
                .helm
                .channel_memory(&t.captain, &launch, page(before))
                .await?;
            let Some(last) = items.last() else { break };
            before = Some(last.id);
            seen.extend(items.iter().map(|i| i.id));
        }
        assert_eq!(
            seen, expected,
            "every record once, pinned first, on {store}"
        );

        // A record of another channel, or none at all, marks no place here.
        let theirs = t
            .helm
            .remember(&t.captain, &"ops".parse()?, fact("Ops keeps the pager."))
            .await?;
        for wrong in [theirs.id, MemoryId(9_999)] {
            let Err(e) = t
                .helm
                .channel_memory(&t.captain, &launch, page(Some(wrong)))
                .await
            else {
                panic!("a page after record {wrong} on {store} was listed");
            };
            assert_eq!(e.kind(), ErrorKind::Invalid, "{e} on {store}");
        }
    }
    Ok(())
}
