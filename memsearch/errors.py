"""memsearch's exceptions: every error raised on purpose is a MemsearchError (WriteDenied too), its message
one line saying what happened and what to do next, quoting what it did not write by :func:`quoted`."""

import functools
import re

# C0 and C1 controls and DEL (\xNN), and the bidi controls (\uNNNN), wherever memsearch shows text it did not
# write: it must not drive the terminal nor reorder the line.
CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7f, *range(0x80, 0xa0)]}
CONTROLS.update((c, f"\\u{c:04x}") for c in [0x061c, 0x200e, 0x200f, *range(0x202a, 0x202f), *range(0x2066, 0x206a)])
# And the tag characters (\U000e00NN): they show nothing and spell ASCII, text a model reads and its user never sees.
CONTROLS.update((c, f"\\U{c:08x}") for c in range(0xE0000, 0xE0080))

# And the line and paragraph separators: a name in a message must not start a line read as another error.
_UNPRINTABLE = {**CONTROLS, 0x2028: "\\u2028", 0x2029: "\\u2029"}

# What no answer of memsearch's holds as it is, JSON included: the above but tabs and line breaks, which JSON and
# text show. A host may hand a tool's data to its model in place of its text (Claude Code does), so both need it.
UNSEEN = {c: s for c, s in _UNPRINTABLE.items() if c not in (0x09, 0x0A, 0x0D)}


@functools.cache  # (compiled once a process writes JSON or answers a tool call)
def unseen() -> re.Pattern[str]:
    """Those of UNSEEN that JSON leaves as they are (it escapes C0 itself, \\u001b)."""
    # As ranges: a class of ~200 single characters matched 30 times slower.
    ranges: list[list[int]] = []
    for c in sorted(c for c in UNSEEN if c >= 0x7F):
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]")


# Printable characters that show nothing (the grapheme joiner, Hangul fillers, variation selectors, tags): a name
# holding one is escaped as repr() escapes a control, so it cannot pass for another.
IGNORABLE = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
             (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0000, 0xE0FFF))


def shows_nothing(char: str) -> bool:
    """Whether ``char`` is one of IGNORABLE."""
    return any(lo <= ord(char) <= hi for lo, hi in IGNORABLE)


@functools.cache  # (compiled once a process shows text that is not ASCII)
def _ignorable() -> re.Pattern[str]:
    return re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in IGNORABLE) + "]")


def shows_all(text: str) -> bool:
    """Whether ``text`` holds no character of IGNORABLE."""
    return text.isascii() or _ignorable().search(text) is None


def _escaped(text: str) -> str:
    """repr(), and the characters that show nothing spelled as it spells a control."""
    shown = repr(text)
    return shown if shown.isascii() else _ignorable().sub(
        lambda m: f"\\u{ord(m[0]):04x}" if ord(m[0]) <= 0xFFFF else f"\\U{ord(m[0]):08x}", shown)


# Besides letters and digits, what a name may hold and be shown as it is: file-name and id punctuation, single
# spaces, printable_name's \xNN backslash. A bracket, '·', a quote, two spaces or a control, and it is quoted.
_PLAIN = frozenset("-_./:@+~,=#%&()! \\")


def quoted(value, limit: int | None = None, *, always: bool = False, ends: bool = False) -> str:
    """A name or a caller's value as a line shows it: as it is when plain, else repr() (escaped, in
    quotes: no control reaches a terminal, no "score 99.00" reads as the line's own), cut at ``limit`` (``ends``:
    to its start and its end, a path's file name).
    ``always``: repr() even a plain value (an error echoing an argument: "5" is not 5)."""
    if not isinstance(value, str):
        if isinstance(value, int) and value.bit_length() > 64:  # repr() refuses past 4,300 digits
            return f"a number of {value.bit_length()} bits"
        import reprlib

        return reprlib.repr(value)  # a 1 MB list is cut
    if limit is not None and len(value) > limit:
        head = limit * 2 // 3 if ends else limit
        return f"{_escaped(value[:head])}...{_escaped(value[head - limit:]) if ends else ''}"
    plain = not always and value and value.strip() == value and "  " not in value
    if plain and all(c.isalnum() or c in _PLAIN for c in value) and shows_all(value):
        return value
    return _escaped(value)


class MemsearchError(Exception):
    """Base class of every error memsearch raises on purpose. ``argument``: the caller's argument at fault, by the
    name its message starts with, for a shell to say it as it is typed there (the CLI's --max-tokens for maxTokens)."""

    def __init__(self, *args, argument: str | None = None):
        super().__init__(*args)
        self.argument = argument

    def __str__(self) -> str:
        return super().__str__().translate(_UNPRINTABLE)  # one line, whatever the message quotes


class RootNotFound(MemsearchError):
    """The memory root does not exist or is not a directory."""


class NoSearchableWords(MemsearchError, ValueError):
    """The query has no words to search for (letters, digits or _)."""


class InvalidArgument(MemsearchError, ValueError):
    """An argument of a library call is of the wrong type or outside its range (a limit, role, date)."""


class UnknownFilter(MemsearchError, ValueError):
    """A search filter (scope, type, scope id) names a value no root of the index can give."""


class NotAMemoryFile(MemsearchError, ValueError):
    """A path to read that names no memory file inside the roots; ``missing``: nothing is there."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


class DatabaseError(MemsearchError):
    """The index database cannot be opened or used."""


class DatabaseLocked(DatabaseError):
    """Another process held the index's write lock for too long."""


class DatabaseCorrupt(DatabaseError):
    """The index file is damaged or is not a memsearch database."""


class SchemaTooNew(DatabaseError):
    """The index was written by a newer memsearch; upgrade memsearch or point --db elsewhere."""


class WatcherError(MemsearchError):
    """The watcher cannot follow the roots; queries walk the tree instead."""


class SessionNotFound(MemsearchError, LookupError):
    """No session has that id: no transcript holds it, or a memory root has no folder for it."""


class AmbiguousSession(SessionNotFound):
    """A session id, or its start, names more than one session: give more of it."""
