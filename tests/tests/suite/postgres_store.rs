//! The PostgreSQL store on a real, throwaway cluster: migrations
//! apply once however many nodes connect at the same time, the database
//! itself refuses what the product forbids, and event numbers follow
//! commit order and reach every node (the doorbell and the catch-up).

use anyhow::Context;
use helm_core::store::{AuditRecord, EventStore, PostgresStore};
use helm_tests::postgres::fresh_database;
use tokio_postgres::{Client, NoTls};

async fn connect(url: &str) -> anyhow::Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// A client error with the server's own message (tokio-postgres shows
/// only "db error").
fn pg(e: tokio_postgres::Error) -> anyhow::Error {
    match e.as_db_error() {
        Some(db) => anyhow::anyhow!("{}: {}", db.code().code(), db.message()),
        None => anyhow::anyhow!(e),
    }
}

/// The SQL error's own message, for asserting what the database refused.
async fn refused(client: &Client, sql: &str) -> String {
    match client.batch_execute(sql).await {
        Ok(()) => format!("accepted: {sql}"),
        Err(e) => e
            .as_db_error()
            .map(|db| db.message().to_string())
            .unwrap_or_else(|| e.to_string()),
    }
}

#[tokio::test]
async fn nodes_starting_together_apply_the_schema_once() -> anyhow::Result<()> {
    let url = fresh_database().await?;
    let (a, b, c) = tokio::join!(
        PostgresStore::connect(&url),
        PostgresStore::connect(&url),
        PostgresStore::connect(&url)
    );
    let client = connect(&url).await?;
    let rows = client
        .query("SELECT version FROM helm_migrations ORDER BY version", &[])
        .await?;
    let versions: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    let newest = versions.last().copied().unwrap_or_default();
    assert!(newest >= 2, "{versions:?}");
    for store in [a?, b?, c?] {
        assert_eq!(store.schema_version().await?, newest);
    }
    let mut distinct = versions.clone();
    distinct.dedup();
    assert_eq!(distinct, versions, "each migration is recorded once");
    // Connecting again later changes nothing.
    PostgresStore::connect(&url).await?;
    let tables: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .await?
        .get(0);
    assert!(tables >= 30, "{tables} tables");
    Ok(())
}

#[tokio::test]
async fn a_bad_store_url_says_what_is_wrong_without_the_password() -> anyhow::Result<()> {
    let err = PostgresStore::connect("postgres://helm:hunter2@127.0.0.1:notaport/helm")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("not a PostgreSQL connection URL"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let err = PostgresStore::connect("postgres://helm@127.0.0.1:9/helm")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("connecting to PostgreSQL"), "{err}");
    Ok(())
}

#[tokio::test]
async fn the_database_refuses_what_the_product_forbids() -> anyhow::Result<()> {
    let url = fresh_database().await?;
    PostgresStore::connect(&url).await?;
    let db = connect(&url).await?;
    db.batch_execute(
        "INSERT INTO workspaces (id, name, created) VALUES (1, 'acme', 0);
         INSERT INTO users (id, workspace_id, name, display_name, role, created)
             VALUES (1, 1, 'ada', 'Ada', 'captain', 0);
         INSERT INTO channels (id, workspace_id, name, purpose, kind, status, created_by,
                               created, status_changed)
             VALUES (1, 1, 'main', 'home', 'home', 'active', 1, 0, 0),
                    (2, 1, 'launch', 'ship it', 'agent', 'active', 1, 0, 0);
         INSERT INTO agents (id, workspace_id, kind, name, display_name, status, created)
             VALUES (1, 1, 'skipper', 'skipper', 'Skipper', 'ready', 0),
                    (2, 1, 'channel', 'launch-agent', 'Launch', 'ready', 0),
                    (3, 1, 'channel', 'spare', 'Spare', 'ready', 0);
         INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES (2, 2, 0);",
    )
    .await?;

    let unique = "duplicate key value violates unique constraint";
    let cases = [
        (
            "INSERT INTO users (workspace_id, name, display_name, role, created)
                 VALUES (1, 'grace', 'Grace', 'captain', 0)",
            unique,
        ),
        (
            "INSERT INTO agents (workspace_id, kind, name, display_name, status, created)
                 VALUES (1, 'skipper', 'skipper2', 'Skipper', 'ready', 0)",
            unique,
        ),
        (
            "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES (3, 2, 0)",
            unique,
        ),
        (
            "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES (1, 1, 0)",
            "only a channel agent can be bound",
        ),
        (
            "INSERT INTO channels (workspace_id, name, purpose, kind, status, created_by,
                                   created, status_changed)
                 VALUES (1, 'launch', 'again', 'agent', 'active', 1, 0, 0)",
            unique,
        ),
        (
            "UPDATE channels SET status = 'archived' WHERE id = 1",
            "cannot be archived",
        ),
        ("DELETE FROM channels WHERE id = 1", "cannot be deleted"),
        (
            "DELETE FROM agents WHERE id = 1",
            "Skipper cannot be removed",
        ),
        (
            "UPDATE agents SET status = 'paused' WHERE id = 1",
            "Skipper cannot be paused",
        ),
        (
            "UPDATE agent_channels SET bound_at = 1",
            "binding cannot change",
        ),
        (
            "INSERT INTO agent_profiles (agent_id, purpose, workspace_ref, memory_namespace,
                                         capability_policy, updated)
                 VALUES (2, 'p', 'w', 'm', '{not json', 0)",
            "violates check constraint",
        ),
    ];
    for (sql, expected) in cases {
        let message = refused(&db, sql).await;
        assert!(message.contains(expected), "{sql}\n→ {message}");
    }

    // An archived channel keeps its name; a deleted one frees it.
    db.batch_execute("UPDATE channels SET status = 'archived' WHERE id = 2")
        .await?;
    let message = refused(
        &db,
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, created_by,
                               created, status_changed)
             VALUES (1, 'launch', 'again', 'agent', 'active', 1, 0, 0)",
    )
    .await;
    assert!(message.contains(unique), "{message}");
    db.batch_execute("DELETE FROM channels WHERE id = 2")
        .await?;
    db.batch_execute(
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, created_by,
                               created, status_changed)
             VALUES (1, 'launch', 'again', 'agent', 'active', 1, 0, 0)",
    )
    .await?;

    // The audit log is append-only.
    db.batch_execute(
        "INSERT INTO audit_log (at, action, input_summary, outcome, prev_hash, hash)
             VALUES (0, 'exec', 'ls', 'ok', '', 'h1')",
    )
    .await?;
    let message = refused(&db, "UPDATE audit_log SET outcome = 'denied'").await;
    assert!(message.contains("append-only"), "{message}");
    let message = refused(&db, "DELETE FROM audit_log").await;
    assert!(message.contains("append-only"), "{message}");
    Ok(())
}

#[tokio::test]
async fn event_numbers_follow_commit_order() -> anyhow::Result<()> {
    let url = fresh_database().await?;
    PostgresStore::connect(&url).await?;
    let mut first = connect(&url).await?;
    let mut second = connect(&url).await?;
    let take = "UPDATE event_counter SET last = last + 1 RETURNING last";

    // The first writer takes a number and holds its transaction open.
    let a = first.transaction().await.map_err(pg)?;
    let a_seq: i64 = a.query_one(take, &[]).await.map_err(pg)?.get(0);

    // The second writer's turn for a number waits until the first commits…
    let waiting = tokio::spawn(async move {
        let b = second.transaction().await.map_err(pg)?;
        let seq: i64 = b.query_one(take, &[]).await.map_err(pg)?.get(0);
        b.execute(
            "INSERT INTO events (seq, type, payload, created) VALUES ($1, 'b', '{}', 0)",
            &[&seq],
        )
        .await
        .map_err(pg)?;
        b.commit().await.map_err(pg)?;
        anyhow::Ok(seq)
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "the second writer must wait for the counter row"
    );
    a.execute(
        "INSERT INTO events (seq, type, payload, created) VALUES ($1, 'a', '{}', 0)",
        &[&a_seq],
    )
    .await
    .map_err(pg)?;
    a.commit().await.map_err(pg)?;

    // …so it gets the next number, and a reader that saw it saw the first too.
    let b_seq = waiting.await??;
    assert_eq!(b_seq, a_seq + 1);
    let reader = connect(&url).await?;
    let seqs: Vec<i64> = reader
        .query("SELECT seq FROM events ORDER BY seq", &[])
        .await
        .map_err(pg)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(seqs, [a_seq, b_seq]);
    Ok(())
}

/// Writes one event as a store on any node does: a number from the counter
/// row, the row, and the doorbell, in one transaction.
async fn write_event(client: &mut Client, name: &str) -> anyhow::Result<u64> {
    let tx = client.transaction().await.map_err(pg)?;
    let seq: i64 = tx
        .query_one(
            "UPDATE event_counter SET last = last + 1 WHERE id = 1 RETURNING last",
            &[],
        )
        .await
        .map_err(pg)?
        .get(0);
    let payload = serde_json::json!({"type": "channel.deleted", "id": 7, "name": name});
    tx.execute(
        "INSERT INTO events (seq, channel_id, type, payload, created)
         VALUES ($1, 7, 'channel.deleted', $2, 0)",
        &[&seq, &payload.to_string()],
    )
    .await
    .map_err(pg)?;
    tx.execute("SELECT pg_notify('helm_events', '')", &[])
        .await
        .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(seq as u64)
}

async fn next_name(
    live: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<helm_core::events::Event>>,
) -> anyhow::Result<(u64, String)> {
    let event = tokio::time::timeout(std::time::Duration::from_secs(10), live.recv()).await??;
    match &event.body {
        helm_core::events::EventBody::ChannelDeleted { name, .. } => Ok((event.seq, name.clone())),
        other => anyhow::bail!("unexpected event {other:?}"),
    }
}

#[tokio::test]
async fn a_node_hears_what_another_committed_and_catches_up_after_losing_its_listener()
-> anyhow::Result<()> {
    let url = fresh_database().await?;
    let mut writer = connect(&url).await?;
    // An event from before the node started is not live; the log has it.
    PostgresStore::connect(&url).await?;
    let before = write_event(&mut writer, "before").await?;
    let node = PostgresStore::connect(&url).await?;
    let mut live = node.subscribe();
    assert_eq!(node.events_after(0, 10).await?.len(), 1);

    // Another node's commit reaches this node live, in order.
    let one = write_event(&mut writer, "one").await?;
    let two = write_event(&mut writer, "two").await?;
    assert_eq!(next_name(&mut live).await?, (one, "one".to_string()));
    assert_eq!(next_name(&mut live).await?, (two, "two".to_string()));
    assert!(before < one);

    // The node's listener connection is cut; what commits meanwhile (its
    // doorbell rung to nobody) still arrives, once, after it reconnects.
    let admin = connect(&url).await?;
    let cut: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE application_name = 'helm-event-listener'",
            &[],
        )
        .await
        .map_err(pg)?
        .get(0);
    assert!(cut >= 1, "the listener was found and cut");
    let three = write_event(&mut writer, "three").await?;
    assert_eq!(next_name(&mut live).await?, (three, "three".to_string()));
    let four = write_event(&mut writer, "four").await?;
    assert_eq!(next_name(&mut live).await?, (four, "four".to_string()));
    assert!(
        live.try_recv().is_err(),
        "nothing is delivered twice after a reconnect"
    );
    Ok(())
}

fn record(node: &str, i: usize) -> AuditRecord {
    AuditRecord {
        channel_id: None,
        thread_id: None,
        agent: Some(format!("{node}-agent")),
        asker: Some("ada".into()),
        action: "tool:exec".into(),
        input_summary: format!("{node} step {i}"),
        outcome: "ok".into(),
    }
}

#[tokio::test]
async fn two_nodes_appending_at_once_keep_one_audit_chain_and_tampering_shows() -> anyhow::Result<()>
{
    let url = fresh_database().await?;
    let a = PostgresStore::connect(&url).await?;
    let b = PostgresStore::connect(&url).await?;
    let write = |store: PostgresStore, node: &'static str| async move {
        for i in 0..40 {
            store.audit(record(node, i)).await?;
        }
        anyhow::Ok(())
    };
    let (wa, wb) = tokio::join!(write(a.clone(), "a"), write(b.clone(), "b"));
    wa?;
    wb?;
    let checked = helm_core::audit::verify(&a).await?;
    assert!(checked.intact(), "{checked:?}");
    assert_eq!(checked.rows, 80);
    assert_eq!(b.audit_head().await?, 80);
    let newest = b.audit_log(None, 5).await?;
    assert_eq!(newest.len(), 5);
    assert!(newest.windows(2).all(|w| w[0].id < w[1].id), "oldest first");
    assert_eq!(newest[4].id, 80);

    // A rolled-back append leaves no gap that would look like a cut.
    let mut raw = connect(&url).await?;
    let tx = raw.transaction().await.map_err(pg)?;
    tx.execute("UPDATE audit_counter SET last = last + 1 WHERE id = 1", &[])
        .await
        .map_err(pg)?;
    tx.rollback().await.map_err(pg)?;
    assert!(helm_core::audit::verify(&a).await?.intact());

    // Edits and cuts made past the triggers are found.
    raw.batch_execute(
        "ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_delete;
         DELETE FROM audit_log WHERE id = 80;",
    )
    .await
    .map_err(pg)?;
    assert_eq!(helm_core::audit::verify(&a).await?.first_bad_row, Some(80));
    raw.batch_execute(
        "ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update;
         UPDATE audit_log SET outcome = 'nothing happened' WHERE id = 12;",
    )
    .await
    .map_err(pg)?;
    let edited = helm_core::audit::verify(&a).await?;
    assert_eq!(edited.first_bad_row, Some(12), "{edited:?}");
    Ok(())
}

/// A workspace with its Captain (not yet set up) and one channel, written
/// as rows (bootstrapping is not ported to PostgreSQL yet).
async fn seeded(url: &str) -> anyhow::Result<Client> {
    let db = connect(url).await?;
    db.batch_execute(
        "INSERT INTO workspaces (name, created) VALUES ('acme', 0);
         INSERT INTO users (workspace_id, name, display_name, role, created)
             VALUES (1, 'captain', 'Captain', 'captain', 0);
         INSERT INTO channels (workspace_id, name, purpose, kind, status, created_by,
                               created, status_changed)
             VALUES (1, 'launch', 'ship it', 'agent', 'active', 1, 0, 0);",
    )
    .await
    .map_err(pg)?;
    Ok(db)
}

#[tokio::test]
async fn sign_in_records_work_on_postgres() -> anyhow::Result<()> {
    use helm_core::error::Error;
    use helm_core::model::{ChannelId, Role, UserId};
    use helm_core::store::{
        AuthStore, CaptainSetup, InviteAcceptance, NewApiToken, NewInvite, NewOtKey,
    };
    let url = fresh_database().await?;
    let store = PostgresStore::connect(&url).await?;
    seeded(&url).await?;
    let later = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);

    // First-run setup happens once.
    assert!(!store.setup_done().await?);
    let setup = CaptainSetup {
        name: "ada".into(),
        display_name: "Ada".into(),
        password_hash: "argon2-hash".into(),
    };
    let ada = store.complete_setup(setup.clone()).await?;
    assert_eq!((ada.name.as_str(), ada.role), ("ada", Role::Captain));
    assert!(store.setup_done().await?);
    assert!(matches!(
        store.complete_setup(setup).await,
        Err(Error::Conflict(_))
    ));
    let (user, hash) = store.user_credentials("ada").await?.context("ada")?;
    assert_eq!((user.id, hash.as_deref()), (ada.id, Some("argon2-hash")));
    assert!(store.user_credentials("nobody").await?.is_none());

    // Sessions: found while live, gone when ended.
    let session = store.insert_session(ada.id, "s-hash".into(), later).await?;
    let (found, who) = store.session_user("s-hash").await?.context("session")?;
    assert_eq!((found.id, who.id), (session.id, ada.id));
    assert!(store.delete_session("s-hash").await?);
    assert!(store.session_user("s-hash").await?.is_none());
    let past = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1);
    store.insert_session(ada.id, "old".into(), past).await?;
    assert!(
        store.session_user("old").await?.is_none(),
        "an expired session is not live"
    );

    // API tokens: listed, found, revoked once, another person's is missing.
    let token = store
        .insert_api_token(NewApiToken {
            user_id: ada.id,
            name: "ci".into(),
            secret_hash: "t-hash".into(),
            prefix: "helm_ab".into(),
            expires: None,
        })
        .await?;
    assert_eq!(store.api_tokens(ada.id).await?.len(), 1);
    let (seen, owner) = store.api_token_user("t-hash").await?.context("token")?;
    assert_eq!((seen.id, owner.id), (token.id, ada.id));
    assert!(
        store.api_tokens(ada.id).await?[0].last_used.is_some(),
        "a use is recorded"
    );
    assert!(matches!(
        store.revoke_api_token(UserId(999), token.id).await,
        Err(Error::NotFound { .. })
    ));
    store.revoke_api_token(ada.id, token.id).await?;
    assert!(matches!(
        store.revoke_api_token(ada.id, token.id).await,
        Err(Error::Conflict(_))
    ));
    assert!(store.api_token_user("t-hash").await?.is_none());

    // Invitations: two people racing for one, one wins.
    let invite = store
        .insert_invite(NewInvite {
            secret_hash: "i-hash".into(),
            role: Role::Member,
            created_by: ada.id,
            expires: later,
        })
        .await?;
    let accept = |name: &str| InviteAcceptance {
        secret_hash: "i-hash".into(),
        name: name.into(),
        display_name: name.into(),
        password_hash: "h".into(),
    };
    let (grace, linus) = tokio::join!(
        store.accept_invite(accept("grace")),
        store.accept_invite(accept("linus"))
    );
    let won: Vec<_> = [grace, linus].into_iter().filter_map(|r| r.ok()).collect();
    assert_eq!(won.len(), 1, "one acceptance wins");
    assert_eq!(won[0].role, Role::Member);
    assert!(matches!(
        store.accept_invite(accept("mira")).await,
        Err(Error::Unauthenticated(_))
    ));
    assert!(matches!(
        store.revoke_invite(invite.id).await,
        Err(Error::Conflict(_))
    ));
    assert_eq!(store.invites().await?[0].accepted_by, Some(won[0].id));

    // Open Terminal keys: one live key per channel; rotating replaces it.
    let key = |hash: &str| NewOtKey {
        channel_id: ChannelId(1),
        secret_hash: hash.into(),
        prefix: "ot_".into(),
        created_by: ada.id,
    };
    let first = store.insert_ot_key(key("k1"), false).await?;
    let again = store.insert_ot_key(key("k2"), false).await;
    assert!(
        matches!(&again, Err(Error::Conflict(m)) if m.contains("rotate")),
        "{again:?}"
    );
    let second = store.insert_ot_key(key("k2"), true).await?;
    assert!(store.ot_key_by_hash("k1").await?.is_none());
    assert_eq!(
        store.ot_key_by_hash("k2").await?.map(|k| k.id),
        Some(second.id)
    );
    assert_ne!(first.id, second.id);
    store.revoke_ot_key(ChannelId(1)).await?;
    assert!(store.ot_key(ChannelId(1)).await?.is_none());
    assert!(matches!(
        store.revoke_ot_key(ChannelId(1)).await,
        Err(Error::NotFound { .. })
    ));
    Ok(())
}
