-- A message is now embedded with the thread's message before it, as its
-- words were always indexed with it: an answer carries what it answers.
-- Vectors made before are made again, in the background, newest first;
-- until then each keeps its old vector, of the same model and space.
INSERT INTO embed_queue (key, channel_id)
    SELECT DISTINCT key, channel_id FROM embeddings WHERE key % 2 = 0
    ON CONFLICT DO NOTHING;
