"""Session ranking's pruning of common words (memsearch.session_rank): the sessions, scores,
excerpts and floor counts are those of the unpruned ranking, whichever way the search went
(kept as pruned, or scored in full after all)."""

import random
from collections import Counter

import pytest

from conftest import append, line, transcript
from memsearch import HistoryIndex
from memsearch import history as history_module
from memsearch import session_rank

# Words from common to rare: a message draws from them with Zipf-like odds.
VOCAB = [f"w{i}" for i in range(60)]
QUERIES = [
    "w0 w30", "w0 w1 w45", "w1 w2 w3 w50", "w0 w59", "w0 w1 w2", "w5 w40 w0", "w0 w1 w2 w3 w4 w55",
    "w0 w1 rare", "what did w0 say about w33 in March 2025", "w2 w0 w1 w20 w21", "often w58", "w57 often w1",
    "often w0 rare",
]


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    root = tmp_path_factory.mktemp("pruning-history")
    db = root.parent / f"{root.name}.db"
    rng = random.Random(11)
    weights = [1 / (i + 1) for i in range(len(VOCAB))]

    def said(n, month):
        return [line(("user", "assistant")[k % 2], " ".join(rng.choices(VOCAB, weights, k=rng.randint(2, 30))),
                     at=f"2025-{month:02d}-{1 + k % 28:02d}T10:00:00Z") for k in range(n)]

    paths = []
    for i in range(160):
        lines = said(rng.randint(2, 12), 1 + i % 6)
        if i % 40 == 0:  # long messages holding the rare word: they score low on it
            lines.append(line("user", "rare " + " ".join(rng.choices(VOCAB, k=300))))
        if i % 9 < 7:  # in most sessions, not in nearly all: its bound is worth a few pieces
            lines.append(line("assistant", "often w3"))
        paths.append(transcript(root, lines, session=f"s{i:03}", project=f"-home-u-p{i % 2}"))
    # A session of common words alone, read in five goes: five pieces, none holding a rarer word.
    common = transcript(root, [line("user", "often w1 often") for _ in range(40)], session="s-common",
                        project="-home-u-p0")
    with HistoryIndex(root, db) as idx:
        idx.refresh()
        for n in (19, 9, 4, 1):  # each under half the one before: not merged into it
            append(common, *[line("user", "often w1 often") for _ in range(n)])
            idx.refresh()
    for path in paths[::5]:  # a session read twice has two pieces
        append(path, *said(rng.randint(1, 6), 3))
    with HistoryIndex(root, db) as idx:
        idx.refresh()
        pieces = idx.conn.execute("SELECT count(*) FROM history_pieces WHERE session = 's-common'").fetchone()[0]
    assert pieces == 5
    return root, db


def results(idx, query, limit, floor, project):
    result = idx.search_result(query, limit, project=project, floor=floor, refresh=False)
    return ([(h.session, h.score, h.matched, [e.snippet for e in h.excerpts]) for h in result.hits],
            result.floored)


def test_pruned_session_ranking_equals_the_unpruned_one(history, monkeypatch):
    root, db = history
    ways = Counter()
    real = session_rank._exact

    def spy(*args):
        exact = real(*args)
        ways["kept" if exact else "scored again"] += 1
        return exact

    cases = [(q, limit, floor, project) for q in QUERIES for limit in (1, 3, 10)
             for floor in (0.0, 0.3) for project in (None, "p1")]
    with HistoryIndex(root, db) as idx:
        monkeypatch.setattr(session_rank, "PRUNE_MIN_FILES", 10**9)
        expected = [results(idx, *case) for case in cases]
        monkeypatch.setattr(session_rank, "PRUNE_MIN_FILES", 1)
        monkeypatch.setattr(session_rank, "_exact", spy)
        for case, (want, floored) in zip(cases, expected):
            got, got_floored = results(idx, *case)
            assert [h[0] for h in got] == [h[0] for h in want], case
            assert [h[1] for h in got] == pytest.approx([h[1] for h in want], rel=1e-9), case
            assert [h[2:] for h in got] == [h[2:] for h in want], case
            assert got_floored == floored, case
    # Both ways were taken: the pruned ranking kept, and common words scored everywhere after all.
    assert ways["kept"] > 0 and ways["scored again"] > 0, ways


def test_a_session_of_common_words_alone_read_in_several_goes_still_ranks_first(tmp_path, monkeypatch):
    # Each piece of "s-common" scores under the rare word's sessions; its five pieces together do not.
    monkeypatch.setattr(history_module, "FUSE_WEIGHT", 0.0)  # the sessions' own order (its best message is not)
    root, db = tmp_path / "projects", tmp_path / "db"
    for i in range(14):
        transcript(root, [line("user", "often filler")], session=f"often{i:02}")
    for i in range(10):
        transcript(root, [line("user", "plain filler")], session=f"plain{i:02}")
    for i in range(4):
        transcript(root, [line("user", "rare words here often")], session=f"rare{i}")
    common = transcript(root, [line("user", "often often often")] * 40, session="s-common")
    with HistoryIndex(root, db) as idx:
        idx.refresh()
        for n in (19, 9, 4, 1):  # a piece a read, each under half the one before: never merged
            append(common, *[line("user", "often often often") for _ in range(n)])
            idx.refresh()
        assert idx.conn.execute("SELECT count(*) FROM history_pieces WHERE session = 's-common'").fetchone()[0] == 5
        monkeypatch.setattr(session_rank, "PRUNE_MIN_FILES", 10**9)
        unpruned = [(h.session, h.score) for h in idx.search("often rare", 1, floor=0.0, refresh=False)]
        monkeypatch.setattr(session_rank, "PRUNE_MIN_FILES", 1)
        pruned = [(h.session, h.score) for h in idx.search("often rare", 1, floor=0.0, refresh=False)]
    assert unpruned[0][0] == "s-common"
    assert [s for s, _ in pruned] == [s for s, _ in unpruned]
    assert [x for _, x in pruned] == pytest.approx([x for _, x in unpruned], rel=1e-9)


def test_a_project_filter_ranks_that_projects_sessions_as_the_unfiltered_search_does(history, monkeypatch):
    # Unfiltered, each piece's session comes from the map the index keeps between searches; under a
    # filter, from history_pieces itself: the sessions of one project must rank alike either way. (Their
    # best messages weigh against the first ones shown, which a filter changes: left out here.)
    monkeypatch.setattr(history_module, "FUSE_WEIGHT", 0.0)
    root, db = history
    with HistoryIndex(root, db) as idx:
        for query in QUERIES:
            every = [(h.session, h.score) for h in idx.search(query, 200, floor=0.0, refresh=False)
                     if h.project.endswith("-p1")]
            mine = [(h.session, h.score) for h in idx.search(query, 200, project="p1", floor=0.0, refresh=False)]
            assert mine and [s for s, _ in mine] == [s for s, _ in every], query
            assert [x for _, x in mine] == pytest.approx([x for _, x in every], rel=1e-12), query


def test_common_words_scored_in_the_candidates_pieces_alone_rank_as_unpruned(history, monkeypatch):
    # Questions of common words alone (their rarest scored first), and candidates' pieces more than a
    # statement binds (IDS_AT_ONCE made small: scored in all pieces): the pruned ranking is kept, as unpruned.
    root, db = history
    kept = []
    real = session_rank._exact

    def spy(*args):
        ids = real(*args)
        kept.append(ids is not None)
        return ids

    cases = [(q, limit, 0.0, project) for q in ("w0 w1 w2", "w0 w1", "often w0 w1 w2 w3")
             for limit in (1, 3, 10) for project in (None, "p0")]
    with HistoryIndex(root, db) as idx:
        monkeypatch.setattr(session_rank, "PRUNE_MIN_FILES", 10**9)
        expected = [results(idx, *case) for case in cases]
        monkeypatch.setattr(session_rank, "PRUNE_MIN_FILES", 1)
        monkeypatch.setattr(session_rank, "_exact", spy)
        monkeypatch.setattr(session_rank, "IDS_AT_ONCE", 7)
        for case, (want, floored) in zip(cases, expected):
            got, got_floored = results(idx, *case)
            assert [h[0] for h in got] == [h[0] for h in want], case
            assert [h[1] for h in got] == pytest.approx([h[1] for h in want], rel=1e-12), case
            assert [h[2:] for h in got] == [h[2:] for h in want] and got_floored == floored, case
    assert any(kept), kept
