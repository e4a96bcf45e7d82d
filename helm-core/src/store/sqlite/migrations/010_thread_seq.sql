-- Each thread message's place in its thread (1, 2, …), so the thread tail
-- says how many messages it left out by subtracting two places instead of
-- counting the thread's rows on every turn. Set by the insert from the
-- thread's newest message; a message written without one (NULL) makes the
-- tail count as before.

ALTER TABLE messages ADD COLUMN seq INTEGER;

UPDATE messages SET seq = placed.n
FROM (SELECT id, row_number() OVER (PARTITION BY thread_id ORDER BY id) AS n
      FROM messages WHERE thread_id IS NOT NULL) AS placed
WHERE messages.id = placed.id;
