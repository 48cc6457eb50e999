"""Bring the index in step with the files: the heart of "never stale".

walk (paths + fingerprints) → compare with the stored fingerprints →
re-read only what changed → one write transaction for all of it.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from .db import write_transaction
from .layout import classify
from .walk import FileInfo, Skipped, walk

# A file modified this close to the moment it was read may be modified again
# within the same timestamp tick without any change of size or mtime. Such
# rows are re-read at each reconcile until the file is older than this when
# read. Two seconds covers coarse clocks (FAT, some network file systems).
RACY_NS = 2_000_000_000

# Files whose first bytes contain NUL are binary, whatever their name.
BINARY_PROBE = 8192

UPSERT = """
INSERT INTO memory_fts (path, scope, scope_id, type, body, fingerprint, indexed_ns)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET
    scope = excluded.scope, scope_id = excluded.scope_id, type = excluded.type,
    body = excluded.body, fingerprint = excluded.fingerprint, indexed_ns = excluded.indexed_ns
"""


@dataclass(frozen=True)
class ReconcileReport:
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: int = 0
    skipped: tuple[Skipped, ...] = ()
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.updated)} updated, {len(self.removed)} removed,"
            f" {self.unchanged} unchanged, {len(self.skipped)} skipped"
        )


@dataclass
class _Plan:
    to_read: list[FileInfo] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


@dataclass
class _Outcome:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    rechecked: int = 0  # racy rows re-read with an unchanged fingerprint


Progress = Callable[[int, int], None]


def reconcile(
    conn: sqlite3.Connection, root: str, *, max_file_bytes: int, progress: Progress | None = None
) -> ReconcileReport:
    started = time.perf_counter()
    files, skipped = walk(root, max_file_bytes)
    plan = _plan(files, _stored(conn))
    if not plan.to_read and not plan.removed:
        return ReconcileReport(unchanged=plan.unchanged, skipped=tuple(skipped), seconds=time.perf_counter() - started)

    out = _Outcome()
    with write_transaction(conn):
        # Another process may have done part of this work while we waited
        # for the lock: plan again against what is stored now.
        stored = _stored(conn)
        plan = _plan(files, stored)
        conn.executemany(UPSERT, _read_rows(plan.to_read, stored, out, skipped, progress))
        # Files that vanished or turned unreadable since the walk must not
        # keep their old text searchable.
        gone = plan.removed + [p for p in out.unreadable if p in stored]
        conn.executemany("DELETE FROM memory_fts WHERE path = ?", ((p,) for p in gone))
    return ReconcileReport(
        added=tuple(out.added),
        updated=tuple(out.updated),
        removed=tuple(gone),
        unchanged=plan.unchanged + out.rechecked,
        skipped=tuple(skipped),
        seconds=time.perf_counter() - started,
    )


def _stored(conn) -> dict[str, tuple[str, int]]:
    return {path: (fp, at) for path, fp, at in conn.execute("SELECT path, fingerprint, indexed_ns FROM memory_fts")}


def _plan(files: dict[str, FileInfo], stored: dict[str, tuple[str, int]]) -> _Plan:
    plan = _Plan(removed=[path for path in stored if path not in files])
    for rel, info in files.items():
        row = stored.get(rel)
        if row is None or row[0] != info.fingerprint or info.mtime_ns + RACY_NS > row[1]:
            plan.to_read.append(info)
        else:
            plan.unchanged += 1
    return plan


def _read_rows(infos: list[FileInfo], stored, out: _Outcome, skipped: list, progress: Progress | None) -> Iterator[tuple]:
    """Rows to upsert, read lazily so a cold build streams instead of
    holding every file in memory."""
    total = len(infos)
    for done, info in enumerate(infos, 1):
        if progress and (done % 256 == 0 or done == total):
            progress(done, total)
        body = read_text(info, skipped)
        if body is None:
            out.unreadable.append(info.relpath)
            continue
        before = stored.get(info.relpath)
        if before is None:
            out.added.append(info.relpath)
        elif before[0] == info.fingerprint:
            out.rechecked += 1
        else:
            out.updated.append(info.relpath)
        scope, scope_id, kind = classify(info.relpath)
        yield (info.relpath, scope, scope_id, kind, body, info.fingerprint, time.time_ns())


def read_text(info: FileInfo, skipped: list[Skipped]) -> str | None:
    """The file's text, or None (and a Skipped entry) when it can't be indexed.

    Invalid UTF-8 is indexed with replacement characters rather than
    dropped: one bad byte should not hide a whole note.
    """
    try:
        with open(info.abspath, "rb") as f:
            data = f.read(info.size + 1)
    except FileNotFoundError:
        return None  # deleted since the walk; the next reconcile removes its row
    except OSError as ex:
        skipped.append(Skipped(info.relpath, f"unreadable ({ex.strerror or type(ex).__name__})"))
        return None
    if b"\0" in data[:BINARY_PROBE]:
        skipped.append(Skipped(info.relpath, "binary file"))
        return None
    return data.decode("utf-8-sig", "replace")


