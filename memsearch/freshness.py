"""Freshness without a walk, Watchman-style: the querying side (:func:`sync`, light enough for
every one-shot query) and the watching side (:class:`WatcherRows`) of the ``watcher`` table.
A query makes a cookie file in each watched folder and waits, bounded, for the watcher to
acknowledge it; any doubt makes it walk the tree. The protocol: docs/freshness.md.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import stat
import time
from contextlib import suppress
from typing import Callable

from .db import write_transaction
from .errors import WatcherError, quoted

COOKIE_PREFIX = ".memsearch-cookie-"

# The watcher beats this often; a query trusts a heartbeat up to STALE_S old (room for a busy machine, a slow commit).
HEARTBEAT_S = 1.0
STALE_S = 5.0

# A cookie this old was left by a query that died (a live one removes its own when its wait
# ends; removing one still waited on is harmless: the watcher acknowledges the event's name).
COOKIE_STALE_S = 60.0

READY, STARTING, RESCANNING, FAILED, STOPPED = "ready", "starting", "rescanning", "failed", "stopped"

HOST = os.uname().nodename if hasattr(os, "uname") else __import__("platform").node()  # platform: not on the query path


class Freshness:
    """How a query's index was made fresh: ``via`` "watcher" (cookie handshake) or "walk", ``reason`` why it
    walked, ``seconds`` what it took. (A plain class: dataclasses would slow every query's start.)"""

    __slots__ = ("via", "reason", "seconds")

    def __init__(self, via: str, reason: str | None = None, seconds: float = 0.0):
        self.via, self.reason, self.seconds = via, reason, seconds

    def __repr__(self) -> str:
        return f"Freshness(via={self.via!r}, reason={self.reason!r}, seconds={self.seconds:.4f})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Freshness) and (self.via, self.reason) == (other.via, other.reason)

    def to_dict(self) -> dict:
        return {"via": self.via, "reason": self.reason, "seconds": round(self.seconds, 4)}


_cookies = itertools.count()


def sync(conn: sqlite3.Connection, roots, timeout: float) -> str | None:
    """Wait until a healthy watcher has applied every change made to the files of ``roots``
    before this call. None when it has; otherwise why not: walk the tree."""
    rows = _rows(conn)
    now = time.time()
    followed, reason = [rows.get(root.key) for root in roots], None
    for root, row in zip(roots, followed):
        if why := unusable(row, now):
            reason = reason or why
            # No watcher sweeps this folder now: do it here (this root's real folder, never a row's claim).
            if row is not None and root.path and row.folder == os.path.realpath(root.path):
                sweep_cookies(row.folder, now)
    if reason:
        return reason
    # One watcher, following exactly these roots: the paths it writes are named as this query names them.
    who = {(row.pid, row.host, row.started_at) for row in followed}
    if len(who) != 1 or {k for k, row in rows.items() if (row.pid, row.host, row.started_at) in who} != {
            root.key for root in roots}:
        return "the watcher follows another set of roots"
    created: list[str] = []
    try:
        for row in followed:
            path = os.path.join(row.folder, f"{COOKIE_PREFIX}{os.getpid()}-{next(_cookies)}-{os.urandom(3).hex()}")
            try:
                # Read-only: closing it raises no IN_CLOSE_WRITE, one event less for the watcher.
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDONLY, 0o600))
            except OSError as ex:
                return f"cannot create a cookie in {row.folder} ({ex.strerror})"
            created.append(path)
        if not _acknowledged(conn, [os.path.basename(p) for p in created], timeout):
            return f"the watcher did not acknowledge a cookie within {timeout:g}s"
        return None
    finally:
        for path in created:
            with suppress(OSError):
                os.unlink(path)


def disown(conn: sqlite3.Connection, keys) -> None:
    """Delete the rows of every watcher that follows another set of roots than ``keys`` (in the
    caller's transaction): a reconcile rewrites the index for these roots, so such a watcher can
    no longer vouch for it (it finds its rows gone and rescans: WatcherRows.beat)."""
    followed: dict[tuple, set[str]] = {}
    for key, *who in conn.execute("SELECT root_key, pid, host, started_at FROM watcher"):
        followed.setdefault(tuple(who), set()).add(key)
    others = [who for who, theirs in followed.items() if theirs != set(keys)]
    conn.executemany("DELETE FROM watcher WHERE pid = ? AND host = ? AND started_at = ?", others)


def sweep_cookies(folder: str, now: float) -> None:
    """Remove the cookie files in ``folder`` older than COOKIE_STALE_S (a link or folder so named stays)."""
    try:
        with os.scandir(folder) as entries:
            stale = [e.path for e in entries if e.name.startswith(COOKIE_PREFIX)
                     and stat.S_ISREG((st := e.stat(follow_symlinks=False)).st_mode)
                     and st.st_mtime < now - COOKIE_STALE_S]
    except OSError:
        return
    for path in stale:
        with suppress(OSError):  # removed meanwhile by its query or another sweep
            os.unlink(path)


class _Row:
    """A row of the watcher table."""

    __slots__ = COLUMNS = ("root_key", "folder", "pid", "host", "started_at", "heartbeat_at", "state", "error",
                           "error_at", "overflows", "restarts")

    def __init__(self, *values):
        for name, value in zip(self.COLUMNS, values):
            setattr(self, name, value)
        if isinstance(self.folder, bytes):  # written by _insert: any name, not UTF-8 ones only
            self.folder = os.fsdecode(self.folder)


def _rows(conn) -> dict[str, _Row]:
    return {row[0]: _Row(*row) for row in conn.execute(f"SELECT {', '.join(_Row.COLUMNS)} FROM watcher")}


def unusable(row: _Row | None, now: float) -> str | None:
    """Why a query cannot rely on the watcher of this row (None: it can)."""
    if row is None:
        return "no watcher is running"
    if row.state == STOPPED:
        return f"the watcher (pid {row.pid}) stopped"
    if row.host == HOST and not pid_alive(row.pid):
        return f"the watcher (pid {row.pid}) is not running"
    age = now - row.heartbeat_at
    if age > STALE_S:
        return f"the watcher's (pid {row.pid}) last heartbeat is {age:.0f}s old"
    if row.state != READY:
        return f"the watcher is {row.state}" + (f": {row.error}" if row.state == FAILED and row.error else "")
    return None


# A query polls for the acknowledgement as often as sleep allows while the answer usually comes, then every
# millisecond (a watcher with a long batch ahead is not spun on).
FAST_POLL_S = 0.0001
FAST_POLL_FOR_S = 0.005
SLOW_POLL_S = 0.001


def _acknowledged(conn, names: list[str], timeout: float) -> bool:
    sql = f"SELECT count(*) FROM watcher_cookies WHERE name IN ({','.join('?' * len(names))})"
    start = time.monotonic()
    while conn.execute(sql, names).fetchone()[0] != len(names):
        now = time.monotonic()
        left = start + timeout - now
        if left <= 0:
            return False
        time.sleep(min(FAST_POLL_S if now - start < FAST_POLL_FOR_S else SLOW_POLL_S, left))
    return True


def pid_alive(pid: int) -> bool:
    """Whether a process of this host runs under ``pid`` (a zombie does not count)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read()
        return fields[fields.rfind(b")") + 2:][:1] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:  # /proc will not say: the kernel does
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # it runs, as another user
        return True


DEAD, NOT_ANSWERING = "dead", "not answering"


def _standing(row: _Row, now: float) -> str:
    """The row's state, or DEAD (its process, of this host, is gone) or NOT_ANSWERING (no heartbeat for STALE_S: a
    first reconcile or a rescan beats none, but only a process of this host can be seen to run meanwhile)."""
    if row.state != STOPPED and row.host == HOST and not pid_alive(row.pid):
        return DEAD
    if row.state != STOPPED and now - row.heartbeat_at > STALE_S and (
            row.state not in (STARTING, RESCANNING) or row.host != HOST):
        return NOT_ANSWERING
    return row.state


def describe(conn: sqlite3.Connection, roots, timeout: float) -> dict:
    """The watcher part of ``memsearch status``: its state, and whether a query would now skip
    the walk (found out with a real cookie handshake) or why it would walk."""
    rows, now = _rows(conn), time.time()
    found = [rows.get(root.key) for root in roots] or [None]
    shown = next((row for row in found if unusable(row, now)), found[0])  # the first a query cannot rely on
    state = "none" if shown is None else _standing(shown, now)
    info = {"watcher": state,
            "watcher_pid": shown.pid if shown and state not in (DEAD, STOPPED) else None,  # a pid no process has
            "watcher_heartbeat_age": round(now - shown.heartbeat_at, 1) if shown else None,
            "watcher_error": shown.error if shown else None,
            "watcher_overflows": shown.overflows if shown else 0, "watcher_restarts": shown.restarts if shown else 0}
    started = time.perf_counter()
    reason = sync(conn, roots, timeout)
    info.update(freshness="walk" if reason else "watcher", fallback_reason=reason)
    if not reason:  # the handshake ran and succeeded
        info["cookie_ms"] = round((time.perf_counter() - started) * 1000, 2)
    return info


# Acknowledgements are kept this long, then deleted by the watcher.
ACK_KEEP_S = 60.0


class TakenOver(Exception):
    """Another watcher took over the rows of this one's roots."""


class WatcherRows:
    """The rows a watcher holds in the ``watcher`` table, one per root (``roots``: (root key,
    folder) pairs), and the acknowledgements it writes to ``watcher_cookies``, each method in a
    transaction of its own. ``connect()``: the index's connection now (a damaged index rebuilt
    comes with a new one, and the rows follow it)."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], roots: list[tuple[str, str]], db_path: str):
        self.connect, self.roots, self.db_path = connect, roots, db_path
        self.pid, self.started_at = os.getpid(), time.time()
        self._next_cleanup = 0.0
        self.lost = False  # our rows were found gone: the watcher must reconcile everything

    def claim(self) -> None:
        """Take the rows of our roots, unless a live watcher holds one."""
        now = time.time()
        with write_transaction(self.connect()) as conn:
            rows = _rows(conn)
            for key, folder in self.roots:
                if (row := rows.get(key)) is not None and _standing(row, now) not in (STOPPED, DEAD, NOT_ANSWERING):
                    raise WatcherError(
                        f"another watcher (pid {row.pid} on {row.host}) already follows {quoted(folder)} for the index"
                        f" {self.db_path}; stop it first, or use another --db")
            self._insert(conn, STARTING)

    def _insert(self, conn, state: str) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO watcher (root_key, folder, pid, host, started_at, heartbeat_at, state)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(key, os.fsencode(folder), self.pid, HOST, self.started_at, time.time(), state)
             for key, folder in self.roots])

    def beat(self, state: str, error: str | None, error_at: float | None, overflows: int, restarts: int,
             cookies=()) -> bool:
        """Write our state and heartbeat, acknowledging ``cookies``. True when the old
        acknowledgements were swept (the caller then sweeps the cookie files too). TakenOver when
        another watcher holds our rows: this one must stop."""
        now = time.time()
        with write_transaction(self.connect()) as conn:
            sweep = now >= self._next_cleanup
            if sweep:
                conn.execute("DELETE FROM watcher_cookies WHERE acked_at < ?", (now - ACK_KEEP_S,))
                self._next_cleanup = now + ACK_KEEP_S / 4
            cur = conn.executemany(
                "UPDATE watcher SET heartbeat_at = ?, state = ?, error = ?, error_at = ?, overflows = ?,"
                " restarts = ? WHERE root_key = ? AND pid = ? AND host = ? AND started_at = ?",
                [(now, state, error, error_at, overflows, restarts, key, self.pid, HOST, self.started_at)
                 for key, _ in self.roots])
            if cur.rowcount < len(self.roots) and state != STOPPED:
                if any(key in _rows(conn) for key, _ in self.roots):
                    raise TakenOver("another watcher took over this index's roots")
                # Rebuilt, or rewritten for other roots (disown): claim it again, vouch for it only once all reconciled.
                self._insert(conn, RESCANNING if state == READY else state)
                self.lost = True
            elif cookies:
                conn.executemany("INSERT OR REPLACE INTO watcher_cookies (name, acked_at) VALUES (?, ?)",
                                 [(name, now) for name in cookies])
        return sweep
