-- A call Skipper handed to the Captain is answered when the Captain (or an
-- admin) writes in its thread: who, and when (ms). Until then it is one of
-- the questions waiting for them.
ALTER TABLE escalations ADD COLUMN answered_by TEXT;
ALTER TABLE escalations ADD COLUMN answered_at INTEGER;
