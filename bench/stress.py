"""Concurrency stress: writers, queriers and reconcilers on one tree at once.

    python bench/stress.py --seconds 30 --writers 1 --queriers 2 --reconcilers 1

Every role is its own process (``python stress.py _role ...``), as users'
agents, shells and watchers are. For a fixed time:

- a writer creates, edits (in place or by atomic rename), renames and
  deletes the Markdown files it owns. Every version of a file carries one
  unique token, and the writer logs ``(op, path, token, started, completed)``
  after each operation, on the machine-wide monotonic clock;
- a querier reads the writers' logs, picks tokens of live, superseded and
  deleted files, searches for them (reconcile before every query, as the CLI
  does; half the time through a fresh MemoryIndex, as a one-shot CLI call
  would) and logs ``(started, completed, tokens, paths returned)``;
- a reconciler runs ``reconcile()`` in a loop, like ``memsearch index`` or a
  watcher.

The database does not exist at the start, so the processes also race to
create and migrate it. Afterwards the verifier replays the logs. For each
query and each path that ever held one of its tokens:

- stale: the path was returned although the operation that replaced or
  deleted that version had *completed before the query started*;
- missing: the version had completed before the query started and the next
  operation on the path started only after the query completed, so the file
  held the token throughout, yet the path was not returned;
- phantom: a path returned that never held any of the query's tokens.

Errors are exceptions in any role, warnings logged by memsearch (a set-aside
database would be one) and processes that did not exit cleanly. A final
check compares the index with the files (SQLite and FTS5 integrity checks,
every path and body). Exit status 0 only when all of those are zero.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing

from memsearch.cjk import original  # noqa: E402

# Filler words give bm25 something to rank; none can be mistaken for a token.
VOCAB = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu postgres docker webhook stripe "
    "cart rounding cents deploy release migration schema index query cache memory session project"
).split()

# Operation mix of a writer (weights), and the population it steers towards.
OPS = {"edit": 55, "create": 15, "delete": 15, "rename": 15}


def now() -> int:
    # CLOCK_MONOTONIC is machine-wide on Linux and macOS: comparable across processes.
    return time.monotonic_ns()


def token(writer: int, n: int) -> str:
    return f"tok{writer:02d}q{n:08d}"


def body(path_id: str, version: int, tok: str, filler: str) -> str:
    # The token comes last, so a read cut short loses it. Half the edits keep
    # the size (same-size rewrites within one timestamp tick are the hardest
    # case for change detection by size and mtime), half change it.
    return f"note {path_id} version {version:06d}\n{filler}\n{tok}\n"


# -- roles ------------------------------------------------------------------

class Role:
    def __init__(self, args):
        self.args = args
        self.work = Path(args.work)
        self.root = self.work / "tree"
        self.db = self.work / "index.db"
        self.rng = random.Random(f"{args.seed}-{args.role}-{args.id}")
        self.ops = 0
        self.errors: list[str] = []
        self.latencies_us: list[int] = []
        self._catch_warnings()

    def _catch_warnings(self):
        role = self

        class Catch(logging.Handler):
            def emit(self, record):
                role.errors.append(f"warning: {record.getMessage()}")

        log = logging.getLogger("memsearch")
        log.addHandler(Catch())
        log.propagate = False

    def wait_start(self):
        delay = (self.args.start - now()) / 1e9
        if delay > 0:
            time.sleep(delay)

    def running(self) -> bool:
        return now() < self.args.until

    def index(self):
        from memsearch import MemoryIndex

        return MemoryIndex(self.root, self.db)

    def finish(self, extra=None):
        stats = {"role": self.args.role, "id": self.args.id, "ops": self.ops, "errors": self.errors[:50],
                 "error_count": len(self.errors), "latencies_us": self.latencies_us, **(extra or {})}
        (self.work / f"stats-{self.args.role}-{self.args.id}.json").write_text(json.dumps(stats))


class Writer(Role):
    def run(self):
        wid = self.args.id
        self.log = open(self.work / f"writer-{wid}.log", "a", buffering=1)
        self.live: dict[str, tuple[str, int, str]] = {}  # path -> (path_id, version, filler)
        self.n = 0
        for _ in range(self.args.files):
            self.create()
        self.wait_start()
        period = 1.0 / self.args.write_rate if self.args.write_rate else 0
        names, weights = list(OPS), list(OPS.values())
        while self.running():
            op = self.rng.choices(names, weights)[0]
            if not self.live or (op == "delete" and len(self.live) < self.args.files // 2):
                op = "create"
            elif op == "create" and len(self.live) > self.args.files * 2:
                op = "delete"
            try:
                getattr(self, op)()
                self.ops += 1
            except Exception as ex:  # noqa: BLE001 - reported, never fatal
                self.errors.append(f"writer {op}: {ex!r}")
            if period:
                time.sleep(self.rng.uniform(0, 2 * period))
        self.log.close()
        self.finish()

    def _new_path(self) -> str:
        self.n += 1
        scope = self.rng.choice(["projects/p%d" % self.rng.randrange(8), "sessions/s%d" % self.rng.randrange(4),
                                 "global/user", "misc/deep/er"])
        return f"{scope}/w{self.args.id}-n{self.n}.md"

    def _filler(self) -> str:
        return " ".join(self.rng.choice(VOCAB) for _ in range(self.rng.randint(4, 60)))

    def _token(self) -> str:
        self.n += 1
        return token(self.args.id, self.n)

    def _write(self, rel: str, text: str):
        path = self.root / rel
        if self.rng.random() < 0.5:
            with open(path, "w", encoding="utf-8") as f:  # in place: readers may see it half-written
                f.write(text)
        else:
            tmp = path.with_name(f".tmp-{self.args.id}-{self.n}")  # hidden: never indexed
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)

    def _logline(self, op, rel, tok, started):
        self.log.write(json.dumps([op, rel, tok, started, now()]) + "\n")

    def create(self):
        rel = self._new_path()
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        filler = self._filler()
        path_id = rel.rsplit("/", 1)[1][:-3]
        tok = self._token()
        started = now()
        self._write(rel, body(path_id, 0, tok, filler))
        self._logline("create", rel, tok, started)
        self.live[rel] = (path_id, 0, filler)

    def edit(self):
        rel = self.rng.choice(list(self.live))
        path_id, version, filler = self.live[rel]
        if self.rng.random() < 0.5:
            filler = self._filler()
        tok = self._token()
        started = now()
        self._write(rel, body(path_id, version + 1, tok, filler))
        self._logline("edit", rel, tok, started)
        self.live[rel] = (path_id, version + 1, filler)

    def delete(self):
        rel = self.rng.choice(list(self.live))
        started = now()
        os.unlink(self.root / rel)
        self._logline("delete", rel, None, started)
        del self.live[rel]

    def rename(self):
        rel = self.rng.choice(list(self.live))
        new = self._new_path()
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        started = now()
        os.rename(self.root / rel, self.root / new)
        # One syscall: the old path ends and the new one begins at once, with
        # the same text (and token) as before.
        self._logline("rename", rel, new, started)
        self.live[new] = self.live.pop(rel)


class Querier(Role):
    def run(self):
        from memsearch import MemsearchError

        self.wait_start()
        self.via = {}  # how queries were made fresh: "walk" or "watcher" (handshake)
        tails = {}
        history: dict[str, list[str]] = {}  # path -> tokens, oldest first
        alive: dict[str, bool] = {}
        out = open(self.work / f"queries-{self.args.id}.log", "w", buffering=1)
        idx = self.index()
        while self.running():
            for log in self.work.glob("writer-*.log"):
                _tail(log, tails, lambda rec: _learn(rec, history, alive))
            if not history:
                time.sleep(0.01)
                continue
            paths = list(history)
            live = [p for p in paths if alive[p]]
            dead = [p for p in paths if not alive[p]]
            chosen = {}
            for _ in range(self.rng.randint(1, 3)):
                pick = self.rng.random()
                if dead and pick < 0.15:
                    p = self.rng.choice(dead)
                    chosen[p] = history[p][-1]
                elif live:
                    p = self.rng.choice(live)
                    old = pick < 0.3 and len(history[p]) > 1
                    chosen[p] = self.rng.choice(history[p][:-1]) if old else history[p][-1]
            if not chosen:
                continue
            tokens = list(dict.fromkeys(chosen.values()))
            fresh = self.rng.random() < 0.5
            started = now()
            try:
                if fresh:  # like a one-shot CLI call: open, migrate-check, reconcile, query
                    with self.index() as one:
                        result = one.search_result(" ".join(tokens), limit=50, floor=0.0)
                else:
                    result = idx.search_result(" ".join(tokens), limit=50, floor=0.0)
                hits = result.hits
                via = getattr(getattr(result, "freshness", None), "via", None) or "walk"
                self.via[via] = self.via.get(via, 0) + 1
            except (MemsearchError, Exception) as ex:  # noqa: BLE001
                self.errors.append(f"query: {ex!r}")
                idx.close()
                idx = self.index()
                continue
            done = now()
            self.ops += 1
            self.latencies_us.append((done - started) // 1000)
            out.write(json.dumps([started, done, tokens, [h.path for h in hits]]) + "\n")
        idx.close()
        out.close()
        self.finish({"via": self.via})


class Reconciler(Role):
    def run(self):
        self.wait_start()
        idx = self.index()
        changed = 0
        while self.running():
            started = now()
            try:
                if self.rng.random() < 0.2:
                    with self.index() as one:
                        report = one.reconcile()
                        one.status()
                else:
                    report = idx.reconcile()
                changed += len(report.added) + len(report.updated) + len(report.removed)
                self.ops += 1
                self.latencies_us.append((now() - started) // 1000)
            except Exception as ex:  # noqa: BLE001
                self.errors.append(f"reconcile: {ex!r}")
                idx.close()
                idx = self.index()
        idx.close()
        self.finish({"rows_changed": changed})


class WatcherRole(Role):
    """``memsearch watch`` in its own process: queries then prove freshness
    with a cookie handshake instead of walking the tree."""

    def run(self):
        from memsearch.watch import Watcher

        with self.index() as idx:
            watcher = Watcher(idx)
            try:
                watcher.start(timeout=120)  # before the start: its first reconcile is not the test
            except Exception as ex:  # noqa: BLE001
                self.errors.append(f"watcher start: {ex!r}")
                self.finish()
                return
            self.wait_start()
            while self.running():
                time.sleep(0.1)
                if watcher.state == "failed":
                    self.errors.append(f"watcher failed: {watcher.error}")
                    break
            self.ops = watcher.batches
            extra = {"events": watcher.events, "rescans": watcher.rescans, "overflows": watcher.overflows}
            watcher.stop()
        self.finish(extra)


ROLES = {"writer": Writer, "querier": Querier, "reconciler": Reconciler, "watcher": WatcherRole}


def _tail(path: Path, offsets: dict, handle):
    """Feed complete new lines of a log that another process appends to."""
    with open(path, "rb") as f:
        f.seek(offsets.get(path, 0))
        data = f.read()
    end = data.rfind(b"\n") + 1
    offsets[path] = offsets.get(path, 0) + end
    for line in data[:end].splitlines():
        handle(json.loads(line))


def _learn(rec, history, alive):
    op, rel, tok, _started, _done = rec
    if op in ("create", "edit"):
        history.setdefault(rel, []).append(tok)
        alive[rel] = True
    elif op == "delete":
        alive[rel] = False
    elif op == "rename":
        new = tok
        history.setdefault(new, []).append(history[rel][-1])
        alive[new], alive[rel] = True, False


# -- verification -------------------------------------------------------------

def load_timelines(work: Path):
    """path -> [(token or None, started, completed)]: what each operation left
    at the path (None: nothing). Each path has one writer, so its operations
    are ordered."""
    timelines: dict[str, list] = {}
    holders: dict[str, list] = {}  # token -> [(path, index in timeline)]
    current: dict[str, str] = {}
    for log in sorted(work.glob("writer-*.log")):
        for line in log.read_text().splitlines():
            op, rel, tok, started, done = json.loads(line)
            if op == "rename":
                moved = current.pop(rel)
                _append(timelines, holders, rel, None, started, done)
                _append(timelines, holders, tok, moved, started, done)
                current[tok] = moved
            elif op == "delete":
                current.pop(rel)
                _append(timelines, holders, rel, None, started, done)
            else:
                current[rel] = tok
                _append(timelines, holders, rel, tok, started, done)
    return timelines, holders


def _append(timelines, holders, rel, tok, started, done):
    line = timelines.setdefault(rel, [])
    if tok is not None:
        holders.setdefault(tok, []).append((rel, len(line)))
    line.append((tok, started, done))


def verify(work: Path) -> dict:
    timelines, holders = load_timelines(work)
    counts = {"queries": 0, "checks": 0, "stale": 0, "missing": 0, "phantom": 0}
    examples: list[str] = []
    for qlog in sorted(work.glob("queries-*.log")):
        for line in qlog.read_text().splitlines():
            qs, qe, tokens, returned = json.loads(line)
            counts["queries"] += 1
            returned = set(returned)
            allowed: set[str] = set()  # paths that may hold a queried token during the query
            required: set[str] = set()  # paths that must have held one throughout
            for tok in tokens:
                for rel, k in holders.get(tok, ()):
                    counts["checks"] += 1
                    _, _, made = timelines[rel][k]
                    nxt = timelines[rel][k + 1] if k + 1 < len(timelines[rel]) else None
                    if nxt is None or nxt[2] >= qs:
                        allowed.add(rel)
                    if made < qs and (nxt is None or nxt[1] > qe):
                        required.add(rel)
            for rel in returned - allowed:
                kind = "stale" if rel in timelines else "phantom"
                counts[kind] += 1
                examples.append(f"{kind}: {rel} for {tokens}")
            for rel in required - returned:
                counts["missing"] += 1
                examples.append(f"missing: {rel} for {tokens}")
    counts["examples"] = examples[:20]
    return counts


def final_check(work: Path) -> list[str]:
    """After the run: bring the index up to date once more, then compare it
    with the files, row by row, and run SQLite's and FTS5's own checks."""
    from memsearch import MemoryIndex

    root = work / "tree"
    with MemoryIndex(root, work / "index.db") as idx:
        idx.reconcile()
    return compare_index_with_files(root, work / "index.db")


def compare_index_with_files(root: Path, db: Path) -> list[str]:
    """Problems found comparing an index with the Markdown files under root
    (plain sqlite3 and os.walk, independent of memsearch's own code)."""
    problems = []
    conn = sqlite3.connect(db)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            problems.append(f"integrity_check: {check[:3]}")
        try:
            conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx, rank) VALUES('integrity-check', 1)")
        except sqlite3.Error as ex:
            problems.append(f"fts5 integrity-check: {ex}")
        rows = {path: (original(body, body_seg), tuple(fp)) for path, body, body_seg, *fp in conn.execute(
            "SELECT path, body, body_seg, size, mtime_ns, ctime_ns, device, inode FROM memory_fts")}
    finally:
        conn.close()
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".md") and not name.startswith("."):
                full = os.path.join(dirpath, name)
                st = os.stat(full)
                files[os.path.relpath(full, root).replace(os.sep, "/")] = (
                    Path(full).read_text("utf-8"), (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino))
    for rel in sorted(rows.keys() - files.keys())[:5]:
        problems.append(f"phantom row (no file): {rel}")
    for rel in sorted(files.keys() - rows.keys())[:5]:
        problems.append(f"lost file (no row): {rel}")
    stale = []
    for rel in sorted(files.keys() & rows.keys()):
        (text, fp), (body, stored_fp) = files[rel], rows[rel]
        # The last line carries the file's unique token; frontmatter may be
        # kept out of the body, so that is what must be there, fresh.
        if fp != stored_fp or text.rstrip().splitlines()[-1] not in body:
            stale.append(rel)
    problems += [f"stale row: {rel}" for rel in stale[:5]]
    return problems


# -- driver -------------------------------------------------------------------

def run_stress(work, *, seconds=30.0, writers=1, queriers=2, reconcilers=1, watchers=0, files=200,
               write_rate=200.0, seed=1) -> dict:
    work = Path(work)
    (work / "tree").mkdir(parents=True, exist_ok=True)
    # Time for every process to import memsearch (and a watcher to index the tree).
    start = now() + int((4.0 if watchers else 1.5) * 1e9)
    until = start + int(seconds * 1e9)
    procs = []
    for role, count in (("writer", writers), ("querier", queriers), ("reconciler", reconcilers),
                        ("watcher", watchers)):
        for i in range(count):
            cmd = [sys.executable, str(Path(__file__).resolve()), "_role", role, "--work", str(work), "--id", str(i),
                   "--start", str(start), "--until", str(until), "--files", str(files),
                   "--write-rate", str(write_rate), "--seed", str(seed)]
            err = open(work / f"stderr-{role}-{i}.txt", "wb")
            procs.append((role, i, subprocess.Popen(cmd, stderr=err, stdout=subprocess.DEVNULL), err))
    crashed = []
    for role, i, proc, err in procs:
        try:
            code = proc.wait(timeout=seconds + 120)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            code = "hung"
        err.close()
        if code != 0:
            tail = (work / f"stderr-{role}-{i}.txt").read_text(errors="replace").strip().splitlines()[-3:]
            crashed.append(f"{role} {i} exited {code}: {' | '.join(tail)}")
    stats = [json.loads(p.read_text()) for p in sorted(work.glob("stats-*.json"))]
    ops = {r: sum(s["ops"] for s in stats if s["role"] == r) for r in ROLES}
    errors = [e for s in stats for e in s["errors"]] + crashed
    error_count = sum(s["error_count"] for s in stats) + len(crashed)
    lat = sorted(x for s in stats if s["role"] == "querier" for x in s["latencies_us"])
    via: dict[str, int] = {}
    for s in stats:
        for k, v in s.get("via", {}).items():
            via[k] = via.get(k, 0) + v
    result = {
        "seconds": seconds,
        "processes": {"writers": writers, "queriers": queriers, "reconcilers": reconcilers, "watchers": watchers},
        "queries_via": via,
        "ops": ops,
        "ops_per_s": {r: round(n / seconds, 1) for r, n in ops.items()},
        "total_ops_per_s": round(sum(ops.values()) / seconds, 1),
        "query_ms_p50": round(lat[len(lat) // 2] / 1000, 1) if lat else None,
        "query_ms_p99": round(lat[int(len(lat) * 0.99)] / 1000, 1) if lat else None,
        "errors": error_count,
        "error_examples": errors[:10],
    }
    result.update(verify(work))
    result["final_check"] = final_check(work)
    result["ok"] = not (result["errors"] or result["stale"] or result["missing"] or result["phantom"]
                        or result["final_check"])
    return result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_role"]:
        p = argparse.ArgumentParser()
        p.add_argument("role", choices=ROLES)
        for name in ("--work", "--id", "--start", "--until", "--files", "--write-rate", "--seed"):
            p.add_argument(name)
        args = p.parse_args(argv[1:])
        args.id, args.start, args.until, args.files = int(args.id), int(args.start), int(args.until), int(args.files)
        args.write_rate = float(args.write_rate)
        ROLES[args.role](args).run()
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--writers", type=int, default=1)
    p.add_argument("--queriers", type=int, default=2)
    p.add_argument("--reconcilers", type=int, default=1)
    p.add_argument("--watchers", type=int, default=0, help="memsearch watch processes (queries then skip the walk)")
    p.add_argument("--files", type=int, default=200, help="files each writer starts with")
    p.add_argument("--write-rate", type=float, default=200.0, help="operations per second per writer (0: flat out)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dir", help="work directory (default: a new temporary one, removed unless --keep)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="memsearch-stress-"))
    result = run_stress(work, seconds=args.seconds, writers=args.writers, queriers=args.queriers,
                        reconcilers=args.reconcilers, watchers=args.watchers, files=args.files,
                        write_rate=args.write_rate, seed=args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{args.seconds:.0f}s, {args.writers} writer(s), {args.queriers} querier(s),"
              f" {args.reconcilers} reconciler(s), {args.watchers} watcher(s)")
        print("operations/s: " + ", ".join(f"{r} {v}" for r, v in result["ops_per_s"].items())
              + f", total {result['total_ops_per_s']}")
        print(f"query latency: p50 {result['query_ms_p50']} ms, p99 {result['query_ms_p99']} ms")
        print(f"queries verified: {result['queries']} ({result['checks']} token checks;"
              f" made fresh by: {result['queries_via']})")
        print(f"errors: {result['errors']}  stale: {result['stale']}  missing: {result['missing']}"
              f"  phantom: {result['phantom']}  final check: {len(result['final_check'])} problem(s)")
        for line in result["error_examples"] + result["examples"] + result["final_check"]:
            print("  " + line)
    if args.keep or not args.dir:
        print(f"work directory: {work}" if args.keep else "", end="\n" if args.keep else "")
    if not args.keep and not args.dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
