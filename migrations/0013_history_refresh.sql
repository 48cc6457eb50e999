-- A refresh compares every transcript's stat with its stored Fingerprint
-- (issue 30): read from this index alone, a few bytes a row, instead of rows
-- whose ctime_ns and device (added by 0009) come after 2 KB of head and tail.
CREATE INDEX history_files_fingerprint ON history_files (root, path, size, mtime_ns, ctime_ns, device, inode);

-- FTS5's automerge off: each refresh's commit merges in proportion to what
-- it wrote (memsearch/history_refresh.py, MERGE_PAGES): with it on, one append
-- in 64 paid for a merge of 64 pages a level at once.
INSERT INTO history_fts (history_fts, rank) VALUES ('automerge', 0);
INSERT INTO history_session_fts (history_session_fts, rank) VALUES ('automerge', 0);
