"""What a file's place says about it, and the walk over all the roots of one
index (:class:`Layout`). In a mimo tree the path gives scope, scope id and type:

    <scope>/<scope_id>/<key>.md            scope in global | projects | sessions
    sessions/<id>/tasks/<TID>/progress.md  type progress
    sessions/<id>/tasks/<TID>/notes.md     type notes
    <any>/checkpoint.md, checkpoint-*.md   type checkpoint
    <any>/MEMORY.md, memory-*.md           type memory (any letter case)

Any other Markdown file is indexed with no scope. As in MiMo Code, only the
memory class ignores letter case: ``Checkpoint.md`` is ``free``. The other
kinds (memsearch.roots) take the scope from the kind, the scope id from the
project folder, and the type from the frontmatter first.
"""

from __future__ import annotations

import os

from . import discover
from .errors import RootNotFound
from .memory_file import MEMORY_DIR, MIMO_SCOPES, is_project_memory, on_disk, real_path
from .roots import INSTRUCTIONS, LABEL_SEP, REPO_SCOPE, SCOPE_OF_KIND, SCOPES_OF_KIND, Root
from .fingerprint import Fingerprint
from .walk import WALKED, Known, Skipped, Walk, shown_name, walk


def classify(relpath: str) -> tuple[str | None, str | None, str]:
    """(scope, scope_id, type) of a '/'-separated path relative to the root."""
    parts = relpath.split("/")
    if len(parts) >= 3 and parts[0] in MIMO_SCOPES:
        return parts[0], parts[1], file_type(parts)
    return None, None, file_type(parts)


# The types a path gives: all a mimo file can have (other kinds take the one declared too).
PATH_TYPES = ("memory", "checkpoint", "progress", "notes", "free")


def file_type(parts: list[str]) -> str:
    name = parts[-1]
    if len(parts) >= 3 and parts[-3] == "tasks" and name in ("progress.md", "notes.md"):
        return name[:-3]
    folded = name.lower()
    if folded.endswith(".md") and (folded == "memory.md" or folded.startswith("memory-")):
        return "memory"
    if name.endswith(".md") and (name == "checkpoint.md" or name.startswith("checkpoint-")):
        return "checkpoint"
    return "free"


class Layout:
    """The roots of one index: how to walk them, how their paths are shown, what a path says."""

    def __init__(self, roots: tuple[Root, ...]):
        self.roots = roots
        self.labelled = len(roots) > 1
        self.by_label = {self.label(r): r for r in roots}
        self.keys = {r: r.key for r in roots}  # every file described asks for its root's key
        self.repos = {self.label(r) for r in roots if r.kind == "repos"}  # their prefixes
        self._split_for = None  # _partition's last (known, prefixes, partition, gone)

    def scopes(self) -> tuple[str, ...]:
        """The scopes hits of these roots can have, in a stable order."""
        return tuple(dict.fromkeys(s for r in self.roots for s in SCOPES_OF_KIND[r.kind]))

    def types(self) -> tuple[str, ...] | None:
        """The types hits of these roots can have; None: any (a root whose files declare their own)."""
        return PATH_TYPES if all(r.kind == "mimo" for r in self.roots) else None

    def label(self, root: Root) -> str:
        return f"{root.name}{LABEL_SEP}" if self.labelled else ""

    def owner(self, path: str) -> tuple[Root, str]:
        """(root, path relative to that root) of a shown path."""
        if not self.labelled:
            return self.roots[0], path
        name, sep, rel = path.partition(LABEL_SEP)
        if (root := self.by_label.get(name + sep)) is None:
            raise KeyError(path)
        return root, rel

    def locate(self, path: str) -> str:
        """The file behind a shown path; a name the walk spelled \\xNN is the real name again, unless
        that spelling is itself a name there."""
        root, rel = self.owner(path)
        return on_disk(root.path, rel.split("/"))

    def describe(self, path: str, meta) -> tuple[str, str | None, str | None, str]:
        """(root key, scope, scope id, type) of a file, from its path and ``meta`` (Metadata or None)."""
        root, rel = self.owner(path)
        key = self.keys[root]
        if root.kind == "mimo":
            return (key, *classify(rel))
        parts = rel.split("/")
        kind = getattr(meta, "type", None) or file_type(parts[-1:])
        if root.kind == "plain":
            return key, None, None, kind
        if root.kind == "repos":
            # A checkout is someone else's: its instruction files cannot type themselves as the
            # user's memory. A frontmatter type counts only in its memory folders.
            return key, REPO_SCOPE, parts[0], INSTRUCTIONS if discover.is_instructions(rel) else kind
        return key, SCOPE_OF_KIND[root.kind], parts[0], kind

    # -- walking ------------------------------------------------------------------
    def starts(self, skipped: list | None = None) -> list[tuple[str, str, bool]]:
        """(folder, prefix of its shown paths, must exist) for every folder to walk; ``skipped`` gets the project
        folders passed over: a name not UTF-8 whose \\xNN spelling is another project's (as walk.shown_name), a
        memory folder linked to one another project's links to."""
        out, skipped = [], [] if skipped is None else skipped
        for root in self.roots:
            label = self.label(root)
            if root.kind in SCOPE_OF_KIND:
                for project, walked in _project_folders(root.path):
                    if (name := shown_name(root.path, project, label, skipped)) is None:
                        continue
                    if walked:
                        skipped.append(Skipped(f"{label}{name}/{MEMORY_DIR}", WALKED))
                        continue
                    out.append((os.path.join(root.path, project, MEMORY_DIR), f"{label}{name}/{MEMORY_DIR}/", False))
            else:
                out.append((root.path, label, True))
        return out

    def walk(self, max_file_bytes: int, known: dict[str, Fingerprint] | None = None,
             recheck: set[str] | frozenset = frozenset(), walker=walk, *, deep: bool = False) -> Walk:
        """``walker`` (walk.walk) over every root, as one walk of one tree of shown paths.
        ``deep``: for repos roots, see discover.walk_checkouts."""

        def walk_one(folder, indexed, again, prefix):
            if prefix in self.repos:
                return discover.walk_checkouts(folder, max_file_bytes, indexed, again, deep=deep)
            return walker(folder, max_file_bytes, indexed, again)

        passed_over: list = []
        starts = self.starts(passed_over)
        whole = len(starts) == 1 and starts[0][1] == "" and starts[0][2]  # one plain tree
        parts, gone = self._partition(known or {}, [prefix for _, prefix, _ in starts], whole)
        if whole:
            return walk_one(starts[0][0], parts[""][1], recheck, "")
        total = Walk()
        for folder, prefix, required in starts:
            mine, indexed = parts.get(prefix, ({}, None))
            again = {p[len(prefix):] for p in recheck if p.startswith(prefix)} if recheck else frozenset()
            try:
                total.add(walk_one(folder, indexed, again, prefix), prefix)
            except RootNotFound:
                if required:
                    raise
                total.missing.extend(prefix + rel for rel in mine)  # the project went away meanwhile
        total.missing.extend(gone)  # rows under no folder walked now: a project or root that is gone
        total.skipped.extend(passed_over)
        return total

    def _partition(self, known: dict[str, Fingerprint], prefixes: list[str], whole: bool = False
                   ) -> tuple[dict[str, tuple[dict[str, Fingerprint], Known]], list[str]]:
        """The known fingerprints split by folder (keyed relative to it, and as the walk looks them
        up), and the paths under none; kept while ``known`` is the same object."""
        cached = self._split_for
        if cached is not None and cached[0] is known and cached[1] == prefixes:
            return cached[2], cached[3]
        parts: dict[str, dict[str, Fingerprint]] = {"": known} if whole else {}
        gone: list[str] = []
        if not whole:
            wanted = set(prefixes)
            for path, fp in known.items():
                prefix = self._prefix_of(path)
                if prefix in wanted:
                    parts.setdefault(prefix, {})[path[len(prefix):]] = fp
                else:
                    gone.append(path)
        # A repos root's walk keeps its own flat form (memsearch.discover).
        indexed = {prefix: (mine, mine if prefix in self.repos else Known(mine)) for prefix, mine in parts.items()}
        self._split_for = (known, list(prefixes), indexed, gone)
        return indexed, gone

    def _prefix_of(self, path: str) -> str:
        try:
            root, rest = self.owner(path)
        except KeyError:  # no root of this index: matches no folder
            name, sep, _ = path.partition(LABEL_SEP)
            return name + sep
        label = self.label(root)
        if root.kind not in SCOPE_OF_KIND:
            return label
        parts = rest.split("/", 2)  # project, memory folder, the file below it
        if len(parts) < 3 or parts[1] != MEMORY_DIR:
            return label + rest  # not where this kind keeps memory: matches no folder
        return f"{label}{parts[0]}/{MEMORY_DIR}/"


def _project_folders(path: str) -> list[tuple[str, bool]]:
    """The project folders of a claude / zcode root that have a memory folder, each with whether it is a link
    to a memory folder another project's links to already (300 such, to one of 1,000 notes: 7 s a query)."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        raise RootNotFound(f"memory root vanished: {path}") from None
    except OSError as ex:
        raise RootNotFound(f"memory root cannot be read: {path} ({ex.strerror})") from None
    # A project or memory folder that is a link must lead inside the root (as open_memory_file), to a
    # project's memory folder: "memory -> .." made every project walk the whole root (N² rows).
    real_root = os.path.realpath(path)
    memory = {e.name: real_path(os.path.join(e.path, MEMORY_DIR)) for e in entries if not e.name.startswith(".")}
    out, aliased = [], set()
    for name, folder in sorted(memory.items()):
        if is_project_memory(real_root, folder):
            alias = folder != os.path.join(real_root, name, MEMORY_DIR)  # another project's, walked again
            out.append((name, alias and folder in aliased))
            if alias:
                aliased.add(folder)
    return out
