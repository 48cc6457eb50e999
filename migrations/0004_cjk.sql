-- Chinese, Japanese and Korean search (issue 7; see memsearch/cjk.py).
--
-- unicode61 reads a run of Han, kana or Hangul without spaces as one token,
-- so the index gets a segmented copy of such text, each run spelled as its
-- overlapping bigrams. The copies live in shadow columns that are NULL when
-- the text has no CJK: an English tree stores nothing more than before.
-- reconcile fills them (cjk.segmented()); SQL cannot segment.
--
-- FTS5 indexes generated columns that pick the segmented copy when there is
-- one and the original text otherwise. They are VIRTUAL, so nothing is
-- stored twice. snippet() reads them back through content= and the search
-- maps the bigrams back to the original characters (cjk.unsegment_snippet).
ALTER TABLE memory_fts ADD COLUMN body_seg TEXT;
ALTER TABLE memory_fts ADD COLUMN name_seg TEXT;
ALTER TABLE memory_fts ADD COLUMN description_seg TEXT;
ALTER TABLE memory_fts ADD COLUMN idx_body TEXT GENERATED ALWAYS AS (coalesce(body_seg, body)) VIRTUAL;
ALTER TABLE memory_fts ADD COLUMN idx_name TEXT GENERATED ALWAYS AS (coalesce(name_seg, name)) VIRTUAL;
ALTER TABLE memory_fts ADD COLUMN idx_description TEXT
    GENERATED ALWAYS AS (coalesce(description_seg, description)) VIRTUAL;

DROP TRIGGER IF EXISTS memory_fts_ai;
DROP TRIGGER IF EXISTS memory_fts_ad;
DROP TRIGGER IF EXISTS memory_fts_au;
DROP TABLE IF EXISTS memory_fts_idx;

-- Same column order as 0002 (bm25() weights and snippet() depend on it):
-- body is column 0, name 1, description 2. An FTS5 column of an external
-- content table reads the content column of the same name.
CREATE VIRTUAL TABLE memory_fts_idx USING fts5 (
    idx_body,
    idx_name,
    idx_description,
    content = 'memory_fts',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 1'
);

-- The rows already stored have no segmented copies yet, so this indexes
-- their original text, and search keeps working before the next reconcile.
INSERT INTO memory_fts_idx (memory_fts_idx) VALUES ('rebuild');

-- As in 0002, on the indexed (generated) columns: deletes hand FTS5 the OLD
-- values, and an update is skipped when no indexed value changed.
CREATE TRIGGER memory_fts_ai AFTER INSERT ON memory_fts BEGIN
    INSERT INTO memory_fts_idx (rowid, idx_body, idx_name, idx_description)
        VALUES (new.id, new.idx_body, new.idx_name, new.idx_description);
END;

CREATE TRIGGER memory_fts_ad AFTER DELETE ON memory_fts BEGIN
    INSERT INTO memory_fts_idx (memory_fts_idx, rowid, idx_body, idx_name, idx_description)
        VALUES ('delete', old.id, old.idx_body, old.idx_name, old.idx_description);
END;

CREATE TRIGGER memory_fts_au AFTER UPDATE ON memory_fts
WHEN old.idx_body IS NOT new.idx_body OR old.idx_name IS NOT new.idx_name
    OR old.idx_description IS NOT new.idx_description BEGIN
    INSERT INTO memory_fts_idx (memory_fts_idx, rowid, idx_body, idx_name, idx_description)
        VALUES ('delete', old.id, old.idx_body, old.idx_name, old.idx_description);
    INSERT INTO memory_fts_idx (rowid, idx_body, idx_name, idx_description)
        VALUES (new.id, new.idx_body, new.idx_name, new.idx_description);
END;

-- The next reconcile re-reads every file, which fills the segmented copies
-- of those that hold CJK. A file without CJK changes no indexed value, so
-- re-reading it costs no index work. The fingerprint "" matches no file.
UPDATE memory_fts SET fingerprint = '';
