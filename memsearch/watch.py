"""The live index: a :class:`Watcher` follows the roots and keeps the index fresh, so that queries
skip the tree walk without ever reading a stale index. It reconciles the roots once, then re-reads
the paths each debounced batch of events names. Its parts: :mod:`memsearch.freshness` (the watcher
table), :mod:`memsearch.event_batch` (what events ask), :mod:`memsearch.event_source` (inotify).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from contextlib import suppress

from .db import identity
from .discover import nested_folders
from .errors import MemsearchError, WatcherError
from .event_batch import Batch, Followed, Links
from .event_source import EventSource, require
from .freshness import FAILED, HEARTBEAT_S, READY, RESCANNING, STARTING, STOPPED, TakenOver, WatcherRows, sweep_cookies
from .memory_file import below

log = logging.getLogger("memsearch.watch")

# A batch is written once events pause this long, or this long after its first event (a cookie
# writes it at once: these bound only how stale the index is to someone reading it directly).
DEBOUNCE_S = 0.1
MAX_DELAY_S = 1.0

# Pauses before each retry after a failure (restart the event sources, reconcile everything), the last repeating.
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)


class Watcher:
    """Keep an index fresh as its files change, so that queries from any process skip the walk.

    >>> with MemoryIndex("~/memory") as idx, Watcher(idx):
    ...     idx.search("docker port")      # a cookie handshake, no walk

    ``index``: the MemoryIndex to keep fresh (the watcher opens its own connection to it); ``debounce`` and
    ``max_delay``: when a batch of events is written (DEBOUNCE_S, MAX_DELAY_S); ``heartbeat``: seconds between
    heartbeats. After a successful start it never raises: a failure puts it in the "failed" state, in which
    queries walk the tree, and it retries.
    """

    def __init__(self, index, *, debounce: float = DEBOUNCE_S, max_delay: float = MAX_DELAY_S,
                 heartbeat: float = HEARTBEAT_S):
        self._given, self.db_path = index, index.db_path  # start() copies the index: a connection of its own
        self.debounce, self.max_delay, self.heartbeat = debounce, max_delay, heartbeat
        self._followed = [Followed(r, os.path.realpath(r.path), index.layout.label(r)) for r in index.roots]
        self._index = self._rows = self._thread = None
        self._sources: list[EventSource] = []  # one per root, while running
        self._cv = threading.Condition()
        self._pending = Batch()
        self._stopping = False
        self._ready, self._done = threading.Event(), threading.Event()
        self.state, self.error = STARTING, None
        self._error_at = None
        self._retry_at = self._next_beat = 0.0
        self._failures = 0
        self._links = Links(self._followed)
        self._root_ids: list = []  # identity() of each root folder, as the event sources watch it
        self.events = self.batches = self.rescans = self.overflows = self.restarts = 0  # for status and tests

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def start(self, *, wait: bool = True, timeout: float | None = None) -> "Watcher":
        """Start following the roots. ``wait``: return once the whole tree is reconciled, raising WatcherError when
        it cannot start (or is not ready within ``timeout``). RuntimeError if it was started before."""
        if self._thread is not None:
            raise RuntimeError("this watcher was already started")
        from .index import MemoryIndex

        require()
        db = os.path.realpath(self.db_path)
        for f in self._followed:
            if below(db, f.folder) is not None:
                raise WatcherError(
                    f"the index database {self.db_path} is inside the watched root {f.folder}: every write to it"
                    " would wake the watcher; put the index elsewhere (--db or MEMSEARCH_DB)")
        given = self._given
        self._index = MemoryIndex(roots=given.roots, db_path=given.db_path, settings=given.settings)
        self._index.explicit_db = given.explicit_db
        self._rows = WatcherRows(lambda: self._index.conn, [(f.root.key, f.folder) for f in self._followed],
                                 str(self.db_path))
        try:
            self._rows.claim()
        except BaseException:  # refused (another watcher) or failed: its connection must not outlive it
            self._index.close()
            raise
        self._thread = threading.Thread(target=self._run, name="memsearch-watch", daemon=True)
        self._thread.start()
        if wait:
            self._ready.wait(timeout)
            if self.state != READY:
                error = self.error or f"the watcher is still {self.state}"
                self.stop()
                raise WatcherError(error)
        return self

    def stop(self) -> None:
        """Stop watching; queries walk the tree again (at once: the row says "stopped")."""
        if self._thread is None:
            return
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        self._thread.join()
        self._stop_sources()
        try:
            self._rows.beat(STOPPED, self.error, self._error_at, self.overflows, self.restarts)
        except (sqlite3.Error, MemsearchError) as ex:
            log.warning("could not mark the watcher stopped in %s: %s", self.db_path, ex)
        self._index.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the watcher thread ends: on stop(), a takeover by another watcher, or a failure."""
        return self._done.wait(timeout)

    def __enter__(self) -> "Watcher":
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _beat(self, cookies=()) -> None:
        """Heartbeat, acknowledging ``cookies``. The next is due a heartbeat later even if this
        write fails: else the loop would find it overdue at once, and spin."""
        self._next_beat = time.monotonic() + self.heartbeat
        if self._rows.beat(self.state, self.error, self._error_at, self.overflows, self.restarts, cookies):
            for f in self._followed:  # the cookies of queries that died before removing them
                sweep_cookies(f.folder, time.time())
        if self._rows.lost:  # a new index at the path, or a reconcile of other roots (freshness.disown)
            self._rows.lost = False
            if self.state == READY:
                self.state = RESCANNING
            self._ask("rescan", "its rows were gone (index deleted or rewritten)")

    def _set_state(self, state: str, error: str | None = None) -> None:
        if error is not None:
            self.error, self._error_at = error, time.time()
        self.state = state
        self._beat()

    # -- the event sources' threads
    def _on_event(self, followed: Followed, kind: str, path: str, is_dir: bool) -> None:
        try:
            with self._cv:
                self.events += 1
                what = self._pending.note(followed, path, kind, is_dir, links=bool(self._links))
                if what == "event":
                    self._pending.touched(time.monotonic())
                if what:
                    self._cv.notify_all()  # a cookie is answered at once
        except Exception as ex:  # an exception here would kill the source's thread
            self._ask("restart", f"could not handle a file system event: {type(ex).__name__}: {ex}")

    def _ask(self, what: str, reason: str) -> None:
        """Ask the watcher thread for a "rescan" or a "restart" (of the event sources, then a rescan)."""
        with self._cv:
            setattr(self._pending, what, getattr(self._pending, what) or reason)
            self._cv.notify_all()

    def _overflowed(self) -> None:
        with self._cv:
            self.overflows += 1
        self._ask("rescan", "the event queue overflowed")

    # -- the watcher thread
    def _run(self) -> None:
        try:
            try:
                self._restart(None)
            except _Stopping:
                return
            except Exception as ex:
                self._fail(ex)
            finally:
                self._ready.set()
            while (batch := self._take()) is not None:
                try:
                    self._process(batch)
                except TakenOver as ex:
                    log.warning("watcher: %s; stopping", ex)
                    self.state = STOPPED
                    return
                except _Stopping:
                    return
                except Exception as ex:
                    self._fail(ex)
        except BaseException as ex:  # never leak out of a thread: record it
            log.error("memsearch watcher stopped: %s: %s", type(ex).__name__, ex)
            self.state, self.error = FAILED, f"watcher thread ended: {type(ex).__name__}: {ex}"
        finally:
            self._done.set()

    def _take(self) -> Batch | None:
        """Wait for work (a batch due, a cookie, a rescan, a heartbeat or a retry due) and take it."""
        with self._cv:
            while not self._stopping:
                p = self._pending
                due = [self._next_beat, p.due(self.debounce, self.max_delay)]
                if self.state == FAILED:
                    due.append(self._retry_at)
                wait = min(d for d in due if d is not None) - time.monotonic()
                if p.urgent() or wait <= 0:
                    batch, self._pending = p, Batch()
                    return batch
                self._cv.wait(wait)
            return None

    def _process(self, batch: Batch) -> None:
        if batch.restart or (self.state == FAILED and time.monotonic() >= self._retry_at):
            # A restart reconciles everything, which covers this batch's paths.
            self._restart(batch.restart or f"retrying after: {self.error}")
        elif self.state == FAILED:
            pass  # the retry's full reconcile will cover these paths
        elif batch.rescan:  # events were lost: reconcile the whole tree
            log.warning("watcher: %s; reconciling the whole tree", batch.rescan)
            self._set_state(RESCANNING, batch.rescan)
            self._reconcile_all()
        elif batch.paths or batch.links or (batch.cookies and self._links.hard):
            report = self._index.reconcile_paths(batch.paths | self._links.paths | self._links.hard, deep=batch.deep)
            self.batches += 1
            # And the names it passed over: a file linked to a name that sorts first is left out under its own
            # name, whose link count changed with no event; rechecked as a hard link, it answers once that name goes.
            self._links.track(batch.paths | {s.path for s in report.skipped}, self._index)
            if batch.deep or batch.rewatch:
                self._watch_nested()
            if report.changed:
                log.debug("watcher: %s", report.summary())
        if self.state != FAILED and not all(s.alive() for s in self._sources):
            self._ask("restart", "the file system event source stopped")
        elif self.state != FAILED and (moved := [f.folder for f, was in zip(self._followed, self._root_ids)
                                                 if identity(f.folder) != was]):
            # A root folder replaced reports no event: a cookie made in the folder now there is never answered.
            self._ask("restart", f"memory root moved or replaced: {moved[0]}")
        if self._index.replaced():  # deleted, or rebuilt by another process: the rows follow (beat)
            self._index.close()
        self._beat(batch.cookies if self.state == READY else ())

    def _restart(self, reason: str | None) -> None:
        """(Re)start the event sources, then reconcile the whole tree."""
        if reason:
            self.restarts += 1
            log.warning("watcher: restarting the event source: %s", reason)
            self._set_state(RESCANNING, reason)
        else:
            self._beat()
        self._stop_sources()
        self._root_ids = [identity(f.folder) for f in self._followed]
        for f in self._followed:  # each started one is stopped by the next restart or stop(), whatever happens
            source = EventSource(f.folder, lambda *e, f=f: self._on_event(f, *e), self._overflowed,
                                 lambda reason: self._ask("restart", reason), repos=f.repos)
            source.start()
            self._sources.append(source)
        self._reconcile_all()
        self._watch_nested()

    def _reconcile_all(self) -> None:
        for f in self._followed:
            sweep_cookies(f.folder, time.time())
        self._index.reconcile(progress=self._stop_requested)
        self._links.scan(self._index)
        self.rescans += 1
        self._failures = 0
        self._set_state(READY)

    def _watch_nested(self) -> None:
        """Watch the folders where a deep walk found nested instruction files in a repos root (no
        source folder is watched otherwise). A change made before the watch came is read by a walk right after."""
        added = False
        for f, source in zip(self._followed, self._sources):  # in the same order
            if f.repos:
                for folder in nested_folders(f.folder, [p[len(f.label):] for p in self._index.paths(f.root)]):
                    before = source.watches
                    source.watch_folder(folder)
                    added = added or source.watches > before
        if added:
            self._index.reconcile_paths([f.label for f in self._followed if f.repos])

    def _stop_requested(self, done: int, total: int) -> None:
        """Progress of a long reconcile: stop() must not wait for its end."""
        if self._stopping:
            raise _Stopping()

    def _fail(self, ex: BaseException) -> None:
        text = str(ex) if isinstance(ex, MemsearchError) else f"{type(ex).__name__}: {ex}"
        if self.state == FAILED and time.monotonic() < self._retry_at:
            # Failing again while it waits to retry (a heartbeat's write on a full disk): the retry stays put.
            log.debug("watcher still failing (%s)", text)
            return
        pause = RETRY_S[min(self._failures, len(RETRY_S) - 1)]
        self._failures += 1
        self._retry_at = time.monotonic() + pause
        log.warning("watcher failed (%s); queries walk the tree; retrying in %gs", text, pause,
                    exc_info=log.isEnabledFor(logging.DEBUG))
        with suppress(Exception):  # the database itself may be what failed; the row's heartbeat then ages
            self._set_state(FAILED, text)

    def _stop_sources(self) -> None:
        sources, self._sources = self._sources, []
        for source in sources:
            source.stop()


class _Stopping(Exception):
    """stop() was called during a long reconcile."""
