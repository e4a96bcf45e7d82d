//! The audit log's hash chain: each row is hashed together with the previous
//! row's hash, so editing or removing any row breaks the chain from there on.
//!
//! The chain is defined here, above the store: a store keeps the rows and
//! hands them back in order; [`verify`] recomputes every link.

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::model::{AuditEntry, ChannelId, ThreadId};
use crate::store::{AuditVerification, EventStore};

/// The hash before the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// How many rows [`verify`] reads from the store at a time.
const PAGE: usize = 1000;

/// What one audit row says: the fields its hash covers besides the link.
#[derive(Debug, Clone, Copy)]
pub struct AuditFields<'a> {
    /// The channel it concerns.
    pub channel_id: Option<ChannelId>,
    /// The thread.
    pub thread_id: Option<ThreadId>,
    /// The agent that acted (handle).
    pub agent: Option<&'a str>,
    /// The person who asked or acted.
    pub asker: Option<&'a str>,
    /// What was done.
    pub action: &'a str,
    /// A short account of the input.
    pub input_summary: &'a str,
    /// How it ended.
    pub outcome: &'a str,
}

impl<'a> AuditFields<'a> {
    /// The fields of a stored row.
    pub fn of(entry: &'a AuditEntry) -> Self {
        AuditFields {
            channel_id: entry.channel_id,
            thread_id: entry.thread_id,
            agent: entry.agent.as_deref(),
            asker: entry.asker.as_deref(),
            action: &entry.action,
            input_summary: &entry.input_summary,
            outcome: &entry.outcome,
        }
    }
}

/// The hash of a row's fields after `prev`, at `at_ms` (Unix milliseconds):
/// SHA-256 over a JSON array, so every field is delimited unambiguously.
pub fn row_hash(prev: &str, at_ms: i64, fields: &AuditFields<'_>) -> String {
    let canonical = serde_json::json!([
        prev,
        at_ms,
        fields.channel_id.map(|c| c.get()),
        fields.thread_id.map(|t| t.get()),
        fields.agent,
        fields.asker,
        fields.action,
        fields.input_summary,
        fields.outcome,
    ])
    .to_string();
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks the chain row by row, oldest first.
#[derive(Debug)]
pub struct ChainCheck {
    prev: String,
    rows: u64,
    last_id: i64,
}

impl Default for ChainCheck {
    fn default() -> Self {
        ChainCheck {
            prev: GENESIS.to_string(),
            rows: 0,
            last_id: 0,
        }
    }
}

impl ChainCheck {
    /// Checks the next row; the verdict on the first bad one.
    pub fn push(&mut self, e: &AuditEntry) -> Option<AuditVerification> {
        self.rows += 1;
        let bad = |problem: String| {
            Some(AuditVerification {
                rows: self.rows,
                first_bad_row: Some(e.id),
                problem: Some(problem),
            })
        };
        if e.id != self.last_id + 1 && self.last_id != 0 {
            return bad(format!("row {} is missing", self.last_id + 1));
        }
        if e.prev_hash != self.prev {
            return bad("its link to the previous row does not match".into());
        }
        if row_hash(&e.prev_hash, e.at.as_millisecond(), &AuditFields::of(e)) != e.hash {
            return bad("its contents do not match its hash (it was edited)".into());
        }
        self.last_id = e.id;
        self.prev = e.hash.clone();
        None
    }

    /// The verdict once every row was pushed intact, given the highest row
    /// id the store ever gave out: rows removed from the end leave an intact
    /// chain behind, and only that id still remembers them.
    pub fn finish(self, head: i64) -> AuditVerification {
        if head > self.last_id {
            return AuditVerification {
                rows: self.rows,
                first_bad_row: Some(self.last_id + 1),
                problem: Some(format!(
                    "rows {} to {head} are missing from the end of the log",
                    self.last_id + 1
                )),
            };
        }
        AuditVerification {
            rows: self.rows,
            first_bad_row: None,
            problem: None,
        }
    }
}

/// Checks the store's whole audit log. The head is read first and rows after
/// it are left out, so rows appended while checking are not mistaken for
/// rows removed from the end.
pub async fn verify(store: &(impl EventStore + ?Sized)) -> Result<AuditVerification> {
    let head = store.audit_head().await?;
    let mut check = ChainCheck::default();
    let mut after = 0;
    loop {
        let page = store.audit_chain(after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        for entry in page.iter().take_while(|e| e.id <= head) {
            if let Some(bad) = check.push(entry) {
                return Ok(bad);
            }
        }
        if after >= head || page.len() < PAGE {
            break;
        }
    }
    Ok(check.finish(head))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64, prev: &str, outcome: &str) -> AuditEntry {
        let mut e = AuditEntry {
            id,
            at: jiff::Timestamp::from_millisecond(1_700_000_000_000 + id).unwrap_or_default(),
            channel_id: None,
            thread_id: None,
            agent: Some("skipper".into()),
            asker: None,
            action: "test".into(),
            input_summary: format!("row {id}"),
            outcome: outcome.into(),
            prev_hash: prev.to_string(),
            hash: String::new(),
        };
        e.hash = row_hash(prev, e.at.as_millisecond(), &AuditFields::of(&e));
        e
    }

    fn chain(n: i64) -> Vec<AuditEntry> {
        let mut rows: Vec<AuditEntry> = Vec::new();
        for id in 1..=n {
            let prev = rows.last().map_or(GENESIS.to_string(), |e| e.hash.clone());
            rows.push(entry(id, &prev, "ok"));
        }
        rows
    }

    fn check(rows: &[AuditEntry], head: i64) -> AuditVerification {
        let mut check = ChainCheck::default();
        for e in rows {
            if let Some(bad) = check.push(e) {
                return bad;
            }
        }
        check.finish(head)
    }

    #[test]
    fn an_intact_chain_verifies() {
        let v = check(&chain(4), 4);
        assert!(v.intact(), "{v:?}");
        assert_eq!(v.rows, 4);
    }

    #[test]
    fn an_edit_a_gap_and_a_cut_end_are_each_caught() {
        let mut edited = chain(4);
        edited[2].outcome = "nothing happened".into();
        let v = check(&edited, 4);
        assert_eq!(v.first_bad_row, Some(3));
        assert!(v.problem.unwrap_or_default().contains("edited"));

        let mut gap = chain(4);
        gap.remove(1);
        assert_eq!(check(&gap, 4).first_bad_row, Some(3));

        let cut = chain(4);
        let v = check(&cut[..3], 4);
        assert_eq!(v.first_bad_row, Some(4));
        assert!(v.problem.unwrap_or_default().contains("end of the log"));
    }
}
