//! Migrations 010 onwards on a database built by the real
//! migrations 1–9 and filled as the code of that schema wrote it.

use rusqlite::{Connection, params};

use super::{migrate, migrate_to};
use crate::memory::recall::ItemKey;
use crate::model::{MemoryId, MessageId};

/// The old layout's table, as the schema-9 code created it (with
/// `porter unicode61`), or with another tokenizer to rank by for reference.
fn old_table(conn: &Connection, name: &str, tokenize: &str) -> anyhow::Result<()> {
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE {name} USING fts5(body, prev, content='', \
         contentless_delete=1, tokenize='{tokenize}')"
    ))?;
    Ok(())
}

fn old_insert(
    conn: &Connection,
    table: &str,
    key: ItemKey,
    body: &str,
    prev: &str,
) -> anyhow::Result<()> {
    conn.execute(
        &format!("INSERT INTO {table} (rowid, body, prev) VALUES (?1, ?2, ?3)"),
        params![key.0, body, prev],
    )?;
    Ok(())
}

/// Two channels with threads, a system message, a message outside any
/// thread, channel and workspace memory records: indexed the schema-9 way.
fn schema_9_with_words(conn: &mut Connection) -> anyhow::Result<()> {
    migrate_to(conn, 9)?;
    assert_eq!(
        conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))?,
        9
    );
    conn.execute_batch(
        "INSERT INTO workspaces (id, name, created) VALUES (1, 'w', 0);
         INSERT INTO users (id, workspace_id, name, display_name, role, created)
             VALUES (1, 1, 'captain', 'Captain', 'captain', 0);
         INSERT INTO channels (id, workspace_id, name, purpose, kind, status, created_by, created, status_changed)
             VALUES (1, 1, 'launch', 'Launch.', 'agent', 'active', 1, 0, 0),
                    (2, 1, 'ops', 'Ops.', 'agent', 'active', 1, 0, 0);
         INSERT INTO threads (id, channel_id, title, status, opened_at, updated_at)
             VALUES (1, 1, 'budget', 'open', 0, 0), (2, 2, 'disk', 'open', 0, 0);",
    )?;
    let messages: &[(i64, Option<i64>, &str, &str)] = &[
        (
            1,
            Some(1),
            "human",
            "What is the launch budget for the keynote venue?",
        ),
        (
            1,
            Some(1),
            "guest",
            "The venue budget is forty thousand, catering included.",
        ),
        (1, Some(1), "system", "Thread renamed to budget review."),
        (
            1,
            Some(1),
            "human",
            "Book the venue and tell the keynote speakers about the budget.",
        ),
        (
            1,
            None,
            "human",
            "A loose note about the budget outside any thread.",
        ),
        (
            2,
            Some(2),
            "human",
            "The staging disk filled up again with launch logs.",
        ),
        (
            2,
            Some(2),
            "guest",
            "Rotate the logs daily and the disk stays under budget.",
        ),
    ];
    for (channel, thread, kind, text) in messages {
        let user = (*kind == "human").then_some(1);
        conn.execute(
            "INSERT INTO messages (channel_id, thread_id, author_kind, author_user_id, author_name, \
             content, status, created, updated) VALUES (?1, ?2, ?3, ?4, 'someone', ?5, 'complete', 0, 0)",
            params![channel, thread, kind, user, text],
        )?;
    }
    let memories: &[(i64, &str, &str)] = &[
        (1, "channel", "The keynote venue budget is forty thousand."),
        (
            2,
            "workspace",
            "Launch logs rotate daily to keep the disk under budget.",
        ),
        (2, "channel", "Staging disk alerts go to the ops rota."),
    ];
    for (channel, scope, text) in memories {
        conn.execute(
            "INSERT INTO memory_items (channel_id, kind, content, source_kind, author_type, scope, \
             status, created) VALUES (?1, 'fact', ?2, 'user_action', 'human', ?3, 'current', 0)",
            params![channel, text, scope],
        )?;
    }
    per_channel_tables(conn, "recall", "porter unicode61")
}

/// What the schema-9 code indexed, in its tables `{prefix}_c1`,
/// `{prefix}_c2` and `{prefix}_workspace`: finished, non-system thread
/// messages with the previous such message of their thread, and every
/// record.
fn per_channel_tables(conn: &Connection, prefix: &str, tokenize: &str) -> anyhow::Result<()> {
    for table in ["c1", "c2", "workspace"] {
        old_table(conn, &format!("{prefix}_{table}"), tokenize)?;
    }
    let rows: Vec<(i64, i64, Option<i64>, String, String)> = conn
        .prepare(
            "SELECT id, channel_id, thread_id, author_kind, content FROM messages ORDER BY id",
        )?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut prev: std::collections::HashMap<i64, String> = Default::default();
    for (id, channel, thread, kind, content) in rows {
        let (Some(thread), false) = (thread, kind == "system") else {
            continue;
        };
        let before = prev.insert(thread, content.clone()).unwrap_or_default();
        let key = ItemKey::message(MessageId(id));
        old_insert(
            conn,
            &format!("{prefix}_c{channel}"),
            key,
            &content,
            &before,
        )?;
    }
    let records: Vec<(i64, i64, String, String)> = conn
        .prepare("SELECT id, channel_id, scope, content FROM memory_items ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, channel, scope, content) in records {
        let key = ItemKey::memory(MemoryId(id));
        old_insert(conn, &format!("{prefix}_c{channel}"), key, &content, "")?;
        if scope == "workspace" {
            old_insert(conn, &format!("{prefix}_workspace"), key, &content, "")?;
        }
    }
    Ok(())
}

#[test]
fn thread_places_are_filled_in_for_existing_messages() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut conn = Connection::open(dir.path().join("helm.db"))?;
    schema_9_with_words(&mut conn)?;
    migrate_to(&mut conn, 10)?;
    migrate(&mut conn)?;
    let places: Vec<(i64, Option<i64>)> = conn
        .prepare("SELECT id, seq FROM messages ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    // Thread 1: messages 1–4 (its system message too); 5 is in no thread;
    // thread 2: messages 6 and 7.
    let expected = [
        (1, Some(1)),
        (2, Some(2)),
        (3, Some(3)),
        (4, Some(4)),
        (5, None),
        (6, Some(1)),
        (7, Some(2)),
    ];
    assert_eq!(places, expected);

    // The tail's figures from places agree with counting: a budget that
    // holds the first message and the newest only.
    let tail = super::super::threads::tail(&conn, crate::model::ThreadId(1), None, 60)?;
    assert_eq!(tail.recent.len(), 1, "{tail:?}");
    assert_eq!((tail.omitted, tail.uncovered), (2, 2));
    Ok(())
}

/// FTS5's ranking in one of the old tables.
fn old_ranking(
    conn: &Connection,
    table: &str,
    expression: &str,
) -> anyhow::Result<Vec<(i64, f64)>> {
    Ok(conn
        .prepare(&format!(
            "SELECT rowid, -bm25({table}, 1.0, 1.0) FROM {table} WHERE {table} MATCH ?1 \
             ORDER BY bm25({table}, 1.0, 1.0), rowid"
        ))?
        .query_map([expression], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// A channel's hits as recall gathers them from per-channel tables: its
/// own, then records shared with the workspace that it had not, best first.
fn per_channel_ranking(
    conn: &Connection,
    prefix: &str,
    channel: i64,
    terms: &[&str],
) -> anyhow::Result<Vec<(i64, f64)>> {
    let expression = terms
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    let mut hits = old_ranking(conn, &format!("{prefix}_c{channel}"), &expression)?;
    let shared = old_ranking(conn, &format!("{prefix}_workspace"), &expression)?;
    let own: Vec<i64> = hits.iter().map(|(k, _)| *k).collect();
    hits.extend(shared.into_iter().filter(|(k, _)| !own.contains(k)));
    hits.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(hits)
}

/// Recall's word hits in a channel of the shared index, as `(rowid, score)`.
fn shared_ranking(
    conn: &Connection,
    channel: i64,
    terms: &[&str],
) -> anyhow::Result<Vec<(i64, f64)>> {
    let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
    let hits = crate::store::sqlite::recall::lexical(
        conn,
        crate::model::ChannelId(channel),
        &terms,
        50,
        None,
    )?;
    Ok(hits.into_iter().map(|(k, s)| (k.0, s)).collect())
}

fn sorted_keys(hits: &[(i64, f64)]) -> Vec<i64> {
    let mut keys: Vec<i64> = hits.iter().map(|(k, _)| *k).collect();
    keys.sort();
    keys
}

#[test]
fn word_tables_per_channel_move_into_the_shared_index_ranked_as_before() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut conn = Connection::open(dir.path().join("helm.db"))?;
    schema_9_with_words(&mut conn)?;
    migrate_to(&mut conn, 11)?;
    let questions: [&[&str]; 4] = [
        &["budget"],
        &["venue", "keynote"],
        &["disk", "logs", "budget"],
        &["rota"],
    ];
    // What recall found before.
    let mut before = Vec::new();
    for terms in questions {
        for channel in [1, 2] {
            before.push(per_channel_ranking(&conn, "recall", channel, terms)?);
        }
    }
    // Only "rota" in channel 1 and "venue OR keynote" in channel 2 find nothing.
    assert_eq!(
        before.iter().filter(|hits| hits.is_empty()).count(),
        2,
        "{before:?}"
    );
    // Embedding work left to do is neither lost nor queued twice.
    let queued = |c: &Connection| -> anyhow::Result<i64> {
        Ok(c.query_row("SELECT count(*) FROM embed_queue", [], |r| r.get(0))?)
    };
    let queue_before = queued(&conn)?;

    migrate(&mut conn)?;
    let left: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name GLOB 'recall_c[0-9]*' \
         OR name GLOB 'recall_workspace*'",
        [],
        |r| r.get(0),
    )?;
    assert_eq!(left, 0, "the old tables and their shadow tables are gone");
    assert_eq!(queued(&conn)?, queue_before);
    let mut after = Vec::new();
    for terms in questions {
        for channel in [1, 2] {
            after.push(shared_ranking(&conn, channel, terms)?);
        }
    }
    for (old, new) in before.iter().zip(&after) {
        same_ranking(old, new);
    }
    Ok(())
}

#[test]
fn the_word_index_is_stemmed_again_so_plurals_find_their_singulars() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut conn = Connection::open(dir.path().join("helm.db"))?;
    schema_9_with_words(&mut conn)?;
    migrate_to(&mut conn, 22)?;
    // A thread message in channel 1, a record of channel 1 and one of
    // channel 2 shared with the workspace.
    conn.execute(
        "INSERT INTO messages (id, channel_id, thread_id, author_kind, author_user_id, author_name, \
         content, status, created, updated) VALUES (8, 1, 1, 'human', 1, 'someone', \
         'Two walruses slept under the keynote stage.', 'complete', 0, 0)",
        [],
    )?;
    let records = [
        (4, 1, "channel", "The walrus mascot opens the keynote."),
        (5, 2, "workspace", "Every launch badge shows a walrus."),
    ];
    for (id, channel, scope, text) in records {
        conn.execute(
            "INSERT INTO memory_items (id, channel_id, kind, content, source_kind, author_type, \
             scope, status, created) VALUES (?1, ?2, 'fact', ?3, 'user_action', 'human', ?4, \
             'current', 0)",
            params![id, channel, text, scope],
        )?;
    }
    // Indexed by the store's own code, into the schema-22 (porter) index.
    let message = super::super::messages::get(&conn, MessageId(8))?;
    super::super::recall::index_message(&conn, &message)?;
    for (id, ..) in records {
        let record = super::super::memory::get(&conn, MemoryId(id))?;
        super::super::recall::index_memory(&conn, &record)?;
    }
    let message = ItemKey::message(MessageId(8)).0;
    let (mascot, badge) = (
        ItemKey::memory(MemoryId(4)).0,
        ItemKey::memory(MemoryId(5)).0,
    );
    // Porter stems "walrus" to "walru" and "walruses" to "walrus": each
    // finds only the items saying it as asked.
    assert_eq!(
        sorted_keys(&shared_ranking(&conn, 1, &["walrus"])?),
        [mascot, badge]
    );
    assert_eq!(
        sorted_keys(&shared_ranking(&conn, 1, &["walruses"])?),
        [message]
    );
    let figures = |c: &Connection| -> anyhow::Result<Vec<(String, i64, i64)>> {
        Ok(
            c.prepare("SELECT scope, docs, tokens FROM recall_stats ORDER BY scope")?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?,
        )
    };
    let queued = |c: &Connection| -> anyhow::Result<i64> {
        Ok(c.query_row("SELECT count(*) FROM embed_queue", [], |r| r.get(0))?)
    };
    let (figures_before, queue_before) = (figures(&conn)?, queued(&conn)?);

    migrate(&mut conn)?;
    let left: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name GLOB 'recall_porter*'",
        [],
        |r| r.get(0),
    )?;
    assert_eq!(left, 0, "the old index and its shadow tables are gone");
    // The same rows in each scope, of as many tokens (a stem is a token).
    assert_eq!(figures(&conn)?, figures_before);
    assert_eq!(queued(&conn)?, queue_before, "nothing is embedded again");
    for word in ["walrus", "walruses"] {
        let found = sorted_keys(&shared_ranking(&conn, 1, &[word])?);
        assert_eq!(found, [mascot, badge, message], "{word}");
        let found = sorted_keys(&shared_ranking(&conn, 2, &[word])?);
        assert_eq!(found, [badge], "{word}");
    }
    // Ranked as FTS5 ranks tables of each channel's items with the new
    // tokenizer.
    per_channel_tables(&conn, "english", "helm_english")?;
    let questions: [&[&str]; 6] = [
        &["walrus"],
        &["walruses"],
        &["walruses", "keynote"],
        &["budget"],
        &["venue", "keynote"],
        &["disk", "logs", "budget"],
    ];
    for terms in questions {
        for channel in [1, 2] {
            let fts5 = per_channel_ranking(&conn, "english", channel, terms)?;
            let ours = shared_ranking(&conn, channel, terms)?;
            assert!(!fts5.is_empty() || channel == 2, "{terms:?}");
            same_ranking(&fts5, &ours);
        }
    }
    // And an item written after the migration is stemmed alike.
    conn.execute(
        "INSERT INTO messages (id, channel_id, thread_id, author_kind, author_user_id, author_name, \
         content, status, created, updated) VALUES (9, 2, 2, 'human', 1, 'someone', \
         'Walruses again.', 'complete', 0, 0)",
        [],
    )?;
    let later = super::super::messages::get(&conn, MessageId(9))?;
    super::super::recall::index_message(&conn, &later)?;
    let found = sorted_keys(&shared_ranking(&conn, 2, &["walrus"])?);
    assert_eq!(found, [badge, ItemKey::message(MessageId(9)).0]);
    Ok(())
}

/// The same items with the same scores, to the last few bits (scores this
/// small are FTS5's floor for common words, 1e-6); keys in the same order
/// unless tied.
fn same_ranking(old: &[(i64, f64)], new: &[(i64, f64)]) {
    assert_eq!(old.len(), new.len(), "{old:?} against {new:?}");
    for ((old_key, old_score), (new_key, new_score)) in old.iter().zip(new) {
        let close = (old_score - new_score).abs() <= 1e-12 * old_score.abs().max(1.0);
        assert!(close, "{old:?} against {new:?}");
        let tied = old
            .iter()
            .filter(|(_, s)| (s - old_score).abs() <= 1e-15)
            .count()
            > 1;
        assert!(old_key == new_key || tied, "{old:?} against {new:?}");
    }
}

#[test]
fn stored_vectors_are_kept_and_numbered_when_the_table_gains_numbers() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut conn = Connection::open(dir.path().join("helm.db"))?;
    schema_9_with_words(&mut conn)?;
    migrate_to(&mut conn, 12)?;
    // Vectors as the schema-12 code stored them, out of channel order.
    let vector = |x: f32| crate::memory::vectors::StoredVectors::encode(&[x, 1.0 - x]);
    for (key, channel, x) in [(30, 2, 0.3), (10, 1, 0.1), (20, 1, 0.2)] {
        conn.execute(
            "INSERT INTO embeddings (model, key, channel_id, vector) VALUES ('mini', ?1, ?2, ?3)",
            params![key, channel, vector(x)],
        )?;
    }
    migrate(&mut conn)?;
    let one = crate::store::sqlite::recall::vectors(&conn, "mini", crate::model::ChannelId(1), 0)?;
    assert_eq!(
        one.rows().map(|(k, v)| (k, v.to_vec())).collect::<Vec<_>>(),
        vec![(ItemKey(10), vec![0.1, 0.9]), (ItemKey(20), vec![0.2, 0.8])]
    );
    // A vector stored after the migration is numbered past every old one,
    // so a refresh from the old newest finds it, and only it.
    crate::store::sqlite::recall::put_embeddings(
        &conn,
        "mini",
        &[(ItemKey(10), crate::model::ChannelId(1), vec![0.5, 0.5])],
    )?;
    let newer =
        crate::store::sqlite::recall::vectors(&conn, "mini", crate::model::ChannelId(1), one.last)?;
    assert_eq!(
        newer
            .rows()
            .map(|(k, v)| (k, v.to_vec()))
            .collect::<Vec<_>>(),
        vec![(ItemKey(10), vec![0.5, 0.5])]
    );
    assert!(newer.last > one.last);
    // The refresh reads the channel's index, not the table.
    let plan: String = conn.query_row(
        "EXPLAIN QUERY PLAN SELECT key, vector, seq FROM embeddings \
         WHERE model = 'mini' AND channel_id = 1 AND seq > 3 ORDER BY seq",
        [],
        |r| r.get(3),
    )?;
    assert!(plan.contains("USING INDEX embeddings_channel"), "{plan}");
    Ok(())
}

/// Empties the embedding queue, stores a vector for each `(model, key,
/// channel)`, runs the remaining migrations and gives the queue after them,
/// `(key, channel)` in key order.
fn queued_by_migrations(
    conn: &mut Connection,
    embedded: &[(&str, ItemKey, i64)],
) -> anyhow::Result<Vec<(i64, i64)>> {
    conn.execute("DELETE FROM embed_queue", [])?;
    let vector = crate::memory::vectors::StoredVectors::encode(&[0.6, 0.8]);
    for (model, key, channel) in embedded {
        conn.execute(
            "INSERT INTO embeddings (model, key, channel_id, vector) VALUES (?1, ?2, ?3, ?4)",
            params![model, key.0, channel, vector],
        )?;
    }
    migrate(conn)?;
    let queued = conn
        .prepare("SELECT key, channel_id FROM embed_queue ORDER BY key")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(queued)
}

#[test]
fn long_texts_cut_by_the_old_embedder_are_embedded_again() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut conn = Connection::open(dir.path().join("helm.db"))?;
    schema_9_with_words(&mut conn)?;
    migrate_to(&mut conn, 16)?;
    let long = "The venue contract, clause by clause. ".repeat(8);
    conn.execute(
        "INSERT INTO messages (id, channel_id, thread_id, author_kind, author_user_id, author_name, \
         content, status, created, updated) VALUES (8, 1, 1, 'human', 1, 'someone', ?1, 'complete', 0, 0)",
        [&long],
    )?;
    conn.execute(
        "INSERT INTO memory_items (id, channel_id, kind, content, source_kind, author_type, scope, \
         status, created) VALUES (4, 2, 'decision', ?1, 'user_action', 'human', 'channel', 'current', 0)",
        [&long],
    )?;
    // Short and long messages and records, all embedded; the long ones twice (two models).
    let queued = queued_by_migrations(
        &mut conn,
        &[
            ("mini", ItemKey::message(MessageId(1)), 1),
            ("mini", ItemKey::message(MessageId(8)), 1),
            ("other", ItemKey::message(MessageId(8)), 1),
            ("mini", ItemKey::memory(MemoryId(1)), 1),
            ("mini", ItemKey::memory(MemoryId(4)), 2),
            ("other", ItemKey::memory(MemoryId(4)), 2),
        ],
    )?;
    assert_eq!(
        queued,
        vec![
            (ItemKey::memory(MemoryId(4)).0, 2),
            (ItemKey::message(MessageId(8)).0, 1),
        ]
    );
    let kept: i64 = conn.query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))?;
    assert_eq!(kept, 6, "the old vectors serve until the new ones are made");
    Ok(())
}

#[test]
fn messages_embedded_without_their_context_are_embedded_again() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut conn = Connection::open(dir.path().join("helm.db"))?;
    schema_9_with_words(&mut conn)?;
    migrate_to(&mut conn, 14)?;
    // Two models' vectors of one message, another message's, and a record's.
    let queued = queued_by_migrations(
        &mut conn,
        &[
            ("mini", ItemKey::message(MessageId(5)), 1),
            ("other", ItemKey::message(MessageId(5)), 1),
            ("mini", ItemKey::message(MessageId(7)), 2),
            ("mini", ItemKey::memory(MemoryId(3)), 1),
        ],
    )?;
    assert_eq!(
        queued,
        vec![
            (ItemKey::message(MessageId(5)).0, 1),
            (ItemKey::message(MessageId(7)).0, 2)
        ]
    );
    // Until then the old vectors still serve.
    let kept: i64 = conn.query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))?;
    assert_eq!(kept, 4);
    // A recall outside the server embeds only what has no vector at all.
    conn.execute(
        "INSERT INTO embed_queue (key, channel_id) VALUES (?1, 1)",
        [ItemKey::message(MessageId(9)).0],
    )?;
    let keys = |model: Option<&str>| -> anyhow::Result<Vec<ItemKey>> {
        Ok(
            crate::store::sqlite::recall::backlog(&conn, None, 10, model)?
                .into_iter()
                .map(|(key, _, _)| key)
                .collect(),
        )
    };
    let (five, seven, nine) = (
        ItemKey::message(MessageId(5)),
        ItemKey::message(MessageId(7)),
        ItemKey::message(MessageId(9)),
    );
    assert_eq!(keys(None)?, vec![nine, seven, five]);
    assert_eq!(keys(Some("mini"))?, vec![nine]);
    assert_eq!(keys(Some("other"))?, vec![nine, seven]);
    Ok(())
}
