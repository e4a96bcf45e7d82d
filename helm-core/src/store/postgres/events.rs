//! The durable event log on PostgreSQL, and each node's live feed of it.
//!
//! A writer numbers its events from the one counter row (see the schema:
//! numbers follow commit order) and rings a doorbell, `NOTIFY helm_events`,
//! which PostgreSQL delivers when the transaction commits. The doorbell
//! carries nothing: notifications are lost while a listener is
//! disconnected, so every node reads the log itself, `seq > last`, when
//! the bell rings, every [`POLL`] regardless, and after every reconnect.
//! Local writes come back through the same path, so each node sees one
//! gap-free sequence whichever node wrote.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use jiff::Timestamp;
use tokio::sync::{broadcast, mpsc};
use tokio_postgres::{AsyncMessage, Client, GenericClient, NoTls};
use tokio_util::sync::CancellationToken;

use super::failed;
use crate::error::{Error, Result};
use crate::events::{Event, EventBody};
use crate::model::ChannelId;
use crate::store::postgres::prepared::Db;

/// The notification channel writers ring.
pub(crate) const DOORBELL: &str = "helm_events";

/// The listener connection's application name.
pub(crate) const LISTENER_NAME: &str = "helm-event-listener";

/// How often a node reads the log with no doorbell (a lost notification
/// costs at most this much delay).
const POLL: Duration = Duration::from_secs(2);

/// How long a node waits before connecting its listener again.
const RECONNECT: Duration = Duration::from_millis(500);

/// Events read per catch-up query.
const PAGE: i64 = 500;

/// Appends one event inside the caller's transaction and rings the doorbell
/// (delivered at commit). Holds the counter row until that commit.
///
/// One statement, so one round trip: a turn appends about ten events, and
/// as three statements (number, write, ring) they were a third of its
/// round trips to the database. Ringing once per event costs nothing more:
/// Postgres delivers one notification per channel and payload per
/// transaction.
pub(crate) async fn append(
    tx: &impl Db,
    channel_id: Option<ChannelId>,
    body: EventBody,
) -> Result<Event> {
    let at = super::codec::now();
    let payload = serde_json::to_string(&body)
        .map_err(|e| Error::Internal(format!("event does not serialise: {e}")))?;
    let seq: i64 = tx
        .query_one(
            "WITH numbered AS (
                 UPDATE event_counter SET last = last + 1 WHERE id = 1 RETURNING last
             ), written AS (
                 INSERT INTO events (seq, channel_id, type, payload, created)
                 SELECT last, $1::BIGINT, $2::TEXT, $3::TEXT, $4::BIGINT FROM numbered
                 RETURNING seq
             )
             SELECT seq, pg_notify($5, '') IS NULL FROM written",
            &[
                &channel_id.map(ChannelId::get),
                &body.type_name(),
                &payload,
                &at.as_millisecond(),
                &DOORBELL,
            ],
        )
        .await
        .map_err(failed("writing an event"))?
        .get(0);
    Ok(Event {
        seq: seq as u64,
        at,
        channel_id,
        body,
    })
}

/// Events with `seq > after`, oldest first, at most `limit`.
/// The newest event's `seq`, 0 for an empty log.
pub(crate) async fn head(client: &impl GenericClient) -> Result<u64> {
    let seq: i64 = client
        .query_one("SELECT coalesce(max(seq), 0) FROM events", &[])
        .await
        .map_err(failed("reading the event log's head"))?
        .get(0);
    Ok(u64::try_from(seq).unwrap_or(0))
}

pub(crate) async fn after(
    client: &impl GenericClient,
    after: u64,
    limit: i64,
) -> Result<Vec<Event>> {
    let rows = client
        .query(
            "SELECT seq, created, channel_id, payload FROM events
             WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&(after as i64), &limit],
        )
        .await
        .map_err(failed("reading the event log"))?;
    decode(&rows)
}

/// A channel's events of `types`, newest first, before `before`.
pub(crate) async fn of_channel(
    client: &impl GenericClient,
    channel: ChannelId,
    types: &[&str],
    before: Option<u64>,
    limit: i64,
) -> Result<Vec<Event>> {
    let before = before.map_or(i64::MAX, |b| b as i64);
    let rows = client
        .query(
            "SELECT seq, created, channel_id, payload FROM events
             WHERE channel_id = $1 AND type = ANY($2) AND seq < $3
             ORDER BY seq DESC LIMIT $4",
            &[&channel.get(), &types, &before, &limit],
        )
        .await
        .map_err(failed("reading a channel's events"))?;
    decode(&rows)
}

/// Events from rows of `seq, created, channel_id, payload`.
fn decode(rows: &[tokio_postgres::Row]) -> Result<Vec<Event>> {
    rows.iter()
        .map(|row| {
            let seq: i64 = row.get(0);
            let created: i64 = row.get(1);
            let payload: String = row.get(3);
            let body: EventBody = serde_json::from_str(&payload).map_err(|e| {
                Error::store(format_args!("event {seq} in the log cannot be read"), e)
            })?;
            Ok(Event {
                seq: seq as u64,
                at: Timestamp::from_millisecond(created)
                    .map_err(|e| Error::store(format_args!("event {seq}'s time"), e))?,
                channel_id: row.get::<_, Option<i64>>(2).map(ChannelId),
                body,
            })
        })
        .collect()
}

/// The newest event number committed.
pub(crate) async fn last(client: &impl GenericClient) -> Result<u64> {
    let seq: i64 = client
        .query_one("SELECT coalesce(max(seq), 0) FROM events", &[])
        .await
        .map_err(failed("reading the newest event"))?
        .get(0);
    Ok(seq as u64)
}

/// Runs a node's live feed until `stop` is cancelled (the store dropped):
/// listens for the doorbell on a connection of its own (a pooled one
/// cannot hold `LISTEN`), and publishes what the log gained on `live`.
pub(crate) async fn feed(
    config: tokio_postgres::Config,
    mut last: u64,
    live: broadcast::Sender<Arc<Event>>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            ended = listen(&config, &mut last, &live) => {
                if let Err(e) = ended {
                    tracing::warn!(error = %e, "event feed: the listener failed; reconnecting");
                }
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(RECONNECT) => {}
        }
    }
}

async fn listen(
    config: &tokio_postgres::Config,
    last: &mut u64,
    live: &broadcast::Sender<Arc<Event>>,
) -> Result<()> {
    // Named, so an operator can tell a node's listener in pg_stat_activity.
    let mut config = config.clone();
    config.application_name(LISTENER_NAME);
    let (client, mut connection) = config
        .connect(NoTls)
        .await
        .map_err(failed("connecting the event listener"))?;
    let (bell, mut rings) = mpsc::channel::<()>(1);
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => {
                    // A full bell already means "read the log".
                    let _ = bell.try_send(());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {DOORBELL}"))
        .await
        .map_err(failed("listening for events"))?;
    // Whatever committed while this node was not listening.
    catch_up(&client, last, live).await?;
    loop {
        tokio::select! {
            rang = rings.recv() => {
                // The connection ended (its driver dropped the bell).
                if rang.is_none() {
                    return Ok(());
                }
            }
            () = tokio::time::sleep(POLL) => {}
        }
        if client.is_closed() {
            driver.abort();
            return Ok(());
        }
        catch_up(&client, last, live).await?;
    }
}

async fn catch_up(
    client: &Client,
    last: &mut u64,
    live: &broadcast::Sender<Arc<Event>>,
) -> Result<()> {
    loop {
        let page = after(client, *last, PAGE).await?;
        let full = page.len() as i64 == PAGE;
        for event in page {
            *last = event.seq;
            // No receivers is fine: nobody is listening live.
            let _ = live.send(Arc::new(event));
        }
        if !full {
            return Ok(());
        }
    }
}
