-- Who forgot a memory record and when: a forgotten record says so, and
-- restoring it clears both. Records forgotten before this migration keep
-- them empty (nobody knows who forgot them).
ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS forgotten_by TEXT;
ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS forgotten_at BIGINT;
