"""Fixtures and helpers every test file shares. Tests import the helpers
with `from conftest import write` (pytest puts tests/ on sys.path); no test
module imports another."""

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from memsearch import MemoryIndex

# Hypothesis's 200 ms deadline is a wall-clock assertion, which tests never make (a loaded
# machine failed them); under CI the examples are drawn the same every run, so a red run is a
# regression, not a new draw. A local run keeps exploring.
settings.register_profile("memsearch", deadline=None)
settings.register_profile("ci", parent=settings.get_profile("memsearch"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "memsearch")

REPO = Path(__file__).resolve().parents[1]


def _shared_corpora() -> Path:
    """/work/shared/corpora seen from the main checkout or from any worktree
    below /work; MEMSEARCH_TEST_CORPORA names another place."""
    if os.environ.get("MEMSEARCH_TEST_CORPORA"):
        return Path(os.environ["MEMSEARCH_TEST_CORPORA"])
    for parent in REPO.parents:
        if (parent / "shared" / "corpora").is_dir():
            return parent / "shared" / "corpora"
    return REPO.parent / "shared" / "corpora"


SHARED = _shared_corpora()
NO_CORPORA = f"the shared corpora are not at {SHARED} (set MEMSEARCH_TEST_CORPORA to their folder)"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def bump_mtime(path: Path, seconds: float = -10) -> None:
    """Move a file's mtime so a same-size rewrite still changes the fingerprint."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + int(seconds * 1e9)))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """Never touch the real user cache or config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("HOME", str(home))
    for var in ("MEMSEARCH_ROOT", "MEMSEARCH_DB", "MEMSEARCH_CONFIG", "MEMSEARCH_ROOTS", "MIMOCODE_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "memory"
    r.mkdir()
    return r


@pytest.fixture
def tree(root):
    write(root, "global/user/prefs.md", "The user prefers tabs over spaces and short commits.\n")
    write(root, "projects/shop/MEMORY.md", "- Database: PostgreSQL on port 5433\n- Deploy with make release\n")
    write(root, "projects/shop/memory-db.md", "PostgreSQL 16 listens on port 5433. Connection via pgbouncer.\n")
    write(root, "projects/shop/checkpoint-2.md", "Checkpoint: migrating the cart to integer cents.\n")
    write(root, "sessions/s1/notes.md", "Session scratch: the cart rounding bug, cents versus float.\n")
    write(root, "sessions/s1/checkpoint.md", "Checkpoint of s1: rounding fixed, webhook tests next.\n")
    write(root, "sessions/s1/tasks/T1/progress.md", "T1 progress: rounding fix done, tests green.\n")
    write(root, "sessions/s1/tasks/T1/notes.md", "T1 notes: Stripe webhook retries for three days.\n")
    write(root, "README.md", "Top-level readme of the memory tree, about nothing in particular.\n")
    return root


@pytest.fixture
def index(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "index.db") as idx:
        yield idx


def paths(hits) -> list:
    """The paths of search hits, in their order."""
    return [h.path for h in hits]


@contextlib.contextmanager
def unwritable(path):
    """Make a folder or file unwritable even for root (chattr +i), or by
    its mode for anyone else."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            pytest.skip("chattr is not installed: root cannot make a folder unwritable without it")
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if done.returncode:
            pytest.skip(f"chattr +i is refused on this filesystem: {done.stderr.decode().strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    mode = path.stat().st_mode
    path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        path.chmod(mode)


# -- the click command, in this process ---------------------------------------------

def cli(*args, env=None):
    """`memsearch ARGS` through click's test runner; the click Result. An
    exception the command does not handle propagates (catch_exceptions=False);
    ENV is added to the environment for the call."""
    from click.testing import CliRunner

    from memsearch.cli import main

    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


# -- the installed script and fresh interpreters -----------------------------------

def memsearch_exe() -> str:
    """The `memsearch` script installed next to this Python. The suite tests
    the installed command, so a missing script is a failure, never a skip."""
    exe = shutil.which("memsearch", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.fail(f"no memsearch script next to {sys.executable}: run pip install -e '.[test]' in this venv")
    return exe


def default_sigint() -> None:
    """``preexec_fn`` for a child a test stops with SIGINT: a shell starts its
    background jobs with SIGINT ignored, and the child would keep that (as any
    program does), so the test would hang wherever the suite runs in one."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_memsearch(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    """The installed script with ARGS, as a user runs it; ENV is added to
    this process's environment (the isolated XDG dirs of `isolated_home`)."""
    return subprocess.run([memsearch_exe(), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


# Modules a query process must never need (heavy, or for other commands only).
HEAVY = ("sqlite_utils", "frontmatter", "inotify_simple", "yaml", "numpy", "mcp")
_LOADED = "LOADED-BY-THIS-TEST="


def imports_of(code: str, modules, *argv, env=None, after: str = "", timeout=120):
    """Run CODE in a fresh interpreter (argv[1:] = ARGV) and return
    (which of MODULES it imported, in their order; the finished process).

    The list is printed to stderr by an exit handler, so it is taken however
    CODE ends (SystemExit, memsearch's own fast exit) and stdout stays CODE's
    own. Modules already loaded once AFTER has run (e.g. "import click":
    what click loads for every command) are not counted."""
    # Without AFTER nothing is discounted, not even what site-packages' .pth
    # files import at start-up.
    before = f"{after}\n_before = set(_sys.modules)\n" if after else "_before = set()\n"
    prologue = (
        "import atexit as _atexit, sys as _sys\n" + before +
        f"_atexit.register(lambda: print({_LOADED!r} + ','.join(m for m in {tuple(modules)!r}"
        " if m in _sys.modules and m not in _before), file=_sys.stderr))\n"
    )
    run = subprocess.run([sys.executable, "-c", prologue + code, *map(str, argv)], capture_output=True, text=True,
                         timeout=timeout, stdin=subprocess.DEVNULL, env=env)
    marks = [line for line in run.stderr.splitlines() if line.startswith(_LOADED)]
    assert marks, f"the process ended before its exit handlers ran (status {run.returncode}):\n{run.stderr}"
    loaded = marks[-1][len(_LOADED):]
    return (loaded.split(",") if loaded else []), run


def bench(name):
    """A bench/ script as a module (bench/ is not a package)."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "bench"))


# -- damaged databases (test_reliability, test_doctor) --------------------------------

def damage_pages(db: Path, table: str, count: int = 4):
    """Overwrite pages of one table or index in the middle of a valid
    database (its root page is left alone, so the file still opens)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", (table,))]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    assert len(pages) > 1, f"{table} has too few pages to damage"
    with open(db, "r+b") as f:
        for page in pages[1:1 + count]:
            f.seek((page - 1) * size)
            f.write(os.urandom(size))


@pytest.fixture
def big_tree(root):
    """Enough text for every table to span several pages."""
    for i in range(300):
        write(root, f"projects/p{i % 7}/note-{i}.md", f"note {i} walrus word{i} " + "lorem ipsum dolor " * 40 + "\n")
    return root


def bad_copies(db: Path):
    return [p for p in db.parent.iterdir() if ".bad-" in p.name and not p.name.endswith(("-wal", "-shm"))]


def schema_one_index(db: Path) -> Path:
    """An index file that only ever saw migration 1 (test_migrate, test_doctor)."""
    from memsearch import migrate

    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT)")
    for statement in migrate.split_statements(migrate.available()[0][2].read_text()):
        conn.execute(statement)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', 'then')")
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    return db


# -- conversation transcripts (test_history, test_history_tools, test_session_context) --

PROJECT = "-home-u-shop"


def rewind(conn, version: int) -> None:
    """Mark an index as migration ``version`` - 1 left it, for a migration's test: the later ones run again at
    its next open. A table a later migration creates goes too (0036's: an older index has none)."""
    conn.execute("DELETE FROM schema_migrations WHERE version >= ?", (version,))
    conn.execute(f"PRAGMA user_version = {version - 1}")
    if version <= 36:
        conn.execute("DROP TABLE IF EXISTS history_user_fts")


def line(kind="user", content="", session=None, at="2025-01-20T11:57:17.716Z", **extra) -> dict:
    obj = {"type": kind, "sessionId": session, "uuid": f"u{id(extra)}", "parentUuid": None, "timestamp": at,
           "cwd": "/home/u/shop", "gitBranch": "main", "isSidechain": False}
    if kind in ("user", "assistant"):
        obj["message"] = {"role": kind, "content": content}
    obj.update(extra)
    return obj


def transcript(root: Path, lines: list, session="s-1", project=PROJECT, tail: str = "") -> Path:
    path = root / project / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    for x in lines:
        if x.get("sessionId", "") is None:
            x["sessionId"] = session
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + tail, encoding="utf-8")
    return path


def append(path: Path, *lines: dict, raw: str = "") -> int:
    for x in lines:
        if x.get("sessionId", "") is None:
            x["sessionId"] = path.stem
    data = "".join(json.dumps(x) + "\n" for x in lines) + raw
    with open(path, "a", encoding="utf-8") as f:
        f.write(data)
    return len(data.encode())


def settle(root):
    """Every file and folder under ``root`` last modified a minute ago: old
    enough for a folder's listing to be kept (memsearch.fingerprint.RACY_NS).
    A file's fingerprint is trusted once its ctime is that old too, which
    nothing sets back: see ``trusted_at_once``."""
    for path in [root, *(p for p in root.rglob("*") if not p.is_symlink())]:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


@pytest.fixture
def trusted_at_once(monkeypatch):
    """A memory file's fingerprint trusted as soon as it is read: no racy window, in which every
    reconcile reads it again (and a repos root takes no steady state)."""
    monkeypatch.setattr("memsearch.reconcile.RACY_NS", 0)


@pytest.fixture
def listings(monkeypatch):
    """The folders os.scandir lists from now on (without a trailing separator), named or given as a descriptor
    os.open opened (the walk of transcripts lists a folder through one)."""
    listed, opened = [], {}
    real, real_open = os.scandir, os.open

    def open_(path, *args, **kwargs):
        fd = real_open(path, *args, **kwargs)
        opened[fd] = os.fspath(path)
        return fd

    def scandir(path="."):
        listed.append((opened[path] if isinstance(path, int) else os.fspath(path)).rstrip(os.sep) or os.sep)
        return real(path)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "scandir", scandir)
    return listed
