-- Conversation history (issue 16; see memsearch/history.py): the agents'
-- session transcripts, searchable beside the memory but never mixed with it.
-- `memsearch query` and memory_search read none of these tables.
--
-- One row per transcript file read. A transcript only grows while its
-- session runs, so a file is read from `consumed` (the end of the last
-- complete line taken) onwards, as long as its earlier bytes are unchanged:
-- `head` and `tail` keep the first and the last CHECK_BYTES bytes before
-- `consumed`, compared at the next read for the price of two small reads.
-- A file that shrank, was replaced (another inode) or whose kept bytes
-- differ was rewritten, and is read again from the start. `size` and
-- `mtime_ns` let an unchanged file cost one stat().
CREATE TABLE history_files (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL,             -- the transcript root's resolved folder
    path TEXT NOT NULL,             -- relative to the root, '/'-separated
    project TEXT NOT NULL,          -- the project folder (Claude Code's slug of the cwd)
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    consumed INTEGER NOT NULL,      -- bytes taken: the end of the last complete line
    head BLOB NOT NULL,
    tail BLOB NOT NULL,
    UNIQUE (root, path)
);

-- One row per searchable part of a transcript line: what a user or the
-- assistant wrote, or a tool call or its result (role 'tool'), cleaned and
-- capped as memsearch.transcripts says. `line_at` is the line's byte offset
-- in its file: the rows of a session read in order by (file, line_at, part).
CREATE TABLE history_messages (
    id INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,          -- history_files.id
    line_at INTEGER NOT NULL,
    part INTEGER NOT NULL,
    session TEXT NOT NULL,
    project TEXT NOT NULL,
    role TEXT NOT NULL,             -- user | assistant | tool | system | summary
    at TEXT,                        -- UTC, 'YYYY-MM-DDTHH:MM:SSZ'; NULL when the line had no time
    uuid TEXT,
    sidechain INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    body_seg TEXT,                  -- CJK bigrams, as memory_fts.body_seg (memsearch.cjk)
    idx_body TEXT GENERATED ALWAYS AS (coalesce(body_seg, body)) VIRTUAL
);

CREATE INDEX history_messages_file ON history_messages (file, line_at, part);
CREATE INDEX history_messages_session ON history_messages (session);

-- As memory_fts_idx (0005): external content, Porter over unicode61, the
-- segmented copy indexed where there is one.
CREATE VIRTUAL TABLE history_fts USING fts5 (
    idx_body,
    content = 'history_messages',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 1'
);

-- A delete hands FTS5 the OLD value, or the postings stay behind.
CREATE TRIGGER history_messages_ai AFTER INSERT ON history_messages BEGIN
    INSERT INTO history_fts (rowid, idx_body) VALUES (new.id, new.idx_body);
END;

CREATE TRIGGER history_messages_ad AFTER DELETE ON history_messages BEGIN
    INSERT INTO history_fts (history_fts, rowid, idx_body) VALUES ('delete', old.id, old.idx_body);
END;

CREATE TRIGGER history_messages_au AFTER UPDATE ON history_messages
WHEN old.idx_body IS NOT new.idx_body BEGIN
    INSERT INTO history_fts (history_fts, rowid, idx_body) VALUES ('delete', old.id, old.idx_body);
    INSERT INTO history_fts (rowid, idx_body) VALUES (new.id, new.idx_body);
END;
