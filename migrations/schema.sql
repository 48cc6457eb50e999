-- Generated from migrations/0001..0036 by memsearch.migrate.schema(): do not edit.
-- PRAGMA user_version = 36

CREATE TABLE schema_migrations ( version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT (datetime('now')));

CREATE TABLE memory_fts (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    scope TEXT,
    scope_id TEXT,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    racy INTEGER NOT NULL DEFAULT 0
, root INTEGER NOT NULL DEFAULT 0, name TEXT, description TEXT, frontmatter_error TEXT, body_seg TEXT, name_seg TEXT, description_seg TEXT, idx_body TEXT GENERATED ALWAYS AS (coalesce(body_seg, body)) VIRTUAL, idx_name TEXT GENERATED ALWAYS AS (coalesce(name_seg, name)) VIRTUAL, idx_description TEXT
    GENERATED ALWAYS AS (coalesce(description_seg, description)) VIRTUAL, size INTEGER NOT NULL DEFAULT -1, mtime_ns INTEGER NOT NULL DEFAULT -1, ctime_ns INTEGER NOT NULL DEFAULT -1, device INTEGER NOT NULL DEFAULT -1, inode INTEGER NOT NULL DEFAULT -1);

CREATE INDEX memory_fts_scope ON memory_fts (scope, scope_id);

CREATE INDEX memory_fts_racy ON memory_fts (path) WHERE racy;

CREATE TABLE memory_roots (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
);

CREATE INDEX memory_fts_bad_frontmatter ON memory_fts (path) WHERE frontmatter_error IS NOT NULL;

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

CREATE TABLE watcher_cookies (
    name TEXT PRIMARY KEY,
    acked_at REAL NOT NULL
) WITHOUT ROWID;

CREATE VIRTUAL TABLE memory_fts_idx USING fts5 (
    idx_body,
    idx_name,
    idx_description,
    content = 'memory_fts',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 1'
);

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
    tail BLOB NOT NULL, ctime_ns INTEGER NOT NULL DEFAULT -1, device INTEGER NOT NULL DEFAULT -1,
    UNIQUE (root, path)
);

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
, line_len INTEGER NOT NULL DEFAULT 0);

CREATE INDEX history_messages_file ON history_messages (file, line_at, part);

CREATE VIRTUAL TABLE history_fts USING fts5 (
    idx_body,
    content = 'history_messages',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 1'
);

CREATE TRIGGER history_messages_ai AFTER INSERT ON history_messages BEGIN
    INSERT INTO history_fts (rowid, idx_body) VALUES (new.id, new.idx_body);
END;

CREATE TRIGGER history_messages_au AFTER UPDATE ON history_messages
WHEN old.idx_body IS NOT new.idx_body BEGIN
    INSERT INTO history_fts (history_fts, rowid, idx_body) VALUES ('delete', old.id, old.idx_body);
    INSERT INTO history_fts (rowid, idx_body) VALUES (new.id, new.idx_body);
END;

CREATE INDEX memory_fts_fingerprint ON memory_fts (path, size, mtime_ns, ctime_ns, device, inode);

CREATE INDEX history_messages_session ON history_messages (session, project, sidechain, file, at);

CREATE TABLE history_pieces (
    id INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,          -- history_files.id
    session TEXT NOT NULL,
    project TEXT NOT NULL,
    first INTEGER NOT NULL,         -- history_messages.id of its first message
    last INTEGER NOT NULL,          -- and of its last
    messages INTEGER NOT NULL
, first_at TEXT, last_at TEXT);

CREATE INDEX history_pieces_file ON history_pieces (file, session);

CREATE INDEX history_pieces_session ON history_pieces (session);

CREATE TRIGGER history_messages_ad AFTER DELETE ON history_messages BEGIN
    INSERT INTO history_fts (history_fts, rowid, idx_body) VALUES ('delete', old.id, old.idx_body);
END;

CREATE INDEX history_files_fingerprint ON history_files (root, path, size, mtime_ns, ctime_ns, device, inode);

CREATE VIRTUAL TABLE history_session_fts USING fts5 (
    idx_user,
    idx_other,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 1'
);

CREATE VIRTUAL TABLE history_user_fts USING fts5 (
    idx_user,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 1'
);
