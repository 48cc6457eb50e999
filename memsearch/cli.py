"""The memsearch command line: a thin click layer over the library (memsearch.commands is what it shares with
the quick path). Exit codes as grep's: 0 found (or done), 1 nothing found, 2 error, 130 interrupted (Ctrl-C)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import click

from . import __version__, db, format as fmt, query_args
from .commands import (EXIT_ERROR, INDEX_BAR_FILES, chosen_roots, guarded, one_line_errors, open_history,
                       open_index, print_warning, progress_bar, run_history, run_query)
from .errors import quoted
from .roots import AGENT_KINDS, AGENT_NAMES, KINDS, SCOPE_OF_KIND, SCOPES_OF_KIND, Root

# The words query_args' help texts take from the kinds' tables.
HELP_WORDS = {"agents": f"{', '.join(AGENT_KINDS[:-1])} or {AGENT_KINDS[-1]}", "kinds": ", ".join(KINDS),
              "scopes": "; ".join(map(", ".join, (SCOPES_OF_KIND["mimo"], SCOPE_OF_KIND.values(),
                                                  SCOPES_OF_KIND["repos"]))),
              "project_kinds": "/".join(SCOPE_OF_KIND)}


class Failure(click.ClickException):
    """A one-line error on stderr, exit status 2."""

    exit_code = EXIT_ERROR


@contextmanager
def one_line_usage():
    """Usage errors on one line, as the README promises (not click's three)."""
    try:
        yield
    except click.UsageError as ex:  # its subclasses too: a bad value, a missing argument
        # NoArgsIsHelpError: a bare `memsearch` (click >= 8.2), whose help click prints
        if isinstance(ex, getattr(click.exceptions, "NoArgsIsHelpError", ())):
            raise
        hint = f" (see '{ex.ctx.command_path} --help')" if ex.ctx is not None else ""
        raise Failure(ex.format_message() + hint) from None


class Group(click.Group):
    """Every command's errors on one line, exit 2; Ctrl-C as click says it, exit EXIT_INTERRUPTED."""

    def make_context(self, *args, **kwargs):
        with one_line_usage():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with one_line_usage():
            code = guarded(lambda: super(Group, self).invoke(ctx))
        if code is not None:  # the commands print and return None: this is an error's exit status, printed
            raise click.exceptions.Exit(code)


# Made once: each click.Path() asks gettext, which looks for translation files on disk every time.
FOLDER, FILE = click.Path(file_okay=False), click.Path(dir_okay=False)


class RootSpec(click.ParamType):
    """A --root value: a spec the library reads (claude, KIND=DIR, DIR), ':'-separated in MEMSEARCH_ROOTS."""

    name = "root"
    envvar_list_splitter = os.path.pathsep


def complete_root(ctx, param, incomplete: str):
    """The agents' names and KIND= (memsearch.roots' tables), then a folder after KIND=."""
    from click.shell_completion import CompletionItem

    kind, sep, rest = incomplete.partition("=")
    if sep:
        return [CompletionItem(rest, type="dir")]  # the shell completes the folder
    words = (*AGENT_KINDS, *(k + "=" for k in KINDS))
    return [CompletionItem(w) for w in words if w.startswith(incomplete)] + [CompletionItem(incomplete, type="dir")]


def completer(module: str, name: str):
    """Complete from memsearch.<module>.<name>, the values the library accepts (imported only when asked)."""
    def complete(ctx, param, incomplete: str):
        import importlib

        words = getattr(importlib.import_module(f"memsearch.{module}"), name)
        return [w for w in words if w.startswith(incomplete)]

    return complete


TYPES = {"spec": RootSpec(), "folders": FOLDER, "int": click.INT, "file": FILE}
# Every default is shown one way, click's "[default: ...]": a value as it is, None as these words say.
CLICK_ARGS = {
    "root": {"multiple": True, "metavar": "ROOT", "shell_complete": complete_root,
             "show_default": "the config file's roots, else every agent's memory found here"},
    "db_path": {"show_default": "one per set of roots in ~/.cache/memsearch"},
    "history_root": {"multiple": True, "metavar": "DIR", "show_default": "history_roots of the config file, else"
                     " $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects"},
    "role": {"shell_complete": completer("transcripts", "ROLES")},
    "scope": {"shell_complete": completer("index", "SCOPES")},
    "type_": {"shell_complete": completer("roots", "TYPES")},
}


def option(key: str, **overrides):
    """The click option of query_args.OPTIONS[key]: the quick path reads the same table."""
    o = query_args.BY_KEY[key]
    extra = {"is_flag": True, "default": False} if o.flag else {"default": o.default,
                                                                 "show_default": o.default is not None}
    if o.envvars:
        extra.update(envvar=list(o.envvars), show_envvar=True)
    kind = click.Choice(o.choices) if o.choices else TYPES.get(o.kind)
    extra.update(CLICK_ARGS.get(key, {}), **overrides)
    return click.option(*o.names, o.key, help=o.help.format_map(HELP_WORDS), type=kind, **extra)


def root_options(f):
    return option("root")(option("db_path")(f))


class QuickCommand(click.Command):
    """`memsearch query` and `memsearch history`: read by query_args, the quick path's parser; click only says help
    and usage errors (and completes)."""

    def parse_args(self, ctx, args):
        params = None if ctx.resilient_parsing else query_args.query_kwargs(args, command=self.name)
        if params is None:
            args = super().parse_args(ctx, args)  # help, or an error in click's words
            if not ctx.resilient_parsing:
                raise click.UsageError("cannot read this command line", ctx)
            return args
        ctx.params.update(params)
        return []


def command_options(command: str, **overrides):
    """The click options of query_args.COMMANDS[command]; ``overrides``: {key: what differs from CLICK_ARGS}."""
    def add(f):
        for o in reversed(query_args.COMMANDS[command]):
            f = option(o.key, **overrides.get(o.key, {}))(f)
        return f

    return add


def log_to_stderr() -> None:
    """watch and mcp report through logging: one stderr line a warning."""
    import logging

    log = logging.getLogger("memsearch")
    if not log.handlers:
        log.addHandler(handler := logging.Handler())
        handler.emit = lambda record: print_warning(record.getMessage())
        log.propagate = False


EXAMPLES = f"""\b
Examples:
  memsearch query pgbouncer port          # the agents' memory found here
  memsearch query stripe --root ~/notes   # a folder of Markdown (a mimo tree)
  memsearch history "make release"        # past Claude Code sessions
  memsearch status                        # which roots, which index
  claude mcp add memsearch -- memsearch mcp

With no --root, memsearch searches MEMSEARCH_ROOTS, else the config file's
roots, else every agent's memory found at its default location ({', '.join(AGENT_NAMES.values())}).
"""


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXAMPLES)
# The package's own version: "memsearch" on PyPI is another project (README: Installing).
@click.version_option(__version__, prog_name="memsearch", message="%(prog)s (memsearch-fts) %(version)s")
def main():
    """Search the Markdown memory that coding agents keep.

    The index is a cache of the files: it is brought up to date before each
    query, and deleting it loses nothing.
    """
    # Recovery warnings (a damaged index set aside) are one stderr line each.
    db.warning_sink = print_warning
    click.get_current_context().call_on_close(lambda: setattr(db, "warning_sink", None))


@main.command(cls=QuickCommand, short_help="Search memory for TEXT, best hits first.")
@click.argument("text", nargs=-1, required=True)
@command_options("query")
def query(**params):
    """Search memory for TEXT; the best hits first.

    Every word is searched on its own (OR): files matching more and rarer
    words rank higher. Exit status 1 when nothing matched.
    """
    sys.exit(run_query(**params))  # the console script runs it without click, too


@main.command(short_help="Update the index now; report what changed.")
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def index(root, db_path, as_json):
    """Bring the index up to date with the files and report what changed."""
    with open_index(root, db_path) as idx, progress_bar(INDEX_BAR_FILES, "indexing") as progress:
        report = idx.reconcile(progress=progress)
    click.echo(fmt.json_text(fmt.report_dict(report)) if as_json else fmt.format_report(report))


@main.command(short_help="Show the roots, the index and the watcher.")
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(root, db_path, as_json):
    """Show the roots searched (and the default locations skipped), the index
    database, its file count and schema version, and the watcher."""
    with open_index(root, db_path) as idx:
        info = idx.status()
    click.echo(fmt.json_text(info) if as_json else fmt.format_status(info))


@main.command(short_help="List the memory files, newest first.")
@click.argument("folder", required=False, type=FOLDER)
@option("root")
@click.option("--limit", "-n", type=int, default=None, help="Most files to list.",
              show_default="200, or manifest_limit in the config file")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def manifest(folder, root, limit, as_json):
    """List the memory files of FOLDER (or of the roots), newest first.

    Every .md file except MEMORY.md indexes, with the type and description its
    frontmatter gives in its first 30 lines:
    "- [type] path (modified): description".
    """
    from .manifests import format_manifest, manifest as list_files
    from .settings import load_settings

    with one_line_errors():
        roots = [Root("plain", folder)] if folder is not None else chosen_roots(root)  # "": Root's error
        settings = load_settings()  # the files listed are those the index reads (max_file_bytes)
        entries = list_files(roots, limit=settings.manifest_limit if limit is None else limit,
                             max_file_bytes=settings.max_file_bytes)
    if as_json:
        click.echo(fmt.json_text([e.to_dict() for e in entries]))
    elif entries:
        click.echo(format_manifest(entries))


@main.command(short_help="Print a MEMORY.md or a rebuild block for an agent.")
@click.argument("path", type=click.Path(readable=False), required=False)  # unreadable: nothing, exit 0
@click.option("--session", help="Print the rebuild block of this session (a folder under sessions/) instead.")
@click.option("--project", help="With --session: the project id, or a repository's path (with a /).")
@click.option("--root", "root_spec", metavar="ROOT", show_default="MiMo's memory folder",
              help=f"With --session: the memory root, DIR (a mimo tree), {', '.join(AGENT_KINDS)} or KIND=DIR.")
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

        budgets = {}
        for given in budget:
            name, _, tokens = given.partition("=")
            tokens = tokens.strip()
            if not (tokens.isascii() and tokens.isdigit()):  # (int() takes ٣ and 3_000 too)
                raise click.BadParameter(f"{quoted(given, 60, always=True)} is not SECTION=TOKENS (e.g. notes=3000)",
                                         param_hint="--budget")
            budgets[name.strip()] = int(tokens)
        found = rebuild_context(Root.parse(root_spec) if root_spec is not None else Root("mimo"), session, project,
                                budgets)
        if as_json:
            click.echo(fmt.json_text(found.to_dict()))
            return
        text = found.text
    if text:
        click.echo(text)


@main.command(short_help="Keep the index fresh as files change.")
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
    # A list, not a threading.Event: set() in the handler could wait for the lock wait() holds.
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


@main.command("mcp", short_help="Serve the four tools to MCP clients (stdio).")
@root_options
def mcp_command(**root_opts):
    """Serve four tools to MCP clients over stdio: memory_search,
    memory_read, history_search and read_session_context.

    Register it in a client, e.g. `claude mcp add memsearch -- memsearch mcp`
    (with no --root it serves the agents' memory found here). Every call
    searches fresh files. Needs the MCP SDK (the mcp extra).
    """
    # Imported here: `memsearch query` must never pay for the SDK or the tool.
    from .mcp_server import serve

    log_to_stderr()
    with open_index(**root_opts) as idx:  # a bad root fails before the slow SDK import (serve's first step)
        if sys.stdin.isatty():  # run by hand: a silent wait reads as a hang
            click.echo("memsearch mcp: waiting for an MCP client on stdin (Ctrl-C to stop); register it with"
                       " `claude mcp add memsearch -- memsearch mcp`", err=True)
        serve(idx)


@main.command(short_help="Check the index; --fix repairs it.")
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
    click.echo(fmt.json_text(report.to_dict()) if as_json else format_report(report))
    sys.exit(0 if report.ok else 1)


# -- conversation history: transcripts, never the memory ------------------
HISTORY_DB = {"show_default": "one per set of transcript folders in ~/.cache/memsearch"}


@main.command(cls=QuickCommand, short_help="Search past agent sessions (transcripts).")
@click.argument("text", nargs=-1, required=True)
@command_options("history", db_path=HISTORY_DB)
def history(**params):
    """Search past agent sessions (the transcripts) for TEXT; best sessions first.

    Each hit is a session, ranked over the session as a whole (the user's
    words count twice the replies'), with how many of its messages matched
    and its best ones (role, time, excerpt); --messages gives single
    messages instead. A date TEXT names (9 December 2023, two weeks ago,
    last month) ranks the sessions held then higher.
    Read a session with `memsearch session-context SESSION --query TEXT`.
    Memory files are searched by `memsearch query`, never here. Exit status
    1 when nothing matched.
    """
    sys.exit(run_history(**params))  # the console script runs it without click, too


@main.command("session-context", short_help="Read a past session with a question.")
@click.argument("session")
@option("history_root")
@option("db_path", **HISTORY_DB)
@click.option("--query", "-q", default="", help="The question to read the session with (at most 4,000 characters).")
@click.option("--strategy", default="relevant", show_default=True,
              shell_complete=completer("session_context", "STRATEGIES"),
              help="relevant: the messages that bear on the query; handoff: the end of the session.")
@click.option("--max-tokens", type=int, default=None, show_default="6000",
              help="Budget in tokens, at most 12000; 4 characters each, 4,000-48,000 characters.")
@click.option("--project", help="The session's project as its hit shows it, where several hold its id.")
@option("as_json")
def session_context(session, history_root, db_path, query, strategy, max_tokens, project, as_json):
    """Read past session SESSION with a question (ReadSessionContext): its
    messages that bear on --query within the budget, or with --strategy
    handoff its end. The output is marked as untrusted background material.
    """
    with open_history(history_root, db_path) as idx, one_line_errors():
        # A hit quotes an id that is not plain (format.quoted): taken back as the tools take it.
        found = idx.read_session_context(fmt.unquoted(session), query, strategy, max_tokens, fmt.unquoted(project))
    click.echo(fmt.json_text(found.to_dict()) if as_json else found.text)


if __name__ == "__main__":  # `python -m memsearch.cli`: always through click
    main()
