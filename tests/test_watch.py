"""The live watcher (issue 6): every kind of change is seen by the next query
through the cookie handshake, no walk; a dead, stopped, overflowed or
failing watcher makes queries walk instead, and they stay correct.

No test asserts a duration. Waits are bounded by generous deadlines only so
a broken watcher fails the test instead of hanging it, and queries get a
long cookie timeout (config sync_timeout) so a loaded machine cannot turn a
watcher answer into a walk.
"""

import contextlib
import errno
import gc
import json
import logging
import os
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from inotify_simple import INotify, parse_events

from conftest import HEAVY, imports_of, write
from memsearch import MemoryIndex, Root, Watcher, WatcherError
from memsearch import event_source, freshness

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="these tests drive the watcher on Linux inotify")

DEADLINE_S = 120  # only ever reached when something is broken


def eventually(condition, what: str):
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


@pytest.fixture
def config(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text("sync_timeout = 60\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(path))
    return path


@pytest.fixture
def watched(tree, tmp_path, config):
    with MemoryIndex(tree, tmp_path / "index.db") as idx:
        with Watcher(idx) as watcher:
            yield idx, watcher


def fresh(idx, text):
    """Paths of the hits, from a query that the watcher made fresh."""
    result = idx.search_result(text, floor=0.0)
    assert result.freshness.via == "watcher", result.freshness
    return sorted(h.path for h in result.hits)


def stored(idx, like="%"):
    return sorted(p for (p,) in idx.conn.execute("SELECT path FROM memory_fts WHERE path LIKE ?", (like,)))


# -- every kind of change, seen by the next query ------------------------------------


def test_create_edit_delete(watched, tree):
    idx, _ = watched
    assert fresh(idx, "pgbouncer") == ["projects/shop/memory-db.md"]
    write(tree, "projects/shop/memory-cache.md", "Redis caches the cart for ten minutes.\n")
    assert fresh(idx, "redis") == ["projects/shop/memory-cache.md"]
    write(tree, "projects/shop/memory-cache.md", "Memcached caches the cart now.\n")
    assert fresh(idx, "redis") == []
    assert fresh(idx, "memcached") == ["projects/shop/memory-cache.md"]
    (tree / "projects/shop/memory-cache.md").unlink()
    assert fresh(idx, "memcached") == []
    assert "projects/shop/memory-cache.md" not in stored(idx)


def test_same_size_edit_in_the_same_timestamp_tick(watched, tree):
    """The fingerprint cannot tell these versions apart: the racy flag and
    the event together must."""
    idx, _ = watched
    path = write(tree, "global/user/tick.md", "alpha walrus\n")
    tick = time.time_ns() + 60_000_000_000  # a future mtime: the row is racy whatever the machine's speed
    os.utime(path, ns=(tick, tick))
    assert fresh(idx, "alpha") == ["global/user/tick.md"]
    path.write_text("gamma walrus\n")
    os.utime(path, ns=(tick, tick))
    assert fresh(idx, "gamma") == ["global/user/tick.md"]
    assert fresh(idx, "alpha") == []


def test_renames_and_moves_in_and_out(watched, tree, tmp_path):
    idx, _ = watched
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(tree / "projects/shop/memory-db.md", tree / "projects/shop/memory-database.md")
    assert fresh(idx, "pgbouncer") == ["projects/shop/memory-database.md"]
    os.rename(tree / "projects/shop/memory-database.md", outside / "db.md")
    assert fresh(idx, "pgbouncer") == []
    write(outside, "incoming.md", "An okapi note written elsewhere.\n")
    os.rename(outside / "incoming.md", tree / "global/user/okapi.md")
    assert fresh(idx, "okapi") == ["global/user/okapi.md"]
    os.rename(tree / "global/user/okapi.md", tree / "global/user/okapi.txt")  # no longer Markdown
    assert fresh(idx, "okapi") == []


@pytest.mark.parametrize("temp", [".memory-db.md.swp", "memory-db.md.tmp.4913", "tmp-save"])
def test_atomic_saves(watched, tree, temp):
    """Editors write a temporary file and rename it over the note."""
    idx, _ = watched
    write(tree, f"projects/shop/{temp}", "PostgreSQL moved to port 6543 behind pgcat.\n")
    os.replace(tree / f"projects/shop/{temp}", tree / "projects/shop/memory-db.md")
    assert fresh(idx, "pgcat") == ["projects/shop/memory-db.md"]
    assert fresh(idx, "pgbouncer") == []
    assert not [p for p in stored(idx) if temp in p]


def test_backup_rename_then_write(watched, tree):
    """vim without backupcopy: the note is renamed to a backup, then written anew."""
    idx, _ = watched
    os.rename(tree / "sessions/s1/notes.md", tree / "sessions/s1/notes.md~")
    write(tree, "sessions/s1/notes.md", "Session scratch: the webhook secret rotates monthly.\n")
    assert fresh(idx, "secret") == ["sessions/s1/notes.md"]
    assert fresh(idx, "rounding") == ["sessions/s1/checkpoint.md", "sessions/s1/tasks/T1/progress.md"]
    os.unlink(tree / "sessions/s1/notes.md~")


def test_new_directories_and_files_made_at_once(watched, tree):
    idx, _ = watched
    for i in range(5):  # each directory made and filled before the watcher can watch it
        write(tree, f"projects/new{i}/deep/er/memory-x.md", f"Nested note number{i} about zebras.\n")
    os.makedirs(tree / "sessions/s2/tasks/T9")
    write(tree, "sessions/s2/tasks/T9/progress.md", "T9 progress: zebras fed.\n")
    assert fresh(idx, "zebras") == sorted([f"projects/new{i}/deep/er/memory-x.md" for i in range(5)]
                                          + ["sessions/s2/tasks/T9/progress.md"])
    write(tree, "projects/new0/deep/er/later.md", "A later zebras note in a watched new folder.\n")
    assert "projects/new0/deep/er/later.md" in fresh(idx, "zebras")


def test_directory_moved_in_is_walked(watched, tree, tmp_path):
    idx, _ = watched
    outside = tmp_path / "elsewhere"
    for i in range(4):
        write(outside, f"p2/sub{i}/memory-n.md", f"Imported lemur note {i}.\n")
    os.rename(outside / "p2", tree / "projects/p2")
    assert fresh(idx, "lemur") == [f"projects/p2/sub{i}/memory-n.md" for i in range(4)]
    write(tree, "projects/p2/sub0/memory-m.md", "One more lemur, in the moved folder.\n")
    assert "projects/p2/sub0/memory-m.md" in fresh(idx, "lemur")


def test_directory_removed_or_moved_out_drops_all_its_rows(watched, tree, tmp_path):
    idx, _ = watched
    for i in range(3):
        write(tree, f"projects/gone/n{i}/memory.md", f"Doomed ibex note {i}.\n")
        write(tree, f"projects/away/n{i}/memory.md", f"Departing yak note {i}.\n")
    write(tree, "projects/gone-not/memory.md", "A sibling ibex whose name shares the prefix.\n")
    assert len(fresh(idx, "ibex")) == 4 and len(fresh(idx, "yak")) == 3
    shutil.rmtree(tree / "projects/gone")
    os.rename(tree / "projects/away", tmp_path / "away")
    assert fresh(idx, "ibex") == ["projects/gone-not/memory.md"]
    assert fresh(idx, "yak") == []
    assert stored(idx, "projects/gone/%") == [] and stored(idx, "projects/away/%") == []


def test_directory_renamed_within_the_tree(watched, tree):
    idx, _ = watched
    os.rename(tree / "sessions/s1", tree / "sessions/s1-archived")
    assert fresh(idx, "webhook") == ["sessions/s1-archived/checkpoint.md", "sessions/s1-archived/tasks/T1/notes.md"]
    assert stored(idx, "sessions/s1/%") == []
    write(tree, "sessions/s1-archived/tasks/T1/notes.md", "T1 notes: webhook retries now five days.\n")
    assert fresh(idx, "five") == ["sessions/s1-archived/tasks/T1/notes.md"]


def test_symlinked_note_follows_its_target(watched, tree):
    idx, _ = watched
    os.symlink(tree / "projects/shop/memory-db.md", tree / "global/user/db-link.md")
    assert fresh(idx, "pgbouncer") == ["global/user/db-link.md", "projects/shop/memory-db.md"]
    write(tree, "projects/shop/memory-db.md", "PostgreSQL now behind odyssey.\n")
    assert fresh(idx, "odyssey") == ["global/user/db-link.md", "projects/shop/memory-db.md"]
    (tree / "global/user/db-link.md").unlink()
    assert fresh(idx, "odyssey") == ["projects/shop/memory-db.md"]


def test_several_roots_of_several_kinds(tmp_path, config):
    mimo, claude = tmp_path / "mimo", tmp_path / "claude"
    write(mimo, "global/user/a.md", "mimo tapir\n")
    write(claude, "projects/-home-me-app/memory/b.md", "claude tapir\n")
    roots = [Root("mimo", str(mimo), "m"), Root("claude", str(claude))]
    with MemoryIndex(roots=roots, db_path=tmp_path / "db") as idx, Watcher(idx):
        assert fresh(idx, "tapir") == ["cc:-home-me-app/memory/b.md", "m:global/user/a.md"]
        write(claude, "projects/-home-me-app/transcript.md", "claude tapir outside memory: not indexed\n")
        write(claude, "projects/-home-me-new/memory/c.md", "a new project's tapir\n")
        write(mimo, "projects/x/memory.md", "another mimo tapir\n")
        assert fresh(idx, "tapir") == ["cc:-home-me-app/memory/b.md", "cc:-home-me-new/memory/c.md",
                                       "m:global/user/a.md", "m:projects/x/memory.md"]
        shutil.rmtree(claude / "projects/-home-me-app")
        assert fresh(idx, "tapir") == ["cc:-home-me-new/memory/c.md", "m:global/user/a.md", "m:projects/x/memory.md"]


# -- the protocol itself -----------------------------------------------------------------


def test_cookies_are_never_indexed_and_always_removed(watched, tree):
    idx, _ = watched
    for _ in range(5):
        fresh(idx, "pgbouncer")
    assert not [name for name in os.listdir(tree) if name.startswith(".")]
    assert not stored(idx, "%cookie%")


def test_a_burst_of_writes_costs_one_batch(tree, tmp_path, config):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        # Nothing is written on a timer here: only the cookie flushes.
        with Watcher(idx, debounce=3600, max_delay=3600) as watcher:
            before = watcher.batches
            for i in range(40):
                write(tree, f"projects/burst/n{i}.md", f"burst note {i} quagga\n")
            assert len(fresh(idx, "quagga")) == 10
            assert idx.search_result("quagga", limit=100).hits.__len__() == 40
            assert watcher.batches == before + 1


def test_database_inside_a_root_is_refused(tree):
    with MemoryIndex(tree, tree / ".cache" / "index.db") as idx:
        with pytest.raises(WatcherError, match="inside the watched root"):
            Watcher(idx).start()


def _open_connections() -> int:
    """SQLite connections alive in this process and not closed."""
    count = 0
    for obj in gc.get_objects():
        if isinstance(obj, sqlite3.Connection):
            try:
                obj.total_changes
                count += 1
            except sqlite3.ProgrammingError:  # closed
                pass
    return count


def test_one_watcher_per_root_and_index(watched, tree, tmp_path):
    idx, _ = watched
    with MemoryIndex(tree, tmp_path / "index.db") as other:
        other.status()  # its own connection open, as a host's would be
        before = _open_connections()
        with pytest.raises(WatcherError, match="another watcher") as refused:
            Watcher(other).start()
        # The refused watcher (kept alive by the traceback) holds no open
        # connection: Python 3.13 warns about each one left to the collector.
        assert refused.value and _open_connections() == before
    with MemoryIndex(tree, tmp_path / "elsewhere.db") as separate, Watcher(separate):
        assert fresh(separate, "pgbouncer") == ["projects/shop/memory-db.md"]


# -- never silently stale ------------------------------------------------------------------


def test_without_a_watcher_queries_walk_and_status_says_why(tree, tmp_path, config):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        result = idx.search_result("pgbouncer")
        assert result.freshness.via == "walk" and result.freshness.reason == "no watcher is running"
        status = idx.status()
        assert status["watcher"] == "none" and status["freshness"] == "walk"
        assert status["fallback_reason"] == "no watcher is running"


def test_status_of_a_running_watcher(watched):
    idx, watcher = watched
    status = idx.status()
    assert status["watcher"] == "ready" and status["watcher_pid"] == os.getpid()
    assert status["freshness"] == "watcher" and status["fallback_reason"] is None
    assert status["cookie_ms"] >= 0


def test_a_stopped_watcher_sends_queries_back_to_the_walk(tree, tmp_path, config):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        Watcher(idx).start().stop()
        write(tree, "global/user/after.md", "written after the watcher stopped: narwhal\n")
        result = idx.search_result("narwhal")
        assert result.freshness.via == "walk" and "stopped" in result.freshness.reason
        assert [h.path for h in result.hits] == ["global/user/after.md"]
        assert idx.status()["watcher"] == "stopped"


def test_lost_events_and_an_overflow_make_the_watcher_rescan(watched, tree, monkeypatch):
    idx, watcher = watched
    dropped = []  # what an overflowing kernel queue does: events lost
    monkeypatch.setattr(watcher, "_on_event", lambda followed, kind, path, is_dir: dropped.append(path))
    write(tree, "global/user/lost.md", "an event that never arrives: quokka\n")
    (tree / "README.md").unlink()
    eventually(lambda: str(tree / "README.md") in dropped, "the events lost")
    monkeypatch.undo()
    assert "global/user/lost.md" not in stored(idx) and "README.md" in stored(idx)  # stale, for now
    rescans = watcher.rescans
    # What the kernel reads out when its queue overflowed: watch descriptor -1, IN_Q_OVERFLOW.
    watcher._sources[0]._dispatch(parse_events(struct.pack("iIII", -1, 0x4000, 0, 0)))
    eventually(lambda: watcher.rescans > rescans and watcher.state == "ready", "a rescan after the overflow")
    assert watcher.overflows == 1
    assert "global/user/lost.md" in stored(idx) and "README.md" not in stored(idx)
    assert fresh(idx, "quokka") == ["global/user/lost.md"]
    assert idx.status()["watcher_overflows"] == 1


@pytest.mark.slow
def test_a_burst_that_overflows_the_kernel_queue_leaves_no_query_stale(watched, tree, monkeypatch):
    """More events than fs.inotify.max_queued_events while the reader is held
    up: the kernel drops the rest and says so; the watcher rescans, and the
    next query finds every file of the burst."""
    idx, watcher = watched
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    source = watcher._sources[0]
    release, real = threading.Event(), source._dispatch
    monkeypatch.setattr(source, "_dispatch", lambda events: (release.wait(DEADLINE_S), real(events)))
    write(tree, "global/user/first.md", "the event that holds the reader up\n")
    count = limit // 2 + 100  # each file queues a create, a modify and a close
    for i in range(count):
        (tree / "global/user" / f"burst-{i}.md").write_text(f"burst note {i}" + (" ocelot" if i == count - 1 else "") + "\n")
    release.set()
    eventually(lambda: watcher.overflows >= 1 and watcher.state == "ready", "a rescan after the kernel's overflow")
    # The rest of the burst may overflow the queue again after that rescan (a query then walks, fresh
    # too): the watcher must come to vouch for the index again, with every file of the burst in it.
    eventually(lambda: idx.search_result("ocelot").freshness.via == "watcher", "the watcher vouching again")
    assert fresh(idx, "ocelot") == [f"global/user/burst-{count - 1}.md"]
    assert len(stored(idx, "global/user/burst-%")) == count


def test_a_failing_heartbeat_neither_spins_nor_puts_the_retry_off(watched, tree, monkeypatch):
    """While the watcher's heartbeat cannot be written (a full disk), it is
    tried a heartbeat later, not again at once in a loop, and the retry
    comes when it is due; once the disk frees, the watcher is ready again."""
    idx, watcher = watched
    tries = []

    def full(*args, **kwargs):
        tries.append(watcher.state)
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(freshness.WatcherRows, "beat", full)
    eventually(lambda: watcher.restarts >= 1, "a retry after the failing heartbeat")
    # Seconds of heartbeats at one a second, and the retry's own: a handful
    # (a loop that spins makes a hundred thousand, and never retries).
    assert len(tries) < 50, len(tries)
    monkeypatch.undo()
    eventually(lambda: watcher.state == "ready", "the watcher ready once the disk frees")
    write(tree, "global/user/freed.md", "written once the disk freed: tapir\n")
    assert fresh(idx, "tapir") == ["global/user/freed.md"]


def test_the_watcher_follows_its_index_through_a_rebuild(watched, tree, tmp_path, monkeypatch):
    """A damaged index met by the watcher's reconcile is set aside and built
    again from the files, with a new connection: the watcher's rows follow
    it (before, they kept the closed one and the watcher failed for good)."""
    idx, watcher = watched
    from memsearch import index as index_mod

    real, damaged = index_mod.reconcile_paths, []

    def damaged_once(*args, **kwargs):
        if not damaged:
            damaged.append(True)
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real(*args, **kwargs)

    beat, beats = freshness.WatcherRows.beat, []

    def counted(rows, *args, **kwargs):
        result = beat(rows, *args, **kwargs)
        beats.append(bool(damaged))  # written, and after the rebuild?
        return result

    monkeypatch.setattr(index_mod, "reconcile_paths", damaged_once)
    monkeypatch.setattr(freshness.WatcherRows, "beat", counted)
    write(tree, "global/user/rebuilt.md", "written as the index is rebuilt: okapi\n")
    eventually(lambda: beats.count(True) >= 2, "heartbeats written into the rebuilt index")
    # Its rows found gone, it reconciles everything before it vouches again.
    eventually(lambda: watcher.state == "ready", "the watcher ready on the rebuilt index")
    assert list(tmp_path.glob("index.db.bad-*"))
    with MemoryIndex(tree, tmp_path / "index.db") as other:  # a new query process: the rebuilt file
        assert fresh(other, "okapi") == ["global/user/rebuilt.md"]



def test_an_index_rewritten_for_other_roots_is_not_vouched_for(tmp_path, config):
    """One --db, two sets of roots (an MCP server's watcher follows a and b,
    `memsearch index --root a` runs once): that reconcile drops b's rows and
    names a's paths as a lone root's. A query of a and b then trusted the
    watcher and missed b's files; a query of a alone trusted it too."""
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "global/user/x.md", "a quokka in a\n")
    write(b, "global/user/y.md", "a quokka in b\n")
    db = tmp_path / "index.db"
    both = ["a:global/user/x.md", "b:global/user/y.md"]
    with MemoryIndex(roots=[a, b], db_path=db) as idx, Watcher(idx) as watcher:
        assert fresh(idx, "quokka") == both
        with MemoryIndex(a, db) as alone:
            alone.reconcile()  # as `memsearch index --root a` does
            result = alone.search_result("quokka")
            assert result.freshness.via == "walk" and [h.path for h in result.hits] == ["global/user/x.md"]
        result = idx.search_result("quokka", floor=0.0)
        assert sorted(h.path for h in result.hits) == both
        # Both of alone's walks disown the watcher; it may find its rows gone
        # at two heartbeats, and rescan twice: wait for it to vouch again.
        eventually(lambda: idx.search_result("quokka").freshness.via == "watcher", "the watcher vouched again")
        assert watcher.rescans >= 2
        assert fresh(idx, "quokka") == both


def test_a_hard_linked_file_written_through_its_link_outside_the_root(tree, tmp_path, config):
    """inotify reports a write to the watches of the path written through:
    a memory file hard linked from outside the root, written there, changed
    with no event under the root, and the watcher vouched for its old text."""
    outside = write(tmp_path / "elsewhere", "f.md", "a narwhal, first text\n")
    os.link(outside, tree / "global/user/linked.md")
    with MemoryIndex(tree, tmp_path / "index.db") as idx, Watcher(idx):
        assert fresh(idx, "narwhal") == ["global/user/linked.md"]
        outside.write_text("a walrus, second text\n")
        assert fresh(idx, "narwhal") == []
        assert fresh(idx, "walrus") == ["global/user/linked.md"]
        # One linked while watched, then written under the root (an event), then outside.
        later = write(tree, "global/user/later.md", "a beluga\n")
        os.link(later, tmp_path / "elsewhere/later.md")
        write(tree, "global/user/later.md", "a beluga, and an orca\n")
        assert fresh(idx, "orca") == ["global/user/later.md"]
        (tmp_path / "elsewhere/later.md").write_text("a dugong now\n")
        assert fresh(idx, "dugong") == ["global/user/later.md"]


def test_a_repos_memory_file_hard_linked_from_outside_and_written_there(tmp_path, config):
    """The same in a repos root, whose hard links were left to its walk, which no event under the root ran: the
    watcher vouched for the old text for ever."""
    src = tmp_path / "src"
    note = write(src, "shop/.claude/memory/db.md", "the shop database keeps a narwhal\n")
    os.link(note, tmp_path / "elsewhere.md")
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        assert fresh(idx, "narwhal") == ["shop/.claude/memory/db.md"]
        (tmp_path / "elsewhere.md").write_text("the shop database keeps a walrus\n")
        assert fresh(idx, "walrus") == ["shop/.claude/memory/db.md"]
        later = write(src, "shop/.claude/memory/later.md", "a beluga\n")
        assert fresh(idx, "beluga") == ["shop/.claude/memory/later.md"]
        os.link(later, tmp_path / "later.md")  # linked while watched
        assert fresh(idx, "beluga") == ["shop/.claude/memory/later.md"]
        (tmp_path / "later.md").write_text("a dugong now\n")
        assert fresh(idx, "dugong") == ["shop/.claude/memory/later.md"]


def _restarted(watcher, rescans: int) -> bool:
    """Restarted and ready after the restart's own rescan: the count of restarts moves before the state does, so
    "ready" beside it alone may still be the state from before the restart. Restarted once or more: a restart that
    looks before the test makes the root again fails, and the retry is a second (CI saw it on Python 3.10)."""
    return watcher.restarts >= 1 and watcher.rescans > rescans and watcher.state == "ready"


def test_a_root_moved_away_and_made_again_is_followed(watched, tree, tmp_path):
    """Moving the root folder away reports no event on its path: the
    watcher kept following the moved folder, and every query waited for a
    cookie it never answered (sync_timeout), then walked."""
    idx, watcher = watched
    rescans = watcher.rescans
    os.rename(tree, tmp_path / "moved")
    write(tree, "global/user/anew.md", "the root made again: a pangolin\n")
    eventually(lambda: _restarted(watcher, rescans), "the watcher following the new folder")
    assert fresh(idx, "pangolin") == ["global/user/anew.md"]
    write(tree, "global/user/next.md", "then a gecko\n")
    assert fresh(idx, "gecko") == ["global/user/next.md"]


def test_an_index_deleted_under_a_running_watcher(watched, tree, tmp_path):
    """README: the index can be deleted at any time. The watcher and a
    long-lived index kept their connections on the deleted file, and from
    then on every query walked ("no watcher is running")."""
    idx, watcher = watched
    assert fresh(idx, "pgbouncer") == ["projects/shop/memory-db.md"]
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{tmp_path / 'index.db'}{suffix}")
    eventually(lambda: idx.search_result("pgbouncer").freshness.via == "watcher", "the watcher vouching again")
    write(tree, "global/user/after.md", "after the deletion: a tapir\n")
    assert fresh(idx, "tapir") == ["global/user/after.md"]
    with MemoryIndex(tree, tmp_path / "index.db") as other:  # a new process: the file at the path
        assert fresh(other, "tapir") == ["global/user/after.md"]

def test_a_dead_event_source_is_restarted(watched, tree):
    idx, watcher = watched
    rescans = watcher.rescans
    os.write(watcher._sources[0]._wake[1], b"x")  # its thread ends, as on an unexpected error
    eventually(lambda: _restarted(watcher, rescans), "a restarted event source")
    write(tree, "global/user/later.md", "after the restart: axolotl\n")
    assert fresh(idx, "axolotl") == ["global/user/later.md"]
    assert idx.status()["watcher_restarts"] == 1


def test_watch_limit_too_low_is_a_clear_error(tree, tmp_path, config, monkeypatch):
    """The kernel refuses the watch past its limit (ENOSPC): the error names the limit and how to raise it."""
    real = INotify.add_watch

    def add_watch(self, path, mask):  # as the kernel at fs.inotify.max_user_watches = 3
        if getattr(self, "_test_watches", 0) >= 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._test_watches = getattr(self, "_test_watches", 0) + 1
        return real(self, path, mask)

    monkeypatch.setattr(INotify, "add_watch", add_watch)
    monkeypatch.setattr(event_source, "max_user_watches", lambda: 3)
    with MemoryIndex(tree, tmp_path / "db") as idx:
        with pytest.raises(WatcherError, match="max_user_watches = 3.*sysctl"):
            Watcher(idx).start()
        result = idx.search_result("pgbouncer")
        assert result.freshness.via == "walk" and result.hits
        status = idx.status()
        assert status["watcher"] == "stopped" and "max_user_watches" in status["watcher_error"]


def test_without_inotify_the_watcher_refuses_in_one_line_and_queries_walk(tree, tmp_path, config, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    with MemoryIndex(tree, tmp_path / "db") as idx:
        with pytest.raises(WatcherError, match="^the watcher needs Linux's inotify; here queries walk") as err:
            Watcher(idx).start(wait=False)
        assert "\n" not in str(err.value) and not any(t.name == "memsearch-watch" for t in threading.enumerate())
        result = idx.search_result("pgbouncer")
        assert result.freshness.via == "walk" and [h.path for h in result.hits] == ["projects/shop/memory-db.md"]


def test_unwatched_new_directories_fail_the_watcher_until_it_recovers(watched, tree, monkeypatch):
    """A new directory that inotify cannot watch (at the watch limit) fails
    the watcher, which retries until it can watch it."""
    idx, watcher = watched
    real = INotify.add_watch

    def at_the_limit(self, path, mask):
        if "unwatched" in os.fsdecode(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, path, mask)

    monkeypatch.setattr(INotify, "add_watch", at_the_limit)
    write(tree, "projects/unwatched/memory.md", "in a folder inotify could not watch: dugong\n")
    result = idx.search_result("dugong")
    assert [h.path for h in result.hits] == ["projects/unwatched/memory.md"]  # correct either way
    eventually(lambda: watcher.state == "failed", "the watcher failing")
    assert "inotify could not watch" in watcher.error
    # Its retries (1 s, 2 s, ...) rescan a moment, which a query may meet on a loaded machine.
    failed = [idx.search_result("dugong").freshness for _ in range(50)]
    assert all(f.via == "walk" for f in failed) and any("inotify could not watch" in f.reason for f in failed)
    monkeypatch.setattr(INotify, "add_watch", real)
    # Recovered once a query is answered through it again (on a loaded
    # machine its restart can be followed by one more rescan, which queries
    # walk through meanwhile).
    eventually(lambda: idx.search_result("dugong").freshness.via == "watcher", "the watcher recovering")
    assert fresh(idx, "dugong") == ["projects/unwatched/memory.md"]


def test_a_folder_made_unreadable_then_readable_is_watched_from_then_on(watched, tree, monkeypatch):
    """inotify refuses to watch a folder its user cannot read (EACCES): one made so (mkdir -m 0) was passed
    over for good, and once made readable (chmod) the notes written in it went unseen by watcher-fresh queries."""
    idx, _ = watched
    real = INotify.add_watch

    def as_its_user(self, path, mask):  # the kernel's check, which root (running these tests) passes
        if not os.stat(path).st_mode & 0o444:
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return real(self, path, mask)

    monkeypatch.setattr(INotify, "add_watch", as_its_user)
    (tree / "locked").mkdir(mode=0)
    assert fresh(idx, "pgbouncer") == ["projects/shop/memory-db.md"]  # (its creation handled)
    (tree / "locked").chmod(0o755)
    assert fresh(idx, "pgbouncer") == ["projects/shop/memory-db.md"]
    write(tree, "locked/note.md", "written once it could be read: a quokka\n")
    assert fresh(idx, "quokka") == ["locked/note.md"]


# -- reconcile_paths, the watcher's unit of work ----------------------------------------------


def test_reconcile_paths_touches_only_what_it_is_given(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "db") as idx:
        idx.reconcile()
        write(tree, "notes/a.md", "alpha")
        write(tree, "notes/sub/b.md", "beta")
        write(tree, "notes-old/c.md", "gamma")
        write(tree, "elsewhere.md", "delta")
        report = idx.reconcile_paths(["notes", "notes-old/c.md", ".hidden/x.md"])
        assert sorted(report.added) == ["notes-old/c.md", "notes/a.md", "notes/sub/b.md"]
        assert "elsewhere.md" not in stored(idx)
        shutil.rmtree(tree / "notes")
        report = idx.reconcile_paths(["notes"])
        assert sorted(report.removed) == ["notes/a.md", "notes/sub/b.md"]
        assert "notes-old/c.md" in stored(idx)
        again = idx.reconcile_paths(["notes-old/c.md", "notes"])
        assert not again.changed


def test_reconcile_paths_walks_a_linked_folder_it_is_given(root, tmp_path):
    """A link to a folder inside the root, named by an event, is walked as
    the full reconcile walks it: its rows stay, its new files come in."""
    write(root, "real/a.md", "walrus facts")
    (root / "linkdir").symlink_to("real", target_is_directory=True)
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert sorted(idx.reconcile().added) == ["linkdir/a.md", "real/a.md"]
        assert not idx.reconcile_paths(["linkdir"]).changed
        write(root, "real/b.md", "walrus tusks")
        assert sorted(idx.reconcile_paths(["linkdir"]).added) == ["linkdir/b.md"]
        assert sorted(h.path for h in idx.search("walrus", reconcile=False)) == [
            "linkdir/a.md", "linkdir/b.md", "real/a.md"]


def test_reconcile_paths_finds_through_links_only_what_the_full_walk_finds(root, tmp_path):
    """A path through a folder link the walk does not follow (into a hidden folder, back to the
    root) finds nothing, even where its last part is a link to a note the walk does index."""
    write(root, "real/a.md", "walrus facts")
    write(root, ".hidden/x.md", "hidden walrus")
    (root / ".hidden/b.md").symlink_to("../real/a.md")
    (root / "secret").symlink_to(".hidden", target_is_directory=True)
    (root / "loop").symlink_to(".", target_is_directory=True)
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert sorted(idx.reconcile().added) == ["real/a.md"]
        report = idx.reconcile_paths(["secret/b.md", "secret/x.md", "loop/real/a.md", "loop/real", "secret"])
        assert not report.changed
        assert sorted(h.path for h in idx.search("walrus", reconcile=False)) == ["real/a.md"]


# -- other processes ---------------------------------------------------------------------------


def _env(config, **extra):
    return {**os.environ, "MEMSEARCH_CONFIG": str(config), **extra}


def _cli(*args, env):
    return subprocess.run([sys.executable, "-m", "memsearch.cli", *args], capture_output=True, text=True, env=env,
                          timeout=DEADLINE_S)


def _start_watch(tree, db, env):
    """`memsearch watch` in a process of its own; its stderr goes to db + '.log'."""
    log = Path(f"{db}.log")
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "memsearch.cli", "watch", "--root", str(tree), "--db", str(db)],
                                stdout=subprocess.DEVNULL, stderr=err, env=env)

    def ready():
        assert proc.poll() is None, log.read_text()
        status = json.loads(_cli("status", "--root", str(tree), "--db", str(db), "--json", env=env).stdout)
        return status["watcher"] == "ready"

    eventually(ready, "memsearch watch ready")
    return proc


@pytest.mark.slow
def test_watch_process_then_sigkill(tree, tmp_path, config):
    db = tmp_path / "index.db"
    env = _env(config)
    proc = _start_watch(tree, db, env)

    def query(*words):
        out = _cli("query", *words, "--root", str(tree), "--db", str(db), "--json", "--no-floor", env=env)
        data = json.loads(out.stdout) if out.stdout else {"results": [], "freshness": None}
        return sorted(r["path"] for r in data["results"]), data["freshness"]

    try:
        write(tree, "global/user/cli.md", "written by another process: capybara\n")
        paths, how = query("capybara")
        assert paths == ["global/user/cli.md"] and how["via"] == "watcher"
        os.rename(tree / "global/user/cli.md", tree / "global/user/cli-renamed.md")
        paths, how = query("capybara")
        assert paths == ["global/user/cli-renamed.md"] and how["via"] == "watcher"
        (tree / "global/user/cli-renamed.md").unlink()
        paths, how = query("capybara")
        assert paths == [] and how["via"] == "watcher"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    write(tree, "global/user/after.md", "after the watcher died: pangolin\n")
    paths, how = query("pangolin")
    assert paths == ["global/user/after.md"]
    assert how["via"] == "walk" and f"pid {proc.pid}) is not running" in how["reason"]
    status = json.loads(_cli("status", "--root", str(tree), "--db", str(db), "--json", env=env).stdout)
    assert status["watcher"] == "dead" and status["freshness"] == "walk"
    assert not [name for name in os.listdir(tree) if name.startswith(".memsearch-cookie")]


@pytest.mark.slow
def test_a_write_through_a_memory_map_is_never_shown_stale(tree, tmp_path, config):
    """inotify reports no write made through a memory map whose descriptor was closed before, so a
    watcher in another process vouched for the old text: a hit's file is now stat'ed, and read again
    if it changed. (The sleeps leave the racy window, in which every query reads the file again.)"""
    import mmap

    db, env = tmp_path / "index.db", _env(config)
    path = write(tree, "global/user/mapped.md", "the password hunter2 works\n")
    with open(path, "r+b") as f:
        mapped = mmap.mmap(f.fileno(), 0)
    proc = _start_watch(tree, db, env)

    def query(*words):
        out = _cli("query", *words, "--root", str(tree), "--db", str(db), "--json", "--no-floor", env=env)
        data = json.loads(out.stdout) if out.stdout else {"results": [], "freshness": None}
        return [r["snippet"].strip() for r in data["results"]], data["freshness"]

    try:
        time.sleep(2.5)
        assert query("hunter2")[0] == ["the password <<hunter2>> works"]
        at = mapped.find(b"hunter2")
        mapped[at:at + 7] = b"*******"
        mapped.flush()
        time.sleep(2.5)
        snippets, how = query("hunter2")
        assert snippets == [] and how["via"] == "watcher"
        assert query("password")[0] == ["the <<password>> ******* works"]
    finally:
        mapped.close()
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_query_process_stays_light_while_a_watcher_runs(watched, tree, tmp_path, config):
    code = (
        "from memsearch.cli import main\n"
        "try:\n"
        f"    main(['query', 'pgbouncer', '--root', {str(tree)!r}, '--db', {str(tmp_path / 'index.db')!r}, '--json'])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    heavy, out = imports_of(code, HEAVY, env=_env(config), timeout=DEADLINE_S)
    assert out.returncode == 0, out.stderr
    assert heavy == []
    assert json.loads(out.stdout)["freshness"]["via"] == "watcher"


EDITOR = """
import os, sys, time
root, state, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def publish(i):  # a version is published only once its write is complete
    with open(state + ".tmp", "w") as f:
        f.write(str(i))
    os.replace(state + ".tmp", state)
for i in range(1, n + 1):
    # Saved the way editors save (a reader never sees a half-written version),
    # so that "the version published, or a later one" is all a query may see.
    with open(os.path.join(root, ".counter.md.tmp"), "w") as f:
        f.write(f"counter value {i}\\n")
    os.replace(os.path.join(root, ".counter.md.tmp"), os.path.join(root, "counter.md"))
    os.makedirs(os.path.join(root, "new", str(i % 7)), exist_ok=True)
    with open(os.path.join(root, "new", str(i % 7), f"f{i}.md"), "w") as f:
        f.write(f"freshly made marker{i}\\n")
    if i % 5 == 0:
        os.replace(os.path.join(root, "new", str(i % 7), f"f{i}.md"), os.path.join(root, "new", f"moved{i}.md"))
    publish(i)
    time.sleep(0.01)
"""

QUERIER = """
import json, os, re, sys
from memsearch import MemoryIndex
root, db, state, last = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stale, via, done, queries = [], {}, 0, 0
with MemoryIndex(root, db) as idx:
    while done < last or queries < 20:  # all the while the editor works, and a little more
        queries += 1
        try:
            done = int(open(state).read())  # every write up to `done` happened before this query
        except (FileNotFoundError, ValueError):
            done = 0
        result = idx.search_result("counter value", floor=0.0)
        via[result.freshness.via] = via.get(result.freshness.via, 0) + 1
        seen = [int(m) for h in result.hits if h.path == "counter.md"
                for m in re.findall(r"value (\\d+)", h.snippet.replace("<<", "").replace(">>", ""))]
        if done and (not seen or max(seen) < done):
            stale.append(("counter", done, seen))
        if done:
            hits = [h.path for h in idx.search(f"marker{done}", floor=0.0)]
            want = f"new/moved{done}.md" if done % 5 == 0 else f"new/{done % 7}/f{done}.md"
            if want not in hits:
                stale.append(("marker", done, hits))
print(json.dumps({"stale": stale, "via": via}))
"""


@pytest.mark.slow
def test_two_processes_query_while_a_third_edits(tree, tmp_path, config):
    db = tmp_path / "index.db"
    env = _env(config)
    state = tmp_path / "published"
    watcher = _start_watch(tree, db, env)
    try:
        editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(tree), str(state), "150"], env=env)
        queriers = [subprocess.Popen([sys.executable, "-c", QUERIER, str(tree), str(db), str(state), "150"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                    for _ in range(2)]
        outputs = [q.communicate(timeout=DEADLINE_S * 2) for q in queriers]
        editor.wait(timeout=DEADLINE_S)
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=DEADLINE_S)
    assert watcher.returncode == 0, Path(f"{db}.log").read_text()
    for out, err in outputs:
        assert out, err
        report = json.loads(out)
        assert report["stale"] == []
        assert list(report["via"]) == ["watcher"]  # not one query had to walk


def test_mcp_server_runs_a_watcher_in_process(tree, tmp_path, config):
    from memsearch.mcp_server import live_freshness

    with MemoryIndex(tree, tmp_path / "db") as idx, live_freshness(idx):
        eventually(lambda: idx.status()["watcher"] == "ready", "the in-process watcher ready")
        write(tree, "global/user/mcp.md", "seen through the server's watcher: wombat\n")
        assert fresh(idx, "wombat") == ["global/user/mcp.md"]
    with MemoryIndex(tree, tmp_path / "db") as idx:
        assert idx.status()["watcher"] == "stopped"


def test_watch_command_refuses_an_index_inside_the_root(tree, config):
    out = _cli("watch", "--root", str(tree), "--db", str(tree / "index.db"), env=_env(config))
    assert out.returncode == 2
    assert out.stderr.startswith("Error: the index database") and "inside the watched root" in out.stderr


def test_a_link_shows_its_target_wherever_that_is(watched, tree):
    """A note that links to another memory file changes when that file does,
    though no event names the note. A link to a hidden or non-Markdown file
    shows nothing: it leads where no memory file is (memsearch.memory_file)."""
    idx, _ = watched
    write(tree, "sessions/s9/target.md", "first version: oriole\n")
    os.symlink(tree / "sessions/s9/target.md", tree / "global/user/shown.md")
    assert fresh(idx, "oriole") == ["global/user/shown.md", "sessions/s9/target.md"]
    write(tree, "sessions/s9/target.md", "second version: kestrel\n")
    assert fresh(idx, "kestrel") == ["global/user/shown.md", "sessions/s9/target.md"]
    assert fresh(idx, "oriole") == []
    write(tree, ".private/secret.txt", "hidden: bittern\n")
    os.symlink(tree / ".private/secret.txt", tree / "global/user/hidden.md")
    assert fresh(idx, "bittern") == []


@pytest.mark.slow
def test_a_query_killed_in_the_handshake_leaves_no_cookie_for_ever(tree, tmp_path, config):
    """Issue 14, items 13 and 14: the cookie of a query killed while it
    waited is removed by the next query once no watcher answers; status
    calls a watcher whose heartbeat is stale "not answering", not "ready"."""
    import sqlite3

    db = tmp_path / "index.db"
    env = _env(config)
    proc = _start_watch(tree, db, env)
    cookies = lambda: sorted(n for n in os.listdir(tree) if n.startswith(freshness.COOKIE_PREFIX))  # noqa: E731
    try:
        os.kill(proc.pid, signal.SIGSTOP)  # alive, answering nothing
        query = subprocess.Popen([sys.executable, "-m", "memsearch.cli", "query", "pgbouncer", "--root", str(tree),
                                  "--db", str(db)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        eventually(lambda: cookies(), "the query's cookie")
        query.kill()
        query.wait()
        stranded = cookies()
        assert len(stranded) == 1
        conn = sqlite3.connect(db)
        conn.execute("UPDATE watcher SET heartbeat_at = ?", (time.time() - 8.7,))
        conn.commit()
        conn.close()
        status = json.loads(_cli("status", "--root", str(tree), "--db", str(db), "--json", env=env).stdout)
        assert status["watcher"] == "not answering" and status["freshness"] == "walk"
        # 8.7 s rounds to 9; a loaded machine may take a few more seconds to start status.
        age = re.search(r"heartbeat is (\d+)s old", status["fallback_reason"])
        assert age and 9 <= int(age[1]) < 30, status["fallback_reason"]
        human = _cli("status", "--root", str(tree), "--db", str(db), env=env).stdout
        assert "watcher:" in human and "not answering" in human and ": ready" not in human

        old = time.time() - 2 * freshness.COOKIE_STALE_S
        os.utime(tree / stranded[0], (old, old))  # as if its query died a while ago
        young = tree / f"{freshness.COOKIE_PREFIX}{os.getpid()}-0-live"  # a query still waiting
        young.touch()
        out = _cli("query", "pgbouncer", "--root", str(tree), "--db", str(db), "--json", env=env)
        assert out.returncode == 0 and json.loads(out.stdout)["freshness"]["via"] == "walk"
        assert cookies() == [young.name]
        assert "cookie" not in out.stdout
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


# -- a repos root: only what discovery reads is watched ---------------------------------------


def _inotify_watches() -> int:
    """inotify watches this process holds, from the kernel's own list."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{name}") as f:
                count += sum(line.startswith("inotify wd:") for line in f)
        except OSError:
            continue
    return count


def test_a_repos_root_watches_its_memory_places_not_its_source_trees(tmp_path, config):
    src = tmp_path / "src"
    for n in range(3):
        write(src, f"app{n}/.claude/memory/MEMORY.md", f"- [notes](notes.md) of app{n}\n")
        write(src, f"app{n}/.claude/memory/notes.md", f"app{n} deploys on fridays\n")
        for d in range(60):  # a deep source tree: none of it is a memory place
            (src / f"app{n}/src/pkg{d % 6}/mod{d}/deep/er").mkdir(parents=True)
    write(src, "app0/src/pkg0/AGENTS.md", "nested instructions: lint before pushing\n")
    before = _inotify_watches()
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        # root, 3 checkouts, 3 .claude, 3 .claude/memory, 1 nested folder:
        # a few per place, where a recursive watch would take ~600
        assert _inotify_watches() - before <= 20
        assert fresh(idx, "lint") == ["app0/src/pkg0/AGENTS.md"]
        write(src, "app1/.claude/memory/ops.md", "app1 pages the oncall with a pager\n")
        assert fresh(idx, "pager") == ["app1/.claude/memory/ops.md"]
        write(src, "app2/.claude/memory/ops.md", "app2 pager rotation\n")  # (a second one, same words)
        write(tmp_path / "elsewhere", "new/CLAUDE.md", "a new checkout keeps a walrus\n")
        os.rename(tmp_path / "elsewhere/new", src / "new")  # a checkout arrives
        assert fresh(idx, "walrus") == ["new/CLAUDE.md"]
        write(src, "new/.claude/memory/later.md", "its memory comes later: narwhal\n")
        assert fresh(idx, "narwhal") == ["new/.claude/memory/later.md"]
        write(src, "app0/src/pkg0/AGENTS.md", "nested instructions: format before pushing\n")
        assert fresh(idx, "format") == ["app0/src/pkg0/AGENTS.md"]
        write(src, "app0/src/pkg0/mod0/notes.txt", "source edits are passed over\n")
        assert fresh(idx, "pager") == ["app1/.claude/memory/ops.md", "app2/.claude/memory/ops.md"]
        assert _inotify_watches() - before <= 30


def test_a_link_made_or_removed_at_a_checkouts_top_is_seen_by_the_watcher(tmp_path, config):
    """A checkout's .claude made a link to another checkout's (the walk follows it) raised an event
    for a name that is no folder: taken for a source edit, it was passed over, and watcher-fresh
    queries missed the files a walk found through it (and kept them once the link was gone)."""
    src = tmp_path / "src"
    write(src, "shop/.claude/memory/notes.md", "shop deploys on fridays with a walrus\n")
    (src / "blog").mkdir()
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        assert fresh(idx, "walrus") == ["shop/.claude/memory/notes.md"]
        (src / "blog" / ".claude").symlink_to("../shop/.claude", target_is_directory=True)
        assert fresh(idx, "walrus") == ["blog/.claude/memory/notes.md", "shop/.claude/memory/notes.md"]
        (src / "blog" / ".claude").unlink()
        assert fresh(idx, "walrus") == ["shop/.claude/memory/notes.md"]


def test_a_batch_of_repos_events_asks_for_the_deep_walk_only_when_needed(tmp_path):
    """The batch is plain data: a source edit adds nothing, a memory place
    its path, a new checkout or a nested file the deep walk too."""
    from memsearch.event_batch import Batch, Followed

    root = Followed(Root("repos", str(tmp_path)), str(tmp_path), "")
    batch = Batch()
    assert batch.note(root, str(tmp_path / "app/src/main.py"), "modified", False, links=False) is None
    assert batch.note(root, str(tmp_path / "app/.claude/memory/x.md"), "created", False, links=False) == "event"
    assert batch.paths == {"app/.claude/memory/x.md"} and not batch.deep
    for kind in ("modified", "closed", "attrib", "deleted"):  # a known nested file: the plain walk stats it
        assert batch.note(root, str(tmp_path / "app/src/AGENTS.md"), kind, False, links=False) == "event"
    assert "app/src/AGENTS.md" in batch.paths and not batch.deep
    assert batch.note(root, str(tmp_path / "app/src/pkg/AGENTS.md"), "created", False, links=False) == "event"
    assert batch.deep
    batch = Batch()
    assert batch.note(root, str(tmp_path / "new"), "created", True, links=False) == "event"
    assert batch.deep
    assert batch.note(root, str(tmp_path / ".memsearch-cookie-1-0-ab"), "created", False, links=False) == "cookie"
    assert batch.urgent() and batch.cookies == {".memsearch-cookie-1-0-ab"}


def test_a_folder_on_the_way_to_a_nested_file_replaced_or_moved_is_seen_by_the_watcher(tmp_path, config):
    """Only the folder holding a nested instruction file was watched: renaming it or a folder above it raised no
    event, so a folder swapped in kept its file's old text for watcher-fresh queries, where a walk reads the new."""
    src = tmp_path / "src"
    write(src, "app/src/pkg/AGENTS.md", "nested instructions: lint before pushing\n")
    write(tmp_path / "new", "pkg/AGENTS.md", "swapped in: format before pushing\n")
    write(tmp_path / "newer", "src/pkg/AGENTS.md", "swapped in above it: a quokka\n")
    # Each swap's two renames in one batch (a cookie takes it): what one batch between them drops, a walk there drops.
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx, debounce=60, max_delay=60):
        assert fresh(idx, "lint") == ["app/src/pkg/AGENTS.md"]
        os.rename(src / "app/src/pkg", tmp_path / "gone")
        os.rename(tmp_path / "new/pkg", src / "app/src/pkg")
        assert fresh(idx, "format") == ["app/src/pkg/AGENTS.md"]
        write(src, "app/src/pkg/AGENTS.md", "then edited where it is: a wombat\n")  # its folder watched in turn
        assert fresh(idx, "wombat") == ["app/src/pkg/AGENTS.md"]
        os.rename(src / "app/src", tmp_path / "gone-too")
        os.rename(tmp_path / "newer/src", src / "app/src")
        assert fresh(idx, "quokka") == ["app/src/pkg/AGENTS.md"] and fresh(idx, "wombat") == []


def test_a_repos_root_watches_checkouts_and_memory_subfolders_named_like_build_output(tmp_path, config):
    """SKIP_DIRS are source folders the deep walk never enters, not names a
    checkout or a folder inside a memory place may not have."""
    src = tmp_path / "src"
    write(src, "build/.claude/memory/x.md", "the build checkout remembers a gecko\n")
    write(src, "shop/.claude/rules/build/ci.md", "ci rules mention a lemur\n")
    write(src, "shop/dist/AGENTS.md", "never indexed: the deep walk skips dist\n")
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        assert fresh(idx, "gecko") == ["build/.claude/memory/x.md"]
        write(src, "build/.claude/memory/x.md", "the build checkout remembers a marmot\n")
        write(src, "build/CLAUDE.md", "build instructions name a tapir\n")
        write(src, "shop/.claude/rules/build/ci.md", "ci rules mention an ocelot\n")
        write(src, "shop/.claude/rules/build/new.md", "a new rule about a quokka\n")
        assert fresh(idx, "marmot") == ["build/.claude/memory/x.md"] and fresh(idx, "gecko") == []
        assert fresh(idx, "tapir") == ["build/CLAUDE.md"]
        assert fresh(idx, "ocelot") == ["shop/.claude/rules/build/ci.md"]
        assert fresh(idx, "quokka") == ["shop/.claude/rules/build/new.md"]
        assert fresh(idx, "indexed") == []
    from memsearch import discover

    assert discover.is_memory_path("build/pkg/AGENTS.md") and not discover.is_memory_path("shop/dist/AGENTS.md")


def test_a_repos_memory_folder_that_turns_into_memory_is_watched_whole(tmp_path, config):
    src = tmp_path / "src"
    write(src, "app/memory/alloc.py", "# source code, so memory/ is not memory\n")
    write(src, "app/memory/notes.md", "notes beside the code\n")
    write(src, "app/memory/sub/x.md", "a note about a heron\n")
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        assert fresh(idx, "heron") == []
        os.remove(src / "app/memory/alloc.py")  # only Markdown left: agent memory now
        assert fresh(idx, "heron") == ["app/memory/sub/x.md"]
        write(src, "app/memory/sub/x.md", "a note about a pelican\n")
        assert fresh(idx, "pelican") == ["app/memory/sub/x.md"] and fresh(idx, "heron") == []


def test_a_repos_memory_folder_that_gets_a_memory_md_is_watched_whole_and_only_such_changes_re_decide_it(
        tmp_path, config, monkeypatch):

    src = tmp_path / "src"
    write(src, "app/memory/alloc.py", "# source code, so memory/ is not memory\n")
    write(src, "app/memory/sub/x.md", "a note about a heron\n")
    follows = []
    real_follow = event_source.EventSource.follow
    monkeypatch.setattr(event_source.EventSource, "follow", lambda self, c: (follows.append(c), real_follow(self, c)))
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        for n in range(20):  # entries that cannot make it memory: a listing for the first only
            write(src, f"app/memory/more{n}.md", "more\n")
        assert fresh(idx, "heron") == [] and follows.count(str(src / "app")) == 2  # the start's, the first's
        write(src, "app/memory/MEMORY.md", "- [x](sub/x.md)\n")
        assert fresh(idx, "heron") == ["app/memory/sub/x.md"]
        write(src, "app/memory/sub/x.md", "a note about a pelican\n")
        assert fresh(idx, "pelican") == ["app/memory/sub/x.md"]


@pytest.mark.parametrize("hidden", [False, True])
def test_a_repos_memory_folder_of_subfolders_only_that_gets_a_note_is_watched_whole(tmp_path, config, hidden):
    src = tmp_path / "src"
    write(src, "app/memory/sub/x.md", "a note about a heron\n")  # no file of its own: not memory yet
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx):
        assert fresh(idx, "heron") == []
        if hidden:
            write(src, "app/memory/.DS_Store", "x")  # discovery passes hidden files over: so must the watcher
        write(src, "app/memory/notes.md", "its first note\n")  # Markdown alone: memory now
        assert fresh(idx, "heron") == ["app/memory/sub/x.md"]
        write(src, "app/memory/sub/x.md", "a note about a pelican\n")
        assert fresh(idx, "pelican") == ["app/memory/sub/x.md"]


# -- a long-lived watcher keeps what lives, not every name it ever saw ---------------------------


def test_folders_made_and_removed_leave_nothing_behind_in_the_event_source(watched, tree):
    """Each folder under a walked root was remembered as watched whole, and kept after its removal: 20,000
    folders made and removed under fresh names held 20,000 paths (6.7 MB) for the watcher's lifetime."""
    idx, watcher = watched
    source = watcher._sources[0]
    for n in range(300):
        (tree / f"tmp-{n}").mkdir()
        (tree / f"tmp-{n}/inner").mkdir()
    eventually(lambda: source.watches >= 600, "the new folders watched")
    for n in range(300):
        shutil.rmtree(tree / f"tmp-{n}")
    eventually(lambda: source.watches < 600, "their watches gone")
    # Removed and made again at once: the folder there now is watched whole, its new subfolders too.
    (tree / "again").mkdir()
    shutil.rmtree(tree / "again")
    write(tree, "again/inner/note.md", "made again with a capybara\n")
    assert fresh(idx, "capybara") == ["again/inner/note.md"]  # (its cookie came after every event above)
    assert set(source._deep) == {root for root, _, _ in os.walk(os.path.realpath(tree))}
    write(tree, "again/inner/later/note.md", "a subfolder made later: a tapir\n")
    assert fresh(idx, "tapir") == ["again/inner/later/note.md"]


def test_checkouts_moved_away_leave_nothing_behind_in_the_event_source(tmp_path, config):
    """A checkout's memory/ holding source code was remembered as such, and kept after the checkout moved away."""
    src = tmp_path / "src"
    write(src, "app/CLAUDE.md", "the app keeps a heron\n")
    with MemoryIndex(Root("repos", str(src)), tmp_path / "db") as idx, Watcher(idx) as watcher:
        source = watcher._sources[0]
        for n in range(50):
            (src / f"tmp-{n}/memory").mkdir(parents=True)
        eventually(lambda: source.watches >= 100, "the new checkouts' memory folders watched")
        for n in range(50):
            write(src, f"tmp-{n}/memory/alloc.py", "# source code\n")
        eventually(lambda: len(source._mixed) == 50, "the memory folders of source code known")
        for n in range(50):
            os.rename(src / f"tmp-{n}", tmp_path / f"gone-{n}")
        # (Both waited for: the reader thread drops the watches, then what it knew of their folders.)
        eventually(lambda: source.watches <= 2 and not source._mixed, "the checkouts' watches and marks gone")
        assert fresh(idx, "heron") == ["app/CLAUDE.md"]
