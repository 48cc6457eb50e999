"""MEMORY.md demotion (``memsearch.search.DEMOTE_INDEXES``) on LoCoMo, on and
off, through the library as shipped::

    python bench/index_demotion.py              # both LoCoMo units, every conversation

The demotion moves an index file (MEMORY.md) below the memory files of its
folder. LoCoMo trees hold no index file, so the two runs must agree to the
last question; the script counts the index files and compares every ranked
list, not just the totals. bench/agent_checkouts.py measures the demotion
where index files exist.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import corpora  # noqa: E402
import engines  # noqa: E402
import metrics  # noqa: E402
import quality  # noqa: E402
from agent_checkouts import DEFAULT_CORPORA  # noqa: E402  (found from a worktree too)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/memsearch-bench/demotion"))
    args = ap.parse_args()
    from memsearch import search

    units = [corpora.locomo_sessions(args.corpora, args.cache / "trees"),
             corpora.locomo_facts(args.corpora, args.cache / "trees")]
    print("| unit | trees | index files | demotion | n | R@1 | R@5 | R@10 | MRR |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for unit in units:
        indexes = sum(1 for tree in unit.trees for p in tree.root.rglob("*.md") if p.name.lower() == "memory.md")
        ranked = {}
        for demote in (False, True):
            search.DEMOTE_INDEXES = demote
            outcomes = []
            for tree in unit.trees:
                _, got = quality.run_tree(engines.MemsearchEngine(args.cache / "engine"), tree)
                outcomes += got
            ranked[demote] = [o.ranked for o in outcomes]
            s = metrics.summarize(outcomes)
            print(f"| {unit.name} | {len(unit.trees)} | {indexes} | {'on' if demote else 'off'} | {s['n']} |"
                  f" {s['r@1']:.3f} | {s['r@5']:.3f} | {s['r@10']:.3f} | {s['mrr']:.3f} |")
        same = sum(a == b for a, b in zip(ranked[False], ranked[True]))
        print(f"| {unit.name}: identical ranked lists | | | | {same} of {len(ranked[True])} | | | | |")
    search.DEMOTE_INDEXES = True


if __name__ == "__main__":
    main()
