import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import bump_mtime, write
from memsearch import tool
from memsearch.tool import READ_TOOL, SEARCH_TOOL, SCOPES, ToolArgumentError, call_tool, parse_search_args


# -- the definition ------------------------------------------------------------
def test_schema_shape():
    schema = SEARCH_TOOL.input_schema
    assert SEARCH_TOOL.name == "memory_search"
    assert schema["type"] == "object" and schema["required"] == ["query"]
    assert set(schema["properties"]) == {"query", "scope", "scope_id", "type", "limit"}
    assert schema["properties"]["scope"]["enum"] == ["global", "projects", "sessions", "cc", "zcode"]
    limit = schema["properties"]["limit"]
    assert (limit["type"], limit["minimum"], limit["maximum"], limit["default"]) == ("integer", 1, 50, 10)
    assert schema["additionalProperties"] is False
    assert READ_TOOL.input_schema["required"] == ["path"]


def test_schemas_are_valid_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    for spec in tool.TOOLS:
        jsonschema.Draft202012Validator.check_schema(spec.input_schema)
    validator = jsonschema.Draft202012Validator(SEARCH_TOOL.input_schema)
    assert validator.is_valid({"query": "pgbouncer", "scope": "cc", "limit": 50})
    assert not validator.is_valid({"query": "x", "limit": 51})
    assert not validator.is_valid({"scope": "global"})


@pytest.mark.parametrize(
    "teaching",
    [
        "one to three rare",  # how to phrase a query
        "config, params, database",  # the generic words to avoid
        "A hit is authoritative",
        "never conclude something was never recorded",
        "exact literal (a connection string, port, full command",  # when to read the file
        "fewer and rarer words",  # escalation, in order
        "plain text",
        "raw conversation history",
        "from this session to the project to global",
    ],
)
def test_description_teaches_the_model(teaching):
    assert teaching in SEARCH_TOOL.description


def test_host_shapes():
    assert SEARCH_TOOL.mcp() == {
        "name": "memory_search", "description": SEARCH_TOOL.description, "inputSchema": SEARCH_TOOL.input_schema,
    }
    assert SEARCH_TOOL.anthropic()["input_schema"] is SEARCH_TOOL.input_schema
    openai = SEARCH_TOOL.openai()
    assert openai["type"] == "function" and openai["function"]["parameters"] is SEARCH_TOOL.input_schema
    json.dumps([t.mcp() for t in tool.TOOLS])  # all plain JSON


# -- argument checks -------------------------------------------------------------
def test_parse_defaults_and_normalising():
    args = parse_search_args({"query": "  pgbouncer  ", "scope": "Projects", "scope_id": None, "limit": 5.0})
    assert args == tool.SearchArgs("pgbouncer", "projects", None, None, 5)
    assert parse_search_args({"query": "x"}).limit == 10
    assert [parse_search_args({"query": "x", "scope": s}).scope for s in SCOPES] == list(SCOPES)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({}, "missing argument 'query'"),
        (None, "missing argument 'query'"),
        ({"query": ""}, "query is empty"),
        ({"query": "   "}, "query is empty"),
        ({"query": 42}, "query must be a string of words, got a number"),
        ({"query": "x" * 1001}, "at most 1000"),
        ({"query": "x", "scope": "galaxy"}, "scope must be one of global, projects, sessions, cc, zcode; got 'galaxy'"),
        ({"query": "x", "scope": 3}, "scope must be a string"),
        ({"query": "x", "scope_id": ""}, "scope_id is empty"),
        ({"query": "x", "type": ["memory"]}, "type must be a string, got a list"),
        ({"query": "x", "limit": 0}, "limit must be a whole number from 1 to 50, got 0"),
        ({"query": "x", "limit": 51}, "from 1 to 50, got 51"),
        ({"query": "x", "limit": -3}, "got -3"),
        ({"query": "x", "limit": 2.5}, "got 2.5"),
        ({"query": "x", "limit": "5"}, "got '5'"),
        ({"query": "x", "limit": True}, "got True"),
        ({"query": "x", "limit": float("nan")}, "got nan"),
        ({"query": "x", "colour": "red"}, "unknown argument 'colour' for memory_search; expected query, scope"),
        (["x"], "arguments must be a JSON object, got a list"),
    ],
)
def test_parse_rejects(arguments, message):
    with pytest.raises(ToolArgumentError) as caught:
        parse_search_args(arguments)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


# -- memory_search ---------------------------------------------------------------
def test_search_hits_text_and_data(index, tree):
    result = call_tool(index, "memory_search", {"query": "pgbouncer"})
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[0].startswith("1 hit for 'pgbouncer', best first")
    file = os.path.join(str(tree), "projects", "shop", "memory-db.md")
    assert lines[1].startswith(f"1. {file}  [projects/shop · memory]  score ")
    assert lines[2] == "   PostgreSQL 16 listens on port 5433. Connection via <<pgbouncer>>."
    hit = result.data["results"][0]
    assert hit["path"] == "projects/shop/memory-db.md" and hit["file"] == file
    assert set(hit) == {"path", "scope", "scope_id", "type", "score", "snippet", "file"}
    assert (hit["scope"], hit["scope_id"], hit["type"]) == ("projects", "shop", "memory")
    assert result.data["query"] == "pgbouncer" and "hint" not in result.data
    json.dumps(result.data)


def test_search_filters_and_limit(index):
    result = call_tool(index, "memory_search", {"query": "rounding", "scope": "sessions", "type": "progress"})
    assert [h["path"] for h in result.data["results"]] == ["sessions/s1/tasks/T1/progress.md"]
    assert "(scope=sessions, type=progress)" in result.text.splitlines()[0]
    result = call_tool(index, "memory_search", {"query": "rounding cents checkpoint", "limit": 1})
    assert len(result.data["results"]) == 1 and result.text.startswith("1 hit for")
    result = call_tool(index, "memory_search", {"query": "pgbouncer", "scope": "cc"})
    assert result.data["results"] == [] and not result.is_error


def test_zero_hits_hint(index, tree):
    result = call_tool(index, "memory_search", {"query": "xylophone"})
    assert not result.is_error
    assert result.text.startswith("No memory matched 'xylophone'.\nDo not conclude it was never recorded")
    for step in ("1. Retry with fewer and rarer words", f"2. Search the memory folder as plain text (grep -rni WORD {tree})",
                 "3. Search the raw conversation history"):
        assert step in result.text
    assert result.data["results"] == [] and result.data["hint"] in result.text


def test_zero_hint_quotes_an_odd_root(tmp_path):
    root = tmp_path / "it's memory"
    root.mkdir()
    from memsearch import MemoryIndex

    with MemoryIndex(root, tmp_path / "db") as idx:
        text = call_tool(idx, "memory_search", {"query": "nothing"}).text
    assert "grep -rni WORD '" in text and "'\\''s memory'" in text


def test_search_sees_edits(index, tree):
    assert call_tool(index, "memory_search", {"query": "okapi"}).data["results"] == []
    path = write(tree, "global/user/animals.md", "The okapi lives in the forest.\n")
    assert [h["path"] for h in call_tool(index, "memory_search", {"query": "okapi"}).data["results"]] == [
        "global/user/animals.md"
    ]
    path.write_text("The zebu lives on the farm!!!\n")
    bump_mtime(path)
    assert call_tool(index, "memory_search", {"query": "okapi"}).data["results"] == []
    assert call_tool(index, "memory_search", {"query": "zebu"}).data["results"][0]["path"] == "global/user/animals.md"


@pytest.mark.parametrize(
    "name, arguments, message",
    [
        ("memory_search", {"query": "  *  "}, "no searchable words"),
        ("memory_search", {"query": "x", "limit": 0}, "limit must be"),
        ("memory_search", {"query": "x", "scope": "nope"}, "scope must be one of"),
        ("memory_fetch", {"query": "x"}, "unknown tool 'memory_fetch': this server has memory_search, memory_read"),
    ],
)
def test_call_tool_turns_errors_into_results(index, name, arguments, message):
    result = call_tool(index, name, arguments)
    assert result.is_error
    assert result.text.startswith("Error: ") and message in result.text
    assert message in result.data["error"] and result.data["error_type"]


def test_unusable_index_is_an_error_result(tree, tmp_path):
    from memsearch import MemoryIndex

    db = tmp_path / "db"
    with MemoryIndex(tree, db) as idx:
        idx.reconcile()
        idx.conn.execute("PRAGMA user_version = 9999")
    with MemoryIndex(tree, db) as idx:
        result = call_tool(idx, "memory_search", {"query": "pgbouncer"})
    assert result.is_error and result.data["error_type"] == "SchemaTooNew"


# -- memory_read -------------------------------------------------------------------
def test_read_by_hit_path(index, tree):
    rel = call_tool(index, "memory_search", {"query": "pgbouncer"}).data["results"][0]
    for path in (rel["path"], rel["file"]):
        result = call_tool(index, "memory_read", {"path": path})
        assert not result.is_error
        assert result.text == "PostgreSQL 16 listens on port 5433. Connection via pgbouncer.\n"
        assert result.data["path"] == path and result.data["truncated"] is False
        assert result.data["file"] == str(tree / "projects" / "shop" / "memory-db.md")


def test_read_truncates_huge_files(index, tree):
    write(tree, "global/big.md", "word " * 30_000)
    result = call_tool(index, "memory_read", {"path": "global/big.md"})
    assert result.data["truncated"] is True
    assert result.text.endswith(f"[... truncated at {tool.MAX_READ_CHARS} characters]")


def test_read_refuses_anything_outside(index, tree, tmp_path):
    outside = write(tmp_path, "secret.md", "top secret")
    write(tmp_path, "secret.txt", "top secret")
    write(tree, ".git/notes.md", "hidden")
    write(tree, "projects/shop/notes.txt", "not markdown")
    os.symlink(outside, tree / "projects" / "shop" / "link.md")
    os.symlink(tmp_path / "secret.txt", tree / "projects" / "shop" / "sneaky.md")
    cases = {
        "../secret.md": "outside the memory folder",
        str(outside): "outside the memory folder",
        "projects/../../secret.md": "outside the memory folder",
        "projects/shop/link.md": "outside the memory folder",
        "/etc/passwd": "only Markdown memory files (.md)",
        "projects/shop/notes.txt": "only Markdown memory files (.md)",
        ".git/notes.md": "hidden folder",
        "projects/shop/missing.md": "no memory file at",
        "projects/shop/a\0.md": "NUL",
        ".md": "hidden folder",
        "": "path must be a non-empty string",
    }
    for path, message in cases.items():
        result = call_tool(index, "memory_read", {"path": path})
        assert result.is_error, path
        assert message in result.text, (path, result.text)
        assert "top secret" not in result.text
    assert "outside the memory folder" in call_tool(index, "memory_read", {"path": "projects/shop/sneaky.md"}).text
    assert call_tool(index, "memory_read", {}).is_error
    assert "unknown argument" in call_tool(index, "memory_read", {"path": "x.md", "offset": 3}).text


def test_read_follows_links_inside_the_root(index, tree):
    os.symlink(tree / "projects" / "shop" / "memory-db.md", tree / "global" / "db-link.md")
    result = call_tool(index, "memory_read", {"path": "global/db-link.md"})
    assert not result.is_error and "pgbouncer" in result.text
    assert result.data["file"] == str(tree / "projects" / "shop" / "memory-db.md")


def test_several_roots(tree, tmp_path):
    """Hits from an index of several roots carry the root's name; files and reads still resolve."""
    pytest.importorskip("memsearch.roots", reason="multi-root indexes are not in this build yet")
    from memsearch import MemoryIndex

    notes = tmp_path / "notes"
    write(notes, "ideas.md", "Try the capybara cache for sessions.\n")
    with MemoryIndex(roots=[tree, notes], db_path=tmp_path / "multi.db") as idx:
        found = call_tool(idx, "memory_search", {"query": "capybara"})
        hit = found.data["results"][0]
        assert hit["file"] == str(notes / "ideas.md") and hit["file"] in found.text
        read = call_tool(idx, "memory_read", {"path": hit["path"]})
        assert not read.is_error and "capybara" in read.text
        assert call_tool(idx, "memory_read", {"path": str(notes / "ideas.md")}).text == read.text
        assert "outside the memory folder" in call_tool(idx, "memory_read", {"path": "nowhere:x.md"}).text
        nothing = call_tool(idx, "memory_search", {"query": "xylophone"}).text
        assert str(tree) in nothing and str(notes) in nothing


# -- import weight -------------------------------------------------------------------
def test_query_path_does_not_load_the_tool(tree, tmp_path):
    code = (
        "import sys\n"
        "from memsearch.cli import main\n"
        "try:\n"
        f"    main(['query', 'pgbouncer', '--root', {str(tree)!r}, '--db', {str(tmp_path / 'db')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED=' + ','.join(m for m in ('memsearch.tool', 'memsearch.mcp_server', 'mcp', 'anyio')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "LOADED="


def test_tool_module_imports_neither_mcp_nor_click():
    code = "import sys, memsearch.tool, memsearch.mcp_server; print(sorted(m for m in ('mcp', 'click') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- `memsearch mcp` failing before any session ---------------------------------------
def _memsearch_exe() -> str:
    exe = shutil.which("memsearch", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("memsearch is not installed as a script next to this Python")
    return exe


def test_startup_errors_are_one_line(tmp_path):
    missing = subprocess.run([_memsearch_exe(), "mcp", "--root", str(tmp_path / "missing")],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("Error: memory root does not exist") and missing.stderr.count("\n") == 1


def test_missing_sdk_message(tree, tmp_path):
    # A None entry in sys.modules makes `import mcp` fail as if not installed.
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None\n"
        "from memsearch.cli import main\n"
        f"main(['mcp', '--root', {str(tree)!r}, '--db', {str(tmp_path / 'db')!r}])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert "pip install 'memsearch-fts[mcp]'" in out.stderr and out.stderr.startswith("Error: memsearch mcp needs")
