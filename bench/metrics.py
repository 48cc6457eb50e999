"""Retrieval metrics over ranked file lists.

One :class:`Outcome` per question asked of one engine; :func:`summarize`
turns a list of them into the numbers the report prints. Everything here is
pure: no engines, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The cut-offs the report prints. The harness asks every engine for
# max(CUTOFFS) results once and reads the shorter lists off the front, so
# a question costs one search, not three.
CUTOFFS = (1, 5, 10)
ALL_GOLD_CUTOFFS = (5, 10)
DEPTH = max(CUTOFFS)


@dataclass(frozen=True)
class Outcome:
    qid: str
    category: str
    gold: frozenset[str]
    ranked: tuple[str, ...]
    latency_ms: float

    @property
    def first_gold_rank(self) -> int | None:
        """1-based rank of the best-placed gold file, None if none returned."""
        for rank, path in enumerate(self.ranked, start=1):
            if path in self.gold:
                return rank
        return None

    def hit_at(self, k: int) -> bool:
        """Recall@k as the issue defines it: any gold file in the top k."""
        rank = self.first_gold_rank
        return rank is not None and rank <= k

    def all_gold_at(self, k: int) -> bool:
        """Every gold file in the top k; multi-hop questions need this."""
        return self.gold <= set(self.ranked[:k])


def percentile(values: list[float], p: float) -> float:
    """Linear-interpolated percentile (numpy's default), p in [0, 100]."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(outcomes: list[Outcome]) -> dict:
    """The report's metrics for a set of questions, as a plain dict."""
    n = len(outcomes)
    if n == 0:
        return {"n": 0}
    summary = {"n": n}
    for k in CUTOFFS:
        summary[f"r@{k}"] = sum(o.hit_at(k) for o in outcomes) / n
    for k in ALL_GOLD_CUTOFFS:
        summary[f"all@{k}"] = sum(o.all_gold_at(k) for o in outcomes) / n
    # Reciprocal rank within the DEPTH results every engine returns (MRR@10);
    # a question whose gold is not among them scores 0.
    summary["mrr"] = (
        sum(1 / o.first_gold_rank for o in outcomes if o.first_gold_rank) / n
    )
    latencies = [o.latency_ms for o in outcomes]
    summary["p50_ms"] = percentile(latencies, 50)
    summary["p95_ms"] = percentile(latencies, 95)
    return summary
