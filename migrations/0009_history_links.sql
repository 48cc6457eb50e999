-- Hostile transcripts (issue 29).
--
-- `ctime_ns`: a same-size rewrite with its mtime put back changes the ctime,
-- which no one can set: an unchanged transcript matches size, mtime, inode
-- and ctime. 0 on rows from before, which the next refresh fills in.
ALTER TABLE history_files ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0;

-- A session's files in their order (by their first time), read from the
-- index alone: session-context reads only the rows it shows.
DROP INDEX history_messages_session;
CREATE INDEX history_messages_session ON history_messages (session, project, sidechain, file, at);
