-- Helm's foundation schema: the entities of the product spec (§10) and the
-- invariants the database itself enforces. Timestamps are Unix milliseconds.

CREATE TABLE workspaces (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    created     INTEGER NOT NULL
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces(id),
    name          TEXT    NOT NULL,
    display_name  TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('captain', 'admin', 'member')),
    created       INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
-- One Captain per workspace.
CREATE UNIQUE INDEX users_one_captain ON users(workspace_id) WHERE role = 'captain';

CREATE TABLE channels (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id    INTEGER NOT NULL REFERENCES workspaces(id),
    name            TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    purpose         TEXT    NOT NULL CHECK (length(trim(purpose)) > 0),
    kind            TEXT    NOT NULL CHECK (kind IN ('home', 'agent')),
    status          TEXT    NOT NULL CHECK (status IN ('active', 'archived')),
    visibility      TEXT    NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
    created_by      INTEGER NOT NULL REFERENCES users(id),
    created         INTEGER NOT NULL,
    status_changed  INTEGER NOT NULL
);
-- Names are unique among live channels (active and archived; deleted ones
-- leave no row).
CREATE UNIQUE INDEX channels_live_name ON channels(workspace_id, name)
    WHERE status IN ('active', 'archived');
-- One home (#main) per workspace, and it is never archived.
CREATE UNIQUE INDEX channels_one_home ON channels(workspace_id) WHERE kind = 'home';
CREATE TRIGGER channels_home_stays_active BEFORE UPDATE OF status ON channels
    WHEN OLD.kind = 'home' AND NEW.status != 'active'
BEGIN
    SELECT RAISE(ABORT, '#main is Skipper''s home and cannot be archived');
END;
CREATE TRIGGER channels_home_not_deleted BEFORE DELETE ON channels
    WHEN OLD.kind = 'home'
BEGIN
    SELECT RAISE(ABORT, '#main is Skipper''s home and cannot be deleted');
END;
CREATE TRIGGER channels_kind_fixed BEFORE UPDATE OF kind ON channels
    WHEN NEW.kind != OLD.kind
BEGIN
    SELECT RAISE(ABORT, 'a channel''s kind cannot change');
END;

CREATE TABLE channel_members (
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('owner', 'member')),
    joined      INTEGER NOT NULL,
    PRIMARY KEY (channel_id, user_id)
) WITHOUT ROWID;
CREATE INDEX channel_members_user ON channel_members(user_id);

CREATE TABLE agents (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces(id),
    kind          TEXT    NOT NULL CHECK (kind IN ('skipper', 'channel')),
    -- The mention handle, without '@'.
    name          TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
    display_name  TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('ready', 'working', 'waiting', 'paused')),
    created       INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
-- Exactly one Skipper per workspace: at most one here, at least one because
-- bootstrap creates it and it cannot be deleted.
CREATE UNIQUE INDEX agents_one_skipper ON agents(workspace_id) WHERE kind = 'skipper';
CREATE TRIGGER agents_skipper_stays BEFORE DELETE ON agents
    WHEN OLD.kind = 'skipper'
BEGIN
    SELECT RAISE(ABORT, 'Skipper cannot be removed');
END;
CREATE TRIGGER agents_skipper_not_paused BEFORE UPDATE OF status ON agents
    WHEN OLD.kind = 'skipper' AND NEW.status = 'paused'
BEGIN
    SELECT RAISE(ABORT, 'Skipper cannot be paused');
END;
CREATE TRIGGER agents_kind_fixed BEFORE UPDATE OF kind ON agents
    WHEN NEW.kind != OLD.kind
BEGIN
    SELECT RAISE(ABORT, 'an agent''s kind cannot change');
END;

-- The resident binding: one agent per ordinary channel and one channel per
-- agent, immutable once made.
CREATE TABLE agent_channels (
    agent_id    INTEGER NOT NULL UNIQUE REFERENCES agents(id) ON DELETE CASCADE,
    channel_id  INTEGER NOT NULL UNIQUE REFERENCES channels(id) ON DELETE CASCADE,
    bound_at    INTEGER NOT NULL,
    PRIMARY KEY (agent_id, channel_id)
) WITHOUT ROWID;
CREATE TRIGGER agent_channels_residents_only BEFORE INSERT ON agent_channels
    WHEN (SELECT kind FROM agents WHERE id = NEW.agent_id) IS NOT 'channel'
      OR (SELECT kind FROM channels WHERE id = NEW.channel_id) IS NOT 'agent'
BEGIN
    SELECT RAISE(ABORT, 'only a channel agent can be bound, and only to an agent channel');
END;
CREATE TRIGGER agent_channels_immutable BEFORE UPDATE ON agent_channels
BEGIN
    SELECT RAISE(ABORT, 'an agent''s channel binding cannot change');
END;

CREATE TABLE agent_profiles (
    agent_id           INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    purpose            TEXT    NOT NULL,
    instructions       TEXT    NOT NULL DEFAULT '',
    workspace_ref      TEXT    NOT NULL,
    memory_namespace   TEXT    NOT NULL UNIQUE,
    capability_policy  TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(capability_policy)),
    updated            INTEGER NOT NULL
);

-- Every grant or revocation of a capability, as it happened; the profile's
-- capability_policy is the current sum of them.
CREATE TABLE agent_capabilities (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    capability  TEXT    NOT NULL,
    detail      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(detail)),
    granted_by  TEXT    NOT NULL,
    granted_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
CREATE INDEX agent_capabilities_agent ON agent_capabilities(agent_id);

-- Where each channel's world lives, relative to the data root.
CREATE TABLE channel_workspaces (
    channel_id  INTEGER PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
    root        TEXT    NOT NULL UNIQUE,
    created     INTEGER NOT NULL
);

CREATE TABLE threads (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id       INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    root_message_id  INTEGER REFERENCES messages(id) ON DELETE SET NULL
                         DEFERRABLE INITIALLY DEFERRED,
    title            TEXT    NOT NULL,
    status           TEXT    NOT NULL
                         CHECK (status IN ('open', 'waiting', 'resolved', 'failed', 'archived')),
    summary          TEXT    NOT NULL DEFAULT '',
    opened_by        INTEGER REFERENCES users(id) ON DELETE SET NULL,
    opened_at        INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    external_id      TEXT
);
CREATE INDEX threads_channel ON threads(channel_id, updated_at);
CREATE UNIQUE INDEX threads_external ON threads(channel_id, external_id)
    WHERE external_id IS NOT NULL;

CREATE TABLE messages (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id       INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id        INTEGER REFERENCES threads(id) ON DELETE CASCADE,
    author_kind      TEXT    NOT NULL
                         CHECK (author_kind IN ('human', 'agent', 'skipper', 'system', 'guest')),
    -- Set for human and agent authors; users are deactivated, never deleted,
    -- and an agent's messages go with its channel.
    author_user_id   INTEGER REFERENCES users(id),
    author_agent_id  INTEGER REFERENCES agents(id),
    -- The author's name or handle at the time of writing.
    author_name      TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    status           TEXT    NOT NULL
                         CHECK (status IN ('pending', 'complete', 'streaming', 'failed', 'stopped', 'interrupted')),
    provider         TEXT,
    model            TEXT,
    external_id      TEXT,
    created          INTEGER NOT NULL,
    updated          INTEGER NOT NULL,
    CHECK ((author_kind = 'human') = (author_user_id IS NOT NULL)),
    CHECK ((author_kind IN ('agent', 'skipper')) = (author_agent_id IS NOT NULL))
);
CREATE INDEX messages_thread ON messages(thread_id, id);
CREATE INDEX messages_channel ON messages(channel_id, id);
CREATE INDEX messages_external ON messages(channel_id, external_id) WHERE external_id IS NOT NULL;

-- Structured session summaries (goal, work, result, open items, decisions).
CREATE TABLE thread_summaries (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    goal        TEXT    NOT NULL,
    work_done   TEXT    NOT NULL,
    result      TEXT    NOT NULL,
    open_items  TEXT    NOT NULL,
    decisions   TEXT    NOT NULL,
    trigger     TEXT    NOT NULL,
    provider    TEXT,
    model       TEXT,
    created     INTEGER NOT NULL
);
CREATE INDEX thread_summaries_thread ON thread_summaries(thread_id, id);

CREATE TABLE memory_items (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id         INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id          INTEGER REFERENCES threads(id) ON DELETE SET NULL,
    kind               TEXT    NOT NULL
                           CHECK (kind IN ('summary', 'decision', 'fact', 'preference', 'artifact_ref')),
    content            TEXT    NOT NULL CHECK (length(trim(content)) > 0),
    source_kind        TEXT    NOT NULL
                           CHECK (source_kind IN ('message', 'thread', 'user_action', 'import')),
    source_message_id  INTEGER REFERENCES messages(id) ON DELETE SET NULL,
    author_type        TEXT    NOT NULL CHECK (author_type IN ('human', 'agent', 'skipper', 'system')),
    scope              TEXT    NOT NULL CHECK (scope IN ('thread', 'channel', 'workspace')),
    status             TEXT    NOT NULL CHECK (status IN ('current', 'superseded', 'forgotten')),
    superseded_by      INTEGER REFERENCES memory_items(id) ON DELETE SET NULL,
    confidence         REAL    CHECK (confidence IS NULL OR confidence BETWEEN 0 AND 1),
    pinned             INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created            INTEGER NOT NULL
);
CREATE INDEX memory_items_channel ON memory_items(channel_id, status, kind);
CREATE INDEX memory_items_thread ON memory_items(thread_id);

CREATE TABLE artifacts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id   INTEGER REFERENCES threads(id) ON DELETE SET NULL,
    path        TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('file', 'upload', 'link')),
    created_by  TEXT    NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    UNIQUE (channel_id, path)
);
CREATE INDEX artifacts_thread ON artifacts(thread_id);

CREATE TABLE tool_actions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id        INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    channel_id      INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    thread_id       INTEGER REFERENCES threads(id) ON DELETE SET NULL,
    tool            TEXT    NOT NULL,
    input_summary   TEXT    NOT NULL,
    result_summary  TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL
                        CHECK (status IN ('running', 'ok', 'error', 'denied', 'cancelled')),
    isolation       TEXT,
    duration_ms     INTEGER,
    created         INTEGER NOT NULL,
    finished        INTEGER
);
CREATE INDEX tool_actions_channel ON tool_actions(channel_id, id);
CREATE INDEX tool_actions_thread ON tool_actions(thread_id, id);

CREATE TABLE escalations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id      INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    from_agent_id  INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    from_user_id   INTEGER REFERENCES users(id) ON DELETE SET NULL,
    reason         TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('open', 'resolved', 'handed_to_captain')),
    resolved_by    TEXT,
    outcome        TEXT,
    created        INTEGER NOT NULL,
    resolved_at    INTEGER
);
CREATE INDEX escalations_thread ON escalations(thread_id);

-- The provider registry. api_key_ref names where the key lives (never the key).
CREATE TABLE providers (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL UNIQUE,
    kind           TEXT    NOT NULL,
    base_url       TEXT    NOT NULL,
    api_key_ref    TEXT,
    default_model  TEXT,
    extra_headers  TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(extra_headers)),
    created        INTEGER NOT NULL
);

-- Model choices per level; a NULL provider means "inherit".
CREATE TABLE model_policies (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces(id),
    scope         TEXT    NOT NULL CHECK (scope IN ('workspace', 'channel', 'session')),
    channel_id    INTEGER REFERENCES channels(id) ON DELETE CASCADE,
    thread_id     INTEGER REFERENCES threads(id) ON DELETE CASCADE,
    provider      TEXT,
    model         TEXT,
    updated       INTEGER NOT NULL,
    CHECK ((scope = 'workspace' AND channel_id IS NULL AND thread_id IS NULL)
        OR (scope = 'channel' AND channel_id IS NOT NULL AND thread_id IS NULL)
        OR (scope = 'session' AND thread_id IS NOT NULL)),
    CHECK (model IS NULL OR provider IS NOT NULL)
);
CREATE UNIQUE INDEX model_policies_workspace ON model_policies(workspace_id)
    WHERE scope = 'workspace';
CREATE UNIQUE INDEX model_policies_channel ON model_policies(channel_id) WHERE scope = 'channel';
CREATE UNIQUE INDEX model_policies_session ON model_policies(thread_id) WHERE scope = 'session';

-- Lifecycle records. No foreign key: the journal outlives deleted channels.
CREATE TABLE journal (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id    INTEGER,
    channel_name  TEXT,
    actor         TEXT    NOT NULL CHECK (json_valid(actor)),
    action        TEXT    NOT NULL,
    detail        TEXT    NOT NULL DEFAULT '',
    created       INTEGER NOT NULL
);
CREATE INDEX journal_channel ON journal(channel_id, id);

-- The durable event log; seq is the resume point for every reader.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id  INTEGER,
    type        TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    created     INTEGER NOT NULL
);
CREATE INDEX events_channel ON events(channel_id, seq);
