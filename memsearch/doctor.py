"""``memsearch doctor``: check an index against SQLite, FTS5 and the files. The checks, in order: ``database``
(ours, not a newer memsearch's), ``sqlite``, ``fts5`` (the full-text index against its content), ``files`` (rows
against the files), ``query`` (open, search and write, rolled back). Without ``fix`` nothing changes but what any
query would change; with it each problem's remedy runs, then the checks again."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing, suppress
from typing import NamedTuple

from . import db as db_mod, migrate, search as search_mod
from .errors import DatabaseCorrupt, MemsearchError, SchemaTooNew, quoted
from .format import one_line
from .index import file_bytes
from .prepare import read_text
from .query import plan
from .settings import BUSY_TIMEOUT_S
from .reconcile import hard_links, malformed, stored_rows
from .walk import Skipped

# How many examples of a kind of problem a report names.
EXAMPLES = 5

# (type, name) of every table, index and trigger.
SCHEMA_OBJECTS = "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"


class Check(NamedTuple):
    name: str  # database | sqlite | fts5 | files | query
    ok: bool
    detail: str
    remedy: str | None = None  # "set-aside", "fts-rebuild", "reconcile", or None: memsearch cannot or will not fix it

    def to_dict(self) -> dict:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


class DoctorReport(NamedTuple):
    database: str
    found: tuple[Check, ...]  # the checks as first run
    fixed: tuple[str, ...] = ()  # what --fix did
    remaining: tuple[Check, ...] = ()  # the checks after the fixes (= found without fix)
    notes: tuple[str, ...] = ()  # worth knowing, not problems
    failed: str | None = None  # why a fix --fix tried failed, after those in ``fixed``

    @property
    def problems(self) -> list[Check]:
        """Problems that remain (after the fixes, if any were made)."""
        return [c for c in self.remaining if not c.ok]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"database": self.database, "ok": self.ok, "found": [c.to_dict() for c in self.found],
                "fixed": list(self.fixed), "fix_failed": self.failed,
                "problems": [c.to_dict() for c in self.problems], "notes": list(self.notes)}


def diagnose(index, *, fix: bool = False) -> DoctorReport:
    """Run every check on ``index`` (a MemoryIndex); with ``fix``, repair what can be and check again."""
    index.close()  # our own connections only; an open one would keep a set-aside file alive
    checked = db_mod.identity(index.db_file)  # the file judged: another process may replace it meanwhile
    found, notes = _run_checks(index)
    fixed, failed, remaining = [], None, found  # remaining: found, unless fixes are tried
    if fix and not all(c.ok for c in found):
        try:
            _fix(index, found, checked, fixed)
        except Exception as ex:  # noqa: BLE001 - doctor reports; the checks below say what is left
            failed = str(ex) if isinstance(ex, (sqlite3.Error, MemsearchError)) else f"{type(ex).__name__}: {ex}"
        index.close()
        remaining, notes = _run_checks(index)
    return DoctorReport(index.db_file, tuple(found), tuple(fixed), tuple(remaining), tuple(notes), failed)


def _run_checks(index) -> tuple[list[Check], list[str]]:
    path = index.db_file
    notes = _notes(index)
    try:
        db_mod.check_path(path, index.explicit_db)
    except MemsearchError as ex:  # NotAnIndex at memsearch's own path: set aside, as a query does
        return [Check("database", False, str(ex), "set-aside" if isinstance(ex, db_mod.NotAnIndex) else None)], notes
    if not os.path.exists(path):
        notes.append("no index yet: the next query (or `memsearch index`) builds it")
        return [Check("database", True, "not built yet", "reconcile"), _check_query(index)], notes
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as ex:
        return [Check("database", False, f"cannot open {path}: {ex}")], notes
    with closing(conn):
        database = _check_database(index, conn, notes)
        if not database.ok:
            return [database], notes
        integrity = _check_sqlite(conn)
        if not integrity.ok:  # the query check never sets anything aside: no point on a damaged file
            return [database, integrity], notes
        if migrate.current_version(conn) < migrate.latest_version():
            # The checks below read the columns of the newest schema: migrate as any query does.
            query = _check_query(index)
            if not query.ok:
                return [database, integrity, query], notes
        checks = [database, integrity, _check_fts(conn), _check_files(index, conn, notes)]
    return [*checks, _check_query(index)], notes


def _check_database(index, conn, notes: list[str]) -> Check:
    try:
        unmarked = db_mod.inspect(index.db_file, conn)
        version = migrate.current_version(conn)
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except (SchemaTooNew, DatabaseCorrupt) as ex:
        # A file the user named is never moved; a damaged one that carries the mark is a cache wherever it is.
        if index.explicit_db and isinstance(ex, (SchemaTooNew, db_mod.NotAnIndex)):
            return Check("database", False, f"{ex}; memsearch does not touch a file named with --db")
        return Check("database", False, str(ex), "set-aside")
    except sqlite3.Error as ex:  # not a verdict on the file (e.g. its folder cannot be written)
        return Check("database", False, f"cannot read the index ({ex})")
    if not objects:
        return Check("database", True, "empty: built by the next query", "reconcile")
    if unmarked:
        notes.append("index from before memsearch marked its indexes (PRAGMA application_id):"
                     " marked, as any query does")
    latest = migrate.latest_version()
    if version < latest:
        return Check("database", True, f"schema version {version}; migrated to {latest}, as any query does")
    # E.g. a trigger dropped by hand: the index would silently drift from its content.
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as fresh:  # what the migrations create
        migrate.migrate(fresh)
        lost = sorted(set(fresh.execute(SCHEMA_OBJECTS)) - set(conn.execute(SCHEMA_OBJECTS)))
    if lost:
        return Check("database", False, "schema objects missing: " + _some([f"{t} {n}" for t, n in lost]), "set-aside")
    return Check("database", True, f"memsearch index, schema version {version}")


def _check_query(index) -> Check:
    target = index.db_file
    scratch = not os.path.exists(target)
    made = []  # the folders opening the scratch file makes, innermost first: removed with it
    if scratch:
        target = f"{target}.doctor-{os.getpid()}"
        folder = os.path.dirname(target)
        while folder and not os.path.exists(folder):
            made.append(folder)
            folder = os.path.dirname(folder)
    try:
        with closing(db_mod.open_database(target, explicit=index.explicit_db, recover=False)) as conn:
            try:  # any word does: the point is the code path
                search_mod.run(conn, plan("memsearch"), limit=1, floor=0.0, filters={},
                               roots=list(index.layout.keys.values()))
                # A write rolled back: the lock alone succeeds on a file SQLite could only open read-only.
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(f"PRAGMA user_version = {migrate.current_version(conn)}")
                finally:
                    conn.execute("ROLLBACK")
            except sqlite3.Error as ex:
                raise db_mod.translate(ex, index.db_file) from None
    except MemsearchError as ex:
        if scratch:
            return Check("query", False, f"the index cannot be created: {str(ex).replace(target, index.db_file)}")
        return Check("query", False, f"a query would fail: {ex}")
    finally:
        if scratch:
            for suffix in ("", *db_mod.SIDE_FILES):
                with suppress(OSError):
                    os.unlink(target + suffix)
            for folder in made:
                with suppress(OSError):  # not empty: another process put its index there meanwhile
                    os.rmdir(folder)
    return Check("query", True, "opened, searched and written (rolled back) as a query does")


def _check_sqlite(conn) -> Check:
    try:
        rows = [r for (r,) in conn.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as ex:
        return Check("sqlite", False, f"integrity_check failed: {ex}", "set-aside")
    if rows == ["ok"]:
        return Check("sqlite", True, "integrity_check ok")
    return Check("sqlite", False, f"integrity_check: {len(rows)} problem(s), e.g. {'; '.join(rows[:3])}", "set-aside")


def _check_fts(conn) -> Check:
    try:
        # rank 1: also compare the index with the external content table.
        conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx, rank) VALUES('integrity-check', 1)")
    except sqlite3.DatabaseError as ex:
        if not db_mod.is_corruption(ex) and "readonly" in str(ex):  # the check is an INSERT: SQLite refuses it
            return Check("fts5", False, f"cannot run FTS5's integrity-check on a read-only index ({ex})")
        return Check("fts5", False, f"full-text index out of step with its content ({ex})", "fts-rebuild")
    return Check("fts5", True, "integrity-check ok (index matches content)")


def _check_files(index, conn, notes: list[str]) -> Check:
    stored = stored_rows(conn)[0]
    try:
        seen = index.layout.walk(index.settings.max_file_bytes, deep=True)  # as an index build walks
    except MemsearchError as ex:
        return Check("files", False, str(ex))
    # Names of a file indexed under another name are left out, as reconcile leaves them.
    hard_links(seen, {path: fp for path, fp in stored.items() if path in seen.files}, index.layout.locate)
    # A file the indexer reads and skips (unreadable, binary, UTF-16) has no row by design: not missing.
    left_out, missing = [], []
    for path in sorted(seen.files.keys() - stored.keys()):  # one text at a time: those unindexed may be many, large
        got = read_text(path, seen.files[path][0], index.settings.max_file_bytes)
        if isinstance(got, Skipped):
            left_out.append(got)
        else:
            missing.append(path)
    # Not problems of the index, but files a search cannot show as written: said, never silently.
    for what, found in (("left out of the index", [*seen.skipped, *left_out]),
                        ("indexed as plain text", malformed(conn))):
        if found:
            shown = _some([f"{quoted(p)}: {one_line(r)}" for p, r in found], "; ")
            notes.append(f"{len(found)} file(s) {what} ({shown})")
    gone = sorted(stored.keys() - seen.files.keys())
    outdated = sorted(p for p in stored.keys() & seen.files.keys() if stored[p] != seen.files[p][1])
    if not (gone or missing or outdated):
        return Check("files", True, f"{len(stored)} rows match the files")
    kinds = {"rows whose file is gone": gone, "files missing from the index": missing, "rows out of date": outdated}
    parts = [f"{len(paths)} {label} ({_some(list(map(quoted, paths)))})" for label, paths in kinds.items() if paths]
    return Check("files", False, "; ".join(parts), "reconcile")


def _some(shown: list[str], sep: str = ", ") -> str:
    """The first EXAMPLES of ``shown``, and "..." for the rest."""
    return sep.join(shown[:EXAMPLES] + ["..."] * (len(shown) > EXAMPLES))


def _notes(index) -> list[str]:
    folder = os.path.dirname(index.db_file)
    # Those deleted since the listing are no longer kept; a copy's WAL files are part of it.
    kept = [path for name in db_mod.copies_aside(index.db_file) if os.path.exists(path := os.path.join(folder, name))]
    if not kept:
        return []
    size = sum(file_bytes(path, ("", *db_mod.SIDE_FILES)) for path in kept)
    return [f"{len(kept)} damaged index file(s) kept aside in {folder} ({size // 1024} KiB):"
            " delete them once no longer needed"]


def _fix(index, found: list[Check], checked: tuple[int, int] | None, fixed: list[str]) -> None:
    """Repair what ``found`` says can be, adding to ``fixed`` what was done (kept if a later step raises)."""
    remedies = {c.remedy for c in found if not c.ok}
    if "set-aside" in remedies:
        why = next(c.detail for c in found if not c.ok and c.remedy == "set-aside")
        kept = db_mod.set_aside(index.db_file, why, checked)
        report = index.reconcile()
        if kept is None:  # not the file checked: another process set that aside and built this one
            fixed.append(f"another process had set the index aside and rebuilt it; reconciled it: {report.summary()}")
        else:
            fixed.append(f"set the index aside as {kept} and rebuilt it from the files ({len(report.added)} files)")
        return
    if "fts-rebuild" in remedies:
        with db_mod.write_transaction(index.conn) as conn:
            conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx) VALUES('rebuild')")
        fixed.append("rebuilt the full-text index from the content table (FTS5 'rebuild')")
    if "reconcile" in remedies:
        fixed.append(f"reconciled with the files: {index.reconcile().summary()}")


def format_report(report: DoctorReport) -> str:
    """The report for a person: one line per check, then fixes, notes, verdict."""
    lines = [f"index {quoted(report.database)}"]
    if report.fixed or report.failed:
        lines += [f"found   {c.name}: {c.detail}" for c in report.found if not c.ok]
        lines += [f"fixed   {what}" for what in report.fixed]
    if report.failed:
        lines.append(f"failed  a fix: {report.failed}")
    lines += [f"{'ok' if c.ok else 'PROBLEM':<7} {c.name}: {c.detail}" for c in report.remaining]
    lines += [f"note    {n}" for n in report.notes]
    if report.ok:
        lines.append("healthy" + (" after the fixes above" if report.fixed else ""))
    else:
        fixable = not (report.fixed or report.failed) and any(c.remedy for c in report.problems)
        hint = "; `memsearch doctor --fix` repairs what it can" if fixable else ""
        lines.append(f"{len(report.problems)} problem(s) remain{hint}")
    return "\n".join(lines)
