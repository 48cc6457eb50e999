"""MemoryIndex: the library's front door. One or more roots, one index database."""

from __future__ import annotations

import os
import time
from contextlib import suppress
from typing import TYPE_CHECKING, Iterable, NamedTuple

from . import __version__, db, fingerprint, migrate, roots as roots_mod, search as search_mod
from .freshness import Freshness, describe as describe_watcher, sync as sync_with_watcher
from .errors import InvalidArgument, UnknownFilter, quoted
from .query import plan, unmatched
from .reconcile import LeftOut, Progress, ReconcileReport, reconcile, reconcile_paths, stored_rows
from .layout import Layout
from .memory_file import encodable, printable_name
from .roots import SCOPES_OF_KIND, TYPES, Root
from .search import Hit, short_repr
from .settings import DEFAULT_LIMIT, Settings, checked_setting, checked_progress, given_settings, given_type

if TYPE_CHECKING:
    from pathlib import Path

# Every scope a root of some kind gives its hits; MemoryIndex checks a scope
# against its own roots' (Layout.scopes), the tool's arguments against these.
SCOPES = tuple(dict.fromkeys(s for scopes in SCOPES_OF_KIND.values() for s in scopes))


class SearchResult(NamedTuple):
    """Hits plus how they were found. ``floored``: candidates the relative floor dropped;
    ``freshness``: the watcher handshake, or the walk and why (None without a refresh);
    ``unmatched``: the searched words no file holds (the hits match the others only)."""

    query: str
    fts_query: str
    hits: list[Hit]
    floored: int
    reconcile: ReconcileReport | None = None
    freshness: Freshness | None = None
    unmatched: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return short_repr(self, 4)


class MemoryIndex(db.Opened):
    """Search memory roots; the index is rebuilt from the files as needed.

    >>> with MemoryIndex("~/memory") as idx:
    ...     for hit in idx.search("docker port"):
    ...         print(hit.path, hit.score, hit.snippet)

    >>> MemoryIndex(roots=[Root("claude"), Root("zcode"), Root("plain", "~/notes")])

    ``root``: one folder, read as a mimo tree (or a :class:`Root`); paths in results are relative
    to it. ``roots``: several, paths prefixed with the root's name (``cc:<project>/memory/x.md``).
    With neither: MEMSEARCH_ROOTS / MEMSEARCH_ROOT, else the config file, else every agent's memory
    at its default location. ``db_path``: default one file per set of roots in the user's cache;
    ``floor`` and ``reconcile``: default the config file's values.
    """

    def __init__(self, root=None, db_path=None, *, roots=None, floor: float | None = None,
                 reconcile: bool | None = None, max_file_bytes: int | None = None,
                 settings: Settings | None = None):
        super().__init__()
        if root is not None and roots is not None:
            raise InvalidArgument("pass root or roots, not both")
        if root is not None:
            given = [root]
        elif roots is not None:
            given = roots_mod.as_list(roots)
        else:
            given = roots_mod.from_environment() or roots_mod.configured() or roots_mod.default_roots()
        # Default locations that do not exist, left out (status names them).
        self.skipped: list[str] = []
        self.roots: tuple[Root, ...] = roots_mod.resolve(given, self.skipped)
        self.layout = Layout(self.roots)
        # One root: its folder, as the core had it. Several: None (see .roots).
        self.root: str | None = self.roots[0].path if len(self.roots) == 1 else None
        self.settings = given_settings(settings, floor=floor, reconcile=reconcile, max_file_bytes=max_file_bytes)
        self.explicit_db = db_path is not None
        # The file as text: a query never imports pathlib (start-up).
        if db_path is not None:
            self._db_file = db.given_file(db_path)
        elif self.root is not None:
            self._db_file = db.default_db_file(self.root)
        else:
            self._db_file = db.roots_db_file(r.key for r in self.roots)
        self._known = db.Cached(stored_rows)  # the stored fingerprints and racy paths, kept between reconciles

    @property
    def db_path(self) -> Path:
        """The index database file."""
        from pathlib import Path

        return Path(self._db_file)

    @db_path.setter
    def db_path(self, path: str | os.PathLike) -> None:
        self._db_file = db.given_file(path)

    # -- lifecycle (conn, close, with): db.Opened; _known is keyed by the connection, read afresh by a new one
    # -- operations --------------------------------------------------------
    def reconcile(self, progress: Progress | None = None) -> ReconcileReport:
        """Walk the roots and bring the index in step with the files (nested instruction files
        too); the report counts what the roots leave out (:meth:`left_out`)."""
        checked_progress(progress)
        self._follow()
        report = self._guarded(lambda: self._reconcile(progress), refill=False)
        return report._replace(left_out=tuple(self.left_out()))

    def left_out(self) -> list:
        """What the roots never index though it is agent memory: Markdown in hidden memory folders
        (``.claude/memory``...) of a plain or mimo root or its folders, and the kind that indexes it."""
        from .discover import HIDDEN_PLACES, hidden_memory

        shown = ", ".join(HIDDEN_PLACES[:3])
        return [LeftOut(root.name, files, f"sit in hidden folders ({shown}, ...), which a {root.kind} root"
                        " does not read", f"--root repos={root.path} indexes each checkout's memory")
                for root in self.roots if root.kind in ("plain", "mimo") and (files := hidden_memory(root.path))]

    def reconcile_paths(self, paths: Iterable[str], *, deep: bool = False) -> ReconcileReport:
        """Bring just ``paths`` (index paths: files, folders, or a root's label) in step with the
        files (``deep``: in a repos root, look for nested instruction files too)."""
        try:
            given = [paths] if isinstance(paths, str) else list(paths)  # one path, not its characters
        except TypeError:
            given = [paths]  # not iterable: refused below
        for path in given:  # (before a set: a list in the list is no path, nor hashable)
            if not isinstance(path, str) or "\0" in path or not encodable(path):
                raise InvalidArgument(f"an index path is text, without NUL or lone surrogates (the walk spells"
                                      f" such names with \\xNN); got {quoted(path, 100, always=True)}")
        return self._guarded(lambda: reconcile_paths(self.conn, self.layout, set(given),
                                                     max_file_bytes=self.settings.max_file_bytes,
                                                     known=self._known, deep=deep))

    def _reconcile(self, progress: Progress | None = None, deep: bool = True) -> ReconcileReport:
        return reconcile(self.conn, self.layout, max_file_bytes=self.settings.max_file_bytes, progress=progress,
                         known=self._known, deep=deep, first_build=self.first_build)

    _refill = _reconcile  # db.Opened's: an index set aside is filled again by a whole reconcile

    # How the last refresh() made the index fresh (None before the first).
    freshness: Freshness | None = None

    def refresh(self, progress: Progress | None = None) -> ReconcileReport:
        """Bring the index up to date with every change made so far: a cookie handshake with a
        healthy watcher of the roots, else a :meth:`reconcile`; ``self.freshness`` says which."""
        checked_progress(progress)
        started = time.perf_counter()
        self._follow()
        reason = self._guarded(lambda: sync_with_watcher(self.conn, self.roots, self.settings.sync_timeout), refill=False)
        if reason is None:
            seconds = time.perf_counter() - started
            self.freshness = Freshness("watcher", seconds=seconds)
            return ReconcileReport(seconds=seconds)
        # A query probes each checkout's known places only (memsearch.discover).
        report = self._guarded(lambda: self._reconcile(progress, deep=False), refill=False)
        self.freshness = Freshness("walk", reason, time.perf_counter() - started)
        return report

    def search(self, query: str, limit: int = DEFAULT_LIMIT, scope: str | None = None,
               scope_id: str | None = None, type: str | None = None, *, reconcile: bool | None = None,
               floor: float | None = None) -> list[Hit]:
        """Hits for ``query``, best first (see :meth:`search_result`)."""
        return self.search_result(query, limit, scope, scope_id, type, reconcile=reconcile, floor=floor).hits

    def search_result(self, query: str, limit: int = DEFAULT_LIMIT, scope: str | None = None,
                      scope_id: str | None = None, type: str | None = None, *, reconcile: bool | None = None,
                      floor: float | None = None, progress: Progress | None = None) -> SearchResult:
        checked_setting("limit", limit)
        floor = checked_setting("floor", self.settings.floor if floor is None else floor)
        planned = plan(query)  # before any I/O: a bad query costs nothing
        scope, type = self._check_filters(scope, type, scope_id)
        do_reconcile = self.settings.reconcile if reconcile is None else checked_setting("reconcile", reconcile)
        report = self.refresh(progress) if do_reconcile else None
        filters = {"scope": scope, "scope_id": scope_id, "type": type}
        keys = list(self.layout.keys.values())
        counts: dict[str, int] = {}

        def run():
            counts.clear()
            return search_mod.run(self.conn, planned, limit=limit, floor=floor, filters=filters, roots=keys,
                                  counts=counts)

        hits, floored = self._guarded(run)
        if do_reconcile and self.freshness.via == "watcher" and hits:
            # inotify misses some writes (through a memory map, from another host): a hit whose file
            # no longer has its stored fingerprint is read again, and the query run again.
            if changed := self._guarded(lambda: self._changed([hit.path for hit in hits])):
                self.reconcile_paths(changed)
                hits, floored = self._guarded(run)
        # The file as text: a root folder's name that is not UTF-8 is no JSON text.
        located = []
        for hit in hits:
            with suppress(KeyError):  # (a row spelled for other roots, not reconciled since: no file of these)
                located.append(hit._replace(file=printable_name(self.layout.locate(hit.path))))
        return SearchResult(query, planned.fts, located, floored, report, self.freshness if do_reconcile else None,
                            unmatched(query, counts))

    def _changed(self, paths: list[str]) -> list[str]:
        stored = stored_rows(self.conn, paths)[0]
        changed = []
        for path in paths:
            now = None  # gone or unreadable: no fingerprint, so changed if a row has one
            with suppress(OSError):
                now = fingerprint.of(os.stat(self.layout.locate(path)))
            if stored.get(path) != now:
                changed.append(path)
        return changed

    def _check_filters(self, scope: str | None, type: str | None, scope_id: str | None) -> tuple:
        """UnknownFilter when scope, type or scope id can match no file: a typo to report, not an
        empty answer that reads as "never recorded". (scope, type) in lower case: case is no typo."""
        scope, type = (v.lower() if isinstance(v, str) else v for v in (scope, type))
        scopes = self.layout.scopes()
        if scope is not None and scope not in scopes:
            given = ", ".join(f"{r.name} ({r.kind})" for r in self.roots)
            choice = f"use one of {', '.join(scopes)}" if scopes else "these roots give hits no scope; leave it out"
            raise UnknownFilter(f"no root of this index has scope {quoted(scope, 100, always=True)}"
                                f" (roots: {given}): {choice}")
        if type is not None and type not in TYPES:
            raise UnknownFilter(f"type must be one of {', '.join(TYPES)}; got {quoted(type, 100, always=True)}",
                                argument="type")
        if scope_id is not None:
            _checked_scope_id(scope_id)
        if type is not None and (types := self.layout.types()) is not None and type not in types:
            raise UnknownFilter(f"no file of a mimo tree has type {quoted(type, 100, always=True)} (its path gives the"
                                f" type, not its frontmatter): use one of {', '.join(types)}")
        return scope, type

    def scope_ids(self, limit: int = 200) -> list[tuple[str, str, int]]:
        """(scope, scope id, files) indexed now, most files first: the values ``scope_id`` can take."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgument(f"limit must be a whole number of at least 1, got {quoted(limit, 40, always=True)}")
        limit = min(limit, 1 << 62)  # SQLite binds 64 bits
        sql = ("SELECT scope, scope_id, count(*) AS n FROM memory_fts WHERE scope_id IS NOT NULL"
               " GROUP BY scope, scope_id ORDER BY n DESC, scope_id LIMIT ?")
        return self._guarded(lambda: [tuple(r) for r in self.conn.execute(sql, (limit,))])

    def scopes_of(self, scope_id: str) -> list[str]:
        """The scopes whose files have ``scope_id`` now: where it has none, a search filtered on it finds nothing
        whatever the words (a shell says so, and which scope it is in)."""
        _checked_scope_id(scope_id)
        sql = "SELECT DISTINCT scope FROM memory_fts WHERE scope_id = ? ORDER BY scope"
        return self._guarded(lambda: [scope for (scope,) in self.conn.execute(sql, (scope_id,))])

    def paths(self, root: Root) -> list[str]:
        """The index paths of the files indexed now under one root of this index (else KeyError)."""
        given_type(root, Root, "root must be a memsearch.Root")
        sql = "SELECT path FROM memory_fts WHERE root = (SELECT id FROM memory_roots WHERE key = ?)"
        key = self.layout.keys.get(root)
        if key is None:  # a Root as the caller built it (no folder, or no name): resolved, it may be ours
            key = roots_mod.resolve([root])[0].key
            if key not in self.layout.keys.values():
                raise KeyError(f"{root!r} is not a root of this index")
        return self._guarded(lambda: [path for (path,) in self.conn.execute(sql, (key,))])

    def locate(self, path: str) -> str:
        """The absolute file behind a path from a hit (KeyError for no root of this index)."""
        return self.layout.locate(given_type(path, str, "path must be a path from a hit"))

    def manifest(self, limit: int | None = None) -> list:
        """The memory files of the roots, newest first (see memsearch.manifests)."""
        from .manifests import manifest

        return manifest(self.layout, limit=self.settings.manifest_limit if limit is None else limit,
                        max_file_bytes=self.settings.max_file_bytes)

    def status(self) -> dict:
        """Root(s), database, file count and schema version."""

        def read():
            files, plain = self.conn.execute("SELECT count(*), count(frontmatter_error) FROM memory_fts").fetchone()
            # "roots" names each root's kind (which agents' memory is searched); "root" as the core had it.
            return {
                **({"root": self.root} if self.root is not None else {}),
                "roots": [r.describe() for r in self.roots],
                "database": self._db_file,
                "files": files,
                "unusable_frontmatter": plain,  # indexed as plain text; `memsearch index` says why
                "schema_version": migrate.current_version(self.conn),
                "database_bytes": file_bytes(self._db_file),
                "left_out": [x.describe() for x in self.left_out()],
                "skipped": self.skipped,
                **describe_watcher(self.conn, self.roots, self.settings.sync_timeout),
                "version": __version__,  # of memsearch, for bug reports
            }

        return self._guarded(read)


def file_bytes(path: str, suffixes: tuple[str, ...] = ("", "-wal")) -> int:
    """The size of a database file and its side files (those absent count 0)."""
    total = 0
    for suffix in suffixes:
        with suppress(OSError):
            total += os.stat(f"{path}{suffix}").st_size
    return total


def _checked_scope_id(scope_id) -> None:
    """InvalidArgument for a scope id that is no string; UnknownFilter for one holding a lone surrogate, which
    SQLite cannot bind as text and no scope id holds (the walk spells \\xNN)."""
    given_type(scope_id, str, "scope_id must be a string")
    if not encodable(scope_id):
        raise UnknownFilter(f"scope_id {quoted(scope_id, 100, always=True)} is not valid text:"
                            " no scope id holds a lone surrogate", argument="scope_id")
