-- The nodes that share this database, and which of them holds each
-- channel's computer (its workspace, terminals and running commands live on
-- that node's host; the others reach them through it). A node's key lives
-- in its data root; `key_digest` is its SHA-256, and the id derives from
-- it. A holder is never replaced: the workspace is on its disk.
CREATE TABLE nodes (
    id            TEXT   PRIMARY KEY,
    computer_url  TEXT,
    key_digest    TEXT   NOT NULL UNIQUE,
    started       BIGINT NOT NULL
);

CREATE TABLE computer_holders (
    channel_id  BIGINT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
    node_id     TEXT   NOT NULL,
    claimed     BIGINT NOT NULL
);
