"""The history index brought in step with the transcripts (memsearch.history searches it).

A refresh costs what changed: an unchanged transcript a stat(); one that grew with its earlier bytes
unchanged (see _same_start) is read from its old end; any other change, from the start. Transcripts are
only ever read.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import ExitStack, suppress
from typing import Callable, NamedTuple

from . import db, fingerprint
from .cjk import stored
from .errors import MemsearchError
from .fingerprint import Fingerprint
from .pieces import add_pieces, drop_pieces
from .transcripts import CountingReader, Refused, as_stored, claimed_session, find, own_session, parse_line

# Bytes kept of a transcript's start and of the end of what was read (see _same_start).
CHECK_BYTES = 1024

# Rows are written every COMMIT_BYTES read or COMMIT_SECONDS spent, small transcripts' together (_Pending): the write
# lock is held only while they are inserted, the WAL stays small, and an interrupted read resumes from the last commit.
COMMIT_BYTES = 8 << 20
COMMIT_SECONDS = 0.25

# A search's refresh reads for at most this long, smallest changed transcripts first; the next searches
# read on from where it committed.
REFRESH_SECONDS = 5.0
DEFERRED = f"not read in full: a search reads for {REFRESH_SECONDS:g} s at most, the next reads on"
# The start of the reason listed for another name of a file read once (a hard link): searched, under that name.
LINKED = "the same file as "
# Files under names of several sessions whose first lines a walk reads to tell their own (transcripts.CLAIM_BYTES
# each): beyond, the name already indexed is read, as before the rule.
CLAIMS = 16

# A commit of BULK_ROWS rows or more indexes them in one FTS5 statement (db.bulk_indexing), not a trigger call
# a row, each flushing a segment; a live session's small appends keep the trigger. One statement a commit, as its
# session pieces are one (pieces.add_pieces), not one a transcript: FTS5 writes a segment at each.
BULK_ROWS = 256
BULK_HASH_BYTES = 8 << 20

# FTS5's automerge is off for history's tables (migrations/0013: it made a rare append pay a large merge); each
# commit merges in proportion to what it wrote instead: MERGE_PAGES, and a page a message.
MERGE_PAGES = 16
# A first build run to its end (not a search's, held to REFRESH_SECONDS) merges nothing as it commits, then each
# index into one segment, MERGE_ALL_PAGES a transaction (the WAL stays small): faster, as FTS5's own crisis merges
# are wider, and a search reads each word from one segment.
MERGE_ALL_PAGES = 2000

# Progress callback: (bytes read so far, bytes to read in all).
Progress = Callable[[int, int], None]

# A transcript's fingerprint columns, as written when it is first seen. While a read is unfinished its size is
# minus the file's size when that read opened it: a resumed read must tell a rewrite in place from no change.
_ZEROS = ", ".join("0" for _ in Fingerprint._fields)
_STATS = fingerprint.COLUMNS.split(", ")[1:]  # but its size
_STAT_SET = ", ".join(f"{column} = ?" for column in _STATS)
# A transcript's row as a read from ``consumed`` on begins: being read (see _ZEROS), first and last kept bytes.
_BEING_READ = (f"UPDATE history_files SET project = ?, size = ?, {_STAT_SET}, consumed = ?, head = ?, tail = ?"
               " WHERE id = ?")
_INSERT_FILE = (f"INSERT INTO history_files (root, path, project, {', '.join(_STATS)}, size, consumed, head, tail)"
                f" VALUES ({', '.join('?' * (len(_STATS) + 7))})")

INSERT_MESSAGE = ("INSERT INTO history_messages (file, line_at, line_len, part, project, session, role, at, uuid,"
                  " sidechain, body, body_seg) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


class HistoryReport(NamedTuple):
    """What a refresh did, per transcript (``grown``: read from its old end; ``reread``: from the start) and
    in all; ``skipped``: (path, reason) of files that could not be read."""

    new: int = 0
    grown: int = 0
    reread: int = 0
    removed: int = 0
    linked: int = 0
    deferred: int = 0
    unchanged: int = 0
    messages: int = 0
    bytes_read: int = 0
    skipped_lines: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {**self._asdict(), "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
                "seconds": round(self.seconds, 4)}


def refresh(conn: sqlite3.Connection, walks: Walks, progress: Progress | None, seconds: float | None) -> HistoryReport:
    """Bring the rows of ``walks.roots`` in step with their transcripts, reading for ``seconds`` at most (None:
    until done)."""
    started = time.perf_counter()
    if (report := walks.unchanged(conn)) is not None:
        return report._replace(seconds=time.perf_counter() - started)
    walks.begin()
    stored = walks.known.get(conn)
    counts = dict.fromkeys(HistoryReport._fields[:-2], 0)  # all but skipped and seconds
    skipped, todo, retry, found = [], [], False, []  # skipped: (path, why); retry: a skip that may pass
    for n, root in enumerate(walks.roots):
        passed: list = []  # (path below the root, why) of the names the walk passes over
        found += [(n, root, t) for t in find(walks.paths[root], walks.listings.setdefault(root, {}), passed)]
        skipped += [(os.path.join(root, *rel.split("/")), why) for rel, why in passed]
    reals = {}  # this walk's alone: a long-lived index kept the name of every transcript it ever saw
    for root, t in _once(found, stored, counts, skipped):
        name = (root, t.rel)
        reals[name] = t.real
        if (row := stored.get(name)) is not None and row[1:] == t.fingerprint:
            counts["unchanged"] += 1
        else:
            todo.append((root, t))
    walks.reals, seen = reals, set(reals)  # seen: the names whose rows stay
    todo.sort(key=lambda item: item[1].fingerprint.size)
    total, done = sum(t.fingerprint.size for _, t in todo), 0
    deadline = time.monotonic() + (float("inf") if seconds is None else seconds)
    first = seconds is None and bool(todo) and not conn.execute("SELECT 1 FROM history_messages LIMIT 1").fetchone()
    pending = _Pending(conn, merge=not first)
    with pending:  # its last commit done before the connection serves anything else
        for root, t in todo:
            path = os.path.join(root, t.rel)
            if time.monotonic() >= deadline:
                counts["deferred"] += 1
                skipped.append((path, DEFERRED))
                continue
            try:
                outcome = _ingest(pending, root, t, deadline, stored.get((root, t.rel)))
            except sqlite3.Error:
                raise  # the database's trouble, not this file's: the index's _guarded reports it
            except OSError as ex:  # vanished, unreadable, not a regular file, refused
                skipped.append((path, ex.strerror or str(ex)))
                if isinstance(ex, Refused):  # its rows go: what it holds now was not read
                    seen.discard((root, t.rel))
                retry = retry or not isinstance(ex, Refused)
            except Exception as ex:  # one odd transcript costs only itself (its read was rolled back)
                skipped.append((path, f"could not be indexed ({type(ex).__name__})"))
                retry = True
            else:
                for name, value in outcome.items():
                    counts[name] += value
                if outcome.get("deferred"):
                    skipped.append((path, DEFERRED))
                done += t.fingerprint.size
                if progress is not None:
                    progress(done, total)
        pending.write(overlap=False)
    merging = first and pending.messages > 0
    while merging:
        with db.write_transaction(conn):
            merging = _merge(conn, -MERGE_ALL_PAGES)
    counts["messages"] += pending.messages
    gone = [row[0] for key, row in stored.items() if key not in seen]
    for fid in gone:  # one transaction a file: the write lock is held for one file's rows at most
        with db.write_transaction(conn):
            _drop(conn, fid)
            conn.execute("DELETE FROM history_files WHERE id = ?", (fid,))
    if gone:
        _merge(conn, MERGE_PAGES)
    counts["removed"] = len(gone)
    report = HistoryReport(**counts, skipped=tuple(skipped), seconds=time.perf_counter() - started)
    walks.end(conn, found, None if report.deferred or retry else report)
    return report


# A long-lived history index watches at most this many folders, and at most a quarter of the user's inotify
# watches (fs.inotify.max_user_watches), which other programs share; a larger tree is walked each refresh.
MAX_WATCHES = 16384

# And walks nothing for at most this long after a walk began: a transcript hard-linked since from outside the
# folders it watches changes with no event (link() tells only the new name's folder, a write the name's written
# through); the next walk finds its links and stats it at every refresh, as it does every hard-linked one.
PROOF_SECONDS = 10.0


class Walks:
    """What an index keeps of its walks of ``roots``: the stored fingerprints (``known``), the file find() checked
    for each (root, path) (``reals``), each folder's listing (transcripts.find), and from its second refresh on,
    inotify watches on those folders. While no event comes, the roots are the same folders, the index is as that
    walk found it (db.Cached.key) and the transcripts no folder event covers (``alias``) stat the same, nothing
    changed since the last complete refresh: the next one walks nothing (for PROOF_SECONDS at most after that walk
    began). A one-shot search costs no watch; with no inotify (not Linux, no watch left) every refresh walks."""

    def __init__(self, roots: tuple[str, ...], paths: dict[str, str]) -> None:
        self.roots = roots  # as the index stores them (a name that is not UTF-8 spelled \\xNN)
        self.paths = paths  # each root's folder, as the file system names it
        # (root, path) -> (id, *Fingerprint) in a query a root: an unchanged transcript costs a stat, and no SQL
        # (nor the root's name read back a row).
        self.known = db.Cached(lambda conn: {(root, row[0]): row[1:] for root in roots for row in conn.execute(
            f"SELECT path, id, {fingerprint.COLUMNS} FROM history_files WHERE root = ?", (root,))})
        self.reals: dict[tuple[str, str], str] = {}
        self.listings: dict[str, dict] = {}  # root -> {folder: its listing}
        self._inotify = None  # None: not yet asked for; False: none to have
        self._watches: dict[str, int] = {}  # folder -> its watch
        self._identities: list | None = None  # the roots' db.identity() when the walk began
        self._most = 0  # the most folders it watches
        self._proof: tuple | None = None  # (what must stay the same, aliases' fingerprints, the report then, until)
        self._began = 0.0  # when the last walk began (time.monotonic())

    def unchanged(self, conn: sqlite3.Connection) -> HistoryReport | None:
        """The last complete refresh's report, its counts all unchanged, if nothing changed since; else None."""
        proof, self._proof = self._proof, None
        if proof is None or self._inotify.read(timeout=0) or time.monotonic() >= proof[3]:
            return None
        state, aliases, report, _ = proof
        try:
            if (db.Cached.key_of(conn), [db.identity(self.paths[root]) for root in self.roots]) != state or any(
                    fingerprint.of(os.stat(path)) != was for path, was in aliases):
                return None
        except OSError:
            return None
        self._proof = proof
        return report

    def begin(self) -> None:
        """Before a walk: the folders the last one listed watched, and the events so far dropped (it sees them)."""
        self._identities, self._began = None, time.monotonic()
        if self._inotify is None and self.listings:
            try:
                from .event_source import max_user_watches, require
                self._inotify = require().INotify(nonblocking=True)
                self._most = min(MAX_WATCHES, (max_user_watches() or 8192) // 4)
            except (MemsearchError, OSError):
                self._inotify = False
        if self._inotify:
            self._watch()
        if self._inotify:  # (not given up by _watch: more folders than its share)
            self._inotify.read(timeout=0)
            self._identities = [db.identity(self.paths[root]) for root in self.roots]

    def end(self, conn: sqlite3.Connection, found: list, report: HistoryReport | None):
        """After a walk (``found``: its (n, root, Transcript)): its new folders watched; ``report`` (None: not
        complete) holds till an event if every folder was watched all through the walk and the index stays as
        the walk left it (as it found it, but for the walk's own writes while no other connection committed)."""
        if not (self._inotify and self._watch() and report is not None and self._identities is not None
                and None not in self._identities):  # None: a root gone, no proof
            return
        key = self.known.key
        if conn.total_changes != key[2] and (after := db.Cached.key_of(conn))[1] == key[1]:
            key = after
        unchanged = report.new + report.grown + report.reread + report.unchanged
        aliases = [(t.alias, t.fingerprint) for _, _, t in found if t.alias]
        self._proof = ((key, self._identities), aliases, HistoryReport(
            linked=report.linked, unchanged=unchanged, skipped=report.skipped), self._began + PROOF_SECONDS)

    def _watch(self) -> bool:
        """Watches on the listed folders, none on the others; whether every listed one had its watch already.
        A watch is on a folder, not a path: added again, the folder there now keeps its watch's number only if
        it is the one watched (not one made anew or moved in since)."""
        from .event_source import MASK

        folders = {folder for listed in self.listings.values() for folder in listed}
        if len(folders) > self._most:  # more than its share of the user's watches: walked, as without inotify
            self.close()
            self._inotify = False
            return False
        for folder in self._watches.keys() - folders:
            with suppress(OSError):  # gone with its folder
                self._inotify.rm_watch(self._watches.pop(folder))
        had = True
        for folder in folders:
            try:
                watch = self._inotify.add_watch(folder, MASK)
            except OSError:  # gone meanwhile, or no watch left (the limit): walked while it lacks one
                self._watches.pop(folder, None)
                had = False
                continue
            had = had and self._watches.get(folder) == watch
            self._watches[folder] = watch
        return had

    def close(self) -> None:
        if self._inotify:
            self._inotify.close()
        self._inotify, self._proof = None, None
        self._watches.clear()


def _once(found: list, stored: dict, counts: dict, skipped: list) -> list:
    """(root, transcript) of each file of ``found`` ((root's number, root, Transcript)) once. A file reached
    twice (a link, nested roots) is read by its own path first, then the name of the session its lines claim,
    then the name already indexed, then the first in order; its other names that are not symlinks to it are
    counted and listed. Only such files are sorted."""
    seen: dict[tuple[int, int], object] = {}
    shared = {ident for _, _, t in found if seen.setdefault(ident := t.fingerprint.identity, t) is not t}
    if not shared:
        return [(root, t) for _, root, t in found]
    # A hard link named for another session must not take this one's lines: where a file's names differ in
    # session, its first lines say which is its own (CLAIMS files a walk at most, whatever the links' count).
    sessions: dict[tuple[int, int], set] = {}
    for _, _, t in found:
        if t.fingerprint.identity in shared:
            sessions.setdefault(t.fingerprint.identity, set()).add(own_session(t.rel))
    differ = [ident for ident, named in sessions.items() if len(named) > 1][:CLAIMS]
    claims = {ident: claim for ident in differ if (claim := claimed_session(seen[ident].real)) is not None}

    def order(x):
        n, root, t = x
        own = own_session(t.rel)
        return (t.alias not in ("", t.real),  # through a symlink: after
                claims.get(t.fingerprint.identity, own) != own, (root, t.rel) not in stored, n, t.rel)

    chosen: dict[tuple[int, int], tuple] = {}
    for _, root, t in sorted((x for x in found if x[2].fingerprint.identity in shared), key=order):
        one = chosen.setdefault(t.fingerprint.identity, (root, t))
        if one[1] is not t and one[1].real != t.real:
            counts["linked"] += 1
            skipped.append((os.path.join(root, t.rel),
                            f"{LINKED}{os.path.join(one[0], one[1].rel)} (a hard link): read once"))
    return [(root, t) for _, root, t in found if chosen.get(t.fingerprint.identity, (root, t))[1] is t]


def _drop(conn: sqlite3.Connection, fid: int) -> None:
    drop_pieces(conn, "p.file = ?", (fid,))
    conn.execute("DELETE FROM history_messages WHERE file = ?", (fid,))


def _ingest(pending: _Pending, root: str, t, deadline: float, known: tuple | None) -> dict:
    """Read one transcript from where the index left it, up to its size at open, with no lock held. One the index
    has (``known``: its id and fingerprint as the walk read them) is first recorded as being read (its size negative
    until done: an interrupted read resumes, see _same_start); one new to it, or another file under its name, with
    its first rows (a transaction of its own would wait for the commit thread)."""
    out, conn = {"bytes_read": 0, "skipped_lines": 0}, pending.conn
    with CountingReader(t.real) as reader:
        now, start = fingerprint.of(reader.stat), 0
        was = None if known is None else fingerprint.make(known[1:])
        if was is None or not _same_file(now, was):
            out["new" if was is None else "reread"] = 1
            _read_lines(pending, reader, _Row(known and known[0], root, t.rel, t.project, was), 0, t, out, deadline)
            out["bytes_read"] = reader.bytes_read
            return out
        pending.wait()
        with db.write_transaction(conn):
            row = conn.execute(f"SELECT id, consumed, head, tail, {fingerprint.COLUMNS} FROM history_files"
                               " WHERE root = ? AND path = ?", (root, t.rel)).fetchone()
            if row is None:
                fid = conn.execute(f"INSERT INTO history_files (root, path, project, consumed, head, tail,"
                                   f" {fingerprint.COLUMNS}) VALUES (?, ?, ?, 0, x'', x'', {_ZEROS})",
                                   (root, t.rel, t.project)).lastrowid
                out["new"] = 1
            else:
                fid, consumed, head, tail, *fp = row
                was = fingerprint.make(fp)
                # ctime -1: a row from before it was kept (migration 0009), vouched for as before.
                if was == now or (was.ctime_ns == -1 and was._replace(ctime_ns=now.ctime_ns, device=now.device) == now):
                    conn.execute("UPDATE history_files SET ctime_ns = ?, device = ? WHERE id = ?",
                                 (now.ctime_ns, now.device, fid))
                    out["unchanged"] = 1
                    return out
                if _same_start(reader, was, consumed, head, tail):
                    start, out["grown"] = consumed, 1
                else:
                    _drop(conn, fid)
                    out["reread"] = 1
            if start == 0:
                head = tail = b""
            conn.execute(_BEING_READ, (t.project, -now.size, *now[1:], start, head, tail, fid))
        # A read that stopped inside an overlong line (no newline before ``start``) goes on passing over it.
        _read_lines(pending, reader, _Row(fid, root, t.rel, t.project, None), start, t, out, deadline,
                    tail[-1:] not in (b"", b"\n"))
        out["bytes_read"] = reader.bytes_read
    return out


class _Row:
    """A transcript's row in history_files as its read writes it: ``fid`` None until its first rows make it;
    ``replaces``: the fingerprint of another file indexed under its name, whose rows its first rows replace."""

    __slots__ = ("fid", "root", "path", "project", "replaces")

    def __init__(self, fid: int | None, root: str, path: str, project: str, replaces: Fingerprint | None) -> None:
        self.fid, self.root, self.path, self.project, self.replaces = fid, root, path, project, replaces


def _read_lines(pending: _Pending, reader: CountingReader, row: _Row, start: int, t, out: dict,
                deadline: float, skipping: bool = False) -> None:
    """Queue the parts of every complete line from ``start`` (``skipping``: inside an overlong one) in bounded
    batches, until ``deadline`` (then the read stops after a batch, ``out["deferred"]`` set)."""
    stored_as = as_stored(t.rel)
    batch, at, clock = [], start, time.monotonic()
    for offset, raw in reader.lines(start, skipping):
        parts = None if raw is None else (parse_line(raw) if raw.strip() else [])
        if parts is None:  # overlong, not JSON, too deep, not an object
            out["skipped_lines"] += 1
        else:
            batch.extend((offset, len(raw), n, t.project, *stored_as(p), *stored(p.text))
                         for n, p in enumerate(parts))
        if reader.end - at >= COMMIT_BYTES or time.monotonic() - clock >= COMMIT_SECONDS:
            if not pending.add(reader, row, at, batch, False, clock):
                return
            at, batch, clock = reader.end, [], time.monotonic()
            if clock >= deadline:
                out["deferred"] = 1
                return
    pending.add(reader, row, at, batch, True, clock)


class _Pending:
    """Lines parsed and not yet written, small transcripts' together (not a commit and FTS5 segment each) once
    COMMIT_BYTES were read or COMMIT_SECONDS spent since the first began; no lock is held while one is read. A
    commit's FTS5 work runs in a thread while the next lines are read (sqlite3 lets go of the GIL in a statement):
    the connection is the thread's until wait(), and the reader's again after ``with``."""

    def __init__(self, conn: sqlite3.Connection, merge: bool):
        self.conn, self.merge, self.batches, self.read, self.since, self.messages = conn, merge, [], 0, None, 0
        self._writer: threading.Thread | None = None
        self._error: BaseException | None = None

    def __enter__(self) -> _Pending:
        return self

    def __exit__(self, kind, *_) -> None:
        if kind is None:
            self.wait()
        elif self._writer is not None:  # the error raised goes on; the connection is free once the thread ends
            self._writer.join()

    def add(self, reader: CountingReader, row: _Row, expected: int, rows: list, done: bool, begun: float) -> bool:
        """Queue ``rows``, the transcript's lines from ``expected`` to ``reader.end`` (read from ``begun`` on),
        and write the queue if it is due; False: another process took the transcript meanwhile. A batch: (its
        row, that row as it must still be: consumed and the unfinished fingerprint (_ZEROS), its rows, its row
        after: size (minus the size at open until read in full), consumed, first and last kept bytes for
        _same_start)."""
        st, end = reader.stat, reader.end
        size, unfinished = min(CHECK_BYTES, end), (-st.st_size, *fingerprint.key(st)[1:])
        after = (st.st_size if done else unfinished[0], end, reader.pread(size, 0), reader.pread(size, end - size))
        self.batches.append((row, (expected, *unfinished), rows, after))
        self.read += end - expected
        self.since = begun if self.since is None else self.since
        if self.read < COMMIT_BYTES and time.monotonic() - self.since < COMMIT_SECONDS:
            return True
        return self.write()

    def write(self, overlap: bool = True) -> bool:
        """Write the queued batches in one transaction, its end in a thread if ``overlap`` (else the refresh's
        last commit, not worth a thread); False if the last one's transcript was taken."""
        batches, self.batches, self.read, self.since = self.batches, [], 0, None
        written, rows = True, 0
        if not batches:
            return written
        self.wait()
        with ExitStack() as transaction:
            transaction.enter_context(db.write_transaction(self.conn))
            for row, before, _, _ in batches:  # (before db.bulk_indexing drops the triggers that unindex rows)
                if row.replaces is not None:
                    _replace(self.conn, row, before)
            last = self.conn.execute("SELECT coalesce(max(id), 0) FROM history_messages").fetchone()[0]
            bulk = ExitStack()
            if sum(len(batch[2]) for batch in batches) >= BULK_ROWS:
                bulk.enter_context(db.bulk_indexing(self.conn, "history_messages", "history_fts", BULK_HASH_BYTES,
                                                    "idx_body"))
            for batch in batches:
                written = _write(self.conn, *batch)
                rows += len(batch[2]) if written else 0
            commit = transaction.pop_all()
        self.messages += rows
        if overlap:
            self._writer = threading.Thread(target=self._commit, args=(commit, bulk, last, rows),
                                            name="memsearch-history-commit")
            self._writer.start()
        else:
            self._commit(commit, bulk, last, rows)
            self.wait()
        return written

    def _commit(self, transaction: ExitStack, bulk: ExitStack, last: int, rows: int) -> None:
        try:
            with transaction:
                bulk.close()  # the FTS5 statement of db.bulk_indexing
                add_pieces(self.conn, last)
                if self.merge:
                    _merge(self.conn, MERGE_PAGES + rows)
        except BaseException as ex:  # raised by wait(), in the reading thread
            self._error = ex

    def wait(self) -> None:
        """Until the last commit is done (its error raised here)."""
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def _replace(conn: sqlite3.Connection, row: _Row, before: tuple) -> None:
    """Drop the rows of the file indexed under the transcript's name, and record it as being read as ``before``
    says, if its row is still as the walk found it (else _write finds the row taken)."""
    was = conn.execute(f"SELECT {fingerprint.COLUMNS} FROM history_files WHERE id = ?", (row.fid,)).fetchone()
    if was == row.replaces:
        _drop(conn, row.fid)
        conn.execute(_BEING_READ, (row.project, *before[1:], before[0], b"", b"", row.fid))
    row.replaces = None


def _write(conn: sqlite3.Connection, row: _Row, before: tuple, rows: list, after: tuple) -> bool:
    """Insert ``rows`` if the transcript's row still says the read got to where they begin (``before``), or if
    it has none yet, with it; False if another process took those lines."""
    if row.fid is None:
        try:
            row.fid = conn.execute(_INSERT_FILE, (row.root, row.path, row.project, *before[2:], *after)).lastrowid
        except sqlite3.IntegrityError:  # (root, path) recorded meanwhile by another process, which reads it
            return False
    else:
        was = conn.execute(f"SELECT consumed, {fingerprint.COLUMNS} FROM history_files WHERE id = ?", (row.fid,))
        if was.fetchone() != before:
            return False
        conn.execute("UPDATE history_files SET size = ?, consumed = ?, head = ?, tail = ? WHERE id = ?",
                     (*after, row.fid))
    conn.executemany(INSERT_MESSAGE, [(row.fid, *r) for r in rows])
    return True


def _merge(conn: sqlite3.Connection, pages: int) -> bool:
    """FTS5's 'merge' of ``pages`` on each index (negative: towards one segment each); whether any merged."""
    before, indexes = conn.total_changes, ("history_fts", "history_session_fts", "history_user_fts")
    for fts in indexes:
        conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('merge', ?)", (pages,))
    return conn.total_changes - before > len(indexes)  # each command counts one change, and more only if it merged


def _same_file(now: Fingerprint, was: Fingerprint) -> bool:
    """Whether ``now`` is of the file ``was`` fingerprinted (device -1: a row from before 0009, which kept none)."""
    return now.inode == was.inode and was.device in (-1, now.device)


def _same_start(reader: CountingReader, was: Fingerprint, consumed: int, head: bytes, tail: bytes) -> bool:
    """Whether a transcript still begins with the bytes read before, as far as a check in proportion to an
    append can tell: the same file, longer, not older (a restored copy can be), the same first and last kept
    bytes (a rewrite of middle bytes alone goes unnoticed). ``was``: its size negative while a read is unfinished
    (see _ZEROS); the same size then is no change only with the same times."""
    st = reader.stat
    if not _same_file(fingerprint.of(st), was):
        return False
    if st.st_size < consumed or st.st_size < abs(was.size) or st.st_mtime_ns < was.mtime_ns:
        return False
    same_times = (st.st_mtime_ns, st.st_ctime_ns) == (was.mtime_ns, was.ctime_ns)
    if st.st_size == abs(was.size) and (was.size > 0 or not same_times):
        return False
    return reader.pread(len(head), 0) == head and reader.pread(len(tail), consumed - len(tail)) == tail
