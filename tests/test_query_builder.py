import sqlite3

import pytest

from memsearch import NoSearchableWords, build_query


@pytest.mark.parametrize(
    "text, expected",
    [
        ("docker port", '"docker" OR "port"'),
        ('say "hello"', '"say" OR "hello"'),
        ("foo* -bar baz:qux ^start", '"foo" OR "bar" OR "baz" OR "qux" OR "start"'),
        ("a AND b OR NOT c", '"a" OR "AND" OR "b" OR "OR" OR "NOT" OR "c"'),
        ("NEAR(one two, 3)", '"NEAR" OR "one" OR "two" OR "3"'),
        ("snake_case_name", '"snake_case_name"'),
        ("café naïve", '"café" OR "naïve"'),
        ("Port port PORT", '"Port"'),
        ("(((x)))", '"x"'),
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
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.execute("INSERT INTO t VALUES ('a b z col val x NEAR AND')")
    try:
        q = build_query(text)
    except NoSearchableWords:
        return
    db.execute("SELECT * FROM t WHERE t MATCH ?", (q,)).fetchall()
