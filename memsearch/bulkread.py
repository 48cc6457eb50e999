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
    chunks = [infos[start:start + CHUNK] for start in range(0, len(infos), CHUNK)]
    proc = _start()
    # The child prepares the odd chunks; this process, which would otherwise
    # wait for them, the even ones (the first while the child starts).
    child = None if proc is None else _Drained(proc, chunks[1::2], max_bytes)
    try:
        for i, chunk in enumerate(chunks):
            got = child.take() if i % 2 and child is not None else None
            if got is None or len(got) != len(chunk):  # ours, or the child failed
                got = [prepare_one(info.relpath, info.abspath, max_bytes) for info in chunk]
            yield from zip(chunk, got)
    finally:
        if child is not None:
            child.close()


class _Drained:
    """The child's chunks, drained from its pipe by a thread as they come: a
    pipe holds 64 KB, so the child would stop after a few dozen files whenever
    the caller is busy in SQLite (whole seconds in a bulk build's indexing)."""

    def __init__(self, proc: subprocess.Popen, work: list, max_bytes: int):
        import queue
        import threading

        self.proc, self.ended = proc, False
        self.ready: queue.Queue = queue.Queue(maxsize=QUEUED)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drain, args=(work, max_bytes), name="memsearch-bulkread",
                                       daemon=True)
        self.thread.start()

    def take(self) -> list | None:
        """The child's next chunk; None once it has sent all (or failed)."""
        if not self.ended:
            chunk = self.ready.get()
            self.ended = chunk is None
            return chunk
        return None

    def close(self) -> None:
        self.stop.set()
        _stop(self.proc)  # unblocks a drain thread waiting on the pipe
        self.thread.join()

    def _offer(self, item) -> bool:
        import queue

        while not self.stop.is_set():  # the caller may stop taking at any time
            try:
                self.ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def _drain(self, work: list, max_bytes: int) -> None:
        proc = self.proc
        try:
            # The child reads the whole list before it writes: no deadlock on full pipes.
            try:
                pickle.dump([[(info.relpath, info.abspath, max_bytes) for info in chunk] for chunk in work],
                            proc.stdin, pickle.HIGHEST_PROTOCOL)
            finally:
                proc.stdin.close()
            while (chunk := pickle.load(proc.stdout)) is not None:
                if not self._offer(chunk):
                    return
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            pass  # the child failed: the caller reads what it did not send
        finally:
            self._offer(None)


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
    chunks = pickle.load(sys.stdin.buffer)  # lists of (relpath, abspath, max_bytes)
    out = sys.stdout.buffer
    for chunk in chunks:
        pickle.dump([prepare_one(*file) for file in chunk], out, pickle.HIGHEST_PROTOCOL)
    pickle.dump(None, out)
    out.flush()
