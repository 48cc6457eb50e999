-- Hostile transcripts (issue 29).
--
-- A transcript's Fingerprint (memsearch/fingerprint.py) in full: a same-size
-- rewrite with its mtime put back changes the ctime, which no one can set;
-- (device, inode) names the file whatever its name, read once however many
-- hard links it has. -1 on rows from before: the next refresh fills them in.
ALTER TABLE history_files ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT -1;
ALTER TABLE history_files ADD COLUMN device INTEGER NOT NULL DEFAULT -1;

-- A session's files in their order (by their first time) and the number of
-- messages in each, from the index alone: session-context reads only the
-- rows it shows.
DROP INDEX history_messages_session;
CREATE INDEX history_messages_session ON history_messages (session, project, sidechain, file, at);
