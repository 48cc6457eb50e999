"""Retrieval quality and latency of memsearch next to its lexical peers.

One command converts the shared corpora into memory trees, builds every
engine on every tree, asks each tree its own questions, and writes
``quality.md``, ``quality.json``, ``recall_at_5.png`` and ``latency.png``::

    python bench/quality.py                      # everything (~15 min)
    python bench/quality.py --split tune --quick # LoCoMo tuning split only
    python bench/quality.py --engines baseline tantivy --corpus locomo-fact

``--split`` picks LoCoMo conversations (tune = 0-4, heldout = 5-9); the
other corpora have no split and run only with ``--split all``. Trees are
written under ``--cache`` (outside the repository), never into it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import corpora
import engines
import metrics

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DEFAULT_CORPORA = REPO_DIR.parent / "shared" / "corpora"
DEFAULT_OUT = BENCH_DIR / "results"
DEFAULT_CACHE = Path("/tmp/memsearch-bench")

LOCOMO_UNITS = ("locomo-session", "locomo-fact")
QUICK_ENGINES = ("memsearch", "baseline", "tantivy", "bm25s", "bm25s-stem")
SPLITS = ("all", "tune", "heldout")

# A query unrelated to any question, run once after each build so that the
# first timed question does not pay for opening files and warming caches.
WARMUP_QUERY = "warm up the index"

METRIC_COLUMNS = [
    ("n", "n"),
    ("r@1", "R@1"),
    ("r@5", "R@5"),
    ("r@10", "R@10"),
    ("all@5", "all@5"),
    ("all@10", "all@10"),
    ("mrr", "MRR"),
    ("p50_ms", "p50 ms"),
    ("p95_ms", "p95 ms"),
]


@dataclass
class EngineRun:
    """Everything one engine did on one unit: outcomes and build times."""

    outcomes: list[tuple[str | None, metrics.Outcome]] = field(default_factory=list)
    trees: list[dict] = field(default_factory=list)
    error: str | None = None

    def summary(self, split: str = "all", category: str | None = None) -> dict:
        selected = [
            outcome
            for tree_split, outcome in self.outcomes
            if split == "all" or tree_split == split
            if category is None or outcome.category == category
        ]
        return metrics.summarize(selected)

    def build_seconds(self, split: str = "all") -> float:
        return sum(
            t["build_s"] for t in self.trees if split == "all" or t["split"] == split
        )


# --------------------------------------------------------------------------
# Running


def run_tree(engine: engines.Engine, tree: corpora.Tree) -> tuple[float, list]:
    """Build ``engine`` on ``tree`` and ask it the tree's questions."""
    start = time.perf_counter()
    engine.build(tree.root)
    build_s = time.perf_counter() - start
    engine.search(WARMUP_QUERY, metrics.DEPTH)
    outcomes = []
    for question in tree.questions:
        start = time.perf_counter()
        ranked = engine.search(question.text, metrics.DEPTH)
        latency_ms = (time.perf_counter() - start) * 1000
        outcomes.append(
            metrics.Outcome(
                question.qid,
                question.category,
                question.gold,
                tuple(ranked[: metrics.DEPTH]),
                latency_ms,
            )
        )
    engine.close()
    return build_s, outcomes


def run_engine(name: str, unit: corpora.Unit, cache: Path) -> EngineRun:
    """Run one engine over every tree of a unit, timing it as it goes."""
    run = EngineRun()
    started = time.perf_counter()
    for tree in unit.trees:
        engine = engines.ENGINES[name](cache / "engines" / name)
        build_s, outcomes = run_tree(engine, tree)
        run.outcomes += [(tree.split, o) for o in outcomes]
        run.trees.append(
            {
                "tree": tree.name,
                "split": tree.split,
                "files": tree.files,
                "bytes": tree.bytes,
                "build_s": build_s,
                "p50_ms": metrics.percentile([o.latency_ms for o in outcomes], 50),
            }
        )
    print(f"  {unit.name} / {name}: {len(run.outcomes)} questions on "
          f"{len(unit.trees)} trees in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    return run


def run_unit(unit: corpora.Unit, engine_names: list[str], cache: Path) -> dict:
    runs = {}
    for name in engine_names:
        try:
            runs[name] = run_engine(name, unit, cache)
        except Exception as ex:  # noqa: BLE001
            # An engine under development must not cost the other engines'
            # numbers; the failure is printed and written into the report.
            message = f"{type(ex).__name__}: {ex}"
            print(f"  {unit.name} / {name}: FAILED: {message}", file=sys.stderr)
            runs[name] = EngineRun(error=message)
    return runs


def select_trees(unit: corpora.Unit, split: str) -> corpora.Unit:
    if split != "all":
        unit.trees = [t for t in unit.trees if t.split == split]
    return unit


# --------------------------------------------------------------------------
# Reporting


def unit_result(unit: corpora.Unit, runs: dict[str, EngineRun]) -> dict:
    """The JSON-ready numbers for one unit; a failed engine keeps its error."""
    present = [s for s in ("tune", "heldout") if any(t.split == s for t in unit.trees)]
    # A run over one LoCoMo split reports that split alone, not twice.
    splits = present if len(present) == 1 else ["all"] + present
    categories = sorted(
        {q.category for t in unit.trees for q in t.questions}, key=_category_order
    )
    return {
        "title": unit.title,
        "description": unit.description,
        "quality": unit.quality,
        "trees": len(unit.trees),
        "questions": unit.questions,
        "splits": splits,
        "categories": categories,
        "engines": {
            name: {"error": run.error} if run.error else engine_result(run, splits, categories)
            for name, run in runs.items()
        },
    }


def engine_result(run: EngineRun, splits: list[str], categories: list[str]) -> dict:
    return {
        "splits": {
            s: {**run.summary(s), "build_s": run.build_seconds(s)} for s in splits
        },
        "categories": {c: run.summary("all", c) for c in categories},
        "trees": run.trees,
    }


def succeeded(result: dict) -> dict:
    """The engines of a unit result that ran to the end."""
    return {e: d for e, d in result["engines"].items() if "error" not in d}


def _category_order(category: str):
    # LoCoMo's categories in upstream order (1 multi-hop ... 4 single-hop),
    # everything else alphabetically after them.
    names = list(corpora.LOCOMO_CATEGORIES.values())
    return (names.index(category), "") if category in names else (len(names), category)


def _cell(key: str, value) -> str:
    if key == "n":
        return str(value)
    if key.endswith("_ms"):
        return f"{value:.2f}"
    if key == "build_s":
        return f"{value:.2f}"
    return f"{value:.3f}"


def metrics_table(rows: list[tuple[list[str], dict]], labels: list[str]) -> list[str]:
    header = labels + [title for _, title in METRIC_COLUMNS]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "---|" * len(labels) + "---:|" * len(METRIC_COLUMNS)]
    for label_cells, summary in rows:
        cells = [_cell(key, summary[key]) if key in summary else "" for key, _ in METRIC_COLUMNS]
        lines.append("| " + " | ".join(label_cells + cells) + " |")
    return lines


def unit_markdown(name: str, result: dict) -> list[str]:
    lines = [
        f"### {result['title']} (`{name}`)",
        "",
        result["description"],
        f"This run: {result['trees']} trees, {result['questions']} questions.",
        "",
    ]
    ran = succeeded(result)
    rows = [
        ([split, engine, _cell("build_s", data["splits"][split]["build_s"])],
         data["splits"][split])
        for split in result["splits"]
        for engine, data in ran.items()
    ]
    lines += metrics_table(rows, ["split", "engine", "build s"]) + [""]
    for engine, data in result["engines"].items():
        if "error" in data:
            lines += [f"`{engine}` failed on this corpus: `{data['error']}`", ""]
    if len(result["categories"]) > 1:
        lines += ["By question category (all questions of this run):", ""]
        rows = [
            ([category, engine], data["categories"][category])
            for category in result["categories"]
            for engine, data in ran.items()
        ]
        lines += metrics_table(rows, ["category", "engine"]) + [""]
    return lines


def environment(engine_names: list[str], skipped: dict[str, str]) -> dict:
    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "tantivy": version("tantivy"),
        "bm25s": version("bm25s"),
        "PyStemmer": version("PyStemmer"),
        "memsearch": version("memsearch-fts"),  # the distribution's name (README: Installing)
        "ripgrep": (_output(["rg", "--version"]) or "not installed").removeprefix("ripgrep "),
        "memsearch commit": _output(["git", "-C", str(REPO_DIR), "describe", "--always", "--dirty"]),
        "machine": f"{platform.machine()}, {_cpus()} CPUs",
        # Latencies are only comparable within one run; the load says how
        # busy the (possibly shared) machine was when this one started.
        "load average": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "engines": engine_names,
        "skipped": skipped,
    }


def _output(command: list[str]) -> str | None:
    """First line a helper program prints, or None when it cannot run."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return result.stdout.split("\n")[0].strip() or None


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _command(args) -> str:
    """The command line that reproduces this report (defaults left out)."""
    words = ["python bench/quality.py"]
    if args.split != "all":
        words.append(f"--split {args.split}")
    if args.engines:
        words.append("--engines " + " ".join(args.engines))
    if args.corpus:
        words.append("--corpus " + " ".join(args.corpus))
    if args.quick:
        words.append("--quick")
    return " ".join(words)


def report_markdown(results: dict, env: dict, args) -> str:
    lines = [
        "# Retrieval quality: results",
        "",
        f"Generated by `{_command(args)}`. Do not edit by hand.",
        "",
        "Metrics: R@k = share of questions with any gold file in the top k; "
        "all@k = all gold files in the top k; MRR over the top 10; "
        "p50/p95 = per-query latency in the benchmark process (warm index); "
        "build s = total index build time over the unit's trees. "
        "LoCoMo splits: tune = conversations 0-4, heldout = 5-9 (file order). "
        "Questions with no gold file in a tree are left out.",
        "",
        "Engines:",
        "",
    ]
    for name in env["engines"]:
        lines.append(f"- `{name}`: {engines.ENGINES[name].description}")
    for name, reason in env["skipped"].items():
        lines.append(f"- `{name}`: not run: {reason}")
    versions = ", ".join(
        f"{key} {env[key]}"
        for key in ("python", "sqlite", "tantivy", "bm25s", "PyStemmer", "ripgrep",
                    "memsearch", "memsearch commit")
        if env[key]
    )
    lines += [
        "",
        f"Environment: {versions}; {env['machine']}, load average "
        f"{env['load average']} at the start.",
        "",
    ]
    for name, result in results.items():
        lines += unit_markdown(name, result)
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Charts


def recall_chart(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = []  # (label, {engine: r@5})
    for name, result in results.items():
        if not result["quality"]:
            continue
        for split in result["splits"]:
            if split == "tune" and len(result["splits"]) > 1:
                continue  # tuning numbers are for tuning, not for the chart
            label = name + ("" if split == "all" else f"\n({split})")
            groups.append((label, {e: d["splits"][split]["r@5"] for e, d in succeeded(result).items()}))
    if not groups:
        return
    engine_names = []
    for _, values in groups:
        engine_names += [e for e in values if e not in engine_names]
    width = 0.8 / len(engine_names)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups)), 4.5))
    for i, engine in enumerate(engine_names):
        xs = [g + (i - (len(engine_names) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [values.get(engine, 0) for _, values in groups], width, label=engine)
    ax.set_xticks(range(len(groups)), [label for label, _ in groups], fontsize=8)
    ax.set_ylabel("recall@5 (any gold file in top 5)")
    ax.set_ylim(0, 1)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(engine_names), loc="lower center",
              bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.set_title("Recall@5 by engine and corpus", pad=28)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _median_kib(data: dict) -> float:
    return statistics.median(tree["bytes"] for tree in data["trees"]) / 1024


def latency_chart(results: dict, path: Path) -> None:
    """p50 query latency per engine against the size of a unit's trees.

    One point per unit and engine: x is the median Markdown size of the
    unit's trees (bytes, not files: 940 long LongMemEval sessions weigh more
    than 5,000 short notes would), y the p50 over all its questions.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    engine_names = []
    for result in results.values():
        engine_names += [e for e in succeeded(result) if e not in engine_names]
    for engine in engine_names:
        points = sorted(
            (_median_kib(data), data["splits"][result["splits"][0]]["p50_ms"])
            for result in results.values()
            for name, data in succeeded(result).items()
            if name == engine
        )
        ax.plot(*zip(*points), marker="o", label=engine)
    for name, result in results.items():
        for data in list(succeeded(result).values())[:1]:
            ax.annotate(name, (_median_kib(data), 1), xycoords=("data", "axes fraction"),
                        xytext=(2, -4), textcoords="offset points", rotation=90,
                        va="top", fontsize=7, alpha=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tree size, KiB of Markdown (median over the unit's trees, log)")
    ax.set_ylabel("p50 query latency, ms (log)")
    ax.set_title("Query latency vs tree size", pad=12)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------
# Command line


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA,
                        help="the shared corpora directory (default: ../shared/corpora)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where to write the report (default: bench/results)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help="scratch space for trees and indexes (default: /tmp/memsearch-bench)")
    parser.add_argument("--split", choices=SPLITS, default="all",
                        help="LoCoMo conversations to run; non-LoCoMo corpora run only with 'all'")
    parser.add_argument("--engines", nargs="+", choices=list(engines.ENGINES),
                        help="engines to run (default: every available one)")
    parser.add_argument("--corpus", nargs="+", choices=list(corpora.CONVERTERS),
                        help="corpus units to run (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="LoCoMo only, without ripgrep: the tuning loop")
    return parser.parse_args(argv)


def choose(args) -> tuple[list[str], list[str], dict[str, str]]:
    units = args.corpus or list(corpora.CONVERTERS)
    if args.quick or args.split != "all":
        units = [u for u in units if u in LOCOMO_UNITS]
    wanted = args.engines or list(QUICK_ENGINES if args.quick else engines.ENGINES)
    skipped = {}
    ready = []
    for name in wanted:
        reason = engines.ENGINES[name].unavailable()
        if reason:
            skipped[name] = reason
        else:
            ready.append(name)
    return units, ready, skipped


def main(argv=None) -> None:
    args = parse_args(argv)
    units, engine_names, skipped = choose(args)
    for name, reason in skipped.items():
        print(f"skipping {name}: {reason}", file=sys.stderr)
    results = {}
    for unit_name in units:
        print(f"{unit_name}: converting", file=sys.stderr)
        unit = corpora.CONVERTERS[unit_name](args.corpora, args.cache / "trees")
        unit = select_trees(unit, args.split)
        runs = run_unit(unit, engine_names, args.cache)
        results[unit_name] = unit_result(unit, runs)
    env = environment(engine_names, skipped)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "quality.json").write_text(
        json.dumps({"environment": env, "split": args.split, "units": results}, indent=1) + "\n"
    )
    (args.out / "quality.md").write_text(report_markdown(results, env, args) + "\n")
    try:
        import matplotlib  # noqa: F401 (the bench extra has it; the figures above do not need it)
    except ImportError:
        print(f"wrote {args.out}/quality.md and quality.json; no charts: matplotlib is missing", file=sys.stderr)
        return
    recall_chart(results, args.out / "recall_at_5.png")
    latency_chart(results, args.out / "latency.png")
    print(f"wrote {args.out}/quality.md, quality.json and charts", file=sys.stderr)


if __name__ == "__main__":
    main()
