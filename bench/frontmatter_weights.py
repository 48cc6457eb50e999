"""Do frontmatter columns and bm25() weights help recall? (issue 3)

Builds the agent-memory tree and the ten LoCoMo fact trees with the
converters of ``bench/corpora.py`` and asks each its questions through the
library (``MemoryIndex.search``, default floor, limit 10), for:

* ``core``: the core engine (git revision ``--core-rev``, extracted with
  ``git archive`` into the cache), which indexes the file as it is on disk;
* every ``--weights`` triple (body, name, description) of ``bm25()`` over
  the new columns, with the body column holding either the text after the
  frontmatter (``body``: what memsearch stores) or the whole file (``whole``).

    python bench/frontmatter_weights.py                 # ~2 min
    python bench/frontmatter_weights.py --weights 1,1,1 1,2,2

Prints a Markdown table; ``--json FILE`` writes the numbers too. Trees and
indexes go under ``--cache`` (default /tmp/memsearch-fm-bench), never into
the repository.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import corpora  # noqa: E402
import metrics  # noqa: E402

DEFAULT_WEIGHTS = ["1,0,0", "1,1,1", "1,2,2", "1,1,2", "1,2,4", "1,4,4", "1,0.5,2", "1,1,4", "1,4,8"]
UNITS = {"agent-memory": corpora.agent_memory, "locomo-fact": corpora.locomo_facts}


def convert(corpora_dir: Path, cache: Path) -> dict:
    """{unit: [(tree root, [(question, sorted gold)])]} as JSON-able data."""
    out = {}
    for name, converter in UNITS.items():
        unit = converter(corpora_dir, cache / "trees")
        out[name] = [
            (str(tree.root), [(q.text, sorted(q.gold)) for q in tree.questions]) for tree in unit.trees
        ]
    return out


def evaluate(index, questions) -> dict:
    outcomes = []
    for n, (text, gold) in enumerate(questions):
        started = time.perf_counter()
        try:
            ranked = tuple(h.path for h in index.search(text, limit=metrics.DEPTH, reconcile=False))
        except ValueError:  # a question with no searchable words
            ranked = ()
        ms = (time.perf_counter() - started) * 1000
        outcomes.append(metrics.Outcome(str(n), "all", frozenset(gold), ranked, ms))
    return outcomes


def worker(src: str, config: dict) -> dict:
    """Run in a fresh interpreter whose memsearch comes from ``src``."""
    sys.path.insert(0, src)
    import memsearch
    from memsearch import MemoryIndex

    assert memsearch.__file__.startswith(src), memsearch.__file__
    scratch = Path(config["scratch"])
    results: dict = {}
    bodies = ["core"] if config["core"] else ["body", "whole"]
    for body in bodies:
        if body == "whole":
            import memsearch.prepare as prepare_mod

            prepare_mod.indexed_body = lambda text, meta: text  # the file as it is on disk
        for unit, trees in config["trees"].items():
            per_weights: dict = {}
            for t, (root, questions) in enumerate(trees):
                db = scratch / f"{body}-{unit}-{t}.db"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
                with MemoryIndex(root, db) as index:
                    index.reconcile()
                    if body == "core":
                        per_weights.setdefault("-", []).extend(evaluate(index, questions))
                        continue
                    import memsearch.search as search_mod

                    for weights in config["weights"]:
                        search_mod.COLUMN_WEIGHTS = tuple(float(w) for w in weights.split(","))
                        per_weights.setdefault(weights, []).extend(evaluate(index, questions))
            for weights, outcomes in per_weights.items():
                results.setdefault(unit, {})[f"{body} {weights}"] = metrics.summarize(outcomes)
    return results


def run_worker(src: Path, config: dict) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", str(src)], input=json.dumps(config),
        capture_output=True, text=True, check=False,
    )
    if out.returncode:
        raise SystemExit(f"worker for {src} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def table(results: dict) -> str:
    units = list(results)
    variants = list(dict.fromkeys(v for u in units for v in results[u]))
    head = "| variant | " + " | ".join(f"{u} R@1 | R@5 | R@10 | MRR" for u in units) + " |"
    rule = "|---|" + "---:|" * (4 * len(units))
    rows = [head, rule]
    for v in variants:
        cells = []
        for u in units:
            s = results[u].get(v)
            cells += [f"{s[k]:.3f}" for k in ("r@1", "r@5", "r@10", "mrr")] if s else ["", "", "", ""]
        rows.append(f"| {v} | " + " | ".join(cells) + " |")
    n = ", ".join(f"{u}: {next(iter(results[u].values()))['n']} questions" for u in units)
    return "\n".join(rows) + f"\n\n({n}; weights are bm25(body, name, description))"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", type=Path, default=REPO_DIR.parent / "shared" / "corpora")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memsearch-fm-bench"))
    parser.add_argument("--core-rev", default="bd942bd", help="git revision of the core engine")
    parser.add_argument("--weights", nargs="+", default=DEFAULT_WEIGHTS)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, json.loads(sys.stdin.read()))))
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    trees = convert(args.corpora, args.cache)
    scratch = args.cache / "indexes"
    scratch.mkdir(exist_ok=True)
    core_src = args.cache / f"core-{args.core_rev}"
    if not (core_src / "memsearch").is_dir():
        core_src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO_DIR), "archive", args.core_rev, "memsearch", "migrations"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(core_src)], input=archive, check=True)
    base = {"trees": trees, "scratch": str(scratch), "weights": args.weights}
    results: dict = {}
    for src, core in ((core_src, True), (REPO_DIR, False)):
        for unit, variants in run_worker(src, {**base, "core": core}).items():
            results.setdefault(unit, {}).update(variants)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
