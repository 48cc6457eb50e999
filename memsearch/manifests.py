"""The manifest of a memory root, as Claude Code's memory scan makes it: every ``.md`` file but
the ``MEMORY.md`` indexes (and binary files), newest first, at most 200, with the description
and type its frontmatter declares in the first 30 lines::

    - [feedback] cc:-home-me-shop/memory/testing.md (2026-05-01T09:12:44.120Z): run the whole suite before a commit
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import islice
from typing import NamedTuple

from . import context, metadata
from .errors import quoted
from .format import one_line
from .layout import Layout
from .memory_file import INDEX_NAME
from .prepare import not_text
from .roots import INSTRUCTIONS, as_list, resolve
from .settings import MANIFEST_LIMIT, MAX_FILE_BYTES, checked_setting

# The frontmatter must close within this many lines to be read, and within
# this many bytes: a longer block is unusable anyway (metadata.MAX_BLOCK).
HEAD_LINES = 30
HEAD_BYTES = metadata.MAX_BLOCK + 4096


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class ManifestEntry(NamedTuple):
    path: str  # as in search results: relative to the root, "<name>:"-prefixed when several
    file: str  # absolute
    description: str | None
    type: str | None  # user | feedback | project | reference, from the frontmatter
    mtime_ns: int

    @property
    def modified(self) -> str:
        """ISO 8601 UTC with milliseconds, as JavaScript's toISOString(), for any mtime (a file may
        hold one past years 1-9999): the Gregorian calendar repeats every 400 years (146,097 days)."""
        days, ms = divmod(self.mtime_ns // 1_000_000, 86_400_000)
        cycles, days = divmod(days, 146_097)
        moment = _EPOCH + timedelta(days=days, milliseconds=ms)
        year = moment.year + 400 * cycles
        shown = f"{year:04d}" if 0 <= year <= 9999 else f"{year:+07d}"  # toISOString's extended years
        return shown + moment.strftime("-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"

    def to_dict(self) -> dict:
        return {"path": self.path, "file": self.file, "type": self.type, "description": self.description,
                "modified": self.modified}


def manifest(roots, *, limit: int = MANIFEST_LIMIT, max_file_bytes: int = MAX_FILE_BYTES) -> list[ManifestEntry]:
    """The memory files of ``roots`` (folders, Roots or a Layout), newest first, at most ``limit``."""
    checked_setting("limit", limit, setting="manifest_limit")  # the rule of the setting that gives its default
    checked_setting("max_file_bytes", max_file_bytes)
    if not isinstance(roots, Layout):
        roots = Layout(resolve(as_list(roots)))
    found = roots.walk(max_file_bytes).files
    newest = sorted(((fp.mtime_ns, path, abspath) for path, (abspath, fp) in found.items()
                     if roots.owner(path)[1].rsplit("/", 1)[-1] != INDEX_NAME),  # indexes list memories
                    key=lambda item: (-item[0], item[1]))
    entries = []
    for mtime_ns, path, abspath in newest:
        if (head := read_head(abspath)) is None:
            continue
        meta = metadata.parse(head)
        # As search types it: a checkout's instruction file cannot type itself as the user's memory.
        kind = INSTRUCTIONS if roots.describe(path, meta)[3] == INSTRUCTIONS else meta.type
        entries.append(ManifestEntry(path, abspath, meta.description, kind, mtime_ns))
        if len(entries) == limit:
            break
    return entries


def read_head(path: str) -> str | None:
    """The first HEAD_LINES lines of the first HEAD_BYTES; "" if it cannot be read confined (a FIFO
    or a link swapped in since the walk), None for a binary or UTF-16 file (search skips those)."""
    if (head := context.read_head(path, HEAD_BYTES, confined=True)) is None:
        return ""
    if not_text(head[0]):
        return None
    return "".join(islice(head[0].decode("utf-8", "replace").splitlines(keepends=True), HEAD_LINES))


def format_manifest(entries: list[ManifestEntry]) -> str:
    """One line per file: ``- [type] path (modified): description``."""
    lines = []
    for e in entries:
        tag = f"[{e.type}] " if e.type else ""
        tail = f": {one_line(e.description)}" if e.description else ""  # it goes into a model's context
        lines.append(f"- {tag}{quoted(e.path)} ({e.modified}){tail}")
    return "\n".join(lines)
