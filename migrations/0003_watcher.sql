-- The live watcher (`memsearch watch`, issue 6; see memsearch/watch.py).
--
-- While a watcher follows a root it keeps that root's row here up to date;
-- a query reads the row to learn whether a healthy watcher is running, and
-- if one is, proves the index fresh with a cookie handshake instead of
-- walking the tree. Nothing here is needed for correctness without a
-- watcher: a query that finds no usable row walks the tree as before.
CREATE TABLE watcher (
    root_key TEXT PRIMARY KEY,      -- the root's key ("<kind>:<resolved folder>")
    folder TEXT NOT NULL,           -- the folder watched; cookies are created in it
    pid INTEGER NOT NULL,           -- the watching process ...
    host TEXT NOT NULL,             -- ... on this host (a pid says nothing elsewhere)
    started_at REAL NOT NULL,       -- unix time
    heartbeat_at REAL NOT NULL,     -- unix time, refreshed about every second
    state TEXT NOT NULL,            -- starting | ready | rescanning | failed | stopped
    error TEXT,                     -- the last error, kept after recovery
    error_at REAL,
    overflows INTEGER NOT NULL DEFAULT 0,  -- event queue overflows (each one costs a rescan)
    restarts INTEGER NOT NULL DEFAULT 0    -- event sources restarted after a failure
);

-- A cookie is acknowledged by inserting its name, in a transaction that
-- commits after every change seen before the cookie. The watcher deletes
-- acknowledgements after a minute; the querying side only reads.
CREATE TABLE watcher_cookies (
    name TEXT PRIMARY KEY,
    acked_at REAL NOT NULL
) WITHOUT ROWID;
