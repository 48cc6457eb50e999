"""The low items of issue 29 on the memory side: one-line usage errors, doctor
on nested instruction files, memory_read reading what the index reads, roots
whose folder name is not UTF-8, unparseable MCP requests."""

import pytest

from conftest import run_memsearch, write


@pytest.mark.parametrize("args", [["query", "--bogus", "x"], ["nope"], ["query"], ["query", "x", "--limit", "0"],
                                  ["index", "--root"], ["history", "x", "--role", "nobody"]])
def test_usage_errors_are_one_line(args):
    run = run_memsearch(*args)
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("Error: "), run.stderr


def test_doctor_on_nested_instruction_files_finds_them_and_fix_clears_real_problems(tmp_path):
    src = tmp_path / "src"
    write(src, "lib/CLAUDE.md", "top\n")
    write(src, "lib/pkg/a/AGENTS.md", "nested quokka\n")
    db = tmp_path / "db"
    assert run_memsearch("index", "--root", f"repos={src}", "--db", db).returncode == 0
    checked = run_memsearch("doctor", "--root", f"repos={src}", "--db", db)
    assert checked.returncode == 0, checked.stdout
    write(src, "lib/pkg/b/CLAUDE.md", "another nested one\n")  # a real problem: not indexed yet
    checked = run_memsearch("doctor", "--root", f"repos={src}", "--db", db)
    assert checked.returncode == 1 and "1 files missing from the index (lib/pkg/b/CLAUDE.md)" in checked.stdout
    fixed = run_memsearch("doctor", "--root", f"repos={src}", "--db", db, "--fix")
    assert fixed.returncode == 0, fixed.stdout
    assert run_memsearch("doctor", "--root", f"repos={src}", "--db", db).returncode == 0


def test_memory_read_reads_exactly_the_nested_files_the_index_reads(tmp_path):
    from memsearch import MemoryIndex, Root
    from memsearch.tool import call_tool

    src = tmp_path / "src"
    write(src, "lib/pkg/AGENTS.md", "read me\n")
    write(src, "lib/a/b/c/d/e/f/g/CLAUDE.md", "eight folders down\n")  # past the deep walk's NESTED_DEPTH
    write(src, "lib/tools/pyvenv.cfg", "home = /usr\n")
    write(src, "lib/tools/lib/pkg/CLAUDE.md", "inside a virtual environment\n")
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx:
        idx.reconcile()
        indexed = {p for (p,) in idx.conn.execute("SELECT path FROM memory_fts")}
        assert "lib/pkg/AGENTS.md" in indexed and len(indexed) == 1
        assert call_tool(idx, "memory_read", {"path": "lib/pkg/AGENTS.md"}).text == "read me\n"
        for path in ("lib/a/b/c/d/e/f/g/CLAUDE.md", "lib/tools/lib/pkg/CLAUDE.md"):
            refused = call_tool(idx, "memory_read", {"path": path})
            assert refused.is_error and "memory" in refused.text, path


def test_a_watched_root_whose_folder_name_is_not_utf8_works(tmp_path, monkeypatch):
    """The watcher's row keeps the folder losslessly (surrogateescape bytes): it raised a raw
    UnicodeEncodeError from SQLite, and queries then walked (issue 29 low item)."""
    import os

    from memsearch import MemoryIndex, Root
    from memsearch.watch import Watcher

    config = tmp_path / "config.toml"
    config.write_text("sync_timeout = 60\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(config))
    folder = os.path.join(str(tmp_path), os.fsdecode(b"caf\xe9"))
    write(tmp_path / os.fsdecode(b"caf\xe9"), "note.md", "The quokka enclosure opens at nine.\n")
    with MemoryIndex(Root("plain", folder), tmp_path / "db") as idx:
        with Watcher(idx):
            result = idx.search_result("quokka")
            assert result.freshness.via == "watcher" and [h.path for h in result.hits] == ["note.md"]


def test_unreadable_mcp_requests_get_a_json_rpc_error_and_the_next_call_is_served(tree, tmp_path):
    """A lone surrogate, 1,000 levels of nesting, text that is no JSON: the SDK answered nothing
    (a client waits for ever); each gets a JSON-RPC error with id null, in order."""
    import json
    import subprocess
    import threading

    from conftest import memsearch_exe
    from test_mcp import INIT_LINES

    bad = ['{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_search",'
           ' "arguments": {"query": "\\ud800"}}}',
           '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ' + "[" * 1000 + "]" * 1000 + "}",
           "not json"]
    good = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "pgbouncer"}}}
    with open(tmp_path / "stderr.log", "w") as errlog:
        proc = subprocess.Popen([memsearch_exe(), "mcp", "--root", str(tree), "--db", str(tmp_path / "index.db")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, text=True)
        try:
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in INIT_LINES) + "\n".join(bad) + "\n"
                             + json.dumps(good) + "\n")
            proc.stdin.flush()
            lines = []

            def read():  # the initialize answer, three errors, the search
                while len(lines) < 5 and (line := proc.stdout.readline()):
                    lines.append(json.loads(line))

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            reader.join(60)  # a guard against a hang, not a measure
            assert len(lines) == 5, lines
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
    assert [answer["error"]["code"] for answer in lines[1:4]] == [-32700] * 3
    assert [answer["id"] for answer in lines[1:4]] == [None] * 3
    assert lines[4]["id"] == 9 and not lines[4]["result"]["isError"]
