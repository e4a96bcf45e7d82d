-- Vectors numbered in the order they are stored, so recall refreshes a
-- channel it holds in memory by reading only the vectors stored since
-- (`seq > last`), where it used to read the whole channel again after any
-- new vector: about a second per recall in a 100,000-item channel.
--
-- A rowid table, where it was WITHOUT ROWID: a 1,536-byte vector is over
-- what an index b-tree keeps in its page, so every row spilled to an
-- overflow page and loading a channel read two pages per vector.
-- AUTOINCREMENT, so a number is never given twice, even after the newest
-- row is replaced or deleted.
CREATE TABLE vectors (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    model       TEXT    NOT NULL,
    key         INTEGER NOT NULL,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    vector      BLOB    NOT NULL
);
INSERT INTO vectors (model, key, channel_id, vector)
    SELECT model, key, channel_id, vector FROM embeddings ORDER BY channel_id, key;
DROP TABLE embeddings;
ALTER TABLE vectors RENAME TO embeddings;
CREATE UNIQUE INDEX embeddings_key ON embeddings(model, key);
CREATE INDEX embeddings_channel ON embeddings(model, channel_id, seq);
