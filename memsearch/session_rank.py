"""Sessions ranked as wholes: BM25 over the sessions' pieces (memsearch.pieces), summed by session.
A session is an id in one project folder: lines elsewhere claiming its id are another hit.

What memsearch.search.ranking() gives over the pieces' FTS5 table, but each string read once, and
the words most pieces hold scored last, each only in the pieces of the sessions that its bound and
those of the words after it still let reach the first ones (MaxScore, as memsearch.search prunes).
Single messages (``--messages``) are ranked the same way (:func:`top_messages`).
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from collections import Counter

from .cjk import WORD
from .dates import HELD_FACTOR, held_factor
from .db import IDS_AT_ONCE, Cached, rows_of
from .query import STOP_WORDS, Query
from .search import (PAIR_WEIGHT, PRUNE_MIN_FILES, Scored, common_strings, file_count, lucene_factor, mark_unmatched,
                     string_runs)

# The sessions' pieces' FTS5 table.
SESSIONS = "history_session_fts"
# Its columns' weights: what the user wrote, and the rest (replies, tool output). A question about a
# session asks mostly after what the user said in it; the replies around it are long and generic.
ROLE_WEIGHTS = (1.0, 0.5)
# What the user wrote in each piece, indexed again (migrations/0036): a string matched there alone reads no
# positions in the rest, most of a piece's tokens, as a column filter on SESSIONS does.
USER = "history_user_fts"
PIECE_STRING = {SESSIONS: f"SELECT rowid, bm25({SESSIONS}, {', '.join(map(repr, ROLE_WEIGHTS))}) FROM {SESSIONS}"
                          f" WHERE {SESSIONS} MATCH ?",
                USER: f"SELECT rowid, bm25({USER}) FROM {USER} WHERE {USER} MATCH ?"}
PIECE_COUNT = {table: f"SELECT count(*) FROM {table} WHERE {table} MATCH ?" for table in PIECE_STRING}


def rank_sessions(conn: sqlite3.Connection, query: Query, where: str, params: list, counts: dict, size: int,
                  held: tuple, owners: Cached, user: bool = False) -> list:
    """The ``size`` best ((session, project), score): the pieces' scores summed by session (doubled if held
    at a date the question names), each string read once and counted as its rows come. ``owners``:
    pieces_of() kept between searches; its map of every piece serves the searches without a filter or a date.
    ``user``: only what the user wrote is matched (``role="user"``), so every count and bound is USER's."""
    table = USER if user else SESSIONS
    pieces = file_count(conn, table)
    user_pieces = pieces if user else file_count(conn, USER)
    runs = string_runs(query)
    common = _common_words(conn, runs, counts, pieces, table)
    scores: dict[int, float] = {}
    for fts, weight, lucene in runs:
        # A pair holding a stop word ("the bus", "my hotel") is matched in what the user wrote alone: there
        # its wording tells; in long replies and tool output it is generic.
        stop_pair = weight == PAIR_WEIGHT and any(w.casefold() in STOP_WORDS for w in WORD.findall(fts))
        if fts in common or (stop_pair and _common_pair(fts, counts, pieces)):
            continue
        rows = conn.execute(PIECE_STRING[USER if stop_pair else table], (fts,)).fetchall()
        factor, _ = lucene_factor(user_pieces if stop_pair else pieces, len(rows), weight, lucene)
        counts[fts] = len(rows)
        _add(scores, rows, -weight * factor)  # the strings in one order for every piece: equal pieces score equal
    mark_unmatched(conn, query, counts, where, params, table, "history_pieces")
    factor_sql = held_factor(held, "m.first_at", "m.last_at")
    plain = not where and not factor_sql[0]  # (a filtered search without a common word reads no map)
    every, multi = owners.get(conn) if plain or common else ({}, {})
    owners = every if plain else None
    known: dict = {}
    if common:
        grow = HELD_FACTOR if held else 1.0
        most = {fts: lucene_factor(pieces, n, 1.0, True)[1] * grow for fts, n in common.items()}
        order = sorted(common, key=most.get, reverse=True)  # the largest bound first: the candidates shrink most
        for n, fts in enumerate(order):
            ranked, members = _by_session(conn, scores, where, params, factor_sql, owners, known)
            ids = _exact(conn, ranked, members, multi, sum(most[f] for f in order[n:]), size, grow)
            factor = lucene_factor(pieces, common[fts], 1.0, True)[0]
            _add(scores, _matches(conn, PIECE_STRING[table], fts, ids), -factor)
            if ids is not None:  # no other session reaches the first ``size``: scored no more
                scores = {p: scores[p] for p in ids if p in scores}
    return _by_session(conn, scores, where, params, factor_sql, owners, known)[0][:size]


# The messages' FTS5 table, and a string's score in each message it matches (or in some of them).
MESSAGES = "history_fts"
MESSAGE_STRING = f"SELECT rowid, bm25({MESSAGES}) FROM {MESSAGES} WHERE {MESSAGES} MATCH ?"


# Scores top_messages holds at most (a dict entry each, ~300 bytes with what reads them): a broader question is
# ranked by SQLite, whose sorter keeps to its cache.
HELD_MESSAGES = 100_000


def top_messages(conn: sqlite3.Connection, scored: list[Scored], size: int) -> list[tuple[int, float]] | None:
    """The ``size`` best (message id, score), ties to the later message, of ranking() over the messages (no filter
    nor date): the common strings (search.common_strings) scored last, the largest bound first, each only in
    the messages that its bound and those of the strings after it still let reach the first ``size``. None where
    no string is common, or where it would hold more than HELD_MESSAGES scores: ranking() in SQL then."""
    common = common_strings(scored, size)
    if not common or sum(s.files for s in scored if s not in common) > HELD_MESSAGES:
        return None
    scores: dict[int, float] = {}
    for s in scored:
        if s not in common:
            _add(scores, conn.execute(MESSAGE_STRING, (s.fts,)), -s.weight * s.factor)
    left = sum(s.bound for s in common)  # the most the strings not scored yet add to a message
    for s in reversed(common):
        best = heapq.nlargest(size, scores.values())
        ids = None
        if len(best) == size and left < best[-1]:  # no message matching those strings alone reaches the first
            ids = [m for m, score in scores.items() if score + left >= best[-1]]
        elif len(scores) + s.files > HELD_MESSAGES:
            return None
        _add(scores, _matches(conn, MESSAGE_STRING, s.fts, ids), -s.weight * s.factor)
        if ids is not None:
            scores = {m: scores[m] for m in ids}
        left -= s.bound
    return sorted(scores.items(), key=lambda item: (-item[1], -item[0]))[:size]


# Such a pair whose other words are each in this share of the pieces or more is not ranked at all:
# over long sessions it is in most of them too (idf near nothing).
COMMON_SHARE = 0.5


def _common_pair(pair: str, counts: dict, pieces: int) -> bool:
    """Whether ``pair``, holding a stop word, has only words that ``counts`` (pieces a string
    matched) says are common besides; a word not counted as a term of its own is not."""
    common = {term[1:-1].casefold() for term, n in counts.items() if n >= COMMON_SHARE * pieces}
    return all(w in common for w in map(str.casefold, WORD.findall(pair)) if w not in STOP_WORDS)


def _common_words(conn: sqlite3.Connection, runs: list, counts: dict, pieces: int, table: str) -> dict[str, int]:
    """{word: pieces holding it} of the single words in COMMON_SHARE of the pieces and PRUNE_MIN_FILES or
    more (a count(*) reads no position), all but the rarest when every word is one."""
    if pieces < PRUNE_MIN_FILES:
        return {}
    counted = {fts: conn.execute(PIECE_COUNT[table], (fts,)).fetchone()[0] for fts, weight, lucene in runs
               if weight == 1.0 and lucene}
    common = {fts: n for fts, n in counted.items() if n >= max(PRUNE_MIN_FILES, COMMON_SHARE * pieces)}
    if common and len(common) == sum(weight == 1.0 for _, weight, _ in runs):
        del common[min(common, key=common.get)]  # the rarest scored first, to find the pieces
    counts.update(common)
    return common


def _matches(conn: sqlite3.Connection, sql: str, fts: str, ids: list[int] | None):
    """The (rowid, bm25()) rows of ``sql`` (a string's FTS5 query) for ``fts``; of ``ids`` alone if not None. +rowid
    filters the matches, where rowid IN would run the query (and bm25()'s count of the string) once an id. Each
    statement walks the string's every match: more ids than one binds are scored in one walk of them all, the other
    rows dropped as they come."""
    if ids is None:
        return conn.execute(sql, (fts,))
    if len(ids) > IDS_AT_ONCE:  # a score held for every match outgrew HELD_MESSAGES
        keep = set(ids)
        return (row for row in conn.execute(sql, (fts,)) if row[0] in keep)
    return rows_of(conn, sql + " AND +rowid IN ({marks})", ids, before=(fts,))


def _add(scores: dict[int, float], rows, scale: float) -> None:
    get = scores.get
    for pid, raw in rows:
        scores[pid] = get(pid, 0.0) + raw * scale


def pieces_of(conn: sqlite3.Connection) -> tuple[dict[int, tuple[str, str]], dict[tuple[str, str], int]]:
    """({piece: its (session, project)}, {(session, project): its pieces} of the sessions of several: a long one,
    read in several goes), for a db.Cached: a search then looks its pieces up, not an IN query of them. Only the
    indexed ones, which alone match: a sub-agent's file whose every line claims another session makes a piece
    each, never ranked (CHANGELOG: the memory they held)."""
    owners = {pid: (s, p) for pid, s, p in conn.execute(
        f"SELECT p.id, p.session, p.project FROM {SESSIONS}_docsize AS d JOIN history_pieces AS p ON p.id = d.id")}
    return owners, {session: n for session, n in Counter(owners.values()).items() if n > 1}


def _by_session(conn: sqlite3.Connection, scores: dict[int, float], where: str, params: list,
                factor_sql: tuple, owners: dict[int, tuple] | None, known: dict) -> tuple[list, dict]:
    """((session, project), score) best first of the pieces ``scores`` passing ``where``, and {(session, project):
    its pieces}; ``owners``: every piece's, when there is no filter nor date factor; else ``known``: {piece:
    ((session, project), factor) or None where filtered out}, read once a piece for every call of one search."""
    members: dict[tuple, list[int]] = {}
    factors: dict[tuple, float] = {}
    factor, factor_params = factor_sql
    if owners is not None:  # every factor 1
        for pid in scores:
            if (session_ := owners.get(pid)) is not None:
                members.setdefault(session_, []).append(pid)
    else:
        missing = [p for p in scores if p not in known]
        known.update(dict.fromkeys(missing))
        # By the ids alone (NOT INDEXED): a filter on the roots' files made SQLite read every piece of theirs a chunk.
        sql = (f"SELECT m.id, m.session, m.project, 1.0{factor} FROM history_pieces AS m NOT INDEXED"
               f" WHERE m.id IN ({{marks}}){where}")
        known.update((p, ((s, o), f)) for p, s, o, f in rows_of(conn, sql, missing, params, factor_params))
        for pid in scores:
            if (owner := known[pid]) is not None:
                members.setdefault(owner[0], []).append(pid)
                factors[owner[0]] = max(factors.get(owner[0], 1.0), owner[1])
    # fsum: a session's score does not hang on the order its pieces come in. Python orders str as
    # SQLite's BINARY collation does, so ties go by session (then project) as ORDER BY had them.
    get = scores.__getitem__
    ranked = sorted((-math.fsum(map(get, v)) * factors.get(s, 1.0), s) for s, v in members.items())
    return [(s, -score) for score, s in ranked], members


def _exact(conn: sqlite3.Connection, ranked: list, members: dict, multi: dict, bound: float, size: int,
           grow: float) -> list[int] | None:
    """The pieces of the sessions that may still be among the first ``size``: ``ranked`` as scored so far,
    the words left to score adding at most ``bound`` to a piece (a date's factor, ``grow``, included);
    None when a session none of whose pieces is scored yet might be (``multi``: {(session, project): pieces} of 2
    or more)."""
    if len(ranked) < size or bound >= ranked[size - 1][1]:
        return None
    reach = ranked[size - 1][1]  # the first ``size`` score at least this in the end
    if any(bound * count >= reach for s, count in multi.items() if s not in members):
        return None
    most, ids, whole = max(multi.values(), default=1), [], []
    for s, score in ranked:
        if score * grow + bound * most < reach:  # best first: no later session reaches either
            break
        if s in multi:  # its factor may come from a piece not scored yet
            if score * grow + bound * multi[s] >= reach:
                whole.append(s)
        elif score + bound >= reach:
            ids += members[s]
    whole_ = set(whole)
    return ids + [p for p, *key in rows_of(conn, "SELECT id, session, project FROM history_pieces"
                                                  " WHERE session IN ({marks})", [s for s, _ in whole])
                  if tuple(key) in whole_]
