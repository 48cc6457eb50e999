-- A refresh compares every transcript's stat with its stored Fingerprint
-- (issue 30): read from this index alone, a few bytes a row, instead of rows
-- whose ctime_ns and device (added by 0009) come after 2 KB of head and tail.
CREATE INDEX history_files_fingerprint ON history_files (root, path, size, mtime_ns, ctime_ns, device, inode);
