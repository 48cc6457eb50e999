"""Agent memory inside a folder of checkouts (the ``repos`` root kind).

``--root repos=~/src``: every folder directly under ``~/src`` is a checkout,
its name the scope id of its hits (scope ``repo``). In each checkout the
memory sits where agents keep it:

    folders   .claude/memory/  .agents/memory/  .specify/memory/ (spec-kit)
              memory/ (only when it holds a MEMORY.md, or Markdown alone)
              .claude/rules/  .cursor/rules/  .windsurf/rules/  .clinerules/
              .github/instructions/  .kiro/steering/  .roo/rules/  .amazonq/rules/
    files     CLAUDE.md  CLAUDE.local.md  AGENTS.md  GEMINI.md  .claude/CLAUDE.md
              .github/copilot-instructions.md  .junie/guidelines.md

(Claude Code, Codex and the AGENTS.md family, Gemini CLI, Copilot, Cursor,
Windsurf, Cline, Kiro, Roo, Amazon Q and Junie, from each tool's documented
places.) Only ``.md`` files are read: Cursor's ``.mdc`` rules are not.

A fresh query must not walk the source trees: :func:`walk_checkouts` lists
the root, then each checkout's top level (one scandir), and walks only the
places above that exist, plus a stat of every file found before. Nested
instruction files (``src/api/AGENTS.md``) are found by a deep walk
(``deep=True``: ``memsearch index`` and the watcher), at most NESTED_DEPTH
folders down, never into version control, dependencies, virtual
environments or build output (SKIP_DIRS, or any folder with a pyvenv.cfg).
"""

from __future__ import annotations

import os
from stat import S_ISDIR, S_ISLNK, S_ISREG

from .errors import RootNotFound
from .walk import Known, Skipped, Walk, printable_name

# Folders a checkout keeps memory in, as (top-level entry, rest of the path).
MEMORY_FOLDERS = (
    (".claude", "memory"), (".agents", "memory"), (".specify", "memory"), ("memory", ""),
    (".claude", "rules"), (".cursor", "rules"), (".windsurf", "rules"), (".clinerules", ""),
    (".github", "instructions"), (".kiro", "steering"), (".roo", "rules"), (".amazonq", "rules"),
)

# Single files, relative to the checkout.
MEMORY_FILES = (
    "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".claude/CLAUDE.md",
    ".github/copilot-instructions.md", ".junie/guidelines.md",
)

# Found anywhere in a checkout by the deep walk (Claude Code and the
# AGENTS.md agents read them in subfolders too).
NESTED_NAMES = frozenset({"CLAUDE.md", "AGENTS.md", "GEMINI.md", "CLAUDE.local.md"})

# Instruction files, as opposed to memories: typed "instructions".
INSTRUCTION_FOLDERS = frozenset(f"{top}/{rest}" if rest else top for top, rest in MEMORY_FOLDERS
                                if rest not in ("memory",) and top != "memory")
INSTRUCTIONS = "instructions"

# The deep walk goes this many folders below a checkout, and no further
# inside a memory folder. Monorepos nest packages 3-4 deep; past that a
# CLAUDE.md is more likely vendored than someone's memory.
NESTED_DEPTH = 6
FOLDER_DEPTH = 6

# Never entered: version control, dependencies, virtual environments, caches
# and build output. (Hidden folders are never entered by the deep walk.)
SKIP_DIRS = frozenset({
    "node_modules", "bower_components", "vendor", "venv", "env", "virtualenv", "site-packages",
    "build", "dist", "target", "out", "bin", "obj", "__pycache__", "coverage", "htmlcov", "_build",
    "Pods", "DerivedData", "CMakeFiles",
})

SCOPE = "repo"


def _scan(path: str) -> list[os.DirEntry] | None:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError:
        return None


def checkouts(root: str) -> list[tuple[str, str]]:
    """(name as shown, folder) of every checkout under ``root``: its
    non-hidden folders."""
    entries = _scan(root)
    if entries is None:
        if not os.path.isdir(root):
            raise RootNotFound(f"memory root vanished: {root}")
        raise RootNotFound(f"memory root cannot be read: {root}")
    out = []
    for entry in entries:
        if entry.name[0] == "." or not entry.is_dir(follow_symlinks=False):
            continue
        out.append((printable_name(entry.name), entry.path))
    return out


def _holds_memory(folder: str) -> bool:
    """Whether a checkout's ``memory/`` is agent memory, not source code:
    it has a MEMORY.md index, or only Markdown files (and folders)."""
    entries = _scan(folder)
    if not entries:
        return False
    markdown = False
    for entry in entries:
        name = entry.name
        if name.lower() == "memory.md":
            return True
        if name[0] == ".":
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        if name[-3:].lower() != ".md":
            return False
        markdown = True
    return markdown


def places(checkout: str, entries: list[os.DirEntry] | None = None) -> tuple[list[str], list[str]]:
    """(memory folders, memory files) of one checkout, relative to it, that
    exist now: one scandir of its top level and a stat per candidate."""
    if entries is None:
        entries = _scan(checkout) or []
    names = {e.name for e in entries}
    folders, files = [], []
    for top, rest in MEMORY_FOLDERS:
        if top not in names:
            continue
        rel = f"{top}/{rest}" if rest else top
        path = os.path.join(checkout, *rel.split("/"))
        if not os.path.isdir(path) or os.path.islink(path):
            continue
        if rel == "memory" and not _holds_memory(path):
            continue
        folders.append(rel)
    for rel in MEMORY_FILES:
        if rel.split("/", 1)[0] in names:
            files.append(rel)
    return folders, files


def watched_places(checkout: str) -> list[tuple[str, bool]]:
    """(folder, whole) for the live watcher: the folders of one checkout
    whose changes can change what :func:`places` finds, or what is in them.
    ``whole``: a memory folder, its subfolders watched too; otherwise the
    folder's own entries only (``.claude``, to see ``.claude/memory`` come)."""
    entries = _scan(checkout) or []
    names = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
    out: dict[str, bool] = {}
    for top, rest in MEMORY_FOLDERS:
        if top not in names:
            continue
        path = os.path.join(checkout, top)
        if rest:
            out.setdefault(path, False)
            path = os.path.join(path, rest)
            if not os.path.isdir(path) or os.path.islink(path):
                continue
        out[path] = rest != "" or top != "memory" or _holds_memory(path)
    for rel in MEMORY_FILES:
        top, _, rest = rel.partition("/")
        if rest and top in names:
            out.setdefault(os.path.join(checkout, top), False)
    return list(out.items())


def nested_folders(root: str, rels) -> set[str]:
    """The folders (absolute) that hold nested instruction files among the
    indexed paths ``rels`` (relative to the repos root ``root``): the deep
    walk's finds, below a checkout's top level and outside its places."""
    folders = set()
    for rel in rels:
        checkout, _, inside = rel.partition("/")
        if "/" not in inside or inside in MEMORY_FILES or inside.rpartition("/")[2] not in NESTED_NAMES:
            continue
        if any(inside.startswith((f"{top}/{rest}/" if rest else f"{top}/")) for top, rest in MEMORY_FOLDERS):
            continue
        folders.add(os.path.join(root, checkout, *inside.split("/")[:-1]))
    return folders


def _stat_file(abspath: str, rel: str, real_root: str, max_file_bytes: int, found: dict, skipped: list) -> None:
    """Add one file to ``found`` (or ``skipped``, with the reason). A symlink
    counts only while its target stays inside the root."""
    try:
        st = os.lstat(abspath)
        real = os.path.realpath(abspath)
        if real != abspath:  # a link, or a link on the way: only to a place discovery reads
            if not real.startswith(real_root.rstrip(os.sep) + os.sep):
                skipped.append(Skipped(rel, "symlink points outside the root"))
                return
            if not reads(real_root, real[len(real_root.rstrip(os.sep)) + 1:].replace(os.sep, "/")):
                skipped.append(Skipped(rel, "symlink points to a file the discovery does not read"))
                return
            st = os.stat(real)
            abspath = real  # reconcile reads resolved paths only
    except FileNotFoundError:
        return
    except OSError as ex:
        skipped.append(Skipped(rel, f"unreadable ({ex.strerror or type(ex).__name__})"))
        return
    if S_ISDIR(st.st_mode):
        return
    if not S_ISREG(st.st_mode):
        skipped.append(Skipped(rel, "not a regular file"))
    elif st.st_size > max_file_bytes:
        skipped.append(Skipped(rel, f"too large ({st.st_size} bytes, cap {max_file_bytes})"))
    else:
        found[rel] = (abspath, st.st_size, st.st_mtime_ns)


def _walk_folder(folder: str, prefix: str, real_root: str, max_file_bytes: int, found: dict, skipped: list) -> None:
    """Every Markdown file of a memory folder (hidden entries passed over)."""
    real = os.path.realpath(folder)
    if real != folder and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        skipped.append(Skipped(prefix.rstrip("/"), "symlink points outside the root"))
        return
    stack = [(real, prefix, 0)]  # resolved: reconcile reads resolved paths only
    while stack:
        path, rel, depth = stack.pop()
        entries = _scan(path)
        if entries is None:
            if os.path.isdir(path):
                skipped.append(Skipped(rel.rstrip("/"), "unreadable directory"))
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            shown = rel + printable_name(name)
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
                try:
                    st = entry.stat(follow_symlinks=False)  # no path to build: the floor of a query
                except OSError:
                    st = None
                if st is not None and S_ISREG(st.st_mode) and st.st_size <= max_file_bytes:
                    found[shown] = (entry.path, st.st_size, st.st_mtime_ns)
                else:
                    _stat_file(entry.path, shown, real_root, max_file_bytes, found, skipped)


def _walk_nested(checkout: str, prefix: str, real_root: str, max_file_bytes: int, found: dict,
                 skipped: list) -> None:
    """Instruction files below a checkout's top level (the deep walk)."""
    stack = [(checkout, prefix, 0)]
    while stack:
        path, rel, depth = stack.pop()
        entries = _scan(path)
        if entries is None:
            continue
        dirs = []
        venv = False
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            if name == "pyvenv.cfg":
                venv = True
                break
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIP_DIRS and not (depth == 0 and name == "memory"):
                        dirs.append(entry)
                    continue
            except OSError:
                continue
            if depth and name in NESTED_NAMES:
                _stat_file(entry.path, rel + printable_name(name), real_root, max_file_bytes, found, skipped)
        if venv or depth + 1 > NESTED_DEPTH:
            continue
        for entry in dirs:
            stack.append((entry.path, rel + printable_name(entry.name) + "/", depth + 1))


def walk_checkouts(root: str, max_file_bytes: int, known: Known | dict | None = None,
                   recheck: set[str] | frozenset = frozenset(), *, deep: bool = False) -> Walk:
    """What walk.walk() gives for a plain tree, for a folder of checkouts:
    the memory files found (paths ``<checkout>/<place>/...``) compared with
    ``known`` fingerprints. Without ``deep``, the nested files found before
    are stat'ed again, and no new ones are looked for."""
    real_root = os.path.realpath(root)
    if not os.path.isdir(real_root):
        what = "does not exist" if not os.path.lexists(real_root) else "is not a directory"
        raise RootNotFound(f"memory root {what}: {root}")
    found: dict[str, tuple[str, int, int]] = {}
    skipped: list[Skipped] = []
    covered: list[str] = []  # folder prefixes walked, and files probed
    for name, checkout in checkouts(real_root):
        entries = _scan(checkout)
        if entries is None:
            skipped.append(Skipped(name, "unreadable directory"))
            continue
        folders, files = places(checkout, entries)
        for rel in folders:
            prefix = f"{name}/{rel}/"
            covered.append(prefix)
            _walk_folder(os.path.join(checkout, *rel.split("/")), prefix, real_root, max_file_bytes, found, skipped)
        for rel in files:
            _stat_file(os.path.join(checkout, *rel.split("/")), f"{name}/{rel}", real_root, max_file_bytes,
                       found, skipped)
        if deep:
            _walk_nested(checkout, f"{name}/", real_root, max_file_bytes, found, skipped)
    known_flat = _flat(known)
    if not deep:
        # Nested files found by an earlier deep walk: still there?
        walked = tuple(covered)
        for rel in known_flat:
            if rel not in found and not rel.startswith(walked) and "/" in rel:
                _stat_file(os.path.join(real_root, *rel.split("/")), rel, real_root, max_file_bytes, found, skipped)
    result = Walk()
    result.skipped = skipped
    unchanged = 0
    for rel, info in found.items():
        if known_flat.get(rel) == (info[1], info[2]) and rel not in recheck:
            unchanged += 1
        else:
            result.files[rel] = info
    result.unchanged = unchanged
    result.missing = [rel for rel in known_flat if rel not in found]
    return result


_flat_cache: list = [None, None]  # (known object, its flat form): kept while the index is unchanged


def _flat(known) -> dict[str, tuple[int, int] | None]:
    if known is None:
        return {}
    if _flat_cache[0] is known:
        return _flat_cache[1]
    _flat_cache[0], _flat_cache[1] = known, _flatten(known)
    return _flat_cache[1]


def _flatten(known) -> dict[str, tuple[int, int] | None]:
    if isinstance(known, Known):
        return {folder + name: fp for folder, names in known.dirs.items() for name, fp in names.items()}
    flat = {}
    for rel, fp in known.items():
        size, _, mtime_ns = fp.partition("-")
        try:
            flat[rel] = (int(size), int(mtime_ns))
        except ValueError:
            flat[rel] = None
    return flat


def is_instructions(rel: str) -> bool:
    """Whether a path of a repos root (``<checkout>/...``) is an agent's
    instruction file rather than a memory."""
    _, _, inside = rel.partition("/")
    name = inside.rsplit("/", 1)[-1]
    if name in NESTED_NAMES or inside in MEMORY_FILES:
        return True
    return any(inside.startswith(folder + "/") for folder in INSTRUCTION_FOLDERS)


def reads(root: str, rel: str) -> bool:
    """Whether discovery under the repos root ``root`` reads the file at
    ``rel``: a place it reads, and a ``memory/`` folder only when it holds
    agent memory."""
    if not is_memory_path(rel):
        return False
    parts = rel.split("/")
    return parts[1] != "memory" or len(parts) == 2 or _holds_memory(os.path.join(root, parts[0], "memory"))


def is_memory_path(rel: str) -> bool:
    """Whether ``rel`` (relative to a repos root) is a place the discovery
    reads: memory_read accepts these, hidden folders included."""
    parts = rel.split("/")
    if len(parts) < 2 or any(not p or p in (".", "..") for p in parts) or parts[0][0] == ".":
        return False
    inside = "/".join(parts[1:])
    if inside in MEMORY_FILES:
        return True
    for top, rest in MEMORY_FOLDERS:
        folder = f"{top}/{rest}" if rest else top
        if inside.startswith(folder + "/"):
            return not any(p[0] == "." for p in inside[len(folder) + 1:].split("/"))
    return parts[-1] in NESTED_NAMES and not any(p[0] == "." or p in SKIP_DIRS for p in parts)


def is_relevant(rel: str, is_dir: bool) -> bool:
    """Whether a change at ``rel`` (relative to a repos root) can change
    what discovery finds: a checkout itself, a place it reads or a folder
    on the way to one, a nested instruction file."""
    parts = rel.split("/")
    if parts[0][:1] == "." or any(p in SKIP_DIRS for p in parts):
        return False
    if len(parts) == 1:
        return is_dir
    inside = "/".join(parts[1:])
    on_the_way = {f"{top}/{rest}" if rest else top for top, rest in MEMORY_FOLDERS} | {
        top for top, _ in MEMORY_FOLDERS} | {f.split("/")[0] for f in MEMORY_FILES}
    if is_dir and inside in on_the_way:
        return True
    return is_memory_path(rel)


# -- what other kinds of root leave out ----------------------------------------------
HIDDEN_PLACES = tuple(f"{top}/{rest}" if rest else top for top, rest in MEMORY_FOLDERS if top[0] == ".")
HIDDEN_FILES = tuple(f for f in MEMORY_FILES if f[0] == ".")


def hidden_memory(folder: str, limit: int = 100_000) -> int:
    """How many Markdown files sit in hidden memory folders (.claude/memory
    and the like) of ``folder`` or of the folders directly under it: what a
    plain or mimo root on a folder of checkouts never indexes. A bounded
    probe (the folder and its children), for `index` and `status`."""
    count = 0
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
            _walk_folder(path, "", os.path.realpath(folder), 1 << 62, found, [])
            count += len(found)
            if count >= limit:
                return count
    return count
