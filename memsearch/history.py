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

import hashlib
import os
import sqlite3
import time
from operator import itemgetter
from typing import Callable, NamedTuple

from . import db
from .cjk import segmented, unsegment_snippet
from .errors import InvalidArgument, MemsearchError, SessionNotFound
from .format import json_text, one_line, quoted, snippet_line, unmatched_line
from .query import Query, plan, unmatched
from .search import RANKING, apply_floor, cap, fetch_size, mark_unmatched, scored_strings, short_repr
from .session_context import SessionContext, check_arguments, select
from .settings import (DEFAULT_LIMIT, ELLIPSIS, MARK_CLOSE, MARK_OPEN, SNIPPET_TOKENS, Settings,
                       check_floor, check_limit, encodable, given_path, load_settings, read_config)
from .transcripts import ROLES, CountingReader, find, parse_line, parse_time, resolve_root, slug, utc_text

# Bytes kept of a transcript's start and of the end of what was read (see _same_start).
CHECK_BYTES = 1024

# A long read commits every this many bytes: a bounded WAL, and a crash loses at most this much.
COMMIT_BYTES = 32 << 20

# A read of at least BULK_BYTES indexes its rows in one FTS5 statement per transaction, the
# insert trigger dropped meanwhile (as reconcile does): a trigger call per row flushed FTS5's
# pending terms as a segment each. Measured on 64 MB of bench/history.py's transcripts: inserts
# 6.1 s -> 1.9 s, 1.5 s with BULK_HASH_BYTES. A live session's small appends keep the trigger.
BULK_BYTES = 64 << 10
BULK_HASH_BYTES = 8 << 20
FTS5_HASH_BYTES = 1 << 20

# Progress callback: (bytes read so far, bytes to read in all).
Progress = Callable[[int, int], None]

INSERT_MESSAGE = ("INSERT INTO history_messages (file, line_at, part, session, project, role, at, uuid,"
                  " sidechain, body, body_seg) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


class HistoryReport(NamedTuple):
    """What a refresh did, per transcript (``grown``: read from its old end; ``reread``: from the
    start) and in all; ``skipped``: (path, reason) of files that could not be read."""

    new: int = 0
    grown: int = 0
    reread: int = 0
    removed: int = 0
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
                f" {self.unchanged} unchanged transcripts; {self.messages} messages added,"
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


def default_db_file(roots: tuple[str, ...]) -> str:
    """One database per set of transcript roots, in the user cache folder."""
    digest = hashlib.sha256("\n".join(sorted(roots)).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(db.cache_folder(), f"history-{digest}.db")


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
        self._db_file = db.given_file(db_path) if db_path else default_db_file(self.roots)

    @property
    def db_path(self) -> str:
        return self._db_file

    @property
    def _marks(self) -> str:  # for ``root IN (...)`` bound to self.roots
        return ",".join("?" * len(self.roots))

    # -- freshness -----------------------------------------------------------
    def refresh(self, progress: Progress | None = None) -> HistoryReport:
        """Bring the index in step with the transcripts (see the module's doc)."""
        self._follow()
        return self._guarded(lambda: self._refresh(progress), refill=False)

    def _refresh(self, progress: Progress | None) -> HistoryReport:
        started = time.perf_counter()
        conn = self.conn
        stored = {(root, path): (fid, size, mtime, inode) for fid, root, path, size, mtime, inode in conn.execute(
            f"SELECT id, root, path, size, mtime_ns, inode FROM history_files WHERE root IN ({self._marks})",
            self.roots)}
        counts = dict.fromkeys(HistoryReport._fields[:-2], 0)  # all but skipped and seconds
        skipped: list[tuple[str, str]] = []
        todo, seen, reals = [], set(), set()
        found = [(root, t) for root in self.roots for t in find(root)]
        # A file reached twice, through a link or by roots nested in one another, is indexed once (each
        # copy was a duplicate hit): by its own path first (a stable sort), then by the first root given.
        found.sort(key=lambda item: item[1].real != os.path.join(item[0], *item[1].rel.split("/")))
        for root, t in found:
            if t.real in reals:
                continue
            reals.add(t.real)
            seen.add((root, t.rel))
            row = stored.get((root, t.rel))
            if row is not None and row[1:] == (t.size, t.mtime_ns, t.inode):
                counts["unchanged"] += 1
            else:
                todo.append((root, t))
        total = sum(t.size for _, t in todo)
        done = 0
        for root, t in todo:
            try:
                outcome = self._ingest(root, t)
            except sqlite3.Error:
                raise  # the database's trouble, not this file's: _guarded reports it
            except OSError as ex:  # vanished, unreadable, not a regular file
                skipped.append((os.path.join(root, t.rel), ex.strerror or str(ex)))
                continue
            except Exception as ex:  # one odd transcript costs only itself (its read was rolled back)
                skipped.append((os.path.join(root, t.rel), f"could not be indexed ({type(ex).__name__})"))
                continue
            for name, value in outcome.items():
                counts[name] += value
            done += t.size
            if progress is not None:
                progress(done, total)
        gone = [fid for key, (fid, *_) in stored.items() if key not in seen]
        if gone:
            with db.write_transaction(conn):
                conn.executemany("DELETE FROM history_messages WHERE file = ?", [(fid,) for fid in gone])
                conn.executemany("DELETE FROM history_files WHERE id = ?", [(fid,) for fid in gone])
            counts["removed"] = len(gone)
        if counts["messages"] or gone:
            conn.execute("INSERT INTO history_fts (history_fts, rank) VALUES ('merge', 16)")
        return HistoryReport(**counts, skipped=tuple(skipped), seconds=time.perf_counter() - started)

    def _ingest(self, root: str, t) -> dict:
        """Read one transcript from where the index left it, recording how far it got."""
        conn = self.conn
        out = {"messages": 0, "bytes_read": 0, "skipped_lines": 0}
        with CountingReader(t.real) as reader:
            st = reader.stat
            try:
                conn.execute("BEGIN IMMEDIATE")
                # Read again under the lock: another process may have taken these lines meanwhile.
                row = conn.execute("SELECT id, size, mtime_ns, inode, consumed, head, tail FROM history_files"
                                   " WHERE root = ? AND path = ?", (root, t.rel)).fetchone()
                start = 0
                if row is None:
                    fid = conn.execute(
                        "INSERT INTO history_files (root, path, project, size, mtime_ns, inode, consumed, head, tail)"
                        " VALUES (?, ?, ?, 0, 0, 0, 0, x'', x'')", (root, t.rel, t.project)).lastrowid
                    out["new"] = 1
                else:
                    fid, size, mtime, inode, consumed, head, tail = row
                    if (size, mtime, inode) == (st.st_size, st.st_mtime_ns, st.st_ino):
                        conn.execute("ROLLBACK")
                        out["unchanged"] = 1
                        return out
                    if _same_start(reader, st, (size, mtime, inode), consumed, head, tail):
                        start = consumed
                        out["grown"] = 1
                    else:
                        conn.execute("DELETE FROM history_messages WHERE file = ?", (fid,))
                        out["reread"] = 1
                bulk = _Bulk(conn) if st.st_size - start >= BULK_BYTES else None
                end = self._read_lines(reader, fid, start, t, out, bulk)
                if bulk is not None:
                    bulk.finish()
                head, tail = _ends(reader, end)
                conn.execute("UPDATE history_files SET project = ?, size = ?, mtime_ns = ?, inode = ?, consumed = ?,"
                             " head = ?, tail = ? WHERE id = ?",
                             (t.project, st.st_size, st.st_mtime_ns, st.st_ino, end, head, tail, fid))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            out["bytes_read"] = reader.bytes_read
        return out

    def _read_lines(self, reader: CountingReader, fid: int, start: int, t, out: dict, bulk: "_Bulk | None") -> int:
        """Insert the parts of every complete line from ``start``; returns the offset after the last.
        Commits every COMMIT_BYTES, the file's size left 0 so that an interrupted read is resumed."""
        conn = self.conn
        batch, since_commit = [], 0

        def flush() -> None:
            conn.executemany(INSERT_MESSAGE, batch)
            out["messages"] += len(batch)
            batch.clear()

        for offset, raw in reader.lines(start):
            parts = None if raw is None else (parse_line(raw) if raw.strip() else [])
            if parts is None:  # overlong, not JSON, too deep, not an object
                out["skipped_lines"] += 1
                continue
            batch.extend((fid, offset, n, p.session or t.session, t.project, p.role, p.at, p.uuid,
                          int(p.sidechain), p.text, segmented(p.text)) for n, p in enumerate(parts))
            if len(batch) >= 512:
                flush()
            since_commit += len(raw) + 1
            if since_commit >= COMMIT_BYTES:
                flush()
                done = offset + len(raw) + 1  # this line included (reader.end moves on at the next one)
                head, tail = _ends(reader, done)
                # The inode and mtime too: a new file's row has 0s, which _same_start would refuse.
                conn.execute("UPDATE history_files SET size = 0, mtime_ns = ?, inode = ?, consumed = ?, head = ?,"
                             " tail = ? WHERE id = ?",
                             (reader.stat.st_mtime_ns, reader.stat.st_ino, done, head, tail, fid))
                if bulk is not None:
                    bulk.finish()
                conn.execute("COMMIT")
                conn.execute("BEGIN IMMEDIATE")
                if bulk is not None:
                    bulk.start()
                since_commit = 0
        flush()
        return reader.end

    # -- search --------------------------------------------------------------
    def search(self, query: str, limit: int = DEFAULT_LIMIT, **filters) -> list[HistoryHit]:
        """Hits for ``query``, best first (see :meth:`search_result`)."""
        return self.search_result(query, limit, **filters).hits

    def search_result(self, query: str, limit: int = DEFAULT_LIMIT, *, project: str | None = None,
                      session: str | None = None, role: str | None = None, since: str | None = None,
                      refresh: bool = True, floor: float | None = None,
                      progress: Progress | None = None) -> HistoryResult:
        """Messages matching ``query``, best first. ``project``: a project folder or the working
        directory it is named after; ``session``: an id or its start; ``since``: an ISO date or time."""
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
        report = self.refresh(progress) if refresh else None
        counts: dict[str, int] = {}
        hits, floored = self._guarded(lambda: self._run(planned, limit, floor, project, session, role, after, counts))
        return HistoryResult(query, planned.fts, hits, floored, report, unmatched(query, counts))

    def _run(self, query: Query, limit: int, floor: float, project, session, role, after, counts: dict):
        conn = self.conn
        where, params = [], []
        # Rows of other roots sharing the database are never shown; when there are none, no join.
        marks = self._marks
        if conn.execute(f"SELECT 1 FROM history_files WHERE root NOT IN ({marks}) LIMIT 1", self.roots).fetchone():
            where.append(f"m.file IN (SELECT id FROM history_files WHERE root IN ({marks}))")
            params += self.roots
        if project is not None:
            where.append("m.project IN (?, ?)")
            # A working directory that is not UTF-8 (a lone surrogate SQLite cannot bind) has a slug still.
            params += [project if encodable(project) else slug(project), slug(project)]
        if session is not None:
            where.append("substr(m.session, 1, ?) = ?")
            params += [len(session), session]
        if role is not None:
            where.append("m.role = ?")
            params.append(role)
        if after is not None:
            where.append("m.at >= ?")
            params.append(after)
        # The memory search's strings, idf and sum; one matching nothing adds nothing.
        scored = scored_strings(conn, query, "history_fts")
        counts.update((s.fts, s.files) for s in scored)
        mark_unmatched(conn, query, counts, "".join(f" AND {w}" for w in where), params, "history_fts",
                       "history_messages")
        scored = [s for s in scored if s.files]
        if not scored:
            return [], 0
        ranked = _ranked(conn, scored, " AND ".join(where), params, fetch_size(limit))
        kept = apply_floor(ranked, floor, score=itemgetter(1))[:limit]
        if not kept:
            return [], len(ranked)
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
        return hits, len(ranked) - len(kept)

    def _snippets(self, query: Query, ids: list[int]) -> dict[int, str]:
        words = " OR ".join(query.terms)
        rows = self.conn.execute(
            f"SELECT rowid, snippet(history_fts, 0, ?, ?, ?, ?) FROM history_fts WHERE history_fts MATCH ?"
            f" AND rowid IN ({','.join('?' * len(ids))})",
            (MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, words, *ids))
        return {rowid: cap(unsegment_snippet(text, MARK_OPEN, MARK_CLOSE, query=words)) for rowid, text in rows}

    # -- sessions ------------------------------------------------------------
    def resolve_session(self, session: str) -> str:
        """The full id of a session given whole or by its first characters."""
        if not isinstance(session, str) or not session.strip():
            raise InvalidArgument("session id is empty: pass a session id from a history hit")
        session = session.strip()
        if not encodable(session):  # as search_result refuses it
            raise InvalidArgument(f"session id {quoted(session, 80, always=True)} is not valid text"
                                  " (it holds a lone surrogate)")
        from_files = " FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
        # The whole id first: three longer ids that start with it ('s-10', 's-11', 's-12' for 's-1')
        # would fill a prefix lookup's few rows and hide it.
        if self.conn.execute(f"SELECT 1{from_files} WHERE m.session = ? AND f.root IN ({self._marks}) LIMIT 1",
                             [session, *self.roots]).fetchone():
            return session
        found = [s for (s,) in self.conn.execute(
            f"SELECT DISTINCT m.session{from_files} WHERE f.root IN ({self._marks}) AND substr(m.session, 1, ?) = ?"
            " LIMIT 3", [*self.roots, len(session), session])]
        if len(found) == 1:
            return found[0]
        # Both the caller's id and the transcripts' may be long or hold controls: quoted short, escaped.
        if not found:
            raise SessionNotFound(f"no session {quoted(session, 80, always=True)} in the transcripts:"
                                  " use a session id from a history hit")
        some = ", ".join(quoted(f, 80, always=True) for f in found[:2])
        raise SessionNotFound(f"{quoted(session, 80, always=True)} starts several session ids ({some}...):"
                              " give more of it")

    def session_messages(self, session: str, *, refresh: bool = True, sidechains: bool = False) -> list[Message]:
        """The cleaned messages of one session, oldest first (sub-agents' sidechains only if asked)."""
        return self._session(session, refresh=refresh, sidechains=sidechains)[1]

    def _session(self, session: str, *, refresh: bool = True, sidechains: bool = False):
        if refresh:
            self.refresh()

        def read():
            full = self.resolve_session(session)
            rows = self.conn.execute(
                f"SELECT m.role, m.at, m.body, m.sidechain FROM history_messages AS m"
                f" JOIN history_files AS f ON f.id = m.file WHERE m.session = ? AND f.root IN ({self._marks})"
                f"{'' if sidechains else ' AND NOT m.sidechain'}"
                # A file's lines in their order (a line may lack a time), files by their first time.
                f" ORDER BY min(m.at) OVER (PARTITION BY m.file), m.file, m.line_at, m.part", [full, *self.roots])
            return full, [Message(role, at, body, bool(side)) for role, at, body, side in rows]

        return self._guarded(read)

    def read_session_context(self, session: str, query: str = "", strategy: str = "relevant",
                             max_tokens: int | None = None):
        """ReadSessionContext: the parts of one session that bear on ``query`` (memsearch.session_context)."""
        args = check_arguments(session, query, strategy, max_tokens)
        full, messages = self._session(args.session)
        return select(full, messages, args)

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
        self._refresh(None)


def read_session_context(session: str, query: str = "", strategy: str = "relevant", max_tokens: int | None = None,
                         *, roots=None, db_path=None) -> SessionContext:
    """ReadSessionContext as one call over the transcripts of ``roots`` (see :class:`HistoryIndex`)."""
    args = check_arguments(session, query, strategy, max_tokens)  # before any I/O
    with HistoryIndex(roots, db_path) as history:
        return history.read_session_context(*args)


class _Bulk:
    """Within one write transaction, rows go into history_messages alone; :meth:`finish` indexes
    them in one FTS5 statement and restores the trigger (see BULK_BYTES). A rollback restores it too."""

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
        _set_hash_size(self.conn, BULK_HASH_BYTES)

    def finish(self) -> None:
        # Ids only grow (INTEGER PRIMARY KEY above the largest): the rows of this transaction.
        self.conn.execute("INSERT INTO history_fts (rowid, idx_body) SELECT id, idx_body FROM history_messages"
                          " WHERE id > ?", (self.first,))
        _set_hash_size(self.conn, FTS5_HASH_BYTES)  # stored in the index: live appends keep FTS5's default
        if self.sql is not None:
            self.conn.execute(self.sql)


def _set_hash_size(conn: sqlite3.Connection, size: int) -> None:
    conn.execute("INSERT INTO history_fts (history_fts, rank) VALUES ('hashsize', ?)", (size,))


# memsearch.search.STRING over history_fts (one column), never the pruned form (see _ranked).
STRING = ("SELECT rowid AS id, bm25(history_fts) AS raw, ? AS weight, ? AS factor, ? AS common"
          " FROM history_fts WHERE history_fts MATCH ?")


# Not memsearch.search's pruning (MaxScore): a question's words are common in conversation, so
# the pruned ranking mostly failed its check and ran again. On 64 MB of bench/history.py's
# transcripts (the 36 LongMemEval questions): p50 47 ms pruned, 24 ms without. What this saves is
# the join: the best ids are picked by score alone and only they are read.
def _ranked(conn: sqlite3.Connection, scored: list, where: str, filter_params: list, size: int) -> list[tuple]:
    """The ``size`` best (message id, score) rows for the strings ``scored``; ties go to the later
    message. Without a filter, only the ranking is read: no row is joined."""
    ranking = RANKING.format(strings=" UNION ALL ".join([STRING] * len(scored)))
    params = [p for s in scored for p in (s.weight, s.factor, 0, s.fts)]
    if where:
        sql = (f"SELECT s.id, s.score FROM ({ranking}) AS s JOIN history_messages AS m ON m.id = s.id"
               f" WHERE {where} ORDER BY s.score DESC, s.id DESC LIMIT ?")
    else:
        sql = f"SELECT id, score FROM ({ranking}) ORDER BY score DESC, id DESC LIMIT ?"
    return conn.execute(sql, [*params, *filter_params, size]).fetchall()


def _same_start(reader: CountingReader, st, stored: tuple[int, int, int], consumed: int, head: bytes,
                tail: bytes) -> bool:
    """Whether a transcript still begins with the bytes read before, as far as a check in proportion
    to an append can tell: the same inode, not shorter nor older (an append never shrinks a file nor
    turns its mtime back; a restored copy can), the same first and last kept bytes. A rewrite of
    middle bytes alone goes unnoticed: catching it would mean reading all of it at every append.
    ``stored``: (size, mtime_ns, inode) of the last read; size 0 while a long read is unfinished."""
    size, mtime_ns, inode = stored
    if st.st_ino != inode or st.st_size < max(consumed, size) or st.st_mtime_ns < mtime_ns:
        return False
    return reader.pread(len(head), 0) == head and reader.pread(len(tail), consumed - len(tail)) == tail


def _ends(reader: CountingReader, end: int) -> tuple[bytes, bytes]:
    """The first and last CHECK_BYTES before ``end``, for :func:`_same_start`."""
    size = min(CHECK_BYTES, end)
    return reader.pread(size, 0), reader.pread(size, end - size)


# -- formatting (pure: no printing) ------------------------------------------------
def open_hint(session: str) -> str:
    """The command that reads a session found by a hit, quoted for a shell: a transcript's
    sessionId "x; rm -rf ~" must not be a command someone pastes."""
    import shlex

    return f"memsearch session-context {shlex.quote(session)} --query TEXT"


def format_hits(result: HistoryResult, *, color: bool = False) -> str:
    blocks = []
    for hit in result.hits:
        side = " (sub-agent)" if hit.sidechain else ""
        blocks.append(f"{hit.at or '(no time)'}  {hit.role}{side}  session {quoted(hit.session)}"
                      f"  [{quoted(hit.project)}]  score {hit.score:.2f}"
                      f"\n    {snippet_line(hit.snippet, color)}")
    if result.hits:
        hint = open_hint(result.hits[0].session)  # folded only if it must be: a run of spaces is in the id
        blocks.append(f"open a session: {hint if hint.isprintable() else one_line(hint)}")
    if result.unmatched:
        blocks.insert(0, unmatched_line(result.unmatched, "past message"))
    return "\n\n".join(blocks)


def result_json(result: HistoryResult) -> str:
    payload = {"query": result.query, "fts_query": result.fts_query,
               "results": [{**hit.to_dict(), "open": open_hint(hit.session)} for hit in result.hits],
               "floored": result.floored, "unmatched": list(result.unmatched)}
    if result.refresh is not None:
        payload["refresh"] = result.refresh.to_dict()
    return json_text(payload)
