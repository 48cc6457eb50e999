"""Issue 32, the first five minutes: a Claude Code user with nothing configured
runs the installed command with no flags (a fake HOME, see conftest's
isolated_home)."""

import json
import os
import shlex
import subprocess
import time

import pytest
from conftest import line, memsearch_exe, run_memsearch, transcript, write

from memsearch import MemoryIndex, Root, RootNotFound
from memsearch.fingerprint import RACY_NS

SLUG = "-home-me-shop"


@pytest.fixture
def claude_home(isolated_home, monkeypatch):
    """~/.claude/projects/<slug>/memory/ and a transcript; no ZCode, no MiMo, no config."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    projects = isolated_home / ".claude" / "projects"
    write(projects / SLUG / "memory", "database.md",
          "---\nname: database\ndescription: the shop database\ntype: project\n---\n"
          "pgbouncer listens on 6432 in front of PostgreSQL.\n")
    write(projects / SLUG / "memory", "MEMORY.md", "- [database](database.md): pgbouncer on 6432\n")
    transcript(projects, [line("user", "why did we pin pgbouncer to 1.21?"),
                          line("assistant", "pgbouncer 1.22 broke prepared statements, so we pinned 1.21.")],
               session="95e6f011-aaaa-bbbb-cccc-000000000001", project=SLUG)
    return isolated_home


def test_query_needs_no_flags_and_status_says_which_agents(claude_home):
    found = run_memsearch("query", "pgbouncer")
    assert found.returncode == 0, found.stderr
    memory = claude_home / ".claude" / "projects" / SLUG / "memory"
    assert found.stdout.startswith(f"{memory / 'database.md'}  [cc/{SLUG} · project]")
    status = run_memsearch("status")
    assert status.returncode == 0, status.stderr
    assert f"cc (claude): {claude_home / '.claude' / 'projects'}" in status.stdout
    # The absent default locations are a note, not an error.
    assert "zcode: " in status.stdout and "mimo: " in status.stdout and "does not exist" in status.stdout
    data = json.loads(run_memsearch("status", "--json").stdout)
    assert [s.split(":")[0] for s in data["skipped"]] == ["zcode", "mimo"]


def test_status_prints_nothing_empty_and_ages_with_units(claude_home):
    out = run_memsearch("status").stdout
    assert "None" not in out and "watcher pid" not in out, out
    assert not [line for line in out.splitlines() if line.rstrip().endswith(":")], out  # no empty "left out:"
    assert "database bytes:" in out and " bytes\n" in out


def test_hit_paths_open_in_a_shell(claude_home):
    """-home-me-shop/memory/database.md is an option to cat; the path shown is the file."""
    human = run_memsearch("query", "pgbouncer").stdout.splitlines()[0]
    shown = human.split("  [")[0]
    assert os.path.isabs(shown)
    cat = subprocess.run(f"cat {shlex.quote(shown)}", shell=True, capture_output=True, text=True)
    assert cat.returncode == 0 and "6432" in cat.stdout
    data = json.loads(run_memsearch("query", "pgbouncer", "--json").stdout)
    hit = data["results"][0]
    assert hit["path"] == f"{SLUG}/memory/database.md" and os.path.isfile(hit["file"]) and os.path.isabs(hit["file"])


def test_several_roots_show_files_too(claude_home):
    write(claude_home / "notes", "ideas.md", "pgbouncer pool modes\n")
    out = run_memsearch("query", "pgbouncer", "--root", "claude", "--root", f"plain={claude_home / 'notes'}").stdout
    assert f"{claude_home / 'notes' / 'ideas.md'}  [" in out and "cc:" not in out and "notes:" not in out


def test_config_roots_skip_an_absent_default_location(claude_home):
    write(claude_home / "notes", "ideas.md", "pgbouncer pool modes\n")
    write(claude_home / "config" / "memsearch", "config.toml", 'roots = ["claude", "zcode", "~/notes"]\n')
    found = run_memsearch("query", "pgbouncer", "--json")
    assert found.returncode == 0, found.stderr
    assert {h["scope"] for h in json.loads(found.stdout)["results"]} == {"cc", None}
    # A folder named that does not exist stays an error.
    write(claude_home / "config" / "memsearch", "config.toml", 'roots = ["claude", "~/nowhere"]\n')
    missing = run_memsearch("query", "pgbouncer")
    assert missing.returncode == 2 and "nowhere" in missing.stderr and missing.stderr.count("\n") == 1


def test_an_explicit_missing_folder_is_an_error(claude_home):
    missing = run_memsearch("query", "pgbouncer", "--root", claude_home / "nowhere")
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_no_agent_memory_at_all_is_one_line(isolated_home, monkeypatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    done = run_memsearch("query", "pgbouncer")
    assert done.returncode == 2 and done.stderr.startswith("Error: no agent memory found") and \
        done.stderr.count("\n") == 1, done.stderr
    assert "--root" in done.stderr


def test_the_library_skips_absent_default_locations(claude_home, tmp_path):
    with MemoryIndex(db_path=tmp_path / "db") as idx:  # nothing configured: the agents found here
        assert [r.kind for r in idx.roots] == ["claude"] and len(idx.skipped) == 2
        assert idx.search("pgbouncer")[0].file == str(claude_home / ".claude" / "projects" / SLUG / "memory"
                                                          / "database.md")
    with MemoryIndex(roots=[Root("claude"), Root("zcode")], db_path=tmp_path / "db2") as idx:
        assert [r.kind for r in idx.roots] == ["claude"]
    with pytest.raises(RootNotFound):
        MemoryIndex(roots=[Root("claude"), Root("plain", str(tmp_path / "nowhere"))], db_path=tmp_path / "db3")


def test_history_and_session_context_need_no_flags(claude_home):
    found = run_memsearch("history", "pgbouncer", "--json")
    assert found.returncode == 0, found.stderr
    session = json.loads(found.stdout)["results"][0]["session"]
    context = run_memsearch("session-context", session[:8], "--query", "why pin pgbouncer")
    assert context.returncode == 0 and "prepared statements" in context.stdout, context.stderr



# -- help and tools that agree with what they do -------------------------------------

def test_help_says_what_the_commands_do():
    top = run_memsearch("--help").stdout
    listing = top.split("Commands:")[1].split("Examples:")[0]
    assert "..." not in listing, listing  # no summary cut mid-sentence
    assert "Examples:" in top and "memsearch query " in top and "claude mcp add memsearch -- memsearch mcp" in top
    mcp = run_memsearch("mcp", "--help").stdout
    assert "four tools" in mcp and all(n in mcp for n in ("memory_search", "memory_read", "history_search",
                                                         "read_session_context"))
    query = run_memsearch("query", "--help").stdout
    assert "MEMSEARCH_ROOTS" in query and "DIRECTORY" not in query and "--root ROOT" in query
    bare = run_memsearch()  # the help, not an "Error: Usage: ..." line wrapping it
    assert bare.returncode in (0, 2) and "Error" not in bare.stdout + bare.stderr
    assert (bare.stdout + bare.stderr).startswith("Usage: memsearch") and "Commands:" in bare.stdout + bare.stderr


@pytest.mark.parametrize("command", ["query", "index", "status", "manifest", "context", "mcp", "watch", "doctor",
                                     "history", "session-context"])
def test_defaults_are_spelled_one_way(command):
    text = " ".join(run_memsearch(command, "--help").stdout.split())
    assert "(default" not in text and "Default:" not in text and "Env:" not in text, text


def test_a_file_named_like_a_root_kind_is_no_matter(claude_home, tmp_path):
    (tmp_path / "claude").write_text("not a folder\n")
    for argv in (["query", "pgbouncer", "--root", "claude"], ["status", "--root", "claude"]):
        done = subprocess.run([memsearch_exe(), *argv], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


def test_history_project_takes_the_folders_last_part(claude_home):
    found = run_memsearch("history", "pgbouncer", "--project", "shop", "--json")
    assert found.returncode == 0 and {h["project"] for h in json.loads(found.stdout)["results"]} == {SLUG}
    assert run_memsearch("history", "pgbouncer", "--project", "hop").returncode == 1  # a part, not a suffix


def test_the_open_hint_is_a_command_that_runs(claude_home):
    text = run_memsearch("history", "pin", "pgbouncer").stdout
    hint = text.split("open a session: ")[1].strip()
    assert "TEXT" not in hint and hint.endswith("--query 'pin pgbouncer'")
    done = subprocess.run(hint.replace("memsearch", shlex.quote(memsearch_exe()), 1), shell=True, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "prepared statements" in done.stdout, done.stderr


def test_the_four_mcp_tools_with_no_flags_and_one_argument_style(claude_home, tmp_path):
    """`memsearch mcp` with nothing configured serves the Claude Code memory and history; every
    argument is camelCase, and a snake_case spelling is answered with the right name."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=memsearch_exe(), args=["mcp"], env=dict(os.environ))

    async def main():
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await asyncio.wait_for(session.initialize(), 60)
                    tools = (await session.list_tools()).tools
                    calls = [("memory_search", {"query": "pgbouncer", "scopeId": SLUG}),
                             ("memory_read", {"path": f"{SLUG}/memory/database.md"}),
                             ("history_search", {"query": "pgbouncer", "sessionId": "95e6f011"}),
                             ("read_session_context", {"sessionId": "95e6f011", "query": "why pin", "maxTokens": 1000}),
                             ("memory_search", {"query": "pgbouncer", "scope_id": SLUG}),
                             ("read_session_context", {"session_id": "95e6f011", "query": "why"})]
                    return tools, [await session.call_tool(name, args) for name, args in calls]

    tools, results = asyncio.run(main())
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    assert {t["name"] for t in tools} == {"memory_search", "memory_read", "history_search", "read_session_context"}
    for t in tools:  # one style: no snake_case argument
        assert all("_" not in p for p in t["inputSchema"]["properties"]), (t["name"], t["inputSchema"]["properties"])
    results = [r.model_dump(by_alias=True, mode="json") for r in results]  # SDK 1.x and 2.x alike
    text = [r["content"][0]["text"] for r in results]
    assert not any(r["isError"] for r in results[:4]), text[:4]
    assert str(claude_home / ".claude" / "projects" / SLUG / "memory" / "database.md") in text[0]
    assert "6432" in text[1] and "<<pgbouncer>> 1.22 broke" in text[2] and "prepared statements" in text[3]
    assert results[4]["isError"] and "did you mean 'scopeId'?" in text[4], text[4]
    assert results[5]["isError"] and "did you mean 'sessionId'?" in text[5], text[5]


def test_mcp_in_a_terminal_says_it_waits(claude_home):
    """Run by hand, `memsearch mcp` printed nothing: it seemed to hang."""
    import pty
    import select

    primary, secondary = pty.openpty()
    proc = subprocess.Popen([memsearch_exe(), "mcp"], stdin=secondary, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    os.close(secondary)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready, "nothing on stderr"
        first = proc.stderr.readline()
        assert "waiting for an MCP client" in first and "claude mcp add memsearch -- memsearch mcp" in first
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
        os.close(primary)


def test_other_systems_get_fresh_queries_without_a_watcher(tree, tmp_path, monkeypatch):
    """The watcher is Linux's (inotify); elsewhere it says so, and queries walk the tree."""
    import sys

    from memsearch.errors import WatcherError
    from memsearch.watch import Watcher

    monkeypatch.setattr(sys, "platform", "darwin")
    with MemoryIndex(tree, tmp_path / "db") as idx:
        with pytest.raises(WatcherError, match="needs Linux"):
            Watcher(idx).start()
        write(tree, "global/user/new.md", "okapi arrived\n")
        result = idx.search_result("okapi")
        assert [h.path for h in result.hits] == ["global/user/new.md"] and result.freshness.via == "walk"


# -- terminal manners ---------------------------------------------------------------

def on_a_terminal(argv, env=None, stdin=None):
    """Run the installed script with stdout and stderr on a pseudo-terminal; (status, what it wrote)."""
    import pty

    primary, secondary = pty.openpty()
    proc = subprocess.Popen([memsearch_exe(), *map(str, argv)], stdin=stdin or subprocess.DEVNULL,
                            stdout=secondary, stderr=secondary, env={**os.environ, **(env or {})})
    os.close(secondary)
    out = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(primary)
    return proc.wait(timeout=120), out.decode("utf-8", "replace")


def test_color_follows_the_terminal_no_color_and_the_option(claude_home):
    code, out = on_a_terminal(["query", "pgbouncer"])
    assert code == 0 and "\x1b[1;33mpgbouncer\x1b[0m" in out, out
    for argv, env in ((["query", "pgbouncer"], {"NO_COLOR": "1"}), (["query", "pgbouncer", "--color", "never"], {}),
                      (["history", "pgbouncer", "--color=never"], {})):
        code, out = on_a_terminal(argv, env)
        assert code == 0 and "\x1b" not in out and "<<pgbouncer>>" in out, (argv, out)
    piped = run_memsearch("query", "pgbouncer", "--color", "always")
    assert "\x1b[1;33mpgbouncer\x1b[0m" in piped.stdout, piped.stdout
    assert "\x1b" not in run_memsearch("query", "pgbouncer").stdout
    bad = run_memsearch("query", "pgbouncer", "--color", "sometimes")
    assert bad.returncode == 2 and "sometimes" in bad.stderr


def test_a_first_query_that_builds_a_large_index_shows_a_bar(claude_home):
    memory = claude_home / ".claude" / "projects" / SLUG / "memory"
    for i in range(2100):
        note = memory / f"note-{i}.md"
        note.write_text(f"note {i} about the walrus\n")
    # Past the racy window of the newest note's ctime (which nothing sets back): the second query reads none again.
    time.sleep(max(0, note.stat().st_ctime_ns + RACY_NS - time.time_ns()) / 1e9)
    code, out = on_a_terminal(["query", "pgbouncer"])
    assert code == 0 and "indexing" in out and "database.md" in out, out[-500:]
    code, out = on_a_terminal(["query", "pgbouncer"])  # nothing to read: no bar
    assert code == 0 and "indexing" not in out


def test_shell_completion_knows_root_kinds_scopes_and_types(claude_home):
    def complete(words):
        env = {"_MEMSEARCH_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
        return run_memsearch(env=env).stdout.split()

    assert {"plain,claude", "plain,claude="} <= set(complete("memsearch query x --root cl"))
    assert "plain,cc" in complete("memsearch query x --scope c")
    assert "plain,feedback" in complete("memsearch query x --type fe")
    assert "plain,assistant" in complete("memsearch history x --role as")
