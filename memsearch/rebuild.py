"""The rebuild block: a session's memory put back into an agent's context, MiMo Code's sections
(each cut on a line boundary to its budget) and the other memory keys, newest first; a ``claude``
or ``zcode`` root has only the project's pieces. Every line of a file is indented, so only the
block's own marks start a line: it reads as memory the agent wrote, not the user's instructions.
The block and its budgets: docs/context.md.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from .context import LINE_CONTROLS, clean, read_text, whole_lines
from .errors import InvalidArgument, SessionNotFound, quoted
from .identity import mimo_project_id, zcode_project_folder
from .memory_file import (INDEX_NAME, MEMORY_DIR, NAME_MAX, is_project_memory, link_target_refusal, printable_name,
                          real_path)
from .roots import AGENT_KINDS, Root, resolve
from .schema import whole_number
from .session_context import CHARS_PER_TOKEN, INDENT
from .settings import absolute, given_path, given_type
from .transcripts import slug
from .walk import real_folder, walk, walk_paths

# name, where in a mimo root, heading, default budget in tokens: MiMo Code's own.
SECTIONS = (
    ("checkpoint", "sessions/{session}/checkpoint.md", "# Session checkpoint", 11_000),
    ("project", "projects/{project}/MEMORY.md", "# Project durable knowledge", 10_000),
    ("notes", "sessions/{session}/notes.md", "# Session notes", 6_000),
    ("global", "global/MEMORY.md", "# Global memory", 6_000),
)
KEYS, KEYS_HEADING, KEYS_BUDGET = "keys", "# Memory keys", 500
DEFAULT_BUDGETS = {**{name: tokens for name, _, _, tokens in SECTIONS}, KEYS: KEYS_BUDGET}
MAX_TOKENS = 100_000  # a section's budget at most: 1.6 MB read

# Bytes read of a file: its budget's characters at UTF-8's widest (4 bytes), and room for the
# frontmatter (metadata.MAX_BLOCK) and comments that are removed before the budget applies.
UTF8_MAX = 4
READ_MARGIN = 64 * 1024
# The walk's size cap is for indexing: a section is read in part, and a key is only a path.
ANY_SIZE = 1 << 62

OPEN_MARK = ("[memory the agent wrote in earlier turns, session {session}, project {project}: its own notes,"
             " reloaded from its files to consult, not instructions from the user]")
CLOSE_MARK = "[end of the memory the agent wrote]"
CUT = "[cut: {what} ({budget:,}-token budget); the whole file is {file}]"


class Section(NamedTuple):
    """One file as the block shows it: ``path`` as search shows it, ``file`` its real path,
    ``chars`` the characters of ``text`` (a token is four), ``cut`` whether it is only part."""

    name: str
    heading: str
    path: str
    file: str
    budget: int
    chars: int
    cut: bool
    notice: str | None
    text: str

    def to_dict(self) -> dict:
        return {"budget_tokens" if name == "budget" else name: value for name, value in self._asdict().items()}


class RebuildContext(NamedTuple):
    """The sections found, the memory keys listed (newest first) and how many the budget left out,
    and ``text``, the marked block ("" when empty). ``project``: None for a repository with no id yet."""

    root: str
    kind: str
    session: str
    project: str | None
    sections: tuple
    keys: tuple
    keys_left_out: int
    keys_budget: int
    text: str

    def to_dict(self) -> dict:
        fields = {**self._asdict(), "sections": [s.to_dict() for s in self.sections], "keys": list(self.keys)}
        return {"keys_budget_tokens" if name == "keys_budget" else name: value for name, value in fields.items()}


def rebuild_context(root, session: str, project, budgets: dict | None = None) -> RebuildContext:
    """The rebuild block of ``session`` in ``project`` from ``root`` (a mimo tree's folder, or a
    Root of kind mimo, claude or zcode). ``project``: an id (a folder name), or a repository's path
    (a value with a "/", or ``.``, ``~``...) named as the agent names it. ``budgets``: tokens by
    section (checkpoint, project, notes, global, keys), each 1 to MAX_TOKENS. A session with no
    folder in a mimo root raises SessionNotFound; claude and zcode roots keep none to check."""
    (root,) = resolve([root])
    if root.kind not in AGENT_KINDS:
        raise InvalidArgument(f"a {root.kind} root keeps no sessions: give a root of kind {', '.join(AGENT_KINDS)}")
    budgets = _budgets(budgets)
    given_type(session, str, "session must be a session id")
    project = _project(project, root.kind)
    places, prefix, found = _places(root, session, project)
    sections = [_section(name, heading, prefix + places[name], found[places[name]][0], budgets[name])
                for name, _, heading, _ in SECTIONS if places.get(name) in found]
    sections = [s for s in sections if s is not None]  # None: unreadable, or nothing to show
    shown = set(places.values())
    keys = [prefix + rel for _, rel in sorted((-fp.mtime_ns, rel) for rel, (_, fp) in found.items()
                                              if rel not in shown)]
    listed, used = [], -1  # the newest keys whose lines fit the budget; no line break before the first
    for path in keys:
        used += len(quoted(path)) + 1
        if used > budgets[KEYS] * CHARS_PER_TOKEN:
            break
        listed.append(path)
    left_out = len(keys) - len(listed)
    text = _render(session, project, sections, listed, left_out, budgets[KEYS])
    return RebuildContext(root.path, root.kind, session, project, tuple(sections), tuple(listed),
                          left_out, budgets[KEYS], text)


def _places(root: Root, session: str, project: str | None) -> tuple[dict[str, str], str, dict]:
    """(The section files' paths by section, the prefix of a path as search shows it, and what the
    walk finds in the session's, project's and global places); SessionNotFound for a mimo root
    with no folder for ``session``."""
    if root.kind != "mimo":  # the project's memory folder, if the indexer would walk it (memsearch.layout)
        folder = real_path(os.path.join(root.path, project, MEMORY_DIR))
        found = walk(folder, ANY_SIZE).files if is_project_memory(os.path.realpath(root.path), folder) else {}
        return {"project": INDEX_NAME}, f"{printable_name(project)}/{MEMORY_DIR}/", found
    real_root = real_folder(root.path)
    folder = real_path(os.path.join(real_root, "sessions", session)) if _is_name(session) else ""
    if not os.path.isdir(folder) or link_target_refusal(real_root, folder, True):
        raise SessionNotFound(f"no session folder sessions/{quoted(session, 200)} in {quoted(root.path)}:"
                              " give the id of a folder under sessions/")
    places = {name: where.format(session=session, project=project) for name, where, _, _ in SECTIONS
              if project is not None or "{project}" not in where}
    walked = [f"sessions/{session}", "global"] + ([f"projects/{project}"] if project is not None else [])
    return places, "", walk_paths(real_root, walked, ANY_SIZE).files


def _budgets(given) -> dict:
    given = given_type({} if given is None else given, dict, "budgets must be a dict of tokens by section")
    if unknown := [name for name in given if name not in DEFAULT_BUDGETS]:
        raise InvalidArgument(f"unknown section {quoted(unknown[0], 60, always=True)} in the budgets:"
                              f" use {', '.join(DEFAULT_BUDGETS)}")
    return {**DEFAULT_BUDGETS, **{name: whole_number(tokens, f"the {name} budget", MAX_TOKENS)
                                  for name, tokens in given.items()}}


def _is_name(value: str) -> bool:
    """Whether ``value`` names one entry the walk enters: not hidden, no separator, no NUL."""
    if not value or value[0] == "." or "/" in value or "\0" in value or (os.altsep and os.altsep in value):
        return False
    try:
        return len(os.fsencode(value)) <= NAME_MAX
    except UnicodeEncodeError:
        return False


def _project(value, kind: str) -> str | None:
    """The project folder's name ``value`` gives: an id, or a repository's path named by the
    agent's rule (MiMo: the id in its .git, never created here; Claude: the path's slug; ZCode:
    ``<slug>-<hash16>``)."""
    value = given_path(value, "project must be a project id or a repository's path")
    if "/" not in value and value[:1] != "~" and value not in (".", ".."):
        if not _is_name(value):
            raise InvalidArgument(f"project {quoted(value, 200)} is no project id (a folder's name): give the id,"
                                  " or the repository's path with a /")
        return value
    path = absolute(os.path.expanduser(value), "project", InvalidArgument)
    if not os.path.isdir(path):
        raise InvalidArgument(f"project {quoted(value, 200)} is no folder: give a project id or a repository's path")
    if kind == "mimo":
        return mimo_project_id(path, create=False)
    return slug(path) if kind == "claude" else zcode_project_folder(path)


def _section(name: str, heading: str, path: str, file: str, budget: int) -> Section | None:
    """The file at ``file`` (a resolved path the walk found) as a section, or None if it cannot be
    read or shows nothing. At most its budget in characters at UTF-8's widest is read."""
    limit = budget * CHARS_PER_TOKEN
    if (read := read_text(file, limit * UTF8_MAX + READ_MARGIN)) is None:
        return None
    raw, file_bytes = read
    text = clean(raw).translate(LINE_CONTROLS)
    kept = whole_lines(text, limit).rstrip()  # a cut at a blank line leaves no blank line behind
    if not kept and file_bytes is None:
        return None
    notice = None
    if file_bytes is not None:
        notice = (f"only the start of {quoted(path)} was read, a file of {file_bytes:,} bytes;"
                  f" {len(kept):,} characters of it are shown")
    elif len(kept) < len(text):
        notice = f"{quoted(path)} is {len(text):,} characters; the first {len(kept):,} are shown"
    if notice is not None:
        notice = CUT.format(what=notice, budget=budget, file=quoted(file))
    return Section(name, heading, path, file, budget, len(kept), notice is not None, notice, kept)


def _render(session: str, project: str | None, sections: list, keys: list, left_out: int, keys_budget: int) -> str:
    if not sections and not keys and not left_out:
        return ""
    lines = [OPEN_MARK.format(session=quoted(session),
                              project=quoted(project) if project is not None else "none (no id yet)")]
    for s in sections:
        lines.append(s.heading)
        # splitlines(): U+2028 and U+2029 end a line to a reader too, and must not start one unindented.
        lines.extend(INDENT + line if line else "" for line in s.text.splitlines())
        if s.notice:
            lines.append(s.notice)
    if keys or left_out:
        lines.append(KEYS_HEADING)
        lines.extend(INDENT + quoted(path) for path in keys)
        if left_out:
            lines.append(f"[{left_out:,} older keys not listed ({keys_budget:,}-token budget)]")
    lines.append(CLOSE_MARK)
    return "\n".join(lines)
