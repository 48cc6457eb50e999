"""A session's text indexed as pieces, for ranking sessions as wholes (migrations/0010).

memsearch.history calls :func:`add_pieces` after it inserts a file's messages
and :func:`drop_pieces` before it deletes them.
"""

from __future__ import annotations

import sqlite3

# A piece's text as it was indexed (migrations/0010_history_sessions.sql): FTS5 keeps none, and
# deleting a piece hands it this same text. The ORDER BY in a subquery keeps group_concat's order.
PIECE_TEXT = ("(SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages"
              " WHERE file = p.file AND session = p.session AND id BETWEEN p.first AND p.last ORDER BY id))")

# Pieces are merged up to this many messages (each capped, memsearch.transcripts): a merge
# re-indexes its text in one piece, so an unbounded one made a long session's every append, and
# its memory, grow with the whole session. A longer session is ranked by its pieces' sum.
PIECE_MESSAGES = 1024


def add_pieces(conn: sqlite3.Connection, fid: int, after: int) -> None:
    """Index the messages of file ``fid`` past id ``after`` as one piece per session, then merge
    each session's newest pieces while the last holds at least half the messages of the one before
    and the two hold at most PIECE_MESSAGES (a binary counter: a session keeps about log2(reads)
    pieces per PIECE_MESSAGES messages, each message re-indexed as often)."""
    top = conn.execute("SELECT coalesce(max(id), 0) FROM history_pieces").fetchone()[0]
    conn.execute("INSERT INTO history_pieces (file, session, project, first, last, messages, first_at, last_at)"
                 " SELECT file, session, max(project), min(id), max(id), count(*), min(at), max(at)"
                 " FROM history_messages WHERE file = ? AND id > ? GROUP BY session", (fid, after))
    added = conn.execute("SELECT id, session FROM history_pieces WHERE id > ?", (top,)).fetchall()
    _index_pieces(conn, "p.id > ?", (top,))
    for _, session in added:
        pieces = conn.execute("SELECT id, first, last, messages, first_at, last_at FROM history_pieces"
                              " WHERE file = ? AND session = ? ORDER BY id", (fid, session)).fetchall()
        gone = []
        while (len(pieces) >= 2 and pieces[-1][3] * 2 >= pieces[-2][3]
               and pieces[-1][3] + pieces[-2][3] <= PIECE_MESSAGES):
            (one, first, _, n1, a1, b1), (two, _, last, n2, a2, b2) = pieces[-2], pieces[-1]
            gone += [i for i in (one, two) if i is not None]
            pieces[-2:] = [(None, first, last, n1 + n2, _least(a1, a2), _least(b1, b2, max))]
        if gone:
            _delete_pieces(conn, f"p.id IN ({','.join('?' * len(gone))})", gone)
            _, first, last, n, first_at, last_at = pieces[-1]
            pid = conn.execute("INSERT INTO history_pieces (file, session, project, first, last, messages, first_at,"
                               " last_at) SELECT file, session, project, ?, ?, ?, ?, ? FROM history_messages WHERE id = ?",
                               (first, last, n, first_at, last_at, last)).lastrowid
            _index_pieces(conn, "p.id = ?", (pid,))


def _least(a, b, pick=min):
    """``pick`` of two times, either of which may be None (no message had one)."""
    return b if a is None else a if b is None else pick(a, b)


def _index_pieces(conn: sqlite3.Connection, where: str, params) -> None:
    conn.execute(f"INSERT INTO history_session_fts (rowid, idx_body) SELECT p.id, {PIECE_TEXT}"
                 f" FROM history_pieces AS p WHERE {where}", params)


def _delete_pieces(conn: sqlite3.Connection, where: str, params) -> None:
    conn.execute(f"INSERT INTO history_session_fts (history_session_fts, rowid, idx_body)"
                 f" SELECT 'delete', p.id, {PIECE_TEXT} FROM history_pieces AS p WHERE {where}", params)
    conn.execute(f"DELETE FROM history_pieces AS p WHERE {where}", params)


def drop_pieces(conn: sqlite3.Connection, fid: int) -> None:
    """Before the messages of file ``fid`` go: their pieces' text is rebuilt from them."""
    _delete_pieces(conn, "p.file = ?", (fid,))
