-- Skipper and authority: escalation chains on turns, approvals, the
-- approval policy, and the append-only, hash-chained audit log.

ALTER TABLE turns ADD COLUMN hop INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN escalation_id INTEGER REFERENCES escalations(id) ON DELETE SET NULL;

CREATE TABLE approvals (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id     INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id      INTEGER REFERENCES threads(id) ON DELETE CASCADE,
    turn_id        INTEGER REFERENCES turns(id) ON DELETE SET NULL,
    agent_id       INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    asker_id       INTEGER REFERENCES users(id),
    action         TEXT    NOT NULL,
    summary        TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    decided_by     INTEGER REFERENCES users(id),
    decision_note  TEXT,
    created        INTEGER NOT NULL,
    expires        INTEGER NOT NULL,
    decided        INTEGER
);
CREATE INDEX approvals_pending ON approvals(status, id);
-- A decision is final.
CREATE TRIGGER approvals_decided_once BEFORE UPDATE OF status ON approvals
    WHEN OLD.status != 'pending'
BEGIN
    SELECT RAISE(ABORT, 'this approval was already decided');
END;

-- Which actions need approval: the workspace's rule (channel_id NULL) and
-- per-channel overrides. Actions without a row need approval.
CREATE TABLE approval_policy (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id  INTEGER REFERENCES channels(id) ON DELETE CASCADE,
    action      TEXT    NOT NULL,
    required    INTEGER NOT NULL CHECK (required IN (0, 1)),
    UNIQUE (channel_id, action)
);

-- Append-only, hash-chained. No foreign keys: the log outlives what it names.
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             INTEGER NOT NULL,
    channel_id     INTEGER,
    thread_id      INTEGER,
    agent          TEXT,
    asker          TEXT,
    action         TEXT    NOT NULL,
    input_summary  TEXT    NOT NULL,
    outcome        TEXT    NOT NULL,
    prev_hash      TEXT    NOT NULL,
    hash           TEXT    NOT NULL UNIQUE
);
CREATE INDEX audit_log_channel ON audit_log(channel_id, id);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
