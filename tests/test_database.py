import contextlib
import logging
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import bad_copies, cli, line, memsearch_exe, run_memsearch, transcript, unwritable, write
from memsearch import DatabaseError, HistoryIndex, MemoryIndex
from memsearch.db import default_db_file


def test_default_database_is_per_root_in_the_cache_dir(tmp_path, isolated_home):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    write(a, "x.md", "alpha")
    write(b, "x.md", "beta")
    with MemoryIndex(a) as ia, MemoryIndex(b) as ib:
        assert ia.db_path != ib.db_path
        assert str(ia.db_path).startswith(str(isolated_home / "cache" / "memsearch"))
        assert ia.search("alpha") and not ib.search("alpha")
    assert Path(default_db_file(a)) == Path(default_db_file(str(a) + "/"))


def first_build(root: Path) -> Path:
    """A tree whose first reconcile is a build (reconcile.BULK_MIN files)."""
    from memsearch.reconcile import BULK_MIN

    for i in range(BULK_MIN):
        write(root, f"projects/p{i % 7}/note-{i}.md", f"note {i} walrus{i}\n")
    return root


def test_a_first_build_killed_before_its_commit_is_rolled_back_by_the_next_open(root, tmp_path):
    """A first build writes through a rollback journal, each page once (not to WAL, then again at
    the checkpoint): killed before its commit it leaves the journal, which the next open rolls
    back before building in full; the file is a WAL index again."""
    tree, db = first_build(root), tmp_path / "index.db"
    code = f"""
import os
from memsearch import MemoryIndex, db
calls = []
def killed(*args):
    calls.append(args)
    if len(calls) == 2:  # after FTS5's 'rebuild', before COMMIT
        os._exit(9)
db.set_hash_size = killed
with MemoryIndex({str(tree)!r}, {str(db)!r}) as idx:
    idx.reconcile()
"""
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 9
    assert os.path.exists(f"{db}-journal")
    with MemoryIndex(tree, db) as idx:
        assert idx.reconcile().added and [h.path for h in idx.search("walrus77")] == ["projects/p0/note-77.md"]
    assert not os.path.exists(f"{db}-journal")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT count(*) FROM memory_fts").fetchone() == (len(list(tree.rglob("*.md"))),)


def test_a_first_build_keeps_its_connection(root, tmp_path):
    """The journal's switch back to WAL makes a new -wal: taken for one set aside by another process, it closed
    the connection after a first build (the next operation reopened the index and read its rows again)."""
    with MemoryIndex(first_build(root), tmp_path / "index.db") as idx:
        conn = idx.conn
        os.link(f"{idx.db_file}-wal", tmp_path / "held")  # (else the new -wal may get the old one's inode number)
        assert idx.reconcile().added
        assert not idx.replaced() and [h.path for h in idx.search("walrus77")] == ["projects/p0/note-77.md"]
        assert idx.conn is conn


def test_a_first_build_beside_a_reader_keeps_wal(root, tmp_path):
    """SQLite refuses to leave WAL while another connection reads the file: the build goes on in
    WAL, and the reader sees it whole."""
    db = tmp_path / "index.db"
    with MemoryIndex(root, db) as idx:
        assert not idx.reconcile().added
        with contextlib.closing(sqlite3.connect(db)) as reader:
            assert reader.execute("SELECT count(*) FROM memory_fts").fetchone() == (0,)
            first_build(root)
            added = idx.reconcile().added
            assert len(added) == reader.execute("SELECT count(*) FROM memory_fts").fetchone()[0] > 0
            assert reader.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert [h.path for h in idx.search("walrus78")] == ["projects/p1/note-78.md"]
    assert not os.path.exists(f"{db}-journal")


def test_a_first_memory_build_into_a_file_the_history_uses_keeps_wal(root, tmp_path, monkeypatch):
    """A --db the history shares (memsearch mcp --db) holding transcripts: a first memory build took the file
    out of WAL, and once its pages spilled from the cache it held the file's exclusive lock to its commit, so a
    history search in another process waited 30 s and failed ("stayed locked"; 0.12 s in WAL). Such a build
    goes through the WAL: the history is read beside it."""
    from memsearch import db

    history, path = tmp_path / "history", tmp_path / "index.db"
    transcript(history, [line("user", "the kestrel deploy")])
    with HistoryIndex(history, path) as hist:
        hist.refresh()
    first_build(root)
    read = []

    def beside(*args):  # inside the build's transaction, its rows written
        if not read:
            with contextlib.closing(sqlite3.connect(path, timeout=0)) as other:
                try:
                    read.append(other.execute("SELECT count(*) FROM history_messages").fetchone())
                except sqlite3.OperationalError as ex:  # "database is locked"
                    read.append(str(ex))
        return set_hash_size(*args)

    set_hash_size = db.set_hash_size
    monkeypatch.setattr(db, "CACHE_KIB", 64)  # the build's pages spill early, as a large one's do
    monkeypatch.setattr(db, "set_hash_size", beside)
    with MemoryIndex(root, path) as idx:
        assert len(idx.reconcile().added) == len(list(root.rglob("*.md")))
    assert read == [(1,)]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "text"])
def test_damaged_cache_database_is_set_aside_and_rebuilt(tree, damage, caplog):
    with MemoryIndex(tree) as idx:
        idx.reconcile()
        db = idx.db_path
    if damage == "garbage":
        db.write_bytes(os.urandom(64 * 1024))
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:1000])
    else:
        db.write_text("this is not a database at all\n" * 100)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{db}{suffix}"):
            os.unlink(f"{db}{suffix}")
    with caplog.at_level(logging.WARNING, logger="memsearch"):
        with MemoryIndex(tree) as idx:
            assert idx.search("pgbouncer")[0].path == "projects/shop/memory-db.md"
    kept = [p for p in db.parent.iterdir() if ".bad-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1
    assert sum("rebuilding" in r.getMessage() for r in caplog.records) == 1


def test_copies_set_aside_are_bounded(tree):
    """Each set-aside kept one more copy: an index damaged again and again, or
    passed back and forth between an older and a newer memsearch (each sets
    the other's aside), filled the disk. The newest copies are kept (names sort by
    the second they were made)."""
    from memsearch.db import KEEP_ASIDE

    db = Path(default_db_file(tree))
    kept = []
    for _ in range(KEEP_ASIDE + 2):
        r = run_memsearch("query", "pgbouncer", "--root", tree)  # a process each: each copy has its own name
        assert r.returncode == 0, r.stderr
        kept += [line.split("kept it as ")[1].split()[0] for line in r.stderr.splitlines() if "kept it as" in line]
        _sqlite(db, "PRAGMA user_version = 999")  # what a newer memsearch leaves
    assert len(kept) == KEEP_ASIDE + 1
    names = [p.name for p in bad_copies(db)]
    assert len(names) == KEEP_ASIDE and kept[-1] in names and kept[0] not in names


def test_a_relative_index_path_keeps_naming_one_file(tree, tmp_path, monkeypatch):
    """A long-lived index named by a relative path followed the working folder:
    after an os.chdir() it built a second index there, from every file."""
    from memsearch.history import HistoryIndex

    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    with MemoryIndex(tree, "index.db") as idx, HistoryIndex(tmp_path, "history.db") as history:
        assert idx.search("pgbouncer")
        monkeypatch.chdir(tmp_path / "b")
        assert idx.search("pgbouncer") and idx.reconcile().added == ()
        assert idx.db_path == tmp_path / "a" / "index.db" and history.db_path == str(tmp_path / "a" / "history.db")
    assert not (tmp_path / "b" / "index.db").exists()


def test_the_wal_of_an_index_kept_open_shrinks_after_a_build(root, tmp_path, trusted_at_once):
    """SQLite keeps a WAL at its largest: after a cold build, a watcher or an
    MCP server (a MemoryIndex kept open) held a WAL as large as the index. (A first build writes
    through a rollback journal: here the index holds a file first.
    trusted_at_once: else the next reconcile re-reads and rewrites all 2,000 rows.)"""
    from memsearch.db import WAL_LIMIT_BYTES

    db = tmp_path / "index.db"
    wal = tmp_path / "index.db-wal"
    write(root, "first.md", "written first")
    with MemoryIndex(root, db) as idx:
        idx.reconcile()
        for i in range(2000):
            write(root, f"n/{i}.md", " ".join(f"w{(i * 7919 + j * 104729) % 20000}" for j in range(300)))
        idx.reconcile()
        assert wal.stat().st_size > WAL_LIMIT_BYTES  # the build went through the WAL
        write(root, "n/new.md", "one more note")
        idx.reconcile()  # the WAL, checkpointed, starts over
        assert wal.stat().st_size <= WAL_LIMIT_BYTES
        assert [h.path for h in idx.search("more note")] == ["n/new.md"]


def test_unwritable_database_location_is_a_clear_error(tree, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    with MemoryIndex(tree, blocker / "sub" / "db") as idx:
        with pytest.raises(DatabaseError, match="cannot create"):
            idx.search("pgbouncer")


def test_an_index_made_writable_again_is_written_by_an_index_kept_open(tree, tmp_path):
    """SQLite opens a file it cannot write read-only, and that connection
    stayed read-only: a long-lived index (an MCP server) opened meanwhile
    failed every query that had a change to write, for as long as it ran."""
    db = tmp_path / "index.db"
    with MemoryIndex(tree, db) as idx:
        idx.reconcile()
    with MemoryIndex(tree, db) as idx:
        write(tree, "global/user/walrus.md", "a walrus note")
        with unwritable(db):
            with pytest.raises(DatabaseError, match="readonly"):
                idx.search("walrus")
        assert [h.path for h in idx.search("walrus")] == ["global/user/walrus.md"]


def test_reconcile_of_an_index_kept_open_follows_the_file_at_its_path(tree, tmp_path):
    """README: the index can be deleted at any time. reconcile() of a
    MemoryIndex kept open wrote into the deleted file, where no other
    process (and no later search of its own) would find it."""
    db = tmp_path / "index.db"
    with MemoryIndex(tree, db) as idx:
        files = len(idx.reconcile().added)
        for suffix in ("", "-wal", "-shm"):
            os.unlink(f"{db}{suffix}")
        assert len(idx.reconcile().added) == files
        assert db.exists()
    with MemoryIndex(tree, db) as other:
        assert other.reconcile().unchanged == files


def test_a_wal_deleted_under_an_index_kept_open_locks_no_other_process_out(tree, tmp_path):
    """The -wal file deleted alone (a cleaner, an rm of what looks like junk)
    under a long-lived index: it went on writing the deleted one, and every
    other process's query failed ("cannot write the index (disk I/O error);
    free some space") for as long as it ran."""
    db = tmp_path / "index.db"
    with MemoryIndex(tree, db) as idx:
        assert idx.search("pgbouncer")
        os.unlink(f"{db}-wal")
        write(tree, "global/user/walrus.md", "a walrus note")
        assert [h.path for h in idx.search("walrus")] == ["global/user/walrus.md"]
        r = run_memsearch("query", "walrus", "--root", tree, "--db", db)
        assert r.returncode == 0 and r.stdout.startswith(f"{tree}/global/user/walrus.md"), r.stderr


def _as_a_user() -> list:
    """A command prefix that runs a program bound by file modes, as a user's
    process is: root writes any file whatever its mode (CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
    if shutil.which("setpriv") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode:
        pytest.skip("root cannot drop CAP_DAC_OVERRIDE here (setpriv missing or refused)")
    return prefix


def test_a_query_while_the_index_was_read_only_leaves_it_writable_after(tree, tmp_path):
    """SQLite creates the -wal and -shm files with the index file's mode: a
    query while the index was r--r--r-- left them so, and once the index was
    writable again every query failed, naming a file that was writable."""
    db = tmp_path / "index.db"
    assert cli("index", "--root", str(tree), "--db", str(db)).exit_code == 0
    query = [*_as_a_user(), memsearch_exe(), "query", "walrus", "--root", str(tree), "--db", str(db)]
    write(tree, "global/user/walrus.md", "a walrus note")
    db.chmod(0o444)
    r = subprocess.run(query, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "readonly" in r.stderr, r.stderr
    db.chmod(0o644)
    r = subprocess.run(query, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(f"{tree}/global/user/walrus.md"), r.stderr


def _hammer(root, db, seconds, errors):
    import time

    end = time.time() + seconds
    try:
        with MemoryIndex(root, db) as idx:
            while time.time() < end:
                idx.search("walrus")
    except Exception as ex:  # noqa: BLE001 - the test reports any failure
        errors.put(repr(ex))


def test_threads_sharing_one_index_each_get_their_answer(root, tmp_path):
    """Threads sharing a MemoryIndex (a host running an agent's parallel tool
    calls) share its connection: their transactions interleaved, and about
    two searches in three failed ("cannot start a transaction within a
    transaction", "cannot commit - no transaction is active"). A close()
    from another thread, or the lazy open of a HistoryIndex, raced too."""
    for i in range(20):
        write(root, f"n{i}.md", f"walrus {i}")
    history = tmp_path / "history"
    transcript(history, [line("user", "walrus in a transcript")])
    failures = []

    def work(k, idx, hist):
        try:
            for j in range(15):
                write(root, f"t{k}.md", f"walrus thread{k} round{j}")
                hits = idx.search(f"thread{k}")
                assert [(h.path, h.snippet) for h in hits] == [(f"t{k}.md", f"walrus <<thread{k}>> round{j}")]
                assert len(hist.search("walrus")) == 1
                if j % 5 == 4:
                    idx.close()  # the others' next call opens it again
        except Exception as ex:  # noqa: BLE001 - the test reports any failure
            failures.append(f"{type(ex).__name__}: {ex}")

    with MemoryIndex(root, tmp_path / "db") as idx, HistoryIndex(history, tmp_path / "db") as hist:
        threads = [threading.Thread(target=work, args=(k, idx, hist)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


CLOSE_WHILE_SEARCHING = """
import sys, threading
from memsearch import MemoryIndex
idx = MemoryIndex(sys.argv[1], sys.argv[2])
idx.search("walrus")
done = threading.Event()


def closer():
    while not done.is_set():
        idx.close()
thread = threading.Thread(target=closer)
thread.start()
try:
    for _ in range(300):
        assert len(idx.search("walrus", limit=20, reconcile=False)) == 20
finally:
    done.set()
    thread.join()
"""


def test_closing_an_index_while_another_thread_searches_it(root, tmp_path):
    """The connection was closed under the running query: it failed ("Cannot
    operate on a closed database") or the interpreter died of a segmentation
    fault, hence a process of its own."""
    for i in range(20):
        write(root, f"n{i}.md", f"walrus {i}")
    done = subprocess.run([sys.executable, "-c", CLOSE_WHILE_SEARCHING, str(root), str(tmp_path / "db")],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.slow
def test_two_processes_query_and_reconcile_without_lock_errors(root, tmp_path):
    for i in range(50):
        write(root, f"n{i}.md", f"walrus {i}")
    db = tmp_path / "db"
    ctx = multiprocessing.get_context("spawn")
    errors = ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(str(root), str(db), 3.0, errors)) for _ in range(2)]
    for p in procs:
        p.start()
    import time

    end = time.time() + 3.0
    i = 0
    while time.time() < end:
        write(root, f"n{i % 50}.md", f"walrus edited {i}")
        i += 1
        time.sleep(0.005)
    for p in procs:
        p.join(30)
    assert all(p.exitcode == 0 for p in procs)
    assert errors.empty(), errors.get()


@pytest.mark.parametrize("explicit", [False, True])
def test_database_missing_a_column_its_migrations_promise_is_rebuilt(tree, tmp_path, explicit, caplog):
    """A development build's schema (a column named otherwise, migrations
    recorded as done) would fail every query with "no such column"."""
    import sqlite3

    path = tmp_path / "index.db" if explicit else None
    with MemoryIndex(tree, path) as idx:
        idx.reconcile()
        db = idx.db_path
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE memory_fts RENAME COLUMN racy TO indexed_ns")
    conn.commit()
    conn.close()
    with caplog.at_level(logging.WARNING, logger="memsearch"):
        with MemoryIndex(tree, path) as idx:
            assert idx.search("pgbouncer")[0].path == "projects/shop/memory-db.md"
    assert any("no column racy" in r.getMessage() and "rebuilding" in r.getMessage() for r in caplog.records)
    assert [p.name for p in db.parent.iterdir() if ".bad-" in p.name and p.name.startswith(db.name)
            and not p.name.endswith(("-wal", "-shm"))]


# -- whose file is it: decided before anything is written (issue 14, item 11) -------

def _sqlite(path, *statements, wal=False):
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    for statement in statements:
        conn.execute(statement)
    conn.close()


def _memsearch_schema(path, version_offset=0):
    """An index as memsearch 0001-latest left it before the mark, optionally
    claiming a newer schema (as a development build with one more migration)."""
    import sqlite3

    from memsearch import migrate

    conn = sqlite3.connect(path, isolation_level=None)
    migrate.migrate(conn)
    if version_offset:
        newer = migrate.latest_version() + version_offset
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, 'from_the_future')", (newer,))
        conn.execute(f"PRAGMA user_version = {newer}")
    conn.close()


def _foreign(kind, path):
    if kind == "view only":
        _sqlite(path, "CREATE VIEW v AS SELECT 1 AS x")
    elif kind == "user_version 7, no tables":
        _sqlite(path, "PRAGMA user_version = 7")
    elif kind == "its own memory_fts":
        _sqlite(path, "CREATE VIRTUAL TABLE memory_fts USING fts5(body)", "INSERT INTO memory_fts VALUES ('mine')")
    elif kind == "another program's, in WAL mode":
        _sqlite(path, "CREATE TABLE notes (x)", "INSERT INTO notes VALUES (1)", wal=True)
    elif kind == "another application_id":
        _sqlite(path, "PRAGMA application_id = 42", "CREATE TABLE memory_fts (x)")
    elif kind == "not SQLite":
        path.write_text("my own notes, not an index\n" * 50)
    elif kind == "pre-mark memsearch, newer schema, rollback mode":
        _memsearch_schema(path, version_offset=1)
    elif kind == "marked memsearch, newer schema":
        with MemoryIndex(path.parent, path) as idx:
            idx.conn.execute(f"PRAGMA user_version = {idx.status()['schema_version'] + 1}")
        _sqlite(path, "PRAGMA journal_mode = DELETE")


def _fingerprint(folder):
    """Bytes and mtime of every file in folder: what "untouched" means."""
    import hashlib

    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.iterdir()) if p.is_file()}


FOREIGN = ["view only", "user_version 7, no tables", "its own memory_fts", "another program's, in WAL mode",
           "another application_id", "not SQLite", "pre-mark memsearch, newer schema, rollback mode",
           "marked memsearch, newer schema"]


@pytest.mark.parametrize("kind", FOREIGN)
def test_a_named_file_that_is_not_our_index_is_refused_byte_identical(tree, tmp_path, kind):
    folder = tmp_path / "mine"
    folder.mkdir()
    db = folder / "named.db"
    _foreign(kind, db)
    before = _fingerprint(folder)
    for command in (["query", "walrus"], ["index"], ["status"], ["doctor"], ["doctor", "--fix"]):
        r = cli(*command, "--root", str(tree), "--db", str(db))
        assert r.exit_code != 0, (command, r.output)
        assert _fingerprint(folder) == before, command  # not a byte, not an mtime, no -wal or -journal left
    r = cli("query", "walrus", "--root", str(tree), "--db", str(db))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("Error: "), r.stderr
    assert "Traceback" not in r.stderr and "already exists" not in r.stderr


@pytest.mark.slow
def test_refused_files_over_the_installed_script(tree, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for kind in FOREIGN:
        _foreign(kind, folder / f"{FOREIGN.index(kind)}.db")
    before = _fingerprint(folder)
    for db in sorted(folder.iterdir()):
        r = run_memsearch("query", "walrus", "--root", tree, "--db", db, timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("Error: "), r.stderr
    assert _fingerprint(folder) == before


@pytest.mark.parametrize("special", ["/dev/null", "fifo"])
def test_a_db_that_is_not_a_regular_file_is_a_one_line_error(tree, tmp_path, special):
    path = special
    if special == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    r = cli("query", "pgbouncer", "--root", str(tree), "--db", path)
    assert r.exit_code == 2 and r.stderr == f"Error: the index path {path} is not a regular file; use --db to name" \
                                            " an index file\n"
    with MemoryIndex(tree, path) as idx:
        with pytest.raises(DatabaseError, match="not a regular file"):
            idx.search("pgbouncer")


def test_a_db_path_no_file_system_can_hold_is_a_memsearch_error(tree, tmp_path):
    """A NUL byte (every os call raises ValueError) or thousands of folders to
    make (os.makedirs recurses) raised out of the library unconverted."""
    from memsearch import InvalidArgument
    from memsearch.doctor import diagnose

    with MemoryIndex(tree, str(tmp_path / "a\0b.db")) as idx:
        with pytest.raises(InvalidArgument, match="NUL"):
            idx.search("pgbouncer")
        assert not diagnose(idx).ok
    with MemoryIndex(tree, str(tmp_path) + "/d" * 3000 + "/x.db") as idx:
        with pytest.raises(DatabaseError, match="cannot create the index directory"):
            idx.search("pgbouncer")


def _application_id(db):
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA application_id").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("start", ["missing", "empty file"])
def test_a_new_index_carries_the_mark(tree, tmp_path, start):
    from memsearch.db import APPLICATION_ID

    db = tmp_path / "index.db"
    if start == "empty file":
        db.write_bytes(b"")
    with MemoryIndex(tree, db) as idx:
        assert idx.search("pgbouncer")
    assert _application_id(db) == APPLICATION_ID == 0x6D656D73


def test_an_index_from_before_the_mark_gets_it_without_a_rebuild(tree, tmp_path):
    from memsearch.db import APPLICATION_ID

    db = tmp_path / "index.db"
    with MemoryIndex(tree, db) as idx:
        idx.reconcile()
    _sqlite(db, "PRAGMA application_id = 0")  # as every index was before the mark
    with MemoryIndex(tree, db) as idx:
        # Rows are still there: found without reading the files again.
        assert [h.path for h in idx.search("pgbouncer", reconcile=False)] == ["projects/shop/memory-db.md"]
    assert _application_id(db) == APPLICATION_ID
    assert not [p for p in tmp_path.iterdir() if ".bad-" in p.name]


def test_a_damaged_index_with_the_mark_is_set_aside_even_when_named(tree, tmp_path, caplog):
    """Its own tables half gone: without the mark it would look like another
    program's database and be refused for ever."""
    db = tmp_path / "index.db"
    with MemoryIndex(tree, db) as idx:
        idx.reconcile()
    _sqlite(db, "DROP TABLE memory_fts_idx", "DROP TABLE memory_fts")
    before = _fingerprint(tmp_path)["index.db"]
    with caplog.at_level(logging.WARNING, logger="memsearch"):
        with MemoryIndex(tree, db) as idx:
            assert [h.path for h in idx.search("pgbouncer")] == ["projects/shop/memory-db.md"]
    assert any("rebuilding" in r.getMessage() for r in caplog.records)
    kept = [p for p in tmp_path.iterdir() if ".bad-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1 and _fingerprint(tmp_path)[kept[0].name][0] == before[0]  # kept as it was


def test_a_header_only_index_with_the_mark_is_set_aside_even_when_named(tree, tmp_path):
    """Truncated after its header: SQLite calls it malformed; the header's
    mark says it is ours."""
    db = tmp_path / "index.db"
    with MemoryIndex(tree, db) as idx:
        idx.reconcile()
    _sqlite(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    db.write_bytes(db.read_bytes()[:1000])
    with MemoryIndex(tree, db) as idx:
        assert [h.path for h in idx.search("pgbouncer")] == ["projects/shop/memory-db.md"]
    assert len([p for p in tmp_path.iterdir() if ".bad-" in p.name]) == 1


@pytest.mark.parametrize("kind", ["its own memory_fts", "view only", "not SQLite"])
def test_a_foreign_file_in_the_cache_folder_is_set_aside_intact(tree, kind):
    """The cache folder is memsearch's own: what is there and is not an
    index is moved aside unchanged (never written), and the index rebuilt."""
    db = MemoryIndex(tree).db_path
    db.parent.mkdir(parents=True, exist_ok=True)
    _foreign(kind, db)
    before = _fingerprint(db.parent)[db.name]
    with MemoryIndex(tree) as idx:
        assert [h.path for h in idx.search("pgbouncer")] == ["projects/shop/memory-db.md"]
    kept = [p for p in db.parent.iterdir() if ".bad-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1 and _fingerprint(db.parent)[kept[0].name] == before


@pytest.mark.parametrize("kind", ["link to an empty memory file", "link to no file yet", "hard link", "fifo",
                                  "folder"])
def test_what_is_no_file_of_its_own_in_the_cache_folder_is_set_aside_unfollowed(tree, kind):
    """A link at the index's default path, to an empty memory file or to a name under the root, had the index
    written there (files under the roots are never written), by `doctor` too; a FIFO or a folder failed every query
    for good. Each is set aside, never followed, and the index rebuilt, by a query or by `doctor --fix`."""
    from memsearch.doctor import diagnose

    db = MemoryIndex(tree).db_path
    db.parent.mkdir(parents=True, exist_ok=True)
    for fix in (False, True):
        target = tree / f"projects/shop/empty-{fix}.md"
        for path in (db, *db.parent.glob(f"{db.name}-*")) if fix else ():  # (the index the query built)
            path.unlink()
        if kind == "fifo":
            os.mkfifo(db)
        elif kind == "folder":
            db.mkdir()
        elif kind == "link to no file yet":
            db.symlink_to(target)
        else:
            target.touch()
            (os.link if kind == "hard link" else os.symlink)(target, db)
        before = _fingerprint(tree / "projects/shop")
        with MemoryIndex(tree) as idx:
            report = diagnose(idx, fix=fix)
            assert [(c.name, c.ok, c.remedy) for c in report.found] == [("database", False, "set-aside")], report
            assert report.ok == fix, report.remaining
            assert [h.path for h in idx.search("pgbouncer")] == ["projects/shop/memory-db.md"]
        assert _fingerprint(tree / "projects/shop") == before and db.is_file() and not db.is_symlink()
        assert bad_copies(db)


@pytest.mark.parametrize("side", ["-wal", "-shm"])
@pytest.mark.parametrize("kind", ["link to a memory file", "link to no file", "folder"])
def test_a_side_file_that_is_no_file_of_its_own_is_set_aside(tree, side, kind):
    """A -wal or -shm beside the default index that is a link or a folder: SQLite refuses it, and every query
    failed ("unable to open database file") until it was removed, `doctor --fix` included."""
    from memsearch.doctor import diagnose

    db = MemoryIndex(tree).db_path
    db.parent.mkdir(parents=True)
    for fix in (False, True):  # (no index yet, then one built)
        Path(f"{db}{side}").unlink(missing_ok=True)  # (a closed index leaves none)
        if kind == "folder":
            Path(f"{db}{side}").mkdir()
        else:
            os.symlink(tree / ("README.md" if kind == "link to a memory file" else "gone.md"), f"{db}{side}")
        write(tree, f"projects/shop/new-{fix}.md", "pgbouncer pools connections\n")  # a query has a row to write
        before = _fingerprint(tree)
        with MemoryIndex(tree) as idx:
            if fix:
                assert diagnose(idx, fix=True).ok
            assert f"projects/shop/new-{fix}.md" in [h.path for h in idx.search("pgbouncer")]
        assert _fingerprint(tree) == before and not os.path.islink(f"{db}{side}") and not os.path.isdir(f"{db}{side}")


def test_a_damaged_index_another_process_rebuilt_meanwhile_is_not_set_aside_again(tree, tmp_path, monkeypatch):
    """Several processes open one damaged index at once: the first sets it
    aside and builds a new one; the others, which found the damage before
    that, must not set the new index aside too (its builder's connection then
    failed: "attempt to write a readonly database", one query in two)."""
    from memsearch import db as db_mod

    db = tmp_path / "index.db"
    db.write_bytes(b"SQLite format 3\0" + os.urandom(4096))
    real = db_mod._open_checked
    first = []

    def damage_found_then_rebuilt_by_another(path):
        if first:
            return real(path)
        first.append(path)
        # What the other process does meanwhile: set the file aside, build a new index.
        os.replace(db, tmp_path / "index.db.bad-other")
        other = MemoryIndex(tree, db)
        other.reconcile()
        first.append(other)
        raise db_mod.DatabaseCorrupt(f"the index {path} is damaged (database disk image is malformed)")

    monkeypatch.setattr(db_mod, "_open_checked", damage_found_then_rebuilt_by_another)
    with MemoryIndex(tree, db) as idx:
        assert [h.path for h in idx.search("pgbouncer")] == ["projects/shop/memory-db.md"]
    other = first[1]
    write(tree, "global/user/new.md", "a zeppelin arrives\n")
    assert [h.path for h in other.search("zeppelin")] == ["global/user/new.md"]  # its index is still in place
    other.close()
    assert [p.name for p in tmp_path.iterdir() if ".bad-" in p.name] == ["index.db.bad-other"]


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_NOFILE is POSIX")
def test_too_few_file_descriptors_is_one_line_never_a_traceback(tree, tmp_path):
    """`memsearch index` under ever lower `ulimit -n`: each run either works or
    fails with one `Error:` line, exit 2. Reading the schema migrations out of
    descriptors was a traceback (OSError: Too many open files)."""
    import resource

    def capped(n):
        return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))

    # Below the limit at which the interpreter can import what memsearch needs, nothing of ours ran.
    imports = "import sqlite3, click, memsearch.cli, memsearch.index, memsearch.reconcile, memsearch.migrate"
    failed = []
    for n in range(4, 16):
        if subprocess.run([sys.executable, "-c", imports], capture_output=True, preexec_fn=capped(n)).returncode:
            continue
        db = tmp_path / f"index-{n}.db"
        r = subprocess.run([memsearch_exe(), "index", "--root", str(tree), "--db", str(db)],
                           capture_output=True, text=True, preexec_fn=capped(n))
        assert "Traceback" not in r.stderr, (n, r.stderr)
        if r.returncode:
            assert r.returncode == 2 and r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, (n, r.stderr)
            failed.append(n)
        else:
            break  # enough descriptors from here on
    assert failed, "no limit low enough to fail: the test tested nothing"
    assert r.returncode == 0, "no limit high enough to build the index"


@pytest.mark.parametrize("command", ["index", "query"])
def test_out_of_memory_is_one_line_and_the_next_run_builds_the_index(tmp_path, command):
    """SQLite out of memory mid-build (here its heap capped with PRAGMA
    hard_heap_limit, as `ulimit -v` caps it on large files): one `Error:`
    line, exit 2, and a run with memory builds the index. It was a
    MemoryError traceback, exit 1 (`memsearch query`'s "no hits")."""
    root = tmp_path / "memory"
    words = " ".join(f"w{i}x{i * 7919 % 10007}" for i in range(60_000))
    for n in range(3):
        write(root, f"global/g/big{n}.md", f"{words} needle{n}\n")
    db = tmp_path / "index.db"
    args = [command, *(["needle1"] if command == "query" else []), "--root", str(root), "--db", str(db)]
    capped = ("import sqlite3, sys; sqlite3.connect(':memory:').execute('PRAGMA hard_heap_limit = 2000000');"
              "from memsearch.entry import entry; sys.argv[0] = 'memsearch'; entry()")
    r = subprocess.run([sys.executable, "-c", capped, *args], capture_output=True, text=True)
    assert (r.returncode, r.stderr.count("\n")) == (2, 1), r.stderr
    assert r.stderr.startswith("Error: out of memory")
    r = subprocess.run([memsearch_exe(), "query", "needle1", "--root", str(root), "--db", str(db)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "global/g/big1.md" in r.stdout, r.stderr
