-- Word search reads English words by their stems, as SQLite's porter
-- tokenizer does: "tournaments" finds "tournament", "hiking" finds "hike".
-- The `simple` configuration of migration 1 matched only the written form,
-- so the same question found less on PostgreSQL than on SQLite. `english`
-- also leaves out stop words, which queries leave out already.
--
-- Each row keeps its words (`words`, generated): a search reads them where
-- it used to parse every matched row's text twice (to recheck the index
-- and to rank), which was most of its time. A message's words exist once
-- it is a final message of a thread, as recall searches them: a reply
-- being streamed is rewritten with each piece, and its words would be
-- parsed again each time. Adding the columns rewrites both tables once.
-- (It may run again on its own result: the store's tests replay the
-- migrations after 10 on rows.)
DROP INDEX IF EXISTS messages_words;
DROP INDEX IF EXISTS memory_items_words;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS words tsvector GENERATED ALWAYS AS (
    CASE WHEN status = 'complete' AND thread_id IS NOT NULL AND author_kind <> 'system'
        THEN to_tsvector('english', content) END
) STORED;
ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS words tsvector GENERATED ALWAYS AS (
    to_tsvector('english', content)
) STORED;
CREATE INDEX messages_words ON messages USING gin (words);
CREATE INDEX memory_items_words ON memory_items USING gin (words);
