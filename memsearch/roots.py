"""Where memory lives: roots, their kinds, and what a path means in each.

    mimo    <root>/{global,projects,sessions}/<scope_id>/...        layout.classify
    claude  <config>/projects/<project>/memory/**.md                scope cc, scope id <project>
    zcode   <storage>/cli/memories/projects/<slug>-<hash16>/memory/**.md
                                                                    scope zcode, scope id <slug>-<hash16>
    plain   any folder of Markdown                                  no scope
    repos   <folder>/<checkout>/{.claude/memory,CLAUDE.md,...}      scope repo, scope id <checkout>
            (a folder of checkouts; memsearch.discover finds the memory in each)

Several roots can share one index. A hit's path is relative to its root; with
several roots it is prefixed with the root's name: ``cc:<project>/memory/x.md``,
``notes:ideas.md``. The name also tells which row belongs to which root, so a
root that is turned off loses its rows at the next reconcile.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from . import discover
from .errors import MemsearchError, RootNotFound
from .layout import classify, file_type
from .memory_file import MEMORY_DIR, link_target_refusal
from .walk import Known, Walk, printable_name, walk

KINDS = ("mimo", "claude", "zcode", "plain", "repos")

# Kinds with no default location: a folder must be given.
FOLDER_ONLY = ("plain", "repos")

# Where, below the folder a user names, each kind keeps its project folders;
# the first that exists wins, else the folder named is taken to be it.
PROJECTS_BELOW = {
    "claude": ("projects",),  # ~/.claude (or $CLAUDE_CONFIG_DIR) → ~/.claude/projects
    "zcode": ("cli/memories/projects", "memories/projects", "projects"),  # ~/.zcode → …
}

DEFAULT_NAMES = {"claude": "cc", "zcode": "zcode", "mimo": "mimo"}  # else the folder's name

# The scope a claude / zcode hit gets; its scope id is the project folder.
SCOPE_OF_KIND = {"claude": "cc", "zcode": "zcode"}

# The scopes each kind of root gives its hits (a plain root gives none).
SCOPES_OF_KIND = {"mimo": ("global", "projects", "sessions"), "claude": ("cc",), "zcode": ("zcode",),
                  "plain": (), "repos": (discover.SCOPE,)}

# Every type a hit can have: from the path (layout.file_type), from the
# frontmatter (metadata.MEMORY_TYPES), and a repos root's instruction files.
TYPES = ("memory", "checkpoint", "progress", "notes", "free", "user", "feedback", "project", "reference",
         discover.INSTRUCTIONS)

# Between the root name and the path in results from several roots.
LABEL_SEP = ":"


class _RootFields(NamedTuple):
    kind: str = "mimo"
    path: str | None = None
    name: str | None = None


class Root(_RootFields):
    """A memory root: its kind, its folder (None: the kind's default
    location) and its name (None: ``cc``, ``zcode``, ``mimo`` or the folder's
    name). :func:`resolve` fills both in. Immutable, compared by value.
    (A subclass of its fields, as a NamedTuple cannot check them itself.)"""

    __slots__ = ()

    def __new__(cls, kind: str = "mimo", path: str | None = None, name: str | None = None):
        if kind not in KINDS:
            raise ValueError(f"unknown root kind {kind!r}: use one of {', '.join(KINDS)}")
        if name is not None and (not name or LABEL_SEP in name or "/" in name):
            raise ValueError(f"root name {name!r} must be non-empty, without '{LABEL_SEP}' or '/'")
        return super().__new__(cls, kind, path, name)

    def _replace(self, **changes) -> "Root":
        """A copy with some fields changed, checked again (NamedTuple's own
        _replace skips __new__)."""
        return Root(**{**self._asdict(), **changes})

    @property
    def key(self) -> str:
        """What the index records for the rows of this root: a root whose
        kind or folder changes is a different root, and its rows are redone.
        (It resolves symlinks: Layout computes it once per root.)"""
        return f"{self.kind}:{os.path.realpath(self.path)}" if self.path else self.kind

    @classmethod
    def parse(cls, spec: str) -> "Root":
        """A root from its command-line spelling:

        ``DIR`` a mimo tree (the core's behaviour), ``KIND`` the kind's
        default location, ``KIND=DIR`` that kind at DIR.
        """
        spec = os.fspath(spec).strip()
        if not spec:
            raise ValueError("empty root: give a folder, a kind (claude, zcode, mimo) or KIND=DIR")
        kind, sep, path = spec.partition("=")
        if sep and kind in KINDS:
            if not path:
                raise ValueError(f"root {spec!r} names no folder after '='")
            return cls(kind, path)
        if spec in KINDS and spec not in FOLDER_ONLY:
            return cls(spec)
        return cls("mimo", spec, name=None)

    def describe(self) -> str:
        return f"{self.name} ({self.kind}): {self.path}"


# -- default locations -------------------------------------------------------------
def default_path(kind: str) -> str:
    """Where an agent of this kind keeps its memory on this machine."""
    home = os.path.expanduser("~")
    if kind == "mimo":
        mimo_home = os.environ.get("MIMOCODE_HOME", "")
        if os.path.isabs(mimo_home):
            return os.path.join(mimo_home, "data", "memory")
        data = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
        return os.path.join(data, "mimocode", "memory")
    if kind == "claude":
        config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        return os.path.join(config, "projects")
    if kind == "zcode":
        return os.path.join(home, ".zcode", "cli", "memories", "projects")
    raise ValueError(f"a {kind} root has no default location: give its folder ({kind}=DIR)")


def resolve(roots) -> tuple[Root, ...]:
    """Roots with absolute folders and unique names, checked to exist.

    ``roots``: Root objects, or folders (str / PathLike) taken as mimo trees.
    The same root given twice counts once.
    """
    resolved: list[Root] = []
    seen_keys: set[str] = set()
    for given in roots:
        root = given if isinstance(given, Root) else Root("mimo", os.fspath(given))
        path = root.path
        if path is None:
            path = default_path(root.kind)
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        if root.kind in PROJECTS_BELOW:
            path = _projects_folder(root.kind, path)
        if not os.path.isdir(path):
            where = "" if root.path else " (its default location)"
            raise RootNotFound(f"memory root does not exist or is not a directory: {path}{where}")
        root = root._replace(path=path)
        if root.key in seen_keys:
            continue
        seen_keys.add(root.key)
        resolved.append(root)
    if not resolved:
        raise ValueError("no memory root given")
    return _named(resolved)


def _projects_folder(kind: str, path: str) -> str:
    for below in PROJECTS_BELOW[kind]:
        candidate = os.path.join(path, *below.split("/"))
        if os.path.isdir(candidate):
            return candidate
    return path


def _named(roots: list[Root]) -> tuple[Root, ...]:
    """Give every root a name; explicit names must be unique, default ones
    get -2, -3... when they collide."""
    explicit = [r.name for r in roots if r.name]
    if len(explicit) != len(set(explicit)):
        raise ValueError(f"two roots have the same name: {sorted(explicit)}")
    taken = set(explicit)
    out = []
    for root in roots:
        if root.name is None:
            base = DEFAULT_NAMES.get(root.kind) if root.kind != "mimo" or _is_default(root) else None
            base = base or _folder_name(root.path)
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}-{n}"
            taken.add(name)
            root = root._replace(name=name)
        out.append(root)
    return tuple(out)


def _is_default(root: Root) -> bool:
    return os.path.realpath(root.path) == os.path.realpath(default_path("mimo"))


def _folder_name(path: str) -> str:
    name = os.path.basename(path.rstrip(os.sep)) or "root"
    return name.replace(LABEL_SEP, "-").replace("/", "-")


# -- roots from the environment and the config file ---------------------------------
def configured(conf: dict | None = None) -> list[Root]:
    """The roots listed in the config file (``roots = [...]`` or
    ``[[roots]]`` tables), without those marked ``enabled = false``."""
    if conf is None:
        from .settings import read_config

        conf = read_config()
    entries = conf.get("roots", [])
    if not isinstance(entries, list):
        raise MemsearchError("config: roots must be a list of folders, kinds or tables")
    roots = []
    for entry in entries:
        if isinstance(entry, str):
            roots.append(Root.parse(entry))
        elif isinstance(entry, dict):
            unknown = set(entry) - {"kind", "path", "name", "enabled"}
            if unknown:
                raise MemsearchError(f"config: unknown key(s) in a [[roots]] table: {', '.join(sorted(unknown))}")
            if entry.get("enabled", True) is False:
                continue
            try:
                roots.append(Root(entry.get("kind", "mimo"), entry.get("path"), entry.get("name")))
            except ValueError as ex:
                raise MemsearchError(f"config: {ex}") from None
        else:
            raise MemsearchError(f"config: a root must be a string or a table, not {entry!r}")
    return roots


def from_environment() -> list[Root]:
    """MEMSEARCH_ROOTS (or MEMSEARCH_ROOT): root specs separated by the
    platform's path separator (``:`` on Unix)."""
    value = os.environ.get("MEMSEARCH_ROOTS") or os.environ.get("MEMSEARCH_ROOT") or ""
    return [Root.parse(spec) for spec in value.split(os.pathsep) if spec.strip()]


# -- what a path means in each kind -------------------------------------------------
class Layout:
    """The roots of one index: how to walk them, how their paths are shown,
    and what a path says about a file."""

    def __init__(self, roots: tuple[Root, ...]):
        self.roots = roots
        self.labelled = len(roots) > 1
        self.by_label = {self.label(r): r for r in roots}
        self.keys = {r: r.key for r in roots}  # every file described asks for its root's key
        self._split_for = None  # (known dict, partition) cache

    def scopes(self) -> tuple[str, ...]:
        """The scopes hits of these roots can have, in a stable order."""
        return tuple(dict.fromkeys(s for r in self.roots for s in SCOPES_OF_KIND[r.kind]))

    def label(self, root: Root) -> str:
        return f"{root.name}{LABEL_SEP}" if self.labelled else ""

    def owner(self, path: str) -> tuple[Root, str]:
        """(root, path relative to that root) of a shown path."""
        if not self.labelled:
            return self.roots[0], path
        name, sep, rel = path.partition(LABEL_SEP)
        root = self.by_label.get(name + sep)
        if root is None:
            raise KeyError(path)
        return root, rel

    def locate(self, path: str) -> str:
        """The file behind a shown path."""
        root, rel = self.owner(path)
        return os.path.join(root.path, *rel.split("/"))

    def describe(self, path: str, meta) -> tuple[str, str | None, str | None, str]:
        """(root key, scope, scope id, type) of a file, from where it is and
        what its frontmatter declares (``meta``: metadata.Metadata or None)."""
        root, rel = self.owner(path)
        parts = rel.split("/")
        if root.kind == "mimo":
            scope, scope_id, kind = classify(rel)
            return self.keys[root], scope, scope_id, kind
        declared = meta.type if meta is not None else None
        kind = declared or file_type(parts[-1:])
        if root.kind == "plain":
            return self.keys[root], None, None, kind
        if root.kind == "repos":
            if declared is None and discover.is_instructions(rel):
                kind = discover.INSTRUCTIONS
            return self.keys[root], discover.SCOPE, parts[0], kind
        return self.keys[root], SCOPE_OF_KIND[root.kind], parts[0], kind

    # -- walking ------------------------------------------------------------------
    def starts(self) -> list[tuple[str, str, bool]]:
        """(folder, prefix of its shown paths, must exist) for every folder to walk."""
        out = []
        for root in self.roots:
            label = self.label(root)
            if root.kind in SCOPE_OF_KIND:
                for project in _project_folders(root.path):
                    name = project if project.isascii() else printable_name(project)
                    out.append((os.path.join(root.path, project, MEMORY_DIR), f"{label}{name}/{MEMORY_DIR}/", False))
            else:
                out.append((root.path, label, True))
        return out

    def walk(self, max_file_bytes: int, known: dict[str, str] | None = None,
             recheck: set[str] | frozenset = frozenset(), walker=walk, *, deep: bool = False) -> Walk:
        """walk.walk over every root, as one walk of one tree of shown paths.
        ``deep``: look for nested instruction files in repos roots too (an
        index build; a query only probes the known places, see
        memsearch.discover)."""
        plain_walk = walker
        repos = {self.label(r) for r in self.roots if r.kind == "repos"}

        def walk(folder, max_bytes, indexed, again, prefix):
            if prefix in repos:
                return discover.walk_checkouts(folder, max_bytes, indexed, again, deep=deep)
            return plain_walk(folder, max_bytes, indexed, again)

        starts = self.starts()
        whole = len(starts) == 1 and starts[0][1] == "" and starts[0][2]  # one plain tree
        parts, gone = self._partition(known or {}, [prefix for _, prefix, _ in starts], whole)
        if whole:
            return walk(starts[0][0], max_file_bytes, parts[""][1], recheck, "")
        total = Walk()
        for folder, prefix, required in starts:
            mine, indexed = parts.get(prefix, ({}, None))
            again = {p[len(prefix):] for p in recheck if p.startswith(prefix)} if recheck else frozenset()
            try:
                seen = walk(folder, max_file_bytes, indexed, again, prefix)
            except RootNotFound:
                if required:
                    raise
                total.missing.extend(prefix + rel for rel in mine)  # the project went away meanwhile
                continue
            total.unchanged += seen.unchanged
            if not prefix:
                total.files.update(seen.files)
                total.skipped.extend(seen.skipped)
                total.missing.extend(seen.missing)
                continue
            total.files.update((prefix + rel, info) for rel, info in seen.files.items())
            total.skipped.extend(s._replace(path=prefix + s.path) for s in seen.skipped)
            total.missing.extend(prefix + rel for rel in seen.missing)
        total.missing.extend(gone)  # rows under no folder walked now: a project or root that is gone
        return total

    def _partition(self, known: dict[str, str], prefixes: list[str], whole: bool = False
                   ) -> tuple[dict[str, tuple[dict[str, str], Known]], list[str]]:
        """The known fingerprints split by the folder they belong to (keyed
        relative to it, and as the walk looks them up), and the paths that
        belong to none. ``whole``: one folder holds them all. Kept while
        ``known`` is the same object: the index caches it until the
        database changes."""
        cached = self._split_for
        if cached is not None and cached[0] is known and cached[1] == prefixes:
            return cached[2], cached[3]
        if whole:
            parts: dict[str, dict[str, str]] = {"": known}
            gone: list[str] = []
        else:
            wanted = set(prefixes)
            parts, gone = {}, []
            for path, fp in known.items():
                prefix = self._prefix_of(path)
                if prefix in wanted:
                    parts.setdefault(prefix, {})[path[len(prefix):]] = fp
                else:
                    gone.append(path)
        indexed = {prefix: (mine, Known(mine)) for prefix, mine in parts.items()}
        self._split_for = (known, list(prefixes), indexed, gone)
        return indexed, gone

    def _prefix_of(self, path: str) -> str:
        label = ""
        rest = path
        if self.labelled:
            name, sep, rest = path.partition(LABEL_SEP)
            label = name + sep
            root = self.by_label.get(label)
        else:
            root = self.roots[0]
        if root is None or root.kind not in SCOPE_OF_KIND:
            return label
        project, sep, below = rest.partition("/")
        folder, sep2, _ = below.partition("/")
        if not sep or not sep2 or folder != MEMORY_DIR:
            return label + rest  # not where this kind keeps memory: matches no folder
        return f"{label}{project}/{MEMORY_DIR}/"


def _project_folders(path: str) -> list[str]:
    """The project folders of a claude / zcode root that have a memory folder."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        raise RootNotFound(f"memory root vanished: {path}") from None
    except OSError as ex:
        raise RootNotFound(f"memory root cannot be read: {path} ({ex.strerror})") from None
    # The walk starts at each <project>/memory and follows links inside it
    # only; a project or memory folder that is itself a link must lead to a
    # folder inside the root (as memory_file.open_memory_file reads them).
    real_root = os.path.realpath(path)
    found = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        memory = os.path.realpath(os.path.join(entry.path, MEMORY_DIR))
        if os.path.isdir(memory) and link_target_refusal(real_root, memory, is_dir=True) is None:
            found.append(entry.name)
    return sorted(found)
