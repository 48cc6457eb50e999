"""Loose ends of the fourth audit, tied in session 52: each test failed before its fix."""

import errno
import json
import os
import re
import shlex
import subprocess

import pytest

from conftest import line, memsearch_exe, run_memsearch, transcript, write
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


def _open(command: str, common: list) -> subprocess.CompletedProcess:
    """Run an "open a session" command as a shell would, against the test's transcripts."""
    shell = f"{shlex.quote(memsearch_exe())}{command.removeprefix('memsearch')} {shlex.join(common)}"
    return subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("claimer", ["S", "agent-1"])
def test_the_open_a_session_command_opens_the_hits_own_project_folder(tmp_path, claimer):
    """A session is an id in one project folder, and a hit from a second folder holding the id ended with a command
    opening the id alone: an error when both folders have a <id>.jsonl, the owner's session for another's claim.
    It names the hit's --project where the id is shared; other hints read as before."""
    hroot = tmp_path / "projects"
    transcript(hroot, [line("user", "owner talks about pelican deploys", session="S")], session="S",
               project="-home-u-alpha")
    transcript(hroot, [line("user", "claimer says pelican secret in beta", session="S")], session=claimer,
               project="-home-u-beta")
    transcript(hroot, [line("user", "a lone pelican in gamma")], session="T", project="-home-u-gamma")
    common = ["--history-root", str(hroot), "--db", str(tmp_path / "db")]
    # (A sub-agent's lines rank their session where no session's own course matches the question.)
    words = ["pelican", "beta"] if claimer == "S" else ["secret", "beta"]
    done = run_memsearch("history", *words, *common)
    assert done.returncode == 0 and done.stdout.startswith("session S  [-home-u-beta]"), done.stdout
    command = done.stdout.splitlines()[-1].removeprefix("open a session: ")
    given = shlex.join(common)  # the folders and index searched, repeated
    assert command == f"memsearch session-context S --query '{' '.join(words)}' --project -home-u-beta {given}"
    opened = _open(command, common)
    assert opened.returncode == 0 and "owner" not in opened.stdout, opened.stdout + opened.stderr
    if claimer == "S":  # (a sub-agent's lines, the claim's, are never read as a session's own)
        assert "  claimer says pelican secret in beta\n" in opened.stdout
    hits = json.loads(run_memsearch("history", "pelican", "--messages", "--json", *common).stdout)["results"]
    hints = {hit["project"]: hit["open"] for hit in hits}
    assert hints == {"-home-u-alpha": f"memsearch session-context S --query pelican --project -home-u-alpha {given}",
                     "-home-u-beta": f"memsearch session-context S --query pelican --project -home-u-beta {given}",
                     "-home-u-gamma": f"memsearch session-context T --query pelican {given}"}
    assert "  owner talks about pelican deploys\n" in _open(hints["-home-u-alpha"], common).stdout
