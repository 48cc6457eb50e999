"""Walk a memory root: every Markdown file with its Fingerprint, every file passed over with the
reason. The floor under every fresh query: one scandir a folder, one stat a Markdown file."""

from __future__ import annotations

import os
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import Mapping, NamedTuple

from .errors import RootNotFound
from .fingerprint import MAX_NS, MIN_NS, Fingerprint, key, make, out_of_range
from .memory_file import below, is_markdown, link_target_refusal, on_disk, printable_name, real_path


# Names one file is indexed under at most (itself and symlinks to it: each costs its whole text again), and links one
# folder is walked through (links into a chain of folders, l1 -> d, l2 -> d/d..., walked its rest again each).
LINK_NAMES = 8
# Why a folder reached through a link is passed over: one walked through another link.
WALKED = "symlink loop (directory already walked)"


class Skipped(NamedTuple):
    path: str
    reason: str


def shown_name(folder: str, name: str, prefix: str, skipped: list) -> str | None:
    """An entry's name as the index shows it (printable_name); None, passed over, when its \\xNN
    spelling is another entry's real name (which keeps the path)."""
    if name.isascii():  # almost every one
        return name
    shown = printable_name(name)
    if shown != name and os.path.lexists(os.path.join(folder, shown)):
        skipped.append(Skipped(prefix + shown, "name is not UTF-8 and its escaped form names another file"))
        return None
    return shown


class FileInfo(NamedTuple):
    relpath: str  # '/'-separated, relative to the root
    abspath: str
    fingerprint: Fingerprint


class Known(dict):
    """The index's ``{path: Fingerprint}`` by directory, as a walk looks them up:
    ``{"projects/p1/": {"notes.md": Fingerprint}}`` (no path string per file)."""

    def __init__(self, fingerprints: Mapping[str, Fingerprint]):
        super().__init__()
        for rel, fp in fingerprints.items():
            folder, name = _split(rel)
            self.setdefault(folder, {})[name] = fp


def _split(rel: str) -> tuple[str, str]:
    """("projects/p1/", "notes.md") for "projects/p1/notes.md"."""
    folder, _, name = rel.rpartition("/")
    return (folder + "/" if folder else ""), name


class Walk:
    """What a walk found: files to (re)read, and how the rest compared with the known fingerprints."""

    __slots__ = ("files", "skipped", "unchanged", "missing")

    def __init__(self):
        self.files: dict[str, tuple[str, Fingerprint]] = {}  # relpath -> (abspath, fingerprint)
        self.skipped: list[Skipped] = []
        self.unchanged = 0  # known files whose fingerprint matched (every known path not in files or missing)
        self.missing: list[str] = []  # known paths not found on disk

    def add(self, other: "Walk", prefix: str = "") -> None:
        """Take in the walk of a folder whose paths are shown with ``prefix``."""
        self.unchanged += other.unchanged
        self.files.update((prefix + rel, info) for rel, info in other.files.items())
        self.skipped.extend(s._replace(path=prefix + s.path) for s in other.skipped)
        self.missing.extend(prefix + rel for rel in other.missing)


def real_folder(root: str) -> str:
    real_root = real_path(root)  # a project's memory folder may be a hostile chain of links
    if not os.path.isdir(real_root):
        what = "is not a directory" if os.path.lexists(real_root) else "does not exist"
        raise RootNotFound(f"memory root {what}: {root}")
    return real_root


def walk(root: str, max_file_bytes: int, known: Known | Mapping[str, Fingerprint] | None = None,
         recheck: set[str] | frozenset = frozenset(), *, start: tuple[str, str] | None = None) -> Walk:
    """Every Markdown file under root: one whose fingerprint is in ``known`` (and not in
    ``recheck``) is counted unchanged, any other lands in ``files``. Hidden entries are passed
    over; symlinks followed only inside the root, never to an ancestor or a folder already entered
    through one. ``start``: (folder, its files' relpath prefix ending in "/") to walk instead."""
    real_root = real_folder(root)
    if known is not None and not isinstance(known, Known):
        known = Known(known)
    result = Walk()
    files, skipped = result.files, result.skipped
    unchanged = 0
    pending = dict(known) if known else {}  # directories not walked (yet)
    walked: dict[str, dict] = {}  # walked directories: their known files not found (yet)
    again = Known(dict.fromkeys(recheck))  # recheck, by directory
    linked_dirs: set[str] = set()
    names: dict[str, int] = {}  # how many names each folder reached through a link was walked under
    stack = [start] if start else [(real_root, "")]
    while stack:
        dirpath, prefix = stack.pop()
        if dirpath[len(real_root) + 1:] != prefix[:-1]:  # a link on the way: its files' names past LINK_NAMES
            names[dirpath] = times = names.get(dirpath, 0) + 1  # are never indexed
            if times > LINK_NAMES:
                skipped.append(Skipped(prefix.rstrip("/"), f"a folder walked through {LINK_NAMES} links already"))
                continue
        here = pending.pop(prefix, None)
        here = walked[prefix] = dict(here) if here else {}
        pop = here.pop
        recheck_here = again.get(prefix, ())
        try:
            entries = os.scandir(dirpath)
        except OSError as ex:
            if prefix:
                if not isinstance(ex, FileNotFoundError):  # vanished mid-walk: nothing to index
                    skipped.append(Skipped(prefix.rstrip("/"), unreadable(ex, "unreadable directory")))
                continue
            if not os.path.isdir(real_root):
                raise RootNotFound(f"memory root vanished: {root}") from None
            raise RootNotFound(unreadable(ex, f"memory root cannot be read: {root}")) from None
        with entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                if not name.isascii():
                    name = shown_name(dirpath, name, prefix, skipped)
                    if name is None:
                        continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, prefix + name + "/"))
                        continue
                    if name.endswith(".md") or name[-3:].lower() == ".md":
                        st = entry.stat(follow_symlinks=False)
                        if st.st_size <= max_file_bytes and S_ISREG(st.st_mode) and MIN_NS <= st.st_mtime_ns <= MAX_NS:
                            now = key(st)
                            if pop(name, None) == now and name not in recheck_here:
                                unchanged += 1
                            else:
                                files[prefix + name] = (entry.path, make(now))
                            continue
                        if not S_ISLNK(st.st_mode):
                            add_file(prefix + name, entry.path, st, files, skipped, max_file_bytes)
                            continue
                    elif not entry.is_symlink():
                        continue
                    _follow_link(entry.name, entry.path, prefix + name, dirpath, real_root, linked_dirs,
                                 stack, files, skipped, max_file_bytes)
                except OSError as ex:  # vanished or unreadable between scandir and stat
                    if not isinstance(ex, FileNotFoundError):
                        skipped.append(Skipped(prefix + name, unreadable(ex)))
    if not os.path.isdir(real_root):
        # Gone mid-walk: what was seen is no picture of the tree, and
        # reconciling with it would empty the index.
        raise RootNotFound(f"memory root vanished: {root}")
    # Files reached through links skipped the comparison above; settle them (nothing known: nothing to settle).
    for rel, (_, fp) in list(files.items()) if known else ():
        folder, name = _split(rel)
        here = walked.get(folder)
        if here and here.pop(name, None) == fp and name not in again.get(folder, ()):
            del files[rel]
            unchanged += 1
    result.unchanged = unchanged
    result.missing = [prefix + name for dirs in (walked, pending) for prefix, names in dirs.items() for name in names]
    return result


def _follow_link(name, path, rel, dirpath, real_root, linked_dirs, stack, files, skipped, max_file_bytes):
    """Judge the link at ``path`` (named ``name``, ``rel`` in the index) by its target."""
    target = real_path(path)
    try:
        st = os.stat(target)
    except OSError:
        if is_markdown(name):
            skipped.append(Skipped(rel, "broken symlink"))
        return
    is_dir = S_ISDIR(st.st_mode)
    if not is_dir and not is_markdown(name):
        return
    if refusal := link_target_refusal(real_root, target, is_dir):
        skipped.append(Skipped(rel, refusal))
    elif not is_dir:
        add_file(rel, target, st, files, skipped, max_file_bytes)
    elif below(dirpath, target) is not None or target in linked_dirs:
        skipped.append(Skipped(rel, WALKED))
    else:
        linked_dirs.add(target)
        stack.append((target, rel + "/"))


def add_file(rel, abspath, st, files, skipped, max_file_bytes):
    if not S_ISREG(st.st_mode):
        skipped.append(Skipped(rel, "not a regular file"))
    elif st.st_size > max_file_bytes:
        skipped.append(Skipped(rel, f"too large ({st.st_size} bytes, cap {max_file_bytes})"))
    elif not MIN_NS <= st.st_mtime_ns <= MAX_NS:  # (binding its fingerprint raised OverflowError)
        skipped.append(Skipped(rel, out_of_range(st.st_mtime_ns)))
    else:
        files[rel] = (abspath, make(key(st)))


def unreadable(ex: OSError, what: str = "unreadable") -> str:
    return f"{what} ({ex.strerror or type(ex).__name__})"


def walk_paths(root: str, relpaths, max_file_bytes: int) -> Walk:
    """What walk() would find at just these paths ('/'-separated, files or folders walked whole), spelled as
    it shows them (a name not UTF-8 in \\xNN)."""
    real_root = os.path.realpath(root)
    result = Walk()
    files, skipped = result.files, result.skipped
    entered = {"": real_root}  # the folders reached so far, by index path
    for rel in relpaths:
        parts = rel.split("/")
        if any(not part or part[0] == "." for part in parts):  # "" splits to [""]
            continue
        stack: list[tuple[str, str]] = []
        try:
            folder = _entered(real_root, rel.rpartition("/")[0], entered)
            if folder is None:
                continue
            path = on_disk(folder, parts[-1:])
            st = os.lstat(path)
            if S_ISLNK(st.st_mode):  # a linked folder lands on the stack, walked below
                _follow_link(parts[-1], path, rel, folder, real_root, set(), stack, files, skipped, max_file_bytes)
            elif S_ISDIR(st.st_mode):
                stack.append((path, rel + "/"))
            elif is_markdown(parts[-1]):
                add_file(rel, path, st, files, skipped, max_file_bytes)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as ex:
            skipped.append(Skipped(rel, unreadable(ex)))
            continue
        for start in stack:
            result.add(walk(real_root, max_file_bytes, start=start))
    return result


def _entered(real_root: str, folder: str, entered: dict[str, str | None]) -> str | None:
    """The resolved folder walk() reaches at the index path ``folder`` from the root, or None where it would not
    follow a link on the way (out of the root, hidden, or back to a folder it is in); from the nearest folder in
    ``entered``, which gets those on the way: a folder's files cost one lookup, not one a folder above them (100
    files 2,000 folders deep cost 6 s of lstat)."""
    names = []
    while folder not in entered:
        folder, _, name = folder.rpartition("/")
        names.append(name)
    here = entered[folder]
    for name in reversed(names):
        if here is not None:
            path = on_disk(here, [name])
            if os.path.islink(path):
                path = real_path(path)
                if link_target_refusal(real_root, path, True) or below(here, path) is not None:
                    path = None
            here = path
        folder = f"{folder}/{name}" if folder else name
        entered[folder] = here
    return here
