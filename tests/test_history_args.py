"""The history commands' arguments, as given (session 61): an empty transcript folder, the hint that opens a session,
a project named with a trailing '/', and the quoting rule docs/history.md gives. Each test failed before its fix."""

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import line, memsearch_exe, transcript
from memsearch import HistoryIndex, MemoryIndex, read_session_context
from memsearch.errors import _PLAIN, InvalidArgument, MemsearchError, quoted
from memsearch.tool import call_tool, close_history

EMPTY = "empty transcript folder: give a folder's path, or drop the empty item from the list"


def _run(*args, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([memsearch_exe(), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("given", [["--history-root", ""], ["--history-root", " "], ":", ":{R}", "{R}:", "{R}::{R}"])
def test_an_empty_transcript_folder_is_an_error_not_the_working_directory(tmp_path, given):
    """`--history-root ''` searched the transcripts of the working directory, as did MEMSEARCH_HISTORY_ROOTS=":"; a
    ':' at either end of it added them. It is an error, as an empty memory root is (`--root ''`)."""
    here, hroot = tmp_path / "here", tmp_path / "projects"
    transcript(here, [line("user", "the persimmon in the working directory")])
    transcript(hroot, [line("user", "a plum")], session="s-2")
    args, env = (given, {}) if isinstance(given, list) else ([], {"MEMSEARCH_HISTORY_ROOTS": given.format(R=hroot)})
    for command in (["history", "persimmon"], ["session-context", "s-1", "--query", "persimmon"]):
        done = _run(*command, *args, "--db", tmp_path / "db", cwd=here, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"Error: {EMPTY}\n"), command


def test_the_library_refuses_an_empty_transcript_folder_wherever_it_is_named(tmp_path, monkeypatch):
    """HistoryIndex("") read the working directory; MEMSEARCH_HISTORY_ROOTS' empty items were left out here (the
    MCP tools' folders) though the command line read them; history_roots = [""] gave no reason. One rule for all."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum")])
    monkeypatch.chdir(hroot)
    for roots in ("", [" "], [hroot, ""]):
        with pytest.raises(InvalidArgument, match=f"^{EMPTY}$"):
            HistoryIndex(roots, tmp_path / "db")
    for value in (":", f":{hroot}", f"{hroot}:"):
        monkeypatch.setenv("MEMSEARCH_HISTORY_ROOTS", value)
        with pytest.raises(InvalidArgument, match=f"^{EMPTY}$"):
            HistoryIndex(None, tmp_path / "db")
    monkeypatch.delenv("MEMSEARCH_HISTORY_ROOTS")
    config = tmp_path / "config.toml"
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(config))
    config.write_text(f'history_roots = ["{hroot}", ""]\n')
    with pytest.raises(MemsearchError, match=f"^config: history_roots: {EMPTY}$"):
        HistoryIndex(None, tmp_path / "db")
    config.write_text(f'history_roots = ["{hroot}"]\n')
    with HistoryIndex(None, tmp_path / "db") as history:
        assert history.roots == (str(hroot),)


def test_a_project_named_with_a_trailing_slash_is_its_working_directory(tmp_path, monkeypatch):
    """A shell completes a folder with a '/': `--project /home/u/shop/` matched nothing (its slug -home-u-shop- names
    no project folder) and session-context said the session was not in it. Dropped where the argument enters the
    library, for the command line, the library and the tools alike; a lone '/' (the project folder '-') stays."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "the pgbouncer pool")])  # in -home-u-shop
    transcript(hroot, [line("user", "the pgbouncer at the root")], session="s-root", project="-")
    with HistoryIndex(hroot, tmp_path / "db") as history:
        assert [h.session for h in history.search("pgbouncer", project="shop/")] == ["s-1"]  # its last part
        for project in ("/home/u/shop/", "/home/u/shop//", "-home-u-shop/"):
            assert [h.session for h in history.search("pgbouncer", project=project)] == ["s-1"], project
            assert [m.text for m in history.session_messages("s-1", project=project)] == ["the pgbouncer pool"]
            assert "the pgbouncer pool" in history.read_session_context("s-1", "pool", project=project).text
        for project in ("/", "//"):
            assert [h.session for h in history.search("pgbouncer", project=project)] == ["s-root"], project
    found = read_session_context("s-1", "pool", project="/home/u/shop/", roots=hroot, db_path=tmp_path / "db")
    assert "the pgbouncer pool" in found.text
    monkeypatch.setenv("MEMSEARCH_HISTORY_ROOTS", str(hroot))  # the tools' folders
    (tmp_path / "memory").mkdir()
    with MemoryIndex(tmp_path / "memory", tmp_path / "db") as idx:
        try:
            hits = call_tool(idx, "history_search", {"query": "pgbouncer", "project": "/home/u/shop/"})
            read = call_tool(idx, "read_session_context", {"sessionId": "s-1", "query": "pool",
                                                           "project": "/home/u/shop/"})
        finally:
            close_history(idx)
    assert [h["session"] for h in hits.data["results"]] == ["s-1"], hits.text
    assert not read.is_error and "the pgbouncer pool" in read.text, read.text
    common = ["--history-root", hroot, "--db", tmp_path / "db", "--project", "/home/u/shop/"]
    done = _run("history", "pgbouncer", *common, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("session s-1  [-home-u-shop]"), done.stderr
    done = _run("session-context", "s-1", "--query", "pool", *common, cwd=tmp_path)
    assert done.returncode == 0 and "  the pgbouncer pool\n" in done.stdout, done.stderr


@pytest.mark.parametrize("name,value", [("session", ""), ("project", " "), ("role", "")])
def test_an_empty_filter_is_an_error_not_every_session(tmp_path, name, value):
    """`--session ''` was left out (every session answered) and `--project ''` matched every project folder ending in
    "-": an empty filter is an error, in the library and on the command line."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum")])
    with HistoryIndex(hroot, tmp_path / "db") as history, pytest.raises(InvalidArgument, match=f"^{name} is empty"):
        history.search("plum", **{name: value})
    done = _run("history", "plum", "--history-root", hroot, "--db", tmp_path / "db", f"--{name}", value, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "") and done.stderr.startswith(f"Error: --{name} is empty: leave it out")


@pytest.mark.parametrize("name", ["refresh", "messages"])
def test_a_search_s_flags_are_true_or_false(tmp_path, name):
    """search(refresh="no") read the transcripts (a non-empty string is true) and messages=1 passed, as
    MemoryIndex.search(reconcile="no") walked its tree."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum")])
    with HistoryIndex(hroot, tmp_path / "db") as history:
        for bad in ("no", 1, 0):
            with pytest.raises(InvalidArgument, match=f"^{name} must be true or false, got "):
                history.search("plum", **{name: bad})
        assert history.search_result("plum", refresh=False).hits == []  # nothing read yet
        assert [h.session for h in history.search("plum", messages=True)] != []


@pytest.mark.parametrize("name", ["refresh", "sidechains"])
def test_session_messages_flags_are_true_or_false(tmp_path, name):
    """session_messages(sidechains="no") raised a bare ValueError from int() and sidechains=[] a TypeError, where
    every bad argument is an InvalidArgument; refresh="no" read the transcripts (a non-empty string is true)."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum")])
    with HistoryIndex(hroot, tmp_path / "db") as history:
        history.refresh()
        for bad in ("no", [], None, 1):
            with pytest.raises(InvalidArgument, match=f"^{name} must be true or false, got "):
                history.session_messages("s-1", **{name: bad})
        assert [m.text for m in history.session_messages("s-1", refresh=False, sidechains=True)] == ["a plum"]


@pytest.mark.parametrize("args,library,typed", [
    (["session-context", "s-1", "--max-tokens", "0"], "maxTokens", "--max-tokens must be a whole number from 1 to"),
    (["session-context", "s-1", "--strategy", "skim"], "strategy", "--strategy must be one of relevant, handoff"),
    (["session-context", "s-1", "--query", " "], "query", "--query is empty: the relevant strategy needs a question"),
    (["session-context", " "], "sessionId", "SESSION is empty: use the session id of a history search's hit"),
    (["history", "plum", "--role", "robot"], "role", "--role must be one of user,"),
    (["history", "plum", "--since", "someday"], "since", "--since must be an ISO date"),
    (["history", "plum", "-n", "0"], "limit", "--limit must be a whole number from 1 to 1000, got 0"),
])
def test_an_argument_error_names_what_was_typed(tmp_path, args, library, typed):
    """The library's checks name their arguments as its callers pass them (maxTokens, as the tools take it): the
    command line, which said "maxTokens must be" for --max-tokens 0, says its own option."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum")], session="s-1")
    with HistoryIndex(hroot, tmp_path / "db") as history, pytest.raises(InvalidArgument) as caught:
        if args[0] == "history":
            history.search("plum", **{"limit" if args[2] == "-n" else args[2][2:]: _value(args[3])})
        else:
            given = dict(zip(args[2::2], args[3::2]))
            history.read_session_context(args[1], given.get("--query", "why"), given.get("--strategy", "relevant"),
                                         int(given.get("--max-tokens", 100)))
    assert caught.value.argument == library and str(caught.value).startswith(library)
    done = _run(*args, "--history-root", hroot, "--db", tmp_path / "db", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "") and done.stderr.startswith(f"Error: {typed}"), done.stderr


def _value(text: str):
    return int(text) if text.isdigit() else text


def test_a_role_in_capitals_is_the_role(tmp_path):
    """--role USER was refused, where a scope, a type and the tools' role take any letter case."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum"), line("assistant", "the plum is ripe")])
    with HistoryIndex(hroot, tmp_path / "db") as history:
        assert [h.role for h in history.search("plum", role="USER", messages=True)] == ["user"]
    done = _run("history", "plum", "--history-root", hroot, "--db", tmp_path / "db", "--role", "Assistant",
                cwd=tmp_path)
    assert done.returncode == 0 and "assistant: the <<plum>> is ripe" in done.stdout, (done.stdout, done.stderr)


def test_the_open_a_session_command_names_the_folders_and_index_searched(tmp_path):
    """The hint after `history --history-root DIR --db DB` left both out: pasted, it read Claude Code's default
    folders and said "no session". It repeats them (and the environment's, which need not be set where it is
    pasted), shell-quoted: a folder's name is anyone's text."""
    here = tmp_path / "it's $(touch pwned) `touch pwned`; x"
    hroot, db = here / "projects", here / "a db;.db"
    transcript(hroot, [line("user", "the kafka broker")], session="sess-plain")
    transcript(hroot, [line("user", "the kafka dash")], session="-rf", project="-home-u-blog")
    cases = [(["--history-root", hroot, "--db", db], {}),
             (["--messages"], {"MEMSEARCH_HISTORY_ROOTS": str(hroot), "MEMSEARCH_DB": str(db)})]
    for args, env in cases:
        for words in (["broker"], ["dash"]):  # the id "-rf" comes after "--", the options before it
            text = _run("history", "kafka", *words, *args, cwd=tmp_path, env=env)
            found = _run("history", "kafka", *words, "--json", *args, cwd=tmp_path, env=env)
            hint = text.stdout.splitlines()[-1].removeprefix("open a session: ")
            assert json.loads(found.stdout)["results"][0]["open"] == hint
            assert f"--history-root {shlex.quote(str(hroot))} --db {shlex.quote(str(db))}" in hint
            # Pasted elsewhere, with none of the variables: the session the hit names.
            shell = shlex.quote(memsearch_exe()) + hint.removeprefix("memsearch")
            opened = subprocess.run(["bash", "-c", shell], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                                    env={k: v for k, v in os.environ.items() if not k.startswith("MEMSEARCH_")})
            assert opened.returncode == 0 and f"  the kafka {words[0]}\n" in opened.stdout, opened.stderr
    assert not list(tmp_path.rglob("pwned"))
    hint = _run("history", "kafka", "broker", cwd=tmp_path, env={"MEMSEARCH_HISTORY_ROOTS": str(hroot)}).stdout
    assert hint.endswith(f"--query 'kafka broker' --history-root {shlex.quote(str(hroot))}\n")  # no --db: none given


def test_the_docs_give_the_one_quoting_rule_the_hits_follow():
    """docs/history.md said a hit quotes ids holding more than letters, digits and `-_.:@+`, but errors.quoted (the
    rule docs/hostile-content.md gives) leaves `s p` and `a,b=c` bare. Both docs list the punctuation it leaves."""
    bare = sorted(_PLAIN - {" ", "\\"})  # (the docs say single spaces and the \ of \xNN in words)
    for doc in ("history.md", "hostile-content.md"):
        text = (Path(__file__).resolve().parents[1] / "docs" / doc).read_text(encoding="utf-8")
        lists = [span for span in re.findall(r"`([^`A-Za-z0-9\s]+)`", text) if "@" in span]  # the punctuation listed
        assert lists and all(sorted(span) == bare for span in lists), (doc, lists)
    assert [quoted(s) for s in ("s p", "a,b=c", "s-2 [other] ...", "s  p")] == [
        "s p", "a,b=c", "'s-2 [other] ...'", "'s  p'"]  # docs/history.md's examples


def test_refresh_seconds_is_a_number_of_seconds(tmp_path):
    """refresh(seconds="5") raised a bare TypeError from the deadline's sum, where every bad argument is an
    InvalidArgument; a number in range, or None (until done), reads."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "a plum")])
    with HistoryIndex(hroot, tmp_path / "db") as history:
        for bad in ("5", [], -1, float("nan"), True):
            with pytest.raises(InvalidArgument, match="^seconds must be a number from 0.0 to 86400.0, got "):
                history.refresh(seconds=bad)
        assert history.refresh(seconds=5).new == 1
        assert history.refresh(seconds=None).new == 0
