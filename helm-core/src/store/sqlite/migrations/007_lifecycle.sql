-- Keeping the product's promises across restarts and changes of mind: a
-- tool call cut short by a crash ends `interrupted`, a turn remembers which
-- rule chose its model, and a thread has at most one open call for Skipper.

-- SQLite cannot widen a CHECK in place: the tool journal is rebuilt with
-- `interrupted` among its states. Nothing refers to it, so this is safe.
CREATE TABLE tool_actions_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id        INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    channel_id      INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id       INTEGER REFERENCES threads(id) ON DELETE SET NULL,
    tool            TEXT    NOT NULL,
    input_summary   TEXT    NOT NULL,
    result_summary  TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL
                        CHECK (status IN ('running', 'ok', 'error', 'denied', 'cancelled',
                            'interrupted')),
    isolation       TEXT,
    duration_ms     INTEGER,
    created         INTEGER NOT NULL,
    finished        INTEGER,
    turn_id         INTEGER REFERENCES turns(id) ON DELETE SET NULL
);
INSERT INTO tool_actions_new (id, agent_id, channel_id, thread_id, tool, input_summary,
    result_summary, status, isolation, duration_ms, created, finished, turn_id)
    SELECT id, agent_id, channel_id, thread_id, tool, input_summary, result_summary, status,
        isolation, duration_ms, created, finished, turn_id FROM tool_actions;
DROP TABLE tool_actions;
ALTER TABLE tool_actions_new RENAME TO tool_actions;
CREATE INDEX tool_actions_channel ON tool_actions(channel_id, id);
CREATE INDEX tool_actions_thread ON tool_actions(thread_id, id);
CREATE INDEX tool_actions_running ON tool_actions(turn_id) WHERE status = 'running';

-- Calls cut short before this version: a tool action still `running` whose
-- turn has ended (or that has no turn) was interrupted.
UPDATE tool_actions SET status = 'interrupted',
    result_summary = 'interrupted: Helm stopped while it ran'
    WHERE status = 'running' AND (turn_id IS NULL OR turn_id IN
        (SELECT id FROM turns WHERE state NOT IN ('queued', 'running')));

-- Which rule of the model policy chose a turn's model (session, channel,
-- workspace or fallback), fixed with the model when its message is accepted.
ALTER TABLE turns ADD COLUMN model_level TEXT
    CHECK (model_level IS NULL OR model_level IN ('session', 'channel', 'workspace', 'fallback'));

-- One open call for Skipper per thread. Duplicates left by earlier versions
-- are folded into the oldest open one of their thread first.
UPDATE escalations SET status = 'resolved', resolved_by = 'helm',
    outcome = 'merged into escalation ' || (SELECT min(o.id) FROM escalations o
        WHERE o.thread_id = escalations.thread_id AND o.status = 'open'),
    resolved_at = CAST(unixepoch('subsec') * 1000 AS INTEGER)
    WHERE status = 'open' AND id > (SELECT min(o.id) FROM escalations o
        WHERE o.thread_id = escalations.thread_id AND o.status = 'open');
CREATE UNIQUE INDEX escalations_one_open_per_thread ON escalations(thread_id)
    WHERE status = 'open';
