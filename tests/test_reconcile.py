import contextlib
import os
import sqlite3
import time

import pytest

from conftest import write
from memsearch import MemoryIndex, RootNotFound


def test_report_counts(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        first = idx.reconcile()
        assert len(first.added) == 9 and not first.updated and not first.removed
        second = idx.reconcile()
        assert not second.changed and second.unchanged + len(second.updated) == 9
        (tree / "README.md").unlink()
        write(tree, "projects/shop/memory-new.md", "new")
        with open(tree / "sessions/s1/notes.md", "a") as f:
            f.write("more\n")
        third = idx.reconcile()
        assert third.removed == ("README.md",)
        assert third.added == ("projects/shop/memory-new.md",)
        assert third.updated == ("sessions/s1/notes.md",)


def test_fingerprint_is_size_mtime_ctime_device_and_inode_in_integer_columns(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
        fp = idx.conn.execute("SELECT size, mtime_ns, ctime_ns, device, inode FROM memory_fts"
                              " WHERE path = 'README.md'").fetchone()
    st = (tree / "README.md").stat()
    assert fp == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)


def test_a_same_size_rewrite_with_the_mtime_put_back_is_read_again(tree, tmp_path):
    """The ctime gives it away: no one can set it back (issue 29)."""
    path = tree / "README.md"
    old = path.stat().st_mtime_ns - 3600 * 10**9  # not racy: the fingerprint alone decides
    os.utime(path, ns=(old, old))
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
        text = path.read_text()
        st = path.stat()
        path.write_text("Z" + text[1:])
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
        assert idx.reconcile().updated == ("README.md",)


def test_a_same_size_rewrite_in_the_ctime_tick_of_its_read_with_the_mtime_put_back_is_read_again(
        root, tmp_path, monkeypatch):
    """A kernel without fine-grained timestamps (before Linux 6.13) sets the ctime from a clock
    that ticks every few milliseconds: a rewrite in the tick of the read keeps it, and with the
    mtime put back (``cp -p``) the whole fingerprint. The racy rule must go by the ctime too.
    Simulated: every stat of the file reports one ctime, a minute ahead (racy whatever the
    machine's speed)."""
    path = write(root, "a.md", "alpha walrus\n")
    old = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(old, old))
    tick = time.time_ns() + 60 * 10**9
    scandir = os.scandir

    class Entry:
        def __init__(self, entry):
            self._entry = entry

        def __getattr__(self, name):
            return getattr(self._entry, name)

        def stat(self, *, follow_symlinks=True):
            st = self._entry.stat(follow_symlinks=follow_symlinks)
            if self._entry.name != "a.md":
                return st
            return os.stat_result([*st, st.st_atime, st.st_mtime, tick / 1e9, st.st_atime_ns, st.st_mtime_ns, tick])

    class Listing:  # os.scandir's iterator, a context manager too
        def __init__(self, folder="."):
            self._entries = scandir(folder)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._entries.close()

        def __iter__(self):
            return map(Entry, self._entries)

    monkeypatch.setattr(os, "scandir", Listing)
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("alpha")] == ["a.md"]
        path.write_text("gamma walrus\n")
        os.utime(path, ns=(old, old))
        assert [h.path for h in idx.search("gamma")] == ["a.md"]
        assert idx.search("alpha") == []


def test_hidden_dirs_and_non_markdown_are_ignored(root, tmp_path):
    write(root, ".git/notes.md", "secret")
    write(root, "projects/p/.obsidian/x.md", "secret")
    write(root, "projects/p/data.txt", "secret")
    write(root, "projects/p/UPPER.MD", "secret loud")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("secret")] == ["projects/p/UPPER.MD"]


def test_bad_files_are_skipped_or_indexed_with_reasons(root, tmp_path):
    write(root, "bin.md", b"\x00\x01\x02binary")
    write(root, "latin1.md", "caf\xe9 ol\xe9 walrus".encode("latin-1"))
    write(root, "bom.md", "\ufeffbommed walrus".encode("utf-8"))
    write(root, "huge.md", "x" * 5000)
    write(root, "ok.md", "fine")
    with MemoryIndex(root, tmp_path / "db", max_file_bytes=4000) as idx:
        report = idx.reconcile()
        reasons = {s.path: s.reason for s in report.skipped}
        assert "binary" in reasons["bin.md"]
        assert "too large" in reasons["huge.md"]
        assert sorted(report.added) == ["bom.md", "latin1.md", "ok.md"]
        hits = idx.search("walrus")
        assert {h.path for h in hits} == {"latin1.md", "bom.md"}
        body = idx.conn.execute("SELECT body FROM memory_fts WHERE path='bom.md'").fetchone()[0]
        assert body.startswith("bommed")


def test_utf16_files_are_skipped_with_the_reason(root, tmp_path):
    """Chinese in UTF-16 holds no NUL byte: decoded as UTF-8 it was indexed as
    garbage, silently, and its words found nothing."""
    write(root, "zh.md", "\ufeff数据库端口是五四三三".encode("utf-16-le"))
    write(root, "en.md", "\ufeffwalrus port".encode("utf-16-be"))
    write(root, "ok.md", "数据库 walrus")
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        assert {s.path: s.reason for s in report.skipped} == dict.fromkeys(
            ["en.md", "zh.md"], "UTF-16 text (byte-order mark): memory files are read as UTF-8")
        assert report.added == ("ok.md",)


def test_a_file_that_turns_binary_leaves_the_index(root, tmp_path):
    f = write(root, "a.md", "walrus")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert idx.search("walrus")
        f.write_bytes(b"walrus\x00\x00")
        assert idx.search("walrus") == []


@pytest.mark.skipif(os.geteuid() == 0, reason="running as root, which reads a file whatever its mode")
def test_unreadable_file_is_skipped(root, tmp_path):
    f = write(root, "a.md", "walrus")
    f.chmod(0)
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
    assert "unreadable" in report.skipped[0].reason


def test_symlinks_inside_followed_outside_refused_loops_survived(root, tmp_path):
    outside = tmp_path / "outside"
    write(outside, "secret.md", "walrus outside")
    write(root, "real/inside.md", "walrus inside")
    os.symlink(outside / "secret.md", root / "link-out.md")
    os.symlink(outside, root / "dir-out")
    os.symlink(root / "real" / "inside.md", root / "link-in.md")
    os.symlink(root, root / "real" / "loop")
    os.symlink("missing.md", root / "broken.md")
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        found = {h.path for h in idx.search("walrus")}
    assert found == {"real/inside.md", "link-in.md"}
    reasons = {s.path: s.reason for s in report.skipped}
    assert "outside" in reasons["link-out.md"] and "outside" in reasons["dir-out"]
    assert "broken" in reasons["broken.md"]


def test_odd_file_names(root, tmp_path):
    write(root, "new\nline.md", "walrus newline")
    write(root, "tab\tand space.md", "walrus tab")
    os.makedirs(root / "bytes", exist_ok=True)
    with open(os.path.join(os.fsencode(root / "bytes"), b"caf\xe9.md"), "w") as f:
        f.write("walrus bytes")
    with MemoryIndex(root, tmp_path / "db") as idx:
        found = {h.path for h in idx.search("walrus")}
        assert found == {"new\nline.md", "tab\tand space.md", "bytes/caf\\xe9.md"}
        os.unlink(os.path.join(os.fsencode(root / "bytes"), b"caf\xe9.md"))
        assert {h.path for h in idx.search("walrus")} == {"new\nline.md", "tab\tand space.md"}


def test_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(RootNotFound):
        MemoryIndex(tmp_path / "nope", tmp_path / "db")


def test_root_vanishing_raises_and_keeps_the_index(root, tmp_path):
    write(root, "a.md", "walrus")
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        os.rename(root, tmp_path / "moved")
        with pytest.raises(RootNotFound):
            idx.search("walrus")
    with contextlib.closing(sqlite3.connect(tmp_path / "db")) as conn:
        assert conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0] == 1


def test_files_are_never_written(tree, tmp_path):
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tree.rglob("*") if p.is_file()}
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
        idx.search("rounding cents")
        idx.status()
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tree.rglob("*") if p.is_file()}
    assert before == after


def test_many_files_in_one_directory_and_deep_tree(root, tmp_path):
    for i in range(3000):
        write(root, f"flat/n{i}.md", f"note {i} token{i}")
    deep = "/".join(f"d{i}" for i in range(60))
    write(root, f"{deep}/deep.md", "walrus deep")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert len(idx.reconcile().added) == 3001
        assert [h.path for h in idx.search("token2999")] == ["flat/n2999.md"]
        assert idx.search("walrus")[0].path.endswith("d59/deep.md")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="the open file is named through /proc")
def test_a_file_saved_while_the_indexer_reads_it_keeps_its_row(tmp_path, monkeypatch):
    """An editor saves by renaming a new version over the file; when that came
    between the indexer's open and its check of what it opened, the check took
    the old, now deleted file for one reached through a swapped folder: the
    file was skipped, its row dropped, and a query the watcher vouched for
    missed it (seen in test_watch's two-queriers run)."""
    root = tmp_path / "memory"
    note = write(root, "counter.md", "counter value 1\n")
    real_open, saved = os.open, []

    def open_then_save(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if str(path) == str(note) and not saved:
            saved.append(1)
            (root / ".counter.md.tmp").write_text("counter value 3\n")
            os.replace(root / ".counter.md.tmp", note)
        return fd

    with MemoryIndex(root, tmp_path / "index.db") as idx:
        idx.reconcile()
        write(root, "counter.md", "counter value 2, saved once more\n")
        monkeypatch.setattr(os, "open", open_then_save)
        report = idx.reconcile()
        monkeypatch.undo()
        assert saved and report.skipped == () and report.removed == ()
        found = idx.search("counter", floor=0.0, reconcile=False)  # what that reconcile wrote: the version it opened
        assert [h.snippet.strip() for h in found] == ["<<counter>> value 2, saved once more"]
        # The version saved over it, at the next look.
        assert [h.snippet.strip() for h in idx.search("counter", floor=0.0)] == ["<<counter>> value 3"]
