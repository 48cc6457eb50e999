"""What file system events ask of the index, gathered into a :class:`Batch` (paths to reconcile,
cookies to acknowledge, a rescan or restart to make): plain data and rules, testable alone.
:class:`Links` keeps the symlinks under the roots, on which inotify never reports.
"""

from __future__ import annotations

import os
import stat
from contextlib import suppress
from typing import NamedTuple

from . import discover
from .freshness import COOKIE_PREFIX
from .memory_file import below
from .roots import Root
from .walk import is_markdown, printable_name


class Followed(NamedTuple):
    """A root as the watcher follows it."""

    root: Root
    folder: str  # resolved, as given to the event source
    label: str  # prefix of the index paths of this root

    @property
    def repos(self) -> bool:
        return self.root.kind == "repos"


class Batch:
    """What the events since the last batch ask for."""

    __slots__ = ("paths", "cookies", "rescan", "restart", "links", "deep", "rewatch", "first", "last")

    def __init__(self):
        self.paths: set[str] = set()
        self.cookies: set[str] = set()
        self.rescan = self.restart = None  # why, when asked for
        self.links = self.deep = False  # only the symlinks need a look; a repos root may hold new nested files
        self.rewatch = False  # a folder in a checkout went, maybe one on the way to nested files: watch them again
        self.first = self.last = 0.0  # monotonic times of the first and the last event

    def urgent(self) -> bool:
        """Whether the batch is to be taken at once, not debounced."""
        return bool(self.cookies or self.rescan or self.restart)

    def due(self, debounce: float, max_delay: float) -> float | None:
        """When its paths are to be written: once events pause ``debounce``, or ``max_delay`` after
        the first if they never do (None: nothing to write)."""
        return min(self.last + debounce, self.first + max_delay) if self.paths or self.links else None

    def touched(self, now: float) -> None:
        self.first = self.first or now
        self.last = now

    def note(self, f: Followed, path: str, kind: str, is_dir: bool, *, links: bool) -> str | None:
        """Add what one event says (``links``: symlinks lie under the roots). "event" when it added
        work, "cookie" when a query waits on it, None when it changes nothing."""
        if path == f.folder:
            if kind == "deleted":
                self.restart = self.restart or f"memory root vanished: {f.folder}"
                return "cookie"  # as urgent
            self.paths.add(f.label)  # the root's own attributes: reconcile it whole
            return "event"
        if (rel := below(path, f.folder)) is None:  # (else "/"-separated: inotify is Linux's)
            return None
        if rel.startswith(COOKIE_PREFIX) and "/" not in rel:
            if kind != "created":
                return None
            self.cookies.add(rel)
            return "cookie"
        if f.repos:
            return self._note_repos(f, rel, kind, is_dir)
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts) or (
                not is_dir and kind in ("modified", "closed", "attrib") and not is_markdown(parts[-1])):
            # Hidden (editor temp files, .git) or an unindexed file's content: no row changes, unless a symlink shows it.
            if not links:
                return None
            self.links = True
            return "event"
        while rel and printable_name(rel) != rel:  # not UTF-8: let the walk of its folder name it
            rel = rel.rpartition("/")[0]
        self.paths.add(f.label + rel)
        return "event"

    def _note_repos(self, f: Followed, rel: str, kind: str, is_dir: bool) -> str | None:
        """A folder of checkouts is discovered, not walked: a change to a place discovery reads (or a
        checkout coming or going) is passed on as its path; source edits are passed over."""
        gone = is_dir and kind == "deleted" and "/" in rel  # the plain walk stats the nested files found before
        if not (gone or discover.is_relevant(rel, is_dir)):
            return None
        inside = rel.partition("/")[2]
        # Only the deep walk finds a new checkout or nested file; it is slow, so only then (the plain one sees the rest).
        in_a_place = inside in discover.MEMORY_FILES or inside.split("/", 1)[0] in discover.TOPS
        if not inside or (not in_a_place and (is_dir or kind == "created") and not gone):
            self.deep = True
        self.rewatch = self.rewatch or gone and not in_a_place
        self.paths.add(f.label + printable_name(rel))  # as the index spells it (any path reconciles the root)
        return "event"


class Links:
    """Index paths of the symlinks under the walked roots, rechecked with every batch: inotify
    reports a change under a link's target, never under the link. (A repos root's symlinks are
    rechecked by its own walk, which every change there runs; its hard links are among its indexed files.)"""

    def __init__(self, followed: list[Followed]):
        self._followed = [f for f in followed if not f.repos]
        self._repos = [f for f in followed if f.repos]
        # hard: Markdown files with more than one hard link, which change with no event when written
        # through a link outside the roots: rechecked before a cookie is answered.
        self.paths, self.hard = set(), set()

    def __bool__(self) -> bool:
        return bool(self.paths)

    def scan(self, index) -> None:
        """Find them again (``index``: the MemoryIndex, reconciled)."""
        self.paths, self.hard = set(), set()
        for f in self._followed:
            _links_under(f.folder, f.label, self.paths, self.hard)
        for f in self._repos:
            for path in index.paths(f.root):
                with suppress(OSError):
                    if _hard_linked(path, os.lstat(index.locate(path))):
                        self.hard.add(path)

    def track(self, paths: set[str], index) -> None:
        """Follow what a batch of ``paths`` changed (``index``: the MemoryIndex, reconciled)."""
        locate = index.locate
        if not self._followed or any(f.label in paths for f in self._followed):  # none, or a root reconciled whole
            self.scan(index)
            return
        found = {}
        for path in paths:
            try:
                file = locate(path)
            except KeyError:
                continue
            found[path] = (file, None)
            with suppress(OSError):  # gone: None
                found[path] = (file, os.lstat(file))
        # What lies at or under a path of the batch is forgotten in one pass, then looked at again: a filter of the
        # sets per path cost a batch of 10,000 touched hard-linked notes minutes of the watcher.
        links = {path for path, (_, st) in found.items() if st is not None and stat.S_ISLNK(st.st_mode)}
        self.hard = {p for p in self.hard if not _under(p, found)}
        others = found.keys() - links
        self.paths = {p for p in self.paths if not _under(p, others)}
        for path, (file, st) in found.items():
            if path in links:
                self.paths.add(path)
            elif st is not None and stat.S_ISDIR(st.st_mode):
                _links_under(file, path + "/", self.paths, self.hard)
            elif st is not None and _hard_linked(path, st):
                self.hard.add(path)


def _under(path: str, folders) -> bool:
    """Whether ``path``, or a folder above it, is one of ``folders`` (index paths)."""
    while path not in folders:
        path, sep, _ = path.rpartition("/")
        if not sep:
            return False
    return True


def _links_under(folder: str, prefix: str, links: set[str], hard: set[str]) -> None:
    """Add to ``links`` the index paths (``prefix`` + relative path) of the symlinks below folder,
    and to ``hard`` those of its Markdown files with more than one hard link, hidden folders left
    out as the walk leaves them out."""
    stack = [(folder, prefix)]
    while stack:
        here, rel = stack.pop()
        with suppress(OSError), os.scandir(here) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_symlink():
                        links.add(rel + printable_name(entry.name))
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, rel + printable_name(entry.name) + "/"))
                    elif is_markdown(entry.name) and _hard_linked(entry.name, entry.stat(follow_symlinks=False)):
                        hard.add(rel + printable_name(entry.name))
                except OSError:
                    continue  # gone since the listing


def _hard_linked(name: str, st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and is_markdown(name.rpartition("/")[2])
