-- People can be deactivated: when (ms), or NULL while active. A deactivated
-- person cannot sign in and their sessions and API tokens are refused; their
-- messages, threads and records stay under their name. The Captain is never
-- deactivated (the store refuses it first; this keeps it so). Safe to run
-- again (the migration tests replay migrations over a live schema).
ALTER TABLE users ADD COLUMN IF NOT EXISTS deactivated BIGINT;
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_captain_active;
ALTER TABLE users ADD CONSTRAINT users_captain_active
    CHECK (deactivated IS NULL OR role <> 'captain');
