//! Statements kept prepared on each pooled connection.
//!
//! Why: tokio-postgres runs SQL given as text by preparing an unnamed
//! statement first, one round trip to the server, and only then binding
//! and running it, a second. A post is about fifteen statements, so half
//! its time went on preparing them again (a plain post 5.4 ms on loopback).
//! [`Db`] prepares each SQL text once per connection (deadpool's statement
//! cache) and runs the prepared statement after that: one round trip.
//!
//! The store's SQL is a fixed set of texts (some assembled from constant
//! parts), so each connection's cache stays that size.

use std::future::Future;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Error, Row};

/// What the store's SQL runs on: a pooled connection or a transaction on
/// one, with every statement prepared once per connection. The methods are
/// tokio-postgres' own, taking the SQL as text.
pub(crate) trait Db: Sync {
    /// Like `tokio_postgres::Client::execute`.
    fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<u64, Error>> + Send;

    /// Like `tokio_postgres::Client::query`.
    fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send;

    /// Like `tokio_postgres::Client::query_one`.
    fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Row, Error>> + Send;

    /// Like `tokio_postgres::Client::query_opt`.
    fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Option<Row>, Error>> + Send;
}

impl<C: deadpool_postgres::GenericClient> Db for C {
    async fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        let statement = self.prepare_cached(sql).await?;
        deadpool_postgres::GenericClient::execute(self, &statement, params).await
    }

    async fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
        let statement = self.prepare_cached(sql).await?;
        deadpool_postgres::GenericClient::query(self, &statement, params).await
    }

    async fn query_one(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, Error> {
        let statement = self.prepare_cached(sql).await?;
        deadpool_postgres::GenericClient::query_one(self, &statement, params).await
    }

    async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        let statement = self.prepare_cached(sql).await?;
        deadpool_postgres::GenericClient::query_opt(self, &statement, params).await
    }
}
