"""What the CLI commands do, without click: memsearch.cli and the quick path (memsearch.entry) both run
these, so a query prints the same either way. CommandFailed: the CLI prints "Error: <message>", exit 2."""

from __future__ import annotations

import codecs
import errno
import io
import os
import sys
from contextlib import ExitStack, contextmanager

from . import format as fmt
from .errors import MemsearchError

EXIT_NO_HITS = 1
EXIT_ERROR = 2
# Ctrl-C: the shell's 128 + SIGINT; click's own, 1, would read as "nothing found".
EXIT_INTERRUPTED = 130


class CommandFailed(Exception):
    """A command cannot go on; its message is one line for the user."""


# SQLITE_NOMEM is a MemoryError; the write transaction is rolled back, so a rerun goes on from the last commit.
OUT_OF_MEMORY = ("out of memory (the index keeps what was last committed); free some memory or raise the"
                 " limit (ulimit -v) and run again")


def echo(message: str, err: bool = False, color: bool | None = None) -> None:
    """click.echo(), without importing click where it would only write and flush (a text stream with a
    real encoding, no ANSI escape to strip for a non-terminal)."""
    stream = sys.stderr if err else sys.stdout
    if not _writes_as_is(stream) or ("\x1b" in message and not color and not _isatty(stream)):
        import click

        click.echo(message, err=err, color=color)
        return
    try:
        stream.write(message + "\n")
    except UnicodeEncodeError:  # a stream that cannot spell a file's text (a Latin-1 locale): escaped, no traceback
        stream.write((message + "\n").encode(stream.encoding, "backslashreplace").decode(stream.encoding))
    stream.flush()


def print_aborted() -> None:  # as click says Ctrl-C: a line break after the terminal's ^C
    echo("\nAborted!", err=True)


def guarded(run):
    """``run()``, or the exit status of its error, printed as the CLI prints it: "Error: <message>" (exit 2), or
    Ctrl-C (exit 130). Both the click group and the quick path run commands through it."""
    try:
        return run()
    except (CommandFailed, MemsearchError, MemoryError) as ex:
        echo(f"Error: {OUT_OF_MEMORY if isinstance(ex, MemoryError) else ex}", err=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print_aborted()
        return EXIT_INTERRUPTED
    except OSError as ex:
        # The library raises its own errors: one with no file is a write to stdout (a full disk, EIO). EPIPE (the
        # reader is gone: nothing to say) is each path's own.
        if ex.errno == errno.EPIPE or ex.filename is not None:
            raise
        echo(f"Error: cannot write the output ({ex.strerror or ex})", err=True)
        return EXIT_ERROR


def _writes_as_is(stream) -> bool:
    # click re-wraps a stream with no encoding or errors, or an ASCII one, and the Windows console.
    if os.name == "nt" or not isinstance(stream, io.TextIOWrapper) or not stream.errors:
        return False
    try:
        return codecs.lookup(stream.encoding).name != "ascii"
    except LookupError:
        return False


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except Exception:  # as click's isatty(): a stream that cannot tell is no terminal
        return False


# The command line's spelling of the library's arguments that its options give: an error names what was typed.
TYPED = {"maxTokens": "--max-tokens", "sessionId": "SESSION", "scope_id": "--scope-id",
         **{name: f"--{name}" for name in ("limit", "type", "role", "since", "session", "project", "query",
                                           "strategy")}}


@contextmanager
def one_line_errors():
    try:
        yield
    except (MemsearchError, ValueError) as ex:
        raise CommandFailed(as_typed(ex)) from None


def as_typed(ex: Exception) -> str:
    """``ex``'s message, the argument it starts with (MemsearchError.argument) as the command line takes it."""
    message, name = str(ex), getattr(ex, "argument", None)
    return TYPED[name] + message[len(name):] if name in TYPED and message.startswith(name) else message


def print_warning(message: str) -> None:  # db.warning_sink: a damaged index set aside
    echo(f"warning: {message}", err=True)


def chosen_roots(root) -> list:
    """The roots of --root (or the environment), else the config file's, else the agents' default ones; the caller
    turns an error into one line (one_line_errors)."""
    from .roots import Root, configured, default_roots

    return [Root.parse(spec) for spec in root] if root else configured() or default_roots()


def open_index(root, db_path):
    from .index import MemoryIndex  # here: `memsearch context` and --help do without the search modules

    with one_line_errors():
        return MemoryIndex(roots=chosen_roots(root), db_path=db_path)


@contextmanager
def progress_bar(threshold: int, label: str):
    """A progress callback drawing click's bar (imported then) on a terminal, for a total of ``threshold`` or more."""
    bar = None
    with ExitStack() as stack:
        def progress(done, total):
            nonlocal bar
            if bar is None and total >= threshold and _isatty(sys.stderr):
                import click

                bar = stack.enter_context(click.progressbar(length=total, label=label, file=sys.stderr))
            if bar is not None:
                bar.update(done - bar.pos)

        yield progress


# `memsearch index` and a first query (which builds the index) show a bar from this many files.
INDEX_BAR_FILES = 2000


def run_query(text, root, db_path, limit, scope, scope_id, type_, no_reconcile, no_floor, as_json, color=None) -> int:
    scope_id = fmt.unquoted(scope_id)  # (as hit labels quote it)
    with open_index(root, db_path) as index, one_line_errors(), progress_bar(INDEX_BAR_FILES, "indexing") as bar:
        result = index.search_result(
            " ".join(text), limit, scope, scope_id, type_,
            reconcile=False if no_reconcile else None, floor=0.0 if no_floor else None, progress=bar,
        )
        # A scope id no file has finds nothing whatever the words: say so, as memory_search does.
        scopes = index.scopes_of(scope_id) if scope_id is not None and not result.hits else None
    if scopes is not None and (not scopes or scope not in (None, *scopes)):
        where = f"is a {' and '.join(scopes)} id, not a {scope} one" if scopes else "is no indexed file's"
        print_warning(f"scope id {fmt.quoted(scope_id, 200, always=True)} {where}")
    return print_result(result, as_json, color)


def open_history(history_root, db_path):
    from .history import HistoryIndex  # here: `memsearch query` never loads the history modules

    with one_line_errors():
        return HistoryIndex(list(history_root) or None, db_path)


def run_history(text, history_root, db_path, project, session, role, since, messages, limit, no_floor, as_json,
                color=None) -> int:
    from .history_refresh import DEFERRED, LINKED, REFRESH_SECONDS

    with open_history(history_root, db_path) as idx, progress_bar(64 << 20, "reading transcripts") as progress:
        with one_line_errors():
            result = idx.search_result(" ".join(text), limit, project=fmt.unquoted(project),
                                       session=fmt.unquoted(session), role=role,
                                       since=since, floor=0.0 if no_floor else None, messages=messages,
                                       progress=progress)
    if result.refresh is not None and result.refresh.deferred:
        print_warning(f"{result.refresh.deferred} transcript(s) not read in full yet (a search reads for"
                      f" {REFRESH_SECONDS:g} s at most): search again for the rest")
    # A transcript skipped for good (too large, unreadable) is never searched: say so, in one line.
    # (Another name of a file read once is searched under the first: no warning.)
    skipped = [(path, why) for path, why in (result.refresh.skipped if result.refresh else ())
               if why != DEFERRED and not why.startswith(LINKED)]
    if skipped and not as_json:  # --json lists them all in its report
        path, reason = skipped[0]
        more = f" (and {len(skipped) - 1} more; --json lists them)" if len(skipped) > 1 else ""
        print_warning(f"transcript skipped, not searched: {fmt.quoted(path)}: {fmt.one_line(reason)}{more}")
    # The command that opens a hit's session reads the same folders and index (the environment may not be there).
    options = [*(("--history-root", folder) for folder in history_root), *([("--db", db_path)] if db_path else [])]
    return print_result(result, as_json, color, options)


def print_result(result, as_json: bool, color: str | None, options=()) -> int:
    """Print a result (or "no matches" on stderr); return 0 or EXIT_NO_HITS. ``options``: format.open_hint's."""
    if as_json:
        echo(fmt.result_json(result, getattr(sys.stdout, "encoding", None) or "utf-8", options))
    elif result.hits:
        # --color auto (the default): on a terminal, unless NO_COLOR is set (no-color.org)
        shown = color == "always" or (color != "never" and not os.environ.get("NO_COLOR") and _isatty(sys.stdout))
        echo(fmt.format_hits(result, color=shown, options=options), color=shown)
    else:
        echo("no matches", err=True)
    return 0 if result.hits else EXIT_NO_HITS
