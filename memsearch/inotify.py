"""The watcher's event source for repos roots: inotify itself, on the few
folders discovery reads.

watchdog would watch every folder of a checkout's source tree (200 large
checkouts can pass fs.inotify.max_user_watches), with a thread per folder.
:class:`InotifySource` is one descriptor and one thread for a repos root,
watching the root, each checkout's top level, the folders on the way to its
memory places, the memory folders whole, and the folders of nested finds. A
failure to add a watch is known at once, and the overflow flag is read.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import select
import struct
import threading

from . import discover
from .errors import WatcherError
from .event_source import limit_message

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK, IN_ISDIR = 0x1000000, 0x2000000, 0x4000000, 0x40000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_KINDS = ((IN_CREATE | IN_MOVED_TO, "created"), (IN_DELETE | IN_MOVED_FROM, "deleted"),
          (IN_CLOSE_WRITE, "closed"), (IN_MODIFY, "modified"), (IN_ATTRIB, "attrib"))
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)


class InotifySource:
    """Watches on what discovery reads under the repos root ``folder``;
    ``on_event(kind, path, is_dir)`` and ``on_overflow()`` are called from
    this source's thread, ``on_trouble(reason)`` when a watch cannot be
    added (then events may be missed: the watcher restarts)."""

    def __init__(self, folder: str, on_event, on_overflow, on_trouble):
        self.folder = folder
        self._on_event, self._on_overflow, self._on_trouble = on_event, on_overflow, on_trouble
        self._fd = -1
        self._wake = (-1, -1)
        self._paths: dict[int, str] = {}  # watch descriptor -> folder
        self._deep: set[str] = set()  # folders whose subfolders get watches too (memory folders)
        self._mixed: set[str] = set()  # checkouts' memory/ folders known to hold a file not Markdown
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def watches(self) -> int:
        return len(self._paths)

    def start(self) -> None:
        fd = _libc().inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise WatcherError(f"cannot start watching: {os.strerror(ctypes.get_errno())}"
                               " (fs.inotify.max_user_instances?)")
        self._fd, self._wake = fd, os.pipe()
        try:
            self.watch_folder(self.folder)
            for _, checkout in discover.checkouts(self.folder):
                self.follow(checkout)
        except BaseException:
            self.stop()
            raise
        self._thread = threading.Thread(target=self._read, name="memsearch-inotify", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._wake[1] >= 0:
            os.write(self._wake[1], b"x")
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        for fd in (self._fd, *self._wake):
            if fd >= 0:
                os.close(fd)
        self._fd, self._wake = -1, (-1, -1)
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
            wd = _libc().inotify_add_watch(self._fd, os.fsencode(path), MASK)
            if wd < 0:
                if ctypes.get_errno() == errno.ENOSPC:
                    raise WatcherError(limit_message(0, 0))
                continue  # gone, not a folder, or unreadable: discovery does not read it either
            with self._lock:
                self._paths[wd] = path
            if not deep:
                continue
            self._deep.add(path)
            try:
                with os.scandir(path) as entries:
                    stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
            except OSError:
                continue

    # -- inside --------------------------------------------------------------------
    def _forget_below(self, folder: str) -> None:
        """Drop the watches at and under a folder moved away: their events
        would carry its old path."""
        head = folder + os.sep
        with self._lock:
            gone = [wd for wd, p in self._paths.items() if p == folder or p.startswith(head)]
            for wd in gone:
                del self._paths[wd]
                _libc().inotify_rm_watch(self._fd, wd)
        self._deep = {p for p in self._deep if p != folder and not p.startswith(head)}

    def _read(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake[0], select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            if self._wake[0] in ready:
                return
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue
            except OSError as ex:
                self._on_trouble(f"reading inotify events: {ex.strerror}")
                return
            try:
                self._dispatch(data)
            except WatcherError as ex:
                self._on_trouble(str(ex))
            except Exception as ex:  # this thread must live on: the watcher restarts the source
                self._on_trouble(f"could not handle a file system event: {type(ex).__name__}: {ex}")

    def _dispatch(self, data: bytes) -> None:
        offset = 0
        while offset < len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, offset)
            name = data[offset + _HEADER.size:offset + _HEADER.size + size].rstrip(b"\0")
            offset += _HEADER.size + size
            if mask & IN_Q_OVERFLOW:
                self._on_overflow()
                continue
            with self._lock:
                folder = self._paths.get(wd)
                if mask & IN_IGNORED:
                    self._paths.pop(wd, None)
            if folder is None or mask & IN_IGNORED:
                continue
            is_dir = bool(mask & IN_ISDIR)
            if not name:  # the watched folder itself
                if mask & (IN_DELETE_SELF | IN_MOVE_SELF) and folder == self.folder:
                    self._on_event("deleted", folder, True)
                continue
            path = os.path.join(folder, os.fsdecode(name))
            if is_dir and mask & IN_MOVED_FROM:
                self._forget_below(path)
            for flags, kind in _KINDS:
                if mask & flags:
                    if is_dir and kind == "created":
                        self._watch_new(folder, path)
                    elif folder not in self._deep and self._is_memory_dir(folder):
                        self._recheck_memory(folder, kind, os.path.basename(path).lower())
                    self._on_event(kind, path, is_dir)
                    break

    def _recheck_memory(self, folder: str, kind: str, name: str) -> None:
        """A checkout's memory/ of source code turns into memory by its names
        (discover._holds_memory), then watched whole. Re-decided, at a listing,
        only by a change that can turn it, and not by a Markdown file made
        while a file that is not Markdown is known to be there: a burst of
        notes would cost a listing each."""
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
        # Otherwise an edit, a note gone, or a note made beside a known file not Markdown: no turn.

    def _is_memory_dir(self, folder: str) -> bool:
        """Whether ``folder`` is a checkout's ``memory/`` (memory or not)."""
        checkout, name = os.path.split(folder)
        return name == "memory" and os.path.dirname(checkout) == self.folder

    def _watch_new(self, parent: str, path: str) -> None:
        """A folder made or moved in: inside a memory folder it is watched
        whole; elsewhere it may be a new checkout or a new memory place."""
        if parent in self._deep:
            self.watch_folder(path, deep=True)
        elif parent == self.folder:
            if not os.path.basename(path).startswith("."):
                self.follow(path)
        else:
            checkout = os.path.join(self.folder, os.path.relpath(path, self.folder).split(os.sep)[0])
            self.follow(checkout)


@functools.cache
def _libc():
    lib = ctypes.CDLL(None, use_errno=True)
    for name, args in (("inotify_init1", [ctypes.c_int]),
                       ("inotify_add_watch", [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]),
                       ("inotify_rm_watch", [ctypes.c_int, ctypes.c_int])):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    return lib
