"""Whether a file is unchanged since it was read: the one rule every walk,
reconcile and check uses, kept here so that changing it touches one module.

A file is unchanged while its size, mtime, ctime, device and inode are all as
they were. The ctime because a rewrite can put the size and the mtime back
(``touch -d``), and nothing can set the ctime back; the device and inode
because they name the file itself: several names of one (device, inode) are
hard links to one file, which an index holds once (memsearch.reconcile).
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


# The stat fields of a Fingerprint, in its order. key(st) is a plain tuple
# made in C, equal to the Fingerprint of that stat: hot loops compare it with
# a stored Fingerprint and make one (make(key)) only for a file that changed.
STAT_FIELDS = ("st_size", "st_mtime_ns", "st_ctime_ns", "st_dev", "st_ino")
key = attrgetter(*STAT_FIELDS)
make = partial(tuple.__new__, Fingerprint)

# A file modified this close to its read may change again within the same timestamp tick, its
# fingerprint unchanged: not trusted by mtime or ctime alone. Two seconds covers coarse clocks
# (FAT, some network file systems).
RACY_NS = 2_000_000_000

# The columns of memory_fts that hold a row's Fingerprint (migrations/0008).
COLUMNS = "size, mtime_ns, ctime_ns, device, inode"


def of(st) -> Fingerprint:
    """The Fingerprint of an os.stat_result."""
    return make(key(st))
