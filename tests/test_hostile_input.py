"""Hostile input: any query text, any file bytes, any file name, huge files,
deep trees and symlink loops. Nothing crashes, nothing hangs, and every
file is either indexed or reported (tests/test_reconcile.py has the common
cases; these are the property-based and extreme ones)."""

import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from conftest import cli, run_memsearch, write
from memsearch import InvalidArgument, MemoryIndex, NoSearchableWords, Root, UnknownFilter, Watcher, build_query
from memsearch.index import SCOPES, TYPES
from memsearch.memory_file import disk_name
from memsearch.tool import call_tool

FAST = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])

# Any code point, lone surrogates included (they arrive from command lines
# with bytes that are not UTF-8).
ANY_CHAR = st.characters(blacklist_categories=())
ANY_TEXT = st.text(ANY_CHAR, max_size=300)


@pytest.fixture(scope="module")
def searchable(tmp_path_factory):
    """A real index (the real schema, tokenizer and query path) to run
    hostile queries against."""
    root = tmp_path_factory.mktemp("hostile-root")
    for i, text in enumerate(["alpha beta gamma", "NEAR AND OR NOT", "café naïve 東京 データ",
                              "col:val x* -y ^z (paren) \"quoted\"", "snake_case_name 42 3.14"]):
        (root / f"n{i}.md").write_text(text, encoding="utf-8")
    db = tmp_path_factory.mktemp("hostile-db") / "db"
    with MemoryIndex(root, db) as idx:
        idx.reconcile()
        yield idx


# -- queries -----------------------------------------------------------------------

@FAST
@given(text=ANY_TEXT)
@example(text="\ud800abc")
@example(text='"' * 50)
@example(text="NEAR(" * 40)
@example(text="a" * 5000)
@example(text="\x00z")
@example(text="*:^-()")
def test_any_text_is_a_valid_fts5_query_or_no_searchable_words(searchable, text):
    """Any text is NoSearchableWords or a query with no lone surrogate that
    the search runs without raising."""
    try:
        fts = build_query(text)
    except NoSearchableWords:
        return
    fts.encode("utf-8")  # no lone surrogates reach SQLite
    searchable.search(text, reconcile=False, limit=5)


@FAST
@given(text=ANY_TEXT, scope=st.one_of(st.none(), st.sampled_from(SCOPES), st.text(ANY_CHAR, max_size=20)),
       kind=st.one_of(st.none(), st.sampled_from(TYPES), st.text(max_size=20)))
@example(text="alpha", scope="\udc80", kind=None)  # a lone surrogate once raised a raw codec error
def test_any_filter_value_is_a_bound_parameter(searchable, text, scope, kind):
    """Any scope, scope id and type: a bound value or a one-line UnknownFilter
    (a scope this index's roots do not give, a type no file of theirs can have, a scope id
    holding a lone surrogate), never a raw error."""
    assume(text.strip())
    surrogate = scope is not None and any("\ud800" <= c <= "\udfff" for c in scope)
    for filters, unknown in (
        ({"scope_id": scope}, surrogate),  # any scope id reaches SQL, bound
        ({"scope": scope, "scope_id": scope, "type": kind},
         surrogate or (scope is not None and scope.lower() not in searchable.layout.scopes())
         or (kind is not None and kind.lower() not in (searchable.layout.types() or TYPES))),
    ):
        try:
            searchable.search("alpha " + text, reconcile=False, **filters)
        except NoSearchableWords:
            return
        except UnknownFilter as ex:  # an error, not an empty answer that reads as "never recorded"
            assert unknown and ("one of" in str(ex) or "lone surrogate" in str(ex)) and "\n" not in str(ex)
            continue
        assert not unknown


@pytest.mark.parametrize("scope_id", [["p"], object(), b"p", 5])
def test_a_scope_id_that_is_no_string_is_a_bad_argument(searchable, scope_id):
    # A list or an object reached SQLite, whose binding error was a DatabaseError naming the index.
    with pytest.raises(InvalidArgument, match="^scope_id must be a string, got "):
        searchable.search("alpha", reconcile=False, scope_id=scope_id)


@pytest.mark.slow
def test_a_huge_query_with_thousands_of_words(searchable):
    text = " ".join(f"w{i}" for i in range(20_000)) + " alpha"
    assert [h.path for h in searchable.search(text, reconcile=False)] == ["n0.md"]


def test_raw_fts5_table_accepts_every_built_query():
    """The same property against a bare FTS5 table (no memsearch code on
    the way): SQLite parses every built query without raising, so a query
    builder change cannot hide behind the search path."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 1')")
    conn.execute("INSERT INTO t VALUES ('alpha beta')")

    @FAST
    @given(text=ANY_TEXT)
    def check(text):
        try:
            conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (build_query(text),)).fetchall()
        except NoSearchableWords:
            pass

    try:
        check()
    finally:
        conn.close()


# -- file contents (frontmatter and all) ----------------------------------------------

FRONTMATTERISH = st.one_of(
    st.binary(max_size=3000),
    st.builds(lambda head, body: b"---\n" + head + b"\n---\n" + body, st.binary(max_size=500), st.binary(max_size=500)),
    st.builds(lambda head, body: ("---\n" + head + "\n---\n" + body).encode("utf-8", "surrogatepass"),
              st.text(max_size=300), st.text(max_size=300)),
    st.sampled_from([
        b"---\n", b"---", b"\xef\xbb\xbf---\nname: x\n---\nbody", b"---\nname: [unclosed\n---\n",
        b"---\n- a list\n- not a mapping\n---\nbody", b"---\nname: !!python/object/apply:os.system [id]\n---\n",
        b"---\n" + b"a: &a [" + b"*a," * 50 + b"]\n---\n", b"---\nname: " + b"[" * 5000 + b"\n---\n",
        b"+++\ntoml = true\n+++\nbody", b"---\r\nname: crlf\r\n---\r\nbody", b"\x00\x01binary",
    ]),
)


@pytest.mark.slow
@SLOW
@given(data=FRONTMATTERISH)
def test_any_bytes_are_indexed_or_reported(data):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "root"
        write(root, "projects/p/note.md", data)
        with MemoryIndex(root, Path(d) / "db") as idx:
            report = idx.reconcile()
            skipped = {s.path for s in report.skipped}
            indexed = {p for (p,) in idx.conn.execute("SELECT path FROM memory_fts")}
            assert (indexed | skipped) == {"projects/p/note.md"} and not (indexed & skipped)
            idx.search("note body name", limit=3)
            idx.status()


# -- file names ------------------------------------------------------------------------

NAME_BYTES = st.binary(min_size=1, max_size=240).filter(lambda b: b"/" not in b and b"\0" not in b
                                                        and not b.startswith(b"."))


@pytest.mark.slow
@SLOW
@given(stem=NAME_BYTES)
@example(stem=b"new\nline")
@example(stem=b"\x1b[31mred")
@example(stem=b"caf\xe9")
@example(stem=b"\xff\xfe")
@example(stem=b"x" * 240)
def test_any_file_name_is_indexed_found_and_removed(stem):
    name = stem + b".md"
    with tempfile.TemporaryDirectory() as d:
        root = os.path.join(os.fsencode(d), b"root")
        os.makedirs(os.path.join(root, b"dir"))
        path = os.path.join(root, b"dir", name)
        with open(path, "wb") as f:
            f.write(b"okapi in a file with an odd name\n")
        with MemoryIndex(os.fsdecode(root), os.path.join(d, "db")) as idx:
            hits = idx.search("okapi")
            assert len(hits) == 1 and hits[0].path.startswith("dir/") and hits[0].path.endswith(".md")
            hits[0].path.encode("utf-8")  # storable, printable as JSON
            r = cli("query", "okapi", "--root", os.fsdecode(root), "--db", os.path.join(d, "db"))
            assert r.exit_code == 0 and "\x1b" not in r.stdout and r.stdout.count("\n") <= 3
            os.unlink(path)
            assert idx.search("okapi") == []


def test_names_that_escape_to_the_same_path_are_both_kept(root, tmp_path):
    """A name with bytes that are not UTF-8 is spelled with \\xNN escapes; a
    real file may already be named with those very characters."""
    raw = os.path.join(os.fsencode(root), b"caf\xe9.md")
    with open(raw, "wb") as f:
        f.write(b"okapi from the latin-1 name")
    write(root, "caf\\xe9.md", "okapi from the literal name")
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        found = idx.search("okapi latin literal", floor=0.0)
    # Both cannot have the one path: the real name keeps it, the other is
    # reported rather than silently hidden behind it.
    assert [h.snippet for h in found] == ["<<okapi>> from the <<literal>> name"]
    assert [(s.path, "escaped" in s.reason) for s in report.skipped] == [("caf\\xe9.md", True)]


def test_project_folders_that_escape_to_the_same_name_are_not_mixed_up(tmp_path):
    """In a claude root, project folders p<ff> and a literal p\\xff both took the paths p\\xff/memory/...:
    each query removed and added rows again, and a hit showed one file's text while memory_read read
    the other. As for files, the real name keeps the path and the other is reported."""
    root = os.path.join(os.fsencode(tmp_path), b"projects")
    for project, text in [(b"p\xff", b"okapi latin byte"), (b"p\\xff", b"okapi literal")]:
        os.makedirs(os.path.join(root, project, b"memory"))
        with open(os.path.join(root, project, b"memory", b"a.md"), "wb") as f:
            f.write(text + b"\n")
    with MemoryIndex(Root("claude", os.fsdecode(root)), tmp_path / "db") as idx:
        report = idx.reconcile()
        assert [(s.path, "escaped" in s.reason) for s in report.skipped] == [("p\\xff", True)]
        for _ in range(2):
            result = idx.search_result("okapi")
            assert not result.reconcile.changed
            assert [(h.path, h.snippet) for h in result.hits] == [("p\\xff/memory/a.md", "<<okapi>> literal\n")]
        assert call_tool(idx, "memory_read", {"path": "p\\xff/memory/a.md"}).text == "okapi literal\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher needs inotify")
def test_names_not_utf8_that_the_watcher_rechecks_stay_found(root, tmp_path, monkeypatch):
    """A watcher re-reads symlinks and hard-linked files by their index path at every batch, and so
    does reconcile_paths() with a hit's path: spelled \\xNN, such a name was looked up as it is
    shown, not found, and its row dropped, so a watcher-fresh query missed the file."""
    (tmp_path / "config.toml").write_text("sync_timeout = 60\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(tmp_path / "config.toml"))
    folder = os.path.join(os.fsencode(root), b"d\xffir")
    os.makedirs(folder)
    with open(os.path.join(folder, b"caf\xe9.md"), "wb") as f:
        f.write(b"okapi hard linked\n")
    os.link(os.path.join(folder, b"caf\xe9.md"), os.path.join(os.fsencode(tmp_path), b"outside.md"))
    write(root, "target.md", "okapi target\n")
    os.symlink(b"../target.md", os.path.join(folder, b"l\xefnk.md"))
    found = ["d\\xffir/caf\\xe9.md", "d\\xffir/l\\xefnk.md", "target.md"]
    with MemoryIndex(root, tmp_path / "db") as idx:
        with Watcher(idx):
            write(root, "other.md", "a batch of events\n")
            result = idx.search_result("okapi")
            assert result.freshness.via == "watcher" and sorted(h.path for h in result.hits) == found
        idx.reconcile_paths(found)
        assert sorted(h.path for h in idx.search("okapi", reconcile=False)) == found


def test_nested_instruction_files_below_names_not_utf8_stay_found(tmp_path):
    """In a repos root a query stats again the nested files the deep walk found, by their index
    path: spelled \\xNN (a checkout or folder name not UTF-8), they were not found, and the first
    query after `memsearch index` dropped them."""
    repos = os.path.join(os.fsencode(tmp_path), b"repos")
    for folder in (b"sh\xffop/src/api", b"shop/s\xffrc"):
        os.makedirs(os.path.join(repos, folder))
        with open(os.path.join(repos, folder, b"AGENTS.md"), "wb") as f:
            f.write(b"okapi nested\n")
    spec, db = f"repos={os.fsdecode(repos)}", str(tmp_path / "db")
    assert cli("index", "--root", spec, "--db", db).exit_code == 0
    for _ in range(2):
        r = cli("query", "okapi", "--root", spec, "--db", db, "--json")
        assert sorted(hit["path"] for hit in json.loads(r.stdout)["results"]) == [
            "sh\\xffop/src/api/AGENTS.md", "shop/s\\xffrc/AGENTS.md"]


def test_memory_read_reads_a_checkouts_memory_folder_below_a_name_not_utf8(tmp_path):
    """memory_read asked discovery whether it reads a path with the names as the hit spells them:
    a checkout's memory/ below a name not UTF-8 (sh\\xffop/memory/MEMORY.md) was looked for at its
    \\xNN spelling, not found, and a file the index returns was refused."""
    repos = os.path.join(os.fsencode(tmp_path), b"repos")
    os.makedirs(os.path.join(repos, b"sh\xffop", b"memory"))
    with open(os.path.join(repos, b"sh\xffop", b"memory", b"MEMORY.md"), "wb") as f:
        f.write(b"okapi in a checkout's memory\n")
    with MemoryIndex(roots=[Root("repos", os.fsdecode(repos))], db_path=tmp_path / "db") as idx:
        hits = idx.search("okapi")
        assert [h.path for h in hits] == ["sh\\xffop/memory/MEMORY.md"]
        for path in (hits[0].path, hits[0].file):
            read = call_tool(idx, "memory_read", {"path": path})
            assert not read.is_error and read.text == "okapi in a checkout's memory\n", read.text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher needs inotify")
@pytest.mark.parametrize("note", ["sh\\xffop/CLAUDE.md", "shop/s\\xffrc/AGENTS.md"])
def test_a_watched_repos_root_follows_changes_below_names_not_utf8(note, tmp_path, monkeypatch):
    """A change in a checkout whose name is not UTF-8 failed the watcher (its path went to
    reconcile_paths unspelled), and a nested folder so named was watched under its \\xNN spelling,
    which names no folder: an edit there went unseen by watcher-fresh queries."""
    (tmp_path / "config.toml").write_text("sync_timeout = 60\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(tmp_path / "config.toml"))
    repos = os.path.join(os.fsencode(tmp_path), b"repos")
    path = os.path.join(repos, *[os.fsencode(disk_name(p) or p) for p in note.split("/")])
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(b"okapi before\n")
    with MemoryIndex(roots=[Root("repos", os.fsdecode(repos))], db_path=tmp_path / "db") as idx, Watcher(idx):
        assert [h.path for h in idx.search("okapi")] == [note]
        with open(path, "ab") as f:
            f.write(b"okapi changed while watched\n")
        result = idx.search_result("changed")
        assert result.freshness.via == "watcher" and [h.path for h in result.hits] == [note]


@pytest.mark.parametrize("kind, note", [("mimo", "global/a.md"), ("plain", "a.md"),
                                        ("repos", "checkout/CLAUDE.md")])
def test_a_root_folder_whose_name_is_not_utf8_is_searched(tmp_path, kind, note):
    """The root's own name may hold bytes that are not UTF-8 (its key is
    stored as text): found by the library and the CLI, removed when gone."""
    root = os.path.join(os.fsencode(tmp_path), b"r\xffoot")
    path = os.path.join(root, *os.fsencode(note).split(b"/"))
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(b"okapi under an odd root\n")
    spec = f"{kind}={os.fsdecode(root)}"
    db = str(tmp_path / "db")
    with MemoryIndex(roots=[Root.parse(spec)], db_path=db) as idx:
        assert [h.path for h in idx.search("okapi")] == [note]
        r = cli("query", "okapi", "--root", spec, "--db", db)
        # The file, spelled as the walk spells a name that is not UTF-8.
        assert r.exit_code == 0 and r.stdout.startswith(f"{tmp_path}/r\\xffoot/{note}  ["), r.output
        os.unlink(path)
        assert idx.search("okapi") == []


def test_a_root_folder_not_utf8_beside_another_root_is_searched(tmp_path):
    """With several roots a hit's path starts with its root's name, by default the folder's: one
    not UTF-8 put a lone surrogate in every path of that root, and the search of all of them
    failed with a raw UnicodeEncodeError."""
    odd = os.path.join(os.fsencode(tmp_path), b"r\xffoot")
    os.makedirs(odd)
    with open(os.path.join(odd, b"a.md"), "wb") as f:
        f.write(b"okapi under an odd root\n")
    write(tmp_path / "other", "b.md", "okapi under a plain root\n")
    specs = [f"plain={os.fsdecode(odd)}", f"plain={tmp_path / 'other'}"]
    db = str(tmp_path / "db")
    with MemoryIndex(roots=[Root.parse(spec) for spec in specs], db_path=db) as idx:
        hits = idx.search("okapi", floor=0.0)
        assert sorted(h.path for h in hits) == ["other:b.md", "r\\xffoot:a.md"]
        read = call_tool(idx, "memory_read", {"path": "r\\xffoot:a.md"})
        assert read.text == "okapi under an odd root\n"
    r = cli("query", "okapi", "--root", specs[0], "--root", specs[1], "--db", db)
    assert r.exit_code == 0 and f"{tmp_path}/r\\xffoot/a.md  [free]" in r.stdout, r.output


def test_the_tools_answers_about_a_root_not_utf8_can_be_sent(tmp_path):
    """The zero-result hint and memory_read's "outside" error name the roots: a folder name not
    UTF-8 put a lone surrogate in the text, which no JSON can carry (memsearch mcp answered
    "internal error in memory_search: UnicodeEncodeError")."""
    odd = os.path.join(os.fsencode(tmp_path), b"r\xffoot")
    os.makedirs(odd)
    with open(os.path.join(odd, b"a.md"), "wb") as f:
        f.write(b"okapi under an odd root\n")
    with MemoryIndex(Root("plain", os.fsdecode(odd)), tmp_path / "db") as idx:
        for name, args in [("memory_search", {"query": "wombat"}), ("memory_read", {"path": "/etc/x.md"})]:
            result = call_tool(idx, name, args)
            assert "r\\xffoot" in result.text, result.text
            result.text.encode("utf-8")
            json.dumps(result.data, ensure_ascii=False).encode("utf-8")


# -- control characters and huge text in output ------------------------------------------

def test_control_characters_in_a_file_never_reach_the_terminal(root, tmp_path):
    write(root, "evil.md", "okapi \x1b[2J\x1b]0;pwned\x07 clear screen \x9b31m and more\n")
    r = cli("query", "okapi", "--root", str(root), "--db", str(tmp_path / "db"))
    assert r.exit_code == 0
    assert not any(c in r.stdout for c in "\x1b\x07\x9b"), repr(r.stdout)


def test_a_files_own_unclosed_mark_never_leaves_the_terminal_highlighted(root, tmp_path):
    from memsearch.format import HIGHLIGHT_OFF, HIGHLIGHT_ON, format_hits

    write(root, "heredoc.md", "deploy config: cat <<EOF\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        shown = format_hits(idx.search_result("deploy"), color=True)
    assert shown.endswith(f"{HIGHLIGHT_ON}deploy{HIGHLIGHT_OFF} config: cat <<EOF"), repr(shown)


# -- huge files, deep trees, loops ---------------------------------------------------------

def test_a_huge_sparse_file_is_skipped_without_being_read(root, tmp_path):
    huge = root / "huge.md"
    with open(huge, "wb") as f:
        f.truncate(8 * 1024**3)  # 8 GiB of nothing: reading it would take minutes and all memory
    write(root, "small.md", "okapi")
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        assert [s.path for s in report.skipped] == ["huge.md"] and "too large" in report.skipped[0].reason
        assert [h.path for h in idx.search("okapi")] == ["small.md"]


def test_a_binary_file_is_skipped_by_its_first_bytes_alone(root, tmp_path, monkeypatch):
    """A file the indexer skips keeps no row, so every query reads it again: 300 sparse files of 2 MB (no block
    on disk) cost each query 600 MB of zeros. Its first bytes tell it is no text; the rest is never read."""
    from memsearch.prepare import BINARY_PROBE

    for i in range(20):
        with open(root / f"hole{i}.md", "wb") as f:
            f.truncate(1_900_000)
    write(root, "small.md", "okapi")
    real, read = os.read, []
    monkeypatch.setattr(os, "read", lambda fd, size: read.append(len(data := real(fd, size))) or data)
    with MemoryIndex(root, tmp_path / "db") as idx:
        for _ in range(2):
            read.clear()
            assert [h.path for h in idx.search("okapi")] == ["small.md"]
            assert sum(read) < 21 * BINARY_PROBE, sum(read)
        assert len(idx.reconcile().skipped) == 20

def test_a_file_that_grows_over_the_cap_leaves_the_index(root, tmp_path):
    f = write(root, "grows.md", "okapi small")
    with MemoryIndex(root, tmp_path / "db", max_file_bytes=1000) as idx:
        assert idx.search("okapi")
        f.write_text("okapi " * 500)
        assert idx.search("okapi") == []
        assert "too large" in idx.reconcile().skipped[0].reason


def test_a_tree_deeper_than_path_max(root, tmp_path):
    """Absolute paths longer than PATH_MAX (4096) cannot be opened in one go:
    reported, never a crash; everything shallower is still indexed."""
    write(root, "top.md", "okapi top")
    fd = os.open(root, os.O_RDONLY)
    try:
        for i in range(450):  # 450 x 10 bytes: well past 4096
            name = f"level{i:04d}"
            os.mkdir(name, dir_fd=fd)
            new = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
            if i % 50 == 0:
                w = os.open("note.md", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
                os.write(w, f"okapi depth {i}".encode())
                os.close(w)
    finally:
        os.close(fd)
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        hits = {h.path.count("/") for h in idx.search("okapi", limit=50, floor=0.0)}
    assert 0 in hits and 1 in hits  # top.md and level0000/note.md
    deepest = max(hits)
    assert deepest < 450 and report.skipped  # the part past PATH_MAX is reported, not silently dropped
    shutil.rmtree(root, ignore_errors=True)


def test_a_batch_of_paths_deep_in_a_tree_costs_each_folder_one_lookup(root, tmp_path, monkeypatch):
    """The watcher's batch (reconcile_paths) of 100 files 2,000 folders deep took 18 s, a reconcile of the whole
    tree 0.3 s: each file's folders were looked up one by one from the root again (lstats of paths ever longer),
    and each path's ancestors joined anew. Counted here in lookups: one a folder and file, not one a folder a file."""
    depth, files = 300, 20
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            fd, old = os.open("a", os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
        for i in range(files):
            w = os.open(f"n{i}.md", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
            os.write(w, b"the deep heron")
            os.close(w)
    finally:
        os.close(fd)
    paths = ["a/" * depth + f"n{i}.md" for i in range(files)]
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert len(idx.reconcile().added) == files
        for i in range(files):
            (root / paths[i]).write_text(f"the deep heron, version {i}")
        lookups = []
        for name in ("lstat", "stat"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, lambda *a, real=real, **k: lookups.append(a[0]) or real(*a, **k))
        assert sorted(idx.reconcile_paths(paths).updated) == sorted(paths)
        monkeypatch.undo()
        assert len(lookups) < 3 * (depth + files), len(lookups)  # (6,025 before)
        assert len(idx.search("version", limit=50)) == files


def test_symlink_loops_of_every_shape(root, tmp_path):
    write(root, "a/real.md", "okapi real")
    os.symlink("self.md", root / "self.md")  # a link to itself
    os.symlink("pong.md", root / "ping.md")
    os.symlink("ping.md", root / "pong.md")  # two links pointing at each other
    os.symlink("../b", root / "a" / "to-b")
    os.symlink("../a", root / "b")  # directories pointing at each other through links
    chain = root / "chain0.md"
    for i in range(60):  # longer than the kernel's 40-link limit
        os.symlink(f"chain{i + 1}.md", root / f"chain{i}.md")
    os.symlink("a/real.md", root / "chain60.md")
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        found = {h.path for h in idx.search("okapi", limit=100, floor=0.0)}
    assert "a/real.md" in found
    reasons = {s.path: s.reason for s in report.skipped}
    assert {"self.md", "ping.md", "pong.md"} <= reasons.keys()
    # A long chain that ends inside the root is a link like any other.
    assert chain.is_symlink() and "chain0.md" in found


@pytest.mark.parametrize("spec, folder, chain_dir", [
    ("{}", "global", "global"), ("repos={}", "shop/.claude/memory", "shop/.claude/memory"),
    ("claude={}", "p1/memory", "p2")])
def test_a_chain_of_more_links_than_python_recurses_stops_no_walk(spec, folder, chain_dir, tmp_path):
    """os.path.realpath recurses once a link: a chain of 1,200 links under a root (of files, or
    of folders for a project's memory folder) raised RecursionError at every query and index
    build, and each link cost the rest of the chain (N² lstats). Such a chain is passed over."""
    root = tmp_path / "root"
    write(root / folder, "real.md", "okapi at the end of the chain\n")
    chain = root / chain_dir
    chain.mkdir(parents=True, exist_ok=True)
    last = 1200
    if chain_dir == "p2":  # p2/memory -> l0 -> l1 ... -> ../p1/memory: folders
        os.symlink("l0", chain / "memory")
        os.symlink("../p1/memory", chain / f"l{last}")
    else:  # (repos: CLAUDE.md -> .claude/memory/l0.md -> ...)
        os.symlink(".claude/memory/l0.md" if spec.startswith("repos") else "l0.md",
                   root / ("shop/CLAUDE.md" if spec.startswith("repos") else f"{chain_dir}/first.md"))
        os.symlink("real.md", chain / f"l{last}.md")
    suffix = "" if chain_dir == "p2" else ".md"
    for i in range(last):
        os.symlink(f"l{i + 1}{suffix}", chain / f"l{i}{suffix}")
    args = ("--root", spec.format(root), "--db", str(tmp_path / "db"))
    assert cli("index", *args).exit_code == 0
    r = cli("query", "okapi", *args, "--json")
    # The one file, under its first names (real.md or links to it: reconcile.hard_links' rule).
    assert r.exit_code == 0 and {h["snippet"] for h in json.loads(r.stdout)["results"]} == {
        "<<okapi>> at the end of the chain\n"}


def test_memory_read_follows_a_chain_of_links_as_far_as_the_walk(root, tmp_path):
    """The walk follows a chain past the kernel's 40 links (it reads the resolved path); memory_read
    stopped at 40, so a hit at the head of a chain of 60 could not be read back."""
    write(root, "a/real.md", "okapi real\n")
    for i in range(60):
        os.symlink(f"chain{i + 1}.md", root / f"chain{i}.md")
    os.symlink("a/real.md", root / "chain60.md")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert "chain0.md" in {h.path for h in idx.search("okapi", limit=100, floor=0.0)}
        assert call_tool(idx, "memory_read", {"path": "chain0.md"}).text == "okapi real\n"


def test_thousands_of_files_change_at_once(root, tmp_path):
    """tests/test_reconcile.py builds 3000 files in one directory; here a
    thousand change between two queries and the next query sees every one."""
    for i in range(1000):
        write(root, f"flat/n{i}.md", f"old{i}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        for i in range(1000):
            write(root, f"flat/n{i}.md", f"new{i} okapi")
        assert len(idx.search("okapi", limit=1000, floor=0.0)) == 1000
        assert idx.search("old999") == [] and idx.search("new999")[0].path == "flat/n999.md"


def test_a_root_or_index_folder_named_to_forge_a_line_is_shown_escaped(tmp_path):
    """status and doctor printed a root's and the database's path raw: a folder named
    "x\\nERROR: forged" (or with U+2028) printed a line of its own."""
    for name in ("x\nERROR: forged", "x\u2028ERROR: forged"):
        root = tmp_path / name / "memory"
        root.mkdir(parents=True)
        (root / "a.md").write_text("aardvark\n")
        db = tmp_path / name / "index.db"
        for command in ("index", "status", "doctor"):
            done = run_memsearch(command, "--root", root, "--db", db)
            assert done.returncode == 0, done.stderr
            assert not any(line.startswith("ERROR") for line in done.stdout.splitlines()), done.stdout



def test_a_file_dated_past_2262_is_skipped_not_the_search(root, tmp_path):
    """`touch -d 2400-01-01` puts a file's mtime in ns past SQLite's 64-bit integers: binding its fingerprint raised
    OverflowError out of every reconcile, so no query answered. It is listed, and one indexed before leaves."""
    write(root, "good.md", "the good heron")
    early = write(root, "early.md", "the early heron")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert sorted(h.path for h in idx.search("heron")) == ["early.md", "good.md"]
        late = write(root, "late.md", "the late heron")
        for path in (late, early):
            os.utime(path, ns=(13 * 10**18, 13 * 10**18))  # the year 2381
            if os.stat(path).st_mtime_ns < 1 << 63:
                pytest.skip("this file system keeps no such time")
        assert [h.path for h in idx.search("heron")] == ["good.md"]
        assert sorted((s.path, s.reason.split(" (")[0]) for s in idx.reconcile().skipped) == [
            ("early.md", "modification time out of range"), ("late.md", "modification time out of range")]
    out = run_memsearch("query", "heron", "--root", root, "--db", tmp_path / "db2")
    assert out.returncode == 0 and "good.md" in out.stdout and "late.md" not in out.stdout, out.stderr


def test_a_file_dated_in_the_future_is_read_once_not_by_every_query(root, tmp_path, monkeypatch):
    """`touch -d 2200-01-01` (within the index's range): its mtime stayed inside the racy window for ever, so every
    reconcile read and wrote it again (300 such files of 120 KB: 3.4 s a query). The ctime, set by the touch,
    settles."""
    import memsearch.reconcile as reconcile_mod

    window = 50_000_000
    monkeypatch.setattr(reconcile_mod, "RACY_NS", window)
    reads = []
    real = reconcile_mod.prepare_one
    monkeypatch.setattr(reconcile_mod, "prepare_one", lambda rel, *a: reads.append(rel) or real(rel, *a))
    path = write(root, "later.md", "the later heron")
    os.utime(path, ns=(7_258_118_400 * 10**9,) * 2)  # 2200-01-01
    with MemoryIndex(root, tmp_path / "db") as idx:
        time.sleep(max(0, os.stat(path).st_ctime_ns + window - time.time_ns()) / 1e9)
        for _ in range(3):
            assert [h.path for h in idx.search("heron")] == ["later.md"]
    assert reads == ["later.md"]
