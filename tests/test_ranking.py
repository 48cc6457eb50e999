"""Ranking (issue 8): stop words, word pairs, Lucene's idf, Porter stemming,
snippets computed for the shown hits only."""

import contextlib
import math
import sqlite3

import pytest

from conftest import paths, write
from memsearch import MemoryIndex, NoSearchableWords
from memsearch import search as search_mod
from memsearch.query import MAX_STRINGS, STOP_WORDS, Query, is_phrase, plan


# -- the query plan ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, terms, pairs",
    [
        ("docker port", ['"docker"', '"port"'], ['"docker port"']),
        ("What did Caroline research?", ['"Caroline"', '"research"'], ['"did Caroline"', '"Caroline research"']),
        # Only stop words: they are all searched (never zero words), and no
        # pair of two stop words is.
        ("the who", ['"the"', '"who"'], []),
        ("Port port PORT", ['"Port"'], []),
        ("a AND b OR NOT c", ['"b"', '"c"', '"clanguage"'], ['"AND b"', '"b OR"', '"NOT c"']),
        ("NEAR(one two, 3)", ['"NEAR"', '"one"', '"two"', '"3"'], ['"NEAR one"', '"one two"', '"two 3"']),
        ("when did it", ['"when"', '"did"', '"it"'], []),
        # A question word is never paired: "how much" names no topic.
        ("how much memory", ['"much"', '"memory"'], ['"much memory"']),
    ],
)


def test_plan(text, terms, pairs):
    code = ('"clanguage"',) if '"clanguage"' in terms else ()  # (C the language weighs as a code word)
    assert plan(text) == Query(tuple(terms), tuple(pairs), code)


def test_a_cjk_word_is_searched_by_its_bigrams_and_never_paired():
    q = plan("提交到 git push")
    assert q.terms == ('("提交" OR "交到")', '"git"', '"push"')
    assert q.pairs == ('"git push"',)
    assert not is_phrase(q.terms[0]) and is_phrase(q.terms[1]) and is_phrase('"库"*')


def test_stop_words_are_lower_case_words():
    assert all(w == w.casefold() and w.isalpha() for w in STOP_WORDS)
    assert {"the", "what", "did", "when"} <= STOP_WORDS


@pytest.mark.parametrize("text", ["", "  ", "***"])
def test_no_words_is_still_an_error(text):
    with pytest.raises(NoSearchableWords):
        plan(text)


def test_every_string_parses_alone_and_ored():
    """Each term, each pair and their OR of an operator-laden query is valid
    FTS5 under the porter tokenizer: MATCH raises no syntax error."""
    q = plan('a "b" c* NEAR(d) -e AND f:g ^h (i)')
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 1')")
        db.execute("INSERT INTO t VALUES ('x')")
        for fts in (*q.terms, *q.pairs, q.fts):
            db.execute("SELECT * FROM t WHERE t MATCH ?", (fts,)).fetchall()


def test_a_question_answered_outranks_a_file_repeating_its_question_words(root, tmp_path):
    """The file that answers a plain question ranks above one that only shares its opening
    words ("How long"), which a phrase of the question word and the next one used to lift."""
    files = {"expiry.md": "# Cache expiry\n\nCache entries expire after ten minutes.\n",
             "riddles.md": "# Riddles\n\nHow long is a piece of string? Ask the cache.\n",
             "walk.md": "A long walk in the park, entries free.\n", "diary.md": "Diary entries.\n",
             "road.md": "The long road home.\n", "nights.md": "Long nights, long days.\n"}
    for name, text in files.items():
        write(root, name, text)
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert paths(idx.search("how long does the cache keep entries"))[:2] == ["expiry.md", "riddles.md"]


# -- scores --------------------------------------------------------------------------


def lucene_bm25(tf, doc_len, avg_len, n, files, k1=1.2, b=0.75):
    idf = math.log(1 + (files - n + 0.5) / (n + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avg_len))


def test_score_is_bm25_with_lucenes_idf(root, tmp_path):
    write(root, "a.md", "walrus walrus tusk")
    write(root, "b.md", "walrus seal seal seal")
    write(root, "c.md", "seal")
    with MemoryIndex(root, tmp_path / "db") as idx:
        hits = idx.search("walrus", floor=0)
    # FTS5's own idf for a word in 2 of 3 files is ln(1.5 / 2.5) < 0,
    # clamped to 1e-6: both scores would be ~0. Lucene's stays positive.
    avg = (3 + 4 + 1) / 3
    assert paths(hits) == ["a.md", "b.md"]
    assert hits[0].score == pytest.approx(lucene_bm25(2, 3, avg, 2, 3))
    assert hits[1].score == pytest.approx(lucene_bm25(1, 4, avg, 2, 3))


def test_a_word_in_most_files_still_ranks(root, tmp_path):
    # In a small tree (twenty sessions naming both speakers) FTS5's bm25()
    # gives a word found in half the files nothing at all.
    write(root, "one.md", "caroline painted a sunrise")
    write(root, "two.md", "caroline melanie caroline went camping")
    write(root, "three.md", "melanie read a book")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert paths(idx.search("caroline camping", floor=0))[0] == "two.md"
        assert paths(idx.search("melanie book", floor=0))[0] == "three.md"


def test_pairs_rank_words_together_first(root, tmp_path):
    write(root, "apart.md", "the group met; support came later from elsewhere")
    write(root, "together.md", "a support group met on friday; later it rained")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert paths(idx.search("support group", floor=0)) == ["together.md", "apart.md"]


def test_stop_words_do_not_outweigh_the_rare_word(root, tmp_path):
    write(root, "noise.md", "what did you do when it was there? what did he say?")
    write(root, "answer.md", "The pottery class was on Tuesday.")
    for i in range(5):
        write(root, f"filler{i}.md", f"filler note {i} about the weather")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert paths(idx.search("what did she do in the pottery class", floor=0))[0] == "answer.md"


def test_english_words_are_stemmed(root, tmp_path):
    write(root, "a.md", "Melanie paints sunrises and went running")
    with MemoryIndex(root, tmp_path / "db") as idx:
        hit = idx.search("painted sunrise run")[0]
    assert hit.path == "a.md"
    assert "<<paints>>" in hit.snippet and "<<sunrises>>" in hit.snippet and "<<running>>" in hit.snippet


def test_a_very_long_query_is_one_or_query(root, tmp_path):
    write(root, "n.md", "alpha beta")
    write(root, "m.md", "gamma")
    text = " ".join(f"w{i}" for i in range(MAX_STRINGS + 5)) + " alpha"
    assert not plan(text).separate
    with MemoryIndex(root, tmp_path / "db") as idx:
        result = idx.search_result(text)
    assert paths(result.hits) == ["n.md"]
    # What --json shows as searched: the words, not the pairs it once listed too.
    assert result.fts_query == " OR ".join(f'"{word}"' for word in text.split())


def test_a_very_long_query_names_the_words_no_file_holds(root, tmp_path):
    """A pasted error message or paragraph is one OR query: its words were never counted, so
    unmatched was always empty, whatever the files lacked."""
    words = [f"w{i}" for i in range(MAX_STRINGS + 5)]
    write(root, "n.md", " ".join(words))
    write(root, "m.md", "gamma")
    text = " ".join(words[:10]) + " stripe " + " ".join(words[10:]) + " gamma webhook"
    assert not plan(text).separate
    with MemoryIndex(root, tmp_path / "db") as idx:
        result = idx.search_result(text)
        assert paths(result.hits)[0] == "n.md" and result.unmatched == ("stripe", "webhook")
        assert idx.search_result(" ".join(words)).unmatched == ()


def test_file_count_is_what_fts5_counts(root, tmp_path):
    for i in range(300):
        write(root, f"f{i}.md", f"note {i}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        assert search_mod.file_count(idx.conn) == 300
        (root / "f0.md").unlink()
        idx.reconcile()
        assert search_mod.file_count(idx.conn) == 299


def test_file_count_of_an_empty_index(root, tmp_path):
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        assert search_mod.file_count(idx.conn) == 0
        assert idx.search("anything") == []


@pytest.mark.parametrize("value, encoded", [(0, b"\x00"), (127, b"\x7f"), (128, b"\x81\x00"), (300, b"\x82\x2c"),
                                            (2**57, b"\x81\x80\x80\x80\x80\x80\x80\x80\x00")])


def test_varint(value, encoded):
    assert next(search_mod.varints(encoded + b"\x05\x07")) == value


# -- snippets ------------------------------------------------------------------------


def test_snippets_only_for_the_hits_shown(root, tmp_path, monkeypatch):
    for i in range(20):
        write(root, f"n{i:02}.md", "walrus " * (i + 1) + "tusk")
    asked = []
    real = search_mod.snippets

    def spy(conn, query, ids):
        asked.append(list(ids))
        return real(conn, query, ids)

    monkeypatch.setattr(search_mod, "snippets", spy)
    with MemoryIndex(root, tmp_path / "db") as idx:
        hits = idx.search("walrus", limit=3)
    assert len(hits) == 3 and len(asked) == 1 and len(asked[0]) == 3
    assert all("<<walrus>>" in h.snippet for h in hits)


def test_every_hit_has_its_own_snippet(index):
    hits = index.search("rounding checkpoint webhook", floor=0)
    assert len(hits) > 3
    for hit in hits:
        assert "<<" in hit.snippet, hit
    by_path = {h.path: h.snippet for h in hits}
    assert "Stripe" in by_path["sessions/s1/tasks/T1/notes.md"]


# -- index layout --------------------------------------------------------------------


def fts5_segments(conn) -> int:
    """Segments in FTS5's structure record: a 4-byte cookie, then varints
    nLevel and nSegment."""
    block = conn.execute("SELECT block FROM memory_fts_idx_data WHERE id = 10").fetchone()[0]
    return next(search_mod.varints(block[4 + len(_varint_bytes(block[4:])):]))


def _varint_bytes(data: bytes) -> bytes:
    end = next(i for i, b in enumerate(data) if b < 0x80)
    return data[: end + 1]


def test_a_reconcile_leaves_few_fts5_segments(root, tmp_path):
    # Each row written through the triggers ends in an FTS5 savepoint, which
    # flushes a segment of its own; the reconcile merges them afterwards.
    for i in range(40):
        write(root, f"n{i:02}.md", f"note {i} about walruses and seals " * 20)
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        assert fts5_segments(idx.conn) <= 3
        for i in range(0, 40, 4):
            write(root, f"n{i:02}.md", f"edited note {i}")
        idx.reconcile()
        assert fts5_segments(idx.conn) <= 3
        idx.conn.execute("INSERT INTO memory_fts_idx(memory_fts_idx, rank) VALUES ('integrity-check', 1)")
        assert paths(idx.search("edited note 8", floor=0))[0] == "n08.md"
