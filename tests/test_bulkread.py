"""A large build reads its files in a second process (memsearch.bulkread).

The tests lower the threshold so a small tree takes that path, and check
that it indexes exactly what reading in-process indexes, skips and reports
the same files, and falls back to reading in-process when the child cannot
start or dies midway.
"""

import contextlib
import sqlite3
import sys

import pytest
from conftest import write

import memsearch.bulkread as bulkread
import memsearch.db as db_mod
import memsearch.reconcile as reconcile_mod
from memsearch import MemoryIndex
from memsearch.prepare import prepare_one


@pytest.fixture
def mixed_tree(tmp_path):
    root = tmp_path / "mem"
    for i in range(40):
        write(root, f"projects/p{i % 4}/fact-{i}.md",
              f"---\nname: fact {i}\ndescription: about topic{i}\ntype: project\n---\nbody word{i} shared\n")
        write(root, f"sessions/s{i % 3}/notes-{i}.md", f"plain note {i} shared okapi{i}\n")
    write(root, "global/g/cjk.md", "部署 docker 服务 到 生产 环境\n")
    write(root, "global/g/bad-yaml.md", "---\nname: [unclosed\n---\nbroken frontmatter body walrus\n")
    write(root, "global/g/latin1.md", b"caf\xe9 invalid utf8 marmot\n")
    write(root, "global/g/binary.md", b"\x00\x01\x02 binary")
    return root


def rows(db) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT path, scope, scope_id, type, name, description, body, frontmatter_error, size, mtime_ns,"
            " body_seg, name_seg, description_seg FROM memory_fts ORDER BY path").fetchall()
    finally:
        conn.close()


def build(root, db):
    with MemoryIndex(root, db) as idx:
        report = idx.reconcile()
        idx.conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx, rank) VALUES ('integrity-check', 1)")
        hits = {q: [h.path for h in idx.search(q)] for q in ("okapi7 word3", "部署", "walrus", "marmot", "topic5")}
    return report, hits


def test_child_process_build_equals_in_process_build(mixed_tree, tmp_path, monkeypatch):
    in_process = build(mixed_tree, tmp_path / "a.db")
    started = []
    real_start = bulkread._start
    monkeypatch.setattr(bulkread, "_start", lambda: started.append(1) or real_start())
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2)
    monkeypatch.setattr(bulkread, "CHUNK", 7)  # several chunks, the last one short
    child = build(mixed_tree, tmp_path / "b.db")
    assert started  # (racy files, written just now, are read again by every search)
    assert rows(tmp_path / "a.db") == rows(tmp_path / "b.db")
    (report_a, hits_a), (report_b, hits_b) = in_process, child
    assert sorted(report_a.added) == sorted(report_b.added) and len(report_b.added) == 83
    assert report_a.skipped == report_b.skipped and [s.path for s in report_b.skipped] == ["global/g/binary.md"]
    assert hits_a == hits_b and hits_b["walrus"] == ["global/g/bad-yaml.md"] and hits_b["部署"] == ["global/g/cjk.md"]


@pytest.mark.parametrize("interpreter", ["no executable", "frozen app"])
def test_no_python_to_run_reads_in_process(mixed_tree, tmp_path, monkeypatch, interpreter):
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2)
    if interpreter == "no executable":
        monkeypatch.setattr(bulkread.sys, "executable", "")
    else:  # PyInstaller and the like: sys.executable is the app, which must not be run with -c
        monkeypatch.setattr(bulkread.sys, "frozen", True, raising=False)
    monkeypatch.setattr(bulkread.subprocess, "Popen", lambda *a, **k: pytest.fail("a child was started"))
    report, hits = build(mixed_tree, tmp_path / "db")
    assert len(report.added) == 83 and hits["marmot"] == ["global/g/latin1.md"]


def test_pipes_that_cannot_grow_change_nothing(mixed_tree, tmp_path, monkeypatch):
    """The pipes are raised to PIPE_BYTES where the system allows; without fcntl (or past the system's
    limit) the child reads all the same."""
    build(mixed_tree, tmp_path / "a.db")
    monkeypatch.setitem(sys.modules, "fcntl", None)  # import fcntl raises ImportError
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2)
    monkeypatch.setattr(bulkread, "CHUNK", 7)
    report, _ = build(mixed_tree, tmp_path / "b.db")
    assert len(report.added) == 83 and rows(tmp_path / "a.db") == rows(tmp_path / "b.db")


@pytest.mark.parametrize("child", [
    "import sys; sys.exit(3)",  # dies before sending anything
    "import sys, pickle; pickle.load(sys.stdin.buffer); sys.stdout.buffer.write(b'garbage')",  # sends junk
    # Sends one good chunk, then dies: the parent reads the rest itself.
    "import sys, pickle; sys.path.insert(0, sys.argv[1]); from memsearch.prepare import prepare_one;"
    " chunk = pickle.load(sys.stdin.buffer);"
    " pickle.dump([prepare_one(*f) for f in chunk], sys.stdout.buffer); sys.stdout.flush(); sys.exit(1)",
    # Answers each chunk short of a file: not paired with the wrong files, read again.
    "import sys, pickle; sys.path.insert(0, sys.argv[1]); from memsearch.prepare import prepare_one\n"
    "while True:\n"
    " chunk = pickle.load(sys.stdin.buffer)\n"
    " pickle.dump([prepare_one(*f) for f in chunk[1:]], sys.stdout.buffer); sys.stdout.flush()",
])
def test_a_failing_child_loses_nothing(mixed_tree, tmp_path, monkeypatch, child):
    build(mixed_tree, tmp_path / "a.db")
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2)
    monkeypatch.setattr(bulkread, "CHUNK", 7)  # the child has several chunks to prepare
    monkeypatch.setattr(bulkread, "_CHILD", child)
    report, hits = build(mixed_tree, tmp_path / "b.db")
    assert len(report.added) == 83
    assert rows(tmp_path / "a.db") == rows(tmp_path / "b.db")


def test_the_child_and_the_parent_share_the_chunks(mixed_tree, monkeypatch):
    from memsearch.walk import walk

    seen = walk(str(mixed_tree), 1 << 20)
    infos = [reconcile_mod.FileInfo(rel, *info) for rel, info in seen.files.items()]
    monkeypatch.setattr(bulkread, "CHUNK", 7)
    monkeypatch.setattr(bulkread, "AHEAD", 2)  # (not every chunk sent to the child at once)
    # A child slow to start: the parent prepares chunks further on meanwhile.
    monkeypatch.setattr(bulkread, "_CHILD", "import time; time.sleep(0.5); " + bulkread._CHILD)
    here = []  # the child's calls are in its own process
    monkeypatch.setattr(bulkread, "prepare_one", lambda *file: here.append(file[0]) or prepare_one(*file))
    results = list(bulkread.prepared(infos, 1 << 20))
    assert results == [(info, prepare_one(info.relpath, info.abspath, 1 << 20)) for info in infos]
    assert here and len(here) == len(set(here))
    assert not {info.relpath for info in infos[:7 * bulkread.AHEAD]} & set(here)  # sent to the child first


def test_stopping_early_leaves_no_child(mixed_tree, monkeypatch):
    from memsearch.walk import walk

    seen = walk(str(mixed_tree), 1 << 20)
    infos = [reconcile_mod.FileInfo(rel, *info) for rel, info in seen.files.items()]
    procs = []
    real_start = bulkread._start
    monkeypatch.setattr(bulkread, "_start", lambda: procs.append(real_start()) or procs[-1])
    monkeypatch.setattr(bulkread, "CHUNK", 3)
    results = bulkread.prepared(infos, 1 << 20)
    first = next(results)
    assert first[0] == infos[0]
    results.close()  # the caller gives up (an error in SQLite, say)
    assert procs and procs[0].poll() is not None  # killed and reaped


def test_bulk_build_puts_fts5_hash_size_back(tmp_path, monkeypatch):
    """The bulk 'rebuild' runs with a large FTS5 hash; the option is stored
    in the index, and later small writes must not hold that much."""
    root = tmp_path / "mem"
    for i in range(30):
        write(root, f"n/{i}.md", f"note {i}")
    monkeypatch.setattr(reconcile_mod, "BULK_MIN", 1)
    seen = []
    real = db_mod.set_hash_size
    monkeypatch.setattr(db_mod, "set_hash_size", lambda conn, fts, size: seen.append(size) or real(conn, fts, size))
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        stored = dict(idx.conn.execute("SELECT k, v FROM memory_fts_idx_config"))
    assert seen == [reconcile_mod.BULK_HASH_BYTES, db_mod.FTS5_HASH_BYTES]
    assert stored.get("hashsize") == db_mod.FTS5_HASH_BYTES


def test_a_first_build_indexes_in_steps_what_one_rebuild_indexes(mixed_tree, tmp_path, monkeypatch):
    """A first build indexes its rows into FTS5 every BULK_STEP rows, beside the reading; a bulk
    rewrite of an index that holds rows still re-indexes it whole. Both index what triggers would."""
    monkeypatch.setattr(reconcile_mod, "BULK_MIN", 10**9)
    _, by_triggers = build(mixed_tree, tmp_path / "a.db")  # each row indexed by its trigger
    monkeypatch.setattr(reconcile_mod, "BULK_MIN", 1)
    steps = []
    real = db_mod.bulk_indexing

    def spied(*args):
        with real(*args) as index_inserted:
            yield lambda: steps.append(1) or index_inserted()

    monkeypatch.setattr(reconcile_mod, "bulk_indexing", contextlib.contextmanager(spied))
    monkeypatch.setattr(reconcile_mod, "BULK_STEP", 10)
    _, stepped = build(mixed_tree, tmp_path / "b.db")  # ('integrity-check' passes: build() runs it)
    assert len(steps) == 9  # 83 rows, 10 a step
    assert rows(tmp_path / "a.db") == rows(tmp_path / "b.db") and stepped == by_triggers
    with MemoryIndex(mixed_tree, tmp_path / "b.db") as idx:
        scores = [(h.path, h.score) for h in idx.search("shared")]
    with MemoryIndex(mixed_tree, tmp_path / "a.db") as idx:
        assert [(h.path, h.score) for h in idx.search("shared")] == scores and len(scores) == 10

    for i in range(40):  # every file changed: a bulk rewrite of an index that holds rows
        write(mixed_tree, f"sessions/s{i % 3}/notes-{i}.md", f"rewritten note {i} capybara{i}\n")
    steps.clear()
    with MemoryIndex(mixed_tree, tmp_path / "b.db") as idx:
        assert len(idx.reconcile().updated) == 40 and not steps
        idx.conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx, rank) VALUES ('integrity-check', 1)")
        assert [h.path for h in idx.search("okapi7")] == [] and [h.path for h in idx.search("capybara7")]


def test_chunks_are_cut_by_their_files_sizes_too(monkeypatch):
    """A chunk is held whole in both processes: past CHUNK_BYTES of files it ends early, and a larger file
    goes alone."""
    from memsearch.fingerprint import Fingerprint

    monkeypatch.setattr(bulkread, "CHUNK", 4)
    monkeypatch.setattr(bulkread, "CHUNK_BYTES", 100)
    sizes = [10, 10, 10, 10, 10, 60, 50, 500, 1, 1]
    infos = [reconcile_mod.FileInfo(f"{i}.md", f"/m/{i}.md", Fingerprint(size, 0, 0, 0, i))
             for i, size in enumerate(sizes)]
    chunks = bulkread._chunks(infos)
    assert [[int(info.relpath[:-3]) for info in chunk] for chunk in chunks] == [[0, 1, 2, 3], [4, 5], [6], [7], [8, 9]]


@pytest.mark.parametrize("through_child", [False, True])
def test_a_build_of_large_files_holds_a_few_at_a_time(tmp_path, monkeypatch, through_child):
    """Neither a step of rows (reconcile.BULK_STEP) nor the chunks in flight and queued hold a tree of large
    files whole (traced by tracemalloc: this process's Python objects)."""
    root = tmp_path / "mem"
    for i in range(96):
        write(root, f"big/{i:02d}.md", f"file{i} " + "lorem ipsum dolor " * 14_000)  # ~250 KB each, 24 MB in all
    monkeypatch.setattr(reconcile_mod, "BULK_MIN", 1)
    monkeypatch.setattr(reconcile_mod, "BULK_STEP", 1000)  # one step for every row
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2 if through_child else 10**9)
    monkeypatch.setattr(bulkread, "CHUNK_BYTES", 1 << 20)
    monkeypatch.setattr(bulkread, "AHEAD", 2)
    monkeypatch.setattr(bulkread, "QUEUED", 2)
    peak = peak_building(root, tmp_path / "db")
    assert peak < 16 << 20, peak  # (held whole: 24 MB of text, and its copies; a step at a time: ~3 MB)


def peak_building(root, db) -> int:
    """The most memory this process's Python objects held while a first build indexed ``root``'s 96 big files."""
    import tracemalloc

    with MemoryIndex(root, db) as idx:
        tracemalloc.start()
        try:
            assert len(idx.reconcile().added) == 96
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert [h.path for h in idx.search("file95", reconcile=False)] == ["big/95.md"]
    return peak


def test_files_grown_since_the_walk_are_not_held_a_chunk_at_a_time(tmp_path, monkeypatch):
    """Chunks are cut by the sizes the walk saw: files written empty and grown to the cap before they are read
    put 128 of them in a chunk, held whole by each process (2,048 files grown to 2 MB: 1.6 GB here). A chunk's
    files are prepared ahead until they make CHUNK_BYTES of text; the others when their turn comes."""
    root = tmp_path / "mem"
    for i in range(96):
        write(root, f"big/{i:02d}.md", "")
    real_walk = reconcile_mod.walk

    def walk_then_grow(*args, **kwargs):
        seen = real_walk(*args, **kwargs)
        for i in range(96):  # ~250 KB each, 24 MB in all, one chunk by the walk's sizes
            write(root, f"big/{i:02d}.md", f"file{i} " + "lorem ipsum dolor " * 14_000)
        return seen

    monkeypatch.setattr(reconcile_mod, "walk", walk_then_grow)
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2)
    peak = peak_building(root, tmp_path / "db")
    assert peak < 16 << 20, peak


def test_the_child_imports_nothing_from_the_working_folder(mixed_tree, tmp_path, monkeypatch):
    """`python -c` looks for modules in the working folder first: a build run inside a checkout holding a
    `pickle.py` ran it in the reader child. The child imports from where the parent does."""
    checkout = tmp_path / "checkout"
    marker = tmp_path / "ran"
    for module in ("pickle", "subprocess", "collections", "memsearch"):
        write(checkout, f"{module}.py", f"open({str(marker)!r}, 'a').write('{module}\\n')\n")
    monkeypatch.chdir(checkout)
    monkeypatch.setattr(reconcile_mod, "BULK_READ_MIN", 2)
    started = []
    real_start = bulkread._start
    monkeypatch.setattr(bulkread, "_start", lambda: started.append(real_start()) or started[-1])
    report, hits = build(mixed_tree, tmp_path / "db")
    assert started and len(report.added) == 83 and hits["marmot"] == ["global/g/latin1.md"]
    assert not marker.exists(), marker.read_text()
