"""Prepare one file for the index: read, decode, parse its frontmatter,
segment its CJK text. All of a file's work that needs no database, in one
place that both the reconcile and the reader child of a large build
(memsearch.bulkread) run; it imports neither sqlite3 nor the index modules.
"""

from __future__ import annotations

import os
from stat import S_ISREG
from typing import NamedTuple

from . import cjk, metadata
from .walk import Skipped

# Files whose first bytes contain NUL are binary, whatever their name.
BINARY_PROBE = 8192


class Prepared(NamedTuple):
    """A file ready to store: the text of its body column, its frontmatter
    (a Metadata, or None), and the segmented copies of body, name and
    description (migration 0004: None, after a cheap test, for text without
    CJK)."""

    body: str
    meta: metadata.Metadata | None
    body_seg: str | None
    name_seg: str | None
    description_seg: str | None


def prepare_one(relpath: str, abspath: str, max_bytes: int) -> Prepared | Skipped | None:
    """What indexing the file needs and the database does not (a Prepared),
    else why it was skipped (a Skipped), or None if it is gone.

    Never raises: whatever goes wrong with one file (a parser bug, a
    RecursionError or MemoryError a hostile file provokes) costs that file
    its frontmatter or its place in the index, never the whole batch.
    """
    text = None
    try:
        text = read_text(relpath, abspath, max_bytes)
        return _prepared(text) if isinstance(text, str) else text
    except Exception as ex:
        reason = failed(ex)
    if text is not None:
        try:
            meta = metadata.Metadata(error=f"{reason}: indexed as plain text")
            return Prepared(text, meta, cjk.segmented(text), None, None)
        except Exception as ex:
            reason = failed(ex)
    return Skipped(relpath, reason)


def _prepared(text: str) -> Prepared:
    if not metadata.starts_with_fence(text):
        return Prepared(text, None, cjk.segmented(text), None, None)
    meta = metadata.parse(text)
    body = indexed_body(text, meta)
    # The body travels as the first item; the copy inside meta would only
    # double what a bulk build pickles.
    meta = meta._replace(body="")
    return Prepared(body, meta, cjk.segmented(body), cjk.segmented(meta.name), cjk.segmented(meta.description))


def failed(ex: Exception) -> str:
    """The reason shown for a file whose indexing raised ``ex``."""
    return f"could not be indexed ({type(ex).__name__})"


def indexed_body(text: str, meta: metadata.Metadata) -> str:
    """The text of the body column: with usable frontmatter, the body alone (name and
    description have columns; the other keys are bookkeeping that would add noise)."""
    return text if meta.error else meta.body


READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _opened_at(fd: int, abspath: str) -> bool:
    """Whether the file open as ``fd`` is the one at ``abspath``. The walk hands over
    resolved paths inside the root, so a file the kernel places elsewhere was reached
    through a folder swapped for a link since: it could be text from outside the root.
    Where /proc is missing, the path is stat()ed again."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == abspath
    except OSError:
        try:
            now, opened = os.stat(abspath, follow_symlinks=False), os.fstat(fd)
        except OSError:
            return False
        return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


def read_text(relpath: str, abspath: str, max_bytes: int) -> str | Skipped | None:
    """The file's text, why it can't be indexed (a Skipped), or None if it is gone.
    Invalid UTF-8 is indexed with replacement characters: one bad byte should
    not hide a whole note."""
    try:
        # O_NONBLOCK: a file swapped for a FIFO since the walk must not hang
        # us; O_NOFOLLOW: nor one swapped for a link.
        fd = os.open(abspath, READ_FLAGS)
        try:
            st = os.fstat(fd)
            if not S_ISREG(st.st_mode):
                return Skipped(relpath, "not a regular file")
            if not _opened_at(fd, abspath):
                return Skipped(relpath, "a folder on its path was replaced while it was read")
            # The walk judged the size it saw; the file may have grown since.
            if st.st_size > max_bytes:
                return Skipped(relpath, f"too large ({st.st_size} bytes, cap {max_bytes})")
            # Read what the file holds now, not the size the walk saw: another
            # process may have indexed a longer version meanwhile, and text cut
            # at the old size would replace it.
            data = os.read(fd, st.st_size + 1)
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None  # deleted since the walk; the next reconcile removes its row
    except OSError as ex:
        return Skipped(relpath, f"unreadable ({ex.strerror or type(ex).__name__})")
    if b"\0" in data[:BINARY_PROBE]:
        return Skipped(relpath, "binary file")
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data.decode("utf-8", "replace")
