-- A text longer than the model's one sequence (256 tokens) is now read in
-- overlapping windows, where before it was cut. Vectors of texts that may
-- have been cut (250 characters or more: a token covers at least one) are
-- made again, in the background, newest first; until then each keeps its
-- old vector, of the same model and space.
INSERT INTO embed_queue (key, channel_id)
    SELECT e.key, e.channel_id FROM embeddings e JOIN messages m ON m.id = e.key / 2
    WHERE e.key % 2 = 0 AND length(m.content) >= 250
    UNION
    SELECT e.key, e.channel_id FROM embeddings e JOIN memory_items r ON r.id = e.key / 2
    WHERE e.key % 2 = 1 AND length(r.content) >= 250
    ON CONFLICT DO NOTHING;
