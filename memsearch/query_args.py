"""`memsearch query` arguments read without click, for the common cases only
(importing click costs a one-shot query a third of its run time).

The result must be exactly the keyword arguments click would pass; whenever
that is not certain (help, `--`, an unknown option, a value click would refuse
or that this module does not check), query_kwargs() returns None and click
parses the command line. tests/test_entry.py holds this to click's answer and
to the options the click command declares.
"""

import os
import stat
from typing import NamedTuple

from .settings import DEFAULT_LIMIT, MAX_LIMIT


class Option(NamedTuple):
    """One option of `memsearch query`, for both readers of its command line:
    memsearch.cli builds its click options from OPTIONS, and query_kwargs()."""

    names: tuple[str, ...]  # its spellings
    key: str  # the keyword click passes it as
    help: str
    flag: bool = False
    envvars: tuple[str, ...] = ()  # when left off: the first of these with a non-empty value (click's rule)


OPTIONS = (
    # Several MEMSEARCH_ROOT(S) specs are separated by the path separator (':').
    Option(("--root",), "root", "Memory root, repeatable: claude, zcode or mimo (that agent's memory at its"
           " default location), DIR (a mimo tree) or KIND=DIR (KIND: mimo, claude, zcode, plain, repos)."
           " MEMSEARCH_ROOTS takes several, separated by ':'.", envvars=("MEMSEARCH_ROOTS", "MEMSEARCH_ROOT")),
    Option(("--db",), "db_path", "Index database file.", envvars=("MEMSEARCH_DB",)),
    Option(("--limit", "-n"), "limit", f"Most hits to show, 1 to {MAX_LIMIT}."),
    Option(("--scope",), "scope", "Only this scope (global, projects, sessions; cc, zcode; repo)."),
    Option(("--scope-id",), "scope_id", "Only this scope id (a project or session id; a claude/zcode project"
           " folder; a checkout)."),
    Option(("--type",), "type_", "Only this type (memory, checkpoint, progress, notes, free;"
           " user, feedback, project, reference; instructions)."),
    Option(("--no-reconcile",), "no_reconcile", "Query the index as it is, without walking the tree first.", True),
    Option(("--no-floor",), "no_floor", "Keep low-scoring hits the relative floor would drop.", True),
    Option(("--json",), "as_json", "Print one JSON object.", True),
    Option(("--color",), "color", "Highlight matched words: auto (on a terminal, unless NO_COLOR is set),"
           " always or never."),
)
COLORS = ("auto", "always", "never")
BY_KEY = {o.key: o for o in OPTIONS}
# Option spelling -> the keyword click passes it as.
VALUE_OPTIONS = {name: o.key for o in OPTIONS if not o.flag for name in o.names}
FLAGS = {name: o.key for o in OPTIONS if o.flag for name in o.names}
ENVVARS = {o.key: o.envvars for o in OPTIONS if o.envvars}


def query_kwargs(args, environ=os.environ) -> dict | None:
    """The keyword arguments of the `query` callback for ``args`` (the words
    after `query`), or None when click must read them."""
    words, roots, given = [], [], {}
    rest = iter(args)
    for arg in rest:
        if not arg.startswith("-"):
            words.append(arg)
            continue
        name, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name.startswith("-n") and name != "-n":  # -n5
            name, has_value, value = "-n", "=", name[2:]
        if name in FLAGS and not has_value:
            given[FLAGS[name]] = True
            continue
        if name not in VALUE_OPTIONS:
            return None  # --help, --, an unknown or misspelt option: click says what it is
        if not has_value:
            value = next(rest, None)
            # click would take "-x" as the value; better not to guess what was meant
            if value is None or value.startswith("-"):
                return None
        key = VALUE_OPTIONS[name]
        if key == "root":
            roots.append(value)
        else:
            given[key] = value  # repeated: the last one counts, as in click
    if not words:
        return None
    roots = roots or _from_environment("root", environ, split=True)
    db_path = given["db_path"] if "db_path" in given else _from_environment("db_path", environ)
    limit = _limit(given.get("limit"))
    # A root is a spec (claude, KIND=DIR), checked by the library: a file named "claude" here is no matter.
    if limit is None or given.get("color", "auto") not in COLORS:
        return None
    if db_path is not None and not _usable_path(db_path):
        return None
    return {
        "text": tuple(words), "root": tuple(roots), "db_path": db_path, "limit": limit,
        "scope": given.get("scope"), "scope_id": given.get("scope_id"), "type_": given.get("type_"),
        "no_reconcile": given.get("no_reconcile", False), "no_floor": given.get("no_floor", False),
        "as_json": given.get("as_json", False), "color": given.get("color", "auto"),
    }


def _from_environment(key, environ, split=False):
    for name in ENVVARS[key]:
        value = environ.get(name)
        if value:
            return value.split(os.pathsep) if split else value
    return [] if split else None


def _limit(value):
    """click's int for plain decimals (the library checks the range); None for anything else."""
    if value is None:
        return DEFAULT_LIMIT
    if not (value.isascii() and value.isdigit()) or len(value) > 9:
        return None  # " 5", "+5", "5_0", "0x5", past int()'s digit limit and the like: click decides
    return int(value)


def _usable_path(path):
    """What click.Path(dir_okay=False) lets through: anything absent, else a
    readable file that is no folder. An empty path is left to click too."""
    if not path:
        return False
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True
    except ValueError:  # a NUL in the path
        return False
    return not stat.S_ISDIR(mode) and os.access(path, os.R_OK)
