//! Leases on running turns, for several nodes sharing one database (issue
//! 17, stage 3; the columns are in `migrations/004_turn_lease.sql`).
//!
//! How stage 3 uses them: a node that wins a turn ([`PostgresStore::claim_turn`],
//! the one conditional `queued -> running` statement) holds it for
//! [`LEASE_MS`] and a fencing token, the turn's claim counter, raised at
//! every claim. While it runs the turn it renews the lease
//! ([`PostgresStore::renew_turn_lease`]) well within that time, and its
//! writes of the turn name the token
//! ([`PostgresStore::append_reply_fenced`], [`PostgresStore::finish_turn_fenced`]):
//! they are accepted only while the token is current. A node that stops
//! renewing (it died, or lost the database) lets the lease lapse; another
//! node then ends or claims the turn again, which raises the token, so
//! whatever the old owner writes after waking up is refused.
//!
//! The port's own writes do this for the runtime: the store remembers the
//! token of each turn it claimed, `append_reply`/`finish_turn` pass it, and
//! `renew_turn_leases` renews the runtime's live turns every second (the
//! lease is `runtime.turn_lease_secs`, 30 s by default). A write without a
//! token (another node ending a turn it did not claim) is accepted only once
//! the turn's lease has lapsed: `orphaned_turns` is how the runtime finds
//! those.

use std::sync::OnceLock;

use jiff::Timestamp;

use super::super::codec::ms;
use super::super::codec::now;
use super::super::{PostgresStore, failed};
use crate::error::Result;
use crate::model::TurnId;
use crate::store::postgres::prepared::Db;

/// How long a claim or a renewal holds a running turn unless the node was
/// given another lease (`PostgresStore::connect_with`).
pub const LEASE_MS: i64 = 30_000;

/// This process's name as a lease owner: its host and process id, and a
/// random part so a restarted process with the same id is another owner.
pub(crate) fn node() -> &'static str {
    static NODE: OnceLock<String> = OnceLock::new();
    NODE.get_or_init(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "node".into());
        let mut salt = [0u8; 4];
        // Without randomness the pid alone still names the process.
        let _ = getrandom::fill(&mut salt);
        format!(
            "{host}:{}:{:08x}",
            std::process::id(),
            u32::from_le_bytes(salt)
        )
    })
}

/// Who holds a running turn, until when, and with which token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnLease {
    /// The node that claimed it.
    pub owner: String,
    /// When the lease lapses unless renewed.
    pub expires: Timestamp,
    /// The fencing token: the turn's claim count.
    pub token: i64,
}

impl PostgresStore {
    /// The lease of a running turn (`None` if it is not running).
    pub async fn turn_lease(&self, turn: TurnId) -> Result<Option<TurnLease>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT lease_owner, lease_expires, lease_token FROM turns
                 WHERE id = $1 AND state = 'running' AND lease_owner IS NOT NULL",
                &[&turn.get()],
            )
            .await
            .map_err(failed("reading a turn's lease"))?;
        row.map(|r| {
            Ok(TurnLease {
                owner: r.get(0),
                expires: super::super::codec::ts(&r, 1)?,
                token: r.get(2),
            })
        })
        .transpose()
    }

    /// Renews this node's lease of a running turn for another lease period;
    /// `false` if the turn ended or `token` is no longer its token (another
    /// node took it over: stop running it).
    pub async fn renew_turn_lease(&self, turn: TurnId, token: i64) -> Result<bool> {
        let client = self.client().await?;
        let renewed = client
            .execute(
                "UPDATE turns SET lease_expires = $3::BIGINT + $4::BIGINT
                 WHERE id = $1 AND state = 'running' AND lease_token = $2",
                &[&turn.get(), &token, &ms(now()), &self.lease_ms],
            )
            .await
            .map_err(failed("renewing a turn's lease"))?;
        Ok(renewed > 0)
    }
}
