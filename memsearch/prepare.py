"""Prepare one file for the index (read, decode, parse its frontmatter, segment its CJK text):
the work that needs no database, also run by a large build's reader child (memsearch.bulkread).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from . import cjk, metadata
from .memory_file import Unconfined, open_confined
from .walk import Skipped, unreadable

# Files whose first bytes contain NUL are binary, whatever their name.
BINARY_PROBE = 8192
# The byte-order marks of UTF-16 (LE, BE), bytes no UTF-8 text can start with.
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class Prepared(NamedTuple):
    """A file ready to store: its body column, its frontmatter (or None), and the shadow columns
    (cjk.stored) of the body and of each metadata.FIELDS; texts as cjk.stored() stores them."""

    body: str
    meta: metadata.Metadata | None
    segs: tuple[str | None, ...]


def prepare_one(relpath: str, abspath: str, max_bytes: int) -> Prepared | Skipped | None:
    """A Prepared, else why the file was skipped (a Skipped), or None if it is gone. Never raises:
    whatever one file provokes costs it its frontmatter or its place, never the batch."""
    text = None
    try:
        text = read_text(relpath, abspath, max_bytes)
        if not isinstance(text, str):
            return text
        return _prepared(text, metadata.parse(text) if metadata.starts_with_fence(text) else None)
    except Exception as ex:
        reason = failed(ex)
    if text is not None:
        try:
            return _prepared(text, metadata.Metadata(error=f"{reason}: indexed as plain text"))
        except Exception as ex:
            reason = failed(ex)
    return Skipped(relpath, reason)


def _prepared(text: str, meta: metadata.Metadata | None) -> Prepared:
    # With usable frontmatter, the body alone: name and description have columns, the other keys
    # are bookkeeping that would add noise.
    body, body_seg = cjk.stored(text if meta is None or meta.error else meta.body)
    fields = {field: cjk.stored(getattr(meta, field, None)) for field in metadata.FIELDS}
    if meta is not None:  # the body travels as the first item: a copy in meta would double what a bulk build pickles
        meta = meta._replace(body="", **{field: kept for field, (kept, _) in fields.items()})
    return Prepared(body, meta, (body_seg, *(seg for _, seg in fields.values())))


def failed(ex: Exception) -> str:
    """The reason shown for a file whose indexing raised ``ex``."""
    return f"could not be indexed ({type(ex).__name__})"


def not_text(data: bytes) -> str | None:
    """Why a file's first bytes are no memory file's (the indexer skips it, memory_read refuses it), or None."""
    if data[:2] in UTF16_BOMS:  # never UTF-8: CJK text in UTF-16 has no NUL and was indexed as garbage
        return "UTF-16 text (byte-order mark): memory files are read as UTF-8"
    if b"\0" in data[:BINARY_PROBE]:
        return "binary file"
    return None


def read_text(relpath: str, abspath: str, max_bytes: int) -> str | Skipped | None:
    """The file's text (bad UTF-8 replaced), why it can't be indexed (a Skipped), or None if gone."""
    try:
        fd, st = open_confined(abspath)
        try:
            if st.st_size > max_bytes:  # it may have grown since the walk
                return Skipped(relpath, f"too large ({st.st_size} bytes, cap {max_bytes})")
            # What it holds now, not the size the walk saw: text cut at that
            # size would replace a longer version another process indexed. A
            # binary file's first bytes tell: skipped, it is read by every query.
            data = os.read(fd, min(BINARY_PROBE, st.st_size + 1))
            if (reason := not_text(data)) is None and len(data) == BINARY_PROBE:
                data += os.read(fd, st.st_size + 1 - len(data))
        finally:
            os.close(fd)
    except Unconfined as ex:
        return Skipped(relpath, ex.strerror)
    except FileNotFoundError:
        return None  # deleted since the walk; the next reconcile removes its row
    except OSError as ex:
        return Skipped(relpath, unreadable(ex))
    if reason is not None:  # (judged by the first bytes alone)
        return Skipped(relpath, reason)
    return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
