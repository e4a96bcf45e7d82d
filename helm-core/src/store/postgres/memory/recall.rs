//! What recall reads on PostgreSQL: word matches from the schema's full-text
//! indexes (SQLite keeps one FTS5 table, ranked per channel, instead),
//! recall's view of candidate items, the queue of items to embed, and stored
//! vectors.
//!
//! Keys encode what an item is, as in SQLite: a message's id times two, a
//! memory record's id times two plus one.

use std::collections::HashMap;

use super::super::codec::{opt_ts, parsed, ts};
use super::super::failed;
use crate::error::Result;
use crate::memory::recall::{CandidateItem, ItemKey};
use crate::memory::vectors::StoredVectors;
use crate::model::{ChannelId, Message, MessageId, ThreadId};
use crate::store::postgres::prepared::Db;

/// Queues an item to be embedded (once).
pub(crate) async fn enqueue(c: &impl Db, channel: ChannelId, key: ItemKey) -> Result<()> {
    c.execute(
        "INSERT INTO embed_queue (key, channel_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&key.0, &channel.get()],
    )
    .await
    .map_err(failed("queueing an item to embed"))?;
    Ok(())
}

/// Makes a final message of a thread recallable: its words are indexed by
/// the schema, so this only queues it to be embedded. Call it where SQLite
/// calls `recall::index_message` (a person's post, a completed reply).
pub(crate) async fn index_message(c: &impl Db, message: &Message) -> Result<()> {
    if message.thread_id.is_none() || message.content.trim().is_empty() {
        return Ok(());
    }
    enqueue(c, message.channel_id, ItemKey::message(message.id)).await
}

/// The best word matches of any of `terms` in a channel, and among records
/// shared with the workspace, best first, with positive scores.
///
/// What is searched is what SQLite indexes: a thread's final messages
/// (complete, not Helm's notes) and every memory record, their words taken
/// by their English stems, as SQLite's porter tokenizer does, and kept in
/// each row's `words` (migration 13: only final thread messages have
/// them, so `words IS NOT NULL` is what makes a message searchable). As
/// SQLite pairs each message with the one before it in its thread (the
/// question a reply answers), a message here also scores its predecessor's
/// match. Each term becomes its own `plainto_tsquery`, so no
/// term is ever read as query syntax.
///
/// A term weighs what BM25's inverse document frequency says it does in
/// the channel, `ln(1 + (n - df + 0.5) / (df + 0.5))`, or 1e-6 where it
/// is in at least half of the items (as SQLite's, whose IDF is not
/// positive there; see [`crate::memory::recall::COMMON_WORDS_ONLY`]):
/// `df` the channel's items holding it, counted among the matches, `n`
/// the channel's thread messages and records: both count the channel's
/// own items, so a word in many records other channels share with the
/// workspace does not look common in a small channel (a shared record is
/// weighed by the asking channel's figures). That weight times the term's
/// `ts_rank` in the item (its frequency, damped by the item's length) is
/// the item's score. The messages are counted by their threads' counters
/// (`last_seq`, migration 3): a row per thread, not per message. Without
/// the weight, a name said in every message counted as much as the one
/// word that finds the answer (held-out LoCoMo turn any@5 by words only:
/// 0.64, against SQLite's 0.77).
pub(crate) async fn lexical(
    c: &impl Db,
    channel: ChannelId,
    terms: &[String],
    depth: usize,
) -> Result<Vec<(ItemKey, f64)>> {
    if terms.is_empty() || depth == 0 {
        return Ok(Vec::new());
    }
    let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
    let depth = i64::try_from(depth).unwrap_or(i64::MAX);
    let rows = c
        .query(
            "WITH t AS ( \
                 SELECT p FROM unnest($2::TEXT[]) AS u(word), plainto_tsquery('english', u.word) AS p \
                 WHERE numnode(p) > 0 \
             ), q AS ( \
                 SELECT to_tsquery('english', string_agg('(' || p::TEXT || ')', ' | ')) AS q FROM t \
             ), said AS ( \
                 SELECT m.id, m.thread_id, m.words AS v FROM messages m, q \
                 WHERE m.channel_id = $1 AND m.words @@ q.q \
             ), kept AS ( \
                 SELECT i.id, i.channel_id, i.words AS v FROM memory_items i, q \
                 WHERE (i.channel_id = $1 OR i.scope = 'workspace') AND i.words @@ q.q \
             ), total AS ( \
                 SELECT (SELECT coalesce(sum(last_seq), 0) FROM threads WHERE channel_id = $1) \
                      + (SELECT count(*) FROM memory_items WHERE channel_id = $1) AS n \
             ), w AS ( \
                 SELECT t.p, CASE WHEN 2 * d.df >= total.n THEN 1e-6 \
                     ELSE ln(1 + (total.n - d.df + 0.5) / (d.df + 0.5)) END AS idf \
                 FROM t, total, LATERAL (SELECT (SELECT count(*) FROM said WHERE v @@ t.p) \
                     + (SELECT count(*) FROM kept WHERE channel_id = $1 AND v @@ t.p) AS df) AS d \
             ), scored AS ( \
                 SELECT s.id, s.thread_id, \
                     (SELECT sum(w.idf * ts_rank(s.v, w.p, 1)) FROM w) AS r \
                 FROM said s \
             ), answered AS ( \
                 SELECT n.id, s.r FROM scored s, LATERAL ( \
                     SELECT x.id FROM messages x WHERE x.thread_id = s.thread_id AND x.id > s.id \
                       AND x.words IS NOT NULL \
                     ORDER BY x.id LIMIT 1) AS n \
                 WHERE (SELECT trim(y.content) <> '' FROM messages y WHERE y.id = n.id) \
             ), hits AS ( \
                 SELECT h.id * 2 AS key, sum(h.r)::FLOAT8 AS score \
                 FROM (SELECT id, r FROM scored UNION ALL SELECT id, r FROM answered) AS h \
                 GROUP BY h.id \
                 UNION ALL \
                 SELECT k.id * 2 + 1, (SELECT sum(w.idf * ts_rank(k.v, w.p, 1)) FROM w)::FLOAT8 \
                 FROM kept k \
             ) \
             SELECT key, score FROM hits WHERE score > 0 ORDER BY score DESC, key LIMIT $3",
            &[&channel.get(), &terms, &depth],
        )
        .await
        .map_err(failed("searching memory by words"))?;
    Ok(rows.iter().map(|r| (ItemKey(r.get(0)), r.get(1))).collect())
}

/// Recall's view of each known item of `keys`, in their order. The
/// messages and the records are two statements sent together on the one
/// connection (tokio-postgres pipelines them): one round trip, not two.
pub(crate) async fn items(c: &impl Db, keys: &[ItemKey]) -> Result<Vec<CandidateItem>> {
    let messages: Vec<i64> = keys
        .iter()
        .filter_map(|k| k.message_id().map(MessageId::get))
        .collect();
    let memories: Vec<i64> = keys
        .iter()
        .filter_map(|k| k.memory_id().map(|m| m.get()))
        .collect();
    let (messages, records) =
        tokio::try_join!(message_items(c, &messages), record_items(c, &memories))?;
    let found: HashMap<ItemKey, CandidateItem> = messages
        .into_iter()
        .chain(records)
        .map(|i| (i.key, i))
        .collect();
    Ok(keys.iter().filter_map(|k| found.get(k).cloned()).collect())
}

/// Recall's view of the messages of `ids`.
async fn message_items(c: &impl Db, ids: &[i64]) -> Result<Vec<CandidateItem>> {
    let rows = rows_of(
        c,
        "SELECT m.id, m.channel_id, m.thread_id, m.author_name, m.content, m.created, \
         m.external_id, t.opened_at, t.title FROM messages m \
         LEFT JOIN threads t ON t.id = m.thread_id WHERE m.id = ANY($1)",
        ids,
        "reading recall's messages",
    )
    .await?;
    rows.iter()
        .map(|r| {
            let id = MessageId(r.get(0));
            Ok(CandidateItem {
                key: ItemKey::message(id),
                channel_id: ChannelId(r.get(1)),
                thread_id: r.get::<_, Option<i64>>(2).map(ThreadId),
                kind: None,
                author: r.get(3),
                content: r.get(4),
                created: ts(r, 5)?,
                said_at: ts(r, 5)?,
                thread_opened: opt_ts(r, 7)?,
                thread_title: r.get(8),
                status: None,
                scope: None,
                turn: Some(id),
                source_external_id: r.get(6),
            })
        })
        .collect()
}

/// Recall's view of the memory records of `ids`.
async fn record_items(c: &impl Db, ids: &[i64]) -> Result<Vec<CandidateItem>> {
    let rows = rows_of(
        c,
        "SELECT i.id, i.channel_id, i.thread_id, i.kind, i.content, i.created, i.status, \
         i.scope, i.source_message_id, s.author_name, s.external_id, \
         coalesce(i.author_name, i.author_type), coalesce(s.created, i.created), \
         t.opened_at, t.title \
         FROM memory_items i LEFT JOIN messages s ON s.id = i.source_message_id \
         LEFT JOIN threads t ON t.id = i.thread_id WHERE i.id = ANY($1)",
        ids,
        "reading recall's memory records",
    )
    .await?;
    rows.iter()
        .map(|r| {
            let source_author: Option<String> = r.get(9);
            Ok(CandidateItem {
                key: ItemKey::memory(crate::model::MemoryId(r.get(0))),
                channel_id: ChannelId(r.get(1)),
                thread_id: r.get::<_, Option<i64>>(2).map(ThreadId),
                kind: Some(parsed(r, 3)?),
                content: r.get(4),
                created: ts(r, 5)?,
                said_at: ts(r, 12)?,
                thread_opened: opt_ts(r, 13)?,
                thread_title: r.get(14),
                status: Some(parsed(r, 6)?),
                scope: Some(parsed(r, 7)?),
                turn: r.get::<_, Option<i64>>(8).map(MessageId),
                source_external_id: r.get(10),
                author: source_author.or(r.get(11)),
            })
        })
        .collect()
}

/// The rows `sql` returns for the ids `$1`; no statement when none are asked.
async fn rows_of(
    c: &impl Db,
    sql: &str,
    ids: &[i64],
    what: &'static str,
) -> Result<Vec<tokio_postgres::Row>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    c.query(sql, &[&ids]).await.map_err(failed(what))
}

/// The external ids of a thread's messages, in order.
pub(crate) async fn thread_external_ids(c: &impl Db, thread: ThreadId) -> Result<Vec<String>> {
    Ok(c.query(
        "SELECT external_id FROM messages WHERE thread_id = $1 AND external_id IS NOT NULL \
             ORDER BY id",
        &[&thread.get()],
    )
    .await
    .map_err(failed("reading a thread's external ids"))?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

/// Threads of a channel opened within `[from, to]` (Unix milliseconds).
pub(crate) async fn threads_opened_between(
    c: &impl Db,
    channel: ChannelId,
    from: i64,
    to: i64,
) -> Result<Vec<ThreadId>> {
    Ok(c.query(
        "SELECT id FROM threads WHERE channel_id = $1 AND opened_at BETWEEN $2 AND $3 \
             ORDER BY id",
        &[&channel.get(), &from, &to],
    )
    .await
    .map_err(failed("finding threads by when they opened"))?
    .iter()
    .map(|r| ThreadId(r.get(0)))
    .collect())
}

/// The distinct names that wrote in a channel.
pub(crate) async fn channel_authors(c: &impl Db, channel: ChannelId) -> Result<Vec<String>> {
    Ok(c.query(
        "SELECT DISTINCT author_name FROM messages WHERE channel_id = $1 \
             AND author_kind IN ('human', 'guest', 'agent', 'skipper')",
        &[&channel.get()],
    )
    .await
    .map_err(failed("reading a channel's authors"))?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

/// Items waiting to be embedded (optionally of one channel), newest first,
/// with the text to embed, as the SQLite store gives it: for a message
/// `author: text` and, on a line after it, the thread's message before it
/// (its first 512 characters); a memory record's content. With
/// `unembedded` a model's name, only items with no vector of that model.
pub(crate) async fn backlog(
    c: &impl Db,
    channel: Option<ChannelId>,
    limit: usize,
    unembedded: Option<&str>,
) -> Result<Vec<(ItemKey, ChannelId, String)>> {
    let rows = c
        .query(
            "SELECT q.key, q.channel_id, \
             CASE WHEN q.key % 2 = 0 THEN \
                 (SELECT m.author_name || ': ' || m.content || coalesce(chr(10) || \
                     (SELECT p.author_name || ': ' || substr(p.content, 1, 512) FROM messages p \
                      WHERE p.thread_id = m.thread_id AND p.id < m.id AND p.status = 'complete' \
                      AND p.author_kind != 'system' ORDER BY p.id DESC LIMIT 1), '') \
                  FROM messages m WHERE m.id = q.key / 2) \
             ELSE (SELECT i.content FROM memory_items i WHERE i.id = q.key / 2) END \
             FROM embed_queue q WHERE ($1::BIGINT IS NULL OR q.channel_id = $1) \
             AND ($3::TEXT IS NULL OR NOT EXISTS \
                 (SELECT 1 FROM embeddings e WHERE e.model = $3 AND e.key = q.key)) \
             ORDER BY q.key DESC LIMIT $2",
            &[
                &channel.map(ChannelId::get),
                &i64::try_from(limit).unwrap_or(i64::MAX),
                &unembedded,
            ],
        )
        .await
        .map_err(failed("reading the embedding backlog"))?;
    // An item deleted since it was queued has no text.
    Ok(rows
        .iter()
        .map(|r| {
            (
                ItemKey(r.get(0)),
                ChannelId(r.get(1)),
                r.get::<_, Option<String>>(2).unwrap_or_default(),
            )
        })
        .collect())
}

/// How many items wait to be embedded.
pub(crate) async fn backlog_len(c: &impl Db, channel: Option<ChannelId>) -> Result<u64> {
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM embed_queue WHERE $1::BIGINT IS NULL OR channel_id = $1",
            &[&channel.map(ChannelId::get)],
        )
        .await
        .map_err(failed("counting the embedding backlog"))?
        .get(0);
    Ok(n as u64)
}

/// Stores vectors (little-endian `f32`s, as SQLite stores them) and takes
/// their items off the queue. Each vector gets the next number of the one
/// counter row, held until commit, so numbers become visible in order: a
/// reader that has seen number `n` has seen every number below it.
pub(crate) async fn put_embeddings(
    tx: &impl Db,
    model: &str,
    vectors: &[(ItemKey, ChannelId, Vec<f32>)],
) -> Result<()> {
    let stored = vectors.iter().filter(|(_, _, v)| !v.is_empty()).count() as i64;
    let mut seq = if stored > 0 {
        let last: i64 = tx
            .query_one(
                "UPDATE vector_counter SET last = last + $1 WHERE id = 1 RETURNING last",
                &[&stored],
            )
            .await
            .map_err(failed("numbering vectors"))?
            .get(0);
        last - stored
    } else {
        0
    };
    for (key, channel, vector) in vectors {
        if !vector.is_empty() {
            seq += 1;
            tx.execute(
                "INSERT INTO embeddings (model, key, channel_id, vector, seq) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (model, key) DO UPDATE SET channel_id = excluded.channel_id, \
                 vector = excluded.vector, seq = excluded.seq",
                &[
                    &model,
                    &key.0,
                    &channel.get(),
                    &StoredVectors::encode(vector),
                    &seq,
                ],
            )
            .await
            .map_err(failed("storing a vector"))?;
        }
        tx.execute("DELETE FROM embed_queue WHERE key = $1", &[&key.0])
            .await
            .map_err(failed("taking an item off the embedding queue"))?;
    }
    Ok(())
}

/// A channel's vectors for `model` stored after number `after` (0: all of
/// them), and the number of the newest.
pub(crate) async fn vectors(
    c: &impl Db,
    model: &str,
    channel: ChannelId,
    after: i64,
) -> Result<StoredVectors> {
    let rows = c
        .query(
            "SELECT key, vector, seq FROM embeddings \
             WHERE model = $1 AND channel_id = $2 AND seq > $3 ORDER BY seq",
            &[&model, &channel.get(), &after],
        )
        .await
        .map_err(failed("reading a channel's vectors"))?;
    let mut stored = StoredVectors::after(after);
    for r in &rows {
        stored.push_stored(ItemKey(r.get(0)), r.get(1), r.get(2));
    }
    Ok(stored)
}

/// The channels with vectors for `model`, the most recently stored first,
/// and how many each has.
pub(crate) async fn vector_channels(c: &impl Db, model: &str) -> Result<Vec<(ChannelId, u64)>> {
    Ok(c.query(
        "SELECT channel_id, count(*) FROM embeddings WHERE model = $1 \
             GROUP BY channel_id ORDER BY max(seq) DESC",
        &[&model],
    )
    .await
    .map_err(failed("listing the channels with vectors"))?
    .iter()
    .map(|r| (ChannelId(r.get(0)), r.get::<_, i64>(1) as u64))
    .collect())
}
