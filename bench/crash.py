"""Crash recovery: SIGKILL a process in the middle of a large reconcile.

    python bench/crash.py --trials 20 --files 4000

Each trial starts a victim process (``MemoryIndex(root, db).reconcile()``)
and kills it with SIGKILL at a random moment, then lets the next process
open the same database and reconcile. The trial passes when that run opens
the database without a warning (a SIGKILL must never make it look damaged),
and afterwards SQLite's ``integrity_check`` and FTS5's ``integrity-check``
(rank 1: the index against the external content) pass and the index holds
exactly the files: no lost row, no phantom row, no stale body.

Before each trial a third of the files are edited, a tenth deleted and as
many added; trials alternate between a cold build (the database deleted
first) and an update of the index the previous trial left. The
kill moment is drawn uniformly from the victim's whole life (start-up,
opening and migrating the database, walking, reading, committing), with most
of the weight on the reconcile itself; the report says how many kills landed
while the reconcile was running.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from stress import VOCAB, compare_index_with_files  # noqa: E402


def make_tree(root: Path, files: int, rng: random.Random, generation: int = 0):
    for i in range(files):
        write_note(root, i, generation, rng)


def write_note(root: Path, i: int, generation: int, rng: random.Random):
    rel = f"projects/p{i % 40}/note-{i}.md" if i % 3 else f"sessions/s{i % 17}/tasks/T{i % 5}/notes-{i}.md"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    words = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(20, 200)))
    path.write_text(f"---\ntitle: note {i}\n---\nctok{i}g{generation} {words}\n", encoding="utf-8")


def mutate(root: Path, files: int, rng: random.Random, generation: int):
    """Edit a third of the notes, delete a tenth, add as many."""
    notes = sorted(root.rglob("*.md"))
    for path in rng.sample(notes, len(notes) // 3):
        write_note(root, int(path.stem.rsplit("-", 1)[1]), generation, rng)
    for path in rng.sample(notes, len(notes) // 10):
        path.unlink(missing_ok=True)
    for _ in range(len(notes) // 10):
        write_note(root, rng.randrange(files * 2), generation, rng)


def victim(root: str, db: str, stall_at: int = 0):
    """Reconcile; with ``stall_at``, stop for good once that many files are
    read, inside the write transaction, so a kill lands exactly there."""
    from memsearch import MemoryIndex

    def progress(done, total):
        print(f"read {done}", flush=True)
        if stall_at and done >= stall_at:
            print("stalled", flush=True)
            time.sleep(3600)

    print("open", flush=True)
    with MemoryIndex(root, db) as idx:
        idx.conn  # open and migrate
        print("reconcile", flush=True)
        started = time.perf_counter()
        idx.reconcile(progress=progress)
        print(f"done {time.perf_counter() - started:.3f}", flush=True)


def spawn(root, db, *extra):
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "_victim", str(root), str(db), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def recover(root: Path, db: Path) -> tuple[list[str], str]:
    """The next run, in its own process: problems seen, and its stderr."""
    proc = spawn(root, db)
    out, err = proc.communicate(timeout=300)
    problems = [] if proc.returncode == 0 else [f"recovery run exited {proc.returncode}: {err.strip()[-300:]}"]
    return problems, err


def trial(work: Path, kind: str, files: int, rng: random.Random, reconcile_s: dict) -> dict:
    """One kill and one recovery; returns what happened and what was wrong."""
    root, db = work / "tree", work / "index.db"
    if kind == "cold":
        for leftover in work.glob("index.db*"):
            leftover.unlink()
    mutate(root, files, rng, generation=rng.randrange(1 << 30))
    proc = spawn(root, db)
    lines = [proc.stdout.readline().strip()]  # "open": imported, about to open the database
    pick = rng.random()
    if pick < 0.1:  # while opening (creating and migrating a fresh database)
        delay = rng.uniform(0, 0.05)
    elif pick < 0.5:  # once a random number of files is read, inside the write transaction
        target = 256 * rng.randint(1, 6 if kind == "update" else max(1, files // 256 - 1))
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith("done") or line.startswith("read") and int(line.split()[1]) >= target:
                break
        delay = rng.uniform(0, 0.02)
    else:  # at a random moment of the reconcile: walk, reads, commit
        lines.append(proc.stdout.readline().strip())
        delay = rng.uniform(0, reconcile_s[kind] * 0.8)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    lines += [line.split()[0] for line in out.splitlines() if line.strip()]
    lines = [line.split()[0] for line in lines if line]
    killed_in = "after" if "done" in lines else ("reconcile" if "reconcile" in lines else "open")
    problems, err = recover(root, db)
    if err.strip():
        problems.append(f"recovery printed: {err.strip()[:200]}")
    if any(".bad-" in p.name for p in work.iterdir()):
        problems.append("database was set aside after a SIGKILL")
    problems += compare_index_with_files(root, db)
    return {"kind": kind, "killed_in": killed_in, "delay_s": round(delay, 3), "problems": problems}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    return env


def start_watcher(root: Path, db: Path, timeout: float = 60.0) -> subprocess.Popen:
    """``memsearch watch`` in its own process, once it says it is watching."""
    import queue
    import threading

    proc = subprocess.Popen([sys.executable, "-m", "memsearch.cli", "watch", "--root", str(root), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env())
    lines: queue.Queue = queue.Queue()

    def read():
        with proc.stderr:
            for line in proc.stderr:
                lines.put(line)

    proc.reader = threading.Thread(target=read, daemon=True)
    proc.reader.start()
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        seen.append(line.strip())
        if line.startswith("watching"):
            return proc
    stop_watcher(proc, signal.SIGKILL)
    raise RuntimeError(f"memsearch watch did not start: {' | '.join(seen)[-300:]}")


def stop_watcher(proc: subprocess.Popen, sig=signal.SIGTERM):
    proc.send_signal(sig)
    proc.wait(timeout=30)
    proc.reader.join(10)


def query_cli(root: Path, db: Path, text: str) -> tuple[int, dict | None, str]:
    out = subprocess.run([sys.executable, "-m", "memsearch.cli", "query", text, "--root", str(root), "--db", str(db),
                          "--json"], capture_output=True, text=True, env=_env(), timeout=120)
    return out.returncode, (json.loads(out.stdout) if out.stdout.strip() else None), out.stderr


def watcher_trial(work: Path, files: int, rng: random.Random, burst_s: float) -> dict:
    """SIGKILL ``memsearch watch`` while it applies a burst of changes; the
    next query (the watcher is dead: it walks) must see exactly the files,
    and a new watcher must take over and serve fresh queries."""
    root, db = work / "tree", work / "index.db"
    problems = []
    watcher = start_watcher(root, db)
    delay = rng.uniform(0, burst_s * 1.2)
    generation = rng.randrange(1 << 30)
    burst = random.Random(generation)  # the mutating thread's own generator
    import threading

    writer = threading.Thread(target=mutate, args=(root, files, burst, generation))
    writer.start()
    time.sleep(delay)
    stop_watcher(watcher, signal.SIGKILL)
    writer.join()
    some = rng.choice(sorted(root.rglob("*.md")))
    token = some.read_text().rstrip().splitlines()[-1].split()[0]
    code, data, err = query_cli(root, db, token)
    paths = [h["path"] for h in (data or {}).get("results", [])]
    if code != 0 or err.strip() or paths != [some.relative_to(root).as_posix()]:
        problems.append(f"first query after the kill: exit {code}, {paths}, stderr {err.strip()[:200]!r}")
    problems += compare_index_with_files(root, db)
    # A new watcher takes the dead one's place; a query right after a write
    # must see it (through the watcher's handshake, or by walking).
    watcher = start_watcher(root, db)
    try:
        write_note(root, files * 3, generation + 1, burst)
        code, data, err = query_cli(root, db, f"ctok{files * 3}g{generation + 1}")
        paths = [h["path"] for h in (data or {}).get("results", [])]
        if code != 0 or len(paths) != 1:
            problems.append(f"query after a write under the new watcher: exit {code}, {paths}, {err.strip()[:200]!r}")
    finally:
        stop_watcher(watcher)
    problems += compare_index_with_files(root, db)
    return {"kind": "watcher", "killed_in": "watcher batch", "delay_s": round(delay, 3), "problems": problems}


def calibrate(work: Path, files: int, rng: random.Random) -> dict:
    """Seconds a cold and an update reconcile of this tree take, uninterrupted."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "tree").mkdir(parents=True)
    make_tree(work / "tree", files, rng)
    seconds = {}
    for kind in ("cold", "update"):
        if kind == "update":
            mutate(work / "tree", files, rng, generation=1)
        proc = spawn(work / "tree", work / "index.db")
        out, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"calibration run failed: {err.strip()[-500:]}")
        seconds[kind] = float(out.split("done")[1].split()[0])
    return seconds


def stalled_trial(work: Path, files: int, rng: random.Random) -> dict:
    """A kill at a known point: inside the write transaction, half the rows written."""
    root, db = work / "tree", work / "index.db"
    for leftover in work.glob("index.db*"):
        leftover.unlink()
    proc = spawn(root, db, str(max(256, files // 2)))
    for line in proc.stdout:
        if line.strip() == "stalled":
            break
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    problems, err = recover(root, db)
    if err.strip():
        problems.append(f"recovery printed: {err.strip()[:200]}")
    problems += compare_index_with_files(root, db)
    return {"kind": "cold", "killed_in": "reconcile", "delay_s": None, "problems": problems}


def run_trials(work, *, trials=20, files=4000, seed=1, watcher_trials=0) -> dict:
    work = Path(work)
    rng = random.Random(seed)
    reconcile_s = calibrate(work, files, rng)
    results = [stalled_trial(work, files, rng)]
    for n in range(1, trials):
        kind = "cold" if n % 2 == 0 else "update"
        results.append(trial(work, kind, files, rng, reconcile_s))
    for _ in range(watcher_trials):
        results.append(watcher_trial(work, files, rng, reconcile_s["update"]))
    failed = [r for r in results if r["problems"]]
    return {
        "trials": len(results),
        "files": files,
        "reconcile_s": reconcile_s,
        "passed": len(results) - len(failed),
        "killed_in": {k: sum(r["killed_in"] == k for r in results)
                      for k in ("open", "reconcile", "after", "watcher batch")},
        "failures": failed[:10],
    }


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_victim"]:
        victim(argv[1], argv[2], *map(int, argv[3:4]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=20, help="reconciles killed (the first at a fixed point)")
    p.add_argument("--watcher-trials", type=int, default=0, help="`memsearch watch` processes killed mid-batch")
    p.add_argument("--files", type=int, default=4000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dir", help="work directory (default: a temporary one, removed afterwards)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    # tmpfs when there is one: a SIGKILL does not care, and file creation is 10x faster.
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="memsearch-crash-", dir=scratch))
    try:
        result = run_trials(work / "run", trials=args.trials, files=args.files, seed=args.seed,
                            watcher_trials=args.watcher_trials)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['passed']}/{result['trials']} trials recovered ({args.files} files; uninterrupted"
              f" reconcile: cold {result['reconcile_s']['cold']:.2f}s, update {result['reconcile_s']['update']:.2f}s)")
        print("killed while: " + ", ".join(f"{k} {v}" for k, v in result["killed_in"].items()))
        for failure in result["failures"]:
            print(f"  FAILED {failure['kind']} after {failure['delay_s']}s: {failure['problems'][:3]}")
    return 0 if result["passed"] == result["trials"] else 1


if __name__ == "__main__":
    sys.exit(main())
