"""Hostile memory files and tool calls, a fourth audit (session 51): each test failed before its fix."""

from conftest import write
from memsearch import MemoryIndex, Root
from memsearch.tool import call_tool


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
