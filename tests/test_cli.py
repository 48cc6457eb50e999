import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from conftest import HEAVY, cli, default_sigint, imports_of, memsearch_exe, run_memsearch, write
from memsearch.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_query_human_output(tree, tmp_path):
    r = cli("query", "pgbouncer", "--root", str(tree), "--db", str(tmp_path / "db"))
    assert r.exit_code == 0
    # The file a shell opens (issue 32), not the path below the root.
    assert r.output.splitlines()[0].startswith(f"{tree}/projects/shop/memory-db.md  [projects/shop · memory]  score ")
    assert "<<pgbouncer>>" in r.output


def test_the_words_no_file_holds_are_named_on_a_short_line(tree, tmp_path):
    """Many unknown words, or a long one, made the warning line kilobytes long."""
    words = [f"zzqx{i}" for i in range(50)] + ["y" * 5000]
    r = run_memsearch("query", "pgbouncer", *words, "--root", tree, "--db", tmp_path / "db", timeout=60)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("No memory file contains 'zzqx0', 'zzqx1',") and " and 41 more: " in first
    assert len(first) < 300 and "pgbouncer" in r.stdout


def test_a_scope_id_no_file_has_is_named(tree, tmp_path):
    """A scope id no file has (or one of another scope) answered only "no matches", as if the words had missed."""
    db = ["--root", tree, "--db", tmp_path / "db"]
    r = run_memsearch("query", "pgbouncer", "--scope-id", "nope", *db)
    assert r.returncode == 1 and r.stderr == "warning: scope id 'nope' is no indexed file's\nno matches\n", r.stderr
    r = run_memsearch("query", "pgbouncer", "--scope", "sessions", "--scope-id", "shop", *db)
    assert r.returncode == 1 and "scope id 'shop' is a projects id, not a sessions one" in r.stderr, r.stderr
    r = run_memsearch("query", "xylophone", "--scope-id", "shop", *db)  # it exists: the words missed
    assert r.returncode == 1 and r.stderr == "no matches\n", r.stderr


def test_query_json(tree, tmp_path):
    r = cli("query", "port", "5433", "--root", str(tree), "--db", str(tmp_path / "db"), "--json", "--limit", "1")
    data = json.loads(r.output)
    assert data["query"] == "port 5433"
    assert data["fts_query"] == '"port" OR "5433" OR "port 5433"'
    assert len(data["results"]) == 1
    assert set(data["results"][0]) == {"path", "scope", "scope_id", "type", "score", "snippet", "file"}
    assert data["results"][0]["file"] == str(tree / data["results"][0]["path"])


def test_query_json_pairs_no_question_word(tree, tmp_path):
    """A plain question searches its words and their pairs, none with its question word."""
    r = cli("query", "how", "much", "memory", "does", "pgbouncer", "use", "--root", str(tree), "--db", str(tmp_path / "db"),
            "--json")
    assert json.loads(r.output)["fts_query"] == ('"much" OR "memory" OR "pgbouncer" OR "use" OR "much memory"'
                                                 ' OR "memory does" OR "does pgbouncer" OR "pgbouncer use"')


def test_env_vars_and_filters(tree, tmp_path):
    env = {"MEMSEARCH_ROOT": str(tree), "MEMSEARCH_DB": str(tmp_path / "db")}
    r = cli("query", "rounding", "--scope", "sessions", "--type", "progress", "--json", env=env)
    assert [h["path"] for h in json.loads(r.output)["results"]] == ["sessions/s1/tasks/T1/progress.md"]
    r = cli("query", "rounding", "--scope-id", "zzz", env=env)
    assert r.exit_code == 1


def test_exit_codes(tree, tmp_path):
    db = ["--root", str(tree), "--db", str(tmp_path / "db")]
    assert cli("query", "pgbouncer", *db).exit_code == 0
    nothing = cli("query", "xylophone", *db)
    assert nothing.exit_code == 1 and nothing.stdout == ""
    empty = cli("query", "  *  ", *db)
    assert empty.exit_code == 2 and "no searchable words" in empty.stderr
    assert cli("query", "x", "--root", str(tmp_path / "missing")).exit_code == 2
    assert cli("query", "x", *db, "--limit", "0").exit_code == 2


def test_errors_are_one_line(tmp_path):
    r = cli("query", "x", "--root", str(tmp_path / "missing"))
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: ")
    assert "Traceback" not in r.output
    r = cli("query", "x")
    assert "MEMSEARCH_ROOT" in r.stderr and r.exit_code == 2


def test_index_and_status(tree, tmp_path):
    db = ["--root", str(tree), "--db", str(tmp_path / "db")]
    r = cli("index", *db)
    assert r.exit_code == 0 and r.output.startswith("9 added, 0 updated, 0 removed, 0 unchanged, 0 skipped")
    data = json.loads(cli("index", *db, "--json").output)
    assert data["added"] == 0 and data["unchanged"] + data["updated"] == 9
    status = json.loads(cli("status", *db, "--json").output)
    assert status["files"] == 9 and status["schema_version"] >= 1 and status["root"] == str(tree)
    assert "schema version:" in cli("status", *db).output


def test_no_reconcile_flag(tree, tmp_path):
    db = ["--root", str(tree), "--db", str(tmp_path / "db")]
    cli("index", *db)
    write(tree, "fresh.md", "okapi")
    assert cli("query", "okapi", *db, "--no-reconcile").exit_code == 1
    assert cli("query", "okapi", *db).exit_code == 0


def test_every_command_has_help():
    for name, command in main.commands.items():
        assert command.help, name
        assert cli(name, "--help").exit_code == 0


def test_installed_script_runs_a_real_query():
    sample = REPO / "examples" / "memory"
    out = run_memsearch("query", "stripe", "webhook", "--root", sample, "--json", timeout=60)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert results[0]["path"] == "projects/webshop/memory-payments.md"


def test_the_sample_tree_indexes_cleanly(tmp_path):
    """What a newcomer indexes first: no file passed over, no unusable frontmatter."""
    out = run_memsearch("index", "--root", REPO / "examples" / "memory", "--db", tmp_path / "db", timeout=60)
    assert out.returncode == 0 and " 0 skipped" in out.stdout and "frontmatter" not in out.stdout, out.stdout


def test_python_dash_m_memsearch_is_the_console_script(tmp_path):
    sample = REPO / "examples" / "memory"
    run = lambda *args: subprocess.run([sys.executable, "-m", "memsearch", *args], capture_output=True, text=True,
                                       timeout=60, cwd=tmp_path)
    out = run("query", "stripe", "webhook", "--root", str(sample), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "projects/webshop/memory-payments.md"
    out = run("query", "zzzqqq", "--root", str(sample))
    assert (out.returncode, out.stderr.strip()) == (1, "no matches")
    out = run("status", "--root", str(tmp_path / "absent"))  # a command only click runs
    assert out.returncode == 2 and out.stderr.startswith("Error: ") and "Traceback" not in out.stderr


def test_console_entry_exit_codes_output_and_exit_handlers(tmp_path):
    """memsearch.entry.entry (the console script) ends the process without interpreter teardown:
    every exit status, every byte of a long output and the exit handlers
    must survive that."""
    for i in range(60):
        write(tmp_path / "mem", f"n/{i:02}.md", f"okapi note {i} " + "filler text " * 40)
    db = str(tmp_path / "db")
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        "from memsearch.entry import entry\n"
        "sys.argv = ['memsearch'] + sys.argv[1:]\n"
        "entry()\n"
    )
    run = lambda *args: subprocess.run([sys.executable, "-c", code, *args, "--root", str(tmp_path / "mem"), "--db", db],
                                       capture_output=True, text=True, timeout=60)
    hits = run("query", "okapi", "--limit", "50", "--json", "--no-floor")
    assert hits.returncode == 0, hits.stderr
    assert len(json.loads(hits.stdout)["results"]) == 50  # ~50 KB of output, all of it flushed
    assert "handler ran" in hits.stderr
    none = run("query", "zebra")
    assert none.returncode == 1 and "no matches" in none.stderr and "handler ran" in none.stderr
    bad = run("query", "okapi", "--limit", "0")
    assert bad.returncode == 2 and "Error" in bad.stderr
    assert run("status").returncode == 0


def _query_imports(root, db, word):
    """Which HEAVY modules a `memsearch query WORD` process imported, and its output."""
    code = (
        "from memsearch.cli import main\n"
        "try:\n"
        f"    main(['query', {word!r}, '--root', {str(root)!r}, '--db', {str(db)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    heavy, out = imports_of(code, HEAVY)
    assert out.returncode == 0, out.stderr
    return heavy, out.stdout


def test_query_path_imports_stay_light(tree, tmp_path):
    # Note: this tree has no frontmatter on purpose. PyYAML is imported
    # only when a file being (re)read starts with '---'; the test below
    # checks that a query over unchanged files with frontmatter stays light too.
    heavy, out = _query_imports(tree, tmp_path / "db", "pgbouncer")
    assert heavy == []
    assert "<<pgbouncer>>" in out


@pytest.mark.slow
def test_query_over_unchanged_files_with_frontmatter_stays_light(tree, tmp_path):
    write(tree, "projects/shop/memory-fm.md", "---\nname: fm\ndescription: okapi notes\ntype: project\n---\nbody\n")
    write(tree, "projects/shop/memory-odd.md", "---\ntags:\n  - okapi\n---\nbody\n")
    heavy, first = _query_imports(tree, tmp_path / "db", "okapi")
    assert "okapi" in first and "yaml" in heavy  # the files were read: parsing was needed
    time.sleep(2.1)  # past the racy-clean window, so the next query reads nothing
    cli("index", "--root", str(tree), "--db", str(tmp_path / "db"))
    heavy, again = _query_imports(tree, tmp_path / "db", "okapi")
    assert heavy == []
    assert "<<okapi>>" in again


def test_json_output_holds_any_argument_and_stays_utf8(tmp_path):
    """A query argument that is not UTF-8 (its byte decoded as a lone
    surrogate) is written as an escape, not a traceback on a strict stdout;
    other text stays UTF-8 (status named a root "caf\\u00e9" before)."""
    tree = tmp_path / "café"
    write(tree, "global/g/n.md", "stripe webhook café\n")
    db = tmp_path / "db"
    strict = {"PYTHONIOENCODING": "utf-8:strict"}
    exe = os.fsencode(memsearch_exe())
    done = subprocess.run([exe, b"query", b"stripe\xff", b"--root", os.fsencode(tree), b"--db", os.fsencode(db),
                           b"--json"], capture_output=True, env={**os.environ, **strict}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["query"] == "stripe\udcff"
    status = run_memsearch("status", "--root", tree, "--db", db, "--json", env=strict)
    assert status.returncode == 0 and "café" in status.stdout, status.stderr


def test_a_query_on_a_stdout_that_cannot_spell_the_files_text(tmp_path):
    """A Latin-1 stdout (PYTHONIOENCODING, or a Latin-1 locale) and a file in
    Cyrillic with an emoji: each query that hit it was a traceback, exit 1.
    Text comes escaped; JSON escaped to ASCII, still the same JSON."""
    root = tmp_path / "memory"
    write(root, "global/g/n.md", "okapi \U0001f600 \u043c\u043e\u043b\u043e\u043a\u043e\n")
    where = ["--root", str(root), "--db", str(tmp_path / "db")]
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    for words in (["okapi"], ["--", "okapi"]):  # the quick path, then click
        shown = subprocess.run([memsearch_exe(), "query", *where, *words], capture_output=True, env=env, timeout=60)
        assert shown.returncode == 0 and b"Traceback" not in shown.stderr, shown.stderr
        assert "<<okapi>> \\U0001f600 \\u043c\\u043e" in shown.stdout.decode("latin-1")
        data = subprocess.run([memsearch_exe(), "query", *where, "--json", *words], capture_output=True, env=env,
                              timeout=60)
        assert data.returncode == 0, data.stderr
        assert json.loads(data.stdout)["results"][0]["snippet"] == "<<okapi>> \U0001f600 \u043c\u043e\u043b\u043e\u043a\u043e\n"


def test_errors_stay_one_line_whatever_name_they_quote(tmp_path):
    """An index file or a root folder named with a line break forged a second
    "Error:" line (and an escape sequence reached the terminal)."""
    forged = "x\nError: forged\x1b[2J\u2028y"
    bad_db = write(tmp_path, f"bad{forged}.db", "not a database at all\n")
    root = tmp_path / f"r{forged}"
    write(root, "a.md", "okapi\n")
    for argv in (["okapi", "--root", str(root), "--db", str(bad_db)],
                 ["okapi", "--root", str(root), "--db", str(tmp_path / "db"), "--scope", "zz"]):
        r = cli("query", *argv)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("Error: "), r.stderr
        assert not any(c in r.stderr for c in "\x1b\u2028") and "x\\x0aError" in r.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.parametrize("command", ["index", "query"])
def test_ctrl_c_in_a_cold_build_exits_130_and_the_next_run_indexes_every_file(tmp_path, command):
    """Ctrl-C while a build reads the files: "Aborted!", exit 130 (it was 1,
    which for `memsearch query` means "found nothing"), no traceback, and the
    next run finds every file: the interrupted write left nothing half done."""
    import signal

    root = tmp_path / "memory"
    for n in range(200):
        write(root, f"projects/p{n % 10}/note{n}.md", f"note number{n} about stripe\n")
    db = tmp_path / "index.db"
    # The real entry point, with a pause in the middle of reading the files: the signal lands mid-build.
    stall = ("import sys, time, memsearch.reconcile as r\n"
             "real, calls = r.prepare_one, []\n"
             "def slow(*args):\n"
             "    calls.append(1)\n"
             "    if len(calls) == 100:\n"
             "        print('reading', file=sys.stderr, flush=True)\n"
             "        time.sleep(60)\n"
             "    return real(*args)\n"
             "r.prepare_one = slow\n"
             "from memsearch.entry import entry\n"
             "sys.argv[0] = 'memsearch'\n"
             "entry()\n")
    args = [command, *(["stripe"] if command == "query" else []), "--root", str(root), "--db", str(db)]
    proc = subprocess.Popen([sys.executable, "-c", stall, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_sigint)
    try:
        assert proc.stderr.readline() == "reading\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a guard against a hang, not a measure
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, err, out) == (130, "\nAborted!\n", "")
    report = json.loads(cli("index", "--json", "--root", str(root), "--db", str(db)).stdout)
    assert (report["added"], report["unchanged"]) == (200, 0)


def test_a_scope_id_copied_from_a_hit_line_with_its_quotes_finds_its_files(tmp_path):
    """A hit line quotes an odd scope id ([projects/'a|b' ...]), and a model or a user copies it as shown: --scope-id
    reads it back, as the tool's scopeId and history's --project do."""
    root = tmp_path / "m"
    write(root, "projects/a|b/cart.md", "The cart keeps integer cents.\n")
    write(root, "projects/other/cart.md", "The other cart keeps integer cents too.\n")
    shown = run_memsearch("query", "cents", "--root", root, "--db", tmp_path / "db")
    assert shown.returncode == 0 and "[projects/'a|b' " in shown.stdout, shown.stdout
    for spelled in ("a|b", "'a|b'"):
        r = run_memsearch("query", "cents", "--root", root, "--db", tmp_path / "db", "--scope-id", spelled, "--json")
        assert r.returncode == 0, r.stderr
        assert [h["path"] for h in json.loads(r.stdout)["results"]] == ["projects/a|b/cart.md"]


def test_the_synopsis_in_docs_commands_names_every_option_of_every_command():
    """docs/commands.md left out options --help lists: history's --history-root, --db, --messages, --no-floor and
    --color, session-context's --history-root, --db and --json."""
    block = (REPO / "docs" / "commands.md").read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```", 1)[0]
    synopsis: dict[str, str] = {}
    for line in block.splitlines():
        line = line.split("  #", 1)[0]  # the comment
        if line.startswith("memsearch "):
            name = line.split()[1]
        synopsis[name] = f"{synopsis.get(name, '')} {line}"  # a line that goes on the one before is indented
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, click.Option):
                option = max(param.opts, key=len)
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", synopsis.get(name, "")), (name, option)


@pytest.mark.skipif(sys.platform == "win32", reason="closing a child's descriptor before exec is POSIX")
@pytest.mark.parametrize("closed", [1, 2])
@pytest.mark.parametrize("args, code", [(["query", "pgbouncer"], 0), (["query", "zebra"], 1),
                                        (["query", "pgbouncer", "--limit", "0"], 2), (["status"], 0)])
def test_a_closed_stdout_or_stderr_keeps_the_exit_status(tree, tmp_path, closed, args, code):
    """Started with stdout or stderr closed (`memsearch query x >&-`, a daemon's child), Python has sys.stdout (or
    sys.stderr) None: the console script's last flush raised AttributeError, a traceback and exit status 1, which
    reads as "nothing found", whatever the command's own."""
    r = subprocess.run([memsearch_exe(), *args, "--root", str(tree), "--db", str(tmp_path / "db")], text=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                       preexec_fn=lambda: os.close(closed))
    assert r.returncode == code and "Traceback" not in r.stderr + r.stdout, r.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="a working folder cannot be deleted on Windows")
@pytest.mark.parametrize("args, code", [
    (["query", "pgbouncer", "--root", "memory", "--db", "{db}"], 2), (["manifest", "memory"], 2),
    (["history", "port", "--history-root", "projects", "--db", "{db}"], 2),
    (["context", "--session", "s1", "--project", "./shop", "--root", "{tree}"], 2),
    (["context", "memory"], 0),  # no such file: nothing, as for any MEMORY.md that is not there
])
def test_a_relative_path_in_a_deleted_working_folder_is_a_one_line_error(tree, tmp_path, args, code):
    """Run from a folder deleted since (`rm -rf` of the build folder, a removed worktree), a relative root, transcript
    folder, project or MEMORY.md raised getcwd()'s FileNotFoundError: a traceback, exit status 1."""
    gone = tmp_path / "gone"
    gone.mkdir()

    def in_a_deleted_folder():
        os.chdir(gone)
        os.rmdir(gone)

    r = subprocess.run([memsearch_exe(), *(a.format(tree=tree, db=tmp_path / "db") for a in args)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
                       preexec_fn=in_a_deleted_folder)
    assert r.returncode == code and "Traceback" not in r.stderr and r.stderr.count("\n") == code // 2, r.stderr
    assert code == 0 or r.stderr.startswith("Error: ") and "working folder" in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["manifest", ""], ["context", "--session", "s1", "--project", "shop", "--root", ""]])
def test_an_empty_folder_is_an_error_not_the_default_one(isolated_home, args):
    """`memsearch manifest ""` listed the default roots and `context --root ""` read MiMo's default folder, where an
    empty --root of every other command is an error (a variable left unset: `--root "$DIR"`)."""
    write(isolated_home / "data" / "mimocode" / "memory", "sessions/s1/checkpoint.md", "Checkpoint of s1.\n")
    r = run_memsearch(*args)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("Error: empty root"), r.stderr + r.stdout


def test_a_home_that_is_no_folder_has_no_config_file(tree, tmp_path):
    """HOME=/dev/null, as some services and sandboxes run, stopped every command, --root and --db given: "cannot
    read config file /dev/null/.config/memsearch/config.toml: Not a directory". No folder holds no file."""
    r = run_memsearch("query", "pgbouncer", "--root", tree, "--db", tmp_path / "db",
                      env={"HOME": "/dev/null", "XDG_CONFIG_HOME": ""})
    assert r.returncode == 0 and "pgbouncer" in r.stdout, r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full, whose every write fails with ENOSPC")
@pytest.mark.parametrize("args", [["query", "pgbouncer"], ["query", "pgbouncer", "--json"], ["status"]])
def test_output_that_cannot_be_written_is_a_one_line_error(tree, tmp_path, args):
    """Output to a full disk (here /dev/full) raised OSError out of both paths: a traceback, exit status 1."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([memsearch_exe(), *args, "--root", str(tree), "--db", str(tmp_path / "db")], text=True,
                           stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 2 and r.stderr == "Error: cannot write the output (No space left on device)\n", r.stderr
