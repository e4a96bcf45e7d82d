//! The shared word index ranks each channel exactly as a table of the
//! channel's own did (FTS5's `bm25()` over that table), and leaves a deleted
//! channel's words behind nowhere.

use rusqlite::{Connection, params};

use super::{english, merging, words};
use crate::memory::recall::ItemKey;
use crate::model::{ChannelId, MessageId};

const WORDS: &[&str] = &[
    "budget", "venue", "keynote", "disk", "logs", "rotate", "launch", "catering", "speaker",
    "staging", "alert", "deploy", "invoice", "travel", "hotel", "badge", "slides", "daily",
];

/// A fixed pseudo-random text of 3–14 words (a linear congruential walk).
fn text(seed: &mut u64) -> String {
    let mut next = || {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) as usize
    };
    let len = 3 + next() % 12;
    (0..len)
        .map(|_| WORDS[next() % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn store() -> anyhow::Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    super::super::schema::migrate(&mut conn)?;
    words::prepare(&conn)?;
    conn.execute_batch(
        "CREATE VIRTUAL TABLE own USING fts5(body, prev, content='', \
         contentless_delete=1, tokenize='helm_english')",
    )?;
    Ok(conn)
}

/// FTS5's own ranking over a table of one channel's items.
fn own_table_ranking(
    conn: &Connection,
    expression: &str,
    depth: usize,
) -> anyhow::Result<Vec<(ItemKey, f64)>> {
    Ok(conn
        .prepare(
            "SELECT rowid, -bm25(own, 1.0, 1.0) FROM own WHERE own MATCH ?1 \
             ORDER BY bm25(own, 1.0, 1.0), rowid LIMIT ?2",
        )?
        .query_map(params![expression, depth as i64], |r| {
            Ok((ItemKey(r.get(0)?), r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?)
}

#[test]
fn each_channel_is_ranked_with_its_own_statistics() -> anyhow::Result<()> {
    let conn = store()?;
    let mut seed = 7;
    // Channel 1 is the one compared; channel 2 talks far more, about the
    // same words, so workspace-wide statistics would rank channel 1 wrongly.
    for id in 1..=1500i64 {
        let channel = if id % 4 == 0 { 1 } else { 2 };
        let (mut body, prev) = (text(&mut seed), text(&mut seed));
        if id == 4 {
            // Over 127 tokens: a size of more than one varint byte.
            body = (0..40)
                .map(|_| text(&mut seed))
                .collect::<Vec<_>>()
                .join(" ");
        }
        let key = ItemKey::message(MessageId(id));
        words::insert(&conn, ChannelId(channel), key, &body, &prev, false)?;
        if channel == 1 {
            conn.execute(
                "INSERT INTO own (rowid, body, prev) VALUES (?1, ?2, ?3)",
                params![key.0, body, prev],
            )?;
        }
    }
    // The token counts kept per insert (read from FTS5's sizes table) are
    // FTS5's lengths: asked for every word there is, `helm_row`'s length
    // bound (one past the last match of each column) is the length itself.
    let kept: i64 = conn.query_row(
        "SELECT tokens FROM recall_stats WHERE scope = 'c1'",
        [],
        |r| r.get(0),
    )?;
    let all_words = words::any_of(WORDS.iter().copied());
    let lengths: Vec<Vec<u8>> = conn
        .prepare("SELECT helm_row(recall) FROM recall WHERE recall MATCH ?1")?
        .query_map(
            [format!("chan : \"c1\" AND {{body prev}} : ({all_words})")],
            |r| r.get(0),
        )?
        .collect::<rusqlite::Result<_>>()?;
    let reported: i64 = lengths
        .iter()
        .filter_map(|blob| blob.first_chunk::<4>())
        .map(|b| i64::from(u32::from_le_bytes(*b)))
        .sum();
    assert_eq!((kept, lengths.len()), (reported, 375));
    let questions: &[&[&str]] = &[
        &["budget"],
        &["venue", "catering"],
        &["rotate", "logs", "daily"],
        &["keynote", "speaker", "slides", "hotel"],
        &["nothing", "matches"],
    ];
    for question in questions {
        let terms: Vec<String> = question.iter().map(|s| s.to_string()).collect();
        let expression = words::any_of(question.iter().copied());
        // Shallow depths leave most rows' lengths unread (`words::rank`);
        // the ranking must not change for it.
        for depth in [1, 5, 40, 400] {
            let ours = words::lexical(&conn, ChannelId(1), &terms, depth, None)?;
            let fts5 = own_table_ranking(&conn, &expression, depth)?;
            same_ranking(question, &ours, &fts5);
        }
    }
    Ok(())
}

/// The same items with the same scores; equal scores may come in either
/// order, unequal ones may not.
fn same_ranking(question: &[&str], ours: &[(ItemKey, f64)], fts5: &[(ItemKey, f64)]) {
    assert_eq!(ours.len(), fts5.len(), "{question:?}");
    for ((key, score), (their_key, their_score)) in ours.iter().zip(fts5) {
        assert!(
            (score - their_score).abs() < 1e-9,
            "{question:?}: {score} against {their_score}"
        );
        // Equal scores may come in either order; unequal ones may not.
        if (score - their_score).abs() < 1e-12 && key != their_key {
            let tied = fts5
                .iter()
                .filter(|(_, s)| (s - score).abs() < 1e-12)
                .count();
            assert!(tied > 1, "{question:?}: {key:?} against {their_key:?}");
        }
    }
}

#[test]
fn a_plural_and_its_singular_find_each_other_ranked_as_fts5_ranks_them() -> anyhow::Result<()> {
    let conn = store()?;
    let texts = [
        "the walrus sleeps on the pier",
        "two walruses swim past the pier",
        "walruses and a walrus calf",
        "the classes start at nine",
        "one class is full",
        "ponies in the field",
        "a pony and its rider",
    ];
    for (id, body) in (1..).zip(texts) {
        let key = ItemKey::message(MessageId(id));
        words::insert(&conn, ChannelId(1), key, body, "", false)?;
        conn.execute(
            "INSERT INTO own (rowid, body, prev) VALUES (?1, ?2, '')",
            params![key.0, body],
        )?;
    }
    let keys = |ids: &[i64]| -> Vec<ItemKey> {
        ids.iter()
            .map(|&id| ItemKey::message(MessageId(id)))
            .collect()
    };
    let questions: [(&[&str], Vec<ItemKey>); 6] = [
        (&["walrus"], keys(&[1, 2, 3])),
        (&["walruses"], keys(&[1, 2, 3])),
        (&["class"], keys(&[4, 5])),
        (&["classes"], keys(&[4, 5])),
        (&["pony"], keys(&[6, 7])),
        (&["ponies", "pier"], keys(&[1, 2, 6, 7])),
    ];
    for (question, expected) in questions {
        let terms: Vec<String> = question.iter().map(|s| s.to_string()).collect();
        let ours = words::lexical(&conn, ChannelId(1), &terms, 10, None)?;
        let mut found: Vec<ItemKey> = ours.iter().map(|(k, _)| *k).collect();
        found.sort();
        assert_eq!(found, expected, "{question:?}");
        let fts5 = own_table_ranking(&conn, &words::any_of(question.iter().copied()), 10)?;
        same_ranking(question, &ours, &fts5);
    }
    Ok(())
}

#[test]
fn tokens_are_stemmed_as_snowball_english_stems_them() {
    let stem = |word: &str| String::from_utf8_lossy(&english::stem(word.as_bytes())).into_owned();
    // As PostgreSQL's `english` configuration stems them.
    for (word, expected) in [
        ("walrus", "walrus"),
        ("walruses", "walrus"),
        ("class", "class"),
        ("classes", "class"),
        ("ponies", "poni"),
        ("tournaments", "tournament"),
        ("running", "run"),
        ("c12", "c12"),
        ("w", "w"),
    ] {
        assert_eq!(stem(word), expected, "{word}");
    }
    // Too long to be a word, or not UTF-8: as it is.
    let long = "x".repeat(65) + "ing";
    assert_eq!(stem(&long), long);
    assert_eq!(&*english::stem(b"walrus\xff"), b"walrus\xff");
    // Other scripts and odd endings do not make the stemmer itself panic
    // (`stem` would index the token as it is, but a panic here says so).
    let snowball = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    for word in [
        "наблюдения",
        "東京",
        "ǉadfadfadf",
        "ıing",
        "ß",
        "'s",
        "y",
        "yy",
        "ied",
        "eing",
        "ion",
        "gener",
        "ǅies",
        "ééé",
        "sses",
    ] {
        assert!(!snowball.stem(word).is_empty(), "{word}");
    }
}

#[test]
fn records_shared_with_the_workspace_reach_every_channel_until_theirs_is_deleted()
-> anyhow::Result<()> {
    let conn = store()?;
    let shared = ItemKey(3);
    words::insert(
        &conn,
        ChannelId(1),
        shared,
        "the venue budget is forty thousand",
        "",
        true,
    )?;
    words::insert(&conn, ChannelId(1), ItemKey(2), "book the venue", "", false)?;
    words::insert(
        &conn,
        ChannelId(2),
        ItemKey(4),
        "disk budget alert",
        "",
        false,
    )?;
    let budget = ["budget".to_string()];
    let keys = |channel| -> anyhow::Result<Vec<ItemKey>> {
        let mut keys: Vec<ItemKey> = words::lexical(&conn, ChannelId(channel), &budget, 10, None)?
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        keys.sort();
        Ok(keys)
    };
    assert_eq!(keys(1)?, vec![shared]);
    assert_eq!(keys(2)?, vec![shared, ItemKey(4)]);

    words::remove_channel(&conn, ChannelId(1))?;
    assert_eq!(keys(1)?, vec![]);
    assert_eq!(keys(2)?, vec![ItemKey(4)]);
    let stats: Vec<(String, i64)> = conn
        .prepare("SELECT scope, docs FROM recall_stats ORDER BY scope")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    assert_eq!(stats, vec![("c2".into(), 1), ("w".into(), 0)]);
    let rows: i64 = conn.query_row("SELECT count(*) FROM recall", [], |r| r.get(0))?;
    assert_eq!(rows, 1);
    Ok(())
}

#[test]
fn terms_are_quoted_and_joined_by_or() {
    assert_eq!(
        words::any_of(["caroline", "near", "agency"]),
        "\"caroline\" OR \"near\" OR \"agency\""
    );
    assert_eq!(words::any_of(["a\"b"]), "\"a\"\"b\"");
}

#[test]
fn a_plan_walks_the_rarest_terms_whose_estimates_fit_the_walk() {
    // Estimated rows per term: 5000, 100, 900, 3000.
    let plan = words::plan(
        vec![(0, 5000.0), (1, 100.0), (2, 900.0), (3, 3000.0)],
        4096.0,
    );
    assert_eq!(plan.walked, vec![1, 2, 3]);
    assert_eq!(plan.common, vec![(0, 5000.0)]);
    // Every term commoner than the walk: the rarest is walked all the same.
    let plan = words::plan(vec![(0, 9000.0), (1, 8000.0)], 4096.0);
    assert_eq!(plan.walked, vec![1]);
    assert_eq!(plan.common, vec![(0, 9000.0)]);
    // Once a term is left out, no commoner one is walked.
    let plan = words::plan(vec![(0, 10.0), (1, 5000.0), (2, 20.0)], 100.0);
    assert_eq!(plan.walked, vec![0, 2]);
    assert_eq!(plan.common, vec![(1, 5000.0)]);
}

/// A channel of 600 rows where every word of `WORDS` is common and
/// "zeppelin" is in one row of 40, with each row's text kept.
fn channel_with_a_rare_word(conn: &Connection) -> anyhow::Result<Vec<(ItemKey, String)>> {
    let mut seed = 11;
    let mut rows = Vec::new();
    for id in 1..=600i64 {
        let (mut body, prev) = (text(&mut seed), text(&mut seed));
        if id % 40 == 0 {
            body.push_str(" zeppelin");
        }
        let key = ItemKey::message(MessageId(id));
        words::insert(conn, ChannelId(1), key, &body, &prev, false)?;
        rows.push((key, format!("{body} {prev}")));
    }
    Ok(rows)
}

#[test]
fn a_narrowed_search_ranks_the_rows_holding_its_rarer_words_as_the_exact_search_does()
-> anyhow::Result<()> {
    let conn = store()?;
    let rows = channel_with_a_rare_word(&conn)?;
    let terms: Vec<String> = ["budget", "zeppelin", "venue"].map(String::from).to_vec();
    let every = words::lexical(&conn, ChannelId(1), &terms, 1000, None)?;
    assert!(every.len() > 400, "the common words match most rows");
    // What narrowing keeps: the rows holding "zeppelin", the one term whose
    // rows fit a walk of 100 (the others are in hundreds of rows); the
    // channel's 600 rows are over four walks, so the search is narrowed.
    let holding = |key: &ItemKey| {
        rows.iter()
            .any(|(k, text)| k == key && text.split(' ').any(|w| w == "zeppelin"))
    };
    let expected: Vec<(ItemKey, f64)> = every.iter().copied().filter(|(k, _)| holding(k)).collect();
    assert_eq!(expected.len(), 15);
    for depth in [5, 15, 50] {
        // The channel has fewer rows than a sample, so the common words'
        // estimates are their counts, and the scores are the exact ones.
        let narrowed = words::lexical(&conn, ChannelId(1), &terms, depth, Some(100))?;
        let question = ["budget", "zeppelin", "venue"];
        same_ranking(&question, &narrowed, &expected[..depth.min(expected.len())]);
    }
    // A channel of fewer than four walks is searched whole.
    let whole = words::lexical(&conn, ChannelId(1), &terms, 1000, Some(150))?;
    same_ranking(&["budget", "zeppelin", "venue"], &whole, &every);
    Ok(())
}

fn segments(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT count(DISTINCT segid) FROM recall_idx", [], |r| {
        r.get(0)
    })
}

#[test]
fn merging_when_idle_leaves_few_segments_and_ranks_as_before() -> anyhow::Result<()> {
    let mut conn = store()?;
    // Each insert commits alone, as posts do: a segment each, which FTS5
    // merges four at a time as they pile up.
    channel_with_a_rare_word(&conn)?;
    let before = segments(&conn)?;
    assert!(
        before >= 6,
        "the index was written in many segments: {before}"
    );
    let questions = [
        vec!["budget", "venue"],
        vec!["zeppelin", "keynote", "disk"],
        vec!["daily", "logs", "rotate", "alert"],
    ];
    let terms = |q: &Vec<&str>| q.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let mut ranked = Vec::new();
    for q in &questions {
        ranked.push(words::lexical(&conn, ChannelId(1), &terms(q), 50, None)?);
    }
    let mut steps = 0;
    while merging::merge_step(&mut conn)? {
        steps += 1;
        assert!(steps < 1000, "merging ends");
    }
    let after = segments(&conn)?;
    assert!(
        steps > 0 && after <= 2,
        "{steps} steps merged {before} segments into {after}"
    );
    assert!(!merging::merge_step(&mut conn)?, "nothing is left to merge");
    for (q, before) in questions.iter().zip(&ranked) {
        same_ranking(
            q,
            &words::lexical(&conn, ChannelId(1), &terms(q), 50, None)?,
            before,
        );
    }
    Ok(())
}
