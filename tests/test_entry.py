"""The console script's quick path for `memsearch query` and `memsearch
history`: their one parser (query_args, which the click commands use too) must
read the command line exactly as click's own parser does, leave help and usage
errors to click, behave exactly as the click command does, and never import
click."""

import json
import os
from pathlib import Path
from unittest import mock

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import cli as invoke, imports_of, line, run_memsearch, transcript, write
from memsearch import cli, db, query_args
from memsearch.entry import quick_query
from memsearch.query_args import query_kwargs
from memsearch.db import default_db_file
from memsearch.settings import DEFAULT_LIMIT, MAX_LIMIT


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Two memory roots, a file, an absent path, and index paths."""
    tmp_path = tmp_path_factory.mktemp("places")
    for name in ("r1", "r2"):
        write(tmp_path / name, "note.md", f"okapi lives in {name}\n")
    write(tmp_path, "a-file", "not a folder\n")
    return {"R": str(tmp_path / "r1"), "R2": str(tmp_path / "r2"), "FILE": str(tmp_path / "a-file"),
            "DIR": str(tmp_path / "r2"), "DB": str(tmp_path / "x.db"), "DB2": str(tmp_path / "y.db"),
            "ABSENT": str(tmp_path / "absent")}


def _fill(argv, places):
    return [item.format(**places) for item in argv]


def _env(monkeypatch, places, env):
    # "%" stands for os.pathsep
    for name, value in env.items():
        monkeypatch.setenv(name, value.replace("%", os.pathsep).format(**places))


def click_params(argv, command="query"):
    """What click's own parser (not query_args, which the command reads with) hands the command's callback for
    argv, or None when it refuses."""
    cmd = getattr(cli, command)
    ctx = cmd.context_class(cmd, info_name=command)
    try:
        with ctx.scope(cleanup=False):
            click.Command.parse_args(cmd, ctx, list(argv))
        return ctx.params
    except (click.ClickException, click.exceptions.Exit):
        return None


# Command lines (after `query`) the quick path must take, with the environment.
TAKEN = [
    (["stripe", "webhook", "--root", "{R}"], {}),
    (["stripe", "--root={R}", "webhook"], {}),
    (["key=value", "日本語", "", "--root", "{R}"], {}),
    (["x", "-n", "5", "--root", "{R}"], {}),
    (["-n5", "x", "--root", "{R}"], {}),
    (["x", "--limit", "7", "--root", "{R}", "--limit=3"], {}),  # the last one counts
    (["x", "-n", "007", "--root", "{R}"], {}),
    (["x", "-n", str(MAX_LIMIT), "--root", "{R}"], {}),
    (["x", "--limit", "0", "--root", "{R}"], {}),  # a number: its range is the library's to check
    (["x", "-n", str(MAX_LIMIT + 1), "--root", "{R}"], {}),
    (["x", "--root", "{R}", "y", "--root", "{R2}"], {}),  # repeated --root: both
    (["x", "--root", "{R}", "--db", "{DB}", "--scope", "projects", "--scope-id", "shop", "--type", "memory",
      "--no-reconcile", "--no-floor", "--json"], {}),
    (["x", "--root", "{R}", "--scope=", "--type=a=b", "--scope-id=-odd"], {}),  # attached values are taken as they are
    (["x", "--root", "{R}", "--scope", "a", "--scope", "b", "--json", "--json"], {}),
    (["x", "--root", "{R}", "--db", "{ABSENT}"], {}),
    (["x", "--root", "claude", "--root", "plain={R}"], {}),
    (["x", "--root", "{ABSENT}"], {}),  # click leaves a missing root to the command
    (["x", "--root", "{FILE}"], {}),  # a root is a spec: the library says a file is no folder
    (["x", "--root="], {}),
    (["x"], {"MEMSEARCH_ROOT": "{FILE}"}),
    (["x", "--color", "never", "--root", "{R}"], {}),
    (["x"], {"MEMSEARCH_ROOTS": "{R}%%{R2}"}),  # an empty item: the library's error
    (["x"], {"MEMSEARCH_ROOTS": "{R}%"}),
    (["x"], {}),  # no root at all: the command says so
    (["x"], {"MEMSEARCH_ROOTS": "{R}%{R2}"}),
    (["x"], {"MEMSEARCH_ROOT": "{R}%{R2}"}),  # split too: one option, two variables
    (["x"], {"MEMSEARCH_ROOTS": "", "MEMSEARCH_ROOT": "{R2}"}),  # empty: the next variable
    (["x"], {"MEMSEARCH_ROOTS": "{R}", "MEMSEARCH_ROOT": "{R2}"}),
    (["x", "--root", "{R2}"], {"MEMSEARCH_ROOTS": "{R}%{ABSENT}"}),  # the command line wins outright
    (["x"], {"MEMSEARCH_ROOT": "{R}", "MEMSEARCH_DB": "{DB}"}),
    (["x", "--db", "{DB2}"], {"MEMSEARCH_ROOT": "{R}", "MEMSEARCH_DB": "{DB}"}),
    (["x"], {"MEMSEARCH_ROOT": "{R}", "MEMSEARCH_DB": ""}),
    (["x", "--root", "{R}", "--"], {}),
    (["--", "-x", "--root", "{R}"], {}),  # after "--", words
    (["x", "-", "--root", "{R}"], {}),  # "-" is a word
    (["x", "--root", "--json"], {}),  # click takes "--json" as the root
    (["x", "--scope", "-n", "--root", "{R}"], {}),
    (["x", "-n", "+5", "--root", "{R}"], {}),  # click.INT is int()
    (["x", "-n", " 5", "--root", "{R}"], {}),
    (["x", "-n", "5_0", "--root", "{R}"], {}),
    (["x", "-n", "\u0665", "--root", "{R}"], {}),  # an Arabic-Indic five
    (["x", "--root", "{R}", "--db="], {}),  # an empty path: the library's error
]

# Command lines left to click: help, usage errors, values click refuses.
LEFT_TO_CLICK = [
    ([], {}),
    (["--root", "{R}"], {}),  # no words
    (["--help"], {}),
    (["x", "-h", "--root", "{R}"], {}),
    (["x", "-5", "--root", "{R}"], {}),
    (["x", "--bogus", "--root", "{R}"], {}),
    (["x", "--scope-i", "a", "--root", "{R}"], {}),
    (["x", "--version", "--root", "{R}"], {}),
    (["x", "--root"], {}),  # no value
    (["x", "--root", "{R}", "-n"], {}),
    (["x", "--json=1", "--root", "{R}"], {}),
    (["x", "-n", "x", "--root", "{R}"], {}),
    (["x", "-n", "9" * 5000, "--root", "{R}"], {}),  # past int()'s digit limit
    (["x", "-n=5", "--root", "{R}"], {}),
    (["x", "-nx", "--root", "{R}"], {}),
    (["x", "--limit=", "--root", "{R}"], {}),
    (["x", "--root", "{R}", "--db", "{DIR}"], {}),
    (["x", "--root", "{R}", "--color", "sometimes"], {}),
    (["x", "--root", "{R}"], {"MEMSEARCH_DB": "{DIR}"}),
]


# The same for `memsearch history`: its own options, its transcript folders checked as click.Path(file_okay=False).
HISTORY_TAKEN = [
    (["pgbouncer", "port"], {}),
    (["x", "--history-root", "{R}", "--history-root={R2}", "--db", "{DB}"], {}),
    (["x", "--history-root", "{ABSENT}"], {}),  # click leaves a missing folder to the command
    (["x", "--project", "shop", "--session", "ab12", "--role", "tool", "--since", "2025-01-31", "--messages"], {}),
    (["x", "--role=nobody", "--since=yesterday", "-n3", "--json", "--no-floor", "--color", "always"], {}),
    (["x"], {"MEMSEARCH_HISTORY_ROOTS": "{R}%{R2}"}),
    (["x", "--history-root", "{R}"], {"MEMSEARCH_HISTORY_ROOTS": "{FILE}"}),  # the command line wins outright
    (["x"], {"MEMSEARCH_DB": "{DB}"}),
    (["x", "--history-root="], {}),  # an empty path: the library's error
    (["x"], {"MEMSEARCH_HISTORY_ROOTS": "{R}%%{R2}"}),  # an empty item
]
HISTORY_LEFT_TO_CLICK = [
    ([], {}),
    (["--help"], {}),
    (["x", "--history-root", "{FILE}"], {}),  # click: "is a file"
    (["x"], {"MEMSEARCH_HISTORY_ROOTS": "{FILE}"}),
    (["x", "--root", "{R}"], {}),  # `memsearch query`'s, not history's
    (["x", "--scope", "a"], {}),
    (["x", "--messages=1"], {}),
    (["x", "--role"], {}),
    (["x", "--db", "{DIR}"], {}),
]
CASES = {"query": (TAKEN, LEFT_TO_CLICK), "history": (HISTORY_TAKEN, HISTORY_LEFT_TO_CLICK)}


@pytest.mark.parametrize("command, argv, env", [(c, *case) for c, (taken, _) in CASES.items() for case in taken])
def test_the_quick_parser_reads_what_click_reads(command, argv, env, places, monkeypatch):
    _env(monkeypatch, places, env)
    argv = _fill(argv, places)
    quick = query_kwargs(argv, command=command)
    assert quick is not None
    assert quick == click_params(argv, command)


@pytest.mark.parametrize("command, argv, env", [(c, *case) for c, (_, left) in CASES.items() for case in left])
def test_the_quick_parser_leaves_the_rest_to_click(command, argv, env, places, monkeypatch):
    _env(monkeypatch, places, env)
    argv = _fill(argv, places)
    assert query_kwargs(argv, command=command) is None and click_params(argv, command) is None
    with pytest.raises((click.ClickException, click.exceptions.Exit)) as refused:  # help, or click's own error
        getattr(cli, command).make_context(command, list(argv))
    assert "cannot read this command line" not in str(refused.value)


# Pieces of command lines for the fuzz test below.
TOKENS = ["x", "y", "", "a=b", "-", "--", "-h", "--help", "-x", "-n", "-n5", "-n0", "5", "0", "1001", "--limit",
          "--limit=2", "--root", "--root=", "{R}", "{R2}", "{FILE}", "{ABSENT}", "--root={R}", "--db", "{DB}",
          "{DIR}", "--db=", "--scope", "--scope=a", "--scope-id", "--type", "--json", "--json=1", "--no-floor",
          "--no-reconcile"]
ENVIRONMENTS = [{}, {"MEMSEARCH_ROOTS": "{R}%{R2}"}, {"MEMSEARCH_ROOTS": "", "MEMSEARCH_ROOT": "{R}"},
                {"MEMSEARCH_ROOT": "{R}%"}, {"MEMSEARCH_ROOT": "{FILE}"}, {"MEMSEARCH_DB": "{DB}"},
                {"MEMSEARCH_DB": "{DIR}"}]


HISTORY_TOKENS = ["x", "", "-", "--", "-h", "-n", "-n5", "5", "--history-root", "--history-root=", "{R}", "{R2}",
                  "{FILE}", "{ABSENT}", "--history-root={FILE}", "--db", "{DB}", "{DIR}", "--project", "--session",
                  "--role", "--role=tool", "--since", "--messages", "--messages=1", "--json", "--no-floor", "--root"]
HISTORY_ENVIRONMENTS = [{}, {"MEMSEARCH_HISTORY_ROOTS": "{R}%{R2}"}, {"MEMSEARCH_HISTORY_ROOTS": "{FILE}"},
                        {"MEMSEARCH_HISTORY_ROOTS": "{R}%"}, {"MEMSEARCH_DB": "{DIR}"}]
FUZZ = {"query": (TOKENS, ENVIRONMENTS), "history": (HISTORY_TOKENS, HISTORY_ENVIRONMENTS)}


@pytest.mark.parametrize("command", FUZZ)
def test_the_quick_parser_reads_every_command_line_as_click_does(command, places, capsys):
    tokens, environments = FUZZ[command]

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(argv=st.lists(st.sampled_from(tokens), max_size=8), env=st.sampled_from(environments))
    def same(argv, env):
        argv = _fill(argv, places)
        values = {name: value.replace("%", os.pathsep).format(**places) for name, value in env.items()}
        with mock.patch.dict(os.environ, values):
            assert query_kwargs(argv, command=command) == click_params(argv, command)
        capsys.readouterr()  # click's help and errors

    same()


def test_an_unreadable_root_or_index_is_left_to_click(places, monkeypatch):
    # Tests may run as root, who reads everything: make one path unreadable for both.
    real_access = os.access
    for command, unreadable, argv in (
            ("query", places["FILE"], ["x", "--root", places["R"], "--db", places["FILE"]]),
            ("history", places["R2"], ["x", "--history-root", places["R"], "--history-root", places["R2"]])):
        monkeypatch.setattr(os, "access", lambda path, mode: path != unreadable and real_access(path, mode))
        assert click_params(argv, command) is None and query_kwargs(argv, command=command) is None
        monkeypatch.setattr(os, "access", real_access)
        assert click_params(argv, command) == query_kwargs(argv, command=command) is not None


@pytest.mark.parametrize("command", query_args.COMMANDS)
def test_the_quick_parser_knows_every_option_of_the_click_command(command):
    """An option added to the click command must be added to query_args too."""
    valued, flags = query_args.SPELLINGS[command]
    known = {**valued, **flags}
    declared = {}
    for param in getattr(cli, command).params:
        assert param.callback is None, param.name
        if isinstance(param, click.Argument):
            assert (param.name, param.nargs, param.required, param.type) == ("text", -1, True, click.STRING)
            continue
        names = flags if param.is_flag else valued
        for opt in param.opts + param.secondary_opts:
            assert names.get(opt) == param.name, opt
            declared[opt] = param.name
        envvars = (param.envvar,) if isinstance(param.envvar, str) else tuple(param.envvar or ())
        assert query_args.BY_KEY[param.name].envvars == envvars, param.name
        assert param.multiple == (param.name in ("root", "history_root")), param.name
        if param.is_flag:
            assert param.is_bool_flag and not (param.count or param.secondary_opts), param.name
        elif param.name == "limit":  # click reads a number; the library checks its range
            assert (param.type, param.default) == (click.INT, DEFAULT_LIMIT)
        elif param.name == "root":  # a spec, passed on as written (no click.Path check), split at ':'
            assert type(param.type).convert is click.ParamType.convert and param.type.envvar_list_splitter == ":"
        elif param.name == "history_root":  # folders, split at ':'
            path = param.type
            assert isinstance(path, click.Path) and (path.file_okay, path.dir_okay) == (False, True)
            assert path.readable and not (path.exists or path.writable or path.executable or path.resolve_path
                                          or path.allow_dash or path.type) and path.envvar_list_splitter == ":"
        elif param.name == "color":
            assert param.type.choices == query_args.COLORS and param.default == "auto"
        elif param.name == "db_path":
            path = param.type
            assert isinstance(path, click.Path) and (path.file_okay, path.dir_okay) == (True, False)
            assert path.readable and not (path.exists or path.writable or path.executable or path.resolve_path
                                          or path.allow_dash or path.type)
        else:
            assert param.type == click.STRING, param.name  # its default: None, as the parity tests check
    assert declared == known
    assert set(query_kwargs(["x"], {}, command)) == {param.name for param in getattr(cli, command).params}


def _by_click(argv, command="query"):
    r = invoke(command, *argv)
    return r.exit_code, r.stdout, r.stderr


def _by_quick_path(argv, capsys, command="query"):
    capsys.readouterr()
    code = quick_query([command, *argv])
    assert code is not None, "the quick path should have run this"
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv", [
    ["pgbouncer"],
    ["port", "5433", "-n1"],
    ["rounding", "--scope", "sessions", "--type", "progress"],
    ["port", "--json", "--no-reconcile", "--no-floor"],
    ["xylophone"],
    ["  *  "],  # no searchable words: an error from the search
    ["x", "--root", "ABSENT"],  # an error from the root
    ["x", "--root", "plain=ABSENT"],
])
def test_the_quick_path_prints_and_exits_as_the_click_command(argv, tree, tmp_path, capsys):
    absent = str(tmp_path / "absent")
    argv = [a.replace("ABSENT", absent) for a in argv]
    if "--root" not in argv:
        argv += ["--root", str(tree)]
    argv += ["--db", str(tmp_path / "db")]
    _by_click(["warm", *argv[argv.index("--root"):]])  # both find the index built
    assert _by_quick_path(argv, capsys) == _by_click(argv)


@pytest.fixture
def transcripts(tmp_path):
    root = tmp_path / "projects"
    transcript(root, [line("user", "which port does pgbouncer use"), line("assistant", "pgbouncer listens on 6432")])
    return root


@pytest.mark.parametrize("argv", [
    ["pgbouncer"],
    ["pgbouncer", "port", "--messages", "-n1"],
    ["port", "--role", "assistant", "--project", "shop", "--since", "2025-01-01"],
    ["xylophone"],
    ["  *  "],  # no searchable words
    ["x", "--role", "nobody"],  # errors from the library
    ["x", "--since", "someday"],
    ["x", "--history-root", "ABSENT"],
])
def test_the_quick_history_prints_and_exits_as_the_click_command(argv, transcripts, tmp_path, capsys):
    argv = [a.replace("ABSENT", str(tmp_path / "absent")) for a in argv]
    if "--history-root" not in argv:
        argv += ["--history-root", str(transcripts)]
    argv += ["--db", str(tmp_path / "db")]
    _by_click(["warm", *argv[argv.index("--history-root"):]], "history")  # both find the index built
    quick = _by_quick_path(argv, capsys, "history")
    assert quick == _by_click(argv, "history") and quick[0] in (0, 1, 2)


def test_the_quick_history_json_is_the_click_command_s(transcripts, tmp_path, capsys):
    argv = ["pgbouncer", "port", "--json", "--history-root", str(transcripts), "--db", str(tmp_path / "db")]
    _by_click(["warm", *argv[3:]], "history")  # both find the index built
    clicked = _by_click(argv, "history")
    code, out, err = _by_quick_path(argv, capsys, "history")
    data, expected = json.loads(out), json.loads(clicked[1])
    for report in (data, expected):  # the timings differ from run to run
        del report["refresh"]["seconds"]
    assert (code, err) == clicked[::2] and data == expected and data["results"][0]["excerpts"]


def test_the_quick_path_reports_recovery_warnings(tree, capsys):
    # A damaged index in the cache (not one named with --db) is set aside and rebuilt, with a warning.
    cached = Path(default_db_file(tree))
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(b"not a database at all" * 100)
    code, out, err = _by_quick_path(["pgbouncer", "--root", str(tree)], capsys)
    assert code == 0 and "<<pgbouncer>>" in out
    assert err.startswith(f"warning: index {cached} was unusable (") and err.count("\n") == 1
    assert db.warning_sink is None


def test_the_quick_path_leaves_help_to_click(capsys):
    assert quick_query(["query", "--help"]) is None
    assert quick_query(["index", "--root", "/tmp"]) is None
    assert quick_query(["--version"]) is None
    assert capsys.readouterr() == ("", "")


def test_shell_completion_is_left_to_click(monkeypatch, tree):
    monkeypatch.setenv("_MEMSEARCH_COMPLETE", "bash_complete")
    assert quick_query(["query", "x", "--root", str(tree)]) is None


# -- the installed script, as a user runs it ---------------------------------

def test_the_script_answers_as_the_click_command(tree, tmp_path):
    where = ["--root", str(tree), "--db", str(tmp_path / "db")]
    code, out, err = _by_click(["pgbouncer", *where])
    hit = run_memsearch("query", "pgbouncer", *where, timeout=60)
    assert (hit.returncode, hit.stdout, hit.stderr) == (0, out, err) and "<<pgbouncer>>" in out

    none = run_memsearch("query", "xylophone", *where, timeout=60)
    assert (none.returncode, none.stdout, none.stderr) == (1, "", "no matches\n")

    missing = ["x", "--root", str(tmp_path / "absent")]
    bad = run_memsearch("query", *missing, timeout=60)
    assert (bad.returncode, bad.stdout, bad.stderr) == (2, "", _by_click(missing)[2])
    assert bad.stderr.startswith("Error: memory root does not exist") and bad.stderr.count("\n") == 1

    found = run_memsearch("query", "port", "5433", *where, "--json", timeout=60)
    assert found.returncode == 0, found.stderr
    data, expected = json.loads(found.stdout), json.loads(_by_click(["port", "5433", *where, "--json"])[1])
    for report in (data, expected):  # the timings differ from run to run
        del report["reconcile"]["seconds"], report["freshness"]["seconds"]
    assert data == expected and data["results"]


def _imports_click(*args, command="query"):
    """Run the console script's function on `memsearch COMMAND ARGS`; whether
    click was loaded by the time the process ends, and what it printed."""
    code = (
        "import sys\n"
        f"sys.argv = ['memsearch', {command!r}, *sys.argv[1:]]\n"
        "from memsearch.entry import entry\n"
        "entry()\n"
    )
    loaded, run = imports_of(code, ("click",), *args)
    return run, f"CLICK={loaded == ['click']}"


def test_a_plain_query_never_imports_click(tree, tmp_path):
    run, loaded = _imports_click("pgbouncer", "--root", str(tree), "--db", str(tmp_path / "db"))
    assert run.returncode == 0 and "<<pgbouncer>>" in run.stdout
    assert loaded == "CLICK=False"
    run, loaded = _imports_click("xylophone", "--root", str(tree), "--db", str(tmp_path / "db"), "--json")
    assert run.returncode == 1 and loaded == "CLICK=False"


def test_a_plain_history_search_never_imports_click(transcripts, tmp_path):
    where = ["--history-root", str(transcripts), "--db", str(tmp_path / "db")]
    run, loaded = _imports_click("pgbouncer", *where, command="history")
    assert run.returncode == 0 and "<<pgbouncer>>" in run.stdout and loaded == "CLICK=False"
    run, loaded = _imports_click("pgbouncer", "--bogus", *where, command="history")
    assert run.returncode == 2 and "No such option" in run.stderr and loaded == "CLICK=True"


def test_help_and_usage_errors_still_go_through_click(tree):
    run, loaded = _imports_click("--help")
    assert run.returncode == 0 and run.stdout.startswith("Usage: memsearch query [OPTIONS] TEXT...")
    assert loaded == "CLICK=True"
    # Past int()'s digit limit: once a traceback, exit 1.
    run, loaded = _imports_click("x", "--root", str(tree), "-n", "9" * 5000)
    assert run.returncode == 2 and "Error: Invalid value for '--limit' / '-n'" in run.stderr, run.stderr[-300:]
    assert loaded == "CLICK=True"
    # A number out of range is the library's one check, without click (issue 31: one check per argument).
    run, loaded = _imports_click("x", "--root", str(tree), "-n", "0")
    assert run.returncode == 2 and run.stderr.startswith("Error: --limit must be a whole number from 1 to 1000, got 0\n")
    assert loaded == "CLICK=False"
    run, _ = _imports_click("x", "--root", str(tree), "--type", "memroy")  # (the library says type, as it takes it)
    assert run.returncode == 2 and run.stderr.startswith("Error: --type must be one of memory,"), run.stderr
    script = run_memsearch("query", "--help", timeout=60)
    assert script.returncode == 0 and "--scope-id TEXT" in script.stdout
