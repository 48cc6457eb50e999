"""Apply the numbered SQL files of ``migrations/`` in order, each in one write transaction with the
row recording it; ``PRAGMA user_version`` repeats the version so every open checks it with one cheap
read. A shipped migration is never edited. ``migrations/schema.sql`` shows the whole schema.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING

from .errors import DatabaseError, SchemaTooNew

if TYPE_CHECKING:
    from pathlib import Path

_NAME = re.compile(r"^(\d+)_([a-z0-9_]+)\.sql$")


# Listed once, as text: opening an index never imports pathlib.
@functools.cache
def _listed() -> tuple[tuple[int, str, str], ...]:
    # Installed: inside the package. Source checkout: the repo's top level.
    here = os.path.dirname(os.path.realpath(__file__))
    folder = os.path.join(here, "migrations")
    if not os.path.isdir(folder):
        folder = os.path.join(os.path.dirname(here), "migrations")
    found = ((_NAME.match(name), name) for name in _read(os.listdir, folder))
    return tuple(sorted((int(m[1]), m[2], os.path.join(folder, name)) for m, name in found if m))


def _read(read, path: str):
    # Out of file descriptors (ulimit -n) or in a damaged install: one line, not a traceback.
    try:
        return read(path)
    except OSError as ex:
        raise DatabaseError(f"cannot read memsearch's schema migrations {path} ({ex.strerror or ex});"
                            " raise the open-file limit (ulimit -n) or reinstall memsearch") from None


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def available() -> list[tuple[int, str, Path]]:
    from pathlib import Path

    return [(number, name, Path(path)) for number, name, path in _listed()]


def latest_version() -> int:
    return _listed()[-1][0]


def current_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database up to the newest schema; returns that version."""
    latest = latest_version()
    version = current_version(conn)
    if version > latest:
        raise too_new(version, latest)
    for number, name, path in _listed():
        if number <= version:
            continue
        with write_transaction(conn):
            if current_version(conn) >= number:  # another process applied it while we waited for the lock
                continue
            # Its text, spaces included, is what every index stores and schema.sql shows.
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ( version INTEGER PRIMARY KEY,"
                         " name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
            for statement in split_statements(_read(_text, path)):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (number, name))
            conn.execute(f"PRAGMA user_version = {int(number)}")  # PRAGMA takes no parameters
        version = number
    return version


@contextmanager
def write_transaction(conn: sqlite3.Connection):
    """Take the write lock up front (BEGIN IMMEDIATE): a deferred transaction that upgrades from
    read to write fails with SQLITE_BUSY at once, without waiting, when another writer is first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite has already rolled back after some errors (disk full, I/O)
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def schema() -> str:
    """The whole schema the migrations build, in SQLite's order, FTS5's shadow tables left out
    (migrations/schema.sql, which tests/test_migrate.py keeps equal)."""
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        version = migrate(conn)
        shadows = {f"{name}_{part}" for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'")
            for part in ("data", "idx", "content", "docsize", "config")}
        rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
    head = (f"-- Generated from migrations/0001..{version:04d} by memsearch.migrate.schema(): do not edit.\n"
            f"-- PRAGMA user_version = {version}\n")
    return head + "".join(f"\n{sql};\n" for name, sql in rows if name not in shadows)


def too_new(version: int, latest: int) -> SchemaTooNew:
    return SchemaTooNew(f"index schema version {version} is newer than this memsearch understands"
                        f" ({latest}); upgrade memsearch or use another --db")


def split_statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies contain ';')."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        if not pending and (not line.strip() or line.lstrip().startswith("--")):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement at end of migration: {pending[:60]!r}")
    return statements
