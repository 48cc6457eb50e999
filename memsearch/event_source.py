"""The watcher's event source: Linux inotify, through inotify_simple, one descriptor and one
thread per root. A walked root is watched whole; a repos root where discovery reads (the root,
each checkout's top level, the way to its memory places, the memory folders whole, the folders of
nested finds), so a source tree costs no watch. A watch that cannot be added is known at once,
and the kernel's queue overflow is an event like any other.
"""

from __future__ import annotations

import errno
import os
import select
import sys
import threading
from contextlib import suppress

from . import discover
from .errors import WatcherError, quoted

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK, IN_ISDIR = 0x1000000, 0x2000000, 0x4000000, 0x40000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_KINDS = ((IN_CREATE | IN_MOVED_TO, "created"), (IN_DELETE | IN_MOVED_FROM, "deleted"),
          (IN_CLOSE_WRITE, "closed"), (IN_MODIFY, "modified"), (IN_ATTRIB, "attrib"))


class EventSource:
    """Watches on the root ``folder`` (``repos``: on what discovery reads in it); ``on_event(kind, path, is_dir)``
    and ``on_overflow()`` are called from this source's thread, ``on_trouble(reason)`` when a watch cannot be added
    (events may then be missed: the watcher restarts)."""

    def __init__(self, folder: str, on_event, on_overflow, on_trouble, *, repos: bool = False):
        self.folder, self.repos = folder, repos
        self._on_event, self._on_overflow, self._on_trouble = on_event, on_overflow, on_trouble
        self._inotify, self._wake = None, ()  # the pipe that wakes the thread to stop
        self._paths: dict[int, str] = {}  # watch descriptor -> folder
        self._deep: dict[str, int] = {}  # folders whose subfolders get watches too -> the watch that made it so
        self._mixed: set[str] = set()  # checkouts' memory/ folders known to hold a file not Markdown
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # _paths: this source's thread and the watcher's

    @property
    def watches(self) -> int:
        return len(self._paths)

    def start(self) -> None:
        try:
            self._inotify = require().INotify(nonblocking=True)
        except OSError as ex:
            raise WatcherError(f"cannot start watching: {ex.strerror} (fs.inotify.max_user_instances?)") from None
        self._wake = os.pipe()
        try:
            self.watch_folder(self.folder, deep=not self.repos)
            if not self._paths:
                raise WatcherError(f"memory root vanished: {self.folder}")
            if self.repos:
                for _, checkout in discover.checkouts(self.folder):
                    self.follow(checkout)
        except BaseException:
            self.stop()
            raise
        self._thread = threading.Thread(target=self._read, name="memsearch-inotify", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._wake:
            os.write(self._wake[1], b"x")
        if self._thread is not None:
            self._thread.join(10)
        for fd in self._wake:
            os.close(fd)
        if self._inotify is not None:
            self._inotify.close()
        self._inotify, self._wake, self._thread = None, (), None
        self._paths.clear()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def follow(self, checkout: str) -> None:
        """Watch what discovery reads in one checkout (again: new places)."""
        self._mixed.discard(os.path.join(checkout, "memory"))  # decided afresh (a new clone, say)
        self.watch_folder(checkout)
        for folder, deep in discover.watched_places(checkout):
            self.watch_folder(folder, deep=deep)

    def watch_folder(self, folder: str, *, deep: bool = False) -> None:
        """Watch ``folder`` (``deep``: and every folder below it); WatcherError
        at the watch limit, a folder gone meanwhile passed over."""
        stack = [folder]
        while stack:
            path = stack.pop()
            try:
                wd = self._inotify.add_watch(path, MASK)
            except OSError as ex:
                if ex.errno == errno.ENOSPC:
                    limit = max_user_watches()  # suggested: a power of two, at least twice what is needed
                    raise WatcherError(
                        f"inotify could not watch {quoted(path)} (fs.inotify.max_user_watches = {limit}, shared by"
                        f" all of this user's processes); raise it, e.g. sudo sysctl"
                        f" fs.inotify.max_user_watches={1 << max(16, (2 * (limit or 0) + 1).bit_length())}") from None
                continue  # gone, not a folder, or unreadable: not read by the index either
            with self._lock:
                self._paths[wd] = path
            if not deep:
                continue
            self._deep[path] = wd
            with suppress(OSError), os.scandir(path) as entries:
                stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))

    def _forget_below(self, folder: str) -> None:
        """Drop the watches at and under a folder moved away: their events would carry its old path."""
        head = folder + os.sep
        with self._lock:
            gone = [wd for wd, p in self._paths.items() if p == folder or p.startswith(head)]
            for wd in gone:
                del self._paths[wd]
                with suppress(OSError):  # already gone with its folder
                    self._inotify.rm_watch(wd)
        self._deep = {p: wd for p, wd in self._deep.items() if p != folder and not p.startswith(head)}
        self._mixed = {p for p in self._mixed if p != folder and not p.startswith(head)}

    def _read(self) -> None:
        poller = select.poll()
        poller.register(self._inotify.fileno(), select.POLLIN)
        poller.register(wake := self._wake[0], select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            if wake in ready:
                return
            try:
                events = self._inotify.read(timeout=0)
            except OSError as ex:
                return self._on_trouble(f"reading inotify events: {ex.strerror}")
            try:
                self._dispatch(events)
            except Exception as ex:  # this thread must live on: the watcher restarts the source
                self._on_trouble(str(ex) if isinstance(ex, WatcherError) else
                                 f"could not handle a file system event: {type(ex).__name__}: {ex}")

    def _dispatch(self, events) -> None:
        """Hand on inotify_simple's events (wd, mask, cookie, name)."""
        for wd, mask, _, name in events:
            if mask & IN_Q_OVERFLOW:
                self._on_overflow()
                continue
            with self._lock:  # IN_IGNORED: the watch is gone
                folder = self._paths.pop(wd, None) if mask & IN_IGNORED else self._paths.get(wd)
            if folder is None or mask & IN_IGNORED:
                # Its folder gone: a name made and removed must not be kept for ever (its _deep entry stays if the
                # folder there now has a watch of its own; _mixed is decided afresh, as follow() does).
                if folder is not None and self._deep.get(folder) == wd:
                    del self._deep[folder]
                self._mixed.discard(folder)
                continue
            is_dir = bool(mask & IN_ISDIR)
            if not name:  # the watched folder itself
                if folder == self.folder and mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB):
                    self._on_event("deleted" if mask & (IN_DELETE_SELF | IN_MOVE_SELF) else "attrib", folder, True)
                continue
            path = os.path.join(folder, name)
            if is_dir and mask & IN_MOVED_FROM:
                self._forget_below(path)
            for flags, kind in _KINDS:
                if mask & flags:
                    # A folder made readable (chmod) may be one inotify could not watch (EACCES) when it came.
                    if is_dir and (kind == "created" or kind == "attrib" and path not in self._deep):
                        self._watch_new(folder, path)
                    elif (self.repos and folder not in self._deep and os.path.basename(folder) == "memory"
                          and os.path.dirname(os.path.dirname(folder)) == self.folder):  # a checkout's memory/
                        self._recheck_memory(folder, kind, os.path.basename(path).lower())
                    self._on_event(kind, path, is_dir)
                    break

    def _recheck_memory(self, folder: str, kind: str, name: str) -> None:
        """A checkout's memory/ of source code turns into memory by its names (discover._holds_memory),
        then watched whole. Re-decided (a listing) only by a change that can turn it: not by a note
        made beside a known file that is not Markdown, or a burst of notes costs a listing each."""
        if name.startswith("."):  # discovery passes hidden files over (.DS_Store): they turn nothing
            return
        markdown = name.endswith(".md")
        if kind == "deleted" and not markdown:  # what kept it source code may be gone
            self.follow(os.path.dirname(folder))
        elif kind == "created" and not markdown:
            self._mixed.add(folder)
        elif kind == "created" and (folder not in self._mixed or name == "memory.md"):
            self.follow(os.path.dirname(folder))
            if folder not in self._deep:  # a Markdown file in it, and still not memory
                self._mixed.add(folder)

    def _watch_new(self, parent: str, path: str) -> None:
        """A folder made or moved in: watched whole below a folder watched whole; elsewhere maybe a
        new checkout or memory place. Files made before its watch are read by its reconcile, after."""
        if parent in self._deep:
            self.watch_folder(path, deep=True)
        elif parent != self.folder:
            self.follow(os.path.join(self.folder, os.path.relpath(path, self.folder).split(os.sep)[0]))
        elif not os.path.basename(path).startswith("."):
            self.follow(path)


def require():
    """The inotify_simple module; WatcherError, in one line, where there is no inotify to watch with."""
    if not sys.platform.startswith("linux"):
        raise WatcherError("the watcher needs Linux's inotify; here queries walk the tree, as without a watcher")
    try:
        import inotify_simple
    except ImportError as ex:
        raise WatcherError(f"the watcher needs inotify_simple ({ex}): pip install inotify_simple") from None
    return inotify_simple


def max_user_watches() -> int | None:
    with suppress(OSError, ValueError), open("/proc/sys/fs/inotify/max_user_watches") as f:
        return int(f.read())
    return None

