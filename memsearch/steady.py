"""What a process that queries a repos root again keeps of its walks: the steady state (every
folder whose listing decided the last walk, and every file), which a query only lstats while none
changed. Taken at the second walk in a row that changed nothing; any difference sends the query
back to :func:`memsearch.discover.walk_checkouts`.
"""

from __future__ import annotations

import os
import time
from operator import attrgetter, itemgetter
from stat import S_ISDIR, S_ISREG

from .fingerprint import RACY_NS, STAT_FIELDS, Fingerprint

# Roots kept in this process (a long-lived MemoryIndex); past it, start over.
CACHED_ROOTS = 16

# What the snapshot checks of each lstat (key[:_MODE] is the Fingerprint, key[_MODE] the file type).
_KEY, _MODE = attrgetter(*STAT_FIELDS, "st_mode"), len(STAT_FIELDS)
# A settled path is compared by ctime and inode: every change sets the ctime to now, which no one can
# set back (a folder's covers its entries); the inode, as files made in one clock tick share it.
_SETTLED = attrgetter("st_ctime_ns", "st_ino")
_SETTLED_OF = itemgetter(STAT_FIELDS.index("st_ctime_ns"), STAT_FIELDS.index("st_ino"))  # the same, of a _KEY


class RootCache:
    """One repos root's walks, as this process last saw them."""

    __slots__ = ("calm", "steady")

    def __init__(self):
        self.calm: dict | None = None  # the known dict of the last walk that changed nothing
        self.steady: tuple | None = None  # (known, settled paths, their _SETTLED, racy paths, their _KEYs)


_caches: dict[tuple[str, int], RootCache] = {}


def cache_of(real_root: str, max_file_bytes: int) -> RootCache:
    if (real_root, max_file_bytes) not in _caches and len(_caches) >= CACHED_ROOTS:
        _caches.clear()
    return _caches.setdefault((real_root, max_file_bytes), RootCache())


def dir_key(path: str) -> tuple[int, int, int] | None:
    """(mtime, ctime, inode) of a folder, taken before it is listed: a change since moves its ctime,
    whatever was done to its mtime (os.utime)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino) if S_ISDIR(st.st_mode) else None


def is_steady(cache: RootCache, known: dict[str, Fingerprint]) -> bool:
    """Whether nothing changed since the steady state was taken for ``known``."""
    steady = cache.steady
    if steady is None or steady[0] is not known:
        return False
    _, settled, stamps, racy, keys = steady
    try:
        same = list(map(_SETTLED, map(os.lstat, settled))) == stamps and list(map(_KEY, map(os.lstat, racy))) == keys
    except OSError:
        return False
    if same and racy and max(key[2] for key in keys) < time.time_ns() - RACY_NS:  # settled since
        cache.steady = (known, settled + racy, stamps + list(map(_SETTLED_OF, keys)), [], [])
    return same


def snapshot(dirs: list[tuple[str, int, int, int]], found: dict[str, tuple[str, Fingerprint]],
             known: dict[str, Fingerprint], max_file_bytes: int, now: int) -> tuple | None:
    """The steady state after a walk (begun at ``now``) that found every known file unchanged and
    nothing new or passed over: ``dirs`` (path, mtime, ctime, inode) of every folder it listed and
    single-file link, ``found`` {shown: (absolute path, Fingerprint)} of every file. From lstats
    taken again now and checked against what the walk relied on: None when any differs, or a folder
    had changed a moment before the walk listed it."""
    if len(found) != len(known):
        return None
    paths = [d[0] for d in dirs] + [abspath for abspath, _ in found.values()]
    try:
        keys = list(map(_KEY, map(os.lstat, paths)))
    except OSError:
        return None
    if any(_SETTLED_OF(key) != (ctime_ns, ino) or mtime_ns + RACY_NS >= now
           for (_, mtime_ns, ctime_ns, ino), key in zip(dirs, keys)) or any(
            not S_ISREG(key[_MODE]) or key[0] > max_file_bytes or known.get(rel) != key[:_MODE]
            for rel, key in zip(found, keys[len(dirs):])):
        return None
    before = time.time_ns() - RACY_NS
    settled = [(path, key) for path, key in zip(paths, keys) if key[2] < before]
    racy = [(path, key) for path, key in zip(paths, keys) if key[2] >= before]
    return (known, [path for path, _ in settled], [_SETTLED_OF(key) for _, key in settled],
            [path for path, _ in racy], [key for _, key in racy])
