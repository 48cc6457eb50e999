"""Live index benchmark (issue 6): fresh queries with a running watcher.

On a tree built like bench/scale.py's (build_tree over the same real texts;
a copy of its own, since the trials edit it), with `memsearch watch` running
in its own process, measured side by side in one run, rounds interleaved so
that machine noise hits every column alike:

- in-process fresh query through the watcher (MemoryIndex.search: cookie
  handshake + query), and the handshake and the query alone;
- in-process fresh query without a watcher (the reconcile walk), on a copy
  of the same index that no watcher follows;
- `rg` over the same tree, with the same words;
- whole-process `memsearch query` with the watcher, and without;
- freshness trials: a file edited (in place, atomic save, created, renamed,
  deleted) just before a query, queried at once, in-process and from a new
  process: every query must show the change.

    python bench/watch.py [--files 100000] [--work /tmp/memsearch-watch] [--rounds 30] [--trials 200]

Writes bench/results/watch.md and watch.json. The load average is recorded:
on a shared machine every figure is an upper bound.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from scale import QUERIES, build_tree, bytecode_env, memsearch_exe, pct, source_texts  # noqa: E402

# Memory-style queries: one to three rare words, as the agent tool tells
# models to search. Each matches some of the tree's files.
RARE = ["pgbouncer", "LNK2019", "vcpkg manifest", "tar extract", "ssh-keygen", "lambda capture",
        "CMake toolchain", "docker compose", "git rebase", "iptables"]


def summary(values):
    return {"p50_ms": statistics.median(values), "p95_ms": pct(values, 0.95), "n": len(values)}


def count_dirs(root: Path) -> int:
    return sum(1 for _ in os.walk(root))


def ensure_index(root: Path, db: Path) -> float:
    """A freshly built index for the tree: a cold build, as bench/scale.py's
    (an index reused from an earlier run carries that run's trial writes)."""
    from memsearch import MemoryIndex

    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    with MemoryIndex(root, db) as idx:
        idx.reconcile()
        idx.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return time.perf_counter() - started


def copy_index(db: Path, to: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{to}{suffix}").unlink(missing_ok=True)
    src = sqlite3.connect(db)
    dst = sqlite3.connect(to)
    src.backup(dst)
    src.close()
    dst.close()


def start_watcher(root: Path, db: Path, env: dict) -> tuple[subprocess.Popen, float]:
    from memsearch import MemoryIndex

    log = open(f"{db}.watch.log", "w")
    started = time.perf_counter()
    proc = subprocess.Popen([*memsearch_exe(), "watch", "--root", str(root), "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=log, env=env)
    log.close()
    with MemoryIndex(root, db) as idx:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"memsearch watch exited: {Path(f'{db}.watch.log').read_text()}")
            row = idx.conn.execute("SELECT state FROM watcher").fetchone()
            if row and row[0] == "ready" and idx.status()["freshness"] == "watcher":
                return proc, time.perf_counter() - started
            time.sleep(0.1)


def rss_kb(pid: int) -> int | None:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Host:
    """A long-running host of its own, as the MCP server or an embedding
    agent is: one MemoryIndex in its own process, answering queries sent
    down a pipe with the times it measured itself. Each side of the
    comparison gets one, so neither runs in a process that has just walked
    100k files for the other (that walk's garbage and cold caches made the
    watched side's queries ~1.5x slower when both shared this process)."""

    def __init__(self, root: Path, db: Path, env: dict):
        self.proc = subprocess.Popen([sys.executable, __file__, "--host", str(root), str(db)], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ask({"text": "warm up"})

    def ask(self, request: dict) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def serve_host(root: str, db: str) -> None:
    """The Host's side: per request, a fresh query (MemoryIndex.search_result);
    with "parts", then the cookie handshake alone and the query alone."""
    from memsearch import MemoryIndex, freshness

    with MemoryIndex(root, db) as idx:
        for line in sys.stdin:
            request = json.loads(line)
            t = time.perf_counter()
            result = idx.search_result(request["text"])
            out = {"fresh": (time.perf_counter() - t) * 1000, "via": result.freshness.via}
            if request.get("parts"):
                t = time.perf_counter()
                reason = freshness.sync(idx.conn, idx.roots, idx.settings.sync_timeout)
                out["handshake"] = (time.perf_counter() - t) * 1000
                out["handshake_failed"] = reason
                t = time.perf_counter()
                idx.search(request["text"], reconcile=False)
                out["query_only"] = (time.perf_counter() - t) * 1000
            print(json.dumps(out), flush=True)


def measure(root: Path, watched_db: Path, walked_db: Path, rounds: int, env: dict) -> dict:
    words = QUERIES + RARE
    cols = {k: [] for k in ("watch_fresh", "watch_fresh_rare", "watch_fresh_broad", "handshake", "query_only_rare",
                            "query_only_broad", "walk_fresh", "rg", "cli_watch", "cli_walk", "python_startup",
                            "python_import")}
    walked_via, watched_via = {}, {}
    watched, walked = Host(root, watched_db, env), Host(root, walked_db, env)
    try:
        for i in range(rounds):
            for kind, q in (("broad", QUERIES[i % len(QUERIES)]), ("rare", RARE[i % len(RARE)])):
                got = watched.ask({"text": q, "parts": True})
                assert got["handshake_failed"] is None, got
                cols["watch_fresh"].append(got["fresh"])
                cols[f"watch_fresh_{kind}"].append(got["fresh"])
                cols["handshake"].append(got["handshake"])
                cols[f"query_only_{kind}"].append(got["query_only"])
                watched_via[got["via"]] = watched_via.get(got["via"], 0) + 1
                got = walked.ask({"text": q})
                cols["walk_fresh"].append(got["fresh"])
                walked_via[got["via"]] = walked_via.get(got["via"], 0) + 1
            q = words[i % len(words)]
            if shutil.which("rg"):
                t = time.perf_counter()
                subprocess.run(["rg", "-l", "-i", "-F", "--no-messages", *sum((["-e", w] for w in q.split()), []),
                                str(root)], capture_output=True)
                cols["rg"].append((time.perf_counter() - t) * 1000)
            for kind, cq in (("broad", QUERIES[i % len(QUERIES)]), ("rare", RARE[i % len(RARE)])):
                for key, db in (("cli_watch", watched_db), ("cli_walk", walked_db)):
                    t = time.perf_counter()
                    subprocess.run([*memsearch_exe(), "query", *cq.split(), "--root", str(root), "--db", str(db)],
                                   capture_output=True, env=env)
                    cols[key].append((time.perf_counter() - t) * 1000)
                    cols.setdefault(f"{key}_{kind}", []).append(cols[key][-1])
            for key, code in (("python_startup", "pass"), ("python_import", "import memsearch.cli")):
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", code], capture_output=True, env=env)
                cols[key].append((time.perf_counter() - t) * 1000)
    finally:
        watched.close()
        walked.close()
    out = {k: summary(v) for k, v in cols.items() if v}
    out["watched_via"], out["walked_via"] = watched_via, walked_via
    return out


def query_cost(root: Path, db: Path, rounds: int) -> dict:
    """The query alone (reconcile off), to compare before and after the
    trials' hundreds of small watcher batches."""
    from memsearch import MemoryIndex

    cols = {"query_only_rare": [], "query_only_broad": []}
    with MemoryIndex(root, db) as idx:
        for i in range(rounds):
            for kind, q in (("broad", QUERIES[i % len(QUERIES)]), ("rare", RARE[i % len(RARE)])):
                t = time.perf_counter()
                idx.search(q, reconcile=False)
                cols[f"query_only_{kind}"].append((time.perf_counter() - t) * 1000)
    return {k: summary(v) for k, v in cols.items()}


# -- freshness trials ------------------------------------------------------------------------

KINDS = ("edit", "atomic", "create", "rename", "delete")


def trial_paths(root: Path, rng: random.Random, n: int) -> list[Path]:
    files = []
    for dirpath, _, names in os.walk(root):
        files += [Path(dirpath) / name for name in names if name.endswith(".md")]
        if len(files) > 20 * n:
            break
    return rng.sample(files, n)


def run_trials(root: Path, db: Path, trials: int, env: dict, *, cli: bool, seed: int) -> dict:
    """Each trial changes the tree and queries at once; the query must show it."""
    from memsearch import MemoryIndex

    rng = random.Random(seed)
    targets = trial_paths(root, rng, trials)
    results = {k: {"ok": 0, "failed": [], "via": {}, "ms": []} for k in KINDS}

    with MemoryIndex(root, db) as idx:
        def query(token):
            t = time.perf_counter()
            if cli:
                out = subprocess.run([*memsearch_exe(), "query", token, "--root", str(root), "--db", str(db),
                                      "--json", "--no-floor"], capture_output=True, text=True, env=env)
                ms = (time.perf_counter() - t) * 1000
                data = json.loads(out.stdout) if out.stdout else {"results": [], "freshness": {"via": "?"}}
                return sorted(r["path"] for r in data["results"]), data["freshness"]["via"], ms
            result = idx.search_result(token, floor=0.0)
            ms = (time.perf_counter() - t) * 1000
            return sorted(h.path for h in result.hits), result.freshness.via, ms

        for i, path in enumerate(targets):
            kind = KINDS[i % len(KINDS)]
            token = f"zq{seed}t{i}x{rng.randrange(10**9)}"
            rel = path.relative_to(root).as_posix()
            original = path.read_bytes()
            cleanup = None
            if kind == "edit":
                path.write_bytes(original + f"\n{token}\n".encode())
                want = [rel]
            elif kind == "atomic":
                tmp = path.with_name(f".{path.name}.tmp")
                tmp.write_bytes(original + f"\n{token}\n".encode())
                os.replace(tmp, path)
                want = [rel]
            elif kind == "create":
                new = path.with_name(f"new-{token}.md")
                new.write_text(f"a new note {token}\n")
                want = [new.relative_to(root).as_posix()]
                cleanup = new.unlink
            elif kind == "rename":
                path.write_bytes(original + f"\n{token}\n".encode())
                query(token)  # indexed under the old name first
                moved = path.with_name(f"renamed-{path.name}")
                os.rename(path, moved)
                want = [moved.relative_to(root).as_posix()]
                cleanup = lambda moved=moved, path=path: os.rename(moved, path)  # noqa: E731
            else:  # delete
                doomed = path.with_name(f"doomed-{token}.md")
                doomed.write_text(f"about to go {token}\n")
                query(token)
                doomed.unlink()
                want = []
            got, via, ms = query(token)  # at once: no pause between the change and the query
            r = results[kind]
            r["via"][via] = r["via"].get(via, 0) + 1
            r["ms"].append(ms)
            if got == want:
                r["ok"] += 1
            else:
                r["failed"].append({"path": rel, "want": want, "got": got})
            if cleanup:
                cleanup()
            path.write_bytes(original)
    return {k: {"trials": len(v["ms"]), "ok": v["ok"], "failed": v["failed"][:5], "via": v["via"],
                **summary(v["ms"])} for k, v in results.items()}


# -- report ------------------------------------------------------------------------------------

def render(r: dict) -> str:
    m = r["measure"]
    lines = [
        f"{r['files']:,} files in {r['dirs']:,} directories; fs.inotify.max_user_watches = {r['max_user_watches']}; "
        f"load average {r['load_before'][0]:.1f} before / {r['load_after'][0]:.1f} after, on {r['cpus']} CPUs.",
        f"Cold build {r['index_build_s']:.0f} s. Watcher start on the built index (initial reconcile included):"
        f" {r['watcher_start_s']:.1f} s; "
        f"watcher RSS {r['watcher_rss_mb']} MB.",
        "",
        "| per query, p50 / p95 | ms |",
        "|---|---:|",
    ]
    rows = [("in-process fresh query, watcher (handshake + query), all queries", "watch_fresh"),
            ("  the same, rare-word queries (memory style: `pgbouncer`, `git rebase`)", "watch_fresh_rare"),
            ("  the same, broad queries of bench/scale.py (`compiler warning`)", "watch_fresh_broad"),
            ("  cookie handshake alone", "handshake"),
            ("  query alone (reconcile off), rare-word queries", "query_only_rare"),
            ("  query alone (reconcile off), broad queries", "query_only_broad"),
            ("in-process fresh query, no watcher (reconcile walk)", "walk_fresh"),
            ("`rg -l -i -F` over the tree", "rg"),
            ("`memsearch query` process, watcher, all queries", "cli_watch"),
            ("  the same, rare-word queries", "cli_watch_rare"),
            ("  the same, broad queries", "cli_watch_broad"),
            ("`memsearch query` process, no watcher", "cli_walk"),
            ("`python -c pass` process (interpreter start)", "python_startup"),
            ("`python -c 'import memsearch.cli'` process", "python_import")]
    for label, key in rows:
        if key in m:
            lines.append(f"| {label} | {m[key]['p50_ms']:.1f} / {m[key]['p95_ms']:.1f} |")
    a = r.get("after_trials")
    if a:
        lines += [f"| query alone after the freshness trials' small batches, rare / broad (p50) | "
                  f"{a['query_only_rare']['p50_ms']:.1f} / {a['query_only_broad']['p50_ms']:.1f} |"]
    lines += ["", f"Fresh query speed-up with the watcher (p50): "
              f"{m['walk_fresh']['p50_ms'] / m['watch_fresh']['p50_ms']:.0f}× in-process, "
              f"{m['cli_walk']['p50_ms'] / m['cli_watch']['p50_ms']:.1f}× whole-process. "
              f"Queries through the watcher: {m['watched_via']}; without: {m['walked_via']}.", ""]
    for where in ("library", "cli"):
        t = r["trials"].get(where)
        if not t:
            continue
        ok = sum(v["ok"] for v in t.values())
        n = sum(v["trials"] for v in t.values())
        lines += [f"Freshness trials ({'in-process' if where == 'library' else 'a new `memsearch query` process each'}):"
                  f" **{ok} / {n}** queries showed the change made just before them.", "",
                  "| change | ok | via | query p50 / p95 ms |", "|---|---:|---|---:|"]
        for kind, v in t.items():
            lines.append(f"| {kind} | {v['ok']} / {v['trials']} | {v['via']} | {v['p50_ms']:.1f} / {v['p95_ms']:.1f} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1:2] == ["--host"]:
        return serve_host(*sys.argv[2:4])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    ap.add_argument("--work", default="/tmp/memsearch-watch")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--cli-trials", type=int, default=200)
    args = ap.parse_args()

    from memsearch import event_source

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    root = work / f"tree-{args.files}"
    build_tree(root, args.files, source_texts(Path(args.corpora)))
    dirs = count_dirs(root)
    limit = event_source.max_user_watches()
    if limit is not None and dirs > limit:
        raise SystemExit(f"{dirs} directories exceed fs.inotify.max_user_watches ({limit}): raise it first, "
                         f"e.g. sudo sysctl fs.inotify.max_user_watches={4 * dirs}")
    watched_db, walked_db = work / f"watched-{args.files}.db", work / f"walked-{args.files}.db"
    build_s = ensure_index(root, watched_db)
    copy_index(watched_db, walked_db)
    # The queries get the default 1 s cookie timeout, as users do; the config
    # file is only there so no user config changes the run.
    config = work / "config.toml"
    config.write_text("")
    os.environ["MEMSEARCH_CONFIG"] = str(config)
    env = bytecode_env(work / "pycache")
    subprocess.run([sys.executable, "-c", "import memsearch.cli"], env=env, check=True)

    load_before = os.getloadavg()
    proc, start_s = start_watcher(root, watched_db, env)
    try:
        measured = measure(root, watched_db, walked_db, args.rounds, env)
        trials = {"library": run_trials(root, watched_db, args.trials, env, cli=False, seed=1)}
        if args.cli_trials:
            trials["cli"] = run_trials(root, watched_db, args.cli_trials, env, cli=True, seed=2)
        rss = rss_kb(proc.pid)
        after = query_cost(root, watched_db, args.rounds)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
    results = {
        "files": args.files, "dirs": dirs, "max_user_watches": limit, "cpus": os.cpu_count(),
        "load_before": load_before, "load_after": os.getloadavg(), "index_build_s": build_s,
        "watcher_start_s": start_s, "watcher_rss_mb": round(rss / 1024) if rss else None,
        "measure": measured, "trials": trials, "after_trials": after,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "watch.json").write_text(json.dumps(results, indent=2))
    (out / "watch.md").write_text(render(results) + "\n")
    print(render(results))


if __name__ == "__main__":
    main()
