-- Vectors numbered in the order they are stored, so recall refreshes a
-- channel it holds in memory by reading only the vectors stored since
-- (`seq > last`), on every node, where a node used to read a whole channel
-- again and never learnt of vectors another node stored. The numbers come
-- from one counter row held until commit (a sequence can commit out of
-- order, and a reader would step past a number still to appear).
CREATE TABLE vector_counter (
    id    SMALLINT PRIMARY KEY CHECK (id = 1),
    last  BIGINT   NOT NULL
);
ALTER TABLE embeddings ADD COLUMN seq BIGINT;
WITH numbered AS (
    SELECT model, key, row_number() OVER (ORDER BY channel_id, key) AS n FROM embeddings
)
UPDATE embeddings e SET seq = numbered.n
    FROM numbered WHERE e.model = numbered.model AND e.key = numbered.key;
INSERT INTO vector_counter (id, last) SELECT 1, coalesce(max(seq), 0) FROM embeddings;
ALTER TABLE embeddings ALTER COLUMN seq SET NOT NULL;
DROP INDEX embeddings_channel;
CREATE INDEX embeddings_channel ON embeddings(model, channel_id, seq);
