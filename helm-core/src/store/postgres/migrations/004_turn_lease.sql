-- Running turns are leased (issue 17, stage 3): several nodes share one
-- database, and a turn must be run by exactly one of them.
--
-- Starting a turn is one conditional UPDATE (queued -> running) that also
-- records the node that won it (`lease_owner`), until when the lease holds
-- (`lease_expires`, Unix milliseconds) and bumps the turn's fencing token
-- (`lease_token`, a counter raised at every claim, never reset). The node
-- renews its lease while it runs the turn; a node that stops renewing (it
-- died, or lost the database) lets the lease expire, and another node may
-- then claim the turn again, which raises the token. Writes of a turn
-- (streamed text, its end) name the token their node was given and are
-- accepted only while it is current, so a node that was presumed dead and
-- wakes up cannot write over the turn's new owner.
ALTER TABLE turns
    ADD COLUMN lease_owner    TEXT,
    ADD COLUMN lease_expires  BIGINT,
    ADD COLUMN lease_token    BIGINT NOT NULL DEFAULT 0,
    -- The seq of the reply's first `message.delta` event: when the turn
    -- ends, its deltas leave the log from here on (`message.completed`
    -- carries the whole text). Kept with the turn rather than in a node's
    -- memory, since any node may end it.
    ADD COLUMN first_delta_seq BIGINT;

-- Expired leases are what a node looks for when it takes over.
CREATE INDEX turns_lease ON turns(lease_expires) WHERE state = 'running';
