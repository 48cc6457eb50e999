"""Hard links (issue 29 item 2): an index reads and stores one (device, inode)
once, under the first of its names in sorted order, and reports the others;
when that name goes, the next one answers at the next query."""

import os
import sys

import pytest

from conftest import run_memsearch, write
from memsearch import MemoryIndex, Root, Watcher

LINKS = 20


def _linked_tree(tmp_path):
    root = tmp_path / "notes"
    first = write(root, "a/first.md", "The quokka enclosure opens at nine.\n")
    for i in range(LINKS):
        os.link(first, root / f"link{i:03d}.md")
    write(root, "other.md", "Nothing about marsupials here.\n")
    return root


def _rows(idx):
    return [p for (p,) in idx.conn.execute("SELECT path FROM memory_fts ORDER BY path")]


def test_one_file_under_many_names_is_read_and_stored_once(tmp_path):
    root = _linked_tree(tmp_path)
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        assert sorted(report.added) == ["a/first.md", "other.md"]
        linked = sorted(s.path for s in report.skipped if "hard link to a/first.md" in s.reason)
        assert linked == [f"link{i:03d}.md" for i in range(LINKS)]
        assert _rows(idx) == ["a/first.md", "other.md"]
        assert [h.path for h in idx.search("quokka")] == ["a/first.md"]
        again = idx.reconcile()  # the other names are stat'ed, not read, and not written
        assert not again.changed and again.unchanged == 2 and len(again.skipped) == LINKS


def test_a_file_is_indexed_under_a_few_of_its_symlinks_at_most(tmp_path):
    """50 links to a 1.5 MB note took 61 s and 351 MB of index (each name its whole text again); a
    file is indexed under LINK_NAMES names at most, itself and links to it, the rest reported."""
    from memsearch.reconcile import LINK_NAMES

    root = tmp_path / "notes"
    write(root, "a/first.md", "The quokka enclosure opens at nine.\n")
    for i in range(LINKS):
        os.symlink("a/first.md", root / f"link{i:03d}.md")
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        names = sorted(["a/first.md", *(f"link{i:03d}.md" for i in range(LINKS))])
        assert _rows(idx) == names[:LINK_NAMES] and len(report.added) == LINK_NAMES == 8
        assert sorted(s.path for s in report.skipped if "links to a/first.md" in s.reason) == names[LINK_NAMES:]
        assert not idx.reconcile().changed
    (root / "link005.md").unlink()  # a kept name goes: the next one takes its place
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("quokka")] == sorted(set(names) - {"link005.md"})[:LINK_NAMES]


def test_links_into_a_chain_of_folders_walk_each_folder_a_few_times_at_most(tmp_path, listings):
    """l1 -> d, l2 -> d/d, ... each walked the rest of the chain again: 1,000 folders and 1,000 links
    cost every query 33 s (500,000 folders listed). A folder is walked through LINK_NAMES links at most."""
    from memsearch.reconcile import LINK_NAMES

    root, depth = tmp_path / "notes", 40
    write(root, "/".join(["d"] * depth) + "/deep.md", "The quokka enclosure opens at nine.\n")
    for i in range(1, depth + 1):
        os.symlink("/".join(["d"] * i), root / f"l{i:02d}", target_is_directory=True)
    with MemoryIndex(root, tmp_path / "db") as idx:
        listings.clear()
        assert len(idx.search("quokka")) == LINK_NAMES
        assert len([path for path in listings if path.startswith(str(root))]) <= (1 + LINK_NAMES) * (depth + 1)


def test_a_claude_project_whose_memory_links_up_is_not_walked(tmp_path):
    """<project>/memory -> .. made every project walk the whole root: 400 projects gave 160,000 rows
    (10 s, 205 MB a query) and .md files outside any memory folder. A memory folder must be a
    project's memory folder (another project's too: an alias)."""
    root = tmp_path / "projects"
    write(root, "-home-a/memory/note.md", "The quokka enclosure opens at nine.\n")
    write(root, "-home-a/stray.md", "A quokka note outside any memory folder.\n")
    for i in range(30):
        (root / f"-home-p{i}").mkdir()
        os.symlink("..", root / f"-home-p{i}/memory")
    (root / "-home-b").mkdir()
    os.symlink("../-home-a/memory", root / "-home-b/memory")
    with MemoryIndex(Root("claude", str(root)), tmp_path / "db") as idx:
        assert sorted(h.path for h in idx.search("quokka")) == ["-home-a/memory/note.md", "-home-b/memory/note.md"]


def test_a_memory_folder_many_projects_link_to_is_walked_under_one_of_them(tmp_path, listings):
    """300 projects whose memory linked to one project's walked its 1,000 notes 300 times a query (7 s), and
    links to each folder of a chain in it (-home-p1/memory -> ../-home-a/memory/d, ...) walked the rest of it
    again each: a memory folder is a project's own, and walked through one link at most."""
    root = tmp_path / "projects"
    write(root, "-home-a/memory/note.md", "The quokka enclosure opens at nine.\n")
    write(root, "-home-a/memory/" + "/".join(["d"] * 20) + "/deep.md", "A quokka deep down.\n")
    for i in range(20):
        (root / f"-home-p{i:02d}").mkdir()
        os.symlink("../-home-a/memory", root / f"-home-p{i:02d}/memory")
        (root / f"-home-q{i:02d}").mkdir()
        os.symlink("../-home-a/memory/" + "/".join(["d"] * (i + 1)), root / f"-home-q{i:02d}/memory")
    with MemoryIndex(Root("claude", str(root)), tmp_path / "db") as idx:
        listings.clear()
        assert {h.path.split("/")[0] for h in idx.search("quokka", limit=100)} == {"-home-a", "-home-p00"}
        assert len([path for path in listings if path.startswith(str(root))]) <= 2 * 22
        walked = [s.path for s in idx.reconcile().skipped if s.reason == "symlink loop (directory already walked)"]
        assert walked == [f"-home-p{i:02d}/memory" for i in range(1, 20)]


def test_the_next_name_takes_over_when_the_first_goes(tmp_path):
    root = _linked_tree(tmp_path)
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        (root / "a" / "first.md").unlink()
        assert [h.path for h in idx.search("quokka")] == ["link000.md"]
        assert _rows(idx) == ["link000.md", "other.md"]
        os.link(root / "link005.md", root / "0-new.md")  # a name sorted first takes over
        assert [h.path for h in idx.search("quokka")] == ["0-new.md"]
        assert _rows(idx) == ["0-new.md", "other.md"]


def test_a_link_made_while_watched_is_not_a_second_row(tmp_path):
    root = _linked_tree(tmp_path)
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        os.link(root / "a" / "first.md", root / "0-new.md")
        idx.reconcile_paths(["0-new.md"])  # what the watcher does with the event of its name
        assert _rows(idx) == ["0-new.md", "other.md"]
        assert [h.path for h in idx.search("quokka", reconcile=False)] == ["0-new.md"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watcher needs inotify")
def test_a_file_linked_while_watched_answers_again_when_its_new_first_name_goes(tmp_path, monkeypatch):
    """Linking a file to a name that sorts first raises an event for that name only: the file's own
    name, left out as its hard link, was never rechecked, so once the new name was deleted the file
    was missing from every watcher-fresh query until it next changed."""
    (tmp_path / "config.toml").write_text("sync_timeout = 60\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(tmp_path / "config.toml"))
    root = tmp_path / "notes"
    write(root, "z/late.md", "The quokka enclosure opens at nine.\n")
    (root / "a").mkdir()
    with MemoryIndex(root, tmp_path / "db") as idx, Watcher(idx):
        assert [h.path for h in idx.search("quokka")] == ["z/late.md"]
        os.link(root / "z" / "late.md", root / "a" / "first.md")
        assert [h.path for h in idx.search("quokka")] == ["a/first.md"]
        (root / "a" / "first.md").unlink()
        result = idx.search_result("quokka")
        assert result.freshness.via == "watcher" and [h.path for h in result.hits] == ["z/late.md"]


def test_doctor_finds_nothing_wrong_with_links_and_the_cli_lists_them(tmp_path):
    root = _linked_tree(tmp_path)
    db = tmp_path / "db"
    built = run_memsearch("index", "--root", root, "--db", db)
    assert built.returncode == 0, built.stderr
    assert f"{LINKS} skipped" in built.stdout and "skipped link000.md: a hard link to a/first.md" in built.stdout
    checked = run_memsearch("doctor", "--root", root, "--db", db)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    found = run_memsearch("query", "quokka", "--root", root, "--db", db)
    assert found.returncode == 0 and found.stdout.count("quokka") == 1
