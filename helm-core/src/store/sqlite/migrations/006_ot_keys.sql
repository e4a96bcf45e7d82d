-- Open Terminal keys: a channel's computer can be reached with the Open
-- Terminal protocol, authenticated by a key of that channel. Like API
-- tokens, a key is kept only as the SHA-256 hash of its secret. A channel
-- has at most one live key: rotating revokes the old one in the same
-- transaction that stores the new one.

CREATE TABLE ot_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id   INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    secret_hash  TEXT    NOT NULL UNIQUE,
    -- The first characters of the key, so people can tell keys apart.
    prefix       TEXT    NOT NULL,
    -- Whose authority the key acts with (checked again on every use).
    created_by   INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created      INTEGER NOT NULL,
    last_used    INTEGER,
    revoked      INTEGER
);
CREATE UNIQUE INDEX ot_keys_live ON ot_keys(channel_id) WHERE revoked IS NULL;
