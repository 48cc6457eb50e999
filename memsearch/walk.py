"""Walk a memory root: every Markdown file with its fingerprint, and every
file passed over with the reason.

The walk is the floor under every fresh query, so it does one scandir per
directory and one stat per file, nothing more.
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass

from .errors import RootNotFound


@dataclass(frozen=True)
class FileInfo:
    relpath: str  # '/'-separated, relative to the root
    abspath: str
    size: int
    mtime_ns: int

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.size, self.mtime_ns)


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


def fingerprint(size: int, mtime_ns: int) -> str:
    return f"{size}-{mtime_ns}"


def is_markdown(name: str) -> bool:
    return name[-3:].lower() == ".md"


def walk(root: str, max_file_bytes: int) -> tuple[dict[str, FileInfo], list[Skipped]]:
    """All Markdown files under root, keyed by relative path.

    Hidden entries (``.git``, editor swap files, watcher cookies) are passed
    over silently. Symlinks are followed only while they stay inside the
    root, and each real directory is entered once, so loops end.
    """
    real_root = os.path.realpath(root)
    try:
        if not stat_mod.S_ISDIR(os.stat(real_root).st_mode):
            raise RootNotFound(f"memory root is not a directory: {root}")
    except FileNotFoundError:
        raise RootNotFound(f"memory root does not exist: {root}") from None
    files: dict[str, FileInfo] = {}
    skipped: list[Skipped] = []
    seen_dirs = {_dir_key(real_root)}
    stack = [(real_root, "")]
    while stack:
        dirpath, prefix = stack.pop()
        try:
            entries = os.scandir(dirpath)
        except OSError as ex:
            if prefix:  # the root itself failing is not a skip but an error below
                skipped.append(Skipped(prefix.rstrip("/"), f"unreadable directory ({_reason(ex)})"))
                continue
            if not os.path.isdir(real_root):
                raise RootNotFound(f"memory root vanished: {root}") from None
            raise RootNotFound(f"memory root cannot be read: {root} ({_reason(ex)})") from None
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                rel = prefix + _printable(name)
                try:
                    if entry.is_symlink():
                        _follow_link(entry, rel, real_root, seen_dirs, stack, files, skipped, max_file_bytes)
                    elif entry.is_dir(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        key = (st.st_dev, st.st_ino)
                        if key not in seen_dirs:
                            seen_dirs.add(key)
                            stack.append((entry.path, rel + "/"))
                    elif is_markdown(name):
                        st = entry.stat(follow_symlinks=False)
                        _add_file(rel, entry.path, st, files, skipped, max_file_bytes)
                except OSError as ex:  # vanished or unreadable between scandir and stat
                    if not isinstance(ex, FileNotFoundError):
                        skipped.append(Skipped(rel, f"unreadable ({_reason(ex)})"))
    return files, skipped


def _follow_link(entry, rel, real_root, seen_dirs, stack, files, skipped, max_file_bytes):
    target = os.path.realpath(entry.path)
    if target != real_root and not target.startswith(real_root.rstrip(os.sep) + os.sep):
        if is_markdown(entry.name) or os.path.isdir(target):
            skipped.append(Skipped(rel, "symlink points outside the root"))
        return
    try:
        st = os.stat(target)
    except OSError:
        if is_markdown(entry.name):
            skipped.append(Skipped(rel, "broken symlink"))
        return
    if stat_mod.S_ISDIR(st.st_mode):
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            return  # a loop, or a second way into a directory already walked
        seen_dirs.add(key)
        stack.append((target, rel + "/"))
    elif is_markdown(entry.name):
        _add_file(rel, target, st, files, skipped, max_file_bytes)


def _add_file(rel, abspath, st, files, skipped, max_file_bytes):
    if not stat_mod.S_ISREG(st.st_mode):
        skipped.append(Skipped(rel, "not a regular file"))
    elif st.st_size > max_file_bytes:
        skipped.append(Skipped(rel, f"too large ({st.st_size} bytes, cap {max_file_bytes})"))
    else:
        files[rel] = FileInfo(rel, abspath, st.st_size, st.st_mtime_ns)


def _printable(name: str) -> str:
    """File names with bytes that are not UTF-8 can't be stored as text;
    spell those bytes as \\xNN so the path stays unique and readable."""
    if name.isascii():
        return name
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def _dir_key(path):
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def _reason(ex: OSError) -> str:
    return ex.strerror or type(ex).__name__
