"""Read the files of a large build in a second process.

A cold build spends as long preparing files in Python as storing them in
SQLite, and the GIL keeps a reader thread from overlapping the two (a thread
made it slower); a child process overlaps for real. It runs the parent's copy of this module, gets the
file list on stdin and sends back, in order and pickled in chunks, what
:func:`memsearch.prepare.prepare_one` made of each. If it cannot start or dies
midway, the parent reads the rest itself: a speed-up, never a dependency.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Iterator

from .prepare import prepare_one

# Files per pickled chunk: small pickling overhead, yet the parent writes at once.
CHUNK = 256

# Chunks received and not yet taken: up to ~16k files, ~20 MB of text.
QUEUED = 64

_CHILD = "import sys; sys.path.insert(0, sys.argv[1]); from memsearch.bulkread import serve; serve()"


def prepared(infos: list, max_bytes: int) -> Iterator[tuple]:
    """(info, what prepare_one made of it) for every FileInfo of ``infos``, in order."""
    done = 0
    proc = _start()
    try:
        if proc is not None:
            for chunk in _received(proc, infos, max_bytes):
                for item in chunk:
                    yield infos[done], item
                    done += 1
        for info in infos[done:]:  # none, unless the child failed
            yield info, prepare_one(info.relpath, info.abspath, max_bytes)
    finally:
        if proc is not None:
            _stop(proc)


def _received(proc: subprocess.Popen, infos: list, max_bytes: int) -> Iterator[list]:
    """The child's chunks, drained from its pipe by a thread as they come: a
    pipe holds 64 KB, so the child would stop after a few dozen files whenever
    the caller is busy in SQLite (whole seconds in a bulk build's indexing)."""
    import queue
    import threading

    chunks: queue.Queue = queue.Queue(maxsize=QUEUED)
    stop = threading.Event()

    def offer(item) -> bool:
        while not stop.is_set():  # the caller may stop taking at any time
            try:
                chunks.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def drain():
        try:
            # The child reads the whole list before it writes: no deadlock on full pipes.
            try:
                pickle.dump([(info.relpath, info.abspath, max_bytes) for info in infos], proc.stdin,
                            pickle.HIGHEST_PROTOCOL)
            finally:
                proc.stdin.close()
            while (chunk := pickle.load(proc.stdout)) is not None:
                if not offer(chunk):
                    return
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            pass  # the child failed: the caller reads what it did not send
        finally:
            offer(None)

    thread = threading.Thread(target=drain, name="memsearch-bulkread", daemon=True)
    thread.start()
    try:
        while (chunk := chunks.get()) is not None:
            yield chunk
    finally:
        stop.set()
        _stop(proc)  # unblocks a drain thread waiting on the pipe
        thread.join()


def _start() -> subprocess.Popen | None:
    # An embedded interpreter may have no python to run, and a frozen app's
    # executable is the app itself, which would not run -c.
    if not sys.executable or getattr(sys, "frozen", False):
        return None
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        return subprocess.Popen([sys.executable, "-c", _CHILD, package_parent], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if proc.stdout:
        proc.stdout.close()


def serve() -> None:
    """The child: prepare every file listed on stdin, answer on stdout."""
    files = pickle.load(sys.stdin.buffer)  # (relpath, abspath, max_bytes) of each
    out = sys.stdout.buffer
    for start in range(0, len(files), CHUNK):
        pickle.dump([prepare_one(*file) for file in files[start:start + CHUNK]], out, pickle.HIGHEST_PROTOCOL)
    pickle.dump(None, out)
    out.flush()
