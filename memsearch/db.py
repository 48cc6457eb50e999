"""Open the index database: location, pragmas, schema, and recovery.

The database is a cache of the Markdown files, so a damaged one is never
repaired in place: it is moved aside (kept for a post-mortem) and rebuilt
from the files. The one thing never done to a database is overwriting one
that a newer memsearch wrote and the user named explicitly.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from . import migrate
from .errors import DatabaseCorrupt, DatabaseError, DatabaseLocked, SchemaTooNew
from .settings import BUSY_TIMEOUT_S, path_text

if TYPE_CHECKING:
    from pathlib import Path


# Page cache of each connection, in KiB (allocated only as pages are used).
CACHE_KIB = 32768

# Messages by which SQLite says the file is damaged or not a database at all.
# FTS5 reports a damaged structure record as a failed vtable constructor.
_CORRUPT = ("file is not a database", "malformed", "database corrupt", "disk image", "vtable constructor failed")


class _NotAnIndex(DatabaseCorrupt):
    """The file is not a memsearch index: not SQLite at all, or another program's database."""


def is_corruption(ex: sqlite3.Error) -> bool:
    return any(text in str(ex) for text in _CORRUPT)


def open_database(path: str | os.PathLike, *, explicit: bool) -> sqlite3.Connection:
    """Connect, check and migrate. ``explicit``: the user named this file."""
    path = path_text(path)  # what a Path would print, without importing pathlib
    parent = os.path.dirname(path) or "."
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as ex:
        raise DatabaseError(
            f"cannot create the index directory {parent}: {ex.strerror}; use --db to put the index elsewhere"
        ) from None
    if os.path.isdir(path):
        raise DatabaseError(f"the index path {path} is a directory; remove it or use --db to put the index elsewhere")
    try:
        return _open_checked(path)
    except SchemaTooNew:
        if explicit:
            raise
        set_aside(path, "it was written by a newer memsearch")
    except _NotAnIndex as ex:
        if explicit:  # the user's own file: never moved, never written
            raise DatabaseError(f"{ex}; memsearch will not touch it: move it away or name another --db") from None
        set_aside(path, str(ex))
    except DatabaseCorrupt as ex:
        set_aside(path, str(ex))
    return _open_checked(path)


def _open_checked(path: str) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as ex:
        raise DatabaseError(f"cannot open the index {path}: {ex}; use --db to put it elsewhere") from None
    try:
        _check_is_an_index(path, conn)  # before anything below writes to the file
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            # WAL lets queries read while another process reconciles.
            conn.execute("PRAGMA journal_mode = WAL")
        # A lost last transaction on power failure is harmless in a cache.
        conn.execute("PRAGMA synchronous = NORMAL")
        # FTS5 merges its segments through the page cache; the default 2 MB
        # makes a large build thrash (measured: 2x slower at 10k files). 32 MB
        # keeps a 100k-file build near 100 MB RSS; 64 MB was ~10% faster but
        # peaked at 140-217 MB.
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        migrate.migrate(conn)
        _check_columns(conn)
        return conn
    except BaseException as ex:
        conn.close()
        if isinstance(ex, sqlite3.Error):
            raise translate(ex, path) from None
        raise


def _check_is_an_index(path: str, conn: sqlite3.Connection) -> None:
    """Refuse a file that is not SQLite, or is another program's database,
    before switching it to WAL or migrating it would change it.

    SQLite itself reads the header: opening and closing the file here would
    drop the POSIX locks of every other connection to it in this process.
    """
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError as ex:
        if "file is not a database" in str(ex):
            raise _NotAnIndex(f"{path} is not a memsearch index (not an SQLite database)") from None
        raise
    if tables and "memory_fts" not in tables:
        raise _NotAnIndex(f"{path} is not a memsearch index (another program's tables: {', '.join(tables[:3])})")


# Columns of memory_fts that reconcile and search use. A database whose
# recorded migrations say it is current and that lacks one of them (written by
# a development build whose migration changed later, or edited by hand)
# would fail every query with "no such column"; as a cache it is rebuilt.
COLUMNS = frozenset(("id", "path", "root", "scope", "scope_id", "type", "name", "description", "body",
                     "frontmatter_error", "fingerprint", "racy", "body_seg", "name_seg", "description_seg",
                     "idx_body", "idx_name", "idx_description"))


def _check_columns(conn: sqlite3.Connection) -> None:
    have = {row[1] for row in conn.execute("PRAGMA table_xinfo(memory_fts)")}
    if not COLUMNS <= have:
        missing = ", ".join(sorted(COLUMNS - have))
        raise DatabaseCorrupt(f"its schema does not match its recorded migrations (no column {missing})")


def translate(ex: sqlite3.Error, path) -> DatabaseError:
    """One clear project error for an SQLite failure."""
    text = str(ex)
    if is_corruption(ex):
        return DatabaseCorrupt(f"the index {path} is damaged ({text})")
    if "locked" in text or "busy" in text:
        return DatabaseLocked(
            f"the index {path} stayed locked by another process for {BUSY_TIMEOUT_S:.0f}s; try again"
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return DatabaseError(f"cannot write the index {path} ({text}); use --db to put it elsewhere")
    if "disk is full" in text or "disk I/O" in text:
        return DatabaseError(f"cannot write the index {path} ({text}); free some space and run again")
    return DatabaseError(f"index {path}: {text}")


def set_aside(path: str | os.PathLike, why: str) -> Path:
    """Move a bad database (and its WAL files) out of the way, keeping it."""
    from pathlib import Path  # only on this rare path

    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bad-{stamp}-{os.getpid()}")
    try:
        os.replace(path, target)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(f"{path}{suffix}"):
                os.replace(f"{path}{suffix}", f"{target}{suffix}")
    except FileNotFoundError:
        pass  # another process set it aside first
    except OSError as ex:
        raise DatabaseError(f"the index {path} is unusable ({why}) and cannot be moved aside: {ex.strerror}") from None
    warn(f"index {path} was unusable ({why}); kept it as {target.name} and rebuilding from the files")
    return target


# Where warnings about recovered problems go: None means the "memsearch"
# logger. The CLI points it at stderr for the length of one command.
warning_sink = None


def warn(message: str) -> None:
    """Report a problem memsearch recovered from. logging is imported only
    here, so a query with nothing to report never pays for it."""
    if warning_sink is not None:
        warning_sink(message)
        return
    import logging

    logging.getLogger("memsearch").warning("%s", message)


@contextmanager
def write_transaction(conn: sqlite3.Connection):
    """Take the write lock up front (BEGIN IMMEDIATE): a deferred transaction
    that upgrades from read to write can fail with SQLITE_BUSY at once,
    without waiting, when another writer got there first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite has already rolled back after some errors (disk full, I/O)
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
