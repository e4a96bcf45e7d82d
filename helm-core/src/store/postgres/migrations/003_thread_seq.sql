-- Each thread message's place in its thread (1, 2, …), as SQLite's
-- migration 010 adds it: the thread tail says how many messages it left
-- out by subtracting two places instead of counting the thread's rows.
--
-- SQLite's single writer can take the place from the thread's newest
-- message. Here several nodes write at once, so a trigger takes it from a
-- counter on the thread's row, whoever inserts: the row stays locked until
-- the writer commits, so the places of one thread are consecutive (a
-- rolled-back insert gives its place back), never shared, and follow the
-- order writers commit in. Ids must rise with places (a thread's order is
-- its ids' order): an id is drawn before the trigger runs, so a writer that
-- waited for the lock behind one with a later id draws a new one then,
-- larger than any drawn so far; without contention ids stay as drawn.

ALTER TABLE threads ADD COLUMN last_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN seq BIGINT;

UPDATE messages SET seq = placed.n
FROM (SELECT id, row_number() OVER (PARTITION BY thread_id ORDER BY id) AS n
      FROM messages WHERE thread_id IS NOT NULL) AS placed
WHERE messages.id = placed.id;
UPDATE threads SET last_seq = coalesce(
    (SELECT max(m.seq) FROM messages m WHERE m.thread_id = threads.id), 0);

CREATE UNIQUE INDEX messages_thread_seq ON messages(thread_id, seq) WHERE seq IS NOT NULL;

CREATE FUNCTION messages_take_place() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.thread_id IS NULL THEN
        NEW.seq := NULL;
        RETURN NEW;
    END IF;
    UPDATE threads SET last_seq = last_seq + 1 WHERE id = NEW.thread_id
        RETURNING last_seq INTO NEW.seq;
    -- No thread row: leave the foreign key to refuse the insert.
    IF FOUND AND NEW.id < (SELECT max(m.id) FROM messages m WHERE m.thread_id = NEW.thread_id)
    THEN
        NEW.id := nextval(pg_get_serial_sequence('messages', 'id'));
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER messages_take_place BEFORE INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_take_place();
