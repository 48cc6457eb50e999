-- The content table holds one row per Markdown file; the files are the truth
-- and this is a cache of them. `fingerprint` is "<size>-<mtime_ns>" of the
-- file when it was read, so a reconcile re-reads only what changed.
-- `racy` is 1 when the file was read within moments of its last change: it
-- may change again in the same timestamp tick without changing its
-- fingerprint ("racy clean" in git's words), so such rows are re-read.
CREATE TABLE memory_fts (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    scope TEXT,
    scope_id TEXT,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    racy INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX memory_fts_scope ON memory_fts (scope, scope_id);

-- Every fresh query reads all (path, fingerprint) pairs. A covering index
-- lets that read skip the table's pages, which hold the bodies.
CREATE INDEX memory_fts_fingerprint ON memory_fts (path, fingerprint);
CREATE INDEX memory_fts_racy ON memory_fts (path) WHERE racy;

-- External-content FTS5: the text lives once, in memory_fts; the index keeps
-- only the postings. snippet() reads the text back through content=.
CREATE VIRTUAL TABLE memory_fts_idx USING fts5 (
    body,
    content = 'memory_fts',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 1'
);

-- External content is not kept in step by FTS5 itself. A delete must hand
-- FTS5 the OLD indexed values, or it cannot find the postings to remove and
-- the index silently keeps phantom terms. An update is a delete of the old
-- values plus an insert of the new ones, skipped when the text is unchanged
-- (a touched file re-read by reconcile costs no index work).
CREATE TRIGGER memory_fts_ai AFTER INSERT ON memory_fts BEGIN
    INSERT INTO memory_fts_idx (rowid, body) VALUES (new.id, new.body);
END;

CREATE TRIGGER memory_fts_ad AFTER DELETE ON memory_fts BEGIN
    INSERT INTO memory_fts_idx (memory_fts_idx, rowid, body)
        VALUES ('delete', old.id, old.body);
END;

CREATE TRIGGER memory_fts_au AFTER UPDATE ON memory_fts
WHEN old.body IS NOT new.body BEGIN
    INSERT INTO memory_fts_idx (memory_fts_idx, rowid, body)
        VALUES ('delete', old.id, old.body);
    INSERT INTO memory_fts_idx (rowid, body) VALUES (new.id, new.body);
END;
