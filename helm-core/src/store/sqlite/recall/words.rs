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

use super::{english, fts5};
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

/// Makes the index's tokenizer (`helm_english`) and `helm_row` available on
/// `conn`; every connection of the store gets them, before it migrates.
pub(in crate::store::sqlite) fn prepare(conn: &Connection) -> Result<()> {
    english::register(conn)?;
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
    let rows = matched(conn, &scope_match(&own), None, i64::MIN)?;
    let shared = matched(
        conn,
        &format!("{} AND {}", scope_match(&own), scope_match(WORKSPACE)),
        None,
        i64::MIN,
    )?;
    let mut tokens = 0;
    for key in &shared.keys {
        tokens += text_tokens(conn, *key)?;
    }
    let mut delete = conn.prepare_cached("DELETE FROM recall WHERE rowid = ?1")?;
    for key in &rows.keys {
        delete.execute([key.0])?;
    }
    conn.prepare_cached("DELETE FROM recall_stats WHERE scope = ?1")?
        .execute([&own])?;
    if !shared.keys.is_empty() {
        count(conn, WORKSPACE, -(shared.keys.len() as i64), -tokens)?;
    }
    Ok(())
}

/// The best matches of any of `terms` in one channel, and among records
/// shared with the workspace, best first, with positive BM25 scores.
///
/// `walk` bounds the rows a search walks in a scope several times larger
/// than it (`NARROW_FROM`): when the question's words are common there (a
/// name, a common verb), the search narrows to the rows holding its rarer
/// words (`narrow`) and ranks them with every word counted. `None` walks
/// every match.
pub(in crate::store::sqlite) fn lexical(
    conn: &Connection,
    channel: ChannelId,
    terms: &[String],
    depth: usize,
    walk: Option<usize>,
) -> Result<Vec<(ItemKey, f64)>> {
    if terms.is_empty() || depth == 0 {
        return Ok(Vec::new());
    }
    // One read transaction: the statistics and the matches come from the
    // same state of the index, and the lengths looked up do not each take
    // and release the database's read lock.
    let tx = conn.unchecked_transaction()?;
    let mut hits = search(&tx, &scope(channel), terms, depth, walk)?;
    let shared = search(&tx, WORKSPACE, terms, depth, walk)?;
    tx.commit()?;
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
    terms: &[String],
    depth: usize,
    walk: Option<usize>,
) -> Result<Vec<(ItemKey, f64)>> {
    let Some(stats) = stats(conn, scope)? else {
        return Ok(Vec::new());
    };
    // Narrowing pays only in a scope several times the walk: in a smaller
    // one, walking every match costs little more than the estimates that
    // narrowing starts with (in a 10,000-message channel it made the
    // search slower: p50 1.56 → 1.95 ms). A single word is always walked,
    // so it is not estimated either.
    let plan = match walk {
        Some(walk) if terms.len() > 1 && stats.rows > (NARROW_FROM * walk) as i64 => {
            narrow(conn, scope, stats, terms, walk)?
        }
        _ => Plan::every_match(terms.len()),
    };
    let (query, counted) = plan.query(scope, terms);
    let rows = matched(conn, &query, Some(counted), i64::MIN)?;
    let df = plan.frequencies(&rows);
    rank(stats, &rows, &df, depth, |key| text_tokens(conn, key))
}

/// Which of a question's terms a search walks the rows of, and which it
/// only counts in those rows.
#[derive(Debug, PartialEq)]
pub(super) struct Plan {
    /// Indices into the terms, every row holding one of them is walked.
    pub(super) walked: Vec<usize>,
    /// Indices into the terms and how many of the scope's rows are
    /// estimated to hold each: counted in the walked rows, not walked.
    pub(super) common: Vec<(usize, f64)>,
}

impl Plan {
    fn every_match(terms: usize) -> Plan {
        Plan {
            walked: (0..terms).collect(),
            common: Vec::new(),
        }
    }

    /// The MATCH expression and how many of its phrases `helm_row` counts.
    /// Phrase 0 is the scope token, the walked terms follow, then the
    /// common ones. These are joined to the walked terms by AND, so they add
    /// no row: FTS5 seeks them to each walked row instead of walking their
    /// own (the walked terms repeat after them, only to make every walked
    /// row match; those repeats are not counted).
    fn query(&self, scope: &str, terms: &[String]) -> (String, usize) {
        let walked = any_of(self.walked.iter().map(|&i| terms[i].as_str()));
        let words = if self.common.is_empty() {
            walked
        } else {
            let common = any_of(self.common.iter().map(|&(i, _)| terms[i].as_str()));
            format!("({walked}) AND ({common} OR {walked})")
        };
        (
            format!("{} AND {{body prev}} : ({words})", scope_match(scope)),
            1 + self.walked.len() + self.common.len(),
        )
    }

    /// How many of the scope's rows hold each counted phrase: for a walked
    /// term, the walked rows holding it (every row that does is walked);
    /// for a common one, its estimate (or the walked rows holding it, if
    /// more).
    fn frequencies(&self, rows: &Matched) -> Vec<f64> {
        let mut df = vec![0.0; self.walked.len() + self.common.len()];
        for i in 0..rows.keys.len() {
            for (d, tf) in df.iter_mut().zip(&rows.row(i)[1..]) {
                *d += f64::from(u8::from(*tf > 0));
            }
        }
        for (d, (_, estimate)) in df[self.walked.len()..].iter_mut().zip(&self.common) {
            *d = d.max(*estimate);
        }
        df
    }
}

/// How many times the walk a scope's rows must number for a search in it
/// to be narrowed.
const NARROW_FROM: usize = 4;

/// Rows of a scope sampled to estimate how common each word is there.
const SAMPLE: usize = 2048;

/// Plans a search that walks at most about `walk` rows: each term's share
/// of the scope's newest `SAMPLE` rows estimates how many rows hold it, and
/// the rarest terms are walked while their estimates sum to `walk` or less
/// (the rarest always). The rest are counted in those rows only, so a row
/// holding none of the rarer terms is not found.
///
/// Rows holding a rare word are where BM25's best scores lie (its weight
/// grows with rarity), which is why this keeps most of the exact top (see
/// docs/memory.md for the figures at scale); the estimates give the
/// common words their weight, within a few percent.
fn narrow(
    conn: &Connection,
    scope: &str,
    stats: Stats,
    terms: &[String],
    walk: usize,
) -> Result<Plan> {
    // The newest SAMPLE rows start at this rowid.
    let from: Option<i64> = conn
        .prepare_cached(
            "SELECT rowid FROM recall WHERE recall MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
        )?
        .query_row(params![scope_match(scope), SAMPLE as i64 - 1], |r| r.get(0))
        .optional()?;
    // A scope of SAMPLE rows or fewer is counted whole: the estimates are
    // then the counts themselves.
    let (from, scale) = match from {
        Some(from) => (from, stats.rows as f64 / SAMPLE as f64),
        None => (i64::MIN, 1.0),
    };
    // One query over the sample tells which terms each sampled row holds.
    let every = Plan::every_match(terms.len());
    let (query, counted) = every.query(scope, terms);
    let sampled = matched(conn, &query, Some(counted), from)?;
    let estimates = every
        .frequencies(&sampled)
        .into_iter()
        .map(|held| held * scale)
        .enumerate()
        .collect();
    Ok(plan(estimates, walk as f64))
}

/// Splits terms, given with their estimated row counts, into the rarest
/// whose estimates sum to at most `walk` (at least one) and the rest.
pub(super) fn plan(mut estimates: Vec<(usize, f64)>, walk: f64) -> Plan {
    estimates.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut sum = 0.0;
    let mut walked = Vec::new();
    let mut common = Vec::new();
    for (i, estimate) in estimates {
        if walked.is_empty() || (common.is_empty() && sum + estimate <= walk) {
            sum += estimate;
            walked.push(i);
        } else {
            common.push((i, estimate));
        }
    }
    Plan { walked, common }
}

/// An FTS5 expression matching any of `terms`: each quoted (a quote inside
/// doubled), so nothing in a term is read as FTS5 syntax.
pub(super) fn any_of<'a>(terms: impl IntoIterator<Item = &'a str>) -> String {
    terms
        .into_iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
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

/// The rows matching a query and their `helm_row` figures, held flat (one
/// allocation however many rows match): row `i`'s figures are
/// `figures[i * width..][..width]`, a lower bound of its length first, then
/// one count per phrase after the scope token.
struct Matched {
    keys: Vec<ItemKey>,
    figures: Vec<u32>,
    width: usize,
}

impl Matched {
    fn row(&self, i: usize) -> &[u32] {
        &self.figures[i * self.width..][..self.width]
    }
}

/// Every row from rowid `from` on matching `query`, with its `helm_row`
/// figures (of its first `counted` phrases, or of all).
fn matched(conn: &Connection, query: &str, counted: Option<usize>, from: i64) -> Result<Matched> {
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, helm_row(recall, ?2) FROM recall WHERE recall MATCH ?1 AND rowid >= ?3",
    )?;
    let mut rows = stmt.query(params![query, counted.map(|n| n as i64), from])?;
    let mut out = Matched {
        keys: Vec::new(),
        figures: Vec::new(),
        width: 0,
    };
    while let Some(r) = rows.next()? {
        let rusqlite::types::ValueRef::Blob(blob) = r.get_ref(1)? else {
            continue;
        };
        // Every row of one query has as many phrases.
        out.width = blob.len() / 4;
        out.keys.push(ItemKey(r.get(0)?));
        out.figures.extend(
            blob.chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    Ok(out)
}

/// Okapi BM25 as FTS5's `bm25()` computes it, over one scope's statistics:
/// phrase 0 (the scope token) is left out, `df` holds each other phrase's
/// document frequency, and a non-positive IDF counts as 1e-6. Best first; ties keep
/// the index's order (oldest first).
///
/// Exact, without every row's length: a row's score falls as its length
/// grows, so its score at the length bound `helm_row` gives is a ceiling.
/// Rows are taken by ceiling, best first, and scored with their real length
/// (`length`, a lookup) until no ceiling left can reach the `depth`th
/// score, which in a large channel leaves all but a few hundred rows
/// unlooked-up.
fn rank(
    stats: Stats,
    rows: &Matched,
    df: &[f64],
    depth: usize,
    mut length: impl FnMut(ItemKey) -> Result<i64>,
) -> Result<Vec<(ItemKey, f64)>> {
    if rows.keys.is_empty() || depth == 0 {
        return Ok(Vec::new());
    }
    let n = stats.rows as f64;
    let avgdl = (stats.tokens as f64 / n).max(f64::MIN_POSITIVE);
    let idf: Vec<f64> = df
        .iter()
        .map(|&h| {
            let idf = ((n - h + 0.5) / (h + 0.5)).ln();
            if idf <= 0.0 { 1e-6 } else { idf }
        })
        .collect();
    let score = |figures: &[u32], dl: f64| -> f64 {
        let norm = K1 * (1.0 - B + B * dl / avgdl);
        idf.iter()
            .zip(&figures[1..])
            .map(|(idf, &tf)| {
                let tf = f64::from(tf);
                idf * (tf * (K1 + 1.0)) / (tf + norm)
            })
            .sum()
    };
    let mut order: Vec<(f64, usize)> = (0..rows.keys.len())
        .map(|i| {
            let f = rows.row(i);
            (score(f, f64::from(f[0])), i)
        })
        .collect();
    // Highest ceiling first; among equal ceilings the older row.
    let by_ceiling = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    // The best `depth` so far, as (score, index), best first.
    let mut best: Vec<(f64, usize)> = Vec::with_capacity(depth + 1);
    // Rows are put in order a slice at a time: the search usually ends
    // within the first, and sorting every match would cost more than it.
    let mut rest = &mut order[..];
    while !rest.is_empty() {
        let take = (4 * depth).min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, by_ceiling);
        }
        let (slice, after) = rest.split_at_mut(take);
        slice.sort_unstable_by(by_ceiling);
        for &(ceiling, i) in slice.iter() {
            // Rows come in ceiling order, so once one falls behind the
            // `depth`th best, counting its tie rule (the older row first),
            // none after it can enter: with many equal scores (short
            // messages sharing the asked-for word) nothing more is looked up.
            if best.len() == depth
                && best
                    .last()
                    .is_some_and(|&last| by_ceiling(&last, &(ceiling, i)).is_lt())
            {
                return Ok(best.into_iter().map(|(s, i)| (rows.keys[i], s)).collect());
            }
            let exact = score(rows.row(i), length(rows.keys[i])? as f64);
            let at = best.partition_point(|(s, j)| *s > exact || (*s == exact && *j < i));
            if at < depth {
                best.insert(at, (exact, i));
                best.truncate(depth);
            }
        }
        rest = after;
    }
    Ok(best.into_iter().map(|(s, i)| (rows.keys[i], s)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 300 rows holding the asked-for word once, all four tokens long but
    /// the last, which is two: every score but that one's ties.
    fn tied_rows() -> Matched {
        let mut figures = [4, 1].repeat(300);
        figures[2 * 299] = 2;
        Matched {
            keys: (0..300).map(ItemKey).collect(),
            figures,
            width: 2,
        }
    }

    #[test]
    fn equal_scores_end_the_lookups_once_the_depth_is_filled() -> Result<()> {
        let rows = tied_rows();
        let stats = Stats {
            rows: 1000,
            tokens: 4000,
        };
        let mut looked_up = Vec::new();
        let best = rank(stats, &rows, &[300.0], 5, |key| {
            looked_up.push(key.0);
            Ok(if key.0 == 299 { 2 } else { 4 })
        })?;
        // The shorter row first, then the oldest of the tied ones; no row
        // past them had its length looked up.
        let keys: Vec<i64> = best.iter().map(|(k, _)| k.0).collect();
        assert_eq!(keys, [299, 0, 1, 2, 3]);
        assert_eq!(looked_up, [299, 0, 1, 2, 3]);
        assert!(best[0].1 > best[1].1 && best[1].1 == best[4].1, "{best:?}");
        Ok(())
    }
}
