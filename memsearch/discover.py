"""Agent memory inside a folder of checkouts (the ``repos`` root kind, scope ``repo``): every
folder directly under the root is a checkout, its name the scope id. The memory sits where the
agents document it (MEMORY_FOLDERS, MEMORY_FILES; ``memory/`` only when it holds a MEMORY.md or
Markdown alone; ``.md`` only). A fresh query lists the root and each checkout's top level and
walks only the places that exist; nested instruction files (``src/api/AGENTS.md``) are found by
the deep walk (``memsearch index``, the watcher), never in SKIP_DIRS or a pyvenv.cfg folder.
"""

from __future__ import annotations

import functools
import os
import time
from itertools import dropwhile
from stat import S_ISDIR, S_ISLNK, S_ISREG

from .errors import RootNotFound
from .fingerprint import Fingerprint
from .memory_file import below, on_disk, real_path
from .steady import cache_of, dir_key, is_steady, snapshot
from .walk import WALKED, Skipped, Walk, add_file, real_folder, shown_name, unreadable

# Folders a checkout keeps memory in, as (top-level entry, rest of the path).
MEMORY_FOLDERS = (
    (".claude", "memory"), (".agents", "memory"), (".specify", "memory"), ("memory", ""),
    (".claude", "rules"), (".cursor", "rules"), (".windsurf", "rules"), (".clinerules", ""),
    (".github", "instructions"), (".kiro", "steering"), (".roo", "rules"), (".amazonq", "rules"),
)
_FOLDERS = tuple(f"{top}/{rest}" if rest else top for top, rest in MEMORY_FOLDERS)  # relative to the checkout

MEMORY_FILES = (
    "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".claude/CLAUDE.md",
    ".github/copilot-instructions.md", ".junie/guidelines.md",
)

# Found anywhere in a checkout by the deep walk (agents read them in subfolders too).
NESTED_NAMES = frozenset({"CLAUDE.md", "AGENTS.md", "GEMINI.md", "CLAUDE.local.md"})

# Instruction files, as opposed to memories: typed "instructions".
_INSTRUCTION_PREFIXES = tuple(f"{f}/" for f in _FOLDERS if f != "memory" and not f.endswith("/memory"))

# How deep the deep walk goes below a checkout, and a walk inside a memory folder: monorepos
# nest packages 3-4 deep; past that a CLAUDE.md is more likely vendored than memory.
NESTED_DEPTH = 6
FOLDER_DEPTH = 6

# Never entered by the deep walk (nor hidden folders): dependencies, environments, caches, builds.
SKIP_DIRS = frozenset({
    "node_modules", "bower_components", "vendor", "venv", "env", "virtualenv", "site-packages",
    "build", "dist", "target", "out", "bin", "obj", "__pycache__", "coverage", "htmlcov", "_build",
    "Pods", "DerivedData", "CMakeFiles",
})


def _scan(path: str) -> list[os.DirEntry] | None:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError:
        return None


def checkouts(root: str, skipped: list | None = None) -> list[tuple[str, str]]:
    """(name as shown, folder) of every non-hidden folder under ``root``; ``skipped``: those passed over."""
    entries = _scan(root)
    if entries is None:
        raise RootNotFound(f"memory root {'cannot be read' if os.path.isdir(root) else 'vanished'}: {root}")
    skipped = [] if skipped is None else skipped
    found = [(shown_name(root, e.name, "", skipped), e.path) for e in entries
             if e.name[0] != "." and e.is_dir(follow_symlinks=False)]
    return [(shown, path) for shown, path in found if shown is not None]


def _holds_memory(folder: str) -> bool:
    """Whether a checkout's ``memory/`` is agent memory, not source: a MEMORY.md, or Markdown only."""
    markdown = False
    for entry in _scan(folder) or []:
        name = entry.name
        if name.lower() == "memory.md":
            return True
        try:
            if name[0] == "." or entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        if name[-3:].lower() != ".md":
            return False
        markdown = True
    return markdown


class _Seen:
    """What one walk has judged: each checkout's memory/ (agent memory, or source) listed once however many
    links lead into it, and the folders entered through a link, each walked under one such name."""

    def __init__(self):
        self.holds = functools.cache(_holds_memory)
        self.linked: set[str] = set()


def watched_places(checkout: str) -> list[tuple[str, bool]]:
    """(folder, whole) for the watcher: the folders of one checkout whose changes can change what
    the probe finds. ``whole``: a memory folder, subfolders too; else its own entries (``.claude``)."""
    names = {e.name for e in _scan(checkout) or [] if e.is_dir(follow_symlinks=False)}
    out = {os.path.join(checkout, top): False for top in TOPS if top in names}  # on the way to a place
    for (top, rest), rel in zip(MEMORY_FOLDERS, _FOLDERS):
        path = os.path.join(checkout, *rel.split("/"))
        if top in names and (not rest or (os.path.isdir(path) and not os.path.islink(path))):
            out[path] = rest != "" or top != "memory" or _holds_memory(path)
    return list(out.items())


def nested_folders(root: str, rels) -> set[str]:
    """The folders holding the deep walk's finds among the indexed paths ``rels`` below ``root``, and those on the
    way to them from their checkout: a folder renamed raises its event in the folder above it."""
    return {on_disk(root, parts[:end]) for rel in rels  # below a checkout's top level
            if rel.count("/") > 1 and rel.rpartition("/")[2] in NESTED_NAMES and not _in_place(rel)
            for parts in [rel.split("/")] for end in range(2, len(parts))}


def _stat_file(abspath: str, rel: str, real_root: str, max_file_bytes: int, found: dict, skipped: list,
               st: os.stat_result | None = None, holds=_holds_memory) -> None:
    """Add one file to ``found`` (or ``skipped``); a symlink only to a place inside the root. ``st``:
    its lstat, when the caller took one: a regular file needs no realpath. ``holds``: see reads()."""
    if st is not None and S_ISREG(st.st_mode):
        add_file(rel, abspath, st, found, skipped, max_file_bytes)
        return
    try:
        st = os.lstat(abspath)
        real = real_path(abspath)
        if real != abspath:  # a link, or a link on the way: only to a place discovery reads
            inside = below(real, real_root)
            if not inside:
                skipped.append(Skipped(rel, "symlink points outside the root"))
                return
            if not reads(real_root, inside.replace(os.sep, "/"), holds):
                skipped.append(Skipped(rel, "symlink points to a file the discovery does not read"))
                return
            st = os.stat(real)
            abspath = real  # reconcile reads resolved paths only
    except FileNotFoundError:
        return
    except OSError as ex:
        skipped.append(Skipped(rel, unreadable(ex)))
        return
    if not S_ISDIR(st.st_mode):
        add_file(rel, abspath, st, found, skipped, max_file_bytes)


def _walk_folder(folder: str, prefix: str, real_root: str, max_file_bytes: int, found: dict, skipped: list,
                 walked: list, seen: _Seen, resolved: bool = False) -> None:
    """Every Markdown file of a memory folder; ``walked`` gets every folder listed, with its
    steady.dir_key from before the listing. ``resolved``: no folder on the way is a link (no realpath)."""
    real = folder if resolved else real_path(folder)
    if real != folder and not below(real, real_root):
        skipped.append(Skipped(prefix.rstrip("/"), "symlink points outside the root"))
        return
    # Reached through a link (.claude -> src): each file only where discovery reads it, as a link to a file.
    linked = real != folder
    if linked:  # 300 checkouts' .claude -> ../shop/.claude walked shop's memory 300 times
        if real in seen.linked:
            skipped.append(Skipped(prefix.rstrip("/"), WALKED))
            return
        seen.linked.add(real)
    stack = [(real, prefix, 0)]  # resolved: reconcile reads resolved paths only
    while stack:
        path, rel, depth = stack.pop()
        walked.append((path, dir_key(path)))
        entries = _scan(path)
        if entries is None:
            if os.path.isdir(path):
                skipped.append(Skipped(rel.rstrip("/"), "unreadable directory"))
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            shown = shown_name(path, name, rel, skipped)
            if shown is None:
                continue
            shown = rel + shown
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < FOLDER_DEPTH:
                        stack.append((entry.path, shown + "/", depth + 1))
                    else:
                        skipped.append(Skipped(shown, f"deeper than {FOLDER_DEPTH} folders in a memory folder"))
                    continue
            except OSError:
                continue
            if name[-3:].lower() == ".md":
                if linked and not reads(real_root, below(entry.path, real_root).replace(os.sep, "/"), seen.holds):
                    skipped.append(Skipped(shown, "symlink points to a file the discovery does not read"))
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)  # no path to build: the floor of a query
                except OSError:
                    st = None
                _stat_file(entry.path, shown, real_root, max_file_bytes, found, skipped, st, seen.holds)


def _walk_nested(checkout: str, prefix: str, real_root: str, max_file_bytes: int, found: dict, skipped: list,
                 holds=_holds_memory) -> None:
    """Instruction files below a checkout's top level (the deep walk)."""
    stack = [(checkout, prefix, 0)]
    while stack:
        path, rel, depth = stack.pop()
        dirs, files = [], []
        for entry in _scan(path) or []:  # an unreadable folder: nothing found in it
            name = entry.name
            if name[0] == ".":
                continue
            if name == "pyvenv.cfg":  # a virtual environment: none of it, whatever was listed before
                dirs = files = []
                break
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIP_DIRS and not (depth == 0 and name == "memory"):
                        shown = shown_name(path, name, rel, skipped)
                        if shown is not None:
                            dirs.append((entry.path, rel + shown + "/"))
                    continue
            except OSError:
                continue
            if depth and name in NESTED_NAMES:
                files.append((entry.path, rel + name))  # an ASCII name
        for abspath, shown in files:
            _stat_file(abspath, shown, real_root, max_file_bytes, found, skipped, holds=holds)
        if depth < NESTED_DEPTH:
            stack.extend((folder, shown, depth + 1) for folder, shown in dirs)


# Top-level folders whose listing decides what a checkout's places are.
TOPS = tuple(dict.fromkeys([top for top, _ in MEMORY_FOLDERS] + [f.split("/")[0] for f in MEMORY_FILES if "/" in f]))
# Paths inside a checkout that are a place the probe reads (not nested finds).
_PLACE_PREFIXES = tuple(f"{folder}/" for folder in _FOLDERS)
# Folders inside a checkout whose coming or going can change what discovery finds.
_ON_THE_WAY = frozenset(_FOLDERS + TOPS + tuple(f.split("/")[0] for f in MEMORY_FILES))


def _probe(name: str, checkout: str, real_root: str, max_file_bytes: int, found: dict, skipped: list,
           dirs: list, seen: _Seen) -> bool:
    """Probe one checkout's places into ``found``, and the folders and single-file links a steady
    state would rely on into ``dirs`` (memsearch.steady); False when it cannot rely on them (a link
    on the way, a file passed over)."""

    def keep(folder: str) -> bool:  # False: a file, or a link: nothing to keep it by
        key = dir_key(folder)
        if key is not None:
            dirs.append((folder, *key))
        return key is not None

    cacheable = keep(checkout)  # before the listing: a change while it lists is seen next time
    entries = _scan(checkout)
    if entries is None:
        skipped.append(Skipped(name, "unreadable directory"))
        return False
    names = {e.name for e in entries}
    # Folders on the way to a single file that are no link ("": the checkout).
    plain_tops = {"", *(top for top in TOPS if top in names and keep(os.path.join(checkout, top)))}
    cacheable = cacheable and all(top in plain_tops for top in TOPS if top in names)
    mine: dict = {}
    passed_over = len(skipped)
    for (top, _), rel in zip(MEMORY_FOLDERS, _FOLDERS):
        if top not in names:
            continue
        path = os.path.join(checkout, *rel.split("/"))
        if not os.path.isdir(path) or os.path.islink(path) or (rel == "memory" and not seen.holds(path)):
            continue
        walked: list = []
        # A checkout is no link (see checkouts()), a plain top neither, nor this place (just checked).
        _walk_folder(path, f"{name}/{rel}/", real_root, max_file_bytes, mine, skipped, walked,
                     seen, resolved=top in plain_tops)
        for folder, key in walked:
            if folder != os.path.join(checkout, top):  # memory/ is a top already
                if key is None:
                    cacheable = False
                else:
                    dirs.append((folder, *key))
    links = []  # single files that are a link themselves (CLAUDE.md -> AGENTS.md): kept like folders
    for rel in MEMORY_FILES:
        if rel.split("/", 1)[0] not in names:
            continue
        path = os.path.join(checkout, *rel.split("/"))
        st = None
        if rel.rpartition("/")[0] in plain_tops:  # no link on the way: an lstat says it all, no realpath
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            except OSError:
                pass
            if st is not None and S_ISLNK(st.st_mode) and _one_hop(path):
                # A link is replaced, never changed: a new one has a new ctime.
                links.append((path, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        _stat_file(path, f"{name}/{rel}", real_root, max_file_bytes, mine, skipped, st, seen.holds)
    found.update(mine)
    dirs += links
    base, linked = real_root.rstrip(os.sep) + os.sep, {link[0] for link in links}
    # Each file at its shown path, unless a link on the way (or a name shown escaped).
    return cacheable and len(skipped) == passed_over and all(
        abspath == (shown := base + rel.replace("/", os.sep)) or shown in linked for rel, (abspath, _) in mine.items())


def _one_hop(link: str) -> bool:
    """Whether the link at ``link`` (in a real folder) reaches its file through no other link,
    which the probe would not see re-pointed (a ".." after a name may climb back out of one)."""
    try:
        target = os.readlink(link)
    except OSError:
        return False
    climbs_back = ".." in dropwhile("..".__eq__, target.split(os.sep))
    return not climbs_back and os.path.normpath(os.path.join(os.path.dirname(link), target)) == real_path(link)


def walk_checkouts(root: str, max_file_bytes: int, known: dict[str, Fingerprint] | None = None,
                   recheck: set[str] | frozenset = frozenset(), *, deep: bool = False) -> Walk:
    """walk.walk() for a folder of checkouts (paths ``<checkout>/<place>/...``). Without ``deep``,
    nested files found before are stat'ed again, no new ones looked for; steady: nothing listed."""
    real_root = real_folder(root)
    now = time.time_ns()
    cache = cache_of(real_root, max_file_bytes)
    known = {} if known is None else known  # steady states are kept for the very object: see is_steady
    result = Walk()
    if not deep and not recheck and is_steady(cache, known):
        result.unchanged = len(known)
        return result
    nested = [] if deep else [rel for rel in known if "/" in rel and not _in_place(rel)]  # the deep walk's finds
    found: dict[str, tuple[str, Fingerprint]] = {}  # probed afresh: compared below
    skipped = result.skipped
    key = dir_key(real_root)  # before the listing: a change while it lists is seen next time
    # What a steady state would rely on: every folder listed (path, mtime, ctime, inode), and every file
    # found; whole: all of it reached through no link.
    dirs, whole = [(real_root, *key)] if key else [], key is not None
    seen = _Seen()
    for name, checkout in checkouts(real_root, skipped):
        whole = _probe(name, checkout, real_root, max_file_bytes, found, skipped, dirs, seen) and whole
        if deep:
            _walk_nested(checkout, f"{name}/", real_root, max_file_bytes, found, skipped, seen.holds)
    for rel in nested:
        path = on_disk(real_root, rel.split("/"))  # a name the deep walk spelled \xNN: its real one
        _stat_file(path, rel, real_root, max_file_bytes, found, skipped, holds=seen.holds)
        if rel not in found or found[rel][0] != path:
            whole = False
    calm, cache.calm, cache.steady = cache.calm, None, None
    result.files = {rel: info for rel, info in found.items() if known.get(rel) != info[1] or rel in recheck}
    result.unchanged = len(found) - len(result.files)
    result.missing = [rel for rel in known if rel not in found]
    if not (deep or recheck or skipped or result.files or result.missing):
        if calm is known and whole:  # taken at the second calm walk: a one-shot query never pays for it
            cache.steady = snapshot(dirs, found, known, max_file_bytes, now)
        cache.calm = known
    return result


def _in_place(rel: str) -> bool:
    """Whether ``<checkout>/...`` lies in a place the probe reads, not a nested find."""
    inside = rel.partition("/")[2]
    return inside in MEMORY_FILES or inside.startswith(_PLACE_PREFIXES)


def is_instructions(rel: str) -> bool:
    """Whether ``<checkout>/...`` is an agent's instruction file, not a memory."""
    inside = rel.partition("/")[2]
    return (inside.rsplit("/", 1)[-1] in NESTED_NAMES or inside in MEMORY_FILES
            or inside.startswith(_INSTRUCTION_PREFIXES))


def reads(root: str, rel: str, holds=_holds_memory) -> bool:
    """Whether discovery under the repos root ``root`` reads the file at ``rel`` (names on disk, or as
    the index spells them). ``holds``: _holds_memory, or a walk's memo of it."""
    if not is_memory_path(rel):
        return False
    parts = rel.split("/")
    # A nested file: not where the deep walk saw a virtual environment.
    if not _in_place(rel) and any(os.path.lexists(os.path.join(on_disk(root, parts[:i]), "pyvenv.cfg"))
                                  for i in range(1, len(parts))):
        return False
    return parts[1] != "memory" or holds(on_disk(root, [parts[0], "memory"]))


def is_memory_path(rel: str) -> bool:
    """Whether ``rel`` (below a repos root) is a place discovery reads, hidden folders included."""
    parts = rel.split("/")
    if len(parts) < 2 or any(not p or p in (".", "..") for p in parts) or parts[0][0] == ".":
        return False
    inside = "/".join(parts[1:])
    if inside in MEMORY_FILES:
        return True
    for prefix in _PLACE_PREFIXES:
        if inside.startswith(prefix):
            # As deep as _walk_folder goes (FOLDER_DEPTH): memory_read must not open what no search finds.
            below_place = inside[len(prefix):].split("/")
            return len(below_place) <= FOLDER_DEPTH and not any(p[0] == "." for p in below_place)
    # SKIP_DIRS are the source folders the deep walk never enters: not the
    # checkout itself (a checkout may be called build), not a memory place.
    return (parts[-1] in NESTED_NAMES and len(parts) - 2 <= NESTED_DEPTH
            and not any(p[0] == "." or p in SKIP_DIRS for p in parts[1:-1]))


def is_relevant(rel: str, is_dir: bool) -> bool:
    """Whether a change at ``rel`` (below a repos root) can change what discovery finds."""
    parts = rel.split("/")
    if parts[0][:1] == ".":
        return False
    if len(parts) == 1:
        return is_dir
    # At a checkout's top, a link too (.claude -> ../shop/.claude): no folder to inotify, but the walk follows it.
    return ((is_dir or len(parts) == 2) and "/".join(parts[1:]) in _ON_THE_WAY) or is_memory_path(rel)


# -- what other kinds of root leave out ----------------------------------------------
HIDDEN_PLACES = tuple(f for f in _FOLDERS if f[0] == ".")
HIDDEN_FILES = tuple(f for f in MEMORY_FILES if f[0] == ".")


def hidden_memory(folder: str, limit: int = 100_000) -> int:
    """How many Markdown files sit in hidden memory folders (.claude/memory...) of ``folder`` or
    its children: what a plain or mimo root never indexes (for `index` and `status`)."""
    count, seen = 0, _Seen()
    candidates = [folder]
    for entry in _scan(folder) or []:
        try:
            if entry.name[0] != "." and entry.is_dir(follow_symlinks=False):
                candidates.append(entry.path)
        except OSError:
            continue
    for base in candidates:
        count += sum(os.path.isfile(os.path.join(base, *f.split("/"))) for f in HIDDEN_FILES)
        for place in HIDDEN_PLACES:
            path = os.path.join(base, *place.split("/"))
            if not os.path.isdir(path):
                continue
            found: dict = {}
            _walk_folder(path, "", os.path.realpath(folder), 1 << 62, found, [], [], seen)
            count += len(found)
            if count >= limit:
                return count
    return count
