"""The `memsearch` console script: a plain `memsearch query` or `memsearch history` runs without click (a third
of its start-up), read from the query_args table; help, usage errors and every other command go to click."""

import errno
import os
import sys
from contextlib import suppress


def entry() -> None:
    if (code := quick_query(sys.argv[1:])) is None:
        from .cli import main

        try:
            main()  # code stays None (exit 0) if it returns
        except SystemExit as ex:  # click's standalone mode: an int, None or a message
            code = ex.code
    end_process(code)


def quick_query(argv) -> int | None:
    """Run `memsearch query` or `memsearch history` as click would and return its exit status; None, having
    done nothing, when click must read the command line (or answer shell completion: _<PROG>_COMPLETE)."""
    if not argv or argv[0] not in ("query", "history") or os.name == "nt" or any(
            name.startswith("_") and name.endswith("_COMPLETE") and value for name, value in os.environ.items()):
        return None
    from .query_args import query_kwargs

    if (kwargs := query_kwargs(argv[1:], command=argv[0])) is None:
        return None
    from . import commands, db

    # What the click group and click.main() do around the command.
    try:
        db.warning_sink = commands.print_warning
        return commands.guarded(lambda: (commands.run_query if argv[0] == "query" else commands.run_history)(**kwargs))
    except EOFError:
        commands.print_aborted()
        return 1
    except OSError as ex:
        if ex.errno != errno.EPIPE:
            raise
        # The reader is gone (`| head`): what is left goes nowhere, without an error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        db.warning_sink = None


def end_process(code) -> None:
    """End the process without the interpreter's teardown (up to a fifth of a one-shot query): exit
    handlers run and output is flushed; with another thread alive, sys.exit()."""
    import atexit

    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    threading = sys.modules.get("threading")  # not loaded: no thread was started with it
    if (threading is not None and threading.active_count() > 1) or run_exit_handlers is None:
        sys.exit(code)
    if code is None:
        code = 0
    elif not isinstance(code, int):  # as sys.exit("message") does
        print(code, file=sys.stderr)
        code = 1
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with it closed (>&-): Python made no stream, and click.echo wrote nothing
            continue
        with suppress(OSError, ValueError):  # a closed pipe (| head): click has already said so, or nobody listens
            stream.flush()
    os._exit(code)
