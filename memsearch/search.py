"""Run a planned query against the index: BM25 order, relative floor, snippets.

Each string of the query (a word, a pair of words) is its own FTS5 query,
and a file's score is the sum of what its strings score, all in one SQL
statement. Per string, FTS5's bm25() is its idf times the term-frequency
part; the search swaps that idf for Lucene's (what tantivy and bm25s use),
``ln(1 + (N - n + 0.5) / (n + 0.5))`` for a string found in n of N files.
FTS5's own idf, ``ln((N - n + 0.5) / (n + 0.5))``, is zero for a word in
half the files or more, which in a small tree (twenty sessions, each naming
both speakers) throws away most of a question; Lucene's only shrinks it.
bench/RANKING.md has the measurements.
"""

from __future__ import annotations

import _thread
import math
import os
import sqlite3
from operator import attrgetter, itemgetter
from typing import Iterator, NamedTuple

from .cjk import SEPARATOR, unsegment_snippet
from .query import Query, is_phrase
from .settings import ELLIPSIS, MARK_CLOSE, MARK_OPEN, OVERFETCH, OVERFETCH_CAP, SNIPPET_MAX_CHARS, SNIPPET_TOKENS

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

# A MEMORY.md index repeats, one line each, the descriptions of the files of
# its folder, so it matches most questions about them and took the second
# place (a top-5 slot) on most agent-memory questions, at times the first,
# above the very file its line points to. It is ranked right below the last
# candidate of its own folder instead: still found when only it matches,
# never above a memory file it indexes. Its score is kept as computed, so
# scores are not monotonic where an index moved. bench/agent_checkouts.py:
# measured in bench/README.md ("Index files").
DEMOTE_INDEXES = True

# A pair of adjacent words counts half as much as a word: it adds to the
# score of files holding the words together, without letting a phrase
# outweigh the rare word a question turns on. Measured on LoCoMo
# conversations 0-4 (bench/RANKING.md): weight 0.25 / 0.5 / 1.0 gave
# per-session R@5 0.924 / 0.925 / 0.930 and per-fact 0.735 / 0.742 / 0.732.
PAIR_WEIGHT = 0.5

# One FTS5 query per string, all in one statement: each string's rows with
# its bm25() (negative, lower is better), its weight, and the factor that
# turns FTS5's idf into Lucene's (1 for an OR of several phrases, as a CJK
# word or a very long query gives, whose bm25() mixes several idfs; see
# idf_factor). ``common`` marks the pruned form of a string (see PRUNING).
STRING = (
    "SELECT rowid AS id, bm25(memory_fts_idx, {weights}) AS raw, ? AS weight, ? AS factor, ? AS common"
    " FROM memory_fts_idx WHERE memory_fts_idx MATCH ?"
)

# A file's score: the sum of its strings' parts. The second term is zero
# unless strings were pruned: a pruned string's bm25() was taken over an
# expression that also holds the other strings' phrases, so theirs is
# subtracted from it (the row's raw, summed) before it is weighted.
# LIMIT -1 (no limit) keeps SQLite from merging a lone string's query into
# the sum(), where bm25() cannot run.
RANKING = """
SELECT id, sum(-raw * weight * factor)
           + sum(CASE WHEN common THEN 0 ELSE raw END) * sum(CASE WHEN common THEN weight * factor ELSE 0 END)
       AS score
FROM ({strings} LIMIT -1)
GROUP BY id
"""

# The number of files each string matches (its n), one subquery a string.
# (memsearch.history ranks its own FTS5 table, history_fts, with these too.)
COUNT = "(SELECT count(*) FROM {fts} WHERE {fts} MATCH ?)"

# Pruning (MaxScore, Turtle & Flood 1995). bm25() gives a string at most
# idf x (k1 + 1) in any file, whatever its term frequency, so a string
# found in many files (a low idf) can add little to a file's score, yet
# FTS5 scores every one of its files: ~3 us a file, 60 ms for a word in 20k
# files of a 100k-file tree. Such common strings are scored only in the
# files that match some other string (``common AND (others)``); a file
# matching common strings alone scores under the sum of their bounds, so
# when the last file kept scores more, no such file could have been kept:
# the result is exactly the unpruned one. Otherwise the search tries again,
# pruning only the common strings whose bounds stay under that last score
# (exact too, see _rank), or none. On the 100k-file bench tree this took
# bench/scale.py's broad queries from ~30 to 7.5-10 ms p50 (query alone).
# Below PRUNE_MIN_FILES files a string's scoring costs less than a try:
# there, medians of 9 interleaved runs of bench/watch.py's rare-word queries
# gave 3.3-3.8 ms at 1000, 2.3-3.3 at 500, 2.1-3.5 at 300 (broad ones flat).
FTS5_K1 = 1.2
PRUNE_MIN_FILES = 500

# With a filter (scope, scope id, type, roots) every ranked file is joined
# with its row, since any of them may be one the filter keeps.
SEARCH = """
SELECT m.path, m.scope, m.scope_id, m.type, s.score, m.id
FROM ({ranking}) AS s JOIN memory_fts AS m ON m.id = s.id
WHERE 1 {filters}
ORDER BY s.score DESC, m.path
LIMIT ?
"""

# Without one, the best files are picked by score alone and only they are
# joined: the join reads each file's whole row (its text included), and
# over the 20k files a common word matches in a 100k-file tree it cost as
# much as the ranking. SPARE rows past the limit catch files tied with
# the last one kept, which the path then orders (see _top); only past that
# many ties is the ranking run again, joined. Copies of one file tie: at 16,
# the 100k-file bench tree (copies of its texts) ran most common-word
# queries twice; 256 costs the sorter ~1 ms more there.
TOP = "SELECT id, score FROM ({ranking}) ORDER BY score DESC LIMIT ?"
ROWS = "SELECT path, scope, scope_id, type, id FROM memory_fts WHERE id IN ({marks})"
SPARE = 256

# Excerpts only for the hits that survive the floor and the limit, in a
# statement of their own: snippet() tokenizes the whole file (about 0.1 ms
# for a 3 KB session with Porter), and over all the candidates fetched for
# the floor it cost ten times the ranking (2 ms of a 2.4 ms query).
SNIPPETS = """
SELECT rowid, snippet(memory_fts_idx, -1, ?, ?, ?, ?)
FROM memory_fts_idx WHERE memory_fts_idx MATCH ? AND rowid IN ({marks})
"""


# FTS5 keeps its row count as the first varint of the "averages" record,
# row 1 of its data table. Reading it costs one lookup; count(*) on the
# content table would read a whole index at every query.
FILE_COUNT = "SELECT block FROM {fts}_data WHERE id = 1"


def file_count(conn: sqlite3.Connection, fts: str = "memory_fts_idx") -> int:
    """The number of files FTS5 has indexed (its N in bm25())."""
    row = conn.execute(FILE_COUNT.format(fts=fts)).fetchone()
    return _varint(row[0]) if row and row[0] else 0


def _varint(data: bytes) -> int:
    """SQLite's variable-length integer (FTS5 writes its counts with it)."""
    return next(_varints(data), 0)


def _varints(data: bytes) -> Iterator[int]:
    """The varints one after the other (a docsize record: one a column)."""
    value = length = 0
    for byte in data:
        length += 1
        if length == 9:  # the ninth byte of a varint gives all 8 of its bits
            yield (value << 8) | byte
            value = length = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            yield value
            value = length = 0


# Rows of roots that are not this index's (turned off since the last
# reconcile, which deletes them) are never shown, even with --no-reconcile.
ROOTS_FILTER = "m.root IN (SELECT id FROM memory_roots WHERE key IN ({marks}))"

FILTERS = {"scope": "m.scope = ?", "scope_id": "m.scope_id = ?", "type": "m.type = ?"}


class Hit(NamedTuple):
    """One file found: its path as shown, where it sits, its score (higher
    is better) and an excerpt with the matches marked."""

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


def short_repr(record: tuple, shown: int) -> str:
    """A record's repr with its first ``shown`` fields: those after them
    (a result's reports, a schema) are bookkeeping, too long to read."""
    pairs = ", ".join(f"{name}={value!r}" for name, value in zip(record._fields[:shown], record))
    return f"{type(record).__name__}({pairs})"


def fetch_size(limit: int) -> int:
    """How many candidates to rank: enough for the floor to judge."""
    return max(limit, min(limit * OVERFETCH, OVERFETCH_CAP))


def strings(query: Query) -> list[tuple[str, float, bool]]:
    """(FTS5 expression, weight, Lucene idf?) of each query run."""
    if not query.separate:  # a pasted paragraph: one OR query of the words
        return [(" OR ".join(query.terms), 1.0, False)]
    return [(t, 1.0, is_phrase(t)) for t in query.terms] + [(p, PAIR_WEIGHT, True) for p in query.pairs]


def lucene_idf(files: int, n: int) -> float:
    """Lucene's idf of a string found in ``n`` of ``files`` files."""
    return math.log(1 + (files - n + 0.5) / (n + 0.5))


def idf_factor(files: int, n: int) -> float:
    """What turns FTS5's idf of a string found in ``n`` of ``files`` files
    into Lucene's; max() keeps the division finite where FTS5 clamps its
    idf to 1e-6."""
    return lucene_idf(files, n) / max(math.log((files - n + 0.5) / (n + 0.5)), 1e-6)


def run(conn: sqlite3.Connection, query: Query, *, limit: int, floor: float, filters: dict,
        roots: list[str] | None = None, counts: dict | None = None) -> tuple[list[Hit], int]:
    """Hits best first, and how many candidates the floor dropped.
    ``roots``: keys of the roots whose rows may be shown (None: all).
    ``counts``: filled with {FTS5 string: files it matches} (what tells
    which words matched nothing)."""
    active = {k: v for k, v in filters.items() if v is not None}
    where = "".join(f" AND {FILTERS[k]}" for k in active)
    if roots is not None and not _only_roots(conn, roots):
        where += " AND " + ROOTS_FILTER.format(marks=",".join("?" * len(roots)))
    else:
        roots = None
    size = fetch_size(limit)
    scored = scored_strings(conn, query)
    if counts is not None:
        counts.update((s.fts, s.files) for s in scored)
    rows = _rank(conn, scored, size, where, [*active.values(), *(roots or ())])
    if DEMOTE_INDEXES:
        rows = demote_indexes(rows)
    kept = apply_floor(rows, floor, score=itemgetter(4))
    excerpts = snippets(conn, query, [row[5] for row in kept[:limit]])
    hits = [Hit(*row[:5], excerpts.get(row[5], "")) for row in kept[:limit]]
    return hits, len(rows) - len(kept)


class Scored(NamedTuple):
    """A string as the ranking sees it: its FTS5 expression, weight, idf
    factor, the files it matches (n) and its bound, the most it can add to
    a file's score (see PRUNING)."""

    fts: str
    weight: float
    factor: float
    files: int
    bound: float


def scored_strings(conn: sqlite3.Connection, query: Query, table: str = "memory_fts_idx") -> list[Scored]:
    """Each string of the query, with what the ranking needs to know of it
    (``table``: the FTS5 table searched)."""
    runs = strings(query)
    files = file_count(conn, table)
    count = COUNT.format(fts=table)
    counts = conn.execute("SELECT " + ", ".join([count] * len(runs)), [fts for fts, _, _ in runs]).fetchone()
    out = []
    for (fts, weight, lucene), n in zip(runs, counts):
        # Lucene's idf x (k1 + 1), with a hair for rounding; an OR of
        # several phrases has no bound of its own here and is never pruned.
        bound = weight * lucene_idf(files, n) * (FTS5_K1 + 1) * (1 + 1e-9)
        out.append(Scored(fts, weight, idf_factor(files, n) if lucene else 1.0, n, bound if lucene else math.inf))
    return out


def _rank(conn, scored: list[Scored], size: int, where: str, filter_params: list) -> list[tuple]:
    """The ``size`` best rows, pruning the common strings where that cannot
    change them (see PRUNING)."""
    common = _common(scored, size)
    if common:
        rows = _ranked(conn, _pruned(scored, common), where, filter_params, size)
        if len(rows) == size:
            reach = rows[-1][4]
            if reach > sum(s.bound for s in common):
                return rows
            # The files ranked hold their whole scores, so the best ``size``
            # of all score at least ``reach``: the common strings whose
            # bounds together stay under it can be pruned. Pruning fewer
            # ranks more files, so the last one kept scores at least
            # ``reach`` again; no check is needed.
            fewer = []
            for s in common:  # least bound first
                if sum(f.bound for f in fewer) + s.bound >= reach:
                    break
                fewer.append(s)
            if fewer:
                return _ranked(conn, _pruned(scored, fewer), where, filter_params, size)
    return _ranked(conn, [(s.fts, s.weight, s.factor, False) for s in scored], where, filter_params, size)


def _common(scored: list[Scored], size: int) -> list[Scored]:
    """The strings to prune first, least bound first: the commonest single
    phrases in PRUNE_MIN_FILES files or more, as long as the others match
    ``size`` files between them (else the pruned ranking cannot fill up)."""
    common, others = [], sorted(scored, key=attrgetter("files"))
    while (others and others[-1].files >= PRUNE_MIN_FILES and others[-1].bound < math.inf
           and sum(s.files for s in others[:-1]) >= size):
        common.append(others.pop())
    return sorted(common, key=attrgetter("bound"))


def _pruned(scored: list[Scored], common: list[Scored]) -> list[tuple]:
    """(FTS5 expression, weight, factor, pruned?) of each string, the common
    ones scored only where some other string matches."""
    others = [s for s in scored if s not in common]
    rest = " OR ".join(f"({s.fts})" for s in others)
    return ([(s.fts, s.weight, s.factor, False) for s in others]
            + [(f"{s.fts} AND ({rest})", s.weight, s.factor, True) for s in common])


def _ranked(conn, runs: list[tuple], where: str, filter_params: list, size: int) -> list[tuple]:
    """The ``size`` best (path, scope, scope_id, type, score, id) rows."""
    one = STRING.format(weights=", ".join(repr(float(w)) for w in COLUMN_WEIGHTS))
    ranking = RANKING.format(strings=" UNION ALL ".join([one] * len(runs)))
    params = [p for fts, weight, factor, common in runs for p in (weight, factor, int(common), fts)]
    if where:
        return conn.execute(SEARCH.format(ranking=ranking, filters=where), [*params, *filter_params, size]).fetchall()
    return _top(conn, ranking, params, size)


def _top(conn, ranking: str, params: list, size: int) -> list[tuple]:
    """The ``size`` best rows by score, then path: the rows SEARCH would
    give without filters, joined only for the files that can be among them."""
    ranked = conn.execute(TOP.format(ranking=ranking), [*params, size + SPARE]).fetchall()
    if not ranked:
        return []
    if len(ranked) == size + SPARE and ranked[-1][1] == ranked[size - 1][1]:
        # Ties run past the spare rows: rank them all, as with a filter.
        return conn.execute(SEARCH.format(ranking=ranking, filters=""), [*params, size]).fetchall()
    if len(ranked) > size:
        last = ranked[size - 1][1]
        ranked = [r for r in ranked if r[1] >= last]  # the first ``size`` and their ties
    scores = dict(ranked)
    rows = conn.execute(ROWS.format(marks=",".join("?" * len(scores))), list(scores)).fetchall()
    # Python orders str as SQLite's BINARY collation does (UTF-8 bytes
    # order as code points), so this is ORDER BY score DESC, path.
    rows.sort(key=lambda r: (-scores[r[4]], r[0]))
    return [(path, scope, scope_id, kind, scores[i], i) for path, scope, scope_id, kind, i in rows[:size]]


def _only_roots(conn: sqlite3.Connection, roots: list[str]) -> bool:
    """Whether the index holds rows of these roots alone (as it does after
    any reconcile, which deletes the rows of roots turned off): then the
    roots need no filter."""
    keys = set(roots)
    return all(key in keys for (key,) in conn.execute("SELECT key FROM memory_roots"))


def snippets(conn: sqlite3.Connection, query: Query, ids: list[int]) -> dict[int, str]:
    """{rowid: excerpt} with the searched words highlighted. Pairs are left
    out: their words are searched on their own too (a pair never holds two
    stop words), and a phrase in an OR query makes FTS5 check word positions
    in every file, which tripled the cost of this statement."""
    if not ids:
        return {}
    words = " OR ".join(query.terms)
    long = _long(conn, ids)
    direct = [i for i in ids if i not in long]
    sql = SNIPPETS.format(marks=",".join("?" * len(direct)))
    rows = list(conn.execute(sql, (MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, words, *direct))) if direct else []
    rows += [(i, _sliced_snippet(conn, words, i)) for i in ids if i in long]
    # snippet() reads the indexed text, which is segmented where the file
    # has CJK: map it back to the original characters (a no-op otherwise).
    return {rowid: cap(unsegment_snippet(text, MARK_OPEN, MARK_CLOSE, query=words)) for rowid, text in rows if text}


# snippet() scores a window at every instance of the query's words by
# looking at every other instance: its cost grows with the square of the
# instances in one file (measured, one file of one repeated word: 512
# instances 1.3 ms, 1,024 44 ms, 5,000 0.38 s, 40,000 13.5 s; 2 MB of it,
# a hostile memory file, kept every query for that word busy for minutes).
# A file of more than DIRECT_TOKENS tokens (FTS5's own count, one lookup)
# is excerpted from slices of SLICE_CHARS characters, each holding at most
# ~SLICE_CHARS / 2 instances: its name, description and body in turn,
# SLICE_BATCH slices at a time in a scratch FTS5 table, the best matching
# slice of the first batch that has one. Real memory files mostly match in
# their first batch.
DIRECT_TOKENS = 512
SLICE_CHARS = 1024
SLICE_BATCH = 16
DOCSIZE = "SELECT id, sz FROM memory_fts_idx_docsize WHERE id IN ({marks})"
# The index's tokenizer (migrations/0005_porter.sql; a test keeps them equal).
TOKENIZE = "porter unicode61 remove_diacritics 1"
SLICE_TEXT = "SELECT coalesce(idx_name, ''), coalesce(idx_description, ''), coalesce(idx_body, '') FROM memory_fts WHERE id = ?"
SLICE_SNIPPET = "SELECT snippet(slices, 0, ?, ?, ?, ?) FROM slices WHERE slices MATCH ? {order} LIMIT 1"


def _long(conn: sqlite3.Connection, ids: list[int]) -> set[int]:
    """The files among ``ids`` too long for snippet() itself."""
    rows = conn.execute(DOCSIZE.format(marks=",".join("?" * len(ids))), ids)
    return {i for i, sizes in rows if sum(_varints(sizes)) > DIRECT_TOKENS}  # tokens in each column


def _sliced_snippet(conn: sqlite3.Connection, words: str, rowid: int) -> str:
    row = conn.execute(SLICE_TEXT, (rowid,)).fetchone()
    if row is None:
        return ""
    pieces = [piece for text in row for piece in _slices(text)]
    scratch = _scratch()
    likeliest = _likeliest(pieces, words)
    if likeliest is not None:  # tokenizing one slice instead of a batch: most of the cost
        found = _best_slice(scratch, [likeliest], words)
        if found:
            return found
    for start in range(0, len(pieces), SLICE_BATCH):
        found = _best_slice(scratch, pieces[start:start + SLICE_BATCH], words)
        if found:
            return found
    return ""


def _best_slice(scratch: sqlite3.Connection, pieces: list[str], words: str) -> str | None:
    # Rolled back, not deleted: the table stays empty and FTS5 writes no
    # segment (0.04 ms a slice, against 0.16 for a delete and an insert).
    scratch.execute("BEGIN")
    try:
        scratch.executemany("INSERT INTO slices (text) VALUES (?)", ((p,) for p in pieces))
        sql = SLICE_SNIPPET.format(order="ORDER BY rank" if len(pieces) > 1 else "")  # one slice: nothing to rank
        found = scratch.execute(sql, (MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, words)).fetchone()
    finally:
        scratch.execute("ROLLBACK")
    return found[0] if found else None


def _likeliest(pieces: list[str], words: str) -> str | None:
    """The slice holding the most of the query's words, judged by a prefix
    of each (the index stems them; a word's Porter stem keeps all but its
    last few letters), most distinct words first; None when no slice holds
    any. Only a guess: snippet() then checks it."""
    needles = {w.strip('"').lower() for w in words.split(" OR ")}
    needles = {w[:max(3, len(w) - 4)] for w in needles if w}
    best, best_key = None, (0, 0)
    for piece in pieces:
        lower = piece.lower()
        counts = [lower.count(n) for n in needles]
        key = (sum(1 for c in counts if c), sum(counts))
        if key > best_key:
            best, best_key = piece, key
    return best


# Each thread's in-memory database with an FTS5 table for slices, by process
# and thread id (a forked child makes its own): the index's connection is
# never written by a query, and making one per excerpt cost 0.28 ms, most of
# an excerpt's. (_thread: threading stays off the query path, see
# tests/test_query_path.py.)
_scratches: dict[tuple[int, int], sqlite3.Connection] = {}
SCRATCHES = 64  # past it, the databases of threads long gone are let go


def _scratch() -> sqlite3.Connection:
    ident = (os.getpid(), _thread.get_ident())
    scratch = _scratches.get(ident)
    if scratch is None:
        if len(_scratches) >= SCRATCHES:
            _scratches.clear()
        scratch = sqlite3.connect(":memory:", isolation_level=None)
        scratch.execute(f"CREATE VIRTUAL TABLE slices USING fts5(text, tokenize = '{TOKENIZE}')")
        _scratches[ident] = scratch
    return scratch


def _slices(text: str) -> Iterator[str]:
    """``text`` in pieces of about SLICE_CHARS, cut after a space, a line
    end or cjk.SEPARATOR (so no token is split) where the last quarter of
    a piece has one."""
    start = 0
    while start < len(text):
        end = start + SLICE_CHARS
        if end < len(text):
            cut = max(text.rfind(c, end - SLICE_CHARS // 4, end) for c in (" ", "\n", SEPARATOR))
            end = cut + 1 if cut >= 0 else end
        yield text[start:end]
        start = end


def cap(excerpt: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """An excerpt of at most about ``limit`` characters, around its first
    match, never cutting inside a marked word."""
    if len(excerpt) <= limit:
        return excerpt
    first = max(excerpt.find(MARK_OPEN), 0)
    start = max(first - limit // 3, 0)
    end = start + limit
    opened, closed = excerpt.rfind(MARK_OPEN, start, end), excerpt.rfind(MARK_CLOSE, start, end)
    if opened > closed:  # the window ends inside a match: keep the match whole
        end = excerpt.find(MARK_CLOSE, opened) + len(MARK_CLOSE)
    head = "" if start == 0 or excerpt.startswith(ELLIPSIS, start) else ELLIPSIS
    tail = "" if end >= len(excerpt) or excerpt.endswith(ELLIPSIS, 0, end) else ELLIPSIS
    return head + excerpt[start:end] + tail


def is_index(path: str) -> bool:
    """A MEMORY.md: an index of its folder's memory files, one line each."""
    return path[-9:].lower() == "memory.md" and (len(path) == 9 or path[-10] in "/:")


def demote_indexes(rows: list[tuple]) -> list[tuple]:
    """Each index file (MEMORY.md) moved below every candidate of its own
    folder, the files its lines point to (see DEMOTE_INDEXES)."""
    if not any(is_index(row[0]) for row in rows):
        return rows
    out = list(rows)
    for row in [r for r in rows if is_index(r[0])]:
        folder = row[0][:-9]
        last = max((i for i, r in enumerate(out) if r[0].startswith(folder) and not is_index(r[0])), default=-1)
        at = out.index(row)
        if last > at:
            out.insert(last, out.pop(at))
    return out


def apply_floor(hits: list, floor: float, score=attrgetter("score")) -> list:
    """Keep the top hit, and any other scoring at least ``floor`` x the top."""
    if not hits or floor <= 0:
        return hits
    cutoff = score(hits[0]) * floor
    return hits[:1] + [h for h in hits[1:] if score(h) >= cutoff]
