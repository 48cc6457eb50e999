"""A memory index (``MEMORY.md``) made ready for an agent's context: leading frontmatter and top-level HTML
comments removed, cut at MAX_LINES or MAX_CHARS with a warning line. A missing, unreadable or irregular
file gives "" (having none yet is normal)."""

from __future__ import annotations

import os
import re

from .errors import quoted
from .format import CONTROLS
from .memory_file import INDEX_NAME, below, open_confined, real_path
from .metadata import BOM, FENCE_LINE
from .settings import given_path, given_type

# Claude Code's limits for the index it loads: a file that fits one fits the other.
MAX_LINES = 200
MAX_CHARS = 25_000
ENTRY_CHARS = 200  # what the warning asks each entry to stay under

# MAX_CHARS (100 KB of UTF-8) and room for frontmatter and comments, removed before the caps apply.
READ_BYTES = 1 << 20

WARNING = (
    "> WARNING: {name} is {size}, so it was truncated and only part of it is shown."
    " Keep each index entry to one line under {entry} characters and move details into their own files."
)

# Controls but tab and line feed, spelled \xNN: the index must not drive the terminal (a lone CR hides a line).
LINE_CONTROLS = {c: shown for c, shown in CONTROLS.items() if c not in (0x09, 0x0A)}

_FENCE = re.compile(r"( *)(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"( {0,3})([-+*]|\d{1,9}[.)])( +|$)")
_QUOTE = re.compile(r" {0,3}>")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def _without_comments(text: str) -> str:
    """``text`` without its ``<!-- -->`` comments, in one pass (a lazy regex rescanned to the end of the
    text for every ``<!--`` left open: quadratic)."""
    out, at = [], 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        out.append(text[at:start])
        at = end + 3
    out.append(text[at:])
    return "".join(out)


def index_for_context(path: str | os.PathLike) -> str:
    """The index at ``path`` (a MEMORY.md or its folder) ready for context, or "" (no such file, unreadable, or a
    link leading out of its folder). InvalidArgument if ``path`` is no str or path-like."""
    path = given_path(path, "path must be a MEMORY.md or its folder")
    if os.path.isdir(path):
        path = os.path.join(path, INDEX_NAME)
    # A link is followed only within the index's folder, as the walk follows one only within its root: a MEMORY.md
    # planted as a link to ~/.ssh/id_rsa must not put the key into an agent's context.
    # (A NUL names no file, nor does a lone surrogate no byte decodes to, '\ud800', which os calls refuse, nor a
    # relative path once the working folder is deleted: getcwd() fails.)
    try:
        real = "" if "\0" in path else real_path(path)
        if not real or below(real, real_path(os.path.dirname(path) or ".")) is None:
            return ""
    except (FileNotFoundError, UnicodeEncodeError):
        return ""
    read = read_text(real, READ_BYTES)
    return "" if read is None else format_index_for_context(read[0], name=os.path.basename(path), file_bytes=read[1])


def read_text(path: str, limit: int) -> tuple[str, int | None] | None:
    """:func:`read_head` of a path a walk found, as text, and the file's size when only a part was read (which
    ends on a whole line)."""
    if (head := read_head(path, limit, confined=True)) is None:
        return None
    data, size = head
    if len(data) == size:
        return data.decode("utf-8", "replace"), None
    return (data[: data.rfind(b"\n") + 1] or data).decode("utf-8", "replace"), size


def read_head(path: str, limit: int, *, confined: bool = False) -> tuple[bytes, int] | None:
    """The first ``limit`` bytes of the regular file at ``path`` and its size; None if it cannot be read.
    ``confined``: a path a walk found, read only if it still is that file (memory_file.open_confined)."""
    try:
        fd, st = open_confined(path, confined=confined)
        with open(fd, "rb") as f:
            data = f.read(limit + 1)  # one byte more than asked: is there more?
    except (OSError, ValueError):  # ValueError: a NUL in the path, which names no file
        return None
    return data[:limit], max(st.st_size, len(data))  # a file that grew since fstat is as big as what was read


def format_index_for_context(text: str, *, name: str = INDEX_NAME, file_bytes: int | None = None) -> str:
    """Pure: frontmatter and top-level comments out, then the caps. ``file_bytes``: ``text`` is only the start of
    a file this big (marked truncated). InvalidArgument if ``text`` is no str."""
    text = given_type(text, str, "text must be a string")
    # Escaped before the caps, which count the text as shown: a tag character is 10 characters of context.
    return truncate(clean(text).translate(LINE_CONTROLS), name=name, file_bytes=file_bytes)


def clean(text: str) -> str:
    """``text`` without a BOM, leading frontmatter, top-level HTML comments and the blank lines around
    them, with LF line ends."""
    text = text.replace("\r\n", "\n").lstrip(BOM)
    parts = FENCE_LINE.split(text, 2) if FENCE_LINE.match(text) else ()
    text = parts[2] if len(parts) == 3 else text  # a leading ``---`` block that never closes stays
    return _LEADING_BLANK_LINES.sub("", strip_comments(text)).rstrip()


def truncate(text: str, *, name: str = INDEX_NAME, file_bytes: int | None = None) -> str:
    lines = text.split("\n")
    over = [f"{len(lines)} lines (limit {MAX_LINES})"] if len(lines) > MAX_LINES else []
    if len(text) > MAX_CHARS:
        over.append(f"{len(text):,} characters (limit {MAX_CHARS:,})")
    if not over and file_bytes is None:
        return text
    # With file_bytes only the file's start was read: its lines and characters are unknown.
    size = " and ".join(over) if file_bytes is None else f"{file_bytes:,} bytes (read: the first {READ_BYTES:,})"
    cut = whole_lines("\n".join(lines[:MAX_LINES]), MAX_CHARS)
    # The name as every name is shown (errors.quoted): an index named "x\n> ..." must not add a line of its own.
    return cut.rstrip("\n") + "\n" + WARNING.format(name=quoted(name), size=size, entry=ENTRY_CHARS)


def whole_lines(text: str, limit: int) -> str:
    """The start of ``text``, at most ``limit`` characters, ending on a whole line unless the first is longer."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit + 1)
    return text[: end if end > 0 else limit]


def strip_comments(text: str) -> str:
    """Remove the HTML comments that are top-level blocks (CommonMark HTML blocks of type 2, from a line
    starting ``<!--`` to the line holding ``-->``); those in code, lists, quotes or paragraphs are content."""
    if "<!--" not in text:
        return text
    lines = text.split("\n")
    # The first line at or after each holding "-->", in one pass: many unclosed "<!--" cost linear time.
    closes: list[int | None] = [None] * (len(lines) + 1)
    for j in range(len(lines) - 1, -1, -1):
        closes[j] = j if "-->" in lines[j] else closes[j + 1]
    out: list[str] = []
    fence: tuple[str, int] | None = None  # the open code fence's character and length
    list_indent: int | None = None  # content column of the list being read
    blank_before = True
    resume = 0  # the line after a comment removed
    for i, line in enumerate(lines):
        if i < resume:
            continue
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if fence is not None:
            match = _FENCE.fullmatch(line.rstrip())
            if match and match[2][0] == fence[0] and len(match[2]) >= fence[1]:
                fence = None
            out.append(line)
            continue
        if not body.strip():
            out.append(line)
            blank_before = True
            continue
        in_list = list_indent is not None and indent >= list_indent
        if list_indent is not None and not in_list and blank_before:
            list_indent = None  # a line left of the list's content after a blank line ends it
        match = _FENCE.match(line)
        if match and (indent <= 3 or in_list):
            fence = (match[2][0], len(match[2]))
        elif body.startswith("<!--") and indent <= 3 and not in_list:
            end = i if "-->" in body[4:] else closes[i + 1]
            if end is not None:
                residue = _without_comments("\n".join(lines[i:end + 1]))
                if residue.strip():
                    out.append(residue)
                list_indent, blank_before, resume = None, False, end + 1
                continue
        else:
            if item := _LIST_ITEM.match(line):
                gap = len(item[3])
                content = len(item[1]) + len(item[2]) + (gap if 1 <= gap <= 4 else 1)
                list_indent = content if list_indent is None else min(list_indent, content)
            elif indent == 0 and blank_before and not _QUOTE.match(line):
                list_indent = None
        out.append(line)
        blank_before = False
    return "\n".join(out)
