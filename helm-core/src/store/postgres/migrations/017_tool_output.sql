-- What a tool gave back to its agent (a command's exit and output), kept
-- cut for people to read on its card and for later turns of the thread.
ALTER TABLE tool_actions ADD COLUMN IF NOT EXISTS output TEXT;
