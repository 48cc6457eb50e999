"""A fresh query on a folder of checkouts (``--root repos=DIR``) against the
bare stat walk of just the memory files it finds::

    python bench/discover.py                       # 200 checkouts x 2000 source files
    python bench/discover.py --checkouts 50 --files 500 --runs 9

Each generated checkout has source files in nested packages (the count
given), a .git folder, node_modules, a .venv, and agent memory in one or two
of the usual places (.claude/memory, .agents/memory, memory/, CLAUDE.md,
AGENTS.md, one nested AGENTS.md). Trees go under /tmp, never the repository.
The two timings are interleaved, in one process, after one warm-up each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

ROOT = Path("/tmp/memsearch-bench/discover")


def generate(checkouts: int, files: int) -> Path:
    src = ROOT / f"src-{checkouts}x{files}"
    if src.exists():
        return src
    tmp = src.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for c in range(checkouts):
        co = tmp / f"project-{c:03d}"
        for n in range(files):
            d = co / "src" / f"pkg{n % 20}" / f"sub{n % 7}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"mod{n}.py").write_text(f"def f{n}():\n    return {n}\n")
        for extra in (".git/objects/ab", "node_modules/lib", ".venv/lib"):
            (co / extra).mkdir(parents=True, exist_ok=True)
            (co / extra / "x.md").write_text("not memory\n")
        memory = co / (".claude/memory", ".agents/memory", "memory")[c % 3]
        memory.mkdir(parents=True, exist_ok=True)
        (memory / "MEMORY.md").write_text("- [db](db.md)\n")
        for m in range(8):
            (memory / f"note{m}.md").write_text(f"---\ndescription: note {m} of {c}\n---\nfact {m} about project {c}\n")
        (co / "CLAUDE.md").write_text(f"project {c} instructions{' zebracorn' if c == 7 else ''}\n")
        if c % 2:
            (co / "AGENTS.md").write_text("agents\n")
        (co / "src" / "pkg1" / "AGENTS.md").write_text("nested\n")
    tmp.rename(src)
    return src


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkouts", type=int, default=200)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--watcher", action="store_true",
                    help="then the same with `memsearch watch` running, and a clone made just before a query")
    ap.add_argument("--process", action="store_true",
                    help="then one-shot `memsearch query` processes, fresh against --no-reconcile")
    args = ap.parse_args()
    from memsearch import MemoryIndex, Root

    started = time.perf_counter()
    src = generate(args.checkouts, args.files)
    print(f"tree {src} ready in {time.perf_counter() - started:.0f}s")
    db = ROOT / "index.db"
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{db}{suffix}")
        except FileNotFoundError:
            pass
    with MemoryIndex(Root("repos", str(src)), db) as idx:
        started = time.perf_counter()
        report = idx.reconcile()
        build = time.perf_counter() - started
        files = [idx.locate(p) for (p,) in idx.conn.execute("SELECT path FROM memory_fts")]
        print(f"{len(files)} memory files found (index build, deep: {build:.2f}s, {len(report.added)} added)")

        def stat_walk():
            for f in files:
                os.stat(f)

        folders = sorted({os.path.dirname(f) for f in files})

        def scandir_walk():  # the plain walker's floor: a scandir per folder, a stat per file
            for d in folders:
                with os.scandir(d) as it:
                    for e in it:
                        if e.name.endswith(".md"):
                            e.stat(follow_symlinks=False)

        def fresh_query():
            assert idx.search("zebracorn", limit=5)  # a rare word: the search itself costs little

        stat_walk(), fresh_query(), scandir_walk()
        walks, queries, scans = [], [], []
        for _ in range(args.runs):
            for fn, out in ((stat_walk, walks), (fresh_query, queries), (scandir_walk, scans)):
                t = time.perf_counter()
                fn()
                out.append((time.perf_counter() - t) * 1000)
        w, q, sc = statistics.median(walks), statistics.median(queries), statistics.median(scans)
        print(f"bare stat walk of the memory files p50 {w:.2f} ms; scandir+stat of their folders p50 {sc:.2f} ms;"
              f" fresh query p50 {q:.2f} ms; ratio {q / w:.2f}x / {q / sc:.2f}x  (freshness: {idx.freshness.via})")
    if args.watcher:
        with_watcher(src, db, stat_walk, args.runs)
    if args.process:
        one_shot(src, db, args.runs)


def one_shot(src: Path, db: Path, runs: int) -> None:
    """What a `memsearch query` process pays for freshness: the installed
    console script, fresh against --no-reconcile, the two alternating."""
    import subprocess
    import sys

    exe = shutil.which("memsearch", path=os.path.dirname(sys.executable)) or "memsearch"
    cmd = [exe, "query", "zebracorn", "--root", f"repos={src}", "--db", str(db)]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # a warm-up
    fresh, bare = [], []
    for _ in range(runs):
        for extra, out in (([], fresh), (["--no-reconcile"], bare)):
            t = time.perf_counter()
            subprocess.run(cmd + extra, stdout=subprocess.DEVNULL, check=True)
            out.append((time.perf_counter() - t) * 1000)
    f, b = statistics.median(fresh), statistics.median(bare)
    print(f"one-shot `memsearch query` process p50 {f:.1f} ms; with --no-reconcile {b:.1f} ms;"
          f" freshness {f - b:.1f} ms")


def with_watcher(src: Path, db: Path, stat_walk, runs: int) -> None:
    """The fresh query with `memsearch watch` proving nothing changed (a
    cookie handshake instead of the probe), and a clone made just before a
    query, which that query must find."""
    import subprocess
    import sys

    from memsearch import MemoryIndex, Root

    exe = shutil.which("memsearch", path=os.path.dirname(sys.executable)) or "memsearch"
    proc = subprocess.Popen([exe, "watch", "--root", f"repos={src}", "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    clone = src / "zz-new-clone"
    try:
        with MemoryIndex(Root("repos", str(src)), db) as idx:
            while idx.status()["freshness"] != "watcher":
                if proc.poll() is not None:
                    raise SystemExit("memsearch watch exited")
                time.sleep(0.1)
            idx.search("zebracorn", limit=5)
            walks, queries = [], []
            for _ in range(runs):
                for fn, out in ((stat_walk, walks), (lambda: idx.search("zebracorn", limit=5), queries)):
                    t = time.perf_counter()
                    fn()
                    out.append((time.perf_counter() - t) * 1000)
            w, q = statistics.median(walks), statistics.median(queries)
            (clone / ".claude" / "memory").mkdir(parents=True)
            (clone / ".claude" / "memory" / "new.md").write_text("a note about quokkafish\n")
            t = time.perf_counter()
            found = [h.path for h in idx.search("quokkafish", limit=5)]
            took = (time.perf_counter() - t) * 1000
            print(f"with the watcher: fresh query p50 {q:.2f} ms ({q / w:.2f}x the stat walk, {w:.2f} ms;"
                  f" freshness: {idx.freshness.via}); a clone made just before a query: found {found}"
                  f" in {took:.1f} ms")
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(clone, ignore_errors=True)


if __name__ == "__main__":
    main()
