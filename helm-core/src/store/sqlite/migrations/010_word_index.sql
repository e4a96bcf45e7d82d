-- One word index for every channel, in place of a table per channel
-- (`recall_c<id>`, and `recall_workspace` for shared records). A table per
-- channel made each channel's first message a schema change: five new schema
-- objects, and every prepared statement of every connection re-prepared.
-- The shared table keeps each channel's entries in a rowid range of their
-- own: the channel id in the rowid's high bits (from bit 40), the item's key
-- in the low bits, shared records again in range 0. A search seeks to its
-- range inside the index; BM25's per-row figures are untouched.
-- The entries of the old tables are moved here (and the tables dropped) by
-- the migration's second step, in code: `schema/word_index.rs`.

CREATE VIRTUAL TABLE recall_words USING fts5(
    body, prev,
    content='', contentless_delete=1, tokenize='porter unicode61'
);
