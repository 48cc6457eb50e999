import contextlib
import sqlite3

import pytest

from memsearch import NoSearchableWords, build_query


@pytest.mark.parametrize(
    "text, expected",
    [
        # Words, then adjacent pairs as phrases (tests/test_ranking.py has
        # the rules: stop words are left out, a pair of two is never made).
        ("docker port", '"docker" OR "port" OR "docker port"'),
        ('say "hello"', '"say" OR "hello" OR "say hello"'),
        # baz:qux is a dotted name (issue 33): searched as a phrase too, a string of its own.
        ("foo* -bar baz:qux ^start",
         '"foo" OR "bar" OR "baz" OR "qux" OR "start" OR "baz qux" OR "foo bar" OR "bar baz" OR "qux start"'),
        ("a AND b OR NOT c", '"b" OR "c" OR "clanguage" OR "AND b" OR "b OR" OR "NOT c"'),  # (c: the language too)
        ("NEAR(one two, 3)", '"NEAR" OR "one" OR "two" OR "3" OR "NEAR one" OR "one two" OR "two 3"'),
        ("snake_case_name", '"snake_case_name" OR "snakecasename"'),  # and joined, as snakeCaseName (issue 33)
        ("café naïve", '"café" OR "naïve" OR "café naïve"'),
        ("Port port PORT", '"Port"'),
        ("(((x)))", '"x"'),
        ("the who", '"the" OR "who"'),
    ],
)
def test_build_query(text, expected):
    assert build_query(text) == expected


@pytest.mark.parametrize("text", ["", "   ", '"', "* - : ^ ( )", "!!!"])
def test_no_words_is_a_clear_error(text):
    with pytest.raises(NoSearchableWords):
        build_query(text)


@pytest.mark.parametrize("text", ['"', "*", "-", ":", "^", "(", "NEAR", "AND", "a\"b", "x)", "col:val", "\x00z"])
def test_every_built_query_parses_in_fts5(text):
    """FTS5 syntax in the text becomes words: the built query parses and
    finds the row that holds those words."""
    try:
        q = build_query(text)
    except NoSearchableWords:
        return
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        db.execute("INSERT INTO t VALUES ('a b z col val x NEAR AND')")
        assert db.execute("SELECT rowid FROM t WHERE t MATCH ?", (q,)).fetchall() == [(1,)]


def test_planning_a_pasted_text_costs_in_proportion_to_its_words(monkeypatch):
    """Each pair was looked up in the tuple of words: 20,000 words took 5 s,
    300,000 (a 2 MB command line) hours. Counted, not timed: how many words
    the pair lookups compare."""
    from memsearch import query

    compared = []

    class Terms(tuple):
        def __contains__(self, item):
            compared.append(len(self))
            return super().__contains__(item)

    monkeypatch.setattr(query, "tuple", Terms, raising=False)  # what plan() builds its strings with
    planned = query.plan(" ".join(f"w{i}" for i in range(2000)))
    assert len(planned.terms) == 2000 and len(planned.pairs) == 1999
    assert sum(compared) <= 2 * 2000
