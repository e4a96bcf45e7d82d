-- People signing in: password hashes, browser sessions, API tokens and
-- invitations. Secrets are never stored: a session id, an API token or an
-- invite code is kept only as its SHA-256 hash (they are long random values,
-- so a fast hash is enough); passwords are argon2id PHC strings.
--
-- Numbered 004 because 003 is reserved for the memory work on another branch;
-- on this branch it runs as the third migration (see schema.rs).

-- NULL until the person sets one (the Captain made by `init`, people added
-- from the command line): such an account cannot sign in.
ALTER TABLE users ADD COLUMN password_hash TEXT;

CREATE TABLE sessions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    secret_hash  TEXT    NOT NULL UNIQUE,
    created      INTEGER NOT NULL,
    expires      INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    secret_hash  TEXT    NOT NULL UNIQUE,
    -- The first characters of the token, so people can tell tokens apart.
    prefix       TEXT    NOT NULL,
    created      INTEGER NOT NULL,
    expires      INTEGER,
    last_used    INTEGER,
    revoked      INTEGER
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE invites (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    secret_hash  TEXT    NOT NULL UNIQUE,
    role         TEXT    NOT NULL CHECK (role IN ('admin', 'member')),
    created_by   INTEGER NOT NULL REFERENCES users(id),
    created      INTEGER NOT NULL,
    expires      INTEGER NOT NULL,
    accepted_by  INTEGER REFERENCES users(id),
    accepted_at  INTEGER,
    revoked      INTEGER,
    -- An invitation is used at most once.
    CHECK ((accepted_by IS NULL) = (accepted_at IS NULL))
);
