-- Word search reads English words by their stems, as SQLite's porter
-- tokenizer does: "tournaments" finds "tournament", "hiking" finds "hike".
-- The `simple` configuration of migration 1 matched only the written form,
-- so the same question found less on PostgreSQL than on SQLite. `english`
-- also leaves out stop words, which queries leave out already. The indexes
-- are rebuilt here, once; queries name the same configuration, or the
-- indexes are not used.
DROP INDEX messages_words;
DROP INDEX memory_items_words;
CREATE INDEX messages_words ON messages USING gin (to_tsvector('english', content));
CREATE INDEX memory_items_words ON memory_items USING gin (to_tsvector('english', content));
