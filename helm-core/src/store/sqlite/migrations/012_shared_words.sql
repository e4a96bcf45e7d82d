-- One word index for every channel (issue 15). A table per channel changed
-- the schema with each channel's first message, and every pooled connection
-- then re-read the whole schema: that made a channel's first message several
-- times slower than the next, and the schema grew by five objects a channel.
-- `chan` holds a row's scope tokens (`c<id>`, and `w` when shared with the
-- workspace); `recall_stats` keeps each scope's row and token counts, so
-- ranking stays channel-local. The old tables' rows are moved in, and the
-- tables dropped, by `recall::migrate` in this same transaction.
CREATE VIRTUAL TABLE recall USING fts5(chan, body, prev, content='',
    contentless_delete=1, tokenize='porter unicode61');
CREATE TABLE recall_stats (
    scope TEXT PRIMARY KEY,
    docs INTEGER NOT NULL,
    tokens INTEGER NOT NULL
) WITHOUT ROWID;
