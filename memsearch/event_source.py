"""The watcher's event source for walked roots: watchdog, and the checks
around it that inotify needs.

:class:`WatchdogSource` hands each change on as ``(kind, path, is_dir)`` (a
move is a deletion and a creation), so nothing past this module knows
watchdog. watchdog skips the folders it cannot watch without a word (at
fs.inotify.max_user_watches), so :meth:`WatchdogSource.unwatched` checks
them against the kernel's list of this process's watches (/proc/self/fdinfo).
Two settings are process-wide, as watchdog offers no other way: its
move-pairing delay is shortened, and an overflow is heard from its log
(watchdog 7) or from its event parser (before 7, which drops it unsaid).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
import sys
import threading
import time
import weakref

from .errors import WatcherError

log = logging.getLogger("memsearch.watch")

# watchdog holds a rename's first half this long (0.5 s by default) to pair it
# with the second, and every event behind it waits, cookies included. Both
# halves arrive in one read from the kernel, and the watcher re-reads both
# paths of a move anyway: pairing only serves watchdog's own bookkeeping.
MOVE_PAIRING_S = 0.05

# Events no index row can follow from.
_PASSED_OVER = ("opened", "closed_no_write")


class WatchdogSource:
    """Recursive watches on ``folders``; ``on_event(kind, path, is_dir)`` is
    called from watchdog's dispatch thread, ``on_overflow()`` when the
    kernel's queue overflowed (events were lost)."""

    def __init__(self, folders: list[str], on_event, on_overflow):
        self.folders, self._on_event, self._on_overflow = folders, on_event, on_overflow
        self._observer = None
        self._fds: set[int] = set()  # this source's inotify descriptors
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        try:
            from watchdog import events as ev
            from watchdog.observers import Observer
        except ImportError as ex:
            raise WatcherError(f"the watcher needs watchdog ({ex}): pip install watchdog") from None
        _set_up_watchdog()
        kinds = [ev.FileCreatedEvent, ev.FileDeletedEvent, ev.FileModifiedEvent, ev.FileMovedEvent,
                 ev.FileClosedEvent, ev.DirCreatedEvent, ev.DirDeletedEvent, ev.DirMovedEvent]
        kinds += [getattr(ev, name) for name in ("FileAttribEvent", "DirAttribEvent") if hasattr(ev, name)]
        # The inotify descriptors and threads that appear while watchdog starts
        # are its own (7: one descriptor and reader thread per observer; 6: a
        # descriptor per watch): known so without its private attributes.
        fds, threads = _inotify_fds(), set(threading.enumerate())
        try:
            observer = Observer()
        except OSError as ex:
            raise WatcherError(f"cannot start watching: {ex.strerror or ex} (fs.inotify.max_user_instances?)") from None
        try:
            for folder in self.folders:
                try:
                    observer.schedule(self, folder, recursive=True, event_filter=kinds)
                except TypeError:  # watchdog before 4.0: no event_filter
                    observer.schedule(self, folder, recursive=True)
            observer.start()
        except OSError as ex:
            _stop(observer)
            raise WatcherError(f"cannot watch {', '.join(self.folders)}: {os_reason(ex)}") from None
        self._fds = _inotify_fds() - fds
        self._threads = [t for t in threading.enumerate() if t not in threads
                         and type(t).__module__.startswith("watchdog")]
        self._observer = observer
        with _sources_lock:
            _sources.add(self)

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        with _sources_lock:
            _sources.discard(self)
        if observer is not None:
            _stop(observer)
        self._fds = set()

    def alive(self) -> bool:
        """Whether events still arrive: a dead thread of watchdog's ends them."""
        observer = self._observer
        return observer is not None and all(t.is_alive() for t in (observer, *observer.emitters, *self._threads))

    def dispatch(self, event) -> None:
        """What watchdog calls with each event."""
        kind = event.event_type
        if kind in _PASSED_OVER or (event.is_directory and kind == "modified"):
            return
        src = os.fsdecode(event.src_path)
        if kind == "moved":
            self._on_event("deleted", src, event.is_directory)
            dest = os.fsdecode(event.dest_path or "")
            if dest:
                self._on_event("created", dest, event.is_directory)
        else:
            self._on_event(kind, src, event.is_directory)

    def unwatched(self, dirs: list[tuple[str, int]]) -> list[str]:
        """The directories of ``dirs`` ((path, inode); still there, readable)
        that have no inotify watch ([] where /proc cannot tell)."""
        watched = _watched_inodes(self._fds)
        if watched is None:
            return []
        missing = [(p, ino) for p, ino in dirs if ino not in watched]
        if missing:  # a watch may be on its way for a directory just made: look again
            time.sleep(0.05)
            watched = _watched_inodes(self._fds) or set()
            missing = [(p, ino) for p, ino in missing if ino not in watched and _still(p, ino)]
        return [p for p, _ in missing]

    def watch_more(self, folder: str) -> bool:
        """A recursive watch of its own on ``folder``: watchdog before 7 (the
        newest on Python 3.10) never watches the subfolders of a folder moved
        into a watched one. False when it cannot be watched."""
        fds = _inotify_fds()
        try:
            self._observer.schedule(self, folder, recursive=True)
        except OSError:
            return False
        finally:
            self._fds |= _inotify_fds() - fds
        return True


def scan_dirs(folders: list[str]) -> list[tuple[str, int]]:
    """(path, inode) of every directory a recursive watch of ``folders``
    covers (hidden ones too)."""
    dirs = []
    for folder in folders:
        try:
            st = os.stat(folder)
        except OSError:
            raise WatcherError(f"memory root vanished: {folder}") from None
        dirs.append((folder, st.st_ino))
        stack = [folder]
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


def dirs_of(paths) -> list[tuple[str, int]]:
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


def _stop(observer) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(10)
    except Exception as ex:  # stopping must not fail the caller
        log.debug("stopping the observer: %s", ex)


def _still(path: str, ino: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_ino == ino and os.access(path, os.R_OK | os.X_OK)


def _inotify_fds() -> set[int]:
    """This process's open inotify descriptors (none where /proc is missing)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return set()
    fds = set()
    for name in names:
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify":
                fds.add(int(name))
        except (OSError, ValueError):
            continue
    return fds


def _watched_inodes(fds: set[int]) -> set[int] | None:
    """The inodes the inotify descriptors ``fds`` watch, from the kernel's
    /proc/self/fdinfo (None when that cannot be read)."""
    if not fds:
        return None
    inodes = set()
    for fd in fds:
        try:
            with open(f"/proc/self/fdinfo/{fd}") as f:
                text = f.read()
        except OSError:
            return None
        inodes.update(int(ino, 16) for ino in re.findall(r"^inotify wd:\S+ ino:([0-9a-f]+)", text, re.M))
    return inodes


# -- inotify's limits -------------------------------------------------------------------

def max_user_watches() -> int | None:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def check_watch_limit(directories: int) -> None:
    limit = max_user_watches()
    if limit is not None and directories > limit:
        raise WatcherError(
            f"the roots have {directories} directories, more than inotify may watch"
            f" (fs.inotify.max_user_watches = {limit}); raise the limit, e.g."
            f" sudo sysctl fs.inotify.max_user_watches={_suggest(directories)}")


def limit_message(missing: int, total: int, *, new: bool = False) -> str:
    limit = max_user_watches()
    what = (f"inotify could not watch {missing} new director{'y' if missing == 1 else 'ies'}" if new else
            f"inotify could not watch {missing} of {total} directories" if total else "inotify watch limit reached")
    return (f"{what} (fs.inotify.max_user_watches = {limit}, shared by all of this user's processes); raise it,"
            f" e.g. sudo sysctl fs.inotify.max_user_watches={_suggest(max(total, (limit or 0) + 1))}")


def os_reason(ex: OSError) -> str:
    if ex.errno == errno.ENOSPC:
        return limit_message(0, 0)
    if ex.errno == errno.EMFILE:
        return "inotify instance limit reached (fs.inotify.max_user_instances)"
    return ex.strerror or str(ex)


def _suggest(needed: int) -> int:
    size = 65536
    while size < 2 * needed:
        size *= 2
    return size


# -- watchdog, tuned and listened to ---------------------------------------------------

_set_up = False
_sources: "weakref.WeakSet[WatchdogSource]" = weakref.WeakSet()
_sources_lock = threading.Lock()


def _set_up_watchdog() -> None:
    """Shorten watchdog's move pairing and listen to its log for overflows."""
    global _set_up
    import warnings

    # watchdog warns when a directory moved out and back in keeps its watch:
    # harmless, but under `-W error` it would kill the reader thread. (The
    # filter is process-wide, and matches that warning alone. It is set at
    # every start: a warnings.catch_warnings() block, as pytest's, drops it.)
    warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
    if _set_up:
        return
    _set_up = True
    for module, name in (("watchdog.observers.inotify_move_event_grouper", "InotifyMoveEventGrouper"),
                         ("watchdog.observers.inotify_buffer", "InotifyBuffer")):
        try:
            cls = getattr(__import__(module, fromlist=[name]), name)
        except (ImportError, AttributeError):
            continue
        if getattr(cls, "delay", 0) > MOVE_PAIRING_S:
            cls.delay = MOVE_PAIRING_S
    source = logging.getLogger(_OVERFLOW_LOGGER)
    source.addHandler(_OverflowSignal(logging.WARNING))
    if not source.isEnabledFor(logging.WARNING):  # a host silenced it: the signal must still get through
        source.setLevel(logging.WARNING)
    _hear_dropped_overflows()


# Where watchdog 7 logs a kernel queue overflow, once per overflow (its
# observers then log one "reconciling" line per watch: not counted again).
_OVERFLOW_LOGGER = "watchdog.observers.inotify_c"
_IN_Q_OVERFLOW = 0x4000


def _overflowed() -> None:
    """Events were lost: every source of this process tells its watcher
    (which rescans). Which inotify descriptor overflowed is not known."""
    with _sources_lock:
        sources = list(_sources)
    for source in sources:
        source._on_overflow()


class _OverflowSignal(logging.Handler):
    """watchdog 7 reports a kernel queue overflow only in its log."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            heard = record.name == _OVERFLOW_LOGGER and "overflow" in record.getMessage().lower()
        except Exception:
            return
        if heard:
            _overflowed()


def _hear_dropped_overflows() -> None:
    """watchdog before 7 (the newest on Python 3.10 is 6) drops the kernel's
    overflow event (watch descriptor -1) without a word: the lost events went
    unseen and queries answered from a stale index (38 of 200 files written
    in a burst missing, with fs.inotify.max_queued_events at 16). Its event
    parser is wrapped to hear that event; version 7 parses elsewhere."""
    module = sys.modules.get("watchdog.observers.inotify_c")
    inotify = getattr(module, "Inotify", None)
    parse = getattr(inotify, "__dict__", {}).get("_parse_event_buffer")
    if hasattr(module, "InotifyFD") or not isinstance(parse, staticmethod):
        return
    parse = parse.__func__

    def parse_and_hear(event_buffer):
        for event in parse(event_buffer):
            if event[0] == -1 and event[1] & _IN_Q_OVERFLOW:
                _overflowed()
            yield event

    inotify._parse_event_buffer = staticmethod(parse_and_hear)
