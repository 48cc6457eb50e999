import contextlib
import sqlite3

import pytest
import sqlite_utils

from memsearch import MemoryIndex, SchemaTooNew
from memsearch import migrate

from conftest import schema_one_index


def test_schema_tables_columns_and_triggers(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
    # sqlite-utils reads the schema as its own FTS support would have written it.
    with contextlib.closing(sqlite_utils.Database(tmp_path / "db")) as db:
        assert {"memory_fts", "memory_fts_idx", "memory_roots", "schema_migrations"} <= set(db.table_names())
        assert {"id", "path", "scope", "scope_id", "type", "body", "size", "mtime_ns", "ctime_ns", "device", "inode"} <= set(db["memory_fts"].columns_dict)
        fts = db["memory_fts_idx"].schema  # external content over memory_fts
        assert ("content = 'memory_fts'" in fts or "content='memory_fts'" in fts) and "content_rowid" in fts
        triggers = db.triggers_dict
        assert {"memory_fts_ai", "memory_fts_ad", "memory_fts_au"} <= set(triggers)
        assert "'delete', old.id" in triggers["memory_fts_ad"]
        assert "'delete', old.id" in triggers["memory_fts_au"]
        versions = [row["version"] for row in db["schema_migrations"].rows_where(order_by="version")]
        assert versions == [m[0] for m in migrate.available()]
        assert db.journal_mode == "wal"
        # The external-content index agrees with its content table.
        db.execute("INSERT INTO memory_fts_idx(memory_fts_idx) VALUES ('integrity-check')")


def test_triggers_keep_index_in_step_through_updates_and_deletes(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
        for i in range(5):
            (tree / "README.md").write_text(f"version {i} of the readme", encoding="utf-8")
            idx.reconcile()
        (tree / "sessions/s1/notes.md").unlink()
        idx.reconcile()
        conn = idx.conn
        conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx, rank) VALUES ('integrity-check', 1)")
        assert conn.execute("SELECT count(*) FROM memory_fts_idx WHERE memory_fts_idx MATCH 'version'").fetchone()[0] == 1
        assert idx.search("scratch") == []


def test_migrations_are_shipped_and_ordered():
    found = migrate.available()
    assert found[0][0] == 1 and found[0][1] == "initial"
    assert [v for v, _, _ in found] == sorted({v for v, _, _ in found})


def test_older_database_is_upgraded(tree, tmp_path):
    db = schema_one_index(tmp_path / "db")
    with MemoryIndex(tree, db) as idx:
        assert idx.status()["schema_version"] == migrate.latest_version()
        assert idx.search("pgbouncer")


def test_newer_explicit_database_is_refused_untouched(tree, tmp_path):
    db = tmp_path / "db"
    with MemoryIndex(tree, db) as idx:
        idx.reconcile()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {migrate.latest_version() + 1}")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    with MemoryIndex(tree, db) as idx:
        with pytest.raises(SchemaTooNew, match="newer"):
            idx.search("pgbouncer")
    assert db.read_bytes() == before


def test_split_statements_keeps_trigger_bodies_whole():
    script = "-- c;\nCREATE TABLE a(x);\nCREATE TRIGGER t AFTER INSERT ON a BEGIN\n SELECT 1;\n SELECT 2;\nEND;\n"
    parts = migrate.split_statements(script)
    assert len(parts) == 2 and parts[1].endswith("END;")


def test_bulk_build_leaves_triggers_and_a_consistent_index(root, tmp_path):
    from conftest import write

    for i in range(1200):
        write(root, f"n/{i}.md", f"note {i} word{i}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert len(idx.reconcile().added) == 1200  # large cold batch: the bulk 'rebuild' path
        conn = idx.conn
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
        assert {"memory_fts_ai", "memory_fts_ad", "memory_fts_au"} <= names
        conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx, rank) VALUES ('integrity-check', 1)")
        # Row-by-row updates after it still go through the triggers.
        write(root, "n/7.md", "rewritten okapi")
        (root / "n" / "8.md").unlink()
        assert [h.path for h in idx.search("okapi")] == ["n/7.md"]
        assert idx.search("word7") == [] and idx.search("word8") == []
        # idx.conn, not conn: the first build's journal switch made a new -wal, and the index may have reopened.
        idx.conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx, rank) VALUES ('integrity-check', 1)")


def test_schema_sql_is_the_schema_the_migrations_build():
    """migrations/schema.sql is for readers; after a new migration write it
    again with: python -c "from memsearch.migrate import schema; print(schema(), end='')" > migrations/schema.sql"""
    shipped = migrate.available()[0][2].parent / "schema.sql"  # beside the migrations, shipped with them
    assert shipped.read_text(encoding="utf-8") == migrate.schema()
    assert migrate.schema().count("CREATE TRIGGER memory_fts_") == 3


def test_the_sync_triggers_survive_a_rebuild_of_the_fts_table(tree, tmp_path):
    """What lets a future migration recreate memory_fts_idx alone: the
    triggers belong to memory_fts, so dropping the FTS table keeps them."""
    with MemoryIndex(tree, tmp_path / "index.db") as idx:
        idx.reconcile()
        conn = idx.conn
        triggers = lambda: sorted(r[0] for r in conn.execute(  # noqa: E731
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memory_fts'"))
        before = triggers()
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_fts_idx'").fetchone()[0]
        conn.execute("DROP TABLE memory_fts_idx")
        conn.execute(sql)
        conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx) VALUES ('rebuild')")
        assert triggers() == before == ["memory_fts_ad", "memory_fts_ai", "memory_fts_au"]
        assert [h.path for h in idx.search("pgbouncer", reconcile=False)] == ["projects/shop/memory-db.md"]
