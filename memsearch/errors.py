"""memsearch's exception types: every error memsearch raises on purpose is a
MemsearchError (WriteDenied, in memsearch.write_gate, too). Every message is
one line that says what happened and what to do next, so the CLI can print
``str(error)`` as is.
"""


# C0 and C1 controls and DEL, spelled \xNN wherever memsearch shows text it
# did not write (memsearch.format, messages): it must not drive the terminal.
CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7f, *range(0x80, 0xa0)]}

# Those and the Unicode line and paragraph separators: a folder or file name
# quoted in a message (a root's, an index file's) must neither start a line
# that reads as another error nor drive the terminal.
_UNPRINTABLE = {**CONTROLS, 0x2028: "\\u2028", 0x2029: "\\u2029"}


class MemsearchError(Exception):
    """Base class of every error memsearch raises on purpose."""

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
    """A path to read that names no memory file inside the roots.

    ``missing``: nothing is there (as opposed to something refused)."""

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
