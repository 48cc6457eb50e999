"""MemoryIndex: the library's front door. One root, one index database."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from . import db, migrate, search as search_mod
from .errors import DatabaseCorrupt, RootNotFound
from .query import build_query
from .reconcile import KnownFingerprints, Progress, ReconcileReport, reconcile
from .search import Hit
from .settings import DEFAULT_LIMIT, MAX_LIMIT, Settings, default_db_path, load_settings


@dataclass(frozen=True)
class SearchResult:
    """Hits plus what a caller may want to show about how they were found."""

    query: str
    fts_query: str
    hits: list[Hit]
    floored: int  # candidates the relative floor dropped
    reconcile: ReconcileReport | None = field(default=None, repr=False)


class MemoryIndex:
    """Search a memory root; the index is rebuilt from the files as needed.

    >>> with MemoryIndex("~/memory") as idx:
    ...     for hit in idx.search("docker port"):
    ...         print(hit.path, hit.score, hit.snippet)

    ``db_path`` defaults to a per-root file in the user's cache directory.
    ``floor`` and ``reconcile`` default to the config file's values.
    """

    def __init__(self, root, db_path=None, *, floor: float | None = None, reconcile: bool | None = None,
                 max_file_bytes: int | None = None, settings: Settings | None = None):
        self.root = os.path.abspath(os.path.expanduser(os.fspath(root)))
        if not os.path.isdir(self.root):
            raise RootNotFound(f"memory root does not exist or is not a directory: {self.root}")
        base = settings or load_settings()
        self.settings = base.with_overrides(floor=floor, reconcile=reconcile, max_file_bytes=max_file_bytes)
        if not 0 <= self.settings.floor <= 1:
            raise ValueError(f"floor must be between 0 and 1, got {self.settings.floor}")
        self.explicit_db = db_path is not None
        self.db_path = Path(os.path.expanduser(os.fspath(db_path))) if db_path else default_db_path(self.root)
        self._conn: sqlite3.Connection | None = None
        self._known = KnownFingerprints()

    # -- lifecycle ---------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = db.open_database(self.db_path, explicit=self.explicit_db)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self._known.forget()

    def __enter__(self) -> "MemoryIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- operations --------------------------------------------------------
    def reconcile(self, progress: Progress | None = None) -> ReconcileReport:
        """Walk the root and bring the index in step with the files."""
        return self._guarded(
            lambda: reconcile(self.conn, self.root, max_file_bytes=self.settings.max_file_bytes, progress=progress,
                              known=self._known)
        )

    def search(self, query: str, limit: int = DEFAULT_LIMIT, scope: str | None = None,
               scope_id: str | None = None, type: str | None = None, *, reconcile: bool | None = None,
               floor: float | None = None) -> list[Hit]:
        """Hits for ``query``, best first (see :meth:`search_result`)."""
        return self.search_result(query, limit, scope, scope_id, type, reconcile=reconcile, floor=floor).hits

    def search_result(self, query: str, limit: int = DEFAULT_LIMIT, scope: str | None = None,
                      scope_id: str | None = None, type: str | None = None, *, reconcile: bool | None = None,
                      floor: float | None = None) -> SearchResult:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
        floor = self.settings.floor if floor is None else floor
        if not 0 <= floor <= 1:
            raise ValueError(f"floor must be between 0 and 1, got {floor}")
        fts_query = build_query(query)  # before any I/O: a bad query costs nothing
        do_reconcile = self.settings.reconcile if reconcile is None else reconcile
        report = self.reconcile() if do_reconcile else None
        filters = {"scope": scope, "scope_id": scope_id, "type": type}
        hits, floored = self._guarded(
            lambda: search_mod.run(self.conn, fts_query, limit=limit, floor=floor, filters=filters)
        )
        return SearchResult(query, fts_query, hits, floored, report)

    def status(self) -> dict:
        """Root, database, file count and schema version."""

        def read():
            files = self.conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
            return {
                "root": self.root,
                "database": str(self.db_path),
                "files": files,
                "schema_version": migrate.current_version(self.conn),
                "database_bytes": _size(self.db_path),
            }

        return self._guarded(read)

    def _guarded(self, operation):
        """Run an operation; SQLite errors become memsearch errors, and a
        damaged index is set aside and rebuilt from the files, once."""
        try:
            return operation()
        except sqlite3.Error as ex:
            error = db.translate(ex, self.db_path)
        if not isinstance(error, DatabaseCorrupt):
            raise error
        self.close()
        db.set_aside(self.db_path, str(error))
        try:
            return operation()
        except sqlite3.Error as ex:
            raise db.translate(ex, self.db_path) from None


def _size(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.stat(f"{path}{suffix}").st_size
        except OSError:
            pass
    return total
