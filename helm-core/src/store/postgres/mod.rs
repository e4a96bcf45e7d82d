//! `PostgresStore`: Helm's state in PostgreSQL, for several helm-http nodes
//! sharing one database (issue 17, stage 2).
//!
//! It implements every area of [`crate::store::Store`], with the same
//! semantics as the SQLite store (the conformance suite in `helm-tests`
//! runs both): the schema (the same tables and database-enforced
//! invariants) and its migrations, applied once however many nodes start at
//! the same time; the event log, numbered in commit order, with each node's
//! live feed ([`events`]); and the areas, each in its own module. Where
//! SQLite relies on its single writer, these use one conditional statement,
//! a row lock or a unique index, so several nodes may write at once:
//! claiming a turn, settling a call for Skipper, deciding an approval and
//! bootstrapping happen once. Running turns are leased to the node that
//! claimed them, with a fencing token (`turns::lease`).
//!
//! Requires PostgreSQL 15 or newer (`UNIQUE NULLS NOT DISTINCT`).

/// Runs `$body` (a future using `$tx`, the transaction) in one write
/// transaction on a pooled connection of `$store`: committed when the body
/// succeeds; an error drops the transaction, which rolls it back. The
/// body's events are appended in the same transaction, as SQLite's are.
macro_rules! in_tx {
    ($store:expr, $what:literal, |$tx:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        let transaction =
            client
                .transaction()
                .await
                .map_err($crate::store::postgres::errors::failed(concat!(
                    "starting ",
                    $what
                )))?;
        let $tx = &transaction;
        let out = $body.await?;
        transaction
            .commit()
            .await
            .map_err($crate::store::postgres::errors::failed(concat!(
                "committing ",
                $what
            )))?;
        ::std::result::Result::<_, $crate::error::Error>::Ok(out)
    }};
}

mod audit;
mod auth;
mod authority;
mod channels;
mod codec;
mod errors;
mod events;
mod impls;
mod memory;
mod migrations;
mod nodes;
mod prepared;
mod threads;
mod turns;
mod workspace;

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::broadcast;
use tokio_postgres::NoTls;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::error::{Error, Result};
use crate::events::Event;
use errors::failed;

/// How many live events a slow subscriber may fall behind before it lags
/// (and resumes from the durable log).
const LIVE_CAPACITY: usize = 4096;

/// Connections per node: a node's writes are short transactions, and a
/// listener for event doorbells takes one more of its own.
const POOL_SIZE: usize = 16;

/// Helm's state in a PostgreSQL database.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    live: broadcast::Sender<Arc<Event>>,
    /// How long a claim or a renewal holds a running turn, in milliseconds.
    lease_ms: i64,
    /// The fencing token of each running turn this store claimed: its
    /// writes of that turn name it, so they fail once another node has
    /// taken the turn over.
    fences: Arc<std::sync::Mutex<std::collections::HashMap<crate::model::TurnId, i64>>>,
    /// Stops this node's event feed when the last clone of the store goes.
    _feed: Arc<DropGuard>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`)
    /// and brings its schema up to date. The database must exist; Helm's
    /// tables are created in it on first connect. Running turns are leased
    /// for 30 s (see [`PostgresStore::connect_with`]).
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with(
            url,
            std::time::Duration::from_millis(turns::lease::LEASE_MS as u64),
        )
        .await
    }

    /// Like [`PostgresStore::connect`], leasing the turns this node runs for
    /// `turn_lease` at a time: if the node dies, its running turns end
    /// interrupted, and those queued behind them start elsewhere, once that
    /// time has passed since its last renewal.
    pub async fn connect_with(url: &str, turn_lease: std::time::Duration) -> Result<Self> {
        let config: tokio_postgres::Config = url.parse().map_err(|e| {
            Error::invalid(
                "store URL",
                format!("{} is not a PostgreSQL connection URL: {e}", redacted(url)),
            )
        })?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|e| Error::store("building the PostgreSQL pool", e))?;
        let mut client = pool
            .get()
            .await
            .map_err(|e| Error::store("connecting to PostgreSQL", e))?;
        migrations::apply(&mut client).await?;
        // The feed starts after what is already committed: a subscriber
        // catches up on older events with `events_after` (subscribe first).
        let last = events::last(&**client).await?;
        drop(client);
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        let stop = CancellationToken::new();
        tokio::spawn(events::feed(config, last, live.clone(), stop.clone()));
        Ok(PostgresStore {
            pool,
            live,
            lease_ms: i64::try_from(turn_lease.as_millis()).unwrap_or(i64::MAX),
            fences: Arc::default(),
            _feed: Arc::new(stop.drop_guard()),
        })
    }

    /// This process's name as the owner of the turns it runs:
    /// `HOST:PID:SALT`.
    pub fn node() -> &'static str {
        turns::lease::node()
    }

    /// The process id in a lease owner's name (see [`PostgresStore::node`]).
    pub fn node_pid(owner: &str) -> Option<u32> {
        let mut parts = owner.rsplitn(3, ':');
        parts.next()?;
        parts.next()?.parse().ok()
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Client> {
        self.pool
            .get()
            .await
            .map_err(|e| Error::store("connecting to PostgreSQL", e))
    }

    /// The schema version the database is at.
    pub async fn schema_version(&self) -> Result<i32> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT coalesce(max(version), 0) FROM helm_migrations", &[])
            .await
            .map_err(failed("reading the schema version"))?;
        Ok(row.get(0))
    }
}

/// `url` without its password, for error messages.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_lease_owner_names_its_process() {
        use super::PostgresStore;
        let me = PostgresStore::node();
        assert_eq!(PostgresStore::node_pid(me), Some(std::process::id()));
        assert_eq!(PostgresStore::node_pid("db:host:4242:0badcafe"), Some(4242));
        assert_eq!(PostgresStore::node_pid("nonsense"), None);
    }

    #[test]
    fn a_url_in_an_error_has_no_password() {
        assert_eq!(
            redacted("postgres://helm:s3cret@db:5432/helm"),
            "postgres://helm@db:5432/helm"
        );
        assert_eq!(redacted("postgres://db/helm"), "postgres://db/helm");
    }
}
