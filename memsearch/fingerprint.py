"""Whether a file is unchanged since it was read: the one rule every walk, reconcile and check
uses. Unchanged while size, mtime, ctime, device and inode are as they were: the ctime because a
rewrite can put size and mtime back (``touch -d``) but nothing sets the ctime back; device and
inode name the file itself (hard links to one are indexed once, memsearch.reconcile).
"""

from __future__ import annotations

from functools import partial
from operator import attrgetter
from typing import NamedTuple


class Fingerprint(NamedTuple):
    size: int
    mtime_ns: int
    ctime_ns: int
    device: int
    inode: int

    @property
    def identity(self) -> tuple[int, int]:
        """(device, inode): the file whatever its name."""
        return self.device, self.inode


# key(st): a plain tuple made in C, equal to the stat's Fingerprint: hot loops compare it with a
# stored one and make a Fingerprint (make(key)) only for a file that changed.
STAT_FIELDS = ("st_size", "st_mtime_ns", "st_ctime_ns", "st_dev", "st_ino")
key = attrgetter(*STAT_FIELDS)
make = partial(tuple.__new__, Fingerprint)

# A file modified this close to its read may change again within one timestamp tick, its
# fingerprint unchanged. Two seconds covers coarse clocks (FAT, some network file systems).
RACY_NS = 2_000_000_000

# The columns of memory_fts that hold a row's Fingerprint (migrations/0008).
COLUMNS = "size, mtime_ns, ctime_ns, device, inode"

# What SQLite's 64-bit integers hold: a file whose mtime in ns is outside (`touch -d 2400-01-01`) has no
# fingerprint to store. Compared inline (MIN_NS <= ns <= MAX_NS): a walk's hot loop checks each file.
MIN_NS, MAX_NS = -(1 << 63), (1 << 63) - 1


def out_of_range(mtime_ns: int) -> str:
    """Why a file whose mtime is outside MIN_NS..MAX_NS is passed over."""
    return f"modification time out of range ({mtime_ns} ns since 1970: the index stores 1677 to 2262)"


def of(st) -> Fingerprint:
    return make(key(st))


def same_file(a, b) -> bool:
    """Whether two os.stat_results are of one file (device, inode), whatever its name."""
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
