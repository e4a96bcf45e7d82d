-- The live (queued or running) turns of each thread, in order. The
-- scheduler asks on every post and every turn's end which queued turn comes
-- first in each thread, and admission how many live turns are ahead in the
-- thread; through `turns_thread` both walked every turn the thread ever
-- ran, so a long thread made every look slower. Queries name the condition
-- as the index spells it (SQLite uses a partial index only then).
CREATE INDEX turns_thread_live ON turns(thread_id, id) WHERE state IN ('queued', 'running');
