import contextlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from conftest import bad_copies, cli, damage_pages, schema_one_index, unwritable, write
from memsearch import MemoryIndex
from memsearch.doctor import diagnose
from memsearch.db import default_db_file


def doctor(*args):
    return cli("doctor", *args)


def built(root, db=None):
    with MemoryIndex(root, db) as idx:
        idx.reconcile()
        return idx.db_path


def sql(db, *statements):
    conn = sqlite3.connect(db)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def test_a_healthy_index_and_one_not_built_yet(tree, tmp_path):
    r = doctor("--root", str(tree), "--db", str(tmp_path / "db"))
    assert r.exit_code == 0 and "not built yet" in r.stdout and r.stdout.rstrip().endswith("healthy")
    assert not (tmp_path / "db").exists()  # checking never builds
    r = doctor("--root", str(tree), "--db", str(tmp_path / "new" / "folder" / "db"))
    assert r.exit_code == 0 and not (tmp_path / "new").exists()  # nor leaves the folders it tried it in
    built(tree, tmp_path / "db")
    r = doctor("--root", str(tree), "--db", str(tmp_path / "db"))
    assert r.exit_code == 0, r.stdout
    assert [line.split()[0] for line in r.stdout.splitlines()[1:5]] == ["ok"] * 4
    data = json.loads(doctor("--root", str(tree), "--db", str(tmp_path / "db"), "--json").stdout)
    assert data["ok"] and [c["name"] for c in data["found"]] == ["database", "sqlite", "fts5", "files", "query"]


def test_rows_out_of_step_with_the_files(tree, tmp_path):
    db = built(tree, tmp_path / "db")
    (tree / "README.md").unlink()
    write(tree, "projects/shop/memory-new.md", "new")
    write(tree, "sessions/s1/notes.md", "changed and longer than before")
    r = doctor("--root", str(tree), "--db", str(db))
    assert r.exit_code == 1
    assert "1 rows whose file is gone (README.md)" in r.stdout
    assert "1 files missing from the index (projects/shop/memory-new.md)" in r.stdout
    assert "1 rows out of date (sessions/s1/notes.md)" in r.stdout
    r = doctor("--root", str(tree), "--db", str(db), "--fix")
    assert r.exit_code == 0 and "fixed   reconciled" in r.stdout
    assert doctor("--root", str(tree), "--db", str(db)).exit_code == 0


def test_files_the_indexer_skips_are_said_not_called_missing(tree, tmp_path):
    """A binary or UTF-16 .md has no row by design: doctor called it "missing from the index" (exit 1)
    and --fix said it had fixed what stayed as it was. They are notes now; the index is healthy."""
    (tree / "global/user/image.md").write_bytes(b"\x89PNG\r\n\x00\x00 binary")
    (tree / "global/user/wide.md").write_bytes("\ufeffnotes".encode("utf-16"))
    built(tree, tmp_path / "db")
    r = doctor("--root", str(tree), "--db", str(tmp_path / "db"))
    assert r.exit_code == 0 and r.stdout.rstrip().endswith("healthy"), r.stdout
    assert "missing" not in r.stdout and "2 file(s) left out of the index" in r.stdout
    assert "binary file" in r.stdout and "UTF-16" in r.stdout
    r = doctor("--root", str(tree), "--db", str(tmp_path / "db"), "--fix")
    assert r.exit_code == 0 and "fixed" not in r.stdout.lower()


def test_a_full_text_index_out_of_step_with_its_content(tree, tmp_path):
    db = built(tree, tmp_path / "db")
    sql(db, "INSERT INTO memory_fts_idx(memory_fts_idx) VALUES('delete-all')")  # postings gone, rows kept
    with MemoryIndex(tree, db) as idx:
        assert idx.search("pgbouncer") == []  # the silent failure doctor exists for
    r = doctor("--root", str(tree), "--db", str(db))
    assert r.exit_code == 1 and "PROBLEM fts5" in r.stdout
    r = doctor("--root", str(tree), "--db", str(db), "--fix")
    assert r.exit_code == 0 and "FTS5 'rebuild'" in r.stdout
    with MemoryIndex(tree, db) as idx:
        assert idx.search("pgbouncer")[0].path == "projects/shop/memory-db.md"


def test_a_missing_trigger_is_found_and_the_index_rebuilt(tree, tmp_path):
    db = built(tree, tmp_path / "db")
    sql(db, "DROP TRIGGER memory_fts_au")
    r = doctor("--root", str(tree), "--db", str(db))
    assert r.exit_code == 1 and "trigger memory_fts_au" in r.stdout
    r = doctor("--root", str(tree), "--db", str(db), "--fix")
    assert r.exit_code == 0 and len(bad_copies(db)) == 1
    assert "kept aside" in r.stdout  # the note about the copy


def test_an_index_of_an_older_schema_is_checked_as_migrated(tree, tmp_path):
    """The files check reads columns later migrations added (frontmatter_error
    came with 0002): on an index of schema 1 doctor was a traceback."""
    from memsearch import migrate

    db = schema_one_index(tmp_path / "db")
    r = doctor("--root", str(tree), "--db", str(db))
    assert r.exit_code == 1 and f"schema version 1; migrated to {migrate.latest_version()}" in r.stdout
    assert "files missing from the index" in r.stdout  # 0002 dropped the rows: the next query reads the files
    assert doctor("--root", str(tree), "--db", str(db), "--fix").exit_code == 0


def test_a_kept_copy_deleted_while_doctor_lists_them_is_not_counted(tree, tmp_path, monkeypatch):
    from memsearch import doctor as doctor_mod

    db = built(tree, tmp_path / "db")
    for n in (1, 2):
        (tmp_path / f"db.bad-{n}").write_bytes(b"x" * 4096)
    real = os.scandir

    def scandir(folder):  # the listing of the index's folder is taken, then someone deletes one copy
        if os.fspath(folder) != str(tmp_path):
            return real(folder)
        entries = list(real(folder))
        (tmp_path / "db.bad-1").unlink(missing_ok=True)
        return contextlib.nullcontext(entries)

    monkeypatch.setattr(doctor_mod.os, "scandir", scandir)
    with MemoryIndex(tree, db) as idx:
        report = diagnose(idx)
    assert report.notes and report.notes[0].startswith("1 damaged index file(s) kept aside")


def test_a_kept_copy_is_counted_once_with_its_wal_files(tree, tmp_path):
    """A copy set aside with its -wal and -shm counted as three."""
    db = built(tree, tmp_path / "db")
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"db.bad-1{suffix}").write_bytes(b"x" * 4096)
    with MemoryIndex(tree, db) as idx:
        assert diagnose(idx).notes[0].startswith("1 damaged index file(s) kept aside")


def test_the_report_shows_the_checks_its_verdict_counts():
    from memsearch.doctor import Check, DoctorReport, format_report

    # --fix with nothing it could fix: the checks ran twice, and the second run is the one that counts
    report = DoctorReport("db", found=(Check("fts5", False, "out of step"),), fixed=(),
                          remaining=(Check("fts5", True, "in step"),))
    text = format_report(report)
    assert "ok      fts5: in step" in text and "out of step" not in text and text.endswith("healthy")


def test_latent_page_damage_no_query_touches(big_tree, tmp_path):
    db = built(big_tree, tmp_path / "db")
    damage_pages(db, "sqlite_autoindex_memory_fts_1")
    with MemoryIndex(big_tree, db) as idx:
        assert idx.search("word42", reconcile=False)  # queries still work: nothing else would notice
    before = db.read_bytes()
    r = doctor("--root", str(big_tree), "--db", str(db))
    assert r.exit_code == 1 and "PROBLEM sqlite: integrity_check" in r.stdout
    assert db.read_bytes() == before  # checking changes nothing
    r = doctor("--root", str(big_tree), "--db", str(db), "--fix")
    assert r.exit_code == 0, r.stdout
    assert len(bad_copies(db)) == 1 and r.stderr.count("warning:") == 1


def test_an_index_another_process_rebuilt_while_doctor_checked_is_not_set_aside(big_tree, tmp_path, monkeypatch):
    """doctor --fix set aside whatever file was at the path when it came to
    fix: a query that had meanwhile set the damaged index aside and rebuilt
    it lost its new index (a needless copy, and a rebuild in each process)."""
    from memsearch import doctor as doctor_mod

    db = built(big_tree, tmp_path / "db")
    damage_pages(db, "sqlite_autoindex_memory_fts_1")
    real = doctor_mod._run_checks
    other = []

    def checks_then_another_process_rebuilds(index):
        found = real(index)
        if not other:  # what a query does meanwhile: set the damaged file aside, build a new index
            os.replace(db, tmp_path / "db.bad-other")
            other.append(MemoryIndex(big_tree, db))
            other[0].reconcile()
        return found

    monkeypatch.setattr(doctor_mod, "_run_checks", checks_then_another_process_rebuilds)
    with MemoryIndex(big_tree, db) as idx:
        report = diagnose(idx, fix=True)
    assert report.ok, report
    write(big_tree, "global/user/new.md", "a zeppelin arrives\n")
    assert [h.path for h in other[0].search("zeppelin")] == ["global/user/new.md"]  # its index is still in place
    other[0].close()
    assert [p.name for p in bad_copies(db)] == ["db.bad-other"]


@pytest.mark.parametrize("damage", ["garbage", "newer"])
def test_unusable_cache_is_set_aside_but_a_named_file_is_never_touched(tree, tmp_path, damage):
    cache = built(tree)
    named = tmp_path / "named.db"
    built(tree, named)
    for db in (cache, named):
        sql(db, "PRAGMA wal_checkpoint(TRUNCATE)")
        if damage == "garbage":
            db.write_bytes(os.urandom(8192))
        else:
            sql(db, "PRAGMA user_version = 999")
    before = named.read_bytes()
    r = doctor("--root", str(tree), "--db", str(named), "--fix")
    assert r.exit_code == 1 and "does not touch a file named with --db" in r.stdout
    assert named.read_bytes() == before and not bad_copies(named)
    r = doctor("--root", str(tree), "--fix")
    assert r.exit_code == 0 and len(bad_copies(cache)) == 1, r.stdout
    assert cache == Path(default_db_file(tree))


def test_library_report(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
        (tree / "README.md").unlink()
        report = diagnose(idx)
        assert not report.ok and [c.name for c in report.problems] == ["files"]
        assert report.problems[0].remedy == "reconcile"
        fixed = diagnose(idx, fix=True)
        assert fixed.ok and fixed.fixed and [c.name for c in fixed.found if not c.ok] == ["files"]
        assert idx.search("pgbouncer")  # the index is still usable afterwards


# -- the real open and query path (issue 14, item 12) ----------------------------------

@pytest.mark.parametrize("fix", [False, True])
def test_an_index_no_query_can_create_is_not_healthy(tree, tmp_path, fix):
    folder = tmp_path / "frozen"
    folder.mkdir()
    db = folder / "index.db"
    with unwritable(folder):
        q = cli("query", "pgbouncer", "--root", str(tree), "--db", str(db))
        assert q.exit_code == 2 and "cannot open the index" in q.stderr
        r = doctor("--root", str(tree), "--db", str(db), *(["--fix"] if fix else []))
    assert r.exit_code == 1, r.stdout
    assert "PROBLEM query: the index cannot be created: cannot open the index " + str(db) + ":" in r.stdout
    assert "healthy" not in r.stdout and "doctor --fix" not in r.stdout  # nothing it could repair
    assert sorted(os.listdir(folder)) == []  # the scratch index it tried is gone


def test_an_index_file_queries_cannot_write_is_not_healthy(tree, tmp_path):
    db = built(tree, tmp_path / "db")
    write(tree, "global/user/new.md", "a walrus note the next query must add")
    with unwritable(db):
        q = cli("query", "walrus", "--root", str(tree), "--db", str(db))
        r = doctor("--root", str(tree), "--db", str(db))
    assert q.exit_code == 2 and "readonly" in q.stderr
    assert r.exit_code == 1 and "PROBLEM query: a query would fail: cannot write the index" in r.stdout, r.stdout
    assert not bad_copies(db)


def test_a_fix_that_fails_is_reported_as_failed_not_as_fixed(tree, tmp_path):
    """--fix on an index it cannot write: the reconcile it tries fails. That
    was reported as "fixed   a fix failed: ..." (and in --json's "fixed")."""
    db = built(tree, tmp_path / "db")
    write(tree, "global/user/new.md", "a walrus note the fix must add")
    with unwritable(db):
        r = doctor("--root", str(tree), "--db", str(db), "--fix")
        j = doctor("--root", str(tree), "--db", str(db), "--fix", "--json")
    assert r.exit_code == 1 and "\nfailed  a fix: cannot write the index" in r.stdout, r.stdout
    assert "fixed " not in r.stdout and "doctor --fix` repairs" not in r.stdout, r.stdout
    report = json.loads(j.stdout)
    assert report["fixed"] == [] and "cannot write the index" in report["fix_failed"] and not report["ok"]
    healthy = json.loads(doctor("--root", str(tree), "--db", str(db), "--fix", "--json").stdout)
    assert healthy["ok"] and healthy["fix_failed"] is None and healthy["fixed"]


def test_a_database_folder_that_cannot_be_written_is_reported_not_set_aside(tree, tmp_path):
    """Without its -shm file, a WAL index in a frozen folder cannot even be
    read: not damage, so nothing is set aside (and nothing could be)."""
    folder = tmp_path / "frozen"
    folder.mkdir()
    db = built(tree, folder / "index.db")
    assert sorted(os.listdir(folder)) == ["index.db"]
    with unwritable(folder):
        r = doctor("--root", str(tree), "--db", str(db), "--fix")
    assert r.exit_code == 1 and "PROBLEM database: cannot read the index (unable to open database file)" in r.stdout
    assert "set the index aside" not in r.stdout and "a fix failed" not in r.stdout, r.stdout


def test_files_out_of_step_promise_nothing_doctor_has_not_tried(tree, tmp_path):
    db = built(tree, tmp_path / "db")
    write(tree, "global/user/new.md", "new")
    r = doctor("--root", str(tree), "--db", str(db))
    assert r.exit_code == 1 and "next query" not in r.stdout
    assert "ok      query: opened, searched and written (rolled back) as a query does" in r.stdout


def test_file_names_in_the_report_cannot_drive_the_terminal_or_forge_a_line(tree, tmp_path):
    evil = "evil\x1b]0;pwned\x07\nok   all good.md"
    db = built(tree, tmp_path / "db")
    write(tree, evil, "made after the index")
    r = doctor("--root", str(tree), "--db", str(db))
    assert r.exit_code == 1
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert not any(line.startswith("ok   all good") for line in r.stdout.splitlines())
    assert "1 files missing from the index ('evil\\x1b]0;pwned\\x07\\nok   all good.md')" in r.stdout


def test_files_missing_from_the_index_are_read_one_at_a_time(tree, tmp_path):
    """Doctor reads each file missing from the index to tell one the indexer skips: it held every such text at
    once, so a tree written since the last query (files of up to max_file_bytes each) cost it all in memory."""
    import tracemalloc

    db = built(tree, tmp_path / "db")
    for i in range(40):
        write(tree, f"new/{i:02d}.md", f"file{i} " + "lorem ipsum dolor " * 12_000)  # ~200 KB each, 8 MB in all
    with MemoryIndex(tree, db) as idx:
        tracemalloc.start()
        try:
            report = diagnose(idx)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    files = next(c for c in report.found if c.name == "files")
    assert not files.ok and files.detail.startswith("40 files missing from the index")
    assert peak < 3 << 20, peak
