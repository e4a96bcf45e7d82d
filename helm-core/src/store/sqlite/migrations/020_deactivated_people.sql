-- People can be deactivated: when (ms), or NULL while active. A deactivated
-- person cannot sign in and their sessions and API tokens are refused; their
-- messages, threads and records stay under their name. The Captain is never
-- deactivated (the store refuses it first; this keeps it so).
ALTER TABLE users ADD COLUMN deactivated INTEGER
    CHECK (deactivated IS NULL OR role <> 'captain');
