//! Artifacts: the files and outputs threads produce.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::codec::{ms, now, parsed, ts};
use crate::error::Result;
use crate::events::EventBody;
use crate::model::{Artifact, ArtifactKind, ChannelId, ThreadId};

const COLUMNS: &str = "id, channel_id, thread_id, path, kind, created_by, created";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Artifact> {
    Ok(Artifact {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        thread_id: r.get(2)?,
        path: r.get(3)?,
        kind: parsed(r, 4)?,
        created_by: r.get(5)?,
        created: ts(r, 6)?,
    })
}

/// Records artifacts: new paths are added (with their thread and author),
/// known ones only have their time of change updated, unless `touch` is
/// false (a rescan only adds what is new). Returns the artifacts added.
pub(super) fn record(
    tx: &mut Tx<'_>,
    channel: ChannelId,
    thread: Option<ThreadId>,
    kind: ArtifactKind,
    created_by: &str,
    paths: &[String],
    touch: bool,
) -> Result<Vec<Artifact>> {
    let at = ms(now());
    let mut added = Vec::new();
    for path in paths {
        let existing: Option<i64> = tx
            .conn()
            .prepare_cached("SELECT id FROM artifacts WHERE channel_id = ?1 AND path = ?2")?
            .query_row(params![channel, path], |r| r.get(0))
            .optional()?;
        match existing {
            Some(id) if touch => {
                tx.conn().execute(
                    "UPDATE artifacts SET updated = ?2 WHERE id = ?1",
                    params![id, at],
                )?;
            }
            Some(_) => {}
            None => {
                tx.conn()
                    .prepare_cached(
                        "INSERT INTO artifacts (channel_id, thread_id, path, kind, created_by, created, \
                         updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                    )?
                    .execute(params![channel, thread, path, kind.as_str(), created_by, at])?;
                let artifact = tx
                    .conn()
                    .prepare_cached(&format!("SELECT {COLUMNS} FROM artifacts WHERE id = ?1"))?
                    .query_row([tx.conn().last_insert_rowid()], from_row)?;
                tx.emit(
                    Some(channel),
                    EventBody::ArtifactRecorded {
                        artifact: artifact.clone(),
                    },
                )?;
                added.push(artifact);
            }
        }
    }
    Ok(added)
}

/// A channel's artifacts (or one thread's), oldest first.
pub(super) fn list(
    conn: &Connection,
    channel: ChannelId,
    thread: Option<ThreadId>,
) -> Result<Vec<Artifact>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM artifacts WHERE channel_id = ?1 AND (?2 IS NULL OR thread_id = ?2) \
         ORDER BY id"
    ))?;
    let rows = stmt
        .query_map(params![channel, thread], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
