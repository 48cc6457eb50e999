-- Several roots in one index, and the frontmatter's name and description in
-- columns of their own (issue 3).
--
-- The index is a cache of the files, so its rows are dropped rather than
-- converted: the next reconcile reads every file again, which is also what
-- fills the new columns. The content table keeps its columns from 0001 and
-- gains:
--   root               the memory_roots row of the root the file came from;
--                      a root turned off takes its rows with it
--   name, description  from the frontmatter; NULL when there is none
--   frontmatter_error  why the frontmatter was ignored (the file is then
--                      indexed as plain text), so `memsearch index` can say so
-- and `path` becomes the path shown in results: relative to the root, and
-- prefixed with "<root name>:" when the index has several roots.
DROP TRIGGER IF EXISTS memory_fts_ai;
DROP TRIGGER IF EXISTS memory_fts_ad;
DROP TRIGGER IF EXISTS memory_fts_au;
DROP TABLE IF EXISTS memory_fts_idx;
DELETE FROM memory_fts;

-- One row per root that has rows; `key` is "<kind>:<resolved folder>", so a
-- root whose kind or folder changes is a new root and its files are re-read.
CREATE TABLE memory_roots (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
);

ALTER TABLE memory_fts ADD COLUMN root INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memory_fts ADD COLUMN name TEXT;
ALTER TABLE memory_fts ADD COLUMN description TEXT;
ALTER TABLE memory_fts ADD COLUMN frontmatter_error TEXT;

-- Each reconcile lists the files whose frontmatter was ignored; they are few.
CREATE INDEX memory_fts_bad_frontmatter ON memory_fts (path) WHERE frontmatter_error IS NOT NULL;

-- Column order matters to bm25() weights and snippet(): body is column 0,
-- name 1, description 2. Later migrations add columns after these.
CREATE VIRTUAL TABLE memory_fts_idx USING fts5 (
    body,
    name,
    description,
    content = 'memory_fts',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 1'
);

-- As in 0001: deletes hand FTS5 the OLD values of every indexed column; an
-- update is skipped when no indexed column changed.
CREATE TRIGGER memory_fts_ai AFTER INSERT ON memory_fts BEGIN
    INSERT INTO memory_fts_idx (rowid, body, name, description)
        VALUES (new.id, new.body, new.name, new.description);
END;

CREATE TRIGGER memory_fts_ad AFTER DELETE ON memory_fts BEGIN
    INSERT INTO memory_fts_idx (memory_fts_idx, rowid, body, name, description)
        VALUES ('delete', old.id, old.body, old.name, old.description);
END;

CREATE TRIGGER memory_fts_au AFTER UPDATE ON memory_fts
WHEN old.body IS NOT new.body OR old.name IS NOT new.name OR old.description IS NOT new.description BEGIN
    INSERT INTO memory_fts_idx (memory_fts_idx, rowid, body, name, description)
        VALUES ('delete', old.id, old.body, old.name, old.description);
    INSERT INTO memory_fts_idx (rowid, body, name, description)
        VALUES (new.id, new.body, new.name, new.description);
END;
