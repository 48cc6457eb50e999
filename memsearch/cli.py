"""The memsearch command line: a thin click layer over MemoryIndex.

Exit codes (grep's convention): 0 hits found (or command succeeded),
1 query ran and found nothing, 2 error (bad usage, bad query, unusable
root or index), 130 interrupted (Ctrl-C).

What the commands share with the console script's quick path for
`memsearch query` (memsearch.entry) lives in memsearch.commands, free of
click.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack, contextmanager

import click

from . import __version__, db, format as fmt, query_args
from .commands import (EXIT_ERROR, EXIT_INTERRUPTED, OUT_OF_MEMORY, CommandFailed, chosen_roots, one_line_errors,
                       open_index, print_aborted, print_warning, run_query)
from .errors import MemsearchError
from .settings import DEFAULT_LIMIT, MAX_LIMIT


class Failure(click.ClickException):
    """A one-line error on stderr, exit status 2."""

    exit_code = EXIT_ERROR


class Command(click.Command):
    """A command whose one-line errors (memsearch's own, and CommandFailed
    from memsearch.commands) click reports as a Failure: exit 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (CommandFailed, MemsearchError) as ex:
            raise Failure(str(ex)) from None
        except MemoryError:
            raise Failure(OUT_OF_MEMORY) from None
        except KeyboardInterrupt:  # what click prints for it, with EXIT_INTERRUPTED for its status
            print_aborted()
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


class Group(click.Group):
    command_class = Command


# Made once and shared by every command: each click.Path() asks gettext for
# its name, and gettext looks for translation files on disk every time.
FOLDER, FILE = click.Path(file_okay=False), click.Path(dir_okay=False)


# click's side of the options memsearch.query_args.OPTIONS declares.
CLICK_ARGS = {
    "root": {"multiple": True, "type": FOLDER},
    "db_path": {"type": FILE},
    "limit": {"type": click.IntRange(1, MAX_LIMIT), "default": DEFAULT_LIMIT, "show_default": True},
}


def option(key: str):
    o = query_args.BY_KEY[key]
    extra = {"is_flag": True} if o.flag else {}
    if o.envvars:
        extra["envvar"] = list(o.envvars)
    return click.option(*o.names, o.key, help=o.help, **extra, **CLICK_ARGS.get(key, {}))


def root_options(f):
    return option("root")(option("db_path")(f))


def query_options(f):
    for o in reversed(query_args.OPTIONS):
        f = option(o.key)(f)
    return f


def echo_json(value) -> None:
    click.echo(fmt.json_text(value))


@contextmanager
def progress_bar(threshold: int, label: str):
    """A progress callback that draws a bar for long runs (a total of at
    least ``threshold``), and only for a person watching."""
    with ExitStack() as stack:
        bar = None

        def progress(done, total):
            nonlocal bar
            if bar is None and total >= threshold and sys.stderr.isatty():
                bar = stack.enter_context(click.progressbar(length=total, label=label, file=sys.stderr))
            if bar is not None:
                bar.update(done - bar.pos)

        yield progress


def log_to_stderr() -> None:
    """Long-running commands (watch, mcp) report through logging: show its
    warnings as one line each. One-shot commands never import logging (see
    memsearch.db.warn)."""
    import logging

    class Stderr(logging.Handler):
        def emit(self, record):
            click.echo(f"warning: {record.getMessage()}", err=True)

    log = logging.getLogger("memsearch")
    if not log.handlers:
        log.addHandler(Stderr())
        log.propagate = False


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
# The version from the package itself, not from the metadata of a distribution
# named "memsearch": that name on PyPI is another project (README: Installing).
@click.version_option(__version__, prog_name="memsearch", message="%(prog)s (memsearch-fts) %(version)s")
def main():
    """Search the Markdown memory that coding agents keep.

    The index is a cache of the files: it is brought up to date before each
    query, and deleting it loses nothing.
    """
    # Recovery warnings (a damaged index set aside) are one stderr line each.
    db.warning_sink = print_warning
    click.get_current_context().call_on_close(lambda: setattr(db, "warning_sink", None))


@main.command()
@click.argument("text", nargs=-1, required=True)
@query_options
def query(**params):
    """Search memory for TEXT; the best hits first.

    Every word is searched on its own (OR): files matching more and rarer
    words rank higher. Exit status 1 when nothing matched.
    """
    status = run_query(**params)  # the console script runs it without click, too
    if status:
        sys.exit(status)


@main.command()
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def index(root, db_path, as_json):
    """Bring the index up to date with the files and report what changed."""
    with open_index(root, db_path) as idx, progress_bar(2000, "indexing") as progress:
        report = idx.reconcile(progress=progress)
    if as_json:
        echo_json(fmt.report_dict(report))
    else:
        click.echo(fmt.format_report(report))


@main.command()
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(root, db_path, as_json):
    """Show the root, the index database, its file count and schema version."""
    with open_index(root, db_path) as idx:
        info = idx.status()
    if as_json:
        echo_json(info)
    else:
        click.echo(fmt.format_status(info))


@main.command()
@click.argument("folder", required=False, type=FOLDER)
@option("root")
@click.option("--limit", "-n", type=click.IntRange(1, None), default=None,
              help="Most files to list (default 200, or manifest_limit in the config file).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def manifest(folder, root, limit, as_json):
    """List the memory files of FOLDER (or of the roots), newest first.

    Every .md file except MEMORY.md indexes, with the type and description its
    frontmatter gives in its first 30 lines:
    "- [type] path (modified): description".
    """
    from .manifests import format_manifest, manifest as list_files
    from .roots import Root
    from .settings import load_settings

    roots = [Root("plain", folder)] if folder else chosen_roots(root)
    with one_line_errors():
        entries = list_files(roots, limit=limit or load_settings().manifest_limit)
    if as_json:
        echo_json([e.to_dict() for e in entries])
    elif entries:
        click.echo(format_manifest(entries))


@main.command()
@click.argument("path", type=click.Path(), required=False)
@click.option("--session", help="Print the rebuild block of this session (a folder under sessions/) instead.")
@click.option("--project", help="With --session: the project id, or a repository's path (with a /).")
@click.option("--root", "root_spec",
              help="With --session: the memory root, DIR (a mimo tree), claude, zcode or KIND=DIR. Default: MiMo's"
                   " memory folder.")
@click.option("--budget", multiple=True, metavar="SECTION=TOKENS",
              help="With --session, repeatable: a section's budget (checkpoint 11000, project 10000, notes 6000,"
                   " global 6000, keys 500).")
@click.option("--json", "as_json", is_flag=True, help="With --session: print the block and its parts as JSON.")
def context(path, session, project, root_spec, budget, as_json):
    """Print the memory index PATH (a MEMORY.md, or its folder) ready for an
    agent's context: frontmatter and top-level HTML comments removed, cut at
    200 lines or 25,000 characters with a warning line. Prints nothing, with
    exit status 0, when there is no index.

    With --session SID --project PID: the block MiMo Code rebuilds context
    with, its session checkpoint, project MEMORY.md, session notes and global
    MEMORY.md, each cut to its budget, and the paths of the other memory files
    of those places, newest first.
    """
    if session is None:
        if path is None or project or budget or as_json:
            raise click.UsageError("give PATH (a MEMORY.md or its folder), or --session SID --project PID")
        from .context import index_for_context

        text = index_for_context(path)
    else:
        if path is not None or project is None:
            raise click.UsageError("--session needs --project PID, and no PATH")
        from .rebuild import rebuild_context
        from .roots import Root

        budgets = {}
        for given in budget:
            name, sep, tokens = given.partition("=")
            try:
                budgets[name.strip()] = int(tokens)
            except ValueError:
                raise click.BadParameter(f"{given!r:.60} is not SECTION=TOKENS (e.g. notes=3000)",
                                         param_hint="--budget") from None
        found = rebuild_context(Root.parse(root_spec) if root_spec else Root("mimo"), session, project, budgets)
        if as_json:
            echo_json(found.to_dict())
            return
        text = found.text
    if text:
        click.echo(text)


@main.command()
@root_options
def watch(**root_opts):
    """Keep the index up to date as files change, until stopped (Ctrl-C).

    While it runs, queries from any process skip the tree walk: each one
    proves the index fresh with a cookie handshake instead. Whenever the
    watcher cannot vouch for the index (starting, rescanning after an
    overflow, failed, gone) queries walk the tree as before; `memsearch
    status` says which and why.
    """
    import signal
    import time

    # Imported here: `memsearch query` must never pay for the watcher.
    from .watch import Watcher

    log_to_stderr()
    # A plain list, not a threading.Event: the handler runs in this thread, and
    # Event.set() there could wait forever for the lock this thread's own
    # Event.wait() held when the signal came.
    stop: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, _: stop.append(signum))
    with open_index(**root_opts) as idx:
        watcher = Watcher(idx)
        watcher.start(wait=False)  # the first reconcile can be long: Ctrl-C must work during it
        try:
            while watcher.state == "starting" and watcher.running and not stop:
                time.sleep(0.1)
            if stop:
                return
            if watcher.state != "ready":
                raise Failure(watcher.error or f"the watcher is {watcher.state}")
            count = idx.status()["files"]
            where = idx.root or ", ".join(r.path for r in idx.roots)
            click.echo(f"watching {where} ({count} files, index {idx.db_path}); Ctrl-C to stop", err=True)
            while not stop and watcher.running:
                time.sleep(0.5)
        finally:
            watcher.stop()


@main.command("mcp")
@root_options
def mcp_command(**root_opts):
    """Serve memory_search and memory_read to MCP clients over stdio.

    Register it in a client (e.g. `claude mcp add memsearch -- memsearch mcp
    --root DIR`). Every call searches fresh files. Needs the extra:
    pip install 'memsearch-fts[mcp]'.
    """
    # Imported here: `memsearch query` must never pay for the SDK or the tool.
    from .mcp_server import serve

    log_to_stderr()
    with open_index(**root_opts) as idx:  # a bad root fails before the slow SDK import (serve's first step)
        serve(idx)


@main.command()
@root_options
@click.option("--fix", is_flag=True,
              help="Repair what was found: set a damaged cache index aside and rebuild it, rebuild the full-text"
                   " index, reconcile with the files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def doctor(fix, as_json, **root_opts):
    """Check the index: SQLite and FTS5 integrity, schema version, rows
    against the files; with --fix, repair what can be repaired.

    Exit status 0 when healthy (after the fixes), 1 when problems remain.
    """
    from .doctor import diagnose, format_report

    with open_index(**root_opts) as idx:
        report = diagnose(idx, fix=fix)
    if as_json:
        echo_json(report.to_dict())
    else:
        click.echo(format_report(report))
    if not report.ok:
        sys.exit(1)


# -- conversation history (issue 16): transcripts, never the memory ------------------
def history_options(f):
    f = click.option("--db", "db_path", type=FILE, envvar="MEMSEARCH_DB",
                     help="Index database file (default: one per set of transcript folders in the user cache"
                          " dir). Env: MEMSEARCH_DB.")(f)
    return click.option(
        "--history-root", "history_root", multiple=True, type=FOLDER, envvar="MEMSEARCH_HISTORY_ROOTS",
        help="Transcript folder, repeatable: a folder of project folders of *.jsonl (Claude Code's"
             " ~/.claude/projects) or a Claude config folder. Default: history_roots of the config file, else"
             " $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects. Env: MEMSEARCH_HISTORY_ROOTS.")(f)


def open_history(history_root, db_path):
    from .history import HistoryIndex  # here: `memsearch query` never loads the history modules

    with one_line_errors():
        return HistoryIndex(list(history_root) or None, db_path)


@main.command()
@click.argument("text", nargs=-1, required=True)
@history_options
@click.option("--project", help="Only this project: its folder name, or the working directory it is named after.")
@click.option("--session", help="Only this session (its id, or the first characters of it).")
@click.option("--role", type=click.Choice(("user", "assistant", "tool", "system", "summary")),
              help="Only messages of this role (tool: tool calls and their results).")
@click.option("--since", help="Only messages from this date or time on (ISO 8601, e.g. 2025-01-31).")
@click.option("--messages", is_flag=True, help="One hit per message instead of one per session.")
@option("limit")  # these three as `memsearch query` has them
@option("no_floor")
@option("as_json")
def history(text, history_root, db_path, project, session, role, since, messages, limit, no_floor, as_json):
    """Search past agent sessions (the transcripts) for TEXT; best sessions first.

    Each hit is a session, ranked over the session as a whole, with how many
    of its messages matched and its best ones (role, time, excerpt);
    --messages gives single messages instead. Read a session with
    `memsearch session-context SESSION --query TEXT`. Memory files are
    searched by `memsearch query`, never here. Exit status 1 when nothing
    matched.
    """
    from .format import format_hits, result_json
    from .history_refresh import REFRESH_SECONDS

    with open_history(history_root, db_path) as idx, progress_bar(64 << 20, "reading transcripts") as progress:
        with one_line_errors():
            result = idx.search_result(" ".join(text), limit, project=project, session=session, role=role,
                                       since=since, floor=0.0 if no_floor else None, messages=messages,
                                       progress=progress)
    if result.refresh is not None and result.refresh.deferred:
        print_warning(f"{result.refresh.deferred} transcript(s) not read in full yet (a search reads for"
                      f" {REFRESH_SECONDS:g} s at most): search again for the rest")
    if as_json:
        click.echo(result_json(result))
    elif result.hits:
        click.echo(format_hits(result, color=sys.stdout.isatty()))
    else:
        click.echo("no matches", err=True)
    if not result.hits:
        sys.exit(1)


@main.command("session-context")
@click.argument("session")
@history_options
@click.option("--query", "-q", default="", help="The question to read the session with (at most 4,000 characters).")
@click.option("--strategy", type=click.Choice(("relevant", "handoff")), default="relevant", show_default=True,
              help="relevant: the messages that bear on the query; handoff: the end of the session.")
@click.option("--max-tokens", type=int, default=None,
              help="Budget in tokens (default 6000, at most 12000); 4 characters each, 4,000-48,000 characters.")
@option("as_json")
def session_context(session, history_root, db_path, query, strategy, max_tokens, as_json):
    """Read past session SESSION with a question (ReadSessionContext): its
    messages that bear on --query within the budget, or with --strategy
    handoff its end. The output is marked as untrusted background material.
    """
    with open_history(history_root, db_path) as idx, one_line_errors():
        found = idx.read_session_context(session, query, strategy, max_tokens)
    if as_json:
        echo_json(found.to_dict())
    else:
        click.echo(found.text)


if __name__ == "__main__":
    # `python -m memsearch.cli`: always through click, as this module is loaded
    # anyway (the console script, memsearch.entry, tries the quick path first).
    main()
