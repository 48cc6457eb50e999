-- Sessions ranked as wholes (issue 30; see memsearch/history.py): BM25 over a
-- whole session found the session where a session's best message did not.
--
-- A session's text is indexed in pieces, one per (file, session) read: the
-- messages of that file and session with ids first..last, joined by line
-- ends, in id order. A growing transcript adds a piece for its new lines;
-- the newest pieces are merged while the last is at least half the one
-- before it, so a session keeps a few pieces and an append costs its own
-- bytes (amortised). The FTS5 table keeps no text: a piece is deleted by
-- handing FTS5 that same text, rebuilt from history_messages before the
-- messages go.
CREATE TABLE history_pieces (
    id INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,          -- history_files.id
    session TEXT NOT NULL,
    project TEXT NOT NULL,
    first INTEGER NOT NULL,         -- history_messages.id of its first message
    last INTEGER NOT NULL,          -- and of its last
    messages INTEGER NOT NULL
);

CREATE INDEX history_pieces_file ON history_pieces (file, session);
CREATE INDEX history_pieces_session ON history_pieces (session);

CREATE VIRTUAL TABLE history_session_fts USING fts5 (
    idx_body,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 1'
);

-- A hit is read back from its transcript before it is shown (the bytes at
-- line_at, line_len long, must still parse to the indexed text).
ALTER TABLE history_messages ADD COLUMN line_len INTEGER NOT NULL DEFAULT 0;

-- Transcripts read before this have no pieces: they are forgotten and read
-- again at the next refresh (the index is a cache of the files).
DROP TRIGGER history_messages_ad;
DELETE FROM history_messages;
DELETE FROM history_files;
INSERT INTO history_fts (history_fts) VALUES ('delete-all');

CREATE TRIGGER history_messages_ad AFTER DELETE ON history_messages BEGIN
    INSERT INTO history_fts (history_fts, rowid, idx_body) VALUES ('delete', old.id, old.idx_body);
END;
