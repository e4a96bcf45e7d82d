-- Agent turns: the durable unit of agent work. A turn's admission (trigger,
-- pending reply, state) is written before anyone is told it exists.

CREATE TABLE turns (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id          INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id           INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    agent_id            INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    trigger_message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    reply_message_id    INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    requested_by        INTEGER REFERENCES users(id),
    state               TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'completed',
                            'waiting', 'failed', 'stopped', 'cancelled', 'interrupted')),
    provider            TEXT,
    model               TEXT,
    error               TEXT,
    steps               INTEGER NOT NULL DEFAULT 0,
    input_tokens        INTEGER NOT NULL DEFAULT 0,
    output_tokens       INTEGER NOT NULL DEFAULT 0,
    queued_at           INTEGER NOT NULL,
    started_at          INTEGER,
    finished_at         INTEGER
);
CREATE INDEX turns_thread ON turns(thread_id, id);
CREATE INDEX turns_live ON turns(state, id) WHERE state IN ('queued', 'running');
-- One running turn per thread, enforced by the database.
CREATE UNIQUE INDEX turns_one_running_per_thread ON turns(thread_id) WHERE state = 'running';
-- A message wakes an agent at most once, so a retried admission never duplicates.
CREATE UNIQUE INDEX turns_one_per_trigger ON turns(trigger_message_id, agent_id);
-- An end state is final: no later write may move a turn out of it.
CREATE TRIGGER turns_end_states_are_final BEFORE UPDATE OF state ON turns
    WHEN OLD.state NOT IN ('queued', 'running') AND NEW.state != OLD.state
BEGIN
    SELECT RAISE(ABORT, 'a finished turn cannot change state');
END;

ALTER TABLE tool_actions ADD COLUMN turn_id INTEGER REFERENCES turns(id) ON DELETE SET NULL;
