"""Hostile memory files and tool calls, a fourth audit (session 51): each test failed before its fix."""

import os
import re
import sys

import pytest

from conftest import write
from memsearch import MemoryIndex, Root, Watcher
from memsearch.memory_file import MAX_LOOKUPS
from memsearch.settings import Settings
from memsearch.tool import call_tool, search_tool


def test_memory_read_refuses_a_repos_memory_file_deeper_than_the_walk_goes(tmp_path):
    """A checkout's memory folder is walked 6 folders deep (discover.FOLDER_DEPTH): memory_read read a file
    7 deep, which no search can find, as it read any nested file past the deep walk's depth before."""
    src = tmp_path / "src"
    deep = write(src, "shop/.claude/memory/a/b/c/d/e/f/deep.md", "tucked away secret\n")
    write(src, "shop/.claude/memory/a/b/c/d/e/shallow.md", "kept secret\n")
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx:
        assert [h.path for h in idx.search("secret")] == ["shop/.claude/memory/a/b/c/d/e/shallow.md"]
        assert "deeper than 6 folders" in str(idx.reconcile().skipped)
        read = call_tool(idx, "memory_read", {"path": "shop/.claude/memory/a/b/c/d/e/shallow.md"})
        assert not read.is_error and read.text == "kept secret\n"
        for path in ("shop/.claude/memory/a/b/c/d/e/f/deep.md", str(deep)):
            refused = call_tool(idx, "memory_read", {"path": path})
            assert refused.is_error and "tucked" not in refused.text, refused.text


def test_scope_ids_listed_to_the_model_are_bounded_in_size(tmp_path):
    """memory_search's description lists the scope ids indexed now, and so does the error for an unknown one:
    61 project folders named with 250 control bytes each made that list 60,000 characters, in the model's
    context at every session. An id whose shown form is too long is left out (its hits still name it)."""
    src = tmp_path / "projects"
    for i in range(61):
        write(src, f"{chr(65 + i % 26)}{chr(1) * 250}{i}/memory/n.md", "note\n")
    write(src, "-home-me-shop/memory/n.md", "real note\n")
    with MemoryIndex(Root("claude", str(src)), tmp_path / "db") as idx:
        listed = search_tool(idx).input_schema["properties"]["scopeId"]["description"]
        assert "-home-me-shop (cc)" in listed and len(listed) < 2_000, len(listed)
        unknown = call_tool(idx, "memory_search", {"query": "note", "scopeId": "nope"})
        assert unknown.is_error and "-home-me-shop" in unknown.text and len(unknown.text) < 2_000, len(unknown.text)
        # A hit still names such a project, and scopeId finds it.
        hits = call_tool(idx, "memory_search", {"query": "note", "limit": 50}).data["results"]
        hit = next(h for h in hits if h["scope_id"][1:3] == "\x01\x01")
        again = call_tool(idx, "memory_search", {"query": "note", "scopeId": hit["scope_id"]})
        assert [h["path"] for h in again.data["results"]] == [hit["path"]]


def test_scope_id_takes_back_the_quoted_id_of_any_folder_name(tmp_path):
    """A hit's label quotes a scope id that is not plain, and scopeId takes that form back: a folder name of 255
    bytes, each shown \\xNN (a byte that is not UTF-8, spelled \\xNN, then quoted: 5 characters), was over
    scopeId's 1,000 characters and refused, so that project could not be searched alone."""
    src = tmp_path / "projects"
    for name in (b"p" + b"\x01" * 254, b"q" + b"\xff" * 254, b"r[" + b"\xff" * 253):
        folder = os.path.join(os.fsencode(src), name, b"memory")
        os.makedirs(folder)
        with open(os.path.join(folder, b"n.md"), "w") as f:
            f.write("lone note\n")
    with MemoryIndex(Root("claude", str(src)), tmp_path / "db") as idx:
        found = call_tool(idx, "memory_search", {"query": "note"})
        labels = re.findall(r"\[cc/(.*?) · free\]", found.text)
        assert len(labels) == 3 and min(map(len, labels)) > 1_000 and max(map(len, labels)) > 1_250
        for label, hit in zip(labels, found.data["results"]):
            alone = call_tool(idx, "memory_search", {"query": "note", "scopeId": label})
            assert not alone.is_error, alone.text
            assert [h["path"] for h in alone.data["results"]] == [hit["path"]]


@pytest.mark.parametrize("link, path, shown", [
    ("../victim", "evil/memory/top.md", "project top note"),  # a project's memory folder linked to a project
    ("..", "evil/memory/README.md", "root readme"),  # ... to the root: any Markdown file in it
    ("..", "evil/memory/victim/top.md", "project top note"),
])
def test_memory_read_refuses_what_a_memory_link_to_no_memory_folder_reaches(tmp_path, link, path, shown):
    """In a claude root, the walk enters a project's `memory` only when it resolves to a project's memory folder
    (`memory -> ..` is passed over); memory_read followed such a link and read any Markdown file of the root, a
    project's own top-level notes or the root's README, none of them memory nor ever indexed."""
    src = tmp_path / "projects"
    write(src, "victim/top.md", "project top note\n")
    write(src, "README.md", "root readme\n")
    write(src, "victim/memory/m.md", "memory note\n")
    (src / "evil").mkdir()
    (src / "evil" / "memory").symlink_to(link)
    with MemoryIndex(Root("claude", str(src)), tmp_path / "db") as idx:
        assert list(idx.reconcile().added) == ["victim/memory/m.md"]
        for given in (path, str(src / path)):
            refused = call_tool(idx, "memory_read", {"path": given})
            assert refused.is_error and shown not in refused.text, refused.text
        assert call_tool(idx, "memory_read", {"path": "victim/memory/m.md"}).text == "memory note\n"
        assert "no memory file at" in call_tool(idx, "memory_read", {"path": "nobody/memory/m.md"}).text


@pytest.mark.skipif(sys.platform != "linux", reason="the watcher runs on inotify")
def test_many_hard_linked_notes_do_not_stall_the_watcher(tmp_path):
    """The watcher rechecks hard-linked notes at every query's cookie, and forgot what each path of a batch
    changed by filtering its sets once per path: with 6,000 notes each linked under a second name, every query
    waited out its sync timeout (the watcher took a minute a batch) and the watcher never caught up. Now the
    sets are filtered once a batch: a query is answered by the watcher, well within its timeout."""
    src = tmp_path / "notes"
    src.mkdir()
    for i in range(6000):
        note = write(src, f"n{i:04}.md", f"note {i}\n")
        os.link(note, src / f"z{i:04}.md")
    with MemoryIndex(src, tmp_path / "db", settings=Settings(sync_timeout=10.0)) as idx:
        idx.reconcile()
        with Watcher(idx):
            for word in ("pelican", "heron", "egret"):
                write(src, f"{word}.md", f"{word}\n")
                found = idx.search_result(word, 5)
                assert found.freshness.via == "watcher", found.freshness
                assert [h.path for h in found.hits] == [f"{word}.md"]


def _costly_chain(folder, end: str, hops: int = 39) -> str:
    """A chain of ``hops`` links to ``end``, each target padded to PATH_MAX with "d/../": the name of its head."""
    (folder / "d").mkdir(exist_ok=True)
    pad, stem = "d/../" * 800, end[:-3]
    for i in range(hops):
        os.symlink(pad + end, folder / f"{stem}-{i:02}.md")
        end = f"{stem}-{i:02}.md"
    return end


def test_links_to_a_chain_of_padded_links_cost_no_query_seconds(tmp_path, monkeypatch):
    """realpath lstats a link's target a name at a time: each hop of a chain padded to PATH_MAX with "d/../" cost
    800 lookups, so 300 links to a chain of 39 such hops cost every query 37 s (a broken chain as much, counted
    first). The kernel resolves what it can (in C, 3 ms for the whole chain), and a resolution left to Python
    looks up 2,000 names at most."""
    root = tmp_path / "notes"
    write(root, "real.md", "okapi at the end\n")
    good, broken = _costly_chain(root, "real.md"), _costly_chain(root, "gone.md")
    for i in range(60):
        os.symlink(good, root / f"e{i:03}.md")
        os.symlink(broken, root / f"f{i:03}.md")
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        looked_up = []  # the names a query's walk looks up in Python (os.lstat, os.readlink), not its time
        for name in ("lstat", "readlink"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, lambda *a, _real=real, **k: looked_up.append(1) or _real(*a, **k))
        found = idx.search_result("okapi", 5)
        monkeypatch.undo()
        assert found.hits and found.hits[0].snippet == "<<okapi>> at the end\n"
        # At most MAX_LOOKUPS for each of the 198 links resolved (199,000 now; 7,755,000 before).
        assert len(looked_up) <= MAX_LOOKUPS * 200, len(looked_up)
        read = call_tool(idx, "memory_read", {"path": "e000.md"})
        assert read.text == "okapi at the end\n", read.text
        assert call_tool(idx, "memory_read", {"path": "f000.md"}).is_error
