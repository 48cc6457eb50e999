import logging
import multiprocessing
import os

import pytest

from conftest import write
from memsearch import DatabaseError, MemoryIndex
from memsearch.settings import default_db_path


def test_default_database_is_per_root_in_the_cache_dir(tmp_path, isolated_home):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    write(a, "x.md", "alpha")
    write(b, "x.md", "beta")
    with MemoryIndex(a) as ia, MemoryIndex(b) as ib:
        assert ia.db_path != ib.db_path
        assert str(ia.db_path).startswith(str(isolated_home / "cache" / "memsearch"))
        assert ia.search("alpha") and not ib.search("alpha")
    assert default_db_path(a) == default_db_path(str(a) + "/")


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


def test_unwritable_database_location_is_a_clear_error(tree, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    with MemoryIndex(tree, blocker / "sub" / "db") as idx:
        with pytest.raises(DatabaseError, match="cannot create"):
            idx.search("pgbouncer")


def _hammer(root, db, seconds, errors):
    import time

    end = time.time() + seconds
    try:
        with MemoryIndex(root, db) as idx:
            while time.time() < end:
                idx.search("walrus")
    except Exception as ex:  # noqa: BLE001 - the test reports any failure
        errors.put(repr(ex))


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
