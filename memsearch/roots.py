"""Where memory lives: roots, their kinds, default locations and the config
file's roots (what a path means in each: memsearch.layout).

    mimo    <root>/{global,projects,sessions}/<scope_id>/...        see memsearch.layout
    claude  <config>/projects/<project>/memory/**.md                scope cc, scope id <project>
    zcode   <storage>/cli/memories/projects/<slug>-<hash16>/memory/**.md
                                                                    scope zcode, scope id <slug>-<hash16>
    plain   any folder of Markdown                                  no scope
    repos   <folder>/<checkout>/{.claude/memory,CLAUDE.md,...}      scope repo, scope id <checkout>
            (a folder of checkouts; memsearch.discover finds the memory in each)

With several roots in one index a hit's path is prefixed with its root's name
(``cc:<project>/memory/x.md``); a root turned off loses its rows at the next reconcile.
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import NamedTuple

from .errors import InvalidArgument, MemsearchError, RootNotFound, quoted
from .memory_file import MIMO_SCOPES, printable_name
from .settings import absolute, given_path, read_config, xdg_folder

KINDS = ("mimo", "claude", "zcode", "plain", "repos")

# Kinds with no default location: a folder must be given.
FOLDER_ONLY = ("plain", "repos")

# ZCode's storage folder in the home folder, and its project folders below it.
ZCODE_STORAGE = ".zcode"
ZCODE_PROJECTS = "cli/memories/projects"

# Where below the folder named each kind keeps its project folders: the first that exists, else the folder.
PROJECTS_BELOW = {
    "claude": ("projects",),  # ~/.claude (or $CLAUDE_CONFIG_DIR) → ~/.claude/projects
    "zcode": (ZCODE_PROJECTS, "memories/projects", "projects"),  # ~/.zcode → …
}

DEFAULT_NAMES = {"claude": "cc", "zcode": "zcode", "mimo": "mimo"}  # else the folder's name

# Searched when nothing is configured: the agents' memory found on this machine, and their names in help texts.
AGENT_NAMES = {"claude": "Claude Code", "zcode": "ZCode", "mimo": "MiMo"}
AGENT_KINDS = tuple(AGENT_NAMES)

# The kinds that keep memory in <project>/memory/ (memsearch.layout), and the scope their hits get;
# the scope id is the project folder.
SCOPE_OF_KIND = {"claude": "cc", "zcode": "zcode"}

# A repos root's hits: scope, and the type of a checkout's instruction files (memsearch.discover).
REPO_SCOPE, INSTRUCTIONS = "repo", "instructions"

# The scopes each kind of root gives its hits (a plain root gives none).
SCOPES_OF_KIND = {"mimo": MIMO_SCOPES, **{k: (s,) for k, s in SCOPE_OF_KIND.items()}, "plain": (),
                  "repos": (REPO_SCOPE,)}

# Every type a hit can have: from the path, the frontmatter, and a repos root's instruction files.
TYPES = ("memory", "checkpoint", "progress", "notes", "free", "user", "feedback", "project", "reference", INSTRUCTIONS)

# Between the root name and the path in results from several roots.
LABEL_SEP = ":"

EMPTY_ROOT = f"empty root: give a folder, a kind ({', '.join(AGENT_KINDS)}) or KIND=DIR"


class _RootFields(NamedTuple):
    kind: str = "mimo"
    path: str | None = None
    name: str | None = None


class Root(_RootFields):
    """A memory root: its kind, its folder (None: the kind's default location) and its name (None:
    ``cc``, ``zcode``, ``mimo`` or the folder's name), filled in by :func:`resolve`. A subclass of
    its fields, as a NamedTuple cannot check them itself."""

    __slots__ = ()

    def __new__(cls, kind: str = "mimo", path: str | None = None, name: str | None = None):
        if not isinstance(kind, str) or kind not in KINDS:
            raise InvalidArgument(f"unknown root kind {quoted(kind, 60, always=True)}: use one of {', '.join(KINDS)}")
        if path is not None:
            given_path(path, "root path must be a folder's path", EMPTY_ROOT)
        if name is not None and (not isinstance(name, str) or not name or LABEL_SEP in name or "/" in name):
            raise InvalidArgument(f"root name {quoted(name, 60, always=True)} must be non-empty,"
                                  f" without '{LABEL_SEP}' or '/'")
        return super().__new__(cls, kind, path, name)

    def _replace(self, **changes) -> "Root":
        """A copy with some fields changed, checked again (NamedTuple's own skips __new__)."""
        return Root(**{**self._asdict(), **changes})

    @property
    def key(self) -> str:
        """What the index records for the rows of this root: another kind or folder is another root.
        It resolves symlinks each call (Layout keeps it); a name that is not UTF-8 is spelled \\xNN."""
        return f"{self.kind}:{printable_name(os.path.realpath(self.path))}" if self.path else self.kind

    @classmethod
    def parse(cls, spec: str) -> "Root":
        """A root from ``DIR`` (a mimo tree), ``KIND`` (its default location) or ``KIND=DIR``."""
        spec = given_path(spec, "a root must be DIR, KIND or KIND=DIR").strip()  # ("": Root's error, EMPTY_ROOT)
        kind, sep, path = spec.partition("=")
        if sep and kind in KINDS:
            if not path:
                raise InvalidArgument(f"root {quoted(spec, 200, always=True)} names no folder after '='")
            return cls(kind, path)
        if spec in KINDS and spec not in FOLDER_ONLY:
            return cls(spec)
        return cls("mimo", spec)

    def describe(self) -> str:
        return f"{self.name} ({self.kind}): {self.path}"


# -- default locations -------------------------------------------------------------
def default_path(kind: str) -> str:
    home = os.path.expanduser("~")
    if kind == "mimo":
        mimo_home = os.environ.get("MIMOCODE_HOME", "")
        if os.path.isabs(mimo_home):
            return os.path.join(mimo_home, "data", "memory")
        return os.path.join(xdg_folder("XDG_DATA_HOME", os.path.join(".local", "share"), home), "mimocode", "memory")
    if kind == "claude":
        config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        return os.path.join(config, "projects")
    if kind == "zcode":
        return os.path.join(home, ZCODE_STORAGE, *ZCODE_PROJECTS.split("/"))
    raise InvalidArgument(f"a {kind} root has no default location: give its folder ({kind}=DIR)")


def as_list(roots) -> list:
    """A folder, a Root or a list of them, as a list; InvalidArgument for anything else."""
    if isinstance(roots, (str, os.PathLike, Root)):
        return [roots]
    if not isinstance(roots, (bytes, bytearray)):  # a bytes path would be listed as numbers
        with suppress(TypeError):
            return list(roots)
    raise InvalidArgument(f"roots must be a folder, a Root or a list of them, got {type(roots).__name__}")


def default_roots() -> list[Root]:
    """Every agent's memory at its default location (those absent are skipped by :func:`resolve`)."""
    return [Root(kind) for kind in AGENT_KINDS]


def resolve(roots, skipped: list | None = None) -> tuple[Root, ...]:
    """Roots with absolute folders and unique names, checked to exist, from Root objects or folders;
    the same root twice counts once. A default location that does not exist is left out (a note in
    ``skipped``) while another root remains; a folder named that does not exist is RootNotFound."""
    resolved: dict[str, Root] = {}  # by key, the first of each
    absent = []
    for given in roots:
        root = given if isinstance(given, Root) else Root("mimo", given)  # Root checks the path's type
        path = absolute(os.path.expanduser(os.fspath(root.path or default_path(root.kind))), "memory root")
        if root.kind in PROJECTS_BELOW:
            below = (os.path.join(path, *rel.split("/")) for rel in PROJECTS_BELOW[root.kind])
            path = next((folder for folder in below if os.path.isdir(folder)), path)
        if not os.path.isdir(path):
            where = "" if root.path else " (its default location)"
            if root.kind == "mimo" and root.path in FOLDER_ONLY:  # `--root plain`: the kind was meant
                where = f" (a {root.path} root needs its folder: {root.path}=DIR)"
            elif root.kind == "mimo" and root.path and "=" in (spec := os.fspath(root.path)) \
                    and (kind := spec.partition("=")[0]).isidentifier():  # --root bogus=/tmp, not a mistyped folder
                where = f" (no root kind is named {quoted(kind)}: {', '.join(KINDS)})"
            # quoted: a folder name with a line break or an escape forged lines of the one-line error.
            if root.path:
                raise RootNotFound(f"memory root does not exist or is not a directory: {quoted(path)}{where}")
            absent.append(f"{root.kind}: {quoted(path)} does not exist{where}")
            continue
        root = root._replace(path=path)
        resolved.setdefault(root.key, root)  # the key is a realpath: computed once
    if not resolved:
        if absent:
            raise RootNotFound(f"no agent memory found on this machine ({'; '.join(absent)}): pass --root DIR,"
                               " set MEMSEARCH_ROOTS or list roots in the config file")
        raise InvalidArgument("no memory root given")
    if skipped is not None:
        skipped.extend(absent)
    return _named(list(resolved.values()))


def _named(roots: list[Root]) -> tuple[Root, ...]:
    """Give every root a name: explicit ones unique, default ones -2, -3... when they collide."""
    explicit = [r.name for r in roots if r.name]
    if len(explicit) != len(set(explicit)):
        shown = ", ".join(quoted(name, 60, always=True) for name in sorted(explicit))
        raise InvalidArgument(f"two roots have the same name: {shown}")
    taken = set(explicit)
    out = []
    for root in roots:
        if root.name is None:
            default = root.kind != "mimo" or os.path.realpath(root.path) == os.path.realpath(default_path("mimo"))
            base = DEFAULT_NAMES.get(root.kind) if default else None
            if not base:  # the folder's name (no '/' in it), as the index spells one not UTF-8 (it starts every path)
                base = (printable_name(os.path.basename(root.path.rstrip(os.sep))) or "root").replace(LABEL_SEP, "-")
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}-{n}"
            taken.add(name)
            root = root._replace(name=name)
        out.append(root)
    return tuple(out)


# -- roots from the environment and the config file ---------------------------------
def configured() -> list[Root]:
    """The config file's roots (``roots = [...]`` or ``[[roots]]`` tables), but ``enabled = false``."""
    entries = read_config().get("roots", [])
    if not isinstance(entries, list):
        raise MemsearchError("config: roots must be a list of folders, kinds or tables")
    roots = []
    for entry in entries:
        if isinstance(entry, dict):
            if unknown := set(entry) - {"kind", "path", "name", "enabled"}:
                raise MemsearchError(f"config: unknown key(s) in a [[roots]] table: {', '.join(sorted(unknown))}")
            enabled = entry.get("enabled", True)
            if not isinstance(enabled, bool):  # "no" would read as on
                raise MemsearchError(f"config: enabled must be true or false, not {quoted(enabled, 60, always=True)}")
            if not enabled:
                continue
        elif not isinstance(entry, str):
            raise MemsearchError(f"config: a root must be a string or a table, not {quoted(entry, 60, always=True)}")
        try:  # (a string's error says where it is, as a table's does)
            roots.append(Root.parse(entry) if isinstance(entry, str)
                         else Root(entry.get("kind", "mimo"), entry.get("path"), entry.get("name")))
        except ValueError as ex:
            raise MemsearchError(f"config: {ex}") from None
    return roots


def from_environment() -> list[Root]:
    """MEMSEARCH_ROOTS (or MEMSEARCH_ROOT): root specs separated by ``os.pathsep``, read as the command line reads
    them (an empty item is an error, not left out)."""
    value = os.environ.get("MEMSEARCH_ROOTS") or os.environ.get("MEMSEARCH_ROOT") or ""
    return [Root.parse(spec) for spec in value.split(os.pathsep)] if value else []
