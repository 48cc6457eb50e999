"""A question naming a date ranks the sessions held then higher (issue 30;
memsearch/dates.py): "what did we decide on 9 December 2023?" asks about that
day's session, though its text rarely says the date."""

import datetime as dt
import json
import sqlite3

import pytest

from conftest import line, rewind, run_memsearch, transcript
from memsearch import HistoryIndex, migrate
from memsearch.dates import Window, windows
from memsearch.history import ranked_plan
from memsearch.query import plan


def _days(first: str, last: str) -> Window:
    """The window of the days ``first`` to ``last`` (ISO dates), whole."""
    return Window(f"{first}T00:00:00Z", f"{last}T23:59:59Z")


@pytest.mark.parametrize("text, expected", [
    ("what did Evan share on 9th December 2023?", [("2023-12-06", "2023-12-12")]),
    ("December 9, 2023", [("2023-12-06", "2023-12-12")]),
    ("the 9th of Dec 2023 outage", [("2023-12-06", "2023-12-12")]),
    ("where did we deploy in July 2022", [("2022-07-01", "2022-07-31")]),
    ("Sept 2021 notes", [("2021-09-01", "2021-09-30")]),
    ("the 2024-03-05 outage", [("2024-03-02", "2024-03-08")]),
    ("the 2024-02 release", [("2024-02-01", "2024-02-29")]),
    ("camping in June", ["06"]),
    ("In May we met", ["05"]),
    ("what may have caused it", []),  # a verb, not the month
    ("May I ask about the cache", []),  # capitalised, but the first word
    ("march on with the migration", []),
    ("the 31 February 2023 report", []),  # no such day
    ("the token moved to vault", []),
    ("june and June 2020 and june", ["06", ("2020-06-01", "2020-06-30")]),
    # A month's name starting a longer word is no date.
    ("what did Augustine say about Mayfair and the Octoberfest", []),
    ("I ran 5 marathons, set 10 decimals and cleared 3 junk files", []),
    ("the 5 Mar. 2024 and 3 dec reports", [("2024-03-02", "2024-03-08"), "12"]),
])
def test_the_dates_a_question_names(text, expected):
    assert windows(text) == tuple(Window("", "", w) if isinstance(w, str) else _days(*w) for w in expected)


@pytest.mark.parametrize("text, expected", [
    ("what did I buy two weeks ago?", [("2024-05-15", "2024-05-21")]),  # 14 days, three either side
    ("the 10 days ago fix", [("2024-05-19", "2024-05-25")]),
    ("a week ago", [("2024-05-22", "2024-05-28")]),
    ("a day ago", [("2024-05-28", "2024-06-01")]),  # never after today
    ("two months ago", [("2024-03-25", "2024-04-10")]),  # a month is 30 days, a week's slack a month
    ("a couple of days ago", [("2024-05-27", "2024-06-01")]),
    ("in the past three weeks", [("2024-05-08", "2024-06-01")]),
    ("what did we decide yesterday", [("2024-05-30", "2024-05-31")]),
    ("last weekend", [("2024-05-23", "2024-06-01")]),
    ("Last  Week's deploy", [("2024-05-19", "2024-06-01")]),
    ("last month", [("2024-03-31", "2024-06-01")]),
    ("four years ago", []),  # years tell a story's past, not when its sessions were held
    ("how many days ago did I fly", []),  # no count
    ("the last release", []),
    ("two weeks ago, on 9 December 2023", [("2023-12-06", "2023-12-12")]),  # a named date wins
])
def test_the_days_a_question_counts_back(text, expected):
    assert windows(text, today=dt.date(2024, 6, 1)) == tuple(_days(*w) for w in expected)


def test_counting_back_goes_from_the_clock(tmp_path):
    """Sessions held two weeks and two days ago, asked about today: the one the question counts back to
    ranks first, through the library and the installed command."""
    today = dt.datetime.now(dt.timezone.utc).date()
    root = tmp_path / "projects"
    held(root, "a-fortnight", (today - dt.timedelta(14)).isoformat(), "we moved the deploy token to vault")
    held(root, "b-recent", (today - dt.timedelta(2)).isoformat(),
         "the deploy token moved to vault; deploy token rotated, the deploy token")
    with HistoryIndex(root, tmp_path / "index.db") as h:
        assert h.search("deploy token vault")[0].session == "b-recent"
        assert h.search("deploy token vault two weeks ago")[0].session == "a-fortnight"
        assert h.search("deploy token vault two weeks ago", messages=True)[0].session == "a-fortnight"
        assert h.search("deploy token vault yesterday")[0].session == "b-recent"
    r = run_memsearch("history", "where did the deploy token go two weeks ago", "--history-root", root,
                      "--db", tmp_path / "index.db", "--json")
    assert r.returncode == 0, r.stderr
    assert [hit["session"] for hit in json.loads(r.stdout)["results"]] == ["a-fortnight", "b-recent"]


@pytest.mark.parametrize("text, terms", [
    ("which book did I finish a week ago?", ["book", "finish"]),
    ("did I bake something in the past two weeks", ["bake", "something"]),
    ("where did I go last week?", ["go", "last", "week"]),  # a session tells of "last week" so
    ("two weeks ago", ["two", "weeks", "ago"]),  # nothing else to rank by
])
def test_the_days_counted_back_are_not_ranked_as_words(text, terms):
    assert [t.strip('"') for t in ranked_plan(text, plan(text)).terms] == terms


def test_a_session_saying_weeks_ago_is_not_lifted(tmp_path):
    """"a week ago" says when (the clock's, so no session here is held then): the session that says
    "week" and "ago" does not outrank the one about the book, through the library and the installed command."""
    root = tmp_path / "projects"
    held(root, "a-book", "2023-05-01", "I finished the book on deploy tokens, a long book")
    held(root, "b-week", "2023-05-02", "a week ago the book club met; a week ago, two weeks ago, every week")
    with HistoryIndex(root, tmp_path / "index.db") as h:
        for messages in (False, True):
            assert h.search("which book did I finish a week ago?", messages=messages)[0].session == "a-book"
    r = run_memsearch("history", "which book did I finish a week ago?", "--history-root", root,
                      "--db", tmp_path / "index.db", "--json")
    assert r.returncode == 0, r.stderr
    assert [hit["session"] for hit in json.loads(r.stdout)["results"]] == ["a-book", "b-week"]


def held(hroot, session: str, when: str, text: str, until: str | None = None) -> None:
    lines = [line("user", text, at=f"{when}T10:00:00Z"), line("assistant", "Noted, thanks.", at=f"{when}T10:01:00Z")]
    if until:
        lines.append(line("user", "and one more thing", at=f"{until}T09:00:00Z"))
    transcript(hroot, lines, session=session)


@pytest.fixture
def three(tmp_path):
    """Three sessions about the same thing; the two not held on the named dates say it more."""
    root = tmp_path / "projects"
    held(root, "a-dec", "2023-12-09", "the deploy token moved to vault")
    held(root, "b-jul", "2022-07-15", "the deploy token moved to vault; deploy token rotated, the deploy token")
    held(root, "c-mar", "2024-03-01", "the deploy token moved to vault and the deploy token expired")
    held(root, "d-new", "2023-12-30", "the deploy token moved to vault; deploy token notes", until="2024-01-02")
    with HistoryIndex(root, tmp_path / "index.db") as h:
        yield h


@pytest.mark.parametrize("messages", [False, True])
@pytest.mark.parametrize("question, first", [
    ("deploy token vault", "b-jul"),  # no date: the text alone
    ("what happened to the deploy token on 9 December 2023?", "a-dec"),
    ("deploy token in July 2022", "b-jul"),
    ("deploy token in March", "c-mar"),  # any year
])
def test_a_named_date_ranks_the_session_held_then_first(three, question, first, messages):
    hits = three.search(question, messages=messages)
    assert hits[0].session == first
    assert len({h.session for h in hits}) == 4  # a factor, not a filter


def test_a_session_over_a_new_year_is_held_in_both_months(three):
    assert three.search("deploy token in January")[0].session == "d-new"
    assert three.search("deploy token in December")[0].session in ("a-dec", "d-new")
    assert three.search("deploy token in January 2024")[0].session == "d-new"
    # The message-level factor goes by each message's own time: January's message says "one more thing".
    assert three.search("deploy token in January", messages=True)[0].session == "b-jul"


@pytest.mark.parametrize("words", ["auguſt 2023", "Aprıl 3rd", "ſept 9", "laſt week", "yeſterday",
                                   "ſix weeks ago", "the past fıve days"])
def test_a_month_or_count_spelled_with_a_letter_that_folds_to_ascii_names_no_date(three, tmp_path, monkeypatch,
                                                                                   words):
    """re.I matches 'ſ' (a long s) as s and 'ı' (a dotless i) as i: "auguſt 2023" was read as a date whose month no
    table holds, and every search of it failed with a KeyError (the CLI's traceback, the tool's call raised).
    Such words name no date, and are searched as words."""
    from memsearch import MemoryIndex
    from memsearch.tool import call_tool

    assert windows(words) == ()
    assert {h.session for h in three.search(f"deploy token {words}", messages=True)} == {"a-dec", "b-jul", "c-mar",
                                                                                         "d-new"}
    r = run_memsearch("history", "deploy", "token", words, "--history-root", tmp_path / "projects",
                      "--db", tmp_path / "index.db", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)["results"]) == 4, r.stderr
    (tmp_path / "memory").mkdir()
    monkeypatch.setenv("MEMSEARCH_HISTORY_ROOTS", str(tmp_path / "projects"))
    with MemoryIndex(tmp_path / "memory", tmp_path / "index.db") as idx:
        found = call_tool(idx, "history_search", {"query": f"deploy token {words}"})
    assert not found.is_error and len(found.data["results"]) == 4, found.text


def test_the_cli_ranks_by_the_named_date(three, tmp_path):
    r = run_memsearch("history", "deploy", "token", "on", "2023-12-09", "--history-root", tmp_path / "projects",
                      "--db", tmp_path / "index.db", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["session"] == "a-dec"


def test_an_index_from_before_0015_gets_its_pieces_times(three, tmp_path):
    """Pieces written before migration 0015 have no times: it fills them from their messages."""
    db = tmp_path / "index.db"
    three.refresh()
    three.close()
    conn = sqlite3.connect(db, isolation_level=None)
    before = conn.execute("SELECT session, first_at, last_at FROM history_pieces ORDER BY session").fetchall()
    assert ("d-new", "2023-12-30T10:00:00Z", "2024-01-02T09:00:00Z") in before
    conn.execute("ALTER TABLE history_pieces DROP COLUMN first_at")
    conn.execute("ALTER TABLE history_pieces DROP COLUMN last_at")
    rewind(conn, 15)
    conn.close()
    with HistoryIndex(tmp_path / "projects", db) as h:
        assert h.conn.execute("PRAGMA user_version").fetchone() == (migrate.latest_version(),)
        after = h.conn.execute("SELECT session, first_at, last_at FROM history_pieces ORDER BY session").fetchall()
        assert after == before
        assert h.search("deploy token on 9 December 2023", refresh=False)[0].session == "a-dec"
