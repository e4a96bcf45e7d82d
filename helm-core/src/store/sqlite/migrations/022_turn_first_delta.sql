-- The seq of each streaming reply's first `message.delta`: when its turn
-- ends, the reply's deltas leave the event log (`message.completed`
-- carries the whole text). Kept with the turn, not in the process, so a
-- turn ended after a restart drops its deltas too (as PostgreSQL's
-- `turns.first_delta_seq` does).
ALTER TABLE turns ADD COLUMN first_delta_seq INTEGER;
