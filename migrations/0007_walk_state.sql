-- What a query's walk of a repos root relied on, kept for the next process
-- (memsearch.discover.SavedState): the paths it lstat'ed, with their ctimes
-- (or whole keys, for paths changed just before), and the fingerprints the
-- index had then. A process that finds the index with exactly those
-- fingerprints and every path as it was has nothing to reconcile, and need
-- not list each checkout again. A cache of a cache: without a row, or with
-- a stale one, the walk lists as before. Paths are UTF-8 with
-- surrogateescape (any file name), NUL-separated; numbers space-separated.
CREATE TABLE walk_state (
    root BLOB NOT NULL,             -- the resolved root folder
    max_file_bytes INTEGER NOT NULL,
    known BLOB NOT NULL,            -- the fingerprints, as path NUL fingerprint NUL ...
    settled BLOB NOT NULL,          -- paths compared by ctime alone
    ctimes TEXT NOT NULL,
    racy BLOB NOT NULL,             -- paths compared by their whole lstat key
    racy_keys TEXT NOT NULL,        -- six numbers a path (discover._KEY_FIELDS)
    PRIMARY KEY (root, max_file_bytes)
);
