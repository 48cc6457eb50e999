"""Reliability: concurrency, damaged databases and environment faults.

The long runs live in bench/stress.py and bench/crash.py; this file runs a
short stress and pins every bug those runs and the fault drills found.
"""

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import memsearch.reconcile as reconcile_mod
from conftest import bad_copies, bench, cli, damage_pages, write
from memsearch import DatabaseError, MemoryIndex, RootNotFound
from memsearch.db import default_db_file


def snapshot(root: Path) -> dict:
    """Every entry under root with its bytes and its stat times: proof that
    nothing was written, touched or created."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            data = Path(p).read_bytes() if os.path.isfile(p) and not os.path.islink(p) else None
            out[p] = (data, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
    return out


# -- concurrency ---------------------------------------------------------------

@pytest.mark.slow
def test_short_stress_run_has_no_errors_and_no_stale_results(tmp_path):
    stress = bench("stress")
    result = stress.run_stress(tmp_path / "stress", seconds=3, writers=1, queriers=2, reconcilers=1, files=60,
                               write_rate=150)
    assert result["errors"] == 0, result["error_examples"]
    assert (result["stale"], result["missing"], result["phantom"]) == (0, 0, 0), result["examples"]
    assert result["final_check"] == []
    # Each role did work (no vacuous pass); how much in 3 s depends on the
    # machine's load, which a test must not assert.
    assert result["queries"] > 0 and result["ops"]["writer"] > 0 and result["ops"]["reconciler"] > 0


@pytest.mark.slow
def test_short_stress_run_with_a_watcher(tmp_path):
    """The same with `memsearch watch` running: queries skip the walk and
    prove freshness with the watcher's cookie handshake instead."""
    stress = bench("stress")
    result = stress.run_stress(tmp_path / "stress", seconds=2, writers=1, queriers=2, reconcilers=0, watchers=1,
                               files=60, write_rate=150)
    assert result["errors"] == 0, result["error_examples"]
    assert (result["stale"], result["missing"], result["phantom"]) == (0, 0, 0), result["examples"]
    assert result["final_check"] == [] and result["queries_via"].get("watcher", 0) > 0


@pytest.fixture
def pause_after_walk(monkeypatch):
    """Run a function between a reconcile's walk and its write transaction:
    what another process does while this one is preempted there."""
    pending = []
    real = reconcile_mod.walk

    def walk(*args, **kwargs):
        seen = real(*args, **kwargs)
        if pending:
            pending.pop()()
        return seen

    monkeypatch.setattr(reconcile_mod, "walk", walk)
    return pending.append


def test_a_late_reconcile_does_not_cut_newer_text_short(root, tmp_path, pause_after_walk):
    """Process A walks and sees a short file; the file grows and process B
    indexes it; A must not then store the long text cut at the short size
    (a query whose own walk matched B's row would miss the end of the file)."""
    note = write(root, "note.md", "short v1")
    db = tmp_path / "db"
    with MemoryIndex(root, db) as a, MemoryIndex(root, db) as b:
        a.reconcile()
        write(root, "note.md", "v2 a little longer")

        def meanwhile():
            write(root, "note.md", "v3 grows much longer than before and ends with okapi")
            b.reconcile()

        pause_after_walk(meanwhile)
        a.reconcile()
        assert [h.path for h in b.search("okapi", reconcile=False)] == ["note.md"]
    assert note.read_text().endswith("okapi")


def test_a_late_reconcile_does_not_delete_a_file_recreated_meanwhile(root, tmp_path, pause_after_walk):
    """A walks while the file is briefly gone (deleted, about to be written
    anew); B indexes the new file; A must not remove B's row."""
    write(root, "note.md", "first okapi")
    db = tmp_path / "db"
    with MemoryIndex(root, db) as a, MemoryIndex(root, db) as b:
        a.reconcile(), b.reconcile()
        (root / "note.md").unlink()

        def meanwhile():
            write(root, "note.md", "second okapi, much longer than the first")
            b.reconcile()

        pause_after_walk(meanwhile)
        a.reconcile()
        assert [h.path for h in b.search("second", reconcile=False)] == ["note.md"]


# -- damaged databases, seen through the CLI ------------------------------------

def query_json(*args):
    r = cli("query", *args, "--json", "--limit", "3")
    return r, (json.loads(r.stdout) if r.stdout.strip() else None)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "text", "newer-schema", "foreign", "zero-header"])
def test_damaged_cache_database_one_warning_then_a_correct_result(big_tree, damage):
    assert cli("index", "--root", str(big_tree)).exit_code == 0
    db = Path(default_db_file(big_tree))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    if damage == "garbage":
        db.write_bytes(os.urandom(db.stat().st_size))
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:8192])
    elif damage == "text":
        db.write_text("not a database\n" * 100)
    elif damage == "zero-header":
        with open(db, "r+b") as f:
            f.write(b"\0" * 100)
    elif damage == "newer-schema":
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 999")
        conn.close()
    elif damage == "foreign":
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE someone_elses (x)")
        conn.commit()
        conn.close()
    r, data = query_json("word42", "--root", str(big_tree))
    assert r.exit_code == 0, r.stderr
    assert [h["path"] for h in data["results"]] == ["projects/p0/note-42.md"]
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: ") and "rebuilding" in lines[0], r.stderr
    assert len(bad_copies(db)) == 1  # kept for a post-mortem, not deleted
    r, _ = query_json("word42", "--root", str(big_tree))
    assert r.exit_code == 0 and r.stderr == ""  # warned once, not on every run


@pytest.mark.parametrize("damage", ["newer-schema", "text", "foreign"])
def test_a_database_the_user_named_is_never_replaced(big_tree, tmp_path, damage):
    db = tmp_path / "named.db"
    if damage == "newer-schema":
        assert cli("index", "--root", str(big_tree), "--db", str(db)).exit_code == 0
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 999")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    elif damage == "text":
        db.write_text("my own notes, not an index\n")
    else:
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE important (x)")
        conn.execute("INSERT INTO important VALUES (1)")
        conn.commit()
        conn.close()
    before = db.read_bytes()
    for command in (["query", "walrus"], ["index"], ["status"]):
        r = cli(*command, "--root", str(big_tree), "--db", str(db))
        assert r.exit_code == 2
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: ") and "--db" in r.stderr, r.stderr
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("named")) == ["named.db"]


def test_a_damaged_index_the_user_named_is_set_aside_and_rebuilt(big_tree, tmp_path):
    """A memsearch index (SQLite header intact) that is damaged is still a
    cache: kept aside and rebuilt, even when named with --db."""
    db = tmp_path / "named.db"
    cli("index", "--root", str(big_tree), "--db", str(db))
    damage_pages(db, "memory_fts")
    r, data = query_json("word42", "--root", str(big_tree), "--db", str(db))
    assert r.exit_code == 0 and [h["path"] for h in data["results"]] == ["projects/p0/note-42.md"]
    assert len(r.stderr.splitlines()) == 1 and len(bad_copies(db)) == 1


@pytest.mark.parametrize("edited", [True, False], ids=["reconcile-writes", "nothing-to-write"])
@pytest.mark.parametrize("table", ["memory_fts", "memory_fts_idx_data", "memory_fts_fingerprint",
                                   "sqlite_autoindex_memory_fts_1"])
def test_damage_found_in_the_middle_of_a_query_still_gives_the_right_answer(big_tree, tmp_path, table, edited):
    """Pages damaged inside a database that opens fine: whichever step trips
    over them (reconcile or search), the index is set aside, rebuilt from the
    files, and the query answers from the rebuilt index, not from an empty one."""
    db = tmp_path / "db"
    cli("index", "--root", str(big_tree), "--db", str(db))
    damage_pages(db, table)
    if edited:
        write(big_tree, "projects/p1/note-1.md", "note 1 edited walrus okapi\n")
    r, data = query_json("word42", "okapi" if edited else "word1", "--root", str(big_tree), "--db", str(db))
    assert r.exit_code == 0, r.stderr
    assert {h["path"] for h in data["results"]} == {"projects/p0/note-42.md", "projects/p1/note-1.md"}
    assert len(r.stderr.splitlines()) <= 1
    if r.stderr:  # set aside and rebuilt; damage no query touches is for `memsearch doctor`
        assert bench("stress").compare_index_with_files(big_tree, db) == []


def test_garbage_in_the_wal_file_is_ignored(big_tree, tmp_path):
    db = tmp_path / "db"
    cli("index", "--root", str(big_tree), "--db", str(db))
    Path(f"{db}-wal").write_bytes(os.urandom(100_000))
    r, data = query_json("word42", "--root", str(big_tree), "--db", str(db))
    assert r.exit_code == 0 and r.stderr == ""
    assert [h["path"] for h in data["results"]] == ["projects/p0/note-42.md"]
    assert bench("stress").compare_index_with_files(big_tree, db) == []


def test_a_database_path_that_is_a_directory_is_a_one_line_error(tree, tmp_path):
    """Named with --db (at the default path one is set aside: test_database)."""
    r = cli("query", "pgbouncer", "--root", str(tree), "--db", str(tmp_path))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "directory" in r.stderr, r.stderr
    with pytest.raises(DatabaseError, match="directory"):
        with MemoryIndex(tree, tmp_path) as idx:
            idx.search("pgbouncer")


# -- environment faults ----------------------------------------------------------

def _mount(*args) -> bool:
    if os.geteuid() != 0 or sys.platform != "linux":
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _mount_or_skip(*args):
    """mount(8) with ARGS, or skip the test saying why this machine cannot."""
    if sys.platform != "linux":
        pytest.skip("mounting a test filesystem is done on Linux only")
    if os.geteuid() != 0:
        pytest.skip("only root can mount the test filesystem")
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"mount {' '.join(args)} failed here: {done.stderr.strip()}")


@pytest.fixture
def mountpoint(tmp_path):
    """A directory to mount on (root only), unmounted afterwards."""
    point = tmp_path / "mnt"
    point.mkdir()
    yield point
    subprocess.run(["umount", str(point)], capture_output=True)


def test_read_only_database_directory_is_a_one_line_error_and_recovers(big_tree, mountpoint):
    db = mountpoint / "index.db"
    assert cli("index", "--root", str(big_tree), "--db", str(db)).exit_code == 0
    _mount_or_skip("--bind", str(mountpoint), str(mountpoint))
    _mount_or_skip("-o", "remount,ro,bind", str(mountpoint))
    before = snapshot(big_tree)
    write(big_tree, "projects/p0/new.md", "okapi")
    before = snapshot(big_tree)
    for args in (["query", "okapi"], ["index"], ["status"], ["query", "okapi", "--db", str(mountpoint / "new.db")],
                 ["query", "okapi", "--db", str(mountpoint / "sub" / "new.db")]):
        r = cli(*args, "--root", str(big_tree), *([] if "--db" in args else ["--db", str(db)]))
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("Error: "), (args, r.stderr)
    assert snapshot(big_tree) == before
    assert _mount("-o", "remount,rw,bind", str(mountpoint))
    r, data = query_json("okapi", "--root", str(big_tree), "--db", str(db))
    assert r.exit_code == 0 and r.stderr == "" and data["results"][0]["path"] == "projects/p0/new.md"


def test_missing_database_directories_are_created(tree, tmp_path):
    db = tmp_path / "a" / "b" / "c" / "index.db"
    r = cli("query", "pgbouncer", "--root", str(tree), "--db", str(db))
    assert r.exit_code == 0 and db.exists()


def test_disk_full_while_writing_the_index_then_recovery(big_tree, mountpoint):
    _mount_or_skip("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mountpoint))
    db = mountpoint / "index.db"
    assert cli("index", "--root", str(big_tree), "--db", str(db)).exit_code == 0
    filler = mountpoint / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # take every byte that is left
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    for i in range(0, 300, 2):
        write(big_tree, f"projects/p{i % 7}/note-{i}.md", f"note {i} rewritten okapi{i} " + "sit amet " * 60)
    before = snapshot(big_tree)
    for args in (["query", "okapi10"], ["index"]):
        r = cli(*args, "--root", str(big_tree), "--db", str(db))
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "space" in r.stderr, r.stderr
    assert snapshot(big_tree) == before
    filler.unlink()
    r, data = query_json("okapi10", "--root", str(big_tree), "--db", str(db))
    assert r.exit_code == 0 and r.stderr == "", r.stderr  # no warning: the index was never damaged
    assert data["results"][0]["path"] == "projects/p3/note-10.md"
    assert bench("stress").compare_index_with_files(big_tree, db) == []


def test_database_full_mid_transaction_rolls_back_cleanly(big_tree, tmp_path, monkeypatch):
    """The same without root: a page limit makes SQLite report a full disk
    in the middle of the reconcile's write transaction."""
    from memsearch import db as db_mod

    db = tmp_path / "db"
    with MemoryIndex(big_tree, db) as idx:
        idx.reconcile()
        pages = idx.conn.execute("PRAGMA page_count").fetchone()[0]
    for i in range(300):
        write(big_tree, f"projects/p{i % 7}/note-{i}.md", f"note {i} rewritten okapi{i} " + "sit amet " * 80)
    real = db_mod._open_checked

    def tiny(path):
        conn = real(path)
        conn.execute(f"PRAGMA max_page_count = {pages + 5}")
        return conn

    monkeypatch.setattr(db_mod, "_open_checked", tiny)
    with MemoryIndex(big_tree, db) as idx:
        with pytest.raises(DatabaseError, match="full"):
            idx.search("okapi10")
    monkeypatch.undo()
    with MemoryIndex(big_tree, db) as idx:
        assert idx.search("okapi10")[0].path == "projects/p3/note-10.md"
    assert not bad_copies(db)
    assert bench("stress").compare_index_with_files(big_tree, db) == []


def test_root_vanishing_in_the_middle_of_a_walk_keeps_the_index(big_tree, tmp_path, monkeypatch):
    db = tmp_path / "db"
    with MemoryIndex(big_tree, db) as idx:
        idx.reconcile()
    real = os.scandir
    calls = []

    def scandir(path):
        it = real(path)
        calls.append(path)
        if len(calls) == 2:  # the root and one directory read, then the tree is gone
            os.rename(big_tree, tmp_path / "moved")
        return it

    monkeypatch.setattr(os, "scandir", scandir)
    with MemoryIndex(big_tree, db) as idx:
        with pytest.raises(RootNotFound, match="vanished"):
            idx.search("walrus")
    monkeypatch.undo()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0] == 300
    conn.close()
    os.rename(tmp_path / "moved", big_tree)
    with MemoryIndex(big_tree, db) as idx:
        assert not idx.reconcile().changed


@pytest.mark.parametrize("becomes", ["directory", "fifo", "unreadable", "gone"])
def test_a_file_that_changes_kind_between_walk_and_read(root, tmp_path, pause_after_walk, monkeypatch, becomes):
    note = write(root, "a/note.md", "walrus first")
    write(root, "a/other.md", "walrus other")
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        write(root, "a/note.md", "walrus second, longer")
        write(root, "a/other.md", "walrus other, edited")

        def meanwhile():
            note.unlink()
            if becomes == "directory":
                note.mkdir()
            elif becomes == "fifo":
                os.mkfifo(note)  # opening it for reading would block forever
            elif becomes == "unreadable":
                note.write_text("walrus secret")
                real_open = os.open
                monkeypatch.setattr(os, "open", lambda p, *a, **k: _deny(p, note) or real_open(p, *a, **k))

        pause_after_walk(meanwhile)
        done = []
        worker = threading.Thread(target=lambda: done.append(idx.reconcile()), daemon=True)
        worker.start()
        worker.join(20)
        assert done, "reconcile hung"
        monkeypatch.undo()
        report = done[0]
        assert "a/note.md" in report.removed
        assert [h.path for h in idx.search("walrus", reconcile=False)] == ["a/other.md"]
        if becomes != "gone":
            assert [s.path for s in report.skipped] == ["a/note.md"]


def _deny(path, denied):
    if os.fspath(path) == str(denied):
        raise PermissionError(13, "Permission denied")


# -- the files are never written ---------------------------------------------------

def test_no_operation_ever_writes_touches_or_creates_a_file_in_the_tree(tree, tmp_path):
    """Bytes, mtimes, ctimes (any metadata change moves it) and the set of
    entries stay exactly as they were through every command, a rebuild after
    damage, the doctor and its fixes, and a watcher when there is one."""
    write(tree, "projects/shop/memory-fm.md", "---\nname: fm\ndescription: [unclosed\n---\nbody walrus\n")
    write(tree, "bin.md", b"\x00\x01binary")
    os.symlink("README.md", tree / "link.md")
    os.mkfifo(tree / "fifo.md")
    cache = Path(default_db_file(tree))
    before = snapshot(tree)
    db = ["--root", str(tree)]
    for args in (["index"], ["query", "pgbouncer"], ["query", "walrus", "--json"], ["status"], ["doctor"],
                 ["doctor", "--fix"], ["index", "--json"]):
        assert cli(*args, *db).exit_code in (0, 1), args
    cache.write_bytes(b"garbage" * 1000)  # damaged: set aside and rebuilt from the files
    assert cli("query", "pgbouncer", *db).exit_code == 0
    with MemoryIndex(tree) as idx:
        idx.search("cents", scope="sessions")
        idx.status()
    from memsearch.watch import Watcher

    with MemoryIndex(tree, tmp_path / "w.db") as idx, Watcher(idx):
        idx.search("pgbouncer")
    assert snapshot(tree) == before
