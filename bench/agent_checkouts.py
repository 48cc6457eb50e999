"""The agent-memory corpus laid out as real checkouts, searched through ONE
``repos`` root, next to tantivy and bm25s over the same files::

    python bench/agent_checkouts.py                 # memsearch (index demotion on and off), tantivy, bm25s
    python bench/agent_checkouts.py --corpora DIR --questions paraphrased

Each ``<owner>__<repo>`` folder of ../shared/corpora/agent-memory becomes a
checkout under /tmp/memsearch-bench/checkouts/src, with its files at their
upstream paths (``.claude/memory/...``, ``CLAUDE.md``) and a few hundred
source files around them, so that discovery has something to skip.

Four question sets:

- ``paraphrased`` (bench/agent_questions.tsv): 67 questions written by hand
  the way a user asks, not in the files' own description words, in English
  and the corpus's other languages (Chinese, Korean, German, French), each
  with the file that answers it. Split ``dev`` (looked at while working on
  ranking) and ``held`` (never looked at one by one): both are reported.
- ``blind`` (bench/agent_questions_blind.tsv): 90 more, 45 English
  questions, 35 search-box keyword queries and 10 Chinese questions, written
  by a helper that never ran an engine nor saw the first set: a set measured,
  never tuned on.
- ``blind2`` (bench/agent_questions_blind2.tsv): 60 English questions in
  a user's own words, short, medium and long, written blind the same way
  by another helper, after the first two sets showed no English gap.
- ``descriptions``: generated at run time, never stored here: each memory
  file's frontmatter ``description`` (its author's own words, so easy)
  asks for that file. "English" are the questions without CJK text.

MEMORY.md indexes are never the gold (they are what item 4 of issue 15 is
about). The peers index every ``.md`` file the memory places hold, the
same files memsearch discovers.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import engines  # noqa: E402
import metrics  # noqa: E402
from corpora import _frontmatter  # noqa: E402

DEFAULT_CORPORA = next((p for p in (BENCH.parent.parent / "shared" / "corpora", BENCH.parents[2] / "shared" / "corpora")
                        if p.is_dir()), BENCH.parent.parent / "shared" / "corpora")
CACHE = Path("/tmp/memsearch-bench/checkouts")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
SOURCE_FILES = 300  # per checkout: discovery must pass over them
QUESTIONS = BENCH / "agent_questions.tsv"
BLIND = BENCH / "agent_questions_blind.tsv"
BLIND2 = BENCH / "agent_questions_blind2.tsv"


def _rows(path: Path, header: list[str]) -> list[list[str]]:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    assert rows[0] == header, rows[0]
    return rows[1:]


def paraphrased() -> list[tuple[str, str, str, str]]:
    """(qid, question, gold path, "lang/split") of the hand-written set."""
    rows = _rows(QUESTIONS, ["lang", "split", "question", "gold"])
    return [(f"q{n}", question, gold, f"{lang}/{split}") for n, (lang, split, question, gold) in enumerate(rows, 1)]


def blind(path: Path = BLIND, prefix: str = "b") -> list[tuple[str, str, str, str]]:
    """(qid, question, gold path, kind) of a set written blind."""
    return [(f"{prefix}{n}", question, gold, kind)
            for n, (kind, question, gold) in enumerate(_rows(path, ["kind", "question", "gold"]), 1)]


def _length(question: str) -> str:
    words = len(question.split())
    return "short" if words <= 7 else "medium" if words <= 14 else "long"


def lay_out(corpora: Path) -> tuple[Path, list[tuple[str, str, str]]]:
    """The checkouts, and (qid, question, gold path) for every question."""
    source = corpora / "agent-memory"
    src = CACHE / "src"
    if src.exists():
        shutil.rmtree(src)
    questions = []
    for checkout in sorted(p for p in source.iterdir() if p.is_dir()):
        for path in sorted(checkout.rglob("*.md")):
            rel = path.relative_to(source).as_posix()
            target = src / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8")
            target.write_text(text, encoding="utf-8")
            description = _frontmatter(text).get("description")
            if path.name != "MEMORY.md" and isinstance(description, str) and description.strip():
                questions.append((rel, description, rel))
        for n in range(SOURCE_FILES):  # source code around the memory
            f = src / checkout.name / "src" / f"pkg{n % 10}" / f"mod{n}.py"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(f"def f{n}():\n    return {n}\n")
        (src / checkout.name / ".git").mkdir(exist_ok=True)
    return src, questions


class ReposEngine(engines.Engine):
    """memsearch through one repos root on the folder of checkouts."""

    name = "memsearch"
    demote = True

    def build(self, root: Path) -> None:
        from memsearch import MemoryIndex, Root

        db = self._fresh_scratch() / "memsearch.db"
        self.index = MemoryIndex(Root("repos", str(root)), db)
        self.index.reconcile()

    def search(self, question: str, k: int) -> list[str]:
        from memsearch import NoSearchableWords, search

        search.DEMOTE_INDEXES = self.demote
        try:
            return [h.path for h in self.index.search(question, limit=k)]
        except NoSearchableWords:
            return []

    def close(self) -> None:
        self.index.close()


class ReposEngineNoDemotion(ReposEngine):
    name = "memsearch (index files not demoted)"
    demote = False


def run(cls, src: Path, questions: list) -> list:
    engine = cls(CACHE / "engines" / cls.name.split()[0])
    engine.build(src)
    outcomes = []
    for qid, text, gold, category in questions:
        ranked = engine.search(text, metrics.DEPTH)
        outcomes.append(metrics.Outcome(qid, category, frozenset({gold}), tuple(ranked[:metrics.DEPTH]), 0.0))
    engine.close()
    return outcomes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--questions", choices=("paraphrased", "blind", "blind2", "descriptions", "both", "all"),
                    default="all", help="both: paraphrased and descriptions")
    ap.add_argument("--misses", action="store_true",
                    help="list the paraphrased and blind questions memsearch misses at 5")
    args = ap.parse_args()
    src, generated = lay_out(args.corpora)
    sets = []
    if args.questions in ("paraphrased", "both", "all"):
        asked = paraphrased()
        sets.append(("paraphrased", asked, (
            ("all", lambda c: True), ("English", lambda c: c.startswith("en/")),
            ("other languages", lambda c: not c.startswith("en/")),
            ("dev", lambda c: c.endswith("/dev")), ("held out", lambda c: c.endswith("/held")),
            ("English held out", lambda c: c == "en/held"))))
    if args.questions in ("blind", "all"):
        sets.append(("blind", blind(), (
            ("all", lambda c: True), ("English", lambda c: c == "en"), ("keywords", lambda c: c == "kw"),
            ("Chinese", lambda c: c == "zh"))))
    if args.questions in ("blind2", "all"):
        asked = [(qid, text, gold, _length(text)) for qid, text, gold, _ in blind(BLIND2, "c")]
        sets.append(("blind2", asked, (("English", lambda c: True), *((f"English, {c}", c.__eq__)
                                                                      for c in ("short", "medium", "long")))))
    if args.questions in ("descriptions", "both", "all"):
        asked = [(qid, text, gold, "cjk" if CJK.search(text) else "en") for qid, text, gold in generated]
        sets.append(("descriptions", asked, (("all", lambda c: True), ("English", lambda c: c == "en"))))
    runs = [ReposEngine, ReposEngineNoDemotion, engines.TantivyEngine, engines.Bm25sEngine]
    print(f"{len(list(src.iterdir()))} checkouts, one repos root\n")
    for title, questions, groups in sets:
        print(f"### {title} ({len(questions)} questions)\n")
        print("| engine | questions | n | R@1 | R@5 | R@10 | MRR |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for cls in runs:
            why = cls.unavailable()
            if why:
                print(f"| {cls.name} | skipped: {why} |")
                continue
            outcomes = run(cls, src, questions)
            for label, chosen in groups:
                picked = [o for o in outcomes if chosen(o.category)]
                s = metrics.summarize(picked)
                print(f"| {cls.name} | {label} | {s['n']} | {s['r@1']:.3f} | {s['r@5']:.3f} | {s['r@10']:.3f} |"
                      f" {s['mrr']:.3f} |")
            if args.misses and cls is ReposEngine and title != "descriptions":
                text = {qid: (q, gold) for qid, q, gold, _ in questions}
                for o in outcomes:
                    if not o.hit_at(5):
                        print(f"|   miss {o.qid} {o.category}: {text[o.qid][0]!r} -> {o.ranked[:3]} (gold {text[o.qid][1]})")
        print()


if __name__ == "__main__":
    main()
