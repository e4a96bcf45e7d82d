-- MCP tool definitions as a person approved them: a changed definition
-- (name, description, input schema) needs approval again before its tool
-- is called. One row per channel, server and tool.
CREATE TABLE mcp_pins (
    channel_id    INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    server        TEXT    NOT NULL,
    tool          TEXT    NOT NULL,
    hash          TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    input_schema  TEXT    NOT NULL,
    approval_id   INTEGER REFERENCES approvals(id) ON DELETE SET NULL,
    approved_by   INTEGER REFERENCES users(id),
    pinned_at     INTEGER NOT NULL,
    PRIMARY KEY (channel_id, server, tool)
);
