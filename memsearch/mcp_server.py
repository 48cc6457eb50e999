"""``memsearch mcp``: :mod:`memsearch.tool` served over stdio with the official SDK (2.x, imported by
:func:`serve`). Nothing a client sends stops the server: even bugs come back as results with ``isError`` set."""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import signal
import sys
from typing import Any, Iterator

from . import tool
from .errors import MemsearchError
from .index import MemoryIndex

SERVER_NAME = "memsearch"

# Sent at initialization: the rule that matters most, before the first search.
INSTRUCTIONS = (
    "memsearch searches this user's long-term agent memory (Markdown notes from earlier sessions). "
    "Search it with memory_search before asking the user something that may have been recorded; use one "
    "to three rare words, and never conclude a fact was never recorded because one search missed."
)

log = logging.getLogger("memsearch.mcp")

# The longest line read from a client: the largest call any tool takes is a few hundred KB (a path of 20,480
# characters, each escaped \\uNNNN). Past it, a line held whole and parsed would cost four times its size,
# however large.
MAX_LINE_BYTES = 16 << 20


class McpUnavailable(MemsearchError):
    """The MCP SDK is not installed (the mcp extra)."""


@contextlib.contextmanager
def live_freshness(index: MemoryIndex) -> Iterator[None]:
    """An in-process watcher for the server's lifetime, so that searches skip the tree walk."""
    from .watch import Watcher

    watcher = Watcher(index)
    try:
        watcher.start(wait=False)  # the first searches walk while it reconciles
    except MemsearchError as ex:  # stop() is then a no-op
        log.warning("memsearch mcp: no in-process watcher (%s); searches stay fresh by walking the tree", ex)
    try:
        yield
    finally:
        watcher.stop()


class _Lines:
    """The client's lines for the SDK's stdin reader, each at most MAX_LINE_BYTES: a longer one is read
    to its end and dropped, and given as no message (the server answers it so)."""

    def __init__(self, raw) -> None:
        self._raw = raw

    def readline(self) -> str:
        line = self._raw.readline(MAX_LINE_BYTES + 1)
        if len(line) <= MAX_LINE_BYTES:
            return line.decode("utf-8", errors="replace")  # as the SDK decodes stdin
        while line and not line.endswith(b"\n"):
            line = self._raw.readline(1 << 16)  # the rest, in pieces that cost nothing
        log.warning("memsearch mcp: skipped a line longer than %d MiB", MAX_LINE_BYTES >> 20)
        return "{}\n"


def run_tool(index: MemoryIndex, name: str, arguments: Any) -> tool.ToolResult:
    """One tool call that cannot raise: even a bug becomes an error result."""
    try:
        result = tool.call_tool(index, name, arguments)
        # What cannot be sent (a lone surrogate from a file name) would kill the server: fail one call.
        json.dumps(result.data, ensure_ascii=False).encode("utf-8")
        result.text.encode("utf-8")
        return result
    except Exception as ex:  # the server must outlive any single call
        log.exception("memsearch mcp: %s failed", name)
        return tool.error_result(f"internal error in {name}: {type(ex).__name__}: {ex!r}"[:500], "InternalError")


def tool_list(index: MemoryIndex) -> tuple[tool.ToolSpec, ...]:
    """The index's own tool list; the generic one if the index cannot be read now."""
    try:
        return (tool.search_tool(index), *tool.TOOLS[1:])
    except Exception as ex:  # listing tools must never fail the session
        log.warning("memsearch mcp: listing the generic tools (%s: %s)", type(ex).__name__, ex)
        return tool.TOOLS


def serve(index: MemoryIndex) -> None:
    try:  # the optional SDK missing: one actionable line, the install command for this interpreter
        importlib.import_module("mcp.server.stdio")
    except ImportError as ex:
        import shlex

        raise McpUnavailable(
            f"memsearch mcp needs the MCP Python SDK ({ex}): install it into memsearch's environment with"
            f" {shlex.quote(sys.executable)} -m pip install 'mcp>=2.0' 'anyio>=4' (the mcp extra of memsearch-fts)"
        ) from None

    import threading

    import anyio

    # The loop runs in a daemon thread this one waits on: its cancellation waits for the SDK's
    # stdin reader, so only this way do Ctrl-C and SIGTERM end the server at once.
    ended = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            anyio.run(_serve, index)
        except BaseException as ex:  # noqa: BLE001 - raised again below, in the caller's thread
            failed.append(ex)
        finally:
            ended.set()

    # SIGTERM raises KeyboardInterrupt as Ctrl-C does, so the cleanup below runs (a handler
    # setting ``ended`` could deadlock on the event's lock).
    main = threading.current_thread() is threading.main_thread()  # where signal handlers can be set
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler) if main else None
    with live_freshness(index):
        try:
            threading.Thread(target=run, name="memsearch-mcp", daemon=True).start()
            # With a timeout: a signal's handler runs only when this thread next runs Python code.
            while not ended.wait(0.25):
                pass
        except KeyboardInterrupt:  # Ctrl-C in a terminal is a normal way to stop
            return
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
            tool.close_history(index)  # the history tools' connection, opened at their first call
    if failed:
        raise failed[0]


async def _serve(index: MemoryIndex) -> None:
    import anyio
    import mcp.types as types
    from mcp.server import Server  # the low-level server, under this name in every release
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    from . import __version__

    # Worker threads, one at a time per corpus: pings are answered during a long reconcile, a
    # connection is never used by two, and a memory call never waits behind a history read.
    one_at_a_time = anyio.CapacityLimiter(1)
    history_one_at_a_time = anyio.CapacityLimiter(1)

    async def on_call_tool(ctx, params) -> types.CallToolResult:
        limiter = history_one_at_a_time if params.name in tool.HISTORY_TOOLS else one_at_a_time
        result = await anyio.to_thread.run_sync(run_tool, index, params.name, params.arguments, limiter=limiter)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)],
                                    structuredContent=result.data, isError=result.is_error)

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        found = await anyio.to_thread.run_sync(tool_list, index, limiter=one_at_a_time)
        return types.ListToolsResult(tools=[types.Tool(**t.mcp()) for t in found])

    async def answering(read_stream, write_stream, forward) -> None:
        # A line that is no message comes as an exception, which the SDK answers with nothing: answered here.
        async with read_stream, forward:
            async for item in read_stream:
                if not isinstance(item, Exception):
                    await forward.send(item)
                    continue
                log.warning("memsearch mcp: answered an unreadable request with an error (%s)", type(item).__name__)
                errors = getattr(item, "errors", None)
                unparsed = callable(errors) and any(e.get("type") == "json_invalid" for e in errors())
                code, text = ((types.PARSE_ERROR, "Parse error") if unparsed
                              else (types.INVALID_REQUEST, "Invalid Request"))
                await write_stream.send(SessionMessage(types.JSONRPCError.model_construct(
                    jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=text))))

    server = Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    forward, messages = anyio.create_memory_object_stream(0)
    # A reader of its own, as the SDK's: a thread left blocked on sys.stdin's lock aborts the interpreter's exit.
    # (stdout stays the SDK's: it moves fd 1 to stderr.)
    stdin = anyio.wrap_file(_Lines(os.fdopen(sys.stdin.fileno(), "rb", closefd=False)))
    async with stdio_server(stdin) as (read_stream, write_stream), messages, anyio.create_task_group() as tasks:
        tasks.start_soon(answering, read_stream, write_stream, forward)
        await server.run(messages, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()

