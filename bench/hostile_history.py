"""Hostile transcripts (issue 29, history side): what a call costs, run from bench/hostile.py.

    python bench/hostile.py --only sparse_transcript --only growing_transcript \
        --only linked_transcripts --only session_context_cost

MEMSEARCH_EXE (a command line) runs another memsearch, e.g. an older checkout for "before".
HOSTILE_TIMEOUT (seconds, default 60) bounds each call: a call that would run on is killed and
shown as "> N s".
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from scale import memsearch_exe

PROJECT = "-home-u-shop"
TIMEOUT = float(os.environ.get("HOSTILE_TIMEOUT", "60"))


def _exe() -> list[str]:
    return os.environ["MEMSEARCH_EXE"].split() if os.environ.get("MEMSEARCH_EXE") else memsearch_exe()


def _line(n: int, session: str = "s-1", words: int = 200) -> str:
    return json.dumps({"type": "user", "sessionId": session, "timestamp": "2025-01-20T11:57:17Z",
                       "message": {"role": "user", "content": f"heron {n} pgbouncer " + "words " * words}}) + "\n"


def _write(path: Path, size: int, session: str = "s-1") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        n = 0
        while f.tell() < size:
            f.write(_line(n, session))
            n += 1
    return path


def _run(args: list, env=None) -> tuple[str, subprocess.CompletedProcess | None, int]:
    """(seconds or '> N s', the process, its peak RSS in KiB)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen([*_exe(), *map(str, args)], stdout=stdout, stderr=stderr,
                                env={**os.environ, **(env or {})})
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)  # wait4: this child's own peak RSS
        timer.cancel()
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0), stderr.seek(0)
        out = subprocess.CompletedProcess(args, proc.returncode, stdout.read(), stderr.read())
    return (f"> {TIMEOUT:.0f} s" if seconds >= TIMEOUT else f"{seconds:.2f}"), out, usage.ru_maxrss


class _Mcp:
    """`memsearch mcp` in raw JSON-RPC, answers read by a thread so that calls overlap."""

    def __init__(self, memory: Path, hroot: Path, db: Path):
        self.proc = subprocess.Popen([*_exe(), "mcp", "--root", str(memory), "--db", str(db)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env={**os.environ, "MEMSEARCH_HISTORY_ROOTS": str(hroot)})
        self.answers: dict = {}
        self.arrived = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.wait(0)
        self.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')

    def _read(self):
        for raw in self.proc.stdout:
            answer = json.loads(raw)
            if "id" in answer:
                self.arrived.put((answer["id"], time.perf_counter()))

    def send(self, rid: int, method: str, params: dict) -> float:
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
                              + b"\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def call(self, rid: int, name: str, arguments: dict) -> float:
        return self.send(rid, "tools/call", {"name": name, "arguments": arguments})

    def wait(self, rid: int, until: float | None = None) -> float | None:
        """The time answer ``rid`` arrived, or None past ``until``."""
        while rid not in self.answers:
            try:
                got, at = self.arrived.get(timeout=None if until is None else max(until - time.perf_counter(), 0.01))
            except queue.Empty:
                return None
            self.answers[got] = at
        return self.answers[rid]

    def close(self):
        self.proc.kill()
        self.proc.wait()


def _history_then_memory(base: Path, hroot: Path) -> dict:
    """A `memsearch history` call, then in `memsearch mcp` a memory_search sent 1 s into a history_search."""
    memory = base / "memory" / "global" / "p"
    memory.mkdir(parents=True)
    (memory / "ok.md").write_text("pgbouncer listens on 6432\n")
    figures = {}
    figures["history call s"], done, _ = _run(["history", "heron", "--history-root", hroot, "--db", base / "cli.db"])
    if done.returncode == 0:
        figures["history call skipped"] = json.loads(_run(
            ["history", "heron", "--json", "--history-root", hroot, "--db", base / "cli.db"])[1].stdout
        )["refresh"]["skipped"][:1]
    server = _Mcp(base / "memory", hroot, base / "mcp.db")
    try:
        server.call(1, "memory_search", {"query": "pgbouncer"})
        server.wait(1)  # the first reconcile, out of the figures
        history_sent = server.call(2, "history_search", {"query": "heron"})
        time.sleep(1)
        sent = server.call(3, "memory_search", {"query": "pgbouncer"})
        arrived = server.wait(3, sent + TIMEOUT)
        figures["mcp memory_search during history_search s"] = (f"> {TIMEOUT:.0f}" if arrived is None
                                                                 else f"{arrived - sent:.3f}")
        arrived = server.wait(2, history_sent + TIMEOUT)
        figures["mcp history_search s"] = f"> {TIMEOUT:.0f}" if arrived is None else f"{arrived - history_sent:.2f}"
    finally:
        server.close()
    return figures


def sparse_transcript(args) -> dict:
    """`truncate -s 15T` beside a real transcript: 8 KB on disk, 15 TiB to read."""
    with tempfile.TemporaryDirectory() as tmp:
        hroot = Path(tmp) / "projects"
        _write(hroot / PROJECT / "good.jsonl", 10_000)
        big = hroot / PROJECT / "big.jsonl"
        big.write_text(_line(0))
        os.truncate(big, 15 << 40)
        return _history_then_memory(Path(tmp), hroot)


def growing_transcript(args) -> dict:
    """A writer appending ~240 MB/s to a transcript while history reads it (up to 3 GB on disk)."""
    with tempfile.TemporaryDirectory() as tmp:
        hroot = Path(tmp) / "projects"
        path = _write(hroot / PROJECT / "grow.jsonl", 1 << 20)
        stop, chunk = threading.Event(), "".join(_line(n) for n in range(2000)).encode()  # ~2.4 MB

        wrote = []

        def writer():
            began = time.perf_counter()
            with open(path, "ab") as f:
                while not stop.is_set() and f.tell() < 3 << 30:
                    started = time.perf_counter()
                    f.write(chunk)
                    time.sleep(max(0.0, len(chunk) / 240e6 - (time.perf_counter() - started)))
                wrote.append(f.tell() / 1e6 / (time.perf_counter() - began))

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        try:
            figures = _history_then_memory(Path(tmp), hroot)
        finally:
            stop.set()
            thread.join()
        figures["file at the end MB"] = path.stat().st_size >> 20
        figures["writer MB/s (achieved while writing)"] = round(wrote[0])
        return figures


def linked_transcripts(args) -> dict:
    """50 hard links to an ~11 MB transcript, against the one file alone."""
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        hroot = Path(tmp) / "projects"
        path = _write(hroot / PROJECT / "s-1.jsonl", 11 << 20)
        for label, links in (("1 file", 0), ("50 links", 50)):
            for n in range(links):
                os.link(path, hroot / PROJECT / f"link-{n}.jsonl")
            db = Path(tmp) / f"{links}.db"
            seconds, done, rss = _run(["history", "heron", "--json", "--history-root", hroot, "--db", db])
            size = sum(p.stat().st_size for p in Path(tmp).glob(f"{links}.db*"))
            figures[f"{label}: build s"] = seconds
            figures[f"{label}: db MB"] = round(size / 1e6, 1)
            figures[f"{label}: peak RSS MB"] = rss >> 10
        return figures


def session_context_cost(args) -> dict:
    """session-context on a ~50 MB session, each strategy (the index already built)."""
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        hroot, db = Path(tmp) / "projects", Path(tmp) / "index.db"
        _write(hroot / PROJECT / "s-1.jsonl", 50 << 20)
        figures["build s"] = _run(["history", "heron", "--history-root", hroot, "--db", db])[0]
        query = " ".join(f"word{n}" for n in range(60)) + " heron pgbouncer"
        for label, extra in (("handoff", ["--strategy", "handoff"]), ("relevant", ["--query", "heron 123 pgbouncer"]),
                             ("relevant, 62 terms", ["--query", query])):
            seconds, done, rss = _run(["session-context", "s-1", *extra, "--history-root", hroot, "--db", db])
            figures[f"{label}: s"] = seconds if done.returncode == 0 else f"{seconds} (exit {done.returncode})"
            figures[f"{label}: peak RSS MB"] = rss >> 10
        return figures


ATTACKS = [sparse_transcript, growing_transcript, linked_transcripts, session_context_cost]
