"""What a memory file is, one rule for the indexer and ``memory_read``, and how to open one without ever leaving
its root: a Markdown file (``.md``, any case) with no hidden part in its path, in a root of projects (claude, zcode)
in ``<project>/memory/``; a symlink is followed only to such a path inside the root. Resolved as the walk resolves
it, then opened one name at a time with ``O_NOFOLLOW`` (docs/hostile-content.md).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import Callable

from .errors import NotAMemoryFile
from .fingerprint import same_file

# Linux's limits (macOS has 1024 for the path): a longer name or path names no file at all,
# so it is refused before any work that grows with its size.
NAME_MAX = 255
PATH_MAX = 4096
# An id (a folder's or a transcript's name) as a hit's label quotes it, taken back as an argument: NAME_MAX bytes,
# each spelled in up to 5 characters (\\xNN of a name that is not UTF-8, escaped), and the quotes.
MAX_ID_CHARS = 5 * NAME_MAX + 2

# Links one path may go through, here as for the walk (which reads the resolved path, so past the kernel's 40):
# a chain of any length cost each of its links the rest of it, and Python's realpath recursion.
MAX_LINKS = 100

# The top folders of a mimo tree, each a scope (see memsearch.layout).
MIMO_SCOPES = ("global", "projects", "sessions")

# A claude or zcode project keeps its memory in this folder of its own.
MEMORY_DIR = "memory"

# The index of a folder of memories (Claude Code's spelling), loaded into the agent's context.
INDEX_NAME = "MEMORY.md"

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a file swapped for a FIFO after the lstat below must not hang us.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


def is_hidden(name: str) -> bool:
    return name.startswith(".")


def is_markdown(name: str) -> bool:
    return name[-3:].lower() == ".md"


def encodable(text: str) -> bool:
    """Whether SQLite can bind ``text``: a lone surrogate (bytes that were not UTF-8, decoded with
    surrogateescape) is no UTF-8, and no indexed name or id holds one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_name(name: str) -> str:
    """A name with bytes that are not UTF-8 (no text SQLite stores) with those bytes spelled \\xNN."""
    return name if encodable(name) else os.fsencode(name).decode("utf-8", "backslashreplace")


def below(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` ("" for the folder itself), or None when it lies outside: the
    one containment test, on real paths, that every link, read and event is judged by."""
    if path == folder:
        return ""
    head = folder.rstrip(os.sep) + os.sep
    return path[len(head):] if path.startswith(head) else None


def opened_at(fd: int, abspath: str) -> bool:
    """Whether the file open as ``fd`` is the one at ``abspath`` (a resolved path in the root), not one reached
    through a folder swapped for a link since the walk. One deleted or renamed over since it was opened (as editors
    save) still counts ("(deleted)" in /proc); without /proc, abspath is stat()ed."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}") in (abspath, abspath + " (deleted)")
    except OSError:
        try:
            now, opened = os.stat(abspath, follow_symlinks=False), os.fstat(fd)
        except OSError:
            return False
        return same_file(now, opened)


class Unconfined(OSError):
    """What :func:`open_confined` opened is no regular file at its path (``strerror``: why)."""


# Names one resolution looks up in Python at most (a chain past the kernel's 40 links, or a broken one): a link's
# target may hold a PATH_MAX of "d/../", which realpath lstats a name at a time (figures: CHANGELOG.md, session
# 51). Past it, the path is left unresolved, as a chain of over MAX_LINKS.
MAX_LOOKUPS = 2000
_O_PATH = getattr(os, "O_PATH", None)  # Linux: a descriptor of the path itself, resolved by the kernel


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, or ``path`` as it is (as realpath leaves a loop) past MAX_LINKS links or
    MAX_LOOKUPS names: realpath recurses once a link, so a chain of 1,000 under a root raised RecursionError at
    every walk. A path the kernel resolves (40 links at most) is resolved by it, in C, in one call."""
    try:
        if _O_PATH is None:
            os.stat(path)  # the kernel followed at most its 40 links: realpath follows as few
        else:
            resolved = _resolved_by_kernel(path)
            if resolved is not None:
                return resolved
    except OSError:  # a broken link, a loop or a longer chain: counted first
        if _too_many_links(path):
            return path
    try:
        return os.path.realpath(path)
    except RecursionError:  # a chain made longer since
        return path


def _resolved_by_kernel(path: str) -> str | None:
    """The path the kernel resolves ``path`` to (OSError if it cannot), or None without /proc."""
    fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
    return resolved if resolved.startswith(os.sep) and not resolved.endswith(" (deleted)") else None


def _too_many_links(path: str) -> bool:
    """Whether resolving ``path`` as realpath does goes through over MAX_LINKS links or looks up over MAX_LOOKUPS
    names (a loop ends the count)."""
    names = os.path.abspath(path).split(os.sep)[::-1]  # the names left to look up, the next one last
    here, seen = os.sep, set()
    lookups = 0
    while names:
        name = names.pop()
        if name in ("", "."):
            continue
        if name == "..":
            here = os.path.dirname(here)
            continue
        here = os.path.join(here, name)
        lookups += 1
        if lookups > MAX_LOOKUPS:
            return True
        try:
            target = os.readlink(here)
        except OSError:  # no link (or nothing there): realpath goes on with the names as they are
            continue
        if here in seen:
            return False  # a loop, which realpath leaves unresolved when it meets it again
        seen.add(here)
        if len(seen) > MAX_LINKS:
            return True
        here = os.sep if os.path.isabs(target) else os.path.dirname(here)
        names.extend(target.split(os.sep)[::-1])
    return False


def open_confined(abspath: str, *, confined: bool = True, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """(A read-only descriptor, its fstat()) of the regular file at ``abspath``: the one open of a file memsearch
    reads, non-blocking (a FIFO swapped in never hangs it). ``confined`` (a resolved path a walk found in a root): no
    link is followed, and the file is read only if ``abspath`` still names it (no folder on its way since swapped for
    a link, which could lead out of the root; ``dir_fd``: a name in that folder, confined by the caller). Raises
    OSError: Unconfined with the reason, FileNotFoundError..."""
    fd = os.open(abspath, _FILE_FLAGS if confined else _FILE_FLAGS & ~os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unconfined(0, "not a regular file")
        if confined and dir_fd is None and not opened_at(fd, abspath):
            raise Unconfined(0, "a folder on its path was replaced while it was read")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def link_target_refusal(real_root: str, target: str, is_dir: bool) -> str | None:
    """Why the walk must not follow a link whose resolved target is ``target`` (None: follow it).
    The same rule as :func:`open_memory_file`."""
    rel = below(target, real_root)
    if rel is None:
        return "symlink points outside the root"
    if rel and any(is_hidden(part) for part in rel.split(os.sep)):
        return "symlink points into a hidden folder"
    if not is_dir and not is_markdown(target):
        return "symlink points to a file that is not Markdown"
    return None


def is_project_memory(real_root: str, folder: str) -> bool:
    """Whether the resolved ``folder`` is a project's memory folder inside ``real_root``, the only
    kind the walk enters ("memory -> .." made every project walk the whole root)."""
    return (os.path.isdir(folder) and link_target_refusal(real_root, folder, is_dir=True) is None
            and (below(folder, real_root) or "").split(os.sep)[1:] == [MEMORY_DIR])


def disk_name(shown: str) -> str | None:
    """The real name behind a :func:`printable_name` spelling with ``\\xNN``, or None."""
    if "\\x" not in shown:
        return None
    try:
        raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), shown.encode("utf-8"))
    except UnicodeEncodeError:
        return None
    name = os.fsdecode(raw)
    return name if name != shown and printable_name(name) == shown else None


def on_disk(folder: str, parts: list[str]) -> str:
    """The path of the index path ``parts`` below ``folder``: a name the walk spelled \\xNN is the real
    name again, unless that spelling is itself a name there (as walk.shown_name keeps it)."""
    for part in parts:
        real = disk_name(part)
        if real is not None and not os.path.lexists(os.path.join(folder, part)):
            part = real
        folder = os.path.join(folder, part)
    return folder


def open_memory_file(real_root: str, projects: bool, parts: list[str], shown: str, max_bytes: int,
                     place: Callable[[str], bool] | None = None) -> tuple[int, str]:
    """(A descriptor open for reading, the real path) of the memory file at ``parts`` (names below the root, as a
    hit shows them); ``projects``: the root keeps memory in ``<project>/memory/`` (memsearch.roots.SCOPE_OF_KIND).
    ``place``: for a folder of checkouts (discover.reads), whether discovery reads a path, in place of the
    no-hidden-part rule (``.claude/memory``). Any refusal or OS error is one NotAMemoryFile naming ``shown``."""
    if ".." in parts:
        raise NotAMemoryFile(f"{shown} climbs out of its folder ('..'):"
                             " only memory files inside the memory folder can be read")
    if not parts or not is_markdown(parts[-1]):
        raise NotAMemoryFile(f"only Markdown memory files (.md) can be read, not {shown}")
    if place is not None and not place("/".join(parts)):
        raise NotAMemoryFile(f"{shown} is not in a memory folder or instruction file of a checkout", missing=True)
    if place is None and any(is_hidden(part) for part in parts):
        raise NotAMemoryFile(f"{shown} is in a hidden folder the memory index does not cover")
    if projects and (len(parts) < 3 or parts[1] != MEMORY_DIR):
        raise NotAMemoryFile(f"{shown} is not in a project's memory folder (<project>/{MEMORY_DIR}/...):"
                             " only those are indexed", missing=True)
    try:
        sizes = [len(os.fsencode(part)) for part in parts]
    except UnicodeEncodeError:
        raise NotAMemoryFile(f"{shown} is not valid text (a lone surrogate)") from None
    if any(size > NAME_MAX for size in sizes):
        raise NotAMemoryFile(f"{shown} has a name longer than {NAME_MAX} bytes: no file has such a name")
    if sum(sizes) + len(sizes) > PATH_MAX:
        raise NotAMemoryFile(f"{shown} is longer than {PATH_MAX} bytes: no file has such a path")
    try:
        return _open_below(real_root, projects, parts, shown, max_bytes, place)
    except OSError as ex:  # whatever the race did, one line
        missing = isinstance(ex, (FileNotFoundError, NotADirectoryError))
        raise NotAMemoryFile(f"no memory file at {shown}: use a path from a memory_search hit" if missing
                       else f"cannot read {shown}: {ex.strerror or type(ex).__name__}", missing=missing) from None


def _open_below(real_root: str, projects: bool, parts: list[str], shown: str,
                max_bytes: int, place: Callable[[str], bool] | None) -> tuple[int, str]:
    """Resolved as the walk resolves a link (real_path), judged by the walk's rules, then opened a name at a time."""
    real = real_path(on_disk(real_root, parts))
    # In a root of projects the file stays in the real <project>/memory folder, which the walk starts from.
    home = real_path(on_disk(real_root, parts[:2])) if projects else real_root
    rel = below(real, real_root)
    if not rel or below(real, home) is None:
        raise NotAMemoryFile(f"{shown} leads outside the memory folder: only memory files can be read")
    # "memory -> ..": the walk passes it over (a folder that is not there: no file, said below)
    if projects and os.path.isdir(home) and not is_project_memory(real_root, home):
        raise NotAMemoryFile(f"{shown} is in a link to a folder that is no project's memory folder:"
                             " only those are indexed")
    # The names given were judged up front: a hidden or other name here is a link's.
    if place is None and any(is_hidden(part) for part in rel.split(os.sep)):
        raise NotAMemoryFile(f"{shown} is a link into a hidden folder the memory index does not cover")
    if not is_markdown(real):
        raise NotAMemoryFile(f"{shown} is a link to a file that is not Markdown")
    if place is not None and not place(rel.replace(os.sep, "/")):
        raise NotAMemoryFile(f"{shown} is a link to a file the discovery does not read")
    try:
        fd, opened = _open_resolved(real_root, rel.split(os.sep))
    except Unconfined:  # the one reason for a name opened in a folder's descriptor
        raise NotAMemoryFile(f"{shown} is not a regular file") from None
    except OSError:  # real_path leaves a loop or a chain of over MAX_LINKS unresolved: no name of it opens
        try:
            os.stat(real)  # the kernel follows at most 40 links
        except OSError as ex:
            if ex.errno == errno.ELOOP:
                raise NotAMemoryFile(f"{shown} goes through too many symlinks") from None
        raise
    if opened.st_size > max_bytes:
        os.close(fd)
        raise NotAMemoryFile(f"{shown} is too large to be a memory file ({opened.st_size} bytes, cap {max_bytes})")
    return fd, real


def _open_resolved(real_root: str, names: list[str]) -> tuple[int, os.stat_result]:
    """open_confined() of the resolved path ``names`` below ``real_root``, a name at a time from the root's
    descriptor, none followed if a link: a folder swapped for a link since it was resolved fails to open, with or
    without /proc."""
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in names[:-1]:
            fd, parent = os.open(name, DIR_FLAGS, dir_fd=fd), fd
            os.close(parent)
        return open_confined(names[-1], dir_fd=fd)
    finally:
        os.close(fd)
