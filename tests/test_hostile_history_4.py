"""Hostile transcripts, a fourth audit (session 51): what verification reads back, what a question costs."""

import datetime as dt
import json

import pytest

from conftest import PROJECT, line, run_memsearch as run, transcript
from test_history import history, hroot  # noqa: F401 (fixtures)


def _racing(history, change):
    """``history._stale`` made to run ``change()`` once, after the search read its hits and before it checks them:
    a writer's rewrite in the moment between (each search refreshes first, so only then can one slip in)."""
    real, calls = history._stale, []

    def racing(ids, rows):
        if not calls:
            change()
        calls.append(ids)
        return real(ids, rows)

    history._stale = racing
    return calls


@pytest.mark.parametrize("messages", [True, False])
def test_a_line_that_became_a_value_inside_another_line_is_never_shown(history, hroot, messages):
    """Verification read a message's bytes back at their place, not the line around them: a rewrite that kept those
    bytes where they were but nested them in another line (a value an assistant's line quotes) passed, and the user's
    words the transcript no longer holds were shown as the user's."""
    said = json.dumps(line("user", "please run the heron deploy now", session="s-1"))
    first = json.dumps(line("assistant", "fine " + "x" * 200, session="s-1"))
    path = transcript(hroot, [], session="s-1")
    path.write_text(first + "\n" + said + "\n")
    history.refresh()

    def nest():  # the same bytes at the same offset, now inside an assistant's line that says otherwise
        head = json.dumps(line("assistant", "no", session="s-1"))[:-1] + ', "quoted": '
        path.write_text(head.ljust(len(first) + 1) + said + "}\n")
        assert path.read_bytes().index(said.encode()) == len(first) + 1

    calls = _racing(history, nest)
    result = history.search_result("heron", messages=messages)
    assert result.hits == [] and len(calls) == 2


def test_a_sub_agents_line_rewritten_to_claim_another_session_is_not_shown_as_the_first(history, hroot):
    """An older sub-agent's file (``<project>/agent-*.jsonl``) takes each line's sessionId. Verification checked a
    line's text, role, time and uuid but not the session it names: a same-size rewrite naming another session
    passed, and the hit was shown as a message of the session the line no longer claims."""
    path = hroot / PROJECT / "agent-1.jsonl"
    transcript(hroot, [line("user", "the heron deploy", session="aaaa")], session="agent-1")
    history.refresh()
    calls = _racing(history, lambda: path.write_text(path.read_text().replace('"aaaa"', '"bbbb"')))
    hits = history.search("heron", messages=True)
    assert [(h.session, h.snippet) for h in hits] == [("bbbb", "the <<heron>> deploy")] and len(calls) == 2


def test_a_question_naming_thousands_of_dates_is_searched(history, hroot, tmp_path):
    """Each date a question names became an OR of the ranking's SQL: past about a thousand, SQLite refused the
    expression and the search failed with an error blaming the index (``index ...: Expression tree is too
    large``); below that, each cost every row scored (900 dates: a search 10 times slower). Now the first
    MAX_WINDOWS dates are ranked by, the rest searched as words only."""
    from memsearch import dates

    transcript(hroot, [line("user", "the heron deploy", at="2020-01-02T10:00:00Z")])
    day = dt.date(2020, 1, 1)
    question = "heron " + " ".join((day + dt.timedelta(n)).isoformat() for n in range(3000))
    assert len(dates.windows(question)) == dates.MAX_WINDOWS
    for messages in (True, False):
        assert len(history.search(question, messages=messages)) == 1
    done = run("history", question, "--history-root", hroot, "--db", tmp_path / "cli.db", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["results"]) == 1


def test_a_transcript_rewritten_without_end_costs_a_search_one_refresh_time(history, hroot, monkeypatch):
    """A search reads transcripts for REFRESH_SECONDS; a hit its transcript no longer holds made it refresh again,
    for REFRESH_SECONDS more each try (VERIFY_TRIES): a large transcript a writer keeps rewriting in place cost
    every search 4 refreshes, 20 s instead of 5. The tries share the search's time now; the hit is left out, the
    other transcripts' shown. A clock of its own: each refresh is taken to spend all it was given."""
    from types import SimpleNamespace

    import memsearch.history as history_module
    from memsearch import history_refresh

    transcript(hroot, [line("user", "the good heron")], session="good")
    transcript(hroot, [line("user", "the rewritten heron")], session="big")
    history.refresh()
    clock, budgets = [100.0], []
    monkeypatch.setattr(history_module, "time", SimpleNamespace(monotonic=lambda: clock[0]), raising=False)
    real_refresh, real_stale = history.refresh, history._stale

    def refresh(progress=None, seconds=None):
        budgets.append(seconds)
        clock[0] += seconds
        return real_refresh(progress, seconds)

    def stale(ids, rows):  # the big transcript's hits never hold still
        real_stale(ids, rows)
        return {row[8] for row in rows if row[9] == "big"}

    history.refresh, history._stale = refresh, stale
    for messages in (True, False):
        budgets.clear()
        hits = history.search("heron", messages=messages)
        assert [h.session for h in hits] == ["good"]
        assert budgets == [history_refresh.REFRESH_SECONDS] + [0.0] * history_module.VERIFY_TRIES


def test_the_open_hint_of_a_session_id_that_starts_with_a_dash_runs(hroot, tmp_path):
    """The "open a session" hint put the id first, shell-quoted: ``shlex`` leaves ``-rf`` bare, so the command it
    gave read the id as options and failed ("No such option"). After ``--`` it is the session's id whatever it
    starts with."""
    import shlex
    import subprocess

    from conftest import memsearch_exe

    transcript(hroot, [line("user", "the heron deploy")], session="-rf")
    env = {"MEMSEARCH_HISTORY_ROOTS": str(hroot), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    text = run("history", "heron", env=env).stdout
    hint = text.split("open a session: ")[1].strip()
    done = subprocess.run(hint.replace("memsearch", shlex.quote(memsearch_exe()), 1), shell=True, text=True,
                          capture_output=True, timeout=60, env={**__import__("os").environ, **env})
    assert done.returncode == 0 and "the heron deploy" in done.stdout, done.stderr
    found = json.loads(run("history", "heron", "--json", env=env).stdout)["results"][0]
    assert found["open"] == hint
