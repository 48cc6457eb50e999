"""`memsearch query` and `memsearch history` options, declared once, and their one parser: query_kwargs() reads
their command lines without click, for the quick path (memsearch.entry) and the click commands alike (memsearch.cli
builds their options from COMMANDS for help); None, for help or a usage error, which click then says."""

import os
import stat
from typing import NamedTuple

from .settings import DEFAULT_LIMIT, MAX_LIMIT


class Option(NamedTuple):
    names: tuple[str, ...]
    key: str  # the keyword click passes it as
    help: str
    flag: bool = False
    envvars: tuple[str, ...] = ()  # when left off: the first of these with a non-empty value (click's rule)
    kind: str = "text"  # text; spec, folders (repeatable, split at ':' in the environment); int, file, choice
    default: object = None
    choices: tuple[str, ...] = ()


COLORS = ("auto", "always", "never")
OPTIONS = (
    # {...}: words from memsearch.roots' tables, filled in by memsearch.cli (the quick path shows no help).
    Option(("--root",), "root", "Memory root, repeatable: {agents} (that agent's memory at its"
           " default location), DIR (a mimo tree) or KIND=DIR (KIND: {kinds})."
           " MEMSEARCH_ROOTS takes several, separated by ':'.", envvars=("MEMSEARCH_ROOTS", "MEMSEARCH_ROOT"),
           kind="spec"),
    Option(("--db",), "db_path", "Index database file.", envvars=("MEMSEARCH_DB",), kind="file"),
    # A number click reads; its range is the library's to check (settings.checked_setting).
    Option(("--limit", "-n"), "limit", f"Most hits to show, 1 to {MAX_LIMIT}.", kind="int", default=DEFAULT_LIMIT),
    Option(("--scope",), "scope", "Only this scope ({scopes})."),
    Option(("--scope-id",), "scope_id", "Only this scope id (a project or session id; a {project_kinds} project"
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
HISTORY_OPTIONS = (
    Option(("--history-root",), "history_root", "Transcript folder, repeatable: a folder of project folders of"
           " *.jsonl (Claude Code's ~/.claude/projects) or a Claude config folder.",
           envvars=("MEMSEARCH_HISTORY_ROOTS",), kind="folders"),
    BY_KEY["db_path"],
    Option(("--project",), "project", "Only this project: its folder name, the working directory it is named after,"
           " or that directory's name (shop for /home/me/shop)."),
    Option(("--session",), "session", "Only this session (its id, or the first characters of it)."),
    Option(("--role",), "role", "Only messages of this role: user, assistant, tool (tool calls and their results),"
           " system, summary."),
    Option(("--since",), "since", "Only messages from this date or time on (ISO 8601, e.g. 2025-01-31)."),
    Option(("--messages",), "messages", "One hit per message instead of one per session.", True),
    *(BY_KEY[key] for key in ("limit", "no_floor", "as_json", "color")),  # as `memsearch query` has them
)
BY_KEY.update((o.key, o) for o in HISTORY_OPTIONS)
COMMANDS = {"query": OPTIONS, "history": HISTORY_OPTIONS}
# Per command, option spelling -> the keyword click passes it as: of options taking a value, of flags.
SPELLINGS = {command: ({name: o.key for o in options if not o.flag for name in o.names},
                       {name: o.key for o in options if o.flag for name in o.names})
             for command, options in COMMANDS.items()}


def query_kwargs(args, environ=os.environ, command: str = "query") -> dict | None:
    """The ``command`` callback's keyword arguments for ``args`` (after the command's name), read by click's
    rules, or None where click would show help or refuse the command line."""
    options, (valued, flags) = COMMANDS[command], SPELLINGS[command]
    shorts = [name for name in valued if not name.startswith("--")]
    words, given = [], {}
    rest = iter(args)
    for arg in rest:
        if arg == "--":  # the rest are words
            words.extend(rest)
            break
        if arg == "-" or not arg.startswith("-"):
            words.append(arg)
            continue
        name, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        for short in shorts:
            if name.startswith(short) and name != short:  # -n5
                name, has_value, value = short, "=", name[len(short):]
        if name in flags and not has_value:
            given[flags[name]] = [True]
            continue
        if name not in valued:
            return None  # -h, --help, an unknown or misspelt option: click says what it is
        if not has_value and (value := next(rest, None)) is None:  # (the next one even if "-x", as click takes it)
            return None
        given.setdefault(valued[name], []).append(value)
    if not words:
        return None
    kwargs = {"text": tuple(words)}
    for o in options:
        many = o.kind in ("spec", "folders")
        env = next((v for v in map(environ.get, o.envvars) if v), None)  # the first variable set, as click reads
        values = given.get(o.key) or (env and (env.split(os.pathsep) if many else [env]))
        if not values:
            kwargs[o.key] = False if o.flag else () if many else o.default
        elif many:
            if o.kind == "folders" and not all(_usable_path(value, folder=True) for value in values):
                return None
            kwargs[o.key] = tuple(values)
        else:
            value = values[-1]  # repeated: the last one counts, as in click
            if (o.kind == "choice" and value not in o.choices) or (o.kind == "file" and not _usable_path(value)):
                return None
            try:
                kwargs[o.key] = int(value) if o.kind == "int" else value  # click.INT is int() (" 5", "+5", "5_0")
            except ValueError:
                return None
    return kwargs


def _usable_path(path, folder=False):
    """What click.Path(dir_okay=False) (``folder``: file_okay=False) lets through: anything absent ("" too), else a
    readable non-folder (a folder)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True
    except ValueError:  # a NUL in the path
        return False
    return stat.S_ISDIR(mode) == folder and os.access(path, os.R_OK)
