"""Ranking variants for issue 8, tuned on LoCoMo conversations 0-4.

Each candidate change to memsearch's ranking is a knob of one engine,
:class:`VariantEngine`: the library's schema (content table, FTS5 over the
frontmatter-free body, ``name`` and ``description``) in stdlib sqlite3, with
the query side parameterized. The tables of ``bench/RANKING.md`` come from
this script; each one varies one knob around the chosen defaults::

    python bench/ranking.py                    # tune split (conversations 0-4), ~2 min
    python bench/ranking.py --split heldout    # the same tables on 5-9, for the report only
    python bench/ranking.py --latency --split heldout   # where a query's time goes, next to tantivy

Output: a Markdown report on stdout and, with ``--out``, in a file (plus a
JSON twin). Trees go under ``--cache`` (default /tmp/memsearch-ranking),
never into the repository.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO_DIR))

import corpora  # noqa: E402
import engines  # noqa: E402
import metrics  # noqa: E402
import quality  # noqa: E402
from memsearch import metadata  # noqa: E402

WORD = re.compile(r"\w+")

TOKENIZERS = {
    "unicode61": "unicode61 remove_diacritics 1",
    "porter": "porter unicode61 remove_diacritics 1",
}

# Lucene's (and bm25s's) 33 English stop words.
STOP_LUCENE = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
# NLTK's English list (179 words; bm25s ships it as STOPWORDS_EN_PLUS).
STOP_NLTK = frozenset(
    "i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he "
    "him his himself she she's her hers herself it it's its itself they them their theirs themselves what "
    "which who whom this that that'll these those am is are was were be been being have has had having do "
    "does did doing a an the and but if or because as until while of at by for with about against between "
    "into through during before after above below to from up down in out on off over under again further "
    "then once here there when where why how all any both each few more most other some such no nor not "
    "only own same so than too very s t can will just don don't should should've now d ll m o re ve y ain "
    "aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't "
    "ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't "
    "won won't wouldn wouldn't".split()
)
STOP_LISTS = {"none": frozenset(), "lucene": STOP_LUCENE, "nltk": STOP_NLTK}

K1, B = 1.2, 0.75  # FTS5's bm25() constants (fixed in SQLite)


@dataclass(frozen=True)
class Variant:
    """One ranking configuration. ``scoring``: ``fts5`` = one OR query
    ordered by FTS5's bm25() (the design); ``lucene`` = one FTS5 query per
    word or phrase, each bm25() turned into Lucene's idf, summed."""

    tokenizer: str = "unicode61"
    weights: tuple[float, float, float] = (1.0, 1.0, 2.0)
    scoring: str = "fts5"
    stop: str = "none"
    df_drop: float | None = None  # drop words in more than this share of files (keep the rarest)
    pairs: str = "none"  # none | all (skip stop+stop) | raw (every adjacent pair) | content (both non-stop)
    pair_weight: float = 0.5
    prf: tuple[int, int, float] | None = None  # (feedback files, expansion words, weight)
    floor: float = 0.15
    floor_ref: str = "top"  # top | top3 (mean of the top three) | mass (sum of the words' idf)
    fetch: int = 30  # candidates the floor judges (the library: min(3 x limit, 50))

    def label(self, base: "Variant") -> str:
        diffs = [f"{f}={getattr(self, f)}" for f in self.__dataclass_fields__ if getattr(self, f) != getattr(base, f)]
        return ", ".join(diffs) or "(defaults)"


class VariantEngine(engines.Engine):
    """The library's schema in stdlib sqlite3, ranked as a Variant says."""

    name = "variant"

    def __init__(self, scratch: Path, variant: Variant):
        super().__init__(scratch)
        self.v = variant

    def build(self, root: Path) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.executescript(f"""
            CREATE TABLE m (id INTEGER PRIMARY KEY, path TEXT, name TEXT, description TEXT, body TEXT);
            CREATE VIRTUAL TABLE f USING fts5(body, name, description, content='m', content_rowid='id',
                                              tokenize='{TOKENIZERS[self.v.tokenizer]}');
        """)
        rows = []
        for relpath, text in engines.tree_files(root):
            # What reconcile stores: name and description in their own
            # columns, the body after the frontmatter (the whole file when
            # the frontmatter is unusable).
            meta = metadata.parse(text) if metadata.starts_with_fence(text) else metadata.Metadata(body=text)
            rows.append((relpath, meta.name, meta.description, text if meta.error else meta.body))
        self.db.executemany("INSERT INTO m (path, name, description, body) VALUES (?,?,?,?)", rows)
        self.db.execute("INSERT INTO f (f) VALUES ('rebuild')")
        self.n = len(rows)
        self.paths = {i: r[0] for i, r in enumerate(rows, 1)}
        self._phrase: dict[str, tuple[int, dict[int, float]]] = {}
        if self.v.prf:
            self.words_of = {i: Counter(w.lower() for w in WORD.findall(" ".join(filter(None, r[1:]))))
                             for i, r in enumerate(rows, 1)}
            self.surface_df = Counter()
            for c in self.words_of.values():
                self.surface_df.update(c.keys())

    # -- query words ------------------------------------------------------
    def words(self, question: str) -> tuple[list[str], list[str]]:
        """(all words in order, each once; the words searched on their own)."""
        seen, every = set(), []
        for w in WORD.findall(question):
            if w.casefold() not in seen:
                seen.add(w.casefold())
                every.append(w)
        stop = STOP_LISTS[self.v.stop]
        kept = [w for w in every if w.casefold() not in stop] or every
        if self.v.df_drop is not None and kept:
            df = {w: self.phrase(w)[0] for w in kept}
            kept = [w for w in kept if df[w] <= self.v.df_drop * self.n] or [min(kept, key=df.get)]
        return every, kept

    def pairs(self, question: str) -> list[str]:
        """Adjacent words of the question (as the library pairs them: in
        text order, a word never with itself, each pair once)."""
        stop = STOP_LISTS[self.v.stop]
        sequence = WORD.findall(question)
        out: dict[str, str] = {}
        for first, second in zip(sequence, sequence[1:]):
            a, b = first.casefold() in stop, second.casefold() in stop
            if first.casefold() == second.casefold():
                continue
            if self.v.pairs == "raw" or (self.v.pairs == "all" and not (a and b)) or (
                    self.v.pairs == "content" and not (a or b)):
                out.setdefault(f"{first} {second}".casefold(), f"{first} {second}")
        return list(out.values())

    # -- scoring ----------------------------------------------------------
    def weights_sql(self) -> str:
        return ", ".join(repr(float(w)) for w in self.v.weights)

    def phrase(self, text: str) -> tuple[int, dict[int, float]]:
        """(files matching the phrase, {rowid: bm25 tf part}) from FTS5."""
        if text not in self._phrase:
            rows = self.db.execute(
                f"SELECT rowid, -bm25(f, {self.weights_sql()}) FROM f WHERE f MATCH ?", ('"' + text + '"',)
            ).fetchall()
            n = len(rows)
            fts_idf = max(math.log((self.n - n + 0.5) / (n + 0.5)), 1e-6)
            self._phrase[text] = (n, {i: s / fts_idf for i, s in rows})
        return self._phrase[text]

    def lucene_idf(self, n: int) -> float:
        return math.log(1 + (self.n - n + 0.5) / (n + 0.5))

    def scored(self, question, kept) -> list[tuple[int, float]]:
        if self.v.scoring == "fts5":
            phrases = ['"' + w + '"' for w in kept] + ['"' + p + '"' for p in self.pairs(question)]
            return self.db.execute(
                f"SELECT rowid, -bm25(f, {self.weights_sql()}) FROM f WHERE f MATCH ? "
                f"ORDER BY bm25(f, {self.weights_sql()}), rowid",
                (" OR ".join(phrases),),
            ).fetchall()
        total: Counter = Counter()
        for text, weight in [(w, 1.0) for w in kept] + [(p, self.v.pair_weight) for p in self.pairs(question)]:
            n, parts = self.phrase(text)
            if n:
                idf = weight * self.lucene_idf(n)
                for i, part in parts.items():
                    total[i] += idf * part
        return sorted(total.items(), key=lambda x: (-x[1], x[0]))

    def feedback(self, kept, rows) -> list[tuple[int, float]]:
        """Pseudo-relevance feedback: add the top files' most distinctive
        words as a second, lighter query and merge the scores."""
        files, count, weight = self.v.prf
        query = {w.casefold() for w in kept}
        gain: Counter = Counter()
        for i, s in rows[:files]:
            words = self.words_of[i]
            length = sum(words.values())
            for w, tf in words.items():
                df = self.surface_df[w]
                if w in query or w in STOP_NLTK or w.isdigit() or df < 2 or df > self.n / 2:
                    continue
                gain[w] += tf / length * math.log((self.n - df + 0.5) / (df + 0.5)) * s / rows[0][1]
        expansion = [w for w, _ in gain.most_common(count)]
        if not expansion:
            return rows
        total = Counter(dict(rows))
        second = self.scored("", expansion)
        if second:
            scale = weight * rows[0][1] / second[0][1]
            for i, s in second:
                total[i] += s * scale
        return sorted(total.items(), key=lambda x: (-x[1], x[0]))

    def floor_cut(self, kept, rows) -> list[tuple[int, float]]:
        if not rows or self.v.floor <= 0:
            return rows
        if self.v.floor_ref == "top":
            ref = rows[0][1]
        elif self.v.floor_ref == "top3":
            ref = sum(s for _, s in rows[:3]) / len(rows[:3])
        else:  # mass: what a file matching every word once, at average length, would score
            ref = sum(self.lucene_idf(self.phrase(w)[0]) for w in kept if self.phrase(w)[0])
        return rows[:1] + [r for r in rows[1:] if r[1] >= ref * self.v.floor]

    def search(self, question: str, k: int) -> list[str]:
        every, kept = self.words(question)
        if not kept:
            return []
        rows = self.scored(question, kept)
        if self.v.prf and rows:
            rows = self.feedback(kept, rows)
        rows = self.floor_cut(kept, rows[: max(k, self.v.fetch)])
        return [self.paths[i] for i, _ in rows[:k]]

    def close(self) -> None:
        self.db.close()


# --------------------------------------------------------------------------
# The tables

# The shipped defaults; every table varies one knob around them.
CHOSEN = Variant(tokenizer="porter", scoring="lucene", stop="nltk", pairs="all", pair_weight=0.5)
DESIGN = Variant()


def steps() -> dict[str, list[Variant]]:
    c = CHOSEN
    return {
        "Cumulative: from the design's settings to the chosen defaults": [
            DESIGN,
            replace(DESIGN, tokenizer="porter"),
            replace(DESIGN, tokenizer="porter", scoring="lucene"),
            replace(DESIGN, tokenizer="porter", scoring="lucene", stop="nltk"),
            c,
            replace(c, floor=0.0),
        ],
        "Tokenizer": [replace(c, tokenizer="unicode61"), c],
        "Scoring: FTS5's bm25() over one OR query, or per-word bm25() with Lucene's idf": [
            replace(c, scoring="fts5"), c],
        "Very common words: stop lists, document-frequency cut": [
            replace(c, stop="none"), replace(c, stop="lucene"), c,
            replace(c, stop="none", df_drop=0.5), replace(c, stop="none", df_drop=0.25),
            replace(c, df_drop=0.5),
        ],
        "Adjacent word pairs as phrases": [
            replace(c, pairs="none"), replace(c, pairs="content"), c, replace(c, pairs="raw"),
            replace(c, pair_weight=0.25), replace(c, pair_weight=1.0),
        ],
        "Frontmatter weights bm25(body, name, description)": [
            replace(c, weights=(1.0, 1.0, 1.0)), c, replace(c, weights=(1.0, 0.0, 2.0)),
            replace(c, weights=(1.0, 2.0, 4.0)),
        ],
        "Pseudo-relevance feedback (files, words, weight)": [
            c, replace(c, prf=(3, 10, 0.3)), replace(c, prf=(5, 5, 0.2)), replace(c, prf=(1, 10, 0.2)),
        ],
        "Relative floor (limit 10, 30 candidates)": [
            replace(c, floor=0.0), replace(c, floor=0.05), replace(c, floor=0.1), c, replace(c, floor=0.25),
            replace(c, floor_ref="top3"), replace(c, floor_ref="top3", floor=0.25),
            replace(c, floor_ref="mass"), replace(c, floor_ref="mass", floor=0.25),
        ],
        "Over-fetch (candidates the floor judges)": [
            replace(c, fetch=10), c, replace(c, fetch=50),
        ],
    }


def evaluate(variant: Variant, unit: corpora.Unit, split: str) -> dict:
    outcomes = []
    returned = []
    for tree in unit.trees:
        if split != "all" and tree.split != split:
            continue
        engine = VariantEngine(Path("/nonexistent"), variant)
        engine.build(tree.root)
        for q in tree.questions:
            ranked = tuple(engine.search(q.text, metrics.DEPTH))
            returned.append(len(ranked))
            outcomes.append(metrics.Outcome(q.qid, q.category, q.gold, ranked, 0.0))
        engine.close()
    summary = metrics.summarize(outcomes)
    summary["returned"] = sum(returned) / len(returned)
    return summary


def latency(units: dict, split: str, cache: Path) -> str:
    """Where a memsearch query's time goes, next to tantivy, interleaved
    question by question so that the machine's load hits all alike."""
    import statistics
    import time

    import memsearch.search as search_mod
    from memsearch.query import plan

    filters = {"scope": None, "scope_id": None, "type": None}
    lines = ["| unit | tantivy | memsearch | reconcile=False | ranking only | snippets (hits shown) "
             "| freshness check | design OR query |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, unit in units.items():
        times: dict[str, list[float]] = {}
        for tree in unit.trees:
            if split != "all" and tree.split != split:
                continue
            peer = engines.TantivyEngine(cache / "latency-tantivy")
            peer.build(tree.root)
            ms = engines.MemsearchEngine(cache / "latency-memsearch")
            ms.build(tree.root)
            idx = ms.index
            for warm in (peer, ms):
                warm.search(quality.WARMUP_QUERY, 10)
            for q in tree.questions:
                planned = plan(q.text)
                steps = {
                    "tantivy": lambda: peer.search(q.text, 10),
                    "memsearch": lambda: idx.search(q.text, 10),
                    "reconcile=False": lambda: idx.search(q.text, 10, reconcile=False),
                    "freshness check": idx.refresh,
                    "design OR query": lambda: idx.conn.execute(
                        "SELECT rowid FROM memory_fts_idx WHERE memory_fts_idx MATCH ? "
                        "ORDER BY bm25(memory_fts_idx) LIMIT 30", (" OR ".join(planned.terms),)).fetchall(),
                }
                for label, step in steps.items():
                    started = time.perf_counter()
                    step()
                    times.setdefault(label, []).append((time.perf_counter() - started) * 1000)
                hits = idx.search(q.text, 10, reconcile=False) or idx.search("warm", 1, reconcile=False)
                ids = [i for (i,) in idx.conn.execute(
                    f"SELECT id FROM memory_fts WHERE path IN ({','.join('?' * len(hits))})", [h.path for h in hits])]
                real = search_mod.snippets
                search_mod.snippets = lambda *a: {}
                started = time.perf_counter()
                search_mod.run(idx.conn, planned, limit=10, floor=0.15, filters=filters)
                times.setdefault("ranking only", []).append((time.perf_counter() - started) * 1000)
                search_mod.snippets = real
                started = time.perf_counter()
                search_mod.snippets(idx.conn, planned, ids)
                times.setdefault("snippets (hits shown)", []).append((time.perf_counter() - started) * 1000)
            peer.close()
            ms.close()
        order = ["tantivy", "memsearch", "reconcile=False", "ranking only", "snippets (hits shown)",
                 "freshness check", "design OR query"]
        lines.append(f"| {name} | " + " | ".join(f"{statistics.median(times[k]):.2f}" for k in order) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", type=Path, default=quality.DEFAULT_CORPORA)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memsearch-ranking"))
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="tune")
    parser.add_argument("--out", type=Path, help="also write the report here (and a .json twin)")
    parser.add_argument("--latency", action="store_true",
                        help="instead: p50 ms of each step of a memsearch query next to tantivy")
    args = parser.parse_args(argv)
    units = {
        "session": corpora.locomo_sessions(args.corpora, args.cache / "trees"),
        "fact": corpora.locomo_facts(args.corpora, args.cache / "trees"),
    }
    if args.latency:
        print(latency(units, args.split, args.cache))
        return
    cache: dict[Variant, dict] = {}
    lines = [f"LoCoMo, split `{args.split}`; R@k and MRR as in bench/QUALITY.md, limit 10; "
             "`hits` = mean results returned (the floor's cut). "
             f"Chosen defaults: {CHOSEN.label(DESIGN)}.", ""]
    out = {}
    for title, variants in steps().items():
        lines += [f"### {title}", "",
                  "| variant | session R@5 | R@10 | MRR | hits | fact R@5 | R@10 | MRR | hits |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for v in variants:
            if v not in cache:
                cache[v] = {u: evaluate(v, unit, args.split) for u, unit in units.items()}
                print(f"  {v.label(DESIGN)}: " + ", ".join(
                    f"{u} {s['r@5']:.3f}" for u, s in cache[v].items()), file=sys.stderr)
            label = v.label(DESIGN if title.startswith("Cumulative") else CHOSEN)
            if v == CHOSEN:
                label = "**chosen defaults**"
            elif v == DESIGN:
                label = "design (unicode61, one OR query, 15% floor)"
            cells = []
            for u in units:
                s = cache[v][u]
                cells += [f"{s['r@5']:.3f}", f"{s['r@10']:.3f}", f"{s['mrr']:.3f}", f"{s['returned']:.1f}"]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
            out.setdefault(title, []).append({"variant": v.__dict__, **{u: cache[v][u] for u in units}})
        lines.append("")
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.write_text(report + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(out, indent=1, default=list) + "\n")


if __name__ == "__main__":
    main()
