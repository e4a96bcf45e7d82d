-- What each person has read, and whom each message mentions: unread counts
-- and mention notifications for the web UI.

-- How far each person has read each channel (a message id; only moves on).
CREATE TABLE read_markers (
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    last_read   INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    PRIMARY KEY (user_id, channel_id)
) WITHOUT ROWID;

-- One row per person a finished message mentions with `@name`.
CREATE TABLE mentions (
    message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, message_id)
) WITHOUT ROWID;
CREATE INDEX mentions_by_channel ON mentions(user_id, channel_id, message_id);

-- The feed finds each thread by its root message.
CREATE INDEX threads_root ON threads(root_message_id);
