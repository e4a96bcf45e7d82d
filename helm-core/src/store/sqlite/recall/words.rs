//! The word index: one FTS5 table, `recall`, for every channel, ranked per
//! channel.
//!
//! Each row is a message or memory record (`body`, and `prev`: the previous
//! message of its thread, which carries the question a reply answers). Its
//! `chan` column holds its scope tokens: `c<id>` for its channel, and `w`
//! as well for a record shared with the workspace. `recall_stats` keeps each
//! scope's row count and token count, so BM25 is computed with the
//! channel's own statistics, exactly as a table of its own would (a
//! workspace-wide ranking lost recall), while a new channel changes no
//! schema: a schema change made every pooled connection re-read the whole
//! schema, which made each channel's first message several times slower.

use rusqlite::{Connection, OptionalExtension, params};

use super::fts5;
use crate::error::Result;
use crate::memory::recall::ItemKey;
use crate::model::ChannelId;

/// The scope token of records shared with the whole workspace.
const WORKSPACE: &str = "w";

/// BM25's term-frequency saturation and length normalisation, FTS5's values.
const K1: f64 = 1.2;
const B: f64 = 0.75;

fn scope(channel: ChannelId) -> String {
    format!("c{}", channel.get())
}

/// Makes `helm_row` callable on `conn`; every connection of the store gets it.
pub(in crate::store::sqlite) fn prepare(conn: &Connection) -> Result<()> {
    fts5::register(conn)
}

/// Adds an item to its channel's words (and, when `shared`, to the words
/// every channel's recall looks at).
pub(super) fn insert(
    conn: &Connection,
    channel: ChannelId,
    key: ItemKey,
    body: &str,
    prev: &str,
    shared: bool,
) -> Result<()> {
    let own = scope(channel);
    let scopes = if shared {
        format!("{own} {WORKSPACE}")
    } else {
        own.clone()
    };
    conn.prepare_cached("INSERT INTO recall (rowid, chan, body, prev) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![key.0, scopes, body, prev])?;
    let tokens = text_tokens(conn, key)?;
    count(conn, &own, 1, tokens)?;
    if shared {
        count(conn, WORKSPACE, 1, tokens)?;
    }
    Ok(())
}

/// How many tokens FTS5 counted in a row's text columns, read from the
/// table's `recall_docsize` (one varint per column, `chan` first): a rowid
/// lookup, where asking `helm_row` would run a full-text query on every
/// insert. The store's tests check the sum against `helm_row`'s.
fn text_tokens(conn: &Connection, key: ItemKey) -> Result<i64> {
    let sizes: Vec<u8> = conn
        .prepare_cached("SELECT sz FROM recall_docsize WHERE id = ?1")?
        .query_row([key.0], |r| r.get(0))?;
    Ok(varints(&sizes).skip(1).take(2).sum())
}

/// SQLite's varints (big-endian groups of seven bits, the high bit set on
/// all but the last byte), as FTS5 writes its sizes.
fn varints(bytes: &[u8]) -> impl Iterator<Item = i64> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let mut value: i64 = 0;
        for (i, b) in bytes.get(at..)?.iter().enumerate() {
            if i == 8 {
                at += 9;
                return Some((value << 8) | i64::from(*b));
            }
            value = (value << 7) | i64::from(b & 0x7f);
            if b & 0x80 == 0 {
                at += i + 1;
                return Some(value);
            }
        }
        None
    })
}

/// Takes a deleted channel's items out of the index, and its records shared
/// with the workspace (deleted with it) out of the workspace's figures.
pub(in crate::store::sqlite) fn remove_channel(
    conn: &Connection,
    channel: ChannelId,
) -> Result<()> {
    let own = scope(channel);
    let rows = matched(conn, &scope_match(&own))?;
    let shared = matched(
        conn,
        &format!("{} AND {}", scope_match(&own), scope_match(WORKSPACE)),
    )?;
    let mut delete = conn.prepare_cached("DELETE FROM recall WHERE rowid = ?1")?;
    for (key, _) in &rows {
        delete.execute([key.0])?;
    }
    conn.prepare_cached("DELETE FROM recall_stats WHERE scope = ?1")?
        .execute([&own])?;
    if !shared.is_empty() {
        let tokens: i64 = shared.iter().map(|(_, f)| i64::from(length(f))).sum();
        count(conn, WORKSPACE, -(shared.len() as i64), -tokens)?;
    }
    Ok(())
}

/// The best matches of an FTS5 expression in one channel, and among records
/// shared with the workspace, best first, with positive BM25 scores.
pub(in crate::store::sqlite) fn lexical(
    conn: &Connection,
    channel: ChannelId,
    expression: &str,
    depth: usize,
) -> Result<Vec<(ItemKey, f64)>> {
    let mut hits = search(conn, &scope(channel), expression, depth)?;
    let shared = search(conn, WORKSPACE, expression, depth)?;
    if !shared.is_empty() {
        let own: std::collections::HashSet<ItemKey> = hits.iter().map(|(k, _)| *k).collect();
        hits.extend(shared.into_iter().filter(|(k, _)| !own.contains(k)));
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        hits.truncate(depth);
    }
    Ok(hits)
}

fn search(
    conn: &Connection,
    scope: &str,
    expression: &str,
    depth: usize,
) -> Result<Vec<(ItemKey, f64)>> {
    let Some(stats) = stats(conn, scope)? else {
        return Ok(Vec::new());
    };
    // Phrase 0 is the scope token; the question's words follow, in order.
    let query = format!("{} AND {{body prev}} : ({expression})", scope_match(scope));
    let rows = matched(conn, &query)?;
    Ok(rank(stats, &rows, depth))
}

/// A scope's figures: how many rows it has and how many text tokens.
#[derive(Debug, Clone, Copy)]
struct Stats {
    rows: i64,
    tokens: i64,
}

fn stats(conn: &Connection, scope: &str) -> Result<Option<Stats>> {
    Ok(conn
        .prepare_cached("SELECT docs, tokens FROM recall_stats WHERE scope = ?1 AND docs > 0")?
        .query_row([scope], |r| {
            Ok(Stats {
                rows: r.get(0)?,
                tokens: r.get(1)?,
            })
        })
        .optional()?)
}

fn count(conn: &Connection, scope: &str, rows: i64, tokens: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO recall_stats (scope, docs, tokens) VALUES (?1, ?2, ?3) \
         ON CONFLICT (scope) DO UPDATE SET docs = docs + excluded.docs, \
         tokens = tokens + excluded.tokens",
    )?
    .execute(params![scope, rows, tokens])?;
    Ok(())
}

fn scope_match(scope: &str) -> String {
    format!("chan : \"{scope}\"")
}

/// Every row matching `query`, with its `helm_row` figures.
fn matched(conn: &Connection, query: &str) -> Result<Vec<(ItemKey, Vec<u32>)>> {
    let mut stmt =
        conn.prepare_cached("SELECT rowid, helm_row(recall) FROM recall WHERE recall MATCH ?1")?;
    let rows = stmt
        .query_map([query], |r| {
            let blob: Vec<u8> = r.get(1)?;
            Ok((ItemKey(r.get(0)?), figures(&blob)))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// A row's length in text tokens, the first of its `helm_row` figures.
fn length(figures: &[u32]) -> u32 {
    figures.first().copied().unwrap_or(0)
}

fn figures(blob: &[u8]) -> Vec<u32> {
    blob.chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Okapi BM25 as FTS5's `bm25()` computes it, over one scope's statistics:
/// phrase 0 (the scope token) is left out, a phrase's document frequency is
/// the number of matched rows holding it (every row holding a phrase
/// matches), and a non-positive IDF counts as 1e-6. Best first; ties keep
/// the index's order (oldest first).
fn rank(stats: Stats, rows: &[(ItemKey, Vec<u32>)], depth: usize) -> Vec<(ItemKey, f64)> {
    let width = rows.iter().map(|(_, f)| f.len()).max().unwrap_or(0);
    let n = stats.rows as f64;
    let avgdl = (stats.tokens as f64 / n).max(f64::MIN_POSITIVE);
    let idf: Vec<f64> = (2..width)
        .map(|p| {
            let hits = rows.iter().filter(|(_, f)| f.get(p) > Some(&0)).count() as f64;
            let idf = ((n - hits + 0.5) / (hits + 0.5)).ln();
            if idf <= 0.0 { 1e-6 } else { idf }
        })
        .collect();
    let mut scored: Vec<(ItemKey, f64)> = rows
        .iter()
        .map(|(key, f)| {
            let dl = f64::from(length(f));
            let score = idf
                .iter()
                .enumerate()
                .map(|(i, idf)| {
                    let tf = f64::from(f.get(i + 2).copied().unwrap_or(0));
                    idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * dl / avgdl))
                })
                .sum::<f64>();
            (*key, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(depth);
    scored
}
