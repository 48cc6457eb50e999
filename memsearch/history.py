"""HistoryIndex: search the agents' past sessions, the transcripts.

Memory holds distilled facts; the exact command or error text lives only in the conversation. The
transcripts' cleaned messages (memsearch.transcripts) have tables of their own (migrations/0006), searched
with the memory search's query builder, ranking and floor. Every search first catches up with the files
(memsearch.history_refresh), and shows a hit only once its bytes, read back, still say what was indexed.
"""

from __future__ import annotations

import heapq
import math
import os
import sqlite3
import time
from contextlib import suppress
from functools import reduce
from itertools import groupby, islice
from operator import add, itemgetter
from typing import TYPE_CHECKING, NamedTuple

from . import db, history_refresh
from .cjk import original
from .dates import held_factor, uncounted, windows
from .db import IDS_AT_ONCE, rows_of
from .errors import AmbiguousSession, InvalidArgument, MemsearchError, SessionNotFound, quoted
from .history_refresh import HistoryReport, Progress
from .history_sessions import Message, check_session, given_project, read_messages, resolve_session, session_files
from .query import STOP_WORDS, Query, plan, unmatched, words
from .search import (FILE_COUNT, FTS5_K1, MAX_NEEDLES, Hit, apply_floor, fetch_size, file_count, mark_unmatched,
                     ranking, scored_strings, short_repr, stems, string_params, text_snippets, varints)
from .session_rank import MESSAGES, SESSIONS, pieces_of, rank_sessions, top_messages
from .settings import (DEFAULT_LIMIT, Settings, checked_setting, checked_progress, configured_roots, given_settings,
                       given_type, transcript_folder)
from .memory_file import below, encodable, on_disk, printable_name, real_path
from .transcripts import ROLES, CountingReader, as_stored, parse_line, resolve_root, slug, timestamp

if TYPE_CHECKING:
    from .session_context import SessionContext


class HistoryHit(NamedTuple):
    """One message found; ``snippet``: its excerpt, matches marked; ``file``: its transcript."""

    session: str
    project: str
    at: str | None
    role: str
    score: float
    snippet: str
    file: str
    sidechain: bool = False
    uuid: str | None = None

    to_dict = Hit.to_dict  # the fields in order, the score rounded


class Excerpt(NamedTuple):
    """One of a session hit's best matching messages."""

    role: str
    at: str | None
    snippet: str
    uuid: str | None = None
    sidechain: bool = False


class SessionHit(NamedTuple):
    """One session found: its score as a whole, how many of its messages match, and its best ones (at most
    EXCERPTS), best first; ``at`` and ``file``: the best one's."""

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
    """Hits, best first; ``floored``: candidates the relative floor dropped; ``unmatched``: the searched
    words no message holds (the hits match the others only); ``shared``: the hits' session ids that more than one
    project folder holds (the id alone opens one folder's session, or none: a hit's command names its project)."""

    query: str
    fts_query: str
    hits: list[HistoryHit]
    floored: int
    refresh: HistoryReport | None = None
    unmatched: tuple[str, ...] = ()
    shared: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return short_repr(self, 4)


# Whether more than one project folder holds a session id: two seeks of history_messages_session.
SHARED_SESSION = ("SELECT (SELECT min(project) FROM history_messages WHERE session = ?)"
                  " < (SELECT max(project) FROM history_messages WHERE session = ?)")


class HistoryIndex(db.Opened):
    """Search transcripts; the index follows the files as they grow.

    >>> with HistoryIndex(["~/.claude/projects"]) as history:
    ...     for hit in history.search("pgbouncer port", role="assistant"):
    ...         print(hit.session, hit.at, hit.snippet)

    ``roots``: folders of project folders (Claude Code's ``projects``) or Claude config folders; None:
    :func:`configured_roots`, else Claude Code's own. ``db_path``: any memsearch database (a memory index's
    too); default, one per set of roots in the cache folder.
    """

    def __init__(self, roots=None, db_path=None, *, floor: float | None = None, settings: Settings | None = None):
        super().__init__()
        if roots is None:
            roots = configured_roots() or [None]
        try:
            roots = [roots] if isinstance(roots, (str, os.PathLike)) else list(roots)
        except TypeError:
            raise InvalidArgument(f"roots must be a folder or a list of folders, got {type(roots).__name__}") from None
        real = list(dict.fromkeys(
            resolve_root(None if r is None else transcript_folder(r)) for r in roots))
        if not real:
            raise InvalidArgument("no transcript folder given")
        # As the index stores and shows them: a folder's name that is not UTF-8 (surrogateescape) is no text SQLite
        # binds, so it is spelled \\xNN there; the walks read the folder itself.
        paths = {}
        for folder in real:
            paths.setdefault(printable_name(folder), folder)
        self.roots: tuple[str, ...] = tuple(paths)
        self.settings = given_settings(settings, floor=floor)
        self.explicit_db = db_path is not None
        self._walks = history_refresh.Walks(self.roots, paths)
        self._owners = db.Cached(pieces_of)  # the pieces' sessions, for session ranking
        self._db_file = db.given_file(db_path) if db_path is not None else db.roots_db_file(real, "history")

    db_path = db.Opened.db_file  # the public name of the database file

    def refresh(self, progress: Progress | None = None, seconds: float | None = None) -> HistoryReport:
        """Bring the index in step with the transcripts, reading for ``seconds`` at most (None: until done)."""
        checked_progress(progress)
        if seconds is not None:
            checked_setting("seconds", seconds)
        self._follow()
        return self._guarded(lambda: self._refill(progress, seconds), refill=False)

    def close(self) -> None:
        with self._lock:
            self._walks.close()
            super().close()

    def search(self, query: str, limit: int = DEFAULT_LIMIT, **filters) -> list[HistoryHit]:
        """``search_result(query, limit, **filters).hits``: see :meth:`search_result`."""
        return self.search_result(query, limit, **filters).hits

    def search_result(self, query: str, limit: int = DEFAULT_LIMIT, *, project: str | None = None,
                      session: str | None = None, role: str | None = None, since: str | None = None,
                      refresh: bool = True, floor: float | None = None, messages: bool = False,
                      progress: Progress | None = None) -> HistoryResult:
        """At most ``limit`` sessions matching ``query`` (:class:`SessionHit`), best first; with ``messages``,
        single messages (:class:`HistoryHit`). ``project``: a project folder, the working directory it is named
        after, or its last part (``shop`` for ``-home-me-shop``); ``session``: an id or its start; ``role``: one
        of ROLES; ``since``: an ISO date; ``refresh``: catch up with the files first (``progress`` hears it);
        ``floor``: the relative score floor. Raises InvalidArgument, or NoSearchableWords for a query of none."""
        checked_setting("limit", limit)
        floor = checked_setting("floor", self.settings.floor if floor is None else floor)
        for name, value in (("refresh", refresh), ("messages", messages)):  # ("no" is true)
            checked_setting(name, value, setting="reconcile")  # (true or false, as reconcile=)
        project = given_project(project)
        for name, value in (("session", session), ("role", role), ("since", since)):
            given_type(value, str | None, f"{name} must be a string")  # the query's is plan()'s
            if value is not None and not value.strip():  # (an empty session was left out: every session answered)
                raise InvalidArgument(f"{name} is empty: leave it out to search without it", argument=name)
        if session is not None:
            check_session(session)
        if role is not None and role.lower() not in ROLES:
            raise InvalidArgument(f"role must be one of {', '.join(ROLES)}, got {quoted(role, 80, always=True)}",
                                  argument="role")
        role = role and role.lower()  # (letter case is no typo, as for a scope or a type)
        after = None if since is None else timestamp(since)  # as a line's time is stored
        if since is not None and after is None:  # not a date, or one UTC has no year for (0001-01-01T00:00+14:00)
            raise InvalidArgument("since must be an ISO date or time such as 2025-01-31,"
                                  f" got {quoted(since, 80, always=True)}", argument="since")
        planned = ranked_plan(query, plan(query))  # before any I/O: a bad query costs nothing
        held, own = windows(query), not FIRST_PERSON.isdisjoint(w.casefold() for w in words(query))
        counts: dict[str, int] = {}
        reports: list[HistoryReport] = []

        def run():
            counts.clear()
            pieces, where = self._where(project, session, role, after)
            return (self._run(planned, limit, floor, where, held, counts) if messages else
                    self._run_sessions(planned, limit, floor, pieces, where, held, counts, own,
                                       role == "user" and after is None))

        def give_up(answer, stale):  # still changing under us: show nothing of it rather than what it no longer says
            ids = iter(answer[2])  # a session hit's excerpts' messages, in order, then the next one's
            return [hit for hit in answer[0] if stale.isdisjoint(
                islice(ids, 1 if messages else len(hit.excerpts)))], answer[1], answer[2]

        hits, floored, _ = self._verified(run, itemgetter(2), refresh, progress, reports, give_up)
        # The refreshes' work adds up; what is deferred, linked or skipped is as the last found it: each lists every
        # such transcript anew (summed, one skipped was "and 1 more" after a hit's transcript was read again).
        report = reduce(lambda a, b: HistoryReport(*map(add, a, b))._replace(
            linked=b.linked, deferred=b.deferred, skipped=b.skipped), reports) if reports else None
        shared = self._guarded(lambda: frozenset(s for s in {h.session for h in hits}
                                                 if self.conn.execute(SHARED_SESSION, [s, s]).fetchone()[0]))
        return HistoryResult(query, planned.fts, hits, floored, report, unmatched(query, counts), shared)

    def _read_checked(self, read, ids_of) -> tuple:
        """(read()'s answer, the rows _stale checks of the messages ``ids_of`` it names), both of one snapshot of the
        index: checked after, by their ids, they could be another process's rows of its own read of the transcript
        since (a redaction read again reuses the ids), and the text shown would never have been checked."""
        conn = self.conn
        conn.execute("BEGIN")  # deferred: a read transaction from the first statement, writing nothing
        try:
            answer = read()
            rows = rows_of(conn, CHECKED, list(ids_of(answer)))
        finally:
            if conn.in_transaction:  # it wrote nothing; and an error's own stands, not the end's
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
        return answer, rows

    def _stale(self, ids: list[int], rows: list) -> set[int]:
        """Those of messages ``ids`` that cannot be shown: not in ``rows`` (CHECKED), or of a file whose line at a
        message's place no longer parses to the text indexed, which is marked to be read again from its start."""
        by_file: dict[int, list] = {}
        for row in rows:
            by_file.setdefault(row[0], []).append(row)
        stale = set(ids).difference(row[8] for row in rows)
        files = set()
        for fid, messages in by_file.items():
            try:
                with CountingReader(self._real(*messages[0][6:8])) as reader:
                    stored_as = as_stored(messages[0][7])  # by its place, whatever its lines claim
                    for _, at, size, part, body, body_seg, _, _, _, *shown in messages:
                        # The line whole, with the newlines around it: the same bytes nested in another line
                        # (a value it quotes) are no longer this message.
                        start = at - 1 if at else 0  # the newline before it, but at the file's start
                        raw = reader.pread(at + size + 1 - start, start)
                        whole = len(raw) == at + size + 1 - start and raw.endswith(b"\n") and (not at or raw[0] == 10)
                        parts = parse_line(raw[at - start:-1]) if whole else None
                        if (not parts or part >= len(parts) or parts[part].text != original(body, body_seg)
                                or stored_as(parts[part]) != tuple(shown)):
                            files.add(fid)
                            break
            except (OSError, ValueError):  # gone or no longer a regular file: the refresh sees to it
                files.add(fid)
        if files:  # an inode no file has
            with db.write_transaction(self.conn):
                self.conn.executemany("UPDATE history_files SET inode = -1 WHERE id = ?", [(f,) for f in files])
        return stale.union(row[8] for fid in files for row in by_file[fid])

    def _real(self, root: str, rel: str) -> str:
        real = self._walks.reals.get((root, rel))
        if real is None:  # not refreshed in this process: resolved as find() would, inside the root
            folder = self._walks.paths.get(root)  # (a name spelled \\xNN is its bytes again on disk)
            real = None if folder is None else real_path(on_disk(folder, rel.split("/")))
            if real is None or not below(real, os.path.realpath(folder)):
                raise ValueError("not inside a root of this index")
        return real

    def _where(self, project, session, role, after) -> tuple[tuple[str, list], tuple[str, list]]:
        """The filters of a session's pieces (which cannot apply a role or a time), then of a message: each
        `` AND <condition>`` on ``m``, and their parameters."""
        where, params = [], []
        marks = ",".join("?" * len(self.roots))
        # Rows of other roots sharing the database are never shown; when there are none, no join.
        if self.conn.execute(f"SELECT 1 FROM history_files WHERE root NOT IN ({marks}) LIMIT 1", self.roots).fetchone():
            where.append(f"m.file IN (SELECT id FROM history_files WHERE root IN ({marks}))")
            params += self.roots
        if project is not None:
            # The folder, the working directory it is named after (not UTF-8: its slug still), or that
            # directory's last parts ("shop" is -home-me-shop); a slug holds no GLOB character.
            where.append("(m.project IN (?, ?) OR m.project GLOB ?)")
            params += [project if encodable(project) else slug(project), slug(project),
                       slug(project) if project.startswith("/") else f"*-{slug(project)}"]
        if session is not None:
            where.append("substr(m.session, 1, ?) = ?")
            params += [len(session), session]
        pieces = ("".join(f" AND {w}" for w in where), params)
        for value, condition in ((role, "m.role = ?"), (after, "m.at >= ?")):
            if value is not None:
                where.append(condition)
                params = [*params, value]  # a new list: the pieces keep theirs
        return pieces, ("".join(f" AND {w}" for w in where), params)

    def _run_sessions(self, query: Query, limit: int, floor: float, pieces: tuple, where: tuple, held: tuple,
                      counts: dict, own: bool = False, user: bool = False):
        """Sessions ranked by BM25 over each as a whole (its pieces' scores summed, doubled if held at a date the
        question names; with ``user``, over what the user wrote), the first FUSED with their best message's (the
        user's if ``own``: see FUSED); under another role or a time filter (``where`` is not ``pieces``' filter),
        which pieces cannot apply, by their best message. Pieces hold a session's own course (memsearch.pieces):
        where none matches, sessions go by their best message, a sub-agent's too."""
        fuse, shown = None, limit
        if where == pieces or user:
            shown = max(limit, FUSED)
            ranked = rank_sessions(self.conn, query, *pieces, counts, fetch_size(shown), held, self._owners, user)
            fuse = (counts, file_count(self.conn, SESSIONS), own)
        if (where != pieces and not user) or not ranked:
            ranked, fuse = self._run(query, fetch_size(limit), 0.0, where, held, counts, sessions=True), None
        else:  # a word only sub-agents' lines hold is in no piece, yet it is in a past message
            unmatched_ = [t for t in query.terms if counts.get(t) == 0]
            for term in unmatched_:
                del counts[term]
            mark_unmatched(self.conn, query, counts, *where, MESSAGES, "history_messages", terms=unmatched_)
        kept = apply_floor(ranked, floor, score=itemgetter(1))[:shown]
        hits, ids = self._session_hits(query, kept, *where, limit, fuse)
        return hits, len(ranked) - min(len(kept), limit), ids

    def _session_hits(self, query: Query, kept: list, where: str, params: list, limit: int,
                      fuse: tuple | None = None) -> tuple[list, list]:
        """The first ``limit`` sessions of ``kept``, each with its EXCERPTS best matching messages (under the
        filters ``where``) and how many matched: scored as BM25 would within the session's ids, not by bm25(),
        which counts every word over the whole index again; a word's count read from the text for the REFINED
        likeliest alone (_word_counts). ``fuse``: (pieces holding each word, all pieces, whether the question is
        in the first person): the first FUSED sessions are fused, each word's idf over the pieces (see FUSED)."""
        conn = self.conn
        # The messages' average length in tokens, from FTS5's own totals (row count, then tokens).
        row = conn.execute(FILE_COUNT.format(fts=MESSAGES)).fetchone()
        rows, tokens = (list(varints(row[0]))[:2] + [0, 0])[:2] if row and row[0] else (0, 0)
        avgdl = max(tokens / rows, 1.0) if rows else 1.0
        bounds: list[tuple[tuple, int, int]] = []  # ((session, project), its first and last message ids)
        # A long query's strings past the first MAX_NEEDLES are sought as one (an OR of them): each string is a row
        # a message it matches and a count a session, and a pasted text holds hundreds.
        asked = query.terms
        if len(asked) > MAX_NEEDLES:
            asked = (*asked[:MAX_NEEDLES], " OR ".join(asked[MAX_NEEDLES:]))
        span, seen = 0, dict.fromkeys(asked, 0)
        held, pieces, own = fuse or ({}, 0, False)
        for session, _ in kept:
            # Every message is in a piece: written in one transaction (history_refresh._write), dropped in one.
            low, high = conn.execute("SELECT min(first), max(last) FROM history_pieces WHERE session = ?"
                                     " AND project = ?", session).fetchone()
            if low is not None:  # None: its transcript's rows went since it was ranked
                span += high - low + 1
                bounds.append((session, low, high))
                for term in asked:
                    # A session appended to weeks apart spans every message written between: those are counted
                    # (in C) where the idf needs them, never held.
                    if not held.get(term):
                        seen[term] += conn.execute(EXCERPT_COUNT, (term, low, high)).fetchone()[0]
        # A word's idf: over the pieces when ``fuse`` counts it (the same whichever sessions are kept),
        # else over the kept sessions' messages.
        idf = {t: math.log(1 + (pieces - m + 0.5) / (m + 0.5)) if (m := held.get(t)) else
               math.log(1 + (span - n + 0.5) / (n + 0.5)) for t, n in seen.items()}
        best: dict[tuple, tuple[int, list[int]]] = dict.fromkeys((s for s, _ in kept), (0, []))
        # Each message kept: (the words it holds, K of BM25: k1 x its length against the average, WHOSE it is).
        refined: dict[int, tuple[list[str], float, int]] = {}
        for session, low, high in bounds:
            # The session's messages holding each word, merged in id order by SQLite (each word's matches come in
            # that order: no sort) and looked up a chunk at a time: time and memory go with the REFINED likeliest,
            # not with how many match (a hostile session of one-word messages must not be held whole).
            rows = conn.execute(" UNION ALL ".join([EXCERPT_WORD] * len(asked)) + " ORDER BY 1, 2",
                                [v for n, term in enumerate(asked) for v in (n, term, low, high, *session)])
            words = ((mid, [asked[n] for _, n in group]) for mid, group in groupby(rows, key=itemgetter(0)))
            likeliest: list = []  # a heap of the REFINED best (score, id, words, K, WHOSE)
            matched = 0
            while chunk := dict(islice(words, IDS_AT_ONCE)):
                # By the ids alone (NOT INDEXED): with a chunk of them SQLite chose the session's index, a scan of
                # all its messages a chunk.
                for mid, size, kind in conn.execute(
                        f"SELECT m.id, d.sz, {WHOSE} FROM history_messages AS m NOT INDEXED JOIN history_fts_docsize"
                        f" AS d ON d.id = m.id WHERE m.id IN ({','.join('?' * len(chunk))}) AND m.session = ?"
                        f" AND m.project = ?{where}", [*chunk, *session, *params]):
                    matched += 1
                    k = FTS5_K1 * (1 - BM25_B + BM25_B * next(varints(size), 0) / avgdl)  # its docsize
                    item = (sum(idf[t] for t in chunk[mid]) / (1 + k), mid, chunk[mid], k, kind)
                    (heapq.heappush if len(likeliest) < REFINED else heapq.heappushpop)(likeliest, item)
            once = sorted(likeliest, reverse=True)  # best first, ties to the later message
            refined.update((mid, (terms, k, kind)) for _, mid, terms, k, kind in once)
            # Counted words raise a score by 1 + K at most: a message under the EXCERPTS-th even so stays under.
            reach = once[EXCERPTS - 1][0] if len(once) >= EXCERPTS else 0.0
            best[session] = (matched, [mid for one, mid, _, k, _ in once if one * (1 + k) >= reach])
        counts = _word_counts(conn, {mid: refined[mid][0] for matched, mids in best.values() for mid in mids}, asked)
        top = {}  # each session's best message's score
        for session, (matched, mids) in best.items():  # (the values replaced, no key added)
            score = {mid: sum(idf[t] * c / (c + k) for t in terms for c in [max(counts.get((mid, t), 1), 1)])
                     for mid in mids for terms, k, _ in [refined[mid]]}
            best[session] = (matched, sorted(mids, key=lambda m: (-score[m], -m))[:EXCERPTS])
            top[session] = max((v for mid, v in score.items() if refined[mid][2] >= 1 + own), default=0.0)
        if fuse is not None and kept and (most := max(top[s] for s, _ in kept[:FUSED])) > 0:
            scale = FUSE_WEIGHT * kept[0][1] / most  # the best message's share, on the sessions' scale
            fused = sorted(((s, score + scale * top[s]) for s, score in kept[:FUSED]), key=lambda k: -k[1])
            kept = fused + kept[FUSED:]
        kept = kept[:limit]
        ids = [mid for session, _ in kept for mid in best[session][1]]
        found_, hits = self._found(query, ids), []
        for (session, project), score in kept:
            matched, mids = best[session, project]
            if mids:
                first = found_[mids[0]]
                hits.append(SessionHit(session, project, first.at, score, matched, tuple(
                    Excerpt(m.role, m.at, m.snippet, m.uuid, m.sidechain) for m in map(found_.get, mids)), first.file))
        return hits, ids

    def _run(self, query: Query, limit: int, floor: float, filters: tuple, held: tuple, counts: dict,
             sessions: bool = False):
        """(Hits, how many the floor dropped, their ids); with ``sessions``, the ``limit`` best ((session, project),
        score) by their best message."""
        conn, (where, params) = self.conn, filters
        scored = scored_strings(conn, query, MESSAGES)
        counts.update((s.fts, s.files) for s in scored)
        mark_unmatched(conn, query, counts, where, params, MESSAGES, "history_messages")
        scored = [s for s in scored if s.files]  # a string matching nothing adds nothing
        if not scored:
            return [] if sessions else ([], 0, [])
        # The best ids by score, ties to the later message. Not memsearch.search's pruning: a question's words are
        # common in conversation, so its check mostly failed and it ran again (top_messages prunes in Python).
        (factor, factor_params), size = held_factor(held, "m.at", "m.at"), limit if sessions else fetch_size(limit)
        ranked = None if sessions or where or factor else top_messages(conn, scored, size)
        if ranked is None:  # one row a session, else without a filter or a date no row is joined
            sql = (SESSION_BEST if sessions else MESSAGE_BEST if where or factor else MESSAGE_TOP).format(
                ranking=ranking(len(scored), MESSAGES, ()), factor=factor, where=where)
            ranked = conn.execute(sql, [*factor_params, *string_params(scored), *params, size]).fetchall()
        if sessions:
            return [((s, p), score) for s, p, score in ranked]
        kept = apply_floor(ranked, floor, score=itemgetter(1))[:limit]
        ids = [mid for mid, _ in kept]
        found = self._found(query, ids) if ids else {}
        return [found[mid]._replace(score=score) for mid, score in kept], len(ranked) - len(kept), ids

    def _found(self, query: Query, ids: list[int]) -> dict[int, HistoryHit]:
        """{id: the message as a hit, its excerpt for ``query``, score 0}."""
        rows = rows_of(self.conn, "SELECT m.id, m.session, m.project, m.at, m.role, m.idx_body, f.root, f.path,"
                       " m.sidechain, m.uuid FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
                       " WHERE m.id IN ({marks})", ids)
        excerpts = text_snippets([row[5] for row in rows], " OR ".join(query.terms))
        return {mid: HistoryHit(*row, 0.0, excerpt, _file(root, path), bool(side), uuid)
                for (mid, *row, _, root, path, side, uuid), excerpt in zip(rows, excerpts)}

    def resolve_session(self, session: str) -> str:
        """The full id of a session given whole or by its first characters (else SessionNotFound, AmbiguousSession)."""
        return self._guarded(lambda: resolve_session(self.conn, self.roots, session))

    def session_messages(self, session: str, *, refresh: bool = True, sidechains: bool = False,
                         project: str | None = None) -> list[Message]:
        """The cleaned messages of one session, oldest first (sub-agents' sidechains only if asked); ``project``
        as read_session_context takes it."""
        for name, value in (("refresh", refresh), ("sidechains", sidechains)):  # ("no" is true)
            checked_setting(name, value, setting="reconcile")
        project = given_project(project)
        return self._verified(
            lambda: list(read_messages(self.conn, session_files(self.conn, self.roots, session, sidechains, project))),
            lambda messages: [m.id for m in messages], refresh)

    def read_session_context(self, session: str, query: str = "", strategy: str = "relevant",
                             max_tokens: int | None = None, project: str | None = None):
        """ReadSessionContext: the parts of one session that bear on ``query`` (memsearch.session_context).
        ``project``, a hit's project folder or the working directory it is named after, is needed only when
        several project folders hold a transcript of the id (else AmbiguousSession)."""
        from .session_context import UNREAD, check_arguments, select  # here: a search never loads it

        args = check_arguments(session, query, strategy, max_tokens, project)

        def read():
            where = session_files(self.conn, self.roots, args.session, False, args.project)
            return select(where.full, read_messages(self.conn, where), args, total=sum(n for _, n in where.files),
                          newest_first=read_messages(self.conn, where, newest_first=True))

        reports: list[HistoryReport] = []
        try:
            found = self._verified(read, lambda context: list(context.ids), reports=reports)
        except SessionNotFound as ex:  # its transcript may be one the refresh had no time to read
            if not (deferred := reports[-1].deferred if reports else 0) or isinstance(ex, AmbiguousSession):
                raise
            raise SessionNotFound(f"{ex}; {UNREAD.format(n=deferred)}") from None
        # Its end may be past what was read (a handoff's "end" its middle): said, as a search says it.
        return found.unread(reports[-1].deferred if reports else 0)

    def _verified(self, read, ids_of, refresh: bool = True, progress: Progress | None = None,
                  reports: list | None = None, give_up=None):
        """read()'s answer, after a refresh if ``refresh`` (``progress`` hears it), once the messages ``ids_of`` it
        names still say what was indexed (_stale). A changed transcript is refreshed and read() run again,
        VERIFY_TRIES times at most; then give_up(answer, the ids of _stale) answers, by default a MemsearchError.
        Each refresh's report goes to ``reports``; all of them read until REFRESH_SECONDS after the first began: a
        transcript rewritten without end made each try read for REFRESH_SECONDS more."""
        deadline = time.monotonic() + history_refresh.REFRESH_SECONDS
        reports = [] if reports is None else reports
        if refresh:
            reports.append(self.refresh(progress, history_refresh.REFRESH_SECONDS))
        for _ in range(VERIFY_TRIES):
            answer, rows = self._guarded(lambda: self._read_checked(read, ids_of))
            stale = self._guarded(lambda: self._stale(list(ids_of(answer)), rows))
            if not stale:
                return answer
            reports.append(self.refresh(None, max(0.0, deadline - time.monotonic())))
        if give_up is None:
            raise MemsearchError("the session's transcript kept changing while it was read: try again")
        return give_up(answer, stale)

    def status(self) -> dict:
        """The roots, the database file, and how many transcripts, sessions and messages it holds."""
        files, sessions, messages = self._guarded(lambda: self.conn.execute(
            "SELECT count(DISTINCT f.id), count(DISTINCT m.session), count(m.id) FROM history_files AS f LEFT JOIN"
            f" history_messages AS m ON m.file = f.id WHERE f.root IN ({','.join('?' * len(self.roots))})",
            self.roots).fetchone())
        return {"roots": list(self.roots), "database": self._db_file, "transcripts": files, "sessions": sessions,
                "messages": messages}

    def _refill(self, progress: Progress | None = None, seconds: float | None = history_refresh.REFRESH_SECONDS):
        return history_refresh.refresh(self.conn, self._walks, progress, seconds)


def read_session_context(session: str, query: str = "", strategy: str = "relevant", max_tokens: int | None = None,
                         project: str | None = None, *, roots=None, db_path=None) -> SessionContext:
    """ReadSessionContext as one call over the transcripts of ``roots`` (see :class:`HistoryIndex`)."""
    from .session_context import check_arguments

    args = check_arguments(session, query, strategy, max_tokens, project)  # before any I/O
    with HistoryIndex(roots, db_path) as history:
        return history.read_session_context(*args)


def _word_counts(conn: sqlite3.Connection, holds: dict[int, list[str]],
                 terms: tuple[str, ...]) -> dict[tuple[int, str], int]:
    """{(message, term): how often its text holds the term}, for the terms FTS5 found in each message of
    ``holds``: its words' starts (search.stems) after a space or a line end, str.count being far cheaper than
    a regular expression's \\b. A term not found so (a CJK bigram inside a word) is left out: it counts once.
    Only the first MAX_NEEDLES starts of those ``terms`` (the query's, in order) hold are sought, as for a long
    memory hit's likeliest slice: each is a scan of every message, and a long query has hundreds."""
    found = set().union(*holds.values())
    sought = set(list(dict.fromkeys(n for t in terms if t in found for n in stems(t)))[:MAX_NEEDLES])
    needles = {term: [n for n in stems(term) if n in sought] for term in found}
    out: dict[tuple[int, str], int] = {}
    # The text as indexed: a text stored once (memsearch.cjk.stored) has only its shadow.
    ids = list(holds) if any(needles.values()) else []
    for mid, body in rows_of(conn, "SELECT id, idx_body FROM history_messages WHERE id IN ({marks})", ids):
        text = "\n" + body.lower()
        for term in holds[mid]:  # each term once a message
            found = sum(text.count(" " + needle) + text.count("\n" + needle) for needle in needles[term])
            if found:
                out[mid, term] = found
    return out


def ranked_plan(query: str, planned: Query) -> Query:
    """``planned`` (plan(query)) without the words of the days ``query`` counts back, nor the pairs across
    them (dates.uncounted; windows() ranks the sessions held then higher), unless only stop words are left."""
    text = uncounted(query)
    if text == query or all(w.casefold() in STOP_WORDS for w in words(text)):
        return planned
    fewer = plan(text)
    return fewer._replace(pairs=tuple(p for p in fewer.pairs if p in planned.pairs))


def _file(root: str, path: str) -> str:
    return os.path.join(root, *path.split("/"))


# What _stale checks of each message shown: where its line is, the text indexed, its file's name, its id, and the
# session, role, time, uuid and sub-agent mark a hit shows with the text (and --role, --since, session-context go by).
CHECKED = ("SELECT m.file, m.line_at, m.line_len, m.part, m.body, m.body_seg, f.root, f.path, m.id, m.session,"
           " m.role, m.at, m.uuid, m.sidechain FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
           " WHERE m.id IN ({marks})")
# Searches run again at most this many times when a hit's transcript no longer holds its text.
VERIFY_TRIES = 3
# A session hit shows at most this many of its messages: enough to tell what it was about.
EXCERPTS = 3
# BM25 over a whole session favours an answer spread over it, so the first FUSED sessions go by their score plus
# FUSE_WEIGHT of their best message's (against the best of theirs, on the first's scale); the others keep their order.
FUSED = 10
FUSE_WEIGHT = 0.25
# A first-person question ("what did I buy?") fuses the user's best message; one about others ("what did Caroline
# paint?") every role's: there (LoCoMo) the "user" is but one of the two people asked about. Neither a sub-agent's,
# as a session is ranked by its own course (memsearch.pieces): 0 a sub-agent's, 1 the session's own, 2 the user's.
WHOSE = "CASE WHEN m.sidechain THEN 0 WHEN m.role = 'user' THEN 2 ELSE 1 END"
FIRST_PERSON = frozenset(("i", "me", "my", "mine", "myself"))
# The messages ranked in SQL, best first (ties: the later one), with a filter or a date joined to their rows.
MESSAGE_TOP = "SELECT id, score FROM ({ranking}) ORDER BY score DESC, id DESC LIMIT ?"
MESSAGE_BEST = ("SELECT s.id, s.score{factor} AS score FROM ({ranking}) AS s JOIN history_messages AS m ON m.id = s.id"
                " WHERE 1{where} ORDER BY score DESC, s.id DESC LIMIT ?")
# Under another role than the user's, or a time filter, sessions go by their best message (ties: the later one's):
# one row a session, so that a session's many best messages do not take every place.
SESSION_BEST = """
SELECT session, project, score FROM (
    SELECT session, project, score, id, row_number() OVER (PARTITION BY session, project ORDER BY score DESC, id DESC)
        AS n
    FROM (SELECT m.session, m.project, s.id, s.score{factor} AS score FROM ({ranking}) AS s
          JOIN history_messages AS m ON m.id = s.id WHERE 1{where}))
WHERE n = 1 ORDER BY score DESC, id DESC LIMIT ?
"""
# A session's messages holding a word (with the word's place in the query), for its excerpts: its ids between
# two bounds, which FTS5 seeks to, then those of the session alone (CROSS JOIN: the word's matches first, never
# a full-text query a message).
EXCERPT_WORD = (f"SELECT f.rowid, ? FROM {MESSAGES} AS f CROSS JOIN history_messages AS m ON m.id = f.rowid"
                f" WHERE f.{MESSAGES} MATCH ? AND f.rowid BETWEEN ? AND ? AND +m.session = ? AND +m.project = ?")
# And how many messages between those bounds hold it, whatever their session.
EXCERPT_COUNT = f"SELECT count(*) FROM {MESSAGES} WHERE {MESSAGES} MATCH ? AND rowid BETWEEN ? AND ?"
# A session's likeliest excerpts by the words they hold, whose words are then counted in their text.
REFINED = 30
# FTS5's bm25() b (its k1 is memsearch.search.FTS5_K1).
BM25_B = 0.75
