"""Run a built query against the index: bm25 order, relative floor, snippets."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace

from .cjk import unsegment_snippet
from .settings import ELLIPSIS, MARK_CLOSE, MARK_OPEN, OVERFETCH, OVERFETCH_CAP, SNIPPET_TOKENS

# bm25() weights of the FTS columns (body, name, description), in that
# order. A memory's description is the one line its author wrote to say what
# it is about, so a query matching it counts double. Measured with
# bench/frontmatter_weights.py against the core engine (one column holding
# the whole file): agent-memory R@1 230 -> 232 of 235 (R@5, R@10 235 both),
# LoCoMo facts R@5 783 -> 785 and R@10 895 -> 900 of 1311, R@1 522 -> 520
# (near-ties of the top two swapping both ways). Equal weights gave 230/235
# and 782/1311 at R@5; heavier description or name weights (3, 4, 8) lost
# on LoCoMo. README, "How ranking works", has the table.
COLUMN_WEIGHTS = (1.0, 1.0, 2.0)

# bm25() is "lower is better" and negative; scores are reported negated so
# that higher = better, which is what people expect to read.
SEARCH = """
SELECT m.path, m.scope, m.scope_id, m.type, -{rank} AS score,
       snippet(memory_fts_idx, -1, ?, ?, ?, ?) AS snippet
FROM memory_fts_idx JOIN memory_fts AS m ON m.id = memory_fts_idx.rowid
WHERE memory_fts_idx MATCH ? {filters}
ORDER BY {rank}
LIMIT ?
"""

# Rows of roots that are not this index's (turned off since the last
# reconcile, which deletes them) are never shown, even with --no-reconcile.
ROOTS_FILTER = "m.root IN (SELECT id FROM memory_roots WHERE key IN ({marks}))"

FILTERS = {"scope": "m.scope = ?", "scope_id": "m.scope_id = ?", "type": "m.type = ?"}


@dataclass(frozen=True)
class Hit:
    path: str
    scope: str | None
    scope_id: str | None
    type: str
    score: float
    snippet: str

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "scope": self.scope,
            "scope_id": self.scope_id,
            "type": self.type,
            "score": round(self.score, 4),
            "snippet": self.snippet,
        }


def fetch_size(limit: int) -> int:
    """How many candidates to ask FTS5 for: enough for the floor to judge."""
    return max(limit, min(limit * OVERFETCH, OVERFETCH_CAP))


def rank() -> str:
    return f"bm25(memory_fts_idx, {', '.join(repr(float(w)) for w in COLUMN_WEIGHTS)})"


def run(conn: sqlite3.Connection, fts_query: str, *, limit: int, floor: float, filters: dict,
        roots: list[str] | None = None) -> tuple[list[Hit], int]:
    """Hits best first, and how many candidates the floor dropped.
    ``roots``: keys of the roots whose rows may be shown (None: all)."""
    active = {k: v for k, v in filters.items() if v is not None}
    where = "".join(f" AND {FILTERS[k]}" for k in active)
    if roots is not None:
        where += " AND " + ROOTS_FILTER.format(marks=",".join("?" * len(roots)))
    sql = SEARCH.format(filters=where, rank=rank())
    params = [MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, fts_query, *active.values(), *(roots or ()),
              fetch_size(limit)]
    hits = [Hit(*row) for row in conn.execute(sql, params)]
    kept = apply_floor(hits, floor)
    return [_original_snippet(hit, fts_query) for hit in kept[:limit]], len(hits) - len(kept)


def _original_snippet(hit: Hit, fts_query: str) -> Hit:
    """snippet() reads the indexed text, which is segmented where the file
    has CJK: show the original characters instead (a cheap no-op for text
    without CJK). Done for the hits returned only: it costs ~0.1 ms each."""
    snippet = unsegment_snippet(hit.snippet, MARK_OPEN, MARK_CLOSE, query=fts_query)
    return hit if snippet is hit.snippet else replace(hit, snippet=snippet)


def apply_floor(hits: list[Hit], floor: float) -> list[Hit]:
    """Keep the top hit, and any other scoring at least ``floor`` × the top."""
    if not hits or floor <= 0:
        return hits
    cutoff = hits[0].score * floor
    return hits[:1] + [h for h in hits[1:] if h.score >= cutoff]
