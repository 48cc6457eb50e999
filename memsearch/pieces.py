"""A session's text indexed as pieces, for ranking sessions as wholes (migrations/0010).

memsearch.history_refresh calls :func:`add_pieces` after it inserts a commit's messages and
:func:`drop_pieces` before it deletes them.
"""

from __future__ import annotations

import sqlite3
from itertools import groupby
from operator import itemgetter

# A piece's texts as indexed, the user's and the rest (migrations/0016, 0022): FTS5 keeps none, and deleting a piece
# hands it these same texts (ORDER BY in a subquery keeps group_concat's order). A sub-agent's lines are in neither:
# a session is ranked by its own course. Its messages are read by their ids while those are mostly its own, else
# through the session's index: by its file's index alone, the square of a file's lines claiming many sessions.
_DENSE = "p.last - p.first < 4 * p.messages"
_SAID_TEXT, _REST_TEXT = [
    "(SELECT group_concat(idx_body, char(10)) FROM ("
    f"SELECT id, idx_body FROM history_messages WHERE {_DENSE} AND id BETWEEN p.first AND p.last"
    f" AND +file = p.file AND +session = p.session AND {said}"
    " UNION ALL SELECT id, idx_body FROM history_messages INDEXED BY history_messages_session"
    f" WHERE NOT ({_DENSE}) AND session = p.session AND project = p.project AND sidechain IN (0, 1)"
    f" AND file = p.file AND id BETWEEN p.first AND p.last AND {said} ORDER BY id)) AS {name}"
    for said, name in (("sidechain = 0 AND role = 'user'", "said"), ("sidechain = 0 AND role <> 'user'", "rest"))]
PIECE_TEXT = f"{_SAID_TEXT}, {_REST_TEXT}"
# The pieces ``where`` (on ``p``) picks that have a text: a piece of a sub-agent's lines alone has none, and is
# not indexed, so that it counts in no word's rarity nor the pieces' average length (it is kept: a session's
# messages are all in its pieces' ids). LIMIT -1 keeps SQLite from reading each text twice, for the test too.
_INDEXED = (f"SELECT id, said, rest FROM (SELECT p.id, {PIECE_TEXT} FROM history_pieces AS p WHERE {{where}}"
            " LIMIT -1) WHERE said IS NOT NULL OR rest IS NOT NULL")
# Those where the user said something, with what they said (history_user_fts, migrations/0036).
_SAID = (f"SELECT id, said FROM (SELECT p.id, {_SAID_TEXT} FROM history_pieces AS p WHERE {{where}}"
         " LIMIT -1) WHERE said IS NOT NULL")

# Pieces are merged up to this many messages: a merge re-indexes its text in one piece, so an unbounded
# one made a long session's every append grow with the whole session. A longer one is ranked by its sum.
PIECE_MESSAGES = 1024


def add_pieces(conn: sqlite3.Connection, after: int) -> None:
    """Index the messages past id ``after`` as one piece per file and session, then merge each session's newest
    pieces while the last holds at least half the messages of the one before and the two at most PIECE_MESSAGES
    (a binary counter: about log2(reads) pieces per PIECE_MESSAGES messages)."""
    top = conn.execute("SELECT coalesce(max(id), 0) FROM history_pieces").fetchone()[0]
    # NOT INDEXED: by the ids (the rowid), where SQLite chose to walk every message in history_messages_file's order.
    conn.execute("INSERT INTO history_pieces (file, session, project, first, last, messages, first_at, last_at)"
                 " SELECT file, session, max(project), min(id), max(id), count(*), min(at), max(at)"
                 " FROM history_messages NOT INDEXED WHERE id > ? GROUP BY file, session", (after,))
    _index_pieces(conn, "p.id > ?", (top,))
    # One statement for all the sessions added to: a commit's end runs in a thread (history_refresh._Pending),
    # which waits for the GIL after each.
    rows = conn.execute("SELECT file, session, id, first, last, messages, first_at, last_at FROM history_pieces"
                        " WHERE (file, session) IN (SELECT file, session FROM history_pieces WHERE id > ?)"
                        " ORDER BY file, session, id", (top,)).fetchall()
    for _, group in groupby(rows, key=itemgetter(0, 1)):
        pieces = [row[2:] for row in group]
        gone = []
        while (len(pieces) >= 2 and pieces[-1][3] * 2 >= pieces[-2][3]
               and pieces[-1][3] + pieces[-2][3] <= PIECE_MESSAGES):
            (one, first, _, n1, a1, b1), (two, _, last, n2, a2, b2) = pieces[-2:]
            gone += [i for i in (one, two) if i is not None]
            pieces[-2:] = [(None, first, last, n1 + n2, _least(a1, a2), _least(b1, b2, max))]
        if gone:
            drop_pieces(conn, f"p.id IN ({','.join('?' * len(gone))})", gone)
            _, first, last, n, first_at, last_at = pieces[-1]
            pid = conn.execute("INSERT INTO history_pieces (file, session, project, first, last, messages, first_at,"
                               " last_at) SELECT file, session, project, ?, ?, ?, ?, ? FROM history_messages"
                               " WHERE id = ?", (first, last, n, first_at, last_at, last)).lastrowid
            _index_pieces(conn, "p.id = ?", (pid,))


def _least(a, b, pick=min):  # either time may be None (no message had one)
    return b if a is None else a if b is None else pick(a, b)


def _index_pieces(conn: sqlite3.Connection, where: str, params) -> None:
    conn.execute(f"INSERT INTO history_session_fts (rowid, idx_user, idx_other) {_INDEXED.format(where=where)}", params)
    conn.execute(f"INSERT INTO history_user_fts (rowid, idx_user) {_SAID.format(where=where)}", params)


def drop_pieces(conn: sqlite3.Connection, where: str, params) -> None:
    """Unindex and delete the pieces ``where`` (on ``p``) picks, before their messages go."""
    conn.execute(f"INSERT INTO history_session_fts (history_session_fts, rowid, idx_user, idx_other)"
                 f" SELECT 'delete', * FROM ({_INDEXED.format(where=where)})", params)
    conn.execute(f"INSERT INTO history_user_fts (history_user_fts, rowid, idx_user)"
                 f" SELECT 'delete', * FROM ({_SAID.format(where=where)})", params)
    conn.execute(f"DELETE FROM history_pieces AS p WHERE {where}", params)
