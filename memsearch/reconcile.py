"""Bring the index in step with the files: the heart of "never stale".

walk (paths + fingerprints) → compare with the stored fingerprints →
re-read only what changed → one write transaction for all of it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import nullcontext, suppress
from itertools import chain, islice
from operator import itemgetter
from typing import Callable, Iterable, Iterator, NamedTuple

from .db import INDEXED, WRITTEN, Cached, building, bulk_indexing, rows_of, write_transaction
from .errors import RootNotFound, quoted
from .freshness import disown
from .layout import Layout
from .metadata import FIELDS
from .prepare import Prepared, failed, prepare_one
from .fingerprint import COLUMNS, RACY_NS, Fingerprint, make, of
from .memory_file import real_path
from .walk import LINK_NAMES, FileInfo, Skipped, Walk, walk, walk_paths

# A batch this large (and at least half the index) is indexed by one FTS5
# 'rebuild' (see db.bulk_indexing).
BULK_MIN = 1000

# A first build indexes its rows into FTS5 every this many, while the files after them are read (in a second
# process from BULK_READ_MIN): one 'rebuild' at the end kept that process idle while FTS5 worked alone. Each step
# writes a segment that FTS5's automerge merges again: fewer, larger steps merge less.
BULK_STEP = 4096

# FTS5 writes a segment whenever it holds this much in memory: a 'rebuild' with 16 MB instead
# of 1 MB writes a few large segments. Stored in the index, so the default is put back after.
BULK_HASH_BYTES = 16 << 20

# FTS5 writes a segment at each statement's savepoint, and a query looks every word up in each:
# a reconcile that wrote rows ends with an FTS5 'merge' of at most this many pages. (A negative
# count, merging even two segments, kept adding levels on a large index.)
MERGE_PAGES = 500

# From this many files to read, a second process reads them while this one writes
# (memsearch.bulkread), worth its start-up.
BULK_READ_MIN = 4096

UPSERT = (f"INSERT INTO memory_fts ({', '.join(WRITTEN)}) VALUES ({', '.join('?' * len(WRITTEN))})"
          f" ON CONFLICT (path) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in WRITTEN[1:])}")


class ReconcileReport(NamedTuple):
    """What a reconcile did. ``malformed``: every file of the index whose
    frontmatter was ignored, with the reason, not only those read now.
    ``left_out``: LeftOuts an index build counts (see MemoryIndex.left_out)."""

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: int = 0
    skipped: tuple[Skipped, ...] = ()
    seconds: float = 0.0
    malformed: tuple[Skipped, ...] = ()
    left_out: tuple = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        text = (f"{len(self.added)} added, {len(self.updated)} updated, {len(self.removed)} removed,"
                f" {self.unchanged} unchanged, {len(self.skipped)} skipped")
        if self.left_out:
            text += f", {sum(x.files for x in self.left_out)} left out"
        return text + (f", {len(self.malformed)} with unusable frontmatter" if self.malformed else "")


class LeftOut(NamedTuple):
    """Files a root leaves out by design, counted: ``files`` of them under
    ``root`` (its name), ``reason``, and ``hint``: what includes them."""

    root: str
    files: int
    reason: str
    hint: str

    def describe(self) -> str:
        return f"{self.files} Markdown files in {self.root} {self.reason}: {self.hint}"


class _Plan:
    """What a reconcile writes (files to read, rows to remove), then what it wrote."""

    __slots__ = ("stored", "to_read", "removed", "unchanged", "added", "updated", "unreadable")

    def __init__(self, stored: dict[str, Fingerprint], to_read: list[FileInfo], unchanged: int):
        self.stored, self.to_read, self.unchanged = stored, to_read, unchanged  # unchanged: racy rows re-read too
        self.removed, self.added, self.updated, self.unreadable = [], [], [], []


Progress = Callable[[int, int], None]


def reconcile(conn: sqlite3.Connection, layout: Layout, *, max_file_bytes: int, progress: Progress | None = None,
              known: Cached, deep: bool, first_build=building) -> ReconcileReport:
    """``deep`` (no default: each caller says): look for nested instruction
    files in repos roots, as an index build does. ``first_build``: how a first build writes (db.building)."""
    started = time.perf_counter()
    dropped = _drop_roots_turned_off(conn, layout)
    stored, racy = known.get(conn)
    seen = layout.walk(max_file_bytes, stored, racy, walker=walk, deep=deep)  # walk: reconcile's, as the tests patch it
    hard_links(seen, stored, layout.locate)
    report = ReconcileReport(unchanged=seen.unchanged, skipped=tuple(seen.skipped))
    if seen.files or seen.missing:
        report = _write(conn, layout, seen, stored, None, progress, max_file_bytes, first_build)
    return report._replace(removed=tuple(dropped) + report.removed, seconds=time.perf_counter() - started,
                           malformed=malformed(conn))


def reconcile_paths(conn: sqlite3.Connection, layout: Layout, paths: Iterable[str], *, max_file_bytes: int,
                    known: Cached, deep: bool) -> ReconcileReport:
    """Bring just ``paths`` (index paths, files or folders) and every row under
    them in step, at a cost that follows the paths: how the watcher applies a
    batch of events. A root named whole is reconciled; so are the roots for a
    path in a repos root (walk_paths never enters its hidden folders; ``deep``:
    with nested instruction files looked for)."""
    started = time.perf_counter()
    kept, last = [], None  # the paths without those inside another one of them
    # Sorted by their names, a folder's paths follow it: each is compared with the last kept alone (joining every
    # ancestor of each path cost a batch of 100 files 2,000 folders deep 2.5 s).
    for parts in sorted(path.split("/") for path in set(paths)):
        if last is None or parts[:len(last)] != last:
            kept.append("/".join(parts))
            last = parts
    tops = sorted(kept)
    repos = tuple(layout.repos)
    if repos and any(path.startswith(repos) for path in tops):
        return reconcile(conn, layout, max_file_bytes=max_file_bytes, known=known, deep=deep)
    if any(path in ("", *map(layout.label, layout.roots)) for path in tops):  # a whole root
        return reconcile(conn, layout, max_file_bytes=max_file_bytes, known=known, deep=True)
    before = stored_rows(conn, tops)  # what the walk below is compared with
    seen = Walk()
    for folder, prefix, _ in layout.starts():
        # A folder above this one: all of it; else the paths inside it.
        rels = None if any(prefix.startswith(path + "/") for path in tops) else [
            path[len(prefix):] for path in tops if path.startswith(prefix)]
        if rels == []:
            continue
        try:
            found = walk(folder, max_file_bytes) if rels is None else walk_paths(folder, rels, max_file_bytes)
        except RootNotFound:
            continue  # a project folder that went away: its rows go below
        seen.add(found, prefix)
    seen.missing = [path for path in before[0] if path not in seen.files]
    hard_links(seen, known.get(conn)[0], layout.locate)
    other_names = [path for path in seen.missing if path not in before[0]]  # rows of links elsewhere
    if other_names:
        tops += other_names
        before = stored_rows(conn, tops)
    report = ReconcileReport(unchanged=len(seen.files), skipped=tuple(seen.skipped))
    if seen.missing or _changed(seen, before):
        report = _write(conn, layout, seen, before[0], tops, None, max_file_bytes)
    return report._replace(seconds=time.perf_counter() - started)


def _write(conn, layout: Layout, seen: Walk, known: dict[str, Fingerprint],
           paths: list[str] | None, progress: Progress | None, max_file_bytes: int,
           first_build=building) -> ReconcileReport:
    """Plan again against what is stored now (another process may have written since the walk) and
    carry it out in one write transaction. ``paths``: the rows at or under these only, and no bulk
    'rebuild' (it re-indexes the whole table)."""
    # Not in a file holding transcripts (a --db the history shares): its spilled pages would lock their readers out.
    first = (paths is None and not known and len(seen.files) >= BULK_MIN
             and not conn.execute("SELECT 1 FROM history_files LIMIT 1").fetchone())
    with first_build(conn) if first else nullcontext(), write_transaction(conn):
        if paths is None:
            disown(conn, layout.keys.values())
        plan = _plan(layout, seen, known, stored_rows(conn, paths), max_file_bytes)
        conn.executemany("INSERT OR IGNORE INTO memory_roots (key) VALUES (?)", ((k,) for k in layout.keys.values()))
        root_ids = dict(conn.execute("SELECT key, id FROM memory_roots"))
        bulk = paths is None and len(plan.to_read) >= BULK_MIN and len(plan.to_read) >= len(plan.stored) // 2
        fresh = bulk and not plan.stored  # rows only added: FTS5 indexes them step by step, beside the reading
        with (bulk_indexing(conn, "memory_fts", "memory_fts_idx", BULK_HASH_BYTES,
                            ", ".join(INDEXED) if fresh else None)
              if bulk else nullcontext()) as index_inserted:
            rows = _read_rows(plan, seen.skipped, progress, layout, root_ids, max_file_bytes)
            if fresh:
                for first in rows:  # (each step streamed: BULK_STEP large files are never held at once)
                    conn.executemany(UPSERT, chain([first], islice(rows, BULK_STEP - 1)))
                    index_inserted()
            else:
                conn.executemany(UPSERT, rows)
            # Files gone or unreadable since the walk keep no old text searchable.
            gone = plan.removed + [p for p in plan.unreadable if p in plan.stored]
            conn.executemany("DELETE FROM memory_fts WHERE path = ?", ((p,) for p in gone))
        if not bulk and (plan.added or plan.updated or gone):  # fold the one-row segments left (see MERGE_PAGES)
            conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
    return ReconcileReport(tuple(plan.added), tuple(plan.updated), tuple(gone), plan.unchanged, tuple(seen.skipped))


def _changed(seen: Walk, now: tuple[dict[str, Fingerprint], set[str]]) -> list[FileInfo]:
    stored, racy = now
    return [FileInfo(rel, abspath, fp) for rel, (abspath, fp) in seen.files.items()
            if stored.get(rel) != fp or rel in racy]



def hard_links(seen: Walk, stored: dict[str, Fingerprint], locate: Callable[[str], str]) -> None:
    """Hard links: an index reads and stores one (device, inode) once, under the first of its
    present names in sorted order, with the symlinks to that name (reached through a link, a
    file is the same name), LINK_NAMES names in all. The other names leave ``seen.files`` for
    ``seen.skipped``, their rows for ``seen.missing``; when the first name goes, the next is read at
    the next reconcile. N links cost N stats. ``stored``: the index's fingerprints; ``locate``: an
    index path's file."""
    files = seen.files
    if not files:
        return
    groups: dict[tuple[int, int], list[str]] = {}
    for rel, (_, fp) in files.items():
        groups.setdefault(fp.identity, []).append(rel)
    missing = set(seen.missing)
    for path, fp in stored.items():
        if fp.identity in groups and path not in files and path not in missing:  # found unchanged: still this file?
            groups[fp.identity].append(path)
    for identity, names in groups.items():
        if len(names) < 2:
            continue
        real = {rel: files[rel][0] if rel in files else _real(locate, rel, identity) for rel in names}
        real = {rel: path for rel, path in real.items() if path is not None}
        if len(real) <= LINK_NAMES and len(set(real.values())) < 2:
            continue  # one name, or a few symlinks to it: nothing to leave out
        first = min(real)
        kept = set(sorted(rel for rel, path in real.items() if path == real[first])[:LINK_NAMES])
        for rel, path in real.items():
            if rel in kept:
                continue
            if files.pop(rel, None) is None:
                seen.unchanged -= 1
            if rel in stored:
                seen.missing.append(rel)
            why = "a hard link to" if path != real[first] else f"one of more than {LINK_NAMES} links to"
            seen.skipped.append(Skipped(rel, f"{why} {quoted(first)}, which is indexed"))


def _real(locate: Callable[[str], str], rel: str, identity: tuple[int, int]) -> str | None:
    """The real path of the file at index path ``rel`` if it is the file ``identity``."""
    with suppress(OSError, KeyError):
        path = real_path(locate(rel))
        return path if of(os.stat(path)).identity == identity else None
    return None


def _drop_roots_turned_off(conn, layout: Layout) -> list[str]:
    """Delete the rows of roots not in ``layout`` (turned off, or kind or folder changed): their paths."""
    active = set(layout.keys.values())
    if all(key in active for (key,) in conn.execute("SELECT key FROM memory_roots")):
        return []
    with write_transaction(conn):
        disown(conn, active)
        stale = [i for i, key in conn.execute("SELECT id, key FROM memory_roots") if key not in active]
        paths = [p for (p,) in rows_of(conn, "SELECT path FROM memory_fts WHERE root IN ({marks})", stale)]
        conn.executemany("DELETE FROM memory_fts WHERE root = ?", ((i,) for i in stale))
        conn.executemany("DELETE FROM memory_roots WHERE id = ?", ((i,) for i in stale))
    return paths


def malformed(conn) -> tuple[Skipped, ...]:
    """Every indexed file whose frontmatter was ignored, with the reason (reconcile's report, doctor)."""
    return tuple(Skipped(path, error) for path, error in conn.execute(
        "SELECT path, frontmatter_error FROM memory_fts WHERE frontmatter_error IS NOT NULL ORDER BY path"))


def stored_rows(conn, paths: list[str] | None = None) -> tuple[dict[str, Fingerprint], set[str]]:
    """Stored fingerprints by path, and the paths marked racy: of every row, or of the rows at or
    under ``paths`` ('0' follows '/': [p/, p0) is every path below p, on the path index)."""
    fingerprints: dict[str, Fingerprint] = {}
    racy: set[str] = set()
    where = "" if paths is None else " WHERE path = ? OR (path >= ? AND path < ?)"
    for args in [()] if paths is None else [(path, path + "/", path + "0") for path in paths]:
        rows = conn.execute(f"SELECT path, racy, {COLUMNS} FROM memory_fts{where}", args).fetchall()
        fingerprints.update(zip(map(itemgetter(0), rows), map(make, map(itemgetter(slice(2, None)), rows))))
        racy.update(row[0] for row in rows if row[1])
    return fingerprints, racy


def _plan(layout: Layout, seen: Walk, known: dict[str, Fingerprint], now: tuple[dict[str, Fingerprint], set[str]],
          max_file_bytes: int) -> _Plan:
    """What to write, given the walk and the index as it is under the lock."""
    stored, to_read = now[0], _changed(seen, now)
    # The walk's other files: another process indexed these very versions.
    plan = _Plan(stored, to_read, len(seen.files) - len(to_read))
    missing = set(seen.missing)
    for rel in known:  # the walk counted these unchanged; the lock may say otherwise
        if rel in seen.files or rel in missing:
            continue
        if stored.get(rel) == known[rel]:
            plan.unchanged += 1
        else:  # changed or removed in the index by another process meanwhile
            again = _restat(layout, rel, max_file_bytes)
            plan.to_read.extend(again)
            if not again and rel in stored:
                plan.removed.append(rel)
    for rel in seen.missing:
        if rel not in stored:
            continue
        # Deleted and created again while we walked, and indexed by another
        # process whose walk is newer than ours: look before removing it.
        again = [] if stored[rel] == known[rel] else _restat(layout, rel, max_file_bytes)
        plan.to_read.extend(again)
        if not again:
            plan.removed.append(rel)
    return plan


def _restat(layout: Layout, rel: str, max_file_bytes: int) -> list[FileInfo]:
    """A file the walk found unchanged, looked at again (another process rewrote its row meanwhile)."""
    for folder, prefix, _ in layout.starts():
        if rel.startswith(prefix):
            try:
                found = walk_paths(folder, [rel[len(prefix):]], max_file_bytes).files
            except OSError:
                return []
            return [FileInfo(prefix + r, *info) for r, info in found.items()]
    return []  # gone: the row goes with plan.removed


def _read_rows(plan: _Plan, skipped: list, progress: Progress | None, layout: Layout, root_ids: dict[str, int],
               max_file_bytes: int) -> Iterator[tuple]:
    """Rows to upsert, read lazily so a cold build streams (a large batch by a second process)."""
    infos, total = plan.to_read, len(plan.to_read)
    if total >= BULK_READ_MIN:
        from .bulkread import prepared

        results = prepared(infos, max_file_bytes)
    else:
        results = ((info, prepare_one(info.relpath, info.abspath, max_file_bytes)) for info in infos)
    for done, (info, got) in enumerate(results, 1):
        if progress and (done % 256 == 0 or done == total):
            progress(done, total)
        if isinstance(got, Prepared):
            try:
                row = _row(info, got, layout, root_ids)
            except Exception as ex:  # one odd path never stops the batch (see prepare_one)
                got = Skipped(info.relpath, failed(ex))
        if isinstance(got, Skipped):
            skipped.append(got)
        if not isinstance(got, Prepared):
            plan.unreadable.append(info.relpath)
            continue
        before = plan.stored.get(info.relpath)
        if before is None:
            plan.added.append(info.relpath)
        elif before == info.fingerprint:
            plan.unchanged += 1
        else:
            plan.updated.append(info.relpath)
        yield row


def _row(info: FileInfo, got: Prepared, layout: Layout, root_ids: dict[str, int]) -> tuple:
    root_key, scope, scope_id, kind = layout.describe(info.relpath, got.meta)
    fields = [getattr(got.meta, field, None) for field in FIELDS]
    # Re-read at each reconcile until it settles; by the ctime too: a rewrite in the ctime's tick with the
    # mtime put back keeps the whole fingerprint. An mtime further ahead than the window was set, not written now
    # (touch -d 2200-01-01; a write moves the ctime): counted, it kept the file racy, re-read by every query.
    now, fp = time.time_ns(), info.fingerprint
    racy = fp.ctime_ns + RACY_NS > now or now - RACY_NS < fp.mtime_ns < now + RACY_NS
    return (info.relpath, root_ids[root_key], scope, scope_id, kind, *fields, got.body,
            getattr(got.meta, "error", None), racy, *got.segs, *info.fingerprint)
