-- Memory and recall: who wrote a record, the vectors for meaning-based
-- recall, and the queue of items still to embed. The word index itself is
-- one FTS5 table per channel (`recall_c<id>`), created when the channel first
-- has something to index: channel-local BM25 statistics rank better, and a
-- small table answers in a fraction of a millisecond where a shared one
-- filtered by channel takes tens.

ALTER TABLE memory_items ADD COLUMN author_name TEXT;

-- Keys are the items' FTS rowids: a message's id * 2, a memory record's id * 2 + 1.
CREATE TABLE embeddings (
    model       TEXT    NOT NULL,
    key         INTEGER NOT NULL,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    vector      BLOB    NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID;
CREATE INDEX embeddings_channel ON embeddings(model, channel_id);

CREATE TABLE embed_queue (
    key         INTEGER PRIMARY KEY,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE
);
CREATE INDEX embed_queue_channel ON embed_queue(channel_id, key);

-- The last message a summary covers, so a newer message makes it stale.
ALTER TABLE thread_summaries ADD COLUMN last_message_id INTEGER;
