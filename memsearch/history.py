"""HistoryIndex: search the agents' past sessions, the transcripts.

Memory holds distilled facts; the exact command or error text lives only in
the conversation. The transcripts' cleaned messages (memsearch.transcripts) get
tables of their own (migrations/0006_history.sql), searched with the memory
search's query builder, ranking and floor; memory search never imports this.

Every search first catches up with the files, at a cost in proportion to what
changed: an unchanged transcript costs a stat(); one that grew with its
earlier bytes unchanged (see _same_start) is read from its old end; any other
change, from the start. Transcripts are only ever read.
"""

from __future__ import annotations

import os
import sqlite3
import time
from operator import itemgetter
from typing import Callable, NamedTuple

from . import db, fingerprint
from .cjk import segmented, unsegment_snippet
from .errors import AmbiguousSession, InvalidArgument, MemsearchError, SessionNotFound
from .fingerprint import Fingerprint
from .format import quoted
from .query import Query, plan, unmatched
from .search import (apply_floor, cap, fetch_size, mark_unmatched, ranking, scored_strings, short_repr, string_params,
                     text_snippet)
from .session_context import SessionContext, check_arguments, select
from .settings import (DEFAULT_LIMIT, MARK_CLOSE, MARK_OPEN, Settings,
                       check_floor, check_limit, encodable, given_path, load_settings, read_config)
from .memory_file import below
from .pieces import add_pieces, drop_pieces, last_id
from .transcripts import (ROLES, CountingReader, Refused, find, own_session, parse_line, parse_time, resolve_root,
                          slug, utc_text)

# Bytes kept of a transcript's start and of the end of what was read (see _same_start).
CHECK_BYTES = 1024

# A read writes its rows every COMMIT_BYTES read or COMMIT_SECONDS spent, whichever comes first, in
# a transaction of their own: the write lock is held only while they are inserted (another process,
# or the memory index sharing the database, waits that long at most), the WAL stays small, and an
# interrupted read resumes from the last commit.
COMMIT_BYTES = 8 << 20
COMMIT_SECONDS = 0.25

# A search's refresh reads for at most this long, smallest changed transcripts first: a search answers
# within seconds with what was read, a file that grows as fast as it is read (or a first build of a
# large history) is read on by the next searches, from where this one committed.
REFRESH_SECONDS = 5.0
DEFERRED = f"not read in full: a search reads for {REFRESH_SECONDS:g} s at most, the next reads on"

# A commit of at least BULK_ROWS rows indexes them in one FTS5 statement, the insert trigger dropped
# meanwhile (as reconcile does): a trigger call per row flushed FTS5's pending terms as a segment
# each (see bench/README.md, issue 16). A live session's small appends keep the trigger.
BULK_ROWS = 256
BULK_HASH_BYTES = 8 << 20
FTS5_HASH_BYTES = 1 << 20

# Progress callback: (bytes read so far, bytes to read in all).
Progress = Callable[[int, int], None]

INSERT_MESSAGE = ("INSERT INTO history_messages (file, line_at, line_len, part, session, project, role, at, uuid,"
                  " sidechain, body, body_seg) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


class HistoryReport(NamedTuple):
    """What a refresh did, per transcript (``grown``: read from its old end; ``reread``: from the
    start) and in all; ``skipped``: (path, reason) of files that could not be read."""

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

    def summary(self) -> str:
        return (f"{self.new} new, {self.grown} grown, {self.reread} re-read, {self.removed} removed,"
                f" {self.unchanged} unchanged transcripts, {self.linked} other names of one, {self.deferred} left for"
                f" the next search; {self.messages} messages added,"
                f" {self.bytes_read} bytes read, {self.skipped_lines} lines skipped")


class HistoryHit(NamedTuple):
    """One message found: session, project, time, role, score, excerpt (matches marked) and transcript."""

    session: str
    project: str
    at: str | None
    role: str
    score: float
    snippet: str
    file: str
    sidechain: bool = False
    uuid: str | None = None

    def to_dict(self) -> dict:
        return {**self._asdict(), "score": round(self.score, 4)}


class Excerpt(NamedTuple):
    """One of a session hit's best matching messages: role, time, excerpt (matches marked)."""

    role: str
    at: str | None
    snippet: str
    uuid: str | None = None
    sidechain: bool = False


class SessionHit(NamedTuple):
    """One session found: its score over the session as a whole, how many of its messages match,
    and its best ones (at most EXCERPTS), best first; ``at`` and ``file``: the best one's."""

    session: str
    project: str
    at: str | None
    score: float
    matched: int
    excerpts: tuple[Excerpt, ...]
    file: str

    def to_dict(self) -> dict:
        return {**self._asdict(), "score": round(self.score, 4), "excerpts": [e._asdict() for e in self.excerpts]}


class HistoryResult(NamedTuple):
    """Hits, best first; ``floored``: candidates the relative floor dropped; ``unmatched``: the
    searched words no message holds (the hits match the others only), as a memory search has them."""

    query: str
    fts_query: str
    hits: list[HistoryHit]
    floored: int
    refresh: HistoryReport | None = None
    unmatched: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return short_repr(self, 4)


class Message(NamedTuple):
    """One cleaned message of a session, in order (see :meth:`HistoryIndex.session_messages`)."""

    role: str
    at: str | None
    text: str
    sidechain: bool = False


def configured_roots() -> list[str]:
    """Transcript folders from MEMSEARCH_HISTORY_ROOTS, else the config's ``history_roots``."""
    value = os.environ.get("MEMSEARCH_HISTORY_ROOTS", "")
    if value.strip():
        return [spec for spec in value.split(os.pathsep) if spec.strip()]
    given = read_config().get("history_roots", [])
    if not isinstance(given, list) or not all(isinstance(g, str) and g.strip() for g in given):
        raise MemsearchError("config: history_roots must be a list of folders")
    return given


class HistoryIndex(db.Opened):
    """Search transcripts; the index follows the files as they grow.

    >>> with HistoryIndex(["~/.claude/projects"]) as history:
    ...     for hit in history.search("pgbouncer port", role="assistant"):
    ...         print(hit.session, hit.at, hit.snippet)

    ``roots``: folders of project folders (Claude Code's ``projects``) or Claude config folders;
    None: :func:`configured_roots`, else Claude Code's own. ``db_path``: any memsearch database (a
    memory index's too); default, one per set of roots in the cache folder.
    """

    def __init__(self, roots=None, db_path=None, *, floor: float | None = None, settings: Settings | None = None):
        super().__init__()
        if roots is None:
            roots = configured_roots() or [None]
        elif isinstance(roots, (str, os.PathLike)):
            roots = [roots]
        try:
            roots = list(roots)
        except TypeError:
            raise InvalidArgument(f"roots must be a folder or a list of folders, got {type(roots).__name__}") from None
        folders = (None if r is None else given_path(r, "a transcript folder must be a path") for r in roots)
        self.roots: tuple[str, ...] = tuple(dict.fromkeys(resolve_root(f) for f in folders))
        if not self.roots:
            raise InvalidArgument("no transcript folder given")
        self.settings = (settings or load_settings()).with_overrides(floor=floor)
        check_floor(self.settings.floor)
        self.explicit_db = db_path is not None
        self._reals: dict[tuple[str, str], str] = {}  # (root, path): the file find() checked, for _stale
        self._db_file = db.given_file(db_path) if db_path else db.roots_db_file(self.roots, "history")

    @property
    def db_path(self) -> str:
        return self._db_file

    @property
    def _marks(self) -> str:  # for ``root IN (...)`` bound to self.roots
        return ",".join("?" * len(self.roots))

    # -- freshness -----------------------------------------------------------
    def refresh(self, progress: Progress | None = None, seconds: float | None = None) -> HistoryReport:
        """Bring the index in step with the transcripts (see the module's doc), reading for
        ``seconds`` at most (None: until done; a search reads for REFRESH_SECONDS)."""
        self._follow()
        return self._guarded(lambda: self._refresh(progress, seconds), refill=False)

    def _refresh(self, progress: Progress | None, seconds: float | None = REFRESH_SECONDS) -> HistoryReport:
        started = time.perf_counter()
        conn = self.conn
        stored = {(root, path): (fid, fingerprint.make(fp)) for fid, root, path, *fp in conn.execute(
            f"SELECT id, root, path, {fingerprint.COLUMNS} FROM history_files WHERE root IN ({self._marks})",
            self.roots)}
        counts = dict.fromkeys(HistoryReport._fields[:-2], 0)  # all but skipped and seconds
        skipped: list[tuple[str, str]] = []
        todo, seen, files = [], set(), {}
        found = [(n, root, t) for n, root in enumerate(self.roots) for t in find(root)]
        # A file reached twice (a symlink, a hard link, roots nested in one another) is read and
        # stored once: by its own path first, then the name already indexed, then the first in order.
        found.sort(key=lambda x: (x[2].real != os.path.join(x[1], *x[2].rel.split("/")),
                                  (x[1], x[2].rel) not in stored, x[0], x[2].rel))
        for _, root, t in found:
            first = files.setdefault(t.fingerprint.identity, (root, t))
            if first[1] is not t:
                if first[1].real != t.real:  # another name of it, not a symlink to it: say so
                    counts["linked"] += 1
                    skipped.append((os.path.join(root, t.rel),
                                    f"the same file as {os.path.join(first[0], first[1].rel)} (a hard link): read once"))
                continue
            seen.add((root, t.rel))
            self._reals[(root, t.rel)] = t.real
            row = stored.get((root, t.rel))
            if row is not None and row[1] == t.fingerprint:
                counts["unchanged"] += 1
            else:
                todo.append((root, t))
        todo.sort(key=lambda item: item[1].fingerprint.size)
        total = sum(t.fingerprint.size for _, t in todo)
        done, deadline = 0, time.monotonic() + (float("inf") if seconds is None else seconds)
        for root, t in todo:
            if time.monotonic() >= deadline:
                counts["deferred"] += 1
                skipped.append((os.path.join(root, t.rel), DEFERRED))
                continue
            try:
                outcome = self._ingest(root, t, deadline)
            except sqlite3.Error:
                raise  # the database's trouble, not this file's: _guarded reports it
            except OSError as ex:  # vanished, unreadable, not a regular file, refused
                skipped.append((os.path.join(root, t.rel), ex.strerror or str(ex)))
                if isinstance(ex, Refused):  # its rows go: what it holds now was not read
                    seen.discard((root, t.rel))
                continue
            except Exception as ex:  # one odd transcript costs only itself (its read was rolled back)
                skipped.append((os.path.join(root, t.rel), f"could not be indexed ({type(ex).__name__})"))
                continue
            for name, value in outcome.items():
                counts[name] += value
            if outcome.get("deferred"):
                skipped.append((os.path.join(root, t.rel), DEFERRED))
            done += t.fingerprint.size
            if progress is not None:
                progress(done, total)
        gone = [fid for key, (fid, *_) in stored.items() if key not in seen]
        for fid in gone:  # one transaction a file: the write lock is held for one file's rows at most
            with db.write_transaction(conn):
                drop_pieces(conn, fid)
                conn.execute("DELETE FROM history_messages WHERE file = ?", (fid,))
                conn.execute("DELETE FROM history_files WHERE id = ?", (fid,))
        counts["removed"] = len(gone)
        if counts["messages"] or gone:
            conn.execute("INSERT INTO history_fts (history_fts, rank) VALUES ('merge', 16)")
            conn.execute("INSERT INTO history_session_fts (history_session_fts, rank) VALUES ('merge', 16)")
        return HistoryReport(**counts, skipped=tuple(skipped), seconds=time.perf_counter() - started)

    def _ingest(self, root: str, t, deadline: float) -> dict:
        """Read one transcript from where the index left it, up to its size when opened. The file is
        read with no lock held; its rows are written in short transactions, one every COMMIT_BYTES
        or COMMIT_SECONDS of reading, each recording how far the read got (so an interrupted read
        resumes there) and each checking that no other process took these lines meanwhile."""
        out = {"messages": 0, "bytes_read": 0, "skipped_lines": 0}
        with CountingReader(t.real) as reader:
            start = self._start(root, t, reader, out)
            if start is not None:
                self._read_lines(reader, start[0], start[1], t, out, deadline)
            out["bytes_read"] = reader.bytes_read
        return out

    def _start(self, root: str, t, reader: CountingReader, out: dict) -> tuple[int, int] | None:
        """(file id, offset to read from), or None when there is nothing to read. Records the file
        as being read: its size 0 until the read is done."""
        conn, st = self.conn, reader.stat
        with db.write_transaction(conn):
            row = conn.execute(f"SELECT id, consumed, head, tail, {fingerprint.COLUMNS} FROM history_files"
                               " WHERE root = ? AND path = ?", (root, t.rel)).fetchone()
            start, now = 0, fingerprint.of(st)
            if row is None:
                fid = conn.execute(f"INSERT INTO history_files (root, path, project, consumed, head, tail,"
                                   f" {fingerprint.COLUMNS}) VALUES (?, ?, ?, 0, x'', x'', 0, 0, 0, 0, 0)",
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
                    return None
                if _same_start(reader, was, consumed, head, tail):
                    start = consumed
                    out["grown"] = 1
                else:
                    drop_pieces(conn, fid)
                    conn.execute("DELETE FROM history_messages WHERE file = ?", (fid,))
                    out["reread"] = 1
            if start == 0:
                head = tail = b""
            # Size 0 until the read is done: a read interrupted meanwhile is resumed (see _same_start).
            conn.execute("UPDATE history_files SET project = ?, size = 0, mtime_ns = ?, ctime_ns = ?, device = ?,"
                         " inode = ?, consumed = ?, head = ?, tail = ? WHERE id = ?",
                         (t.project, *now[1:], start, head, tail, fid))
        return fid, start

    def _read_lines(self, reader: CountingReader, fid: int, start: int, t, out: dict, deadline: float) -> None:
        """Store the parts of every complete line from ``start``, in bounded transactions, until
        ``deadline`` (then the read stops at a commit, ``out["deferred"]`` set)."""
        own = own_session(t.rel)
        batch, at, read_from, clock = [], start, start, time.monotonic()
        for offset, raw in reader.lines(start):
            parts = None if raw is None else (parse_line(raw) if raw.strip() else [])
            if parts is None:  # overlong, not JSON, too deep, not an object
                out["skipped_lines"] += 1
            else:
                batch.extend((fid, offset, len(raw), n, own or p.session or t.session, t.project, p.role, p.at, p.uuid,
                              int(p.sidechain), p.text, segmented(p.text)) for n, p in enumerate(parts))
            if reader.end - read_from >= COMMIT_BYTES or time.monotonic() - clock >= COMMIT_SECONDS:
                if not self._commit(reader, fid, at, reader.end, batch, out, done=False):
                    return
                at = read_from = reader.end
                batch, clock = [], time.monotonic()
                if clock >= deadline:
                    out["deferred"] = 1
                    return
        self._commit(reader, fid, at, reader.end, batch, out, done=True)

    def _commit(self, reader: CountingReader, fid: int, expected: int, end: int, batch: list, out: dict,
                done: bool) -> bool:
        """Write ``batch``, the lines up to ``end``, if the file's row still says the read got to
        ``expected`` (else another process took them: False). ``done``: the file's size is recorded,
        so the next refresh finds it unchanged."""
        conn, st = self.conn, reader.stat
        with db.write_transaction(conn):
            row = conn.execute(f"SELECT consumed, {fingerprint.COLUMNS} FROM history_files WHERE id = ?",
                               (fid,)).fetchone()
            if row != (expected, 0, *fingerprint.key(st)[1:]):
                return False
            bulk = _Bulk(conn) if len(batch) >= BULK_ROWS else None
            after = last_id(conn)
            conn.executemany(INSERT_MESSAGE, batch)
            if bulk is not None:
                bulk.finish()
            add_pieces(conn, fid, after)
            head, tail = _ends(reader, end)
            conn.execute("UPDATE history_files SET size = ?, consumed = ?, head = ?, tail = ? WHERE id = ?",
                         (st.st_size if done else 0, end, head, tail, fid))
        out["messages"] += len(batch)
        return True

    # -- search --------------------------------------------------------------
    def search(self, query: str, limit: int = DEFAULT_LIMIT, **filters) -> list[HistoryHit]:
        """Hits for ``query``, best first (see :meth:`search_result`)."""
        return self.search_result(query, limit, **filters).hits

    def search_result(self, query: str, limit: int = DEFAULT_LIMIT, *, project: str | None = None,
                      session: str | None = None, role: str | None = None, since: str | None = None,
                      refresh: bool = True, floor: float | None = None, messages: bool = False,
                      progress: Progress | None = None) -> HistoryResult:
        """Sessions matching ``query`` (:class:`SessionHit`), best first; with ``messages``, single
        messages (:class:`HistoryHit`). ``project``: a project folder, the working directory it is
        named after, or its last part (``shop`` for ``-home-me-shop``); ``session``: an id or its
        start; ``since``: an ISO date or time."""
        check_limit(limit)
        floor = check_floor(self.settings.floor if floor is None else floor)
        if not isinstance(query, str):
            raise InvalidArgument(f"query must be a string, got {type(query).__name__}")
        for name, value in (("project", project), ("session", session), ("role", role), ("since", since)):
            if value is not None and not isinstance(value, str):
                raise InvalidArgument(f"{name} must be a string, got {type(value).__name__}")
        if session is not None and not encodable(session):  # no transcript's id holds a lone surrogate
            raise InvalidArgument(f"session {quoted(session, 80, always=True)} is not valid text"
                                  " (it holds a lone surrogate)")
        if role is not None and role not in ROLES:
            raise InvalidArgument(f"role must be one of {', '.join(ROLES)}, got {quoted(role, 80, always=True)}")
        after = None
        if since is not None:
            moment = parse_time(since)
            after = None if moment is None else utc_text(moment)
            if after is None:  # not a date, or one UTC has no year for (0001-01-01T00:00+14:00)
                raise InvalidArgument("since must be an ISO date or time such as 2025-01-31,"
                                      f" got {quoted(since, 80, always=True)}")
        planned = plan(query)  # before any I/O: a bad query costs nothing
        report = self.refresh(progress, REFRESH_SECONDS) if refresh else None
        run = self._run if messages else self._run_sessions
        for _ in range(VERIFY_TRIES):
            counts: dict[str, int] = {}
            hits, floored, ids = self._guarded(lambda: run(planned, limit, floor, project, session, role, after,
                                                           counts))
            stale = self._guarded(lambda: self._stale(ids))
            if not stale:
                break
            # Text the transcript no longer holds: read those files again, then search again.
            self._guarded(lambda: self._forget(stale), refill=False)
            again = self.refresh(None, REFRESH_SECONDS)
            report = again if report is None else report._replace(
                **{k: getattr(report, k) + getattr(again, k) for k in HistoryReport._fields[:-2]},
                skipped=report.skipped + again.skipped, seconds=report.seconds + again.seconds)
        else:  # still changing under us: show nothing of it rather than what it no longer says
            hits = [hit for hit in hits if hit.file not in self._files(stale)]
        return HistoryResult(query, planned.fts, hits, floored, report, unmatched(query, counts))

    def _stale(self, ids: list[int]) -> set[int]:
        """The files among those of messages ``ids`` whose bytes at a message's place no longer
        parse to the text indexed: a pread a message, a file opened once."""
        if not ids:
            return set()
        rows = self.conn.execute(
            f"SELECT m.file, m.line_at, m.line_len, m.part, m.body, f.root, f.path FROM history_messages AS m"
            f" JOIN history_files AS f ON f.id = m.file WHERE m.id IN ({','.join('?' * len(ids))})", ids).fetchall()
        by_file: dict[int, list] = {}
        for row in rows:
            by_file.setdefault(row[0], []).append(row)
        stale = set()
        for fid, messages in by_file.items():
            root, rel = messages[0][5:7]
            try:
                with CountingReader(self._real(root, rel)) as reader:
                    for _, at, size, part, body, _, _ in messages:
                        raw = reader.pread(size, at)
                        parts = parse_line(raw) if len(raw) == size else None
                        if not parts or part >= len(parts) or parts[part].text != body:
                            stale.add(fid)
                            break
            except (OSError, ValueError):  # gone or no longer a regular file: the refresh sees to it
                stale.add(fid)
        return stale

    def _real(self, root: str, rel: str) -> str:
        real = self._reals.get((root, rel))
        if real is None:  # not refreshed in this process: resolved as find() would, inside the root
            real = os.path.realpath(os.path.join(root, *rel.split("/")))
            if not below(real, os.path.realpath(root)):
                raise ValueError("outside the root")
        return real

    def _forget(self, files: set[int]) -> None:
        """Make the next refresh read ``files`` again from their start (an inode no file has)."""
        with db.write_transaction(self.conn):
            self.conn.executemany("UPDATE history_files SET inode = -1 WHERE id = ?", [(f,) for f in files])

    def _files(self, files: set[int]) -> set[str]:
        rows = self.conn.execute(f"SELECT root, path FROM history_files WHERE id IN ({','.join('?' * len(files))})",
                                 list(files))
        return {os.path.join(root, *path.split("/")) for root, path in rows}

    def _where(self, project, session, role=None, after=None) -> tuple[list[str], list]:
        """Conditions (and their parameters) on ``m``: a message, or a piece for the first two."""
        where, params = [], []
        # Rows of other roots sharing the database are never shown; when there are none, no join.
        marks = self._marks
        if self.conn.execute(f"SELECT 1 FROM history_files WHERE root NOT IN ({marks}) LIMIT 1", self.roots).fetchone():
            where.append(f"m.file IN (SELECT id FROM history_files WHERE root IN ({marks}))")
            params += self.roots
        if project is not None:
            # The folder, the working directory it is named after, or that directory's last parts
            # ("shop" is -home-me-shop); a slug holds no GLOB character.
            where.append("(m.project IN (?, ?) OR m.project GLOB ?)")
            # A working directory that is not UTF-8 (a lone surrogate SQLite cannot bind) has a slug still.
            params += [project if encodable(project) else slug(project), slug(project),
                       slug(project) if project.startswith("/") else f"*-{slug(project)}"]
        if session is not None:
            where.append("substr(m.session, 1, ?) = ?")
            params += [len(session), session]
        if role is not None:
            where.append("m.role = ?")
            params.append(role)
        if after is not None:
            where.append("m.at >= ?")
            params.append(after)
        return where, params

    def _run_sessions(self, query: Query, limit: int, floor: float, project, session, role, after, counts: dict):
        """Sessions ranked by BM25 over each as a whole (its pieces' scores summed); under a role or
        time filter, which pieces cannot apply, by their best message. Each with its best messages."""
        conn = self.conn
        where, params = self._where(project, session)
        size = fetch_size(limit)
        if role is None and after is None:
            scored = scored_strings(conn, query, SESSIONS)
            counts.update((s.fts, s.files) for s in scored)
            mark_unmatched(conn, query, counts, "".join(f" AND {w}" for w in where), params,
                           "history_session_fts", "history_pieces")
            scored = [s for s in scored if s.files]
            if not scored:
                return [], 0, []
            ranked = conn.execute(
                f"SELECT m.session, sum(s.score) AS score FROM ({ranking(len(scored), SESSIONS, ())}) AS s"
                f" JOIN history_pieces AS m"
                f" ON m.id = s.id WHERE 1{''.join(f' AND {w}' for w in where)} GROUP BY m.session"
                f" ORDER BY score DESC, m.session LIMIT ?",
                [*string_params(scored), *params, size]).fetchall()
        else:
            hits, _, _ = self._run(query, SESSION_MESSAGES, 0.0, project, session, role, after, counts)
            best: dict[str, float] = {}
            for hit in hits:  # best first: a session's first hit is its best
                best.setdefault(hit.session, hit.score)
            ranked = list(best.items())[:size]
        kept = apply_floor(ranked, floor, score=itemgetter(1))[:limit]
        where, params = self._where(project, session, role, after)  # the excerpts' filters
        hits, ids = self._session_hits(query, kept, where, params)
        return hits, len(ranked) - len(kept), ids

    def _session_hits(self, query: Query, kept: list, where: list, params: list) -> list:
        """Each session of ``kept`` with its EXCERPTS best matching messages and how many matched:
        one FTS5 query a session, its words ORed (bm25() sums their scores), over its ids alone."""
        conn = self.conn
        sql = (f"SELECT s.id FROM ({EXCERPT_RANKING}) AS s JOIN history_messages AS m ON m.id = s.id"
               f" WHERE m.session = ?{''.join(f' AND {w}' for w in where)} ORDER BY s.raw, s.id DESC")
        words = " OR ".join(query.terms)
        best: dict[str, tuple[int, list[int]]] = {}
        for session_, _ in kept:
            low, high = conn.execute("SELECT min(first), max(last) FROM history_pieces WHERE session = ?",
                                     (session_,)).fetchone()
            if low is None:  # ranked by messages: a session read before its pieces existed has none
                low, high = conn.execute("SELECT min(id), max(id) FROM history_messages WHERE session = ?",
                                         (session_,)).fetchone()
            rows = conn.execute(sql, [words, low, high, session_, *params]).fetchall()
            best[session_] = (len(rows), [mid for mid, in rows[:EXCERPTS]])
        ids = [mid for _, mids in best.values() for mid in mids]
        found = {row[0]: row[1:] for row in conn.execute(
            f"SELECT m.id, m.project, m.at, m.role, f.root, f.path, m.sidechain, m.uuid"
            f" FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
            f" WHERE m.id IN ({','.join('?' * len(ids))})", ids)} if ids else {}
        snippets_ = self._snippets(query, ids)
        hits = []
        for session_, score in kept:
            matched, mids = best[session_]
            if not mids:
                continue
            excerpts = tuple(Excerpt(found[mid][2], found[mid][1], snippets_.get(mid, ""), found[mid][6],
                                     bool(found[mid][5])) for mid in mids)
            project_, _, _, root, path, *_ = found[mids[0]]
            hits.append(SessionHit(session_, project_, excerpts[0].at, score, matched, excerpts,
                                   os.path.join(root, *path.split("/"))))
        return hits, ids

    def _run(self, query: Query, limit: int, floor: float, project, session, role, after, counts: dict):
        conn = self.conn
        where, params = self._where(project, session, role, after)
        # The memory search's strings, idf and sum; one matching nothing adds nothing.
        scored = scored_strings(conn, query, MESSAGES)
        counts.update((s.fts, s.files) for s in scored)
        mark_unmatched(conn, query, counts, "".join(f" AND {w}" for w in where), params, "history_fts",
                       "history_messages")
        scored = [s for s in scored if s.files]
        if not scored:
            return [], 0, []
        ranked = _ranked(conn, scored, " AND ".join(where), params, fetch_size(limit))
        kept = apply_floor(ranked, floor, score=itemgetter(1))[:limit]
        if not kept:
            return [], len(ranked), []
        ids = [mid for mid, _ in kept]
        found = {row[0]: row[1:] for row in conn.execute(
            f"SELECT m.id, m.session, m.project, m.at, m.role, f.root, f.path, m.sidechain, m.uuid"
            f" FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
            f" WHERE m.id IN ({','.join('?' * len(ids))})", ids)}
        excerpts = self._snippets(query, ids)
        hits = []
        for mid, score in kept:
            session_, project_, at, role_, root, path, side, uuid = found[mid]
            hits.append(HistoryHit(session_, project_, at, role_, score, excerpts.get(mid, ""),
                                   os.path.join(root, *path.split("/")), bool(side), uuid))
        return hits, len(ranked) - len(kept), ids

    def _snippets(self, query: Query, ids: list[int]) -> dict[int, str]:
        words = " OR ".join(query.terms)
        rows = self.conn.execute(f"SELECT id, idx_body FROM history_messages WHERE id IN ({','.join('?' * len(ids))})",
                                 ids) if ids else ()
        return {mid: cap(unsegment_snippet(text_snippet(text, words), MARK_OPEN, MARK_CLOSE, query=words))
                for mid, text in rows}

    # -- sessions ------------------------------------------------------------
    def resolve_session(self, session: str) -> str:
        """The full id of a session given whole or by its first characters; AmbiguousSession when
        they start more than one (the whole id of one included: a transcript must not take over the
        short form of another's by naming itself so)."""
        if not isinstance(session, str) or not session.strip():
            raise InvalidArgument("session id is empty: pass a session id from a history hit")
        session = session.strip()
        if not encodable(session):  # as search_result refuses it
            raise InvalidArgument(f"session id {quoted(session, 80, always=True)} is not valid text"
                                  " (it holds a lone surrogate)")
        found = self._sessions_from(session, 4)
        if len(found) == 1:
            return found[0]
        # Both the caller's id and the transcripts' may be long or hold controls: quoted short, escaped.
        if not found:
            raise SessionNotFound(f"no session {quoted(session, 80, always=True)} in the transcripts:"
                                  " use a session id from a history hit")
        candidates = ", ".join(quoted(f, 80, always=True) for f in found[:3])
        raise AmbiguousSession(f"{quoted(session, 80, always=True)} starts several session ids ({candidates}"
                               f"{', ...' if len(found) > 3 else ''}): give more of it")

    def _sessions_from(self, start: str, most: int) -> list[str]:
        """The first ``most`` session ids of these roots that begin with ``start``, in order: one
        index seek each, whatever the number of messages."""
        found, after = [], None
        while len(found) < most:
            row = self.conn.execute(
                "SELECT session FROM history_messages WHERE session >= ? AND session > ? AND session < ?"
                " ORDER BY session LIMIT 1", (start, "" if after is None else after, start + "\U0010ffff")).fetchone()
            if row is None or not row[0].startswith(start):
                return found
            after = row[0]
            if self.conn.execute(  # a database shared with other roots: theirs are not ours to name
                    f"SELECT 1 FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
                    f" WHERE m.session = ? AND f.root IN ({self._marks}) LIMIT 1", [after, *self.roots]).fetchone():
                found.append(after)
        return found

    def _owner(self, session: str) -> str:
        """The project whose folder holds ``session``'s own transcript (``<session>.jsonl`` or a
        ``<session>/`` folder): the only one its messages are read from. Lines in another project's
        folder claiming the id are that project's, never shown as this session's."""
        projects = [p for (p,) in self.conn.execute(
            f"SELECT DISTINCT f.project FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
            f" WHERE m.session = ? AND f.root IN ({self._marks})", [session, *self.roots])]
        owners = [p for p in projects if self.conn.execute(
            f"SELECT 1 FROM history_files WHERE project = ? AND root IN ({self._marks}) AND (path IN (?, ?)"
            " OR substr(path, 1, ?) = ?) LIMIT 1",
            [p, *self.roots, f"{session}.jsonl", f"{p}/{session}.jsonl", len(p) + len(session) + 2,
             f"{p}/{session}/"]).fetchone()] or projects
        if len(owners) > 1:
            raise AmbiguousSession(f"session {quoted(session, 80, always=True)} is in several project folders"
                                   f" ({', '.join(quoted(o, 80, always=True) for o in owners[:3])}): it cannot be told which is its own")
        return owners[0]

    def session_messages(self, session: str, *, refresh: bool = True, sidechains: bool = False) -> list[Message]:
        """The cleaned messages of one session, oldest first (sub-agents' sidechains only if asked)."""
        if refresh:
            self.refresh(seconds=REFRESH_SECONDS)
        return self._guarded(lambda: list(self._messages(*self._session_files(session, sidechains))))

    def _session_files(self, session: str, sidechains: bool):
        """(The full id, the files of its messages in order with their numbers of them)."""
        full = self.resolve_session(session)
        project = self._owner(full)
        # A file's lines in their order (a line may lack a time), files by their first time: the
        # index history_messages_session answers it alone.
        files = self.conn.execute(
            "SELECT file, count(*) FROM history_messages WHERE session = ? AND project = ? AND sidechain <= ?"
            " GROUP BY file ORDER BY min(at), file", (full, project, int(sidechains))).fetchall()
        return full, project, sidechains, files

    def _messages(self, full: str, project: str, sidechains: bool, files: list, newest_first: bool = False):
        order = " DESC" if newest_first else ""
        for fid, _ in reversed(files) if newest_first else files:
            for role, at, body, side in self.conn.execute(
                    # By the file's index in its order (+: not by the session's, which sorts them all first).
                    "SELECT role, at, body, sidechain FROM history_messages WHERE file = ? AND +session = ?"
                    f" AND +project = ? AND +sidechain <= ? ORDER BY line_at{order}, part{order}",
                    (fid, full, project, int(sidechains))):
                yield Message(role, at, body, bool(side))

    def read_session_context(self, session: str, query: str = "", strategy: str = "relevant",
                             max_tokens: int | None = None):
        """ReadSessionContext: the parts of one session that bear on ``query`` (memsearch.session_context)."""
        args = check_arguments(session, query, strategy, max_tokens)
        self.refresh(seconds=REFRESH_SECONDS)

        def read():
            full, project, sidechains, files = self._session_files(args.session, False)
            where = (full, project, sidechains, files)
            return select(full, self._messages(*where), args, total=sum(n for _, n in files),
                          newest_first=self._messages(*where, newest_first=True))

        return self._guarded(read)

    def status(self) -> dict:
        def read():
            files, sessions, messages = self.conn.execute(
                f"SELECT count(DISTINCT f.id), count(DISTINCT m.session), count(m.id) FROM history_files AS f"
                f" LEFT JOIN history_messages AS m ON m.file = f.id WHERE f.root IN ({self._marks})",
                self.roots).fetchone()
            return {"roots": list(self.roots), "database": self._db_file, "transcripts": files,
                    "sessions": sessions, "messages": messages}

        return self._guarded(read)

    def _refill(self) -> None:
        self._refresh(None, REFRESH_SECONDS)


def read_session_context(session: str, query: str = "", strategy: str = "relevant", max_tokens: int | None = None,
                         *, roots=None, db_path=None) -> SessionContext:
    """ReadSessionContext as one call over the transcripts of ``roots`` (see :class:`HistoryIndex`)."""
    args = check_arguments(session, query, strategy, max_tokens)  # before any I/O
    with HistoryIndex(roots, db_path) as history:
        return history.read_session_context(*args)


class _Bulk:
    """Within one write transaction, rows go into history_messages alone; :meth:`finish` indexes
    them in one FTS5 statement and restores the trigger (see BULK_ROWS). A rollback restores it too."""

    TRIGGER = "history_messages_ai"

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                           (self.TRIGGER,)).fetchone()
        self.sql = row[0] if row else None
        self.start()

    def start(self) -> None:
        self.first = self.conn.execute("SELECT coalesce(max(id), 0) FROM history_messages").fetchone()[0]
        if self.sql is not None:
            self.conn.execute(f"DROP TRIGGER {self.TRIGGER}")
        db.set_hash_size(self.conn, MESSAGES, BULK_HASH_BYTES)

    def finish(self) -> None:
        # Ids only grow (INTEGER PRIMARY KEY above the largest): the rows of this transaction.
        self.conn.execute("INSERT INTO history_fts (rowid, idx_body) SELECT id, idx_body FROM history_messages"
                          " WHERE id > ?", (self.first,))
        db.set_hash_size(self.conn, MESSAGES, FTS5_HASH_BYTES)  # stored in the index: live appends keep FTS5's default
        if self.sql is not None:
            self.conn.execute(self.sql)


# Searches run again at most this many times when a hit's transcript no longer holds its text.
VERIFY_TRIES = 3

# A session hit shows at most this many of its messages: enough to tell what it was about.
EXCERPTS = 3

# Under a role or time filter, sessions are ranked by their best message among this many.
SESSION_MESSAGES = 200

# The FTS5 tables ranked: messages, and sessions' pieces.
MESSAGES, SESSIONS = "history_fts", "history_session_fts"

# A session's messages for its excerpts: its ids between two bounds, which FTS5 seeks to.
EXCERPT_RANKING = "SELECT rowid AS id, bm25(history_fts) AS raw FROM history_fts WHERE history_fts MATCH ? AND rowid BETWEEN ? AND ?"


# Not memsearch.search's pruning (MaxScore): a question's words are common in conversation, so
# the pruned ranking mostly failed its check and ran again. On 64 MB of bench/history.py's
# transcripts (the 36 LongMemEval questions): p50 47 ms pruned, 24 ms without. What this saves is
# the join: the best ids are picked by score alone and only they are read.
def _ranked(conn: sqlite3.Connection, scored: list, where: str, filter_params: list, size: int) -> list[tuple]:
    """The ``size`` best (message id, score) rows for the strings ``scored``; ties go to the later
    message. Without a filter, only the ranking is read: no row is joined."""
    ranked, params = ranking(len(scored), MESSAGES, ()), string_params(scored)
    if where:
        sql = (f"SELECT s.id, s.score FROM ({ranked}) AS s JOIN history_messages AS m ON m.id = s.id"
               f" WHERE {where} ORDER BY s.score DESC, s.id DESC LIMIT ?")
    else:
        sql = f"SELECT id, score FROM ({ranked}) ORDER BY score DESC, id DESC LIMIT ?"
    return conn.execute(sql, [*params, *filter_params, size]).fetchall()


def _same_start(reader: CountingReader, was: Fingerprint, consumed: int, head: bytes, tail: bytes) -> bool:
    """Whether a transcript still begins with the bytes read before, as far as a check in proportion
    to an append can tell: the same file, longer (an append never leaves the size as it was nor
    shrinks it) and not older (a restored copy can be), the same first and last kept bytes. A
    rewrite of middle bytes alone goes unnoticed: catching it would mean reading all of it at every
    append. ``was``: the Fingerprint of the last read, its size 0 while a long read is unfinished."""
    st = reader.stat
    if st.st_ino != was.inode or st.st_dev != was.device != -1:  # -1: a row from before 0009
        return False
    if st.st_size < consumed or st.st_size <= was.size or st.st_mtime_ns < was.mtime_ns:
        return False
    return reader.pread(len(head), 0) == head and reader.pread(len(tail), consumed - len(tail)) == tail


def _ends(reader: CountingReader, end: int) -> tuple[bytes, bytes]:
    """The first and last CHECK_BYTES before ``end``, for :func:`_same_start`."""
    size = min(CHECK_BYTES, end)
    return reader.pread(size, 0), reader.pread(size, end - size)
