-- The audit log's head: the highest row id ever given out, written in the
-- same transaction as the row (a sequence would keep numbers of rolled-back
-- appends, indistinguishable from rows cut from the end of the log).
CREATE TABLE audit_counter (
    id    SMALLINT PRIMARY KEY CHECK (id = 1),
    last  BIGINT   NOT NULL
);
INSERT INTO audit_counter (id, last) VALUES (1, 0);
