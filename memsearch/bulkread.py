"""Read the files of a large build in two processes: the GIL keeps a reader thread from overlapping preparing and
storing, a child process overlaps for real. The child gets chunks of the file list on stdin and sends back, pickled,
what prepare_one made of each; the parent prepares chunks too whenever the child's next one is not there yet. If the
child cannot start or dies midway, the parent reads the rest itself: a speed-up, never a dependency.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections import deque
from contextlib import suppress
from typing import Iterator

from .prepare import Prepared, prepare_one

# Files per pickled chunk: small pickling overhead, and this process, when it prepares one itself while the
# child is behind, is back soon to write. Fewer past CHUNK_BYTES of files: a chunk is held whole in both
# processes, and the chunks in flight or queued must not hold a tree of large files whole.
CHUNK = 128
CHUNK_BYTES = 2 << 20

# Chunks sent to the child and not yet taken back: enough that it keeps working while this process is busy
# writing and indexing a step of rows (reconcile.BULK_STEP).
AHEAD = 16

# Chunks prepared here ahead of their turn and not yet taken: ~4k files, at most ~64 MB of them.
QUEUED = 32

# The pipes' buffers, where the system lets them grow (Linux): the requests in flight (~20 KB each) would fill
# the default 64 KB, and a send would then wait for the child to finish its chunk.
PIPE_BYTES = 1 << 20

# `-c` puts the working folder ('') first on sys.path, where a checkout's pickle.py would run: left out.
_CHILD = ("import sys; sys.path[:] = [sys.argv[1], *filter(None, sys.path)];"
          " from memsearch.bulkread import serve; serve()")


def prepared(infos: list, max_bytes: int) -> Iterator[tuple]:
    """(info, what prepare_one made of it) for every FileInfo of ``infos``, in order."""
    chunks = _chunks(infos)
    proc = _start()
    child = None if proc is None else _Child(proc, max_bytes)
    theirs: deque[int] = deque()  # the chunks sent to the child, in order
    ours: dict[int, list] = {}  # chunks prepared here ahead of their turn
    following = 0  # the first chunk neither sent nor prepared
    try:
        for i, chunk in enumerate(chunks):
            while child is not None and len(theirs) < AHEAD and following < len(chunks):
                if not child.send(chunks[following]):
                    break
                theirs.append(following)
                following += 1
            got = ours.pop(i, None)
            if got is None and theirs and theirs[0] == i:
                # Rather than wait for the child, prepare a chunk further on.
                while not child.ready() and following < len(chunks) and len(ours) < QUEUED:
                    ours[following] = _prepare(chunks[following], max_bytes)
                    following += 1
                theirs.popleft()
                got = child.take()
            if got is None or len(got) != len(chunk):  # not prepared yet, or the child failed
                got, following = [LATER] * len(chunk), max(following, i + 1)
            for info, one in zip(chunk, got):
                yield info, prepare_one(info.relpath, info.abspath, max_bytes) if one is LATER else one
    finally:
        if child is not None:
            child.close()


def _chunks(infos: list) -> list[list]:
    """``infos`` in chunks of CHUNK files, or fewer where their sizes reach CHUNK_BYTES (a larger file alone)."""
    chunks: list[list] = [[]]
    size = 0
    for info in infos:
        if chunks[-1] and (len(chunks[-1]) == CHUNK or size + info.fingerprint.size > CHUNK_BYTES):
            chunks.append([])
            size = 0
        chunks[-1].append(info)
        size += info.fingerprint.size
    return [chunk for chunk in chunks if chunk]


def _prepare(chunk: list, max_bytes: int) -> list:
    return _ahead([(info.relpath, info.abspath, max_bytes) for info in chunk])


# What a chunk answers for a file left for its turn (a singleton: the same object once unpickled).
LATER = Ellipsis


def _ahead(files: list) -> list:
    """What prepare_one makes of each of ``files`` ((relpath, abspath, max_bytes)), until CHUNK_BYTES of text are
    held; LATER for the others. Chunks are cut by the walk's sizes: files written empty and grown to the cap
    before they are read put CHUNK of them in a chunk, held whole by both processes."""
    got, held = [], 0
    for file in files:
        one = prepare_one(*file) if held < CHUNK_BYTES else LATER
        got.append(one)
        if isinstance(one, Prepared):
            held += sum(len(text) for text in (one.body, *one.segs) if text)
    return got


class _Child:
    """The child's answers, drained from its pipe by a thread as they come: a pipe holds 64 KB, so
    the child would stop whenever the caller is busy in SQLite. At most AHEAD answers are queued
    (no more are asked for before one is taken), and the end (None)."""

    def __init__(self, proc: subprocess.Popen, max_bytes: int):
        import queue
        import threading

        self.proc, self.max_bytes, self.ended = proc, max_bytes, False
        self.answers: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._drain, name="memsearch-bulkread", daemon=True)
        self.thread.start()

    def send(self, chunk: list) -> bool:
        """Ask for ``chunk`` (FileInfos) to be prepared; False if the child is gone."""
        if self.ended:
            return False
        try:
            # A few KB, read as soon as the child is done with its current chunk.
            pickle.dump([(info.relpath, info.abspath, self.max_bytes) for info in chunk], self.proc.stdin,
                        pickle.HIGHEST_PROTOCOL)
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            self.ended = True
            return False

    def ready(self) -> bool:
        """Whether take() returns at once."""
        return self.ended or not self.answers.empty()

    def take(self) -> list | None:
        """The child's next answer, in the order asked; None once it failed."""
        if not self.ended:
            answer = self.answers.get()
            self.ended = answer is None
            return answer
        return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # unblocks a drain thread waiting on the pipe
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            with suppress(OSError):  # stdin's flush, to a child that is gone
                pipe.close()
        self.thread.join()

    def _drain(self) -> None:
        try:
            while True:
                self.answers.put(pickle.load(self.proc.stdout))
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            pass  # the child failed: the caller reads what it did not send
        finally:
            self.answers.put(None)


def _start() -> subprocess.Popen | None:
    # An embedded interpreter may have no python to run; a frozen app's executable is the app, which would not run -c.
    if not sys.executable or getattr(sys, "frozen", False):
        return None
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, package_parent], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    with suppress(ImportError, AttributeError, OSError):  # (no fcntl or F_SETPIPE_SZ; over pipe-max-size)
        import fcntl

        for pipe in (proc.stdin, proc.stdout):
            fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    return proc


def serve() -> None:
    """The child: prepare each list of files read from stdin, answer each on stdout, until stdin ends."""
    out = sys.stdout.buffer
    while True:
        try:
            chunk = pickle.load(sys.stdin.buffer)  # (relpath, abspath, max_bytes) of each file
        except EOFError:
            return
        pickle.dump(_ahead(chunk), out, pickle.HIGHEST_PROTOCOL)
        out.flush()
