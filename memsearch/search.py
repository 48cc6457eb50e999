"""Run a planned query against the index: BM25 order, relative floor, snippets.

Each string of the query (a word, a pair of words) is its own FTS5 query; a
file's score is the sum of its strings' scores, in one SQL statement. Each
string's idf is swapped for Lucene's, ``ln(1 + (N - n + 0.5) / (n + 0.5))``
for n of N files: FTS5's own is zero for a word in half the files or more,
which in a small tree throws away most of a question.
"""

from __future__ import annotations

import _thread
import math
import os
import re
import sqlite3
from itertools import accumulate
from operator import attrgetter, itemgetter
from typing import Callable, Iterable, Iterator, NamedTuple

from .cjk import SEPARATOR, unsegment_snippet
from .codewords import CLOSE, OPEN, SIGNS, cut_ends, expand, sign_token, word_start
from .format import split_marks
from .query import Query, is_phrase
from .settings import ELLIPSIS, MARK_CLOSE, MARK_OPEN, OVERFETCH, OVERFETCH_CAP, SNIPPET_MAX_CHARS, SNIPPET_TOKENS

# bm25() weights of (body, name, description): a description is its author's one line on what the memory is
# about, so it counts double; heavier weights lost recall (docs/ranking.md has the table).
COLUMN_WEIGHTS = (1.0, 1.0, 2.0)

# A MEMORY.md repeats its folder's descriptions, so it outranked the very files it points to: it
# goes below its folder's candidates scoring at least DEMOTE_SHARE of it, its score kept as computed.
DEMOTE_INDEXES = True
DEMOTE_SHARE = 0.15

# A pair of adjacent words counts half a word: it lifts files holding the
# words together without outweighing the rare word a question turns on.
PAIR_WEIGHT = 0.5
# A code word (C++, getUserById) counts two: it names its topic as no two plain words of a question do.
CODE_WEIGHT = 2.0

# One FTS5 query per string: its rows' bm25() (lower is better), weight, the factor turning FTS5's
# idf into Lucene's (1 for an OR of phrases), and whether it is pruned (see Pruning). Any FTS5 table.
STRING = (
    "SELECT rowid AS id, bm25({fts}{weights}) AS raw, ? AS weight, ? AS factor, ? AS common"
    " FROM {fts} WHERE {fts} MATCH ?"
)

# The second term is zero unless strings were pruned: a pruned string's bm25() also counted the other strings'
# phrases, so theirs (the row's raw, summed) is subtracted before it is weighted. LIMIT -1 keeps SQLite from
# merging a lone string's query into the sum(), where bm25() cannot run.
RANKING = """
SELECT id, sum(-raw * weight * factor)
           + sum(CASE WHEN common THEN 0 ELSE raw END) * sum(CASE WHEN common THEN weight * factor ELSE 0 END)
       AS score
FROM ({strings} LIMIT -1)
GROUP BY id
"""


def ranking(count: int, fts: str = "memory_fts_idx", weights: tuple[float, ...] = COLUMN_WEIGHTS) -> str:
    """(id, score) of every row matching some of ``count`` strings, their parameters (weight,
    factor, common, FTS5 expression) bound in turn (see :func:`string_params`)."""
    one = STRING.format(fts=fts, weights="".join(f", {float(w)!r}" for w in weights))
    return RANKING.format(strings=" UNION ALL ".join([one] * count))


def string_params(scored: list, common: list = ()) -> list:
    """The parameters of :func:`ranking` for ``scored`` (Scored strings): those in ``common`` last,
    pruned to the files matching another string (see Pruning)."""
    others = [s for s in scored if s not in common]
    rest = " OR ".join(f"({s.fts})" for s in others)
    return ([p for s in others for p in (s.weight, s.factor, 0, s.fts)]
            + [p for s in common for p in (s.weight, s.factor, 1, f"{s.fts} AND ({rest})")])


# The number of files each string matches (its n), one subquery a string.
COUNT = "(SELECT count(*) FROM {fts} WHERE {fts} MATCH ?)"

# Pruning (MaxScore, Turtle & Flood 1995): bm25() gives a string at most idf x (k1 + 1) in a file, yet scoring
# a common string's every file was most of a broad query. Common strings are scored only in files matching another
# string (``common AND (others)``); when the last file kept outscores their bounds' sum, the result is exactly the
# unpruned one (else see _rank). Below PRUNE_MIN_FILES a string costs less than a try.
FTS5_K1 = 1.2
PRUNE_MIN_FILES = 500

# With a filter (scope, scope id, type, roots) every ranked file is joined.
SEARCH = """
SELECT m.path, m.scope, m.scope_id, m.type, s.score, m.id
FROM ({ranking}) AS s JOIN memory_fts AS m ON m.id = s.id
WHERE 1 {filters}
ORDER BY s.score DESC, m.path
LIMIT ?
"""

# Without one, only the best files are joined (the join reads whole rows); SPARE rows past the limit
# catch ties with the last one kept, which the path orders (see _top).
TOP = "SELECT id, score FROM ({ranking}) ORDER BY score DESC LIMIT ?"
ROWS = "SELECT path, scope, scope_id, type, id FROM memory_fts WHERE id IN ({marks})"
SPARE = 256

# Excerpts only for the hits kept, in a statement of their own: snippet() tokenizes the whole file.
SNIPPETS = """
SELECT rowid, snippet(memory_fts_idx, -1, ?, ?, ?, ?)
FROM memory_fts_idx WHERE memory_fts_idx MATCH ? AND rowid IN ({marks})
"""

# Whether a row the filters let through matches a string: scored_strings() counts over the whole
# index, where a word held only by filtered-out rows passes for matched. CROSS JOIN: the match first.
ANY_ROW = ("SELECT EXISTS (SELECT 1 FROM {fts} CROSS JOIN {rows} AS m ON m.id = {fts}.rowid"
           " WHERE {fts} MATCH ?{filters})")

# FTS5's row count: the first varint of row 1 of its data table, one lookup where count(*) reads a whole index.
FILE_COUNT = "SELECT block FROM {fts}_data WHERE id = 1"


def file_count(conn: sqlite3.Connection, fts: str = "memory_fts_idx") -> int:
    """The number of files FTS5 has indexed (its N in bm25())."""
    row = conn.execute(FILE_COUNT.format(fts=fts)).fetchone()
    return next(varints(row[0]), 0) if row and row[0] else 0


def varints(data: bytes) -> Iterator[int]:
    """SQLite's variable-length integers (FTS5's counts; a docsize record: one a column), one after the other."""
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


# Rows of roots turned off since the last reconcile are never shown, even with --no-reconcile.
ROOTS_FILTER = "m.root IN (SELECT id FROM memory_roots WHERE key IN ({marks}))"

FILTERS = {"scope": "m.scope = ?", "scope_id": "m.scope_id = ?", "type": "m.type = ?"}


class Hit(NamedTuple):
    """One file found: path as shown, place, score (higher is better), excerpt,
    and the absolute file (what a shell or an editor opens)."""

    path: str
    scope: str | None
    scope_id: str | None
    type: str
    score: float
    snippet: str
    file: str = ""

    def to_dict(self) -> dict:
        return {**self._asdict(), "score": round(self.score, 4)}  # the fields' order kept


def short_repr(record: tuple, shown: int) -> str:
    """A record's repr with its first ``shown`` fields (the rest is bookkeeping)."""
    pairs = ", ".join(f"{name}={value!r}" for name, value in zip(record._fields[:shown], record))
    return f"{type(record).__name__}({pairs})"


def fetch_size(limit: int) -> int:
    """How many candidates to rank: enough for the floor to judge."""
    return max(limit, min(limit * OVERFETCH, OVERFETCH_CAP))


def run(conn: sqlite3.Connection, query: Query, *, limit: int, floor: float, filters: dict,
        roots: list[str] | None = None, counts: dict | None = None) -> tuple[list[Hit], int]:
    """Hits best first, and how many candidates the floor dropped. ``roots``: the keys of the roots
    whose rows may be shown (None: all). ``counts``: filled with {FTS5 string: files it matches}."""
    active = {k: v for k, v in filters.items() if v is not None}
    where = "".join(f" AND {FILTERS[k]}" for k in active)
    # No filter when the index holds rows of these roots alone (as after any reconcile).
    if roots is not None and not {key for (key,) in conn.execute("SELECT key FROM memory_roots")} <= set(roots):
        where += " AND " + ROOTS_FILTER.format(marks=",".join("?" * len(roots)))
    else:
        roots = ()
    params = [*active.values(), *roots]
    scored = scored_strings(conn, query)
    if counts is not None:
        counts.update((s.fts, s.files) for s in scored)
        mark_unmatched(conn, query, counts, where, params)
    rows = _rank(conn, scored, fetch_size(limit), where, params)
    kept = apply_floor(rows, floor, score=itemgetter(4))  # measured from the best score, before any move
    if DEMOTE_INDEXES:
        kept = demote_indexes(kept)
    excerpts = snippets(conn, query, [row[5] for row in kept[:limit]])
    hits = [Hit(*row[:5], excerpts.get(row[5], "")) for row in kept[:limit]]
    return hits, len(rows) - len(kept)


def mark_unmatched(conn: sqlite3.Connection, query: Query, counts: dict, where: str, params: list,
                   fts: str = "memory_fts_idx", rows: str = "memory_fts", column=str, terms=None) -> None:
    """Set ``counts`` to 0 for each term of ``query`` that no row of ``rows`` (as ``m``) that
    ``where`` (" AND ..." conditions on ``m``, with ``params``) lets through matches (in the columns
    ``column(term)`` asks), for memsearch.query.unmatched(). A term counted without a filter needs no check.
    ``terms``: those to check, if not all of the query's."""
    sql = ANY_ROW.format(fts=fts, rows=rows, filters=where)
    for term in query.terms if terms is None else terms:
        files = counts.get(term)
        if files == 0 or (files is not None and not where):
            continue
        if not conn.execute(sql, [column(term), *params]).fetchone()[0]:
            counts[term] = 0


class Scored(NamedTuple):
    """A string as the ranking sees it; ``bound``: the most it can add to a file's score (see Pruning)."""

    fts: str
    weight: float
    factor: float
    files: int
    bound: float


def scored_strings(conn: sqlite3.Connection, query: Query, table: str = "memory_fts_idx") -> list[Scored]:
    """Each string of the query as the ranking needs it (``table``: the FTS5 table)."""
    runs = string_runs(query)
    files = file_count(conn, table)
    count = COUNT.format(fts=table)
    counts = conn.execute("SELECT " + ", ".join([count] * len(runs)), [fts for fts, _, _ in runs]).fetchone()
    return [Scored(fts, weight, factor, n, bound) for (fts, weight, lucene), n in zip(runs, counts)
            for factor, bound in [lucene_factor(files, n, weight, lucene)]]


def string_runs(query: Query) -> list[tuple[str, float, bool]]:
    """(FTS5 expression, weight, Lucene idf?) of each string of ``query``."""
    if query.separate:
        return ([(t, CODE_WEIGHT if t in query.code else 1.0, is_phrase(t)) for t in query.terms]
                + [(p, PAIR_WEIGHT, True) for p in query.pairs])
    return [(" OR ".join(query.terms), 1.0, False)]  # a pasted paragraph: one OR query of the words


def lucene_factor(files: int, n: int, weight: float, lucene: bool) -> tuple[float, float]:
    """(factor, bound) of a string matching ``n`` of ``files`` rows: the factor turns FTS5's idf into
    Lucene's, the bound is the most it adds to a row's score (see Pruning)."""
    if not lucene:  # an OR of several phrases has no bound and is never pruned
        return 1.0, math.inf
    idf = math.log(1 + (files - n + 0.5) / (n + 0.5))
    # A hair for rounding on the bound; max() keeps the factor finite where FTS5 clamps its idf to 1e-6.
    return idf / max(math.log((files - n + 0.5) / (n + 0.5)), 1e-6), weight * idf * (FTS5_K1 + 1) * (1 + 1e-9)


def _rank(conn, scored: list[Scored], size: int, where: str, filter_params: list) -> list[tuple]:
    """The ``size`` best rows, pruning where that cannot change them."""
    common = common_strings(scored, size)
    if common:
        rows = _ranked(conn, scored, common, where, filter_params, size)
        if len(rows) == size:
            reach = rows[-1][4]
            if reach > sum(s.bound for s in common):
                return rows
            # The best ``size`` of all score at least ``reach``: the longest start of ``common`` (least bound
            # first) whose bounds stay under it can be pruned; pruning fewer ranks more files, so no check after.
            totals = accumulate(s.bound for s in common)
            fewer = common[:next((n for n, total in enumerate(totals) if total >= reach), len(common))]
            return _ranked(conn, scored, fewer, where, filter_params, size)  # none: nothing pruned
    return _ranked(conn, scored, (), where, filter_params, size)


def common_strings(scored: list[Scored], size: int) -> list[Scored]:
    """The strings to prune, least bound first: the commonest single phrases in
    PRUNE_MIN_FILES files or more, while the others still match ``size`` files."""
    common, others = [], sorted(scored, key=attrgetter("files"))
    while (others and others[-1].files >= PRUNE_MIN_FILES and others[-1].bound < math.inf
           and sum(s.files for s in others[:-1]) >= size):
        common.append(others.pop())
    return sorted(common, key=attrgetter("bound"))


def _ranked(conn, scored: list[Scored], common: list[Scored], where: str, filter_params: list,
            size: int) -> list[tuple]:
    """The ``size`` best (path, scope, scope_id, type, score, id) rows, ``common`` pruned."""
    sql, params = ranking(len(scored)), string_params(scored, common)
    if where:
        return conn.execute(SEARCH.format(ranking=sql, filters=where), [*params, *filter_params, size]).fetchall()
    return _top(conn, sql, params, size)


def _top(conn, ranking: str, params: list, size: int) -> list[tuple]:
    """What SEARCH gives without filters, joining only the files that can be kept."""
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
    # Python orders str as SQLite's BINARY collation does (UTF-8 bytes order as code points): ORDER BY score DESC, path.
    rows.sort(key=lambda r: (-scores[r[4]], r[0]))
    return [(path, scope, scope_id, kind, scores[i], i) for path, scope, scope_id, kind, i in rows[:size]]


def snippets(conn: sqlite3.Connection, query: Query, ids: list[int]) -> dict[int, str]:
    """{rowid: excerpt} with the searched words highlighted. Pairs are left out: their words are
    searched too, and a phrase in an OR query makes FTS5 check positions in every file."""
    if not ids:
        return {}
    words = " OR ".join(query.terms)
    # Too long for snippet() itself, by their tokens in each column.
    long = {i for i, sizes in conn.execute(DOCSIZE.format(marks=",".join("?" * len(ids))), ids)
            if sum(varints(sizes)) > DIRECT_TOKENS}
    direct = [i for i in ids if i not in long]
    sql = SNIPPETS.format(marks=",".join("?" * len(direct)))
    rows = list(conn.execute(sql, (MARK_OPEN, MARK_CLOSE, ELLIPSIS, SNIPPET_TOKENS, words, *direct))) if direct else []
    rows += [(i, _sliced_snippet(conn, words, i)) for i in ids if i in long]
    return {rowid: _shown(text, words, lambda: conn.execute(SLICE_TEXT, (rowid,)).fetchone() or ())
            for rowid, text in rows if text}


def _shown(excerpt: str, words: str, texts: Callable[[], Iterable[str]]) -> str:
    # snippet() reads the indexed text: map CJK segmenting back. A token may be a whole file (a
    # megabyte with no space): the mapping's per-character lists get a few windows' worth at most.
    excerpt = _whole_ends(excerpt, words, texts)
    return cap(unsegment_snippet(cap(excerpt, 8 * SNIPPET_MAX_CHARS), MARK_OPEN, MARK_CLOSE, query=words))


# An expansion FTS5's window starts or ends inside hides the word it follows or the part that matched: the window
# is widened to it, from the indexed text, within WIDEN_CHARS each way, and highlighted again.
WIDEN_CHARS = 8 * SNIPPET_MAX_CHARS
HIGHLIGHT = "SELECT highlight(slices, 0, :open, :close) FROM slices WHERE slices MATCH :words"


def _whole_ends(excerpt: str, words: str, texts: Callable[[], Iterable[str]]) -> str:
    """``excerpt`` with the expansions it is cut inside whole, and the words they follow; ``texts()``: the indexed
    texts it may be from, read only then. As it was when its text is not found."""
    starts, ends = cut_ends(excerpt)
    after_sign = _starts_after_sign(excerpt)
    if not (starts or ends or after_sign or _ends_in_code_word(excerpt)):
        return excerpt
    # (FTS5's ellipses: a window cut inside an expansion is neither at the text's start nor at its end.)
    shown = _unmarked(excerpt).removeprefix(ELLIPSIS).removesuffix(ELLIPSIS)
    for text in texts():
        at = text.find(shown)
        if at < 0:
            continue
        start, end = at, at + len(shown)
        if starts and (opened := text.rfind(OPEN, max(start - WIDEN_CHARS, 0), start)) >= 0:
            before = text[max(opened - WIDEN_CHARS, 0):opened]
            start = opened - len(before) + word_start(before, len(before))
        elif after_sign and text[at - 1:at] in SIGNS:
            start = at - 1
        after = ends or (text.startswith(OPEN, end) and not text.startswith(OPEN * 2, end))  # (a doubled one: text)
        if after and (closed := text.find(CLOSE, end, end + WIDEN_CHARS)) >= 0:
            end = closed + 1
        if (start, end) == (at, at + len(shown)):
            break  # nothing cut: the excerpt stands
        marked = _scratch_rows([text[start:end]], HIGHLIGHT, words)
        if marked:
            return ELLIPSIS * (start > 0) + marked[0][0] + ELLIPSIS * (end < len(text))
    return excerpt


def _ends_in_code_word(excerpt: str) -> bool:
    """Whether ``excerpt`` ends with a word the index expands: the window may end before its expansion (then not at
    the text's end, and FTS5 ends it with ELLIPSIS). Marked too: a sign word's plain match marks it without its sign
    (``@<<Transactional>>``), where its expansion's marks the sign as well."""
    if not excerpt.endswith(ELLIPSIS):
        return False
    shown = _unmarked(excerpt.removesuffix(ELLIPSIS)[-WIDEN_CHARS:])
    word = shown[word_start(shown, len(shown)):]
    return bool(word) and expand(word) != word


def _starts_after_sign(excerpt: str) -> bool:
    """Whether ``excerpt`` starts at a name its expansion reads as a sign word: FTS5's window began at the name's
    token, after its sign (``...<<Transactional>>`` of ``@Transactional``), and it is shown and marked without it."""
    if not excerpt.startswith(ELLIPSIS) or OPEN not in excerpt[:WIDEN_CHARS]:
        return False
    word, _, rest = _unmarked(excerpt[len(ELLIPSIS):WIDEN_CHARS]).partition(OPEN)
    return any(sign_token(name, word) in rest.partition(CLOSE)[0].split() for name in SIGNS.values())


def _unmarked(excerpt: str) -> str:
    """``excerpt`` without the marks that pair up (a file's own "<<" stays)."""
    pieces, marks = split_marks(excerpt, MARK_OPEN, MARK_CLOSE)
    return "".join(p for i, p in enumerate(pieces) if i not in marks)


# snippet()'s cost grows with the square of a word's instances in a file: a file of more than
# DIRECT_TOKENS tokens is excerpted from its slices, SLICE_BATCH at a time in a scratch FTS5 table.
DIRECT_TOKENS = 512
SLICE_CHARS = 1024
SLICE_BATCH = 16
DOCSIZE = "SELECT id, sz FROM memory_fts_idx_docsize WHERE id IN ({marks})"
# The index's tokenizer (migrations/0005_porter.sql; a test keeps them equal).
TOKENIZE = "porter unicode61 remove_diacritics 1"
SLICE_TEXT = "SELECT coalesce(idx_name, ''), coalesce(idx_description, ''), coalesce(idx_body, '') FROM memory_fts WHERE id = ?"
# (Named parameters: each statement takes those of _scratch_rows it needs.)
_SNIPPET = "snippet(slices, 0, :open, :close, :ellipsis, :tokens) FROM slices WHERE slices MATCH :words"
SLICE_SNIPPET = f"SELECT {_SNIPPET} {{order}} LIMIT 1"
SLICE_SNIPPETS = f"SELECT rowid, {_SNIPPET}"


def _sliced_snippet(conn: sqlite3.Connection, words: str, rowid: int) -> str:
    row = conn.execute(SLICE_TEXT, (rowid,)).fetchone()
    if row is None:
        return ""
    pieces = [piece for text in row for piece in _slices(text)]
    likeliest = _likeliest(pieces, words)
    # The likeliest slice alone first: tokenizing a batch is most of the cost.
    batches = [[likeliest]] if likeliest is not None else []
    batches += (pieces[start:start + SLICE_BATCH] for start in range(0, len(pieces), SLICE_BATCH))
    return next(filter(None, (_best_slice(batch, words) for batch in batches)), "")


def text_snippets(texts: list[str], words: str) -> list[str]:
    """The excerpt of each indexed text for the FTS5 query ``words``, as :func:`snippets` gives it, at the cost
    of their own length (indexed together in the scratch table, in one statement: a snippet is its own row's)."""
    found = dict(_scratch_rows(texts, SLICE_SNIPPETS, words))
    return [_shown(found[n], words, lambda: texts[n - 1:n]) if found.get(n) else "" for n in range(1, len(texts) + 1)]


def _best_slice(pieces: list[str], words: str) -> str | None:
    sql = SLICE_SNIPPET.format(order="ORDER BY rank" if len(pieces) > 1 else "")  # one slice: nothing to rank
    found = _scratch_rows(pieces, sql, words)
    return found[0][0] if found else None


def _scratch_rows(texts: list[str], sql: str, words: str) -> list[tuple]:
    """The rows of ``sql`` (named parameters: the marks, the ellipsis, the tokens, ``words``) over the scratch table
    holding ``texts`` as rows 1, 2, ...: rolled back, not deleted, so it stays empty and FTS5 writes no segment."""
    scratch = _scratch()
    scratch.execute("BEGIN")
    try:
        scratch.executemany("INSERT INTO slices (rowid, text) VALUES (?, ?)", enumerate(texts, 1))
        return scratch.execute(sql, {"open": MARK_OPEN, "close": MARK_CLOSE, "ellipsis": ELLIPSIS,
                                     "tokens": SNIPPET_TOKENS, "words": words}).fetchall()
    finally:
        scratch.execute("ROLLBACK")


QUOTED = re.compile(r'"((?:[^"]|"")*)"')  # a string of an FTS5 query as memsearch.query writes it


def stems(fts: str) -> list[str]:
    """The start of each string of the FTS5 query ``fts`` (a word, a CJK pair, a prefix), lowercased:
    all but its last few letters, which a Porter stem may change."""
    words = (w.replace('""', '"').lower() for w in QUOTED.findall(fts))
    return [w[:max(3, len(w) - 4)] for w in words if w]


# The guess reads the query's first strings alone: each costs a scan of the whole file, and a long query (a CJK
# word is a string a pair) made every long hit cost far more than reading all its slices in batches.
MAX_NEEDLES = 16


def _likeliest(pieces: list[str], words: str) -> str | None:
    """The slice likeliest to hold the most distinct words, then most words, by their stems() (of the first
    MAX_NEEDLES); None when no slice holds any."""
    needles = list(dict.fromkeys(stems(words)))[:MAX_NEEDLES]

    def key(piece: str) -> tuple[int, int]:
        found = [n for n in map(piece.lower().count, needles) if n]
        return len(found), sum(found)

    best = max(pieces, key=key, default=None)  # the first of the best
    return best if best is not None and key(best) > (0, 0) else None


# Each thread's in-memory FTS5 table for slices, by process and thread: a query never writes the
# index, and one made per excerpt cost most of it. (_thread: threading stays off the query path.)
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
    """``text`` in pieces of about SLICE_CHARS, cut after a space, a line end or
    cjk.SEPARATOR (no token split) where the last quarter of a piece has one."""
    start = 0
    while start < len(text):
        end = start + SLICE_CHARS
        if end < len(text):
            cut = max(text.rfind(c, end - SLICE_CHARS // 4, end) for c in (" ", "\n", SEPARATOR))
            end = cut + 1 if cut >= 0 else end
        yield text[start:end]
        start = end


def cap(excerpt: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """At most about ``limit`` characters around the first match, whole marks."""
    if len(excerpt) <= limit:
        return excerpt
    first = max(excerpt.find(MARK_OPEN), 0)
    start = max(first - limit // 3, 0)
    end = start + limit
    opened, closed = excerpt.rfind(MARK_OPEN, start, end), excerpt.rfind(MARK_CLOSE, start, end)
    if opened > closed:  # the window ends inside a match: keep it whole, if it closes within half a window
        close = excerpt.find(MARK_CLOSE, opened, end + limit // 2)
        if close >= 0:  # else a "<<" of the file's own text, or a giant token: the window stands
            end = close + len(MARK_CLOSE)
    head = "" if start == 0 or excerpt.startswith(ELLIPSIS, start) else ELLIPSIS
    tail = "" if end >= len(excerpt) or excerpt.endswith(ELLIPSIS, 0, end) else ELLIPSIS
    return head + excerpt[start:end] + tail


def is_index(path: str) -> bool:
    """A MEMORY.md: an index of its folder's memory files, one line each."""
    return path[-9:].lower() == "memory.md" and (len(path) == 9 or path[-10] in "/:")


def demote_indexes(rows: list[tuple]) -> list[tuple]:
    """Each MEMORY.md moved below every candidate of its own folder that
    scores at least DEMOTE_SHARE of it (rows: path first, score fifth)."""
    out = list(rows)
    for row in [r for r in rows if is_index(r[0])]:
        folder, least = row[0][:-9], row[4] * DEMOTE_SHARE
        last = max((i for i, r in enumerate(out) if r[0].startswith(folder) and not is_index(r[0])
                    and r[4] >= least), default=-1)
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
