"""Memory write gate: may this agent write this file? Decided without I/O. Hosts that let models write memory
with ordinary Write/Edit tools call ``check_write`` before every write; rules and reasons: docs/write-gate.md."""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata

from .errors import InvalidArgument, MemsearchError, quoted, shows_nothing
from .memory_file import MIMO_SCOPES, PATH_MAX, is_hidden
from .settings import given_path

__all__ = ["SENSITIVE_SEGMENTS", "WriteDenied", "check_write"]

# Names that run code or hold secrets when planted: VCS internals and hooks,
# editor and agent configuration, package trees, credentials.
SENSITIVE_SEGMENTS = frozenset({".git", "hooks", ".husky", "node_modules", ".vscode", ".idea", ".zcode", ".claude",
                                ".mimocode", "skills", "commands", "agents", "plugins", ".github", ".gitlab", ".env",
                                ".ssh", ".aws", ".config"})

CHECKPOINT_WRITER = "checkpoint-writer"
SANDBOXED_AGENTS = frozenset({"dream", "distill"})
SANDBOX_DIR = ".mimocode"
TASKS_DIR = "tasks"
# ASCII digits only: \d would accept other scripts' digits.
TASK_ID = re.compile(r"T[0-9]+(?:\.[0-9]+)*", re.ASCII)

_DRIVE = re.compile(r"[A-Za-z]:")
_SHORT_NAME = re.compile(r"~[0-9]")
_WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
                             | {f"{d}{n}" for d in ("COM", "LPT") for n in range(10)})
# What renders as nothing: these categories and the default-ignorable code points (errors.IGNORABLE, which HFS+
# drops from names).
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})
# NFKC-stable characters that Windows "best fit" conversion to an ANSI code page turns into one the rules read: yen and
# won are the backslash of Japanese and Korean code pages; the others slash, backslash, ':' and '~' look-alikes (set
# minus is cp1252's backslash, ratio its ':', the tilde operator its '~': "GIT\u223c1" is GIT~1, .git).
_BEST_FIT = str.maketrans({**dict.fromkeys("\u00a5\u20a9\u2216\u29f5\u29f9", "\\"),
                           **dict.fromkeys("\u2044\u2215\u29f8", "/"), **dict.fromkeys("\u0589\u2236", ":"),
                           **dict.fromkeys("\u0303\u223c", "~")})


class WriteDenied(MemsearchError):
    """The memory write gate refused this write."""

    def __init__(self, message: str, *, rule: str):
        super().__init__(message)
        self.rule = rule  # short reason code for hosts and tests


def check_write(target: str | os.PathLike, *, agent: str, memory_root: str | os.PathLike,
                worktree: str | os.PathLike, project_id: str, session_id: str, task_id: str | None = None,
                write_enabled: bool = True) -> str:
    """The normalized absolute path to write ('/'-separated, ``C:/...`` on Windows, no ``.`` or
    ``..``: the host must write exactly that path), or WriteDenied with a message for the model:
    what was refused, why, and what to write instead.

    ``agent``: the writer (``checkpoint-writer``, ``dream``, ``distill``; anything else, or None,
    is the main agent); ``task_id``: set for a sub-agent bound to that task. ``worktree`` must be
    absolute; a relative ``memory_root`` or target is taken relative to it. Bad host arguments
    raise InvalidArgument (a ValueError).
    """
    # Folded so that "Checkpoint-Writer", "dream\u200b" or "checkpoint_writer" cannot slip out of its sandbox.
    agent = "" if agent is None else _fold_agent(given_path(agent, "agent must be a str or path"))
    wt = _root(worktree, "worktree")
    root = _root(memory_root, "memory_root", base=wt)
    project_id, session_id = _id(project_id, "project_id"), _id(session_id, "session_id")
    if task_id is not None and not (isinstance(task_id, str) and TASK_ID.fullmatch(task_id)):
        raise InvalidArgument(f"task_id must look like T3 or T3.1.2, got {quoted(task_id, 80, always=True)}")
    if not isinstance(write_enabled, bool):
        raise InvalidArgument("write_enabled must be True or False")

    given_anchor, given = _split_target(target)
    if given_anchor == "/" and "/" not in (root[0], wt[0]):
        _deny(target, "on Windows a path rooted without a drive letter depends on the current drive",
              "ambiguous", f"Include the drive, as in {_join(wt)}.")
    # The mirror case: beside roots without a drive, "C:/x" is no absolute path (POSIX reads it as the folder "C:" of
    # the current one) and no place the roots can be compared with (Git Bash's /c/... is C:/... too).
    if given_anchor not in (None, "/") and root[0] == wt[0] == "/":
        _deny(target, "a path with a drive letter cannot be judged beside memory and worktree folders without one"
              f" ({_join(root)}, {_join(wt)})", "ambiguous",
              f"Spell it as the worktree is spelled, as in {_join(wt)}/..., or relative to it.")
    # Never empty: _split_target refused a last segment "", "." or "..", and _collapse keeps the last name.
    path = (wt[0], _collapse(wt[1] + given)) if given_anchor is None else (given_anchor, _collapse(given))
    resolved = _join(path)

    rel = _below(path, root)
    folds_into_root = rel is None and _below(path, root, fold=True) is not None
    if not write_enabled and (rel is not None or folds_into_root):
        _deny(target, "writing memory is turned off for this session", "writes-off",
              "Retrying with another memory path will not help; existing memory can still be searched.")
    _check_ambiguity(target, given, given_anchor, (root, wt))
    if folds_into_root:
        _deny(target, f"it differs from the memory root {_join(root)} only in letter case or invisible characters",
              "ambiguous", f"Spell the memory root exactly as {_join(root)}.")

    if rel is not None:
        _check_sensitive(target, rel, _canonical(root, project_id, session_id))
        _check_memory(target, rel, agent, root, project_id, session_id, task_id)
        return resolved

    sandbox = (wt[0], wt[1] + (SANDBOX_DIR,))
    if agent == CHECKPOINT_WRITER:
        _deny(target, f"{CHECKPOINT_WRITER} may write only inside the memory root {_join(root)}", "sandbox",
              _canonical(root, project_id, session_id))
    if agent in SANDBOXED_AGENTS:
        part = _below(path, sandbox)
        if not part:
            _deny(target, f"{agent} may write only inside the memory root {_join(root)} or {_join(sandbox)}/",
                  "sandbox", "Write there instead.")
    else:
        part = _below(path, wt)
        part = path[1] if part is None else part
    _check_sensitive(target, part, "Choose a path that does not go through it.")
    return resolved


def _check_memory(target, rel, agent, root, project_id, session_id, task_id):
    """Rules 3, 4, 5 and 7 for a path relative to the memory root."""
    name, instead = rel[-1] if rel else "", _canonical(root, project_id, session_id)
    if not name.lower().endswith(".md") or len(name) <= 3:
        _deny(target, "only Markdown files (<key>.md) may be written in the memory tree", "extension", instead)
    hidden = next((seg for seg in rel if is_hidden(seg)), None)
    if hidden is not None:  # the indexer passes it over: a note no search would find
        _deny(target, f"{_quoted(hidden)} starts with '.', and memory search never reads hidden files or folders",
              "shape", instead)
    if agent == CHECKPOINT_WRITER:
        if not _checkpoint_allowed(rel, project_id, session_id):
            _deny(target, f"{CHECKPOINT_WRITER} may write only projects/{project_id}/MEMORY.md or memory-*.md,"
                  f" sessions/{session_id}/checkpoint.md, checkpoint-*.md or notes.md, and"
                  f" sessions/{session_id}/tasks/<TID>/<name>.md", "checkpoint-whitelist", "Write one of those files.")
        return
    if len(rel) < 3 or rel[0] not in MIMO_SCOPES:
        _deny(target, "memory files live at <scope>/<scope_id>/<key>.md with scope global, projects or sessions",
              "shape", instead)
    if rel[0] == "sessions" and len(rel) > 3 and rel[2] == TASKS_DIR:
        own = ("sessions", session_id, TASKS_DIR, task_id)
        if task_id is None or rel[:4] != own or len(rel) < 5:
            where = (f"only inside your own task folder {_join(root)}/{'/'.join(own)}/"
                     if task_id else "only by the sub-agent bound to that task")
            _deny(target, f"task folders under sessions/<session_id>/{TASKS_DIR}/ may be written {where}",
                  "task-folder", _canonical(root, project_id, session_id, task_id))
        return
    if len(rel) != 3:
        _deny(target, "memory files live at <scope>/<scope_id>/<key>.md, not deeper", "shape", instead)


def _checkpoint_allowed(rel, project_id, session_id) -> bool:
    match rel:
        case ("projects", pid, name):
            return pid == project_id and (name == "MEMORY.md" or fnmatch.fnmatchcase(name, "memory-*.md"))
        case ("sessions", sid, name):
            return sid == session_id and (name in ("checkpoint.md", "notes.md")
                                          or fnmatch.fnmatchcase(name, "checkpoint-*.md"))
        case ("sessions", sid, "tasks", tid, name):
            return sid == session_id and TASK_ID.fullmatch(tid) is not None and name.lower().endswith(".md")
    return False


def _check_sensitive(target, part, instead):
    for seg in part:
        if _fold(seg) in SENSITIVE_SEGMENTS:
            _deny(target, f"{_quoted(seg)} is a protected name ({_fold(seg)}): files there may be executed or hold"
                  " configuration", "sensitive", instead)


def _check_ambiguity(target, given, anchor, roots):
    """Refuse any segment the host or file system could read as another name (not those of a root, the host's own)."""
    if anchor is None and given[0].startswith("~"):
        _deny(target, "a leading '~' may be expanded to a home directory", "ambiguous",
              "Pass an absolute path or one relative to the worktree.")
    skip = max((len(segs) for r_anchor, segs in roots if anchor == r_anchor and given[:len(segs)] == segs), default=0)
    for seg in given[skip:]:
        if seg in ("", ".", ".."):
            continue
        if reason := _ambiguity(seg):
            plain = _plain(seg)
            usable = plain and plain != seg and _ambiguity(plain) is None and _fold(plain) not in SENSITIVE_SEGMENTS
            hint = (f"Use the plain name {_quoted(plain)}." if usable else
                    "Use a plain name of letters, digits, '-', '_' and '.'.")
            _deny(target, f"path segment {_quoted(seg)} {reason}", "ambiguous", hint)


def _ambiguity(seg: str) -> str | None:
    if any(_invisible(c) for c in seg):
        return "contains a control, zero-width, bidirectional or unassigned character"
    if unicodedata.normalize("NFKC", seg) != unicodedata.normalize("NFC", seg):
        return "contains compatibility characters (full-width or styled forms)"
    fit = seg.translate(_BEST_FIT)  # (seg holds no '/' or '\\': both split the path)
    if "/" in fit or "\\" in fit:
        return "contains a character that some Windows code pages read as a separator"
    if ":" in fit:
        return "contains ':' or a character some Windows code pages read as one (an alternate data stream)"
    if seg != seg.rstrip(". "):
        return "ends with a dot or space, which Windows strips"
    if _SHORT_NAME.search(fit):
        return "looks like a Windows 8.3 short name (GIT~1 is .git)"
    if seg.split(".")[0].rstrip(" ").upper() in _WINDOWS_DEVICES:
        return "is a Windows device name"
    return None


def _invisible(c: str) -> bool:
    return unicodedata.category(c) in _INVISIBLE_CATEGORIES or shows_nothing(c)


def _plain(seg: str) -> str:
    """The name a tolerant host would make of seg (rule 6's normalization)."""
    plain = unicodedata.normalize("NFKC", seg).translate(_BEST_FIT)
    return "".join(c for c in plain if not _invisible(c)).split(":", 1)[0].rstrip(". ")


# Letters cp1252's best fit makes ASCII that no decomposition does: with the marks it drops (".ĝit" is .git), they
# spell protected names (".σsh" is .ssh, ".e∩√" .env).
_FIT_LETTERS = str.maketrans("đħıłŧƀƗƚƟƫƮƶǤǥɡΓΘΣΦΩαδεπστφһĦŁŦ℮∩√", "dhiltbIlOtTzGggGTSFOadepstfhHLTenv")


def _fold(seg: str) -> str:
    # upper() first: NTFS compares upper-cased names, and "ı".upper() is "I". Then spelled as best fit spells it.
    bare = "".join(c for c in unicodedata.normalize("NFKD", _plain(seg)) if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", bare.translate(_FIT_LETTERS).upper().lower())


def _below(path, base, *, fold=False):
    """path's segments below base, or None when it is not inside base."""
    (anchor, segs), (b_anchor, b_segs) = path, base
    if anchor != b_anchor or len(segs) < len(b_segs):
        return None
    key = _fold if fold else str
    same = [key(s) for s in segs[:len(b_segs)]] == [key(s) for s in b_segs]
    return segs[len(b_segs):] if same else None


def _split_target(target):
    """(anchor or None when relative, segments as given)."""
    text = given_path(target, "target must be a str or path")
    if not text.strip():
        _deny(target, "the target path is empty", "invalid", "Name the Markdown file to write.")
    if len(text) > PATH_MAX:  # (each character costs the checks below: no file has such a path anyway)
        _deny(target, f"the target path is longer than {PATH_MAX} characters", "invalid", "Name a shorter path.")
    if "\0" in text:
        _deny(target, "the target path contains a NUL byte", "invalid", "Pass the path without it.")
    anchor, given = _parse(text.replace("\\", "/"))
    if anchor == "//":
        _deny(target, "UNC and device paths (//server/share, \\\\?\\) are not allowed", "invalid", "Pass a local path.")
    if anchor == ":":
        _deny(target, "a drive-relative path (C:name) depends on the current directory", "invalid",
              "Pass an absolute path or one relative to the worktree.")
    if given[-1] in ("", ".", ".."):
        _deny(target, "it names a directory, not a file", "invalid", "Name the Markdown file to write.")
    return anchor, given


def _parse(text: str):
    """(anchor, segments) of a "/"-separated path: anchor "/" or "C:/", None when relative; "//" (UNC or
    device path) and ":" (drive-relative, C:name) with no segments."""
    if text.startswith("//"):
        return "//", ()
    if text.startswith("/"):
        return "/", tuple(text[1:].split("/"))
    if _DRIVE.match(text):
        return (text[0].upper() + ":/", tuple(text[3:].split("/"))) if text[2:3] == "/" else (":", ())
    return None, tuple(text.split("/"))


def _collapse(segs) -> tuple[str, ...]:
    out: list[str] = []
    for seg in segs:
        if seg == "..":
            if out:  # ".." at the root stays at the root, as in POSIX
                out.pop()  # in place: a copy a ".." made a hostile path of many cost its square
        elif seg not in ("", "."):
            out.append(seg)
    return tuple(out)


def _join(path) -> str:
    return path[0] + "/".join(path[1])


def _canonical(root, project_id, session_id, task_id=None) -> str:
    base = _join(root)
    paths = [f"{base}/projects/{project_id}/MEMORY.md", f"{base}/sessions/{session_id}/notes.md"]
    if task_id:
        paths.append(f"{base}/sessions/{session_id}/{TASKS_DIR}/{task_id}/notes.md")
    return "Write to " + " or ".join(paths) + " instead."


def _deny(target, why, rule, instead=""):
    raise WriteDenied(f"Refused {_quoted(target)}: {why}. {instead}".rstrip(), rule=rule)


# Characters of a target or segment a refusal quotes, at most: its start and its end (a 1 MB target's file name).
SHOWN_CHARS = 300


def _quoted(value) -> str:
    return quoted(os.fspath(value) if isinstance(value, os.PathLike) else value, SHOWN_CHARS, always=True, ends=True)


_DASHES = re.compile(r"[_\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")


def _fold_agent(name: str) -> str:
    """NFKC, invisible characters dropped (as rule 6's segments), every dash and _ a hyphen, case folded."""
    name = "".join(c for c in unicodedata.normalize("NFKC", name) if not _invisible(c))
    return _DASHES.sub("-", name).strip().casefold()


def _root(value, name, base=None):
    text = given_path(value, f"{name} must be a str or path")
    if "\0" in text:
        raise InvalidArgument(f"{name} contains a NUL byte")
    if text[:1] in ("~", "$", "%"):  # never joined onto the worktree as a folder of that name
        raise InvalidArgument(f"{name} must be expanded first (os.path.expanduser, expandvars),"
                              f" got {quoted(text, 80, always=True)}")
    text = text.replace("\\", "/")
    anchor, segs = _parse(text)
    if anchor == "//":
        raise InvalidArgument(f"{name} must be a local absolute path, got {quoted(text, 80, always=True)}")
    if anchor is None and base is not None and text:
        anchor, segs = base[0], base[1] + segs
    if anchor in (None, ":"):
        raise InvalidArgument(f"{name} must be an absolute path, got {quoted(text, 80, always=True)}")
    return anchor, _collapse(segs)


def _id(value, name) -> str:
    if not isinstance(value, str) or value in ("", ".", "..") or any(c in value for c in "/\\\0") or _ambiguity(value):
        raise InvalidArgument(f"{name} must be a single plain path segment, got {quoted(value, 80, always=True)}")
    return value
