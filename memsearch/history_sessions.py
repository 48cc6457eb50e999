"""One session of the history index: its id resolved from a prefix, its owner, its messages in order.

A session is owned by its own transcript's project folder (``<session>.jsonl``; its ``<session>/`` folder holds
sub-agents' lines): lines elsewhere claiming its id are never shown as its own.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Iterator, NamedTuple

from .cjk import original
from .errors import AmbiguousSession, InvalidArgument, SessionNotFound, quoted
from .memory_file import encodable
from .settings import given_type
from .transcripts import slug


class Message(NamedTuple):
    """One cleaned message of a session, in order."""

    role: str
    at: str | None
    text: str
    sidechain: bool = False
    id: int | None = None  # its row, by which the text is checked against the transcript before it is shown


class SessionFiles(NamedTuple):
    """A session's full id, its own project, sidechains or not, and its (file, messages) in order."""

    full: str
    project: str
    sidechains: bool
    files: list


def _quoted(value: str) -> str:  # ids, the caller's and the transcripts', may be long or hold controls
    return quoted(value, 80, always=True)


def check_session(session: str) -> None:
    if not encodable(session):  # no transcript's id holds a lone surrogate, and SQLite cannot bind one
        raise InvalidArgument(f"session id {_quoted(session)} is not valid text (it holds a lone surrogate)")


def given_project(project: str | None) -> str | None:
    """A caller's project filter (None: any) as the index compares it: a working directory's trailing '/' (a shell's
    completion adds it) dropped, as its project folder's name has none, but the root's own '/'."""
    given_type(project, str | None, "project must be a string")
    if project is not None and not project.strip():  # (it matched every project folder ending in "-")
        raise InvalidArgument("project is empty: leave it out to search without it", argument="project")
    return (project.rstrip("/") or "/") if project is not None and project.endswith("/") else project


# A session id as Claude Code makes it (a UUID), in any case.
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def resolve_session(conn: sqlite3.Connection, roots: tuple[str, ...], session: str) -> str:
    """The full id of a session given whole or by its first characters; AmbiguousSession when they start
    more than one (the whole id of one included: a transcript must not take over another's short form), but
    for a whole UUID, the form Claude Code gives sessions: no other UUID starts with it, so a file named
    ``<uuid>x`` cannot make it ambiguous, nor be read for it (while the UUID's own transcript is not indexed)."""
    given_type(session, str, "session id must be a string")
    if not session.strip():
        raise InvalidArgument("session id is empty: pass a session id from a history hit")
    check_session(session := session.strip())
    found = _sessions_from(conn, roots, session, 4)
    if not found or found[0] != session and _UUID.fullmatch(session):
        raise SessionNotFound(f"no session {_quoted(session)} in the transcripts: use a session id from a history hit")
    if len(found) > 1 and not (found[0] == session and _UUID.fullmatch(session)):
        raise AmbiguousSession(f"{_quoted(session)} starts several session ids ({', '.join(map(_quoted, found[:3]))}"
                               f"{', ...' if len(found) > 3 else ''}): give more of it")
    return found[0]


def _sessions_from(conn: sqlite3.Connection, roots: tuple[str, ...], start: str, most: int) -> list[str]:
    """The first ``most`` session ids of ``roots`` that begin with ``start``: an index seek each."""
    found, after = [], ""
    while len(found) < most:
        row = conn.execute("SELECT session FROM history_messages WHERE session >= ? AND session > ? AND session < ?"
                           " ORDER BY session LIMIT 1", (start, after, start + "\U0010ffff")).fetchone()
        if row is None or not row[0].startswith(start):
            return found
        after = row[0]
        if conn.execute(  # a database shared with other roots: theirs are not ours to name
                "SELECT 1 FROM history_messages AS m JOIN history_files AS f ON f.id = m.file WHERE m.session = ?"
                f" AND f.root IN ({','.join('?' * len(roots))}) LIMIT 1", [after, *roots]).fetchone():
            found.append(after)
    return found


def _owner(conn: sqlite3.Connection, roots: tuple[str, ...], session: str, project: str | None) -> str:
    """The project whose folder holds ``session``'s own transcript, the only one its messages are read from:
    lines in another project's folder claiming the id are never shown as this session's. ``project`` (a hit's
    project folder, or the working directory it is named after) names the folder whose lines are read."""
    marks = ",".join("?" * len(roots))
    projects = [p for (p,) in conn.execute(
        f"SELECT DISTINCT f.project FROM history_messages AS m JOIN history_files AS f ON f.id = m.file"
        f" WHERE m.session = ? AND f.root IN ({marks})", [session, *roots])]
    if project is not None:  # as a search shows it: a session's lines in one project folder
        # The folder so named first: another whose name is its slug (my-proj for my.proj) must not stand in for it.
        picked = [p for p in projects if p == project] or [p for p in projects if p == slug(project)]
        if not picked:
            raise SessionNotFound(f"session {_quoted(session)} is not in project {_quoted(project)}"
                                  f" (it is in {', '.join(map(_quoted, projects[:3]))})")
        return picked[0]
    # Its own transcript is <session>.jsonl: a <session>/ folder holds sub-agents' lines, never read as its own.
    owners = [p for p in projects if conn.execute(
        f"SELECT 1 FROM history_files WHERE project = ? AND root IN ({marks}) AND path IN (?, ?) LIMIT 1",
        [p, *roots, f"{session}.jsonl", f"{p}/{session}.jsonl"]).fetchone()] or projects
    if len(owners) > 1:
        raise AmbiguousSession(f"session {_quoted(session)} is in several project folders"
                               f" ({', '.join(map(_quoted, owners[:3]))}): give its project too (as a hit shows it)")
    return owners[0]


def session_files(conn: sqlite3.Connection, roots: tuple[str, ...], session: str, sidechains: bool,
                  project: str | None = None) -> SessionFiles:
    """The session ``session`` names (whole or its start) and the files of its messages."""
    full = resolve_session(conn, roots, session)
    project = _owner(conn, roots, full, project)
    # A file's lines in their order, files by their first time: history_messages_session answers it alone. Only
    # files of ``roots``: a database shared with other roots may hold the same id in a folder of the same name.
    files = conn.execute("SELECT file, count(*) FROM history_messages WHERE session = ? AND project = ?"
                         " AND sidechain <= ? AND +file IN (SELECT id FROM history_files WHERE root IN"
                         f" ({','.join('?' * len(roots))})) GROUP BY file ORDER BY min(at), file",
                         (full, project, int(sidechains), *roots))
    return SessionFiles(full, project, sidechains, files.fetchall())


def read_messages(conn: sqlite3.Connection, where: SessionFiles, newest_first: bool = False) -> Iterator[Message]:
    """The session's messages, streamed in order (or newest first)."""
    order = " DESC" if newest_first else ""
    for fid, _ in reversed(where.files) if newest_first else where.files:
        for role, at, body, body_seg, side, mid in conn.execute(
                # By the file's index in its order (+: not by the session's, which sorts them all first).
                "SELECT role, at, body, body_seg, sidechain, id FROM history_messages WHERE file = ? AND +session = ?"
                f" AND +project = ? AND +sidechain <= ? ORDER BY line_at{order}, part{order}",
                (fid, where.full, where.project, int(where.sidechains))):
            yield Message(role, at, original(body, body_seg), bool(side), mid)
