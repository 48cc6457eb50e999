"""Run a built query against the index: bm25 order, relative floor, snippets."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .settings import ELLIPSIS, MARK_CLOSE, MARK_OPEN, OVERFETCH, OVERFETCH_CAP, SNIPPET_TOKENS

# bm25() is "lower is better" and negative; scores are reported negated so
# that higher = better, which is what people expect to read.
SEARCH = """
SELECT m.path, m.scope, m.scope_id, m.type, -bm25(memory_fts_idx) AS score,
       snippet(memory_fts_idx, -1, ?, ?, ?, ?) AS snippet
FROM memory_fts_idx JOIN memory_fts AS m ON m.id = memory_fts_idx.rowid
WHERE memory_fts_idx MATCH ? {filters}
ORDER BY bm25(memory_fts_idx)
LIMIT ?
"""

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


def run(conn: sqlite3.Connection, fts_query: str, *, limit: int, floor: float, filters: dict) -> tuple[list[Hit], int]:
    """Hits best first, and how many candidates the floor dropped."""
    active = {k: v for k, v in filters.items() if v is not None}
    sql = SEARCH.format(filters="".join(f" AND {FILTERS[k]}" for k in active))
    params = [MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, fts_query, *active.values(), fetch_size(limit)]
    hits = [Hit(*row) for row in conn.execute(sql, params)]
    kept = apply_floor(hits, floor)
    return kept[:limit], len(hits) - len(kept)


def apply_floor(hits: list[Hit], floor: float) -> list[Hit]:
    """Keep the top hit, and any other scoring at least ``floor`` × the top."""
    if not hits or floor <= 0:
        return hits
    cutoff = hits[0].score * floor
    return hits[:1] + [h for h in hits[1:] if h.score >= cutoff]
