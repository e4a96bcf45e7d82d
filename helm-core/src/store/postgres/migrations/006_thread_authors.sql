-- Whether a message wakes the resident agent depends on who wrote in its
-- thread before (has the agent replied, has a second human spoken). These
-- indexes answer both with a seek, where the post used to read every
-- message of the thread.
CREATE INDEX messages_thread_humans ON messages(thread_id, author_user_id)
    WHERE author_user_id IS NOT NULL;
CREATE INDEX messages_thread_replies ON messages(thread_id, author_agent_id)
    WHERE author_agent_id IS NOT NULL AND status = 'complete';
