"""`memsearch query` options, declared once: memsearch.cli builds its click options from OPTIONS, and
query_kwargs() reads the common command lines without click, giving exactly what click would pass, or
None where that is not certain (help, `--`, an unknown option, a value click would refuse)."""

import os
import stat
from typing import NamedTuple

from .settings import DEFAULT_LIMIT, MAX_LIMIT


class Option(NamedTuple):
    names: tuple[str, ...]  # its spellings
    key: str  # the keyword click passes it as
    help: str
    flag: bool = False
    envvars: tuple[str, ...] = ()  # when left off: the first of these with a non-empty value (click's rule)
    kind: str = "text"  # text, spec (repeatable, split at ':' in the environment), int, file, choice
    default: object = None
    choices: tuple[str, ...] = ()


COLORS = ("auto", "always", "never")
OPTIONS = (
    Option(("--root",), "root", "Memory root, repeatable: claude, zcode or mimo (that agent's memory at its"
           " default location), DIR (a mimo tree) or KIND=DIR (KIND: mimo, claude, zcode, plain, repos)."
           " MEMSEARCH_ROOTS takes several, separated by ':'.", envvars=("MEMSEARCH_ROOTS", "MEMSEARCH_ROOT"),
           kind="spec"),
    Option(("--db",), "db_path", "Index database file.", envvars=("MEMSEARCH_DB",), kind="file"),
    # A number click reads; its range is the library's to check (settings.check_limit).
    Option(("--limit", "-n"), "limit", f"Most hits to show, 1 to {MAX_LIMIT}.", kind="int", default=DEFAULT_LIMIT),
    Option(("--scope",), "scope", "Only this scope (global, projects, sessions; cc, zcode; repo)."),
    Option(("--scope-id",), "scope_id", "Only this scope id (a project or session id; a claude/zcode project"
           " folder; a checkout)."),
    Option(("--type",), "type_", "Only this type (memory, checkpoint, progress, notes, free;"
           " user, feedback, project, reference; instructions)."),
    Option(("--no-reconcile",), "no_reconcile", "Query the index as it is, without walking the tree first.", True),
    Option(("--no-floor",), "no_floor", "Keep low-scoring hits the relative floor would drop.", True),
    Option(("--json",), "as_json", "Print one JSON object.", True),
    Option(("--color",), "color", "Highlight matched words: auto (on a terminal, unless NO_COLOR is set),"
           " always or never.", kind="choice", default="auto", choices=COLORS),
)
BY_KEY = {o.key: o for o in OPTIONS}
# Option spelling -> the keyword click passes it as.
VALUE_OPTIONS = {name: o.key for o in OPTIONS if not o.flag for name in o.names}
FLAGS = {name: o.key for o in OPTIONS if o.flag for name in o.names}
SHORT = [name for name in VALUE_OPTIONS if not name.startswith("--")]


def query_kwargs(args, environ=os.environ) -> dict | None:
    """The `query` callback's keyword arguments for ``args`` (after `query`), or None."""
    words, given = [], {}
    rest = iter(args)
    for arg in rest:
        if not arg.startswith("-"):
            words.append(arg)
            continue
        name, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        for short in SHORT:
            if name.startswith(short) and name != short:  # -n5
                name, has_value, value = short, "=", name[len(short):]
        if name in FLAGS and not has_value:
            given[FLAGS[name]] = [True]
            continue
        if name not in VALUE_OPTIONS:
            return None  # --help, --, an unknown or misspelt option: click says what it is
        if not has_value:
            value = next(rest, None)
            # click would take "-x" as the value; better not to guess what was meant
            if value is None or value.startswith("-"):
                return None
        given.setdefault(VALUE_OPTIONS[name], []).append(value)
    if not words:
        return None
    kwargs = {"text": tuple(words)}
    for o in OPTIONS:
        env = next((v for v in map(environ.get, o.envvars) if v), None)  # the first variable set, as click reads
        values = given.get(o.key) or (env and (env.split(os.pathsep) if o.kind == "spec" else [env]))
        if not values:
            kwargs[o.key] = False if o.flag else () if o.kind == "spec" else o.default
        elif o.kind == "spec":
            kwargs[o.key] = tuple(values)
        else:
            value = values[-1]  # repeated: the last one counts, as in click
            if o.kind == "int" and not (value.isascii() and value.isdigit() and len(value) <= 9):
                return None  # " 5", "+5", "5_0", "0x5", past int()'s digit limit and the like: click decides
            if (o.kind == "choice" and value not in o.choices) or (o.kind == "file" and not _usable_path(value)):
                return None
            kwargs[o.key] = int(value) if o.kind == "int" else value
    return kwargs


def _usable_path(path):
    """What click.Path(dir_okay=False) lets through: anything absent, else a readable non-folder ("": click)."""
    if not path:
        return False
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True
    except ValueError:  # a NUL in the path
        return False
    return not stat.S_ISDIR(mode) and os.access(path, os.R_OK)
