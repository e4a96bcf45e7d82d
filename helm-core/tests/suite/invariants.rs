//! The rules the database itself enforces, attempted directly against the
//! store and against the SQLite file, below any facade check.

use helm_core::ErrorKind;
use helm_core::model::{AgentKind, Handle};
use helm_core::store::NewAgent;

use super::kit::{Fixture, LAUNCH_PURPOSE};

#[tokio::test]
async fn a_second_agent_cannot_be_bound_to_a_channel() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let store = f.helm.store();
    let intruder = store
        .insert_agent(NewAgent {
            kind: AgentKind::Channel,
            handle: Handle::parse("intruder")?,
            display_name: "Intruder".into(),
        })
        .await?;
    let err = store
        .bind_agent(intruder.id, launch.channel.id)
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("second binding accepted"))?;
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(
        err.to_string().contains("already has its resident agent"),
        "{err}"
    );

    // Below the store too: the SQLite file refuses it.
    let raw = f.raw_db()?.execute(
        "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES (?1, ?2, 0)",
        [intruder.id.get(), launch.channel.id.get()],
    );
    assert!(raw.is_err());
    assert_eq!(
        f.count(&format!(
            "SELECT count(*) FROM agent_channels WHERE channel_id = {}",
            launch.channel.id
        ))?,
        1
    );
    Ok(())
}

#[tokio::test]
async fn an_agent_cannot_be_bound_to_a_second_channel() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let finance = f
        .helm
        .create_channel(&f.captain, "finance", "Money.")
        .await?;
    let err = f
        .helm
        .store()
        .bind_agent(launch.agent.id, finance.channel.id)
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("agent bound twice"))?;
    assert_eq!(err.kind(), ErrorKind::Conflict);

    // Rebinding by updating the row is refused as well: the binding is immutable.
    let raw = f.raw_db()?.execute(
        "UPDATE agent_channels SET channel_id = ?1 WHERE agent_id = ?2",
        [finance.channel.id.get(), launch.agent.id.get()],
    );
    assert!(raw.is_err(), "binding was rewritten");
    let bound: i64 = f.raw_db()?.query_row(
        "SELECT channel_id FROM agent_channels WHERE agent_id = ?1",
        [launch.agent.id.get()],
        |r| r.get(0),
    )?;
    assert_eq!(bound, launch.channel.id.get());
    Ok(())
}

#[tokio::test]
async fn skipper_is_never_a_resident_and_exactly_one_exists() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let main = f.helm.channel(&"main".parse()?).await?;
    let store = f.helm.store();

    // No second Skipper.
    let err = store
        .insert_agent(NewAgent {
            kind: AgentKind::Skipper,
            handle: Handle::parse("skipper-two")?,
            display_name: "Skipper Two".into(),
        })
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("second Skipper accepted"))?;
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(err.to_string().contains("exactly one Skipper"), "{err}");

    // Skipper cannot be bound as a resident, nor anyone to #main.
    let err = store
        .bind_agent(main.agent.id, launch.channel.id)
        .await
        .err();
    assert!(err.is_some());
    let spare = store
        .insert_agent(NewAgent {
            kind: AgentKind::Channel,
            handle: Handle::parse("spare")?,
            display_name: "Spare".into(),
        })
        .await?;
    let err = store
        .bind_agent(spare.id, main.channel.id)
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("resident bound to #main"))?;
    assert_eq!(err.kind(), ErrorKind::Refused);

    // Nor removed or paused, even with raw SQL.
    let db = f.raw_db()?;
    assert!(
        db.execute("DELETE FROM agents WHERE kind = 'skipper'", [])
            .is_err()
    );
    assert!(
        db.execute(
            "UPDATE agents SET status = 'paused' WHERE kind = 'skipper'",
            []
        )
        .is_err()
    );
    assert!(
        db.execute(
            "UPDATE agents SET kind = 'channel' WHERE kind = 'skipper'",
            []
        )
        .is_err()
    );
    assert_eq!(
        f.count("SELECT count(*) FROM agents WHERE kind = 'skipper'")?,
        1
    );
    Ok(())
}

#[tokio::test]
async fn live_channel_names_are_unique_in_the_database() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    f.helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let raw = f.raw_db()?.execute(
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, created_by, created, status_changed) \
         VALUES (1, 'launch', 'x', 'agent', 'archived', 1, 0, 0)",
        [],
    );
    assert!(raw.is_err(), "duplicate live name accepted by the database");
    Ok(())
}

#[tokio::test]
async fn a_thread_has_at_most_one_open_call_for_skipper_in_the_database() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let db = f.raw_db()?;
    db.execute(
        "INSERT INTO threads (channel_id, title, status, opened_at, updated_at) \
         VALUES (?1, 'plan', 'open', 0, 0)",
        [launch.channel.id.get()],
    )?;
    let thread = db.last_insert_rowid();
    let open = |reason: &str| {
        db.execute(
            "INSERT INTO escalations (thread_id, reason, status, created) VALUES (?1, ?2, 'open', 0)",
            rusqlite::params![thread, reason],
        )
    };
    open("first")?;
    assert!(
        open("second").is_err(),
        "a second open call in one thread accepted by the database"
    );
    // Once the first is settled, a new call may open.
    db.execute(
        "UPDATE escalations SET status = 'resolved' WHERE thread_id = ?1",
        [thread],
    )?;
    open("third")?;
    Ok(())
}
