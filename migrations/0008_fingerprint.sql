-- One Fingerprint (issue 31; memsearch/fingerprint.py) in integer columns,
-- in place of the text "<size>-<mtime_ns>": the size, mtime and ctime (a
-- rewrite can put the mtime back, not the ctime) and the file's device and
-- inode (hard links to one file are indexed once: memsearch/reconcile.py).
-- ALTER TABLE ... DROP COLUMN needs SQLite 3.35 (2021).
--
-- The rows stay; -1 matches no file, so the next reconcile reads every file
-- again, which costs no index work where the text is unchanged.
DROP INDEX IF EXISTS memory_fts_fingerprint;
ALTER TABLE memory_fts DROP COLUMN fingerprint;
ALTER TABLE memory_fts ADD COLUMN size INTEGER NOT NULL DEFAULT -1;
ALTER TABLE memory_fts ADD COLUMN mtime_ns INTEGER NOT NULL DEFAULT -1;
ALTER TABLE memory_fts ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT -1;
ALTER TABLE memory_fts ADD COLUMN device INTEGER NOT NULL DEFAULT -1;
ALTER TABLE memory_fts ADD COLUMN inode INTEGER NOT NULL DEFAULT -1;

-- Every fresh query reads all (path, fingerprint) rows: covered by this
-- index, without reading the table's pages, which hold the bodies.
CREATE INDEX memory_fts_fingerprint ON memory_fts (path, size, mtime_ns, ctime_ns, device, inode);

-- A saved walk holds the fingerprints in the old form: a cache, dropped.
DELETE FROM walk_state;
