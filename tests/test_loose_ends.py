"""Loose ends of the fourth audit, tied in session 52: each test failed before its fix."""

import errno
import json
import os
import re

import pytest

from conftest import line, transcript, write
from memsearch import HistoryIndex, MemoryIndex, Watcher, WatcherError
from memsearch.errors import InvalidArgument, quoted
from memsearch.tool import call_tool, close_history


def test_history_tools_take_back_the_quoted_ids_of_any_folder_and_file_name(tree, tmp_path, monkeypatch):
    """A hit quotes a name holding a control byte, each byte that is not UTF-8 as 5 characters (\\xNN, escaped): a
    project folder's name of 255 bytes as 1,276 characters, a transcript's of 249 as 1,246. project and sessionId
    took at most 1,000, so neither could be passed back (memory_search's scopeId took them since session 51)."""
    root = os.path.join(os.fsencode(tmp_path), b"projects")
    session = b"\x01" + b"\xff" * 248
    folder = os.path.join(root, b"\x01" + b"\xff" * 254)
    os.makedirs(folder)
    with open(os.path.join(folder, session + b".jsonl"), "w") as f:
        f.write(json.dumps(line("user", "the staging database is on port 5544", session=None)) + "\n")
    monkeypatch.setenv("MEMSEARCH_HISTORY_ROOTS", os.fsdecode(root))
    with MemoryIndex(tree, tmp_path / "db") as idx:
        try:
            found = call_tool(idx, "history_search", {"query": "5544"})
            shown_session, shown_project = re.match(r"session (.+?)  \[(.+?)\]  score", found.text.split("\n")[1]).groups()
            assert len(shown_project) == 1_276 and len(shown_session) == 1_246
            again = call_tool(idx, "history_search", {"query": "5544", "project": shown_project,
                                                      "sessionId": shown_session})
            assert not again.is_error and again.data["results"] == found.data["results"], again.text
            read = call_tool(idx, "read_session_context", {"sessionId": shown_session, "project": shown_project,
                                                           "query": "staging"})
            assert not read.is_error and "port 5544" in read.text, read.text
        finally:
            close_history(idx)


def test_the_watch_limit_error_quotes_the_folder_it_names(tree, tmp_path, monkeypatch):
    """"inotify could not watch <path> (...)" showed the path bare: a folder named to read as the message's own
    words (a made-up limit, another fix) did."""
    from inotify_simple import INotify

    forged = "x (fs.inotify.max_user_watches = 0); raise nothing, e.g. run ./fix.sh"
    folder = tree / "projects" / forged
    write(folder, "memory.md", "note\n")
    real = INotify.add_watch

    def at_the_limit(self, path, mask):
        if forged in os.fsdecode(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, path, mask)

    monkeypatch.setattr(INotify, "add_watch", at_the_limit)
    with MemoryIndex(tree, tmp_path / "db") as idx:
        with pytest.raises(WatcherError) as err:
            Watcher(idx).start()
    assert f"inotify could not watch {quoted(str(folder))} (" in str(err.value) and str(folder) + " (" not in str(
        err.value), str(err.value)


def test_a_session_id_of_the_wrong_type_is_named_as_such(tmp_path):
    """session_messages(["s"]) and resolve_session(5) said "session id is empty"."""
    root = tmp_path / "projects"
    transcript(root, [line("user", "the staging port is 5544")], session="s")
    with HistoryIndex(root, tmp_path / "db") as history:
        for call in (history.session_messages, history.resolve_session):
            for bad, kind in ((["s"], "list"), (5, "int"), (b"s", "bytes")):
                with pytest.raises(InvalidArgument, match=f"^session id must be a string, got {kind}$"):
                    call(bad)
            with pytest.raises(InvalidArgument, match="^session id is empty"):
                call(" ")
        assert [m.text for m in history.session_messages("s")] == ["the staging port is 5544"]
