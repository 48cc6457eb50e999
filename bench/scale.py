"""Scale benchmark of the core engine (issue 2): build, fresh query, floors.

For trees of 1k, 10k and 100k Markdown files cut from real text in
../shared/corpora (MS C++ docs, tldr pages, agent memory), measured side by
side in one run:

- cold build: MemoryIndex.reconcile() into a new database, in a fresh
  subprocess (files/s, MB/s, peak RSS, database size), against the floor of a
  bare FTS5 bulk load of the same texts (one executemany into a trigger-less
  content table, then 'rebuild'; texts already in memory);
- fresh query on the unchanged tree (reconcile walk included), and query with
  reconcile off, against the floor of a bare stat walk (scandir + stat of
  every file) in the same process, and against `rg` over the same tree.

    python bench/scale.py [--sizes 1000,10000,100000] [--corpora DIR] [--work DIR]

Writes bench/results/scale.md and scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

QUERIES = [
    "compiler warning", "template specialization", "linker error LNK2019", "git commit", "docker port",
    "memory leak", "unicode string conversion", "exception handling", "thread pool", "archive extract",
    "lambda capture", "network interface", "file permissions", "virtual destructor", "regex replace",
    "process list", "disk usage", "pointer arithmetic", "ssh key", "move constructor",
]


# -- building trees ---------------------------------------------------------------------------

def source_texts(corpora: Path) -> list[str]:
    """Real texts, long documents cut at paragraph boundaries into notes of
    about 0.5-2 KB, the size of typical memory files."""
    files = sorted((corpora / "docs-cpp").rglob("*.md")) + sorted((corpora / "tldr").rglob("*.md"))
    files += sorted((corpora / "agent-memory").rglob("*.md"))
    texts = []
    for f in files:
        try:
            text = f.read_text("utf-8", "replace")
        except OSError:
            continue
        chunk = ""
        for para in text.split("\n\n"):
            chunk += para + "\n\n"
            if len(chunk) > 1200:
                texts.append(chunk)
                chunk = ""
        if chunk.strip():
            texts.append(chunk)
    return texts


def build_tree(root: Path, n: int, texts: list[str]) -> None:
    if (root / ".complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(n)
    order = list(range(len(texts)))
    rng.shuffle(order)
    for i in range(n):
        scope = ("projects", "sessions", "global")[i % 3]
        group = f"{scope[0]}{i // 300}"
        key = ("memory-", "notes-", "fact-")[i % 3]
        path = root / scope / group / f"{key}{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = texts[order[i % len(order)]]
        if i >= len(order):  # past one pass over the corpus, keep files distinct
            text = f"note {i}\n\n{text}"
        path.write_text(text, encoding="utf-8")
    (root / ".complete").write_text("ok")


# -- floors -----------------------------------------------------------------------------------

def stat_walk(root: str) -> int:
    """The floor under any fresh query: visit every directory and stat every file."""
    count, stack = 0, [root]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name.endswith(".md"):
                    e.stat(follow_symlinks=False)
                    count += 1
    return count


BARE_SCHEMA = """
CREATE TABLE memory_fts (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, scope TEXT, scope_id TEXT,
                         type TEXT NOT NULL, body TEXT NOT NULL, fingerprint TEXT NOT NULL);
CREATE VIRTUAL TABLE memory_fts_idx USING fts5(body, content='memory_fts', content_rowid='id',
                                               tokenize='unicode61 remove_diacritics 1');
"""


def bare_bulk_load(root: Path, db: Path) -> dict:
    rows = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".md"):
                p = os.path.join(dirpath, name)
                st = os.stat(p)
                with open(p, encoding="utf-8") as f:
                    rows.append((os.path.relpath(p, root), None, None, "free", f.read(), f"{st.st_size}-{st.st_mtime_ns}"))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(BARE_SCHEMA)
    t = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO memory_fts (path, scope, scope_id, type, body, fingerprint) VALUES (?,?,?,?,?,?)", rows)
    conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx) VALUES('rebuild')")
    conn.execute("COMMIT")
    seconds = time.perf_counter() - t
    conn.close()
    return {"seconds": seconds, "files": len(rows), "files_per_s": len(rows) / seconds}


# -- memsearch ----------------------------------------------------------------------------------

COLD_BUILD = """
import json, sys, time
sys.path.insert(0, {repo!r})
from memsearch import MemoryIndex
t = time.perf_counter()
with MemoryIndex({root!r}, {db!r}) as idx:
    r = idx.reconcile()
s = time.perf_counter() - t
# VmHWM, not getrusage(): ru_maxrss survives exec, so a child would report the
# parent's peak (the benchmark holds every text in memory for the bare load).
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({{"seconds": s, "files": len(r.added), "peak_rss_kb": hwm}}))
"""


def cold_build(root: Path, db: Path) -> dict:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    code = COLD_BUILD.format(repo=str(REPO), root=str(root), db=str(db))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    result["files_per_s"] = result["files"] / result["seconds"]
    result["db_bytes"] = sum(os.path.getsize(f"{db}{s}") for s in ("", "-wal") if os.path.exists(f"{db}{s}"))
    return result


def memsearch_exe() -> list[str]:
    """The installed console script, as users run it."""
    exe = shutil.which("memsearch", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "memsearch.cli"]


def bytecode_env(cache: Path) -> dict:
    """The environment for memsearch processes, with a bytecode cache as an
    installed package has: this machine sets PYTHONDONTWRITEBYTECODE, which
    would make every process compile memsearch anew."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def timed(fn, repeats):
    times = []
    for i in range(repeats):
        t = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": statistics.median(times), "p95_ms": pct(times, 0.95)}


def measure(root: Path, db: Path, repeats: int) -> dict:
    from memsearch import MemoryIndex

    tree_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs if f.endswith(".md"))
    bare = bare_bulk_load(root, db.with_name("bare.db"))
    build = cold_build(root, db)
    build["mb_per_s"] = tree_bytes / 1e6 / build["seconds"]
    with MemoryIndex(root, db) as idx:
        idx.search("warm up")
        # Interleave the measured operations so machine noise hits all alike.
        walk, fresh, stale_ok = [], [], []
        for i in range(repeats):
            q = QUERIES[i % len(QUERIES)]
            t = time.perf_counter(); stat_walk(str(root)); walk.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter(); idx.search(q); fresh.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter(); idx.search(q, reconcile=False); stale_ok.append((time.perf_counter() - t) * 1000)
    rg = timed(lambda i: subprocess.run(
        ["rg", "-l", "-i", "-F", "--no-messages", *sum((["-e", w] for w in QUERIES[i % len(QUERIES)].split()), []), str(root)],
        capture_output=True), max(5, repeats // 4)) if shutil.which("rg") else None
    env = bytecode_env(db.parent / "pycache")
    cli = timed(lambda i: subprocess.run(
        [*memsearch_exe(), "query", *QUERIES[i % len(QUERIES)].split(), "--root", str(root), "--db", str(db)],
        capture_output=True, cwd=REPO, env=env), 15)
    summary = lambda xs: {"p50_ms": statistics.median(xs), "p95_ms": pct(xs, 0.95)}
    return {
        "files": build["files"], "tree_mb": tree_bytes / 1e6, "build": build, "bare_bulk_load": bare,
        "build_ratio_to_bare": build["files_per_s"] / bare["files_per_s"],
        "stat_walk": summary(walk), "fresh_query": summary(fresh), "query_no_reconcile": summary(stale_ok),
        "fresh_ratio_to_walk": statistics.median(fresh) / statistics.median(walk),
        "rg": rg, "cli_query_process": cli,
    }


def render(results: dict) -> str:
    lines = [
        "| files | tree MB | cold build files/s | MB/s | bare FTS5 load files/s | build / bare | peak RSS MB | db MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, r in results.items():
        b = r["build"]
        lines.append(f"| {r['files']:,} | {r['tree_mb']:.1f} | {b['files_per_s']:,.0f} | {b['mb_per_s']:.1f} | "
                     f"{r['bare_bulk_load']['files_per_s']:,.0f} | **{r['build_ratio_to_bare']:.2f}×** | "
                     f"{b['peak_rss_kb'] / 1024:.0f} | {b['db_bytes'] / 1e6:.1f} |")
    lines += ["", "| files | stat walk p50 | fresh query p50 / p95 | fresh / walk | query, reconcile off p50 / p95 | rg p50 | `memsearch query` process p50 |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for n, r in results.items():
        rg = f"{r['rg']['p50_ms']:.1f} ms" if r["rg"] else "n/a"
        lines.append(f"| {r['files']:,} | {r['stat_walk']['p50_ms']:.1f} ms | {r['fresh_query']['p50_ms']:.1f} / {r['fresh_query']['p95_ms']:.1f} ms | "
                     f"**{r['fresh_ratio_to_walk']:.2f}×** | {r['query_no_reconcile']['p50_ms']:.2f} / {r['query_no_reconcile']['p95_ms']:.2f} ms | "
                     f"{rg} | {r['cli_query_process']['p50_ms']:.0f} ms |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    ap.add_argument("--work", default="/tmp/memsearch-scale")
    ap.add_argument("--repeats", type=int, default=40)
    args = ap.parse_args()
    work = Path(args.work)
    texts = source_texts(Path(args.corpora))
    if not texts:
        sys.exit(f"no texts under {args.corpora}: give --corpora the shared corpora folder")
    results = {}
    for n in (int(s) for s in args.sizes.split(",")):
        root = work / f"tree-{n}"
        build_tree(root, n, texts)
        results[n] = measure(root, work / f"index-{n}.db", args.repeats)
        print(render({n: results[n]}), flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "scale.json").write_text(json.dumps(results, indent=2))
    (out / "scale.md").write_text(render(results))
    print(render(results))


if __name__ == "__main__":
    main()
