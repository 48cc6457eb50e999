"""What code words cost (issue 33): build time, query time and index size on
a tree cut from the shared corpora (2,000 MS C++ docs pages, 2,000 English
and 500 Chinese tldr pages, the agent-memory files: 4.7k files, 9.6 MB), for
the memsearch that ``PYTHONPATH`` (or the venv) imports. Run it for two
checkouts back to back, alternating::

    PYTHONPATH=/tmp/main-checkout python bench/code_words.py
    python bench/code_words.py
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import sys
import time
from pathlib import Path

DEFAULT_CORPORA = next((p / "shared" / "corpora" for p in Path(__file__).resolve().parents
                        if (p / "shared" / "corpora").is_dir()), Path("../shared/corpora"))
QUERIES = ["getUserById", "template class", "how do I compress a folder", "C++ lambda capture", "git status"]


def lay_out(corpora: Path, tree: Path) -> None:
    if tree.exists():
        return
    n = 0
    for pattern, count in (("docs-cpp/**/*.md", 2000), ("tldr/pages/common/*.md", 2000),
                           ("tldr/pages.zh/common/*.md", 500), ("agent-memory/*/.claude/memory/*.md", 10000)):
        for f in sorted(corpora.glob(pattern))[:count]:
            folder = tree / "projects" / f"p{n % 50}"
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, folder / f"f{n}.md")
            n += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--tree", type=Path, default=Path("/tmp/memsearch-bench/code-words-tree"))
    args = ap.parse_args()
    lay_out(args.corpora, args.tree)
    args.tree.mkdir(parents=True, exist_ok=True)
    from memsearch import MemoryIndex

    db = Path(f"/tmp/memsearch-bench/code-words-{os.getpid()}.db")
    started = time.perf_counter()
    with MemoryIndex(str(args.tree), db) as idx:
        idx.reconcile()
        build = time.perf_counter() - started
        build_cpu = sum(sum(resource.getrusage(who)[:2]) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        timings = {}
        for label, reconcile in (("fresh", True), ("no reconcile", False)):
            started = time.perf_counter()
            for _ in range(5):
                for q in QUERIES:
                    idx.search(q, reconcile=reconcile)
            timings[label] = (time.perf_counter() - started) / (5 * len(QUERIES))
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
    conn = sqlite3.connect(db)
    tables = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    conn.close()
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    print(f"{sys.modules['memsearch'].__file__}: build {build:.2f} s, fresh query {timings['fresh'] * 1e3:.1f} ms,"
          f" query without reconcile {timings['no reconcile'] * 1e3:.2f} ms, index {size / 1e6:.1f} MB,"
          f" CPU {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.2f} s + reader {children:.2f} s"
          f" (the build's user + system, both processes: {build_cpu:.2f} s);"
          f" content table {tables['memory_fts'] / 1e6:.2f} MB, FTS postings {tables['memory_fts_idx_data'] / 1e6:.2f} MB")
    for p in db.parent.glob(db.name + "*"):
        p.unlink()


if __name__ == "__main__":
    main()
