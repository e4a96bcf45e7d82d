-- The word index stems with Snowball English (`helm_english`, registered on
-- every connection by `recall::english`) instead of FTS5's porter, which
-- left "walrus" apart from "walruses" (and many -us, -ss words from their
-- plurals); PostgreSQL's `english` configuration stems with Snowball too.
-- The old table is renamed, not dropped: its rowids and scope tokens say
-- what was indexed where, and `recall::migrate::restem` indexes exactly
-- that again from the messages and records, in this same transaction, then
-- drops it. Segments merge when idle as before (`usermerge` 2, as 016).
ALTER TABLE recall RENAME TO recall_porter;
CREATE VIRTUAL TABLE recall USING fts5(chan, body, prev, content='',
    contentless_delete=1, tokenize='helm_english');
INSERT INTO recall (recall, rank) VALUES ('usermerge', 2);
