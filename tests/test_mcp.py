"""`memsearch mcp` as a real subprocess, driven by the official SDK's stdio client.

Each test runs its client with asyncio.run inside a plain sync test, so no
event loop or subprocess transport outlives the test (filterwarnings=error
would turn a leaked one into a failure).
"""

import asyncio
import inspect
import os
import shutil
import sys

import pytest

from conftest import bump_mtime, write

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

# The SDK takes seconds to import on a busy machine; the server must be up
# and answering well within this.
TIMEOUT_S = 60


def memsearch_exe() -> str:
    exe = shutil.which("memsearch", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("memsearch is not installed as a script next to this Python")
    return exe


def serve(tmp_path, root, script, *extra_args):
    """Start `memsearch mcp`, initialize a session, run ``script(session)``."""
    params = StdioServerParameters(
        command=memsearch_exe(),
        args=["mcp", "--root", str(root), "--db", str(tmp_path / "index.db"), *extra_args],
        env=dict(os.environ),  # the isolated XDG dirs from conftest
    )

    async def main():
        with open(tmp_path / "server-stderr.log", "w") as errlog:
            # The server's stderr goes to a file (the oldest 1.x clients cannot redirect it).
            redirect = {"errlog": errlog} if "errlog" in inspect.signature(stdio_client).parameters else {}
            async with stdio_client(params, **redirect) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await asyncio.wait_for(session.initialize(), TIMEOUT_S)
                    return await asyncio.wait_for(script(session), TIMEOUT_S)

    out = asyncio.run(main())
    log = (tmp_path / "server-stderr.log").read_text()
    assert "Traceback" not in log, log
    return out


async def call(session, arguments, name="memory_search") -> dict:
    """A call result as plain JSON with the protocol's field names (SDK 1.x and 2.x alike)."""
    result = await session.call_tool(name, arguments)
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert [c["type"] for c in data["content"]] == ["text"]
    data["text"] = data["content"][0]["text"]
    data.setdefault("isError", False)
    return data


def test_lists_tools_then_hits_zero_hits_and_filters(tree, tmp_path):
    async def script(session):
        tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in (await session.list_tools()).tools]
        return (
            tools,
            await call(session, {"query": "pgbouncer"}),
            await call(session, {"query": "xylophone"}),
            await call(session, {"query": "rounding", "scope": "sessions", "type": "progress", "limit": 3}),
        )

    tools, hit, nothing, filtered = serve(tmp_path, tree, script)
    tools = {t["name"]: t for t in tools}
    assert set(tools) == {"memory_search", "memory_read"}
    search = tools["memory_search"]
    schema = search["inputSchema"]
    assert schema["required"] == ["query"]
    assert set(schema["properties"]) == {"query", "scope", "scope_id", "type", "limit"}
    # Only the scopes of the roots served: a mimo tree has no cc or zcode hits.
    assert schema["properties"]["scope"]["enum"] == ["global", "projects", "sessions"]
    assert schema["properties"]["type"]["enum"][:5] == ["memory", "checkpoint", "progress", "notes", "free"]
    assert "shop (projects)" in schema["properties"]["scope_id"]["description"]
    assert (schema["properties"]["limit"]["minimum"], schema["properties"]["limit"]["maximum"]) == (1, 50)
    assert "one to three rare" in search["description"] and "check it answers the question" in search["description"]
    assert tools["memory_read"]["inputSchema"]["required"] == ["path"]

    assert not hit["isError"]
    assert "projects/shop/memory-db.md  [projects/shop · memory]  score " in hit["text"]
    assert "Connection via <<pgbouncer>>." in hit["text"]
    first = hit["structuredContent"]["results"][0]
    assert (first["path"], first["scope"], first["scope_id"], first["type"]) == (
        "projects/shop/memory-db.md", "projects", "shop", "memory")
    assert first["file"] == str(tree / "projects" / "shop" / "memory-db.md")

    assert not nothing["isError"]
    assert nothing["text"].startswith("No memory matched 'xylophone'.")
    for step in ("fewer and rarer words", f"grep -rni WORD {tree}", "raw conversation history"):
        assert step in nothing["text"]
    assert nothing["structuredContent"]["results"] == []

    assert [h["path"] for h in filtered["structuredContent"]["results"]] == ["sessions/s1/tasks/T1/progress.md"]


def test_bad_calls_are_tool_errors_and_the_server_lives_on(tree, tmp_path):
    bad = [
        ({}, "missing argument 'query'"),
        ({"query": ""}, "query is empty"),
        ({"query": "  *  "}, "no searchable words"),
        ({"query": "x", "scope": "galaxy"}, "scope must be one of global, projects, sessions, cc, zcode"),
        ({"query": "x", "limit": 0}, "limit must be a whole number from 1 to 50, got 0"),
        ({"query": "x", "limit": 500}, "got 500"),
        ({"query": "x", "limit": "ten"}, "got 'ten'"),
        ({"query": ["x"]}, "query must be a string"),
        ({"query": "x", "colour": "red"}, "unknown argument 'colour'"),
    ]

    async def script(session):
        out = []
        for arguments, _ in bad:
            out.append(await call(session, arguments))
            out.append(await call(session, {"query": "pgbouncer"}))  # still answering, correctly
        out.append(await call(session, {"query": "x"}, name="memory_delete"))
        out.append(await call(session, {"path": "../../etc/passwd.md"}, name="memory_read"))
        out.append(await call(session, {"query": "webhook"}))
        return out

    results = serve(tmp_path, tree, script)
    for (arguments, message), error, after in zip(bad, results[0::2], results[1::2]):
        assert error["isError"], arguments
        assert error["text"].startswith("Error: ") and message in error["text"], error["text"]
        assert not after["isError"] and "<<pgbouncer>>" in after["text"]
    unknown, escape, last = results[-3:]
    assert unknown["isError"] and "unknown tool 'memory_delete'" in unknown["text"]
    assert escape["isError"] and "outside the memory folder" in escape["text"]
    assert not last["isError"] and "<<webhook>>" in last["text"]


def test_edits_between_calls_are_seen(tree, tmp_path):
    path = tree / "global" / "user" / "animals.md"

    async def script(session):
        seen = [await call(session, {"query": "okapi"})]
        write(tree, "global/user/animals.md", "The okapi lives in the forest.\n")
        seen.append(await call(session, {"query": "okapi"}))
        path.write_text("The zebu lives on the farm!!!\n")
        bump_mtime(path)  # same size, so the fingerprint moves by mtime
        seen.append(await call(session, {"query": "okapi"}))
        seen.append(await call(session, {"query": "zebu"}))
        path.unlink()
        seen.append(await call(session, {"query": "zebu"}))
        return seen

    before, added, edited_old, edited_new, deleted = serve(tmp_path, tree, script)
    assert before["structuredContent"]["results"] == []
    assert [h["path"] for h in added["structuredContent"]["results"]] == ["global/user/animals.md"]
    assert edited_old["structuredContent"]["results"] == []
    assert "<<zebu>>" in edited_new["text"]
    assert deleted["structuredContent"]["results"] == [] and "No memory matched" in deleted["text"]


def test_memory_read_inside_the_root_only(tree, tmp_path):
    write(tmp_path, "outside.md", "top secret")
    os.symlink(tmp_path / "outside.md", tree / "global" / "escape.md")

    async def script(session):
        hit = (await call(session, {"query": "pgbouncer"}))["structuredContent"]["results"][0]
        return (
            await call(session, {"path": hit["path"]}, name="memory_read"),
            await call(session, {"path": hit["file"]}, name="memory_read"),
            await call(session, {"path": "../outside.md"}, name="memory_read"),
            await call(session, {"path": "global/escape.md"}, name="memory_read"),
        )

    by_rel, by_abs, traversal, link = serve(tmp_path, tree, script)
    for ok in (by_rel, by_abs):
        assert not ok["isError"] and ok["text"] == "PostgreSQL 16 listens on port 5433. Connection via pgbouncer.\n"
    for refused in (traversal, link):
        assert refused["isError"] and "outside the memory folder" in refused["text"]
        assert "top secret" not in refused["text"]
