-- A stop asked for on one node, of a turn another node runs (issue 17,
-- stage 3). Cancelling a running turn is the running node's to do: the
-- asking node records who asked here, and the running node sees it when it
-- renews its lease (every second) and stops the turn as if asked itself.
ALTER TABLE turns ADD COLUMN stop_requested_by TEXT;
