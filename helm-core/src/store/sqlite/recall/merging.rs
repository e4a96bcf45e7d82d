//! Keeping the word index in few segments.
//!
//! FTS5 writes each commit's new rows as a segment of their own and merges
//! segments as they pile up: by default four on a level before they are
//! merged, so an index that grew by ordinary writes holds a dozen or more
//! segments, each a part of every common term's list of rows. A search
//! looks each term up in every segment and merges what it finds, so it
//! grows slower as segments accumulate: in a workspace of 1.1M messages,
//! the bounded word search in the 100,000-message channel took p50 5.3 ms
//! over 16 segments against 3.0 ms over one (the same rows).
//!
//! So while the store is idle (the writer calls [`merge_step`]), segments
//! are merged as soon as two share a level (`usermerge` 2, set by migration
//! 16), a few pages at a time, each step a transaction of its own that any
//! queued write goes before. FTS5's own merging while writing is unchanged,
//! so a store that is never idle merges as it did. The cost is writing the
//! index about twice as often over its life, off every request's path.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::Result;

/// Leaf pages one step writes, about: a step ends at the end of a term, so
/// one holding a term common across the workspace writes more. At this
/// size a step takes a few milliseconds in a large index.
const STEP_PAGES: i64 = 32;

/// Runs one step of merging the word index, in a transaction of its own;
/// says whether it did any work (so that more may remain).
pub(in crate::store::sqlite) fn merge_step(conn: &mut Connection) -> Result<bool> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let before = tx.total_changes();
    tx.prepare_cached("INSERT INTO recall (recall, rank) VALUES ('merge', ?1)")?
        .execute([STEP_PAGES])?;
    // FTS5's documented signal: a merge that did nothing changes fewer than
    // two rows (the command's own insert counts as one).
    let worked = tx.total_changes() - before >= 2;
    tx.commit()?;
    Ok(worked)
}
