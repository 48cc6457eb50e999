"""The live index: follow the roots with watchdog and keep the index fresh,
so that queries skip the tree walk without ever reading a stale index.

A :class:`Watcher` (``memsearch watch``, or started in-process by a host such
as ``memsearch mcp``) reconciles the roots once, then applies file system
events as they come: each batch re-reads just the paths named by its events
(:func:`memsearch.reconcile.reconcile_paths`), debounced so that a burst of
writes costs one transaction.

The querying side of the protocol (cookies, heartbeats, when a query may
skip the walk) is in :mod:`memsearch.freshness`, which a query imports
without pulling in threads, logging or watchdog.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
import time
import weakref

from . import discover
from .db import write_transaction
from .errors import MemsearchError, WatcherError
from .freshness import (  # noqa: F401 - re-exported: watch.sync() etc. predate the split
    COOKIE_PREFIX, FAILED, HEARTBEAT_S, HOST, READY, RESCANNING, STALE_S, STARTING, STOPPED, Freshness, describe,
    pid_alive, sweep_cookies, sync, unusable,
)
from .freshness import _rows  # noqa: E402 - shared with the watcher's own bookkeeping
from .walk import is_markdown, printable_name

log = logging.getLogger("memsearch.watch")

# A batch is written once events have paused this long, or this long after
# its first event if they never pause. A cookie writes it at once, so these
# only bound how stale the index may be for someone reading it directly.
DEBOUNCE_S = 0.1
MAX_DELAY_S = 1.0

# watchdog holds a rename's first half this long hoping to pair it with the
# second (0.5 s by default); everything queued behind it waits too, cookies
# included. The watcher re-reads both paths of a move anyway, so pairing only
# matters to watchdog's own bookkeeping, and both halves of a rename arrive
# in the same read from the kernel.
MOVE_PAIRING_S = 0.05

# Acknowledgements are kept this long, then deleted by the watcher.
ACK_KEEP_S = 60.0

# After a failure, the watcher retries (restart the event source, reconcile
# everything) after these pauses, the last one repeating.
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)

MAX_WATCHES = "/proc/sys/fs/inotify/max_user_watches"




class _Followed:
    """A root as the watcher follows it."""

    __slots__ = ("root", "folder", "label")

    def __init__(self, root, folder: str, label: str):
        self.root = root  # memsearch.roots.Root
        self.folder = folder  # resolved, as given to watchdog
        self.label = label  # prefix of the index paths of this root


class _Batch:
    """What the events since the last batch ask for."""

    __slots__ = ("paths", "cookies", "new_dirs", "rescan", "restart", "links")

    def __init__(self):
        self.paths: set[str] = set()
        self.cookies: set[str] = set()
        self.new_dirs: set[str] = set()  # absolute paths, to check they got a watch
        self.rescan: str | None = None
        self.restart: str | None = None
        self.links = False  # only the symlinks need a look


_active: "weakref.WeakSet[Watcher]" = weakref.WeakSet()
_active_lock = threading.Lock()


class Watcher:
    """Keep an index fresh as its files change, so that queries from any
    process skip the tree walk.

    >>> with MemoryIndex("~/memory") as idx, Watcher(idx):
    ...     idx.search("docker port")      # a cookie handshake, no walk

    :meth:`start` follows the index's roots with watchdog, reconciles them
    once and returns when the watcher is ready (``wait=False``: at once;
    queries walk until it is ready). :meth:`stop`, or leaving the
    ``with`` block, stops it. The watcher works on a database connection and
    threads of its own. After a successful start it never raises: a failure
    puts it in the "failed" state, in which queries walk the tree, and it
    retries.
    """

    def __init__(self, index, *, debounce: float = DEBOUNCE_S, max_delay: float = MAX_DELAY_S,
                 heartbeat: float = HEARTBEAT_S):
        self._source = index
        self.db_path = index.db_path
        self.debounce, self.max_delay, self.heartbeat = debounce, max_delay, heartbeat
        self._followed = [_Followed(r, os.path.realpath(r.path), index.layout.label(r)) for r in index.roots]
        self._index = None  # the watcher's own MemoryIndex (own connection), made by start()
        self._observer = None
        self._thread: threading.Thread | None = None
        self._cv = threading.Condition()
        self._pending = _Batch()
        self._first_event = self._last_event = 0.0
        self._stopping = False
        self._started_at = time.time()
        self._ready = threading.Event()
        self._done = threading.Event()
        self._state = STARTING
        self._error: str | None = None
        self._error_at: float | None = None
        self._retry_at = 0.0
        self._failures = 0
        self._links: set[str] = set()
        self._next_beat = 0.0
        self._next_cleanup = 0.0
        self._drop_events = False  # tests: lose events as an overflowing queue would ...
        self._dropped: list[str] = []  # ... and say which
        # Counters, for status and tests.
        self.events = 0
        self.batches = 0
        self.rescans = 0
        self.overflows = 0
        self.restarts = 0

    # -- lifecycle ------------------------------------------------------------------
    @property
    def state(self) -> str:
        return self._state

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def start(self, *, wait: bool = True, timeout: float | None = None) -> "Watcher":
        """Start following the roots. ``wait``: return once the whole tree
        is reconciled and queries can rely on the watcher, raising
        WatcherError when it cannot start."""
        if self._thread is not None:
            raise RuntimeError("this watcher was already started")
        from .index import MemoryIndex

        for f in self._followed:
            db = os.path.realpath(self.db_path)
            if db == f.folder or db.startswith(f.folder.rstrip(os.sep) + os.sep):
                raise WatcherError(
                    f"the index database {self.db_path} is inside the watched root {f.folder}: every write to it"
                    " would wake the watcher; put the index elsewhere (--db or MEMSEARCH_DB)")
        src = self._source
        self._index = MemoryIndex(roots=src.roots, db_path=src.db_path, settings=src.settings)
        self._index.explicit_db = src.explicit_db
        try:
            self._claim()
        except BaseException:  # refused (another watcher) or failed: its connection must not outlive it
            self._index.close()
            raise
        with _active_lock:
            _active.add(self)
        _install_overflow_signal()
        self._thread = threading.Thread(target=self._run, name="memsearch-watch", daemon=True)
        self._thread.start()
        if wait:
            self._ready.wait(timeout)
            if self._state != READY:
                error = self._error or f"the watcher is still {self._state}"
                self.stop()
                raise WatcherError(error)
        return self

    def stop(self) -> None:
        """Stop watching; queries walk the tree again (at once: the row says
        "stopped")."""
        if self._thread is None:
            return
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        self._thread.join()
        self._stop_observer()
        try:
            with write_transaction(self._index.conn):
                self._update_rows(STOPPED)
        except (sqlite3.Error, MemsearchError) as ex:
            log.warning("could not mark the watcher stopped in %s: %s", self.db_path, ex)
        self._index.close()
        with _active_lock:
            _active.discard(self)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the watcher thread ends (it only ends on stop())."""
        return self._done.wait(timeout)

    def __enter__(self) -> "Watcher":
        if self._thread is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- rows of the watcher table --------------------------------------------------
    def _claim(self) -> None:
        """Take the rows of our roots, unless a live watcher holds one."""
        conn = self._index.conn
        now = time.time()
        with write_transaction(conn):
            rows = _rows(conn)
            for f in self._followed:
                row = rows.get(f.root.key)
                if row is None or row.state == STOPPED:
                    continue
                fresh = now - row.heartbeat_at <= STALE_S
                if row.host == HOST and pid_alive(row.pid) and (fresh or row.state in (STARTING, RESCANNING)) or (
                        row.host != HOST and fresh):  # (no heartbeat during a long first reconcile)
                    raise WatcherError(
                        f"another watcher (pid {row.pid} on {row.host}) already follows {f.folder} for the index"
                        f" {self.db_path}; stop it first, or use another --db")
            self._claim_rows(STARTING)

    def _claim_rows(self, state: str) -> None:
        self._index.conn.executemany(
            "INSERT OR REPLACE INTO watcher (root_key, folder, pid, host, started_at, heartbeat_at, state)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(f.root.key, f.folder, os.getpid(), HOST, self._started_at, time.time(), state) for f in self._followed])

    def _update_rows(self, state: str | None = None) -> None:
        """Write our state and heartbeat (inside a write transaction); a row
        taken over by another watcher means this one must stop."""
        cur = self._index.conn.executemany(
            "UPDATE watcher SET heartbeat_at = ?, state = ?, error = ?, error_at = ?, overflows = ?, restarts = ?"
            " WHERE root_key = ? AND pid = ? AND host = ? AND started_at = ?",
            [(time.time(), state or self._state, self._error, self._error_at, self.overflows, self.restarts,
              f.root.key, os.getpid(), HOST, self._started_at) for f in self._followed])
        if cur.rowcount < len(self._followed) and state != STOPPED:
            rows = _rows(self._index.conn)
            if any(f.root.key in rows for f in self._followed):
                raise _TakenOver("another watcher took over this index's roots")
            self._claim_rows(self._state)  # the database was rebuilt (set aside when damaged): claim it again

    def _beat(self, cookies=()) -> None:
        """Heartbeat, acknowledging ``cookies`` in the same transaction."""
        now = time.time()
        with write_transaction(self._index.conn) as conn:
            if cookies:
                conn.executemany("INSERT OR REPLACE INTO watcher_cookies (name, acked_at) VALUES (?, ?)",
                                 [(name, now) for name in cookies])
            sweep = now >= self._next_cleanup
            if sweep:
                conn.execute("DELETE FROM watcher_cookies WHERE acked_at < ?", (now - ACK_KEEP_S,))
                self._next_cleanup = now + ACK_KEEP_S / 4
            self._update_rows()
        self._next_beat = time.monotonic() + self.heartbeat
        if sweep:
            self._sweep_cookies()

    def _set_state(self, state: str, error: str | None = None) -> None:
        if error is not None:
            self._error, self._error_at = error, time.time()
        self._state = state
        self._beat()

    # -- events (watchdog's dispatch thread) ----------------------------------------
    def _on_event(self, followed: _Followed, event) -> None:
        try:
            kind = event.event_type
            if kind in ("opened", "closed_no_write") or (event.is_directory and kind == "modified"):
                return
            with self._cv:
                if self._drop_events:
                    self._dropped.append(os.fsdecode(event.src_path))
                    return
                self.events += 1
                src = os.fsdecode(event.src_path)
                if kind == "moved":
                    self._note(followed, src, "deleted", event.is_directory)
                    dest = os.fsdecode(event.dest_path or "")
                    if dest:
                        self._note(followed, dest, "created", event.is_directory)
                else:
                    self._note(followed, src, kind, event.is_directory)
        except Exception as ex:  # an exception here would kill watchdog's dispatch thread
            self._trouble(f"could not handle a file system event: {type(ex).__name__}: {ex}")

    def _note(self, f: _Followed, path: str, kind: str, is_dir: bool) -> None:
        """Add what an event says to the pending batch (under self._cv)."""
        pending = self._pending
        if path == f.folder:
            if kind == "deleted":
                self._trouble(f"memory root vanished: {f.folder}")
            else:
                pending.paths.add(f.label)  # the root's own attributes: reconcile it whole
                self._touch()
            return
        head = f.folder.rstrip(os.sep) + os.sep
        if not path.startswith(head):
            return
        rel = path[len(head):]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if rel.startswith(COOKIE_PREFIX) and "/" not in rel:
            if kind == "created":
                pending.cookies.add(rel)
                self._cv.notify_all()  # a cookie is answered at once
            return
        if f.root.kind == "repos":
            # A folder of checkouts is discovered, not walked: a change to a
            # place discovery reads (or a checkout coming or going) has its
            # root reconciled whole, deep; source edits are passed over.
            if discover.is_relevant(rel, is_dir):
                pending.paths.add(f.label)
                self._touch()
            return
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts) or (
                not is_dir and kind in ("modified", "closed", "attrib") and not is_markdown(parts[-1])):
            # Hidden (editor temp files, .git) or the content of a file that
            # is not indexed: no row can change, unless a symlink shows it.
            if self._links:
                pending.links = True
                self._touch()
            return
        while rel and printable_name(rel) != rel:  # not UTF-8: let the walk of its folder name it
            rel = rel.rpartition("/")[0]
        pending.paths.add(f.label + rel)
        if is_dir and kind == "created":
            pending.new_dirs.add(path)
        self._touch()

    def _touch(self) -> None:
        now = time.monotonic()
        if not self._first_event:
            self._first_event = now
        self._last_event = now
        self._cv.notify_all()

    def _trouble(self, reason: str) -> None:
        """The event source is broken: restart it (and reconcile everything)."""
        with self._cv:
            self._pending.restart = self._pending.restart or reason
            self._cv.notify_all()

    def _overflowed(self) -> None:
        with self._cv:
            self.overflows += 1
            self._pending.rescan = self._pending.rescan or "the event queue overflowed"
            self._cv.notify_all()

    # -- the watcher thread ---------------------------------------------------------
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
            while True:
                batch = self._take()
                if batch is None:
                    return
                try:
                    self._process(batch)
                except _TakenOver as ex:
                    log.warning("watcher: %s; stopping", ex)
                    self._state = STOPPED
                    return
                except _Stopping:
                    return
                except Exception as ex:
                    self._fail(ex)
        except BaseException as ex:  # never leak out of a thread: record it
            log.error("memsearch watcher stopped: %s: %s", type(ex).__name__, ex)
            self._state, self._error = FAILED, f"watcher thread ended: {type(ex).__name__}: {ex}"
        finally:
            self._done.set()

    def _take(self) -> _Batch | None:
        """Wait for work (a batch due, a cookie, a rescan, a heartbeat or a
        retry due) and take it."""
        with self._cv:
            while True:
                if self._stopping:
                    return None
                now = time.monotonic()
                p = self._pending
                if p.cookies or p.rescan or p.restart:
                    break
                due = self._next_beat
                if self._state == FAILED:
                    due = min(due, self._retry_at)
                if p.paths or p.new_dirs or p.links:
                    due = min(due, self._last_event + self.debounce, self._first_event + self.max_delay)
                if now >= due:
                    break
                self._cv.wait(due - now)
            batch, self._pending = self._pending, _Batch()
            self._first_event = self._last_event = 0.0
            return batch

    def _process(self, batch: _Batch) -> None:
        if batch.restart or (self._state == FAILED and time.monotonic() >= self._retry_at):
            # A restart reconciles everything, which covers this batch's paths.
            self._restart(batch.restart or f"retrying after: {self._error}")
        elif self._state == FAILED:
            pass  # the retry's full reconcile will cover these paths
        elif batch.rescan:
            self._rescan(batch.rescan)
        elif batch.paths or batch.links:
            self._apply(batch.paths, batch.new_dirs)
        self._check_source()
        self._beat(batch.cookies if self._state == READY else ())

    def _apply(self, paths: set[str], new_dirs: set[str]) -> None:
        from .reconcile import reconcile_paths

        idx = self._index
        report = idx._guarded(lambda: reconcile_paths(
            idx.conn, idx.layout, paths | self._links, max_file_bytes=idx.settings.max_file_bytes, known=idx._known))
        self.batches += 1
        self._track_links(paths)
        if new_dirs:
            self._verify_new(new_dirs)
        if report.changed:
            log.debug("watcher: %s", report.summary())

    def _rescan(self, reason: str) -> None:
        """Reconcile the whole tree: after an overflow, a restart, a failure."""
        log.warning("watcher: %s; reconciling the whole tree", reason)
        self._set_state(RESCANNING if self._state != STARTING else STARTING, reason)
        self._reconcile_all()

    def _restart(self, reason: str | None) -> None:
        """(Re)start the event source, check every directory is watched,
        then reconcile the whole tree."""
        if reason:
            self.restarts += 1
            log.warning("watcher: restarting the event source: %s", reason)
            self._set_state(RESCANNING, reason)
        else:
            self._beat()
        self._stop_observer()
        dirs = self._scan_dirs()
        _check_watch_limit(len(dirs))
        self._start_observer()
        self._verify(dirs)
        self._reconcile_all()

    def _reconcile_all(self) -> None:
        self._links = self._scan_links()
        self._sweep_cookies()
        self._index.reconcile(progress=self._stop_requested)
        self.rescans += 1
        self._failures = 0
        self._set_state(READY)

    def _stop_requested(self, done: int, total: int) -> None:
        """Progress of a long reconcile: stop() must not wait for its end."""
        if self._stopping:
            raise _Stopping()

    def _sweep_cookies(self) -> None:
        """Remove the cookies of queries that died before removing them."""
        now = time.time()
        for f in self._followed:
            sweep_cookies(f.folder, now)

    def _fail(self, ex: BaseException) -> None:
        text = str(ex) if isinstance(ex, MemsearchError) else f"{type(ex).__name__}: {ex}"
        pause = RETRY_S[min(self._failures, len(RETRY_S) - 1)]
        self._failures += 1
        self._retry_at = time.monotonic() + pause
        log.warning("watcher failed (%s); queries walk the tree; retrying in %gs", text, pause,
                    exc_info=log.isEnabledFor(logging.DEBUG))
        self._state, self._error, self._error_at = FAILED, text, time.time()
        try:
            self._beat()
        except Exception:  # the database itself may be what failed; the row's heartbeat then ages
            pass

    # -- the event source -----------------------------------------------------------
    def _start_observer(self) -> None:
        try:
            from watchdog import events as ev
            from watchdog.observers import Observer
        except ImportError as ex:
            raise WatcherError(f"the watcher needs watchdog ({ex}): pip install watchdog") from None
        _tune_watchdog()
        kinds = [ev.FileCreatedEvent, ev.FileDeletedEvent, ev.FileModifiedEvent, ev.FileMovedEvent,
                 ev.FileClosedEvent, ev.DirCreatedEvent, ev.DirDeletedEvent, ev.DirMovedEvent]
        kinds += [getattr(ev, name) for name in ("FileAttribEvent", "DirAttribEvent") if hasattr(ev, name)]
        try:
            observer = Observer()
        except OSError as ex:
            raise WatcherError(f"cannot start watching: {ex.strerror or ex} (fs.inotify.max_user_instances?)") from None
        try:
            for f in self._followed:
                handler = _Handler(self, f)
                try:
                    observer.schedule(handler, f.folder, recursive=True, event_filter=kinds)
                except TypeError:  # watchdog before 4.0: no event_filter
                    observer.schedule(handler, f.folder, recursive=True)
            observer.start()
        except OSError as ex:
            _stop(observer)
            raise WatcherError(f"cannot watch {', '.join(f.folder for f in self._followed)}: {_os_reason(ex)}") \
                from None
        self._observer = observer

    def _stop_observer(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            _stop(observer)

    def _check_source(self) -> None:
        """A dead thread of watchdog's means events no longer arrive."""
        observer = self._observer
        if observer is None or self._state == FAILED:
            return
        threads = [observer, *observer.emitters]
        reader = getattr(observer, "_inotify_fd", None)
        if isinstance(reader, threading.Thread):
            threads.append(reader)
        if not all(t.is_alive() for t in threads):
            self._trouble("the file system event source stopped")

    def _scan_dirs(self) -> list[tuple[str, int]]:
        """Every directory watchdog will watch (hidden ones too), with its inode."""
        dirs = []
        for f in self._followed:
            try:
                st = os.stat(f.folder)
            except OSError:
                raise WatcherError(f"memory root vanished: {f.folder}") from None
            dirs.append((f.folder, st.st_ino))
            stack = [f.folder]
            while stack:
                try:
                    with os.scandir(stack.pop()) as entries:
                        for entry in entries:
                            if entry.is_dir(follow_symlinks=False):
                                dirs.append((entry.path, entry.inode()))
                                stack.append(entry.path)
                except OSError:
                    continue  # vanished or unreadable: not watched, and not walked either
        return dirs

    def _scan_links(self) -> set[str]:
        """Index paths of the symlinks under the roots. inotify reports a
        change under a link's target, never under the link, so these are
        rechecked with every batch."""
        links: set[str] = set()
        for f in self._followed:
            links |= _links_under(f.folder, f.label)
        return links

    def _track_links(self, paths: set[str]) -> None:
        layout = self._index.layout
        if any(f.label in paths for f in self._followed):  # a root reconciled whole
            self._links = self._scan_links()
            return
        for path in paths:
            try:
                file = layout.locate(path)
            except KeyError:
                continue
            if os.path.islink(file):
                self._links.add(path)
            else:
                self._links.discard(path)
                self._links -= {p for p in self._links if p.startswith(path + "/")}
                if os.path.isdir(file):
                    self._links |= _links_under(file, path + "/")

    def _verify(self, dirs: list[tuple[str, int]]) -> None:
        """Every directory listed has an inotify watch: watchdog skips those
        it cannot watch without a word (e.g. at the watch limit)."""
        missing = _unwatched(self._observer, dirs)
        if missing:
            raise WatcherError(_limit_message(len(missing), len(dirs)))

    def _verify_new(self, new_dirs: set[str]) -> None:
        dirs = _dirs(new_dirs)
        missing = _unwatched(self._observer, dirs)
        if missing:
            missing = self._watch_more(missing)
        if missing:
            self._trouble(_limit_message(len(missing), len(dirs), new=True))

    def _watch_more(self, folders: list[str]) -> list[str]:
        """Watch new folders watchdog left without a watch, each with a
        recursive watch of its own, and read them again (files may have come
        before the watch): watchdog before 7 (the newest on Python 3.10)
        never watches the subfolders of a folder moved into a root. The
        folders still without a watch (at the watch limit)."""
        for path in folders:
            f = next((f for f in self._followed if path.startswith(f.folder.rstrip(os.sep) + os.sep)), None)
            if f is None:
                continue
            try:
                self._observer.schedule(_Handler(self, f), path, recursive=True)
            except OSError:
                continue
            with self._cv:
                self._note(f, path, "created", True)
        return _unwatched(self._observer, _dirs(folders))


def _dirs(paths) -> list[tuple[str, int]]:
    """(path, inode) of those of ``paths`` that are directories now."""
    dirs = []
    for path in paths:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            dirs.append((path, st.st_ino))
    return dirs


def _links_under(folder: str, prefix: str) -> set[str]:
    """Index paths (``prefix`` + relative path) of the symlinks below folder,
    hidden folders left out as the walk leaves them out."""
    links, stack = set(), [(folder, prefix)]
    while stack:
        here, rel = stack.pop()
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_symlink():
                        links.add(rel + printable_name(entry.name))
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, rel + printable_name(entry.name) + "/"))
        except OSError:
            continue
    return links


class _TakenOver(Exception):
    """Another watcher took over the rows of this one's roots."""


class _Stopping(Exception):
    """stop() was called during a long reconcile."""


class _Handler:
    """What watchdog calls with each event (it only needs ``dispatch``)."""

    def __init__(self, watcher: Watcher, followed: _Followed):
        self._watcher, self._followed = watcher, followed

    def dispatch(self, event) -> None:
        self._watcher._on_event(self._followed, event)


def _stop(observer) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(10)
    except Exception as ex:  # stopping must not fail the caller
        log.debug("stopping the observer: %s", ex)


def _os_reason(ex: OSError) -> str:
    import errno

    if ex.errno == errno.ENOSPC:
        return _limit_message(0, 0)
    if ex.errno == errno.EMFILE:
        return "inotify instance limit reached (fs.inotify.max_user_instances)"
    return ex.strerror or str(ex)


# -- inotify's limits -------------------------------------------------------------------

def _unwatched(observer, dirs: list[tuple[str, int]]) -> list[str]:
    """The directories (still there, readable) that have no inotify watch,
    judged from /proc/self/fdinfo of watchdog's inotify descriptor (Linux;
    [] where that cannot be read)."""
    watched = _watched_inodes(observer)
    if watched is None or not dirs:
        return []
    missing = [(p, ino) for p, ino in dirs if ino not in watched]
    if missing:  # a watch may be on its way for a directory just made: look again
        time.sleep(0.05)
        watched = _watched_inodes(observer) or set()
        missing = [(p, ino) for p, ino in missing if ino not in watched and _still(p, ino)]
    return [p for p, _ in missing]


def _still(path: str, ino: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_ino == ino and os.access(path, os.R_OK | os.X_OK)


def _watched_inodes(observer) -> set[int] | None:
    fds = [getattr(getattr(observer, "_inotify_fd", None), "_inotify_fd", None)]
    if not isinstance(fds[0], int):
        # watchdog before 7 (the newest on Python 3.10) has an inotify instance
        # per emitter, and does not watch the subfolders of a folder moved in:
        # without this look the watcher would never notice and go stale.
        fds = [getattr(getattr(getattr(e, "_inotify", None), "_inotify", None), "_inotify_fd", None)
               for e in observer.emitters]
    if not fds or not all(isinstance(fd, int) for fd in fds):
        return None
    import re

    inodes = set()
    for fd in fds:
        try:
            with open(f"/proc/self/fdinfo/{fd}") as f:
                text = f.read()
        except OSError:
            return None
        inodes.update(int(ino, 16) for ino in re.findall(r"^inotify wd:\S+ ino:([0-9a-f]+)", text, re.M))
    return inodes


def max_user_watches() -> int | None:
    try:
        with open(MAX_WATCHES) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def _check_watch_limit(directories: int) -> None:
    limit = max_user_watches()
    if limit is not None and directories > limit:
        raise WatcherError(
            f"the roots have {directories} directories, more than inotify may watch"
            f" (fs.inotify.max_user_watches = {limit}); raise the limit, e.g."
            f" sudo sysctl fs.inotify.max_user_watches={_suggest(directories)}")


def _limit_message(missing: int, total: int, *, new: bool = False) -> str:
    limit = max_user_watches()
    what = (f"inotify could not watch {missing} new director{'y' if missing == 1 else 'ies'}" if new else
            f"inotify could not watch {missing} of {total} directories" if total else "inotify watch limit reached")
    return (f"{what} (fs.inotify.max_user_watches = {limit}, shared by all of this user's processes); raise it,"
            f" e.g. sudo sysctl fs.inotify.max_user_watches={_suggest(max(total, (limit or 0) + 1))}")


def _suggest(needed: int) -> int:
    size = 65536
    while size < 2 * needed:
        size *= 2
    return size


# -- watchdog, tuned and listened to ---------------------------------------------------

_tuned = False
_signal_installed = False


def _tune_watchdog() -> None:
    global _tuned
    import warnings

    # watchdog warns when a directory that moved out and back in still has
    # its watch (it reuses it); harmless, but under `-W error` the warning
    # would kill its reader thread.
    warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
    if _tuned:
        return
    _tuned = True
    for module, name in (("watchdog.observers.inotify_move_event_grouper", "InotifyMoveEventGrouper"),
                         ("watchdog.observers.inotify_buffer", "InotifyBuffer")):
        try:
            cls = getattr(__import__(module, fromlist=[name]), name)
        except (ImportError, AttributeError):
            continue
        if getattr(cls, "delay", 0) > MOVE_PAIRING_S:
            cls.delay = MOVE_PAIRING_S


class _OverflowSignal(logging.Handler):
    """watchdog reports a kernel queue overflow only in its log; every event
    lost with it would go unseen, so every watcher of this process rescans."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" not in record.getMessage().lower():
                return
        except Exception:
            return
        with _active_lock:
            watchers = list(_active)
        for watcher in watchers:
            watcher._overflowed()


def _install_overflow_signal() -> None:
    global _signal_installed
    if _signal_installed:
        return
    _signal_installed = True
    logger = logging.getLogger("watchdog")
    logger.addHandler(_OverflowSignal(logging.WARNING))
    source = logging.getLogger("watchdog.observers.inotify_c")
    if not source.isEnabledFor(logging.WARNING):  # a host silenced it: the signal must still get through
        source.setLevel(logging.WARNING)
