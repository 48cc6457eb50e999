"""Pruning common strings (memsearch.search, PRUNING): the hits, scores,
snippets and floor counts are those of the unpruned ranking, whichever way
the search went (pruned, pruned again with fewer strings, unpruned)."""

import random
from collections import Counter

import pytest

from conftest import write
from memsearch import MemoryIndex
from memsearch import search as search_mod

# Words from common to rare: a file draws from them with Zipf-like odds.
VOCAB = [f"w{i}" for i in range(60)]
QUERIES = [
    "w0 w1", "w0 w30", "w1 w2 w3", "w0 w59", "w5 w40 w0", "w2 w0 w1", "w10 w11", "w0 w1 w2 w3 w4",
    "w3 w50", "common rare", "common w0", "w7 w0 common", "w1 w20 w21 w22", "w0 w1 rare",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("pruning")
    rng = random.Random(7)
    weights = [1 / (i + 1) for i in range(len(VOCAB))]
    for i in range(400):
        words = rng.choices(VOCAB, weights, k=rng.randint(3, 80))
        kind = ("memory", "notes")[i % 2]
        write(root, f"{kind}s/f{i:03}.md", f"---\ntype: {kind}\n---\n" + " ".join(words))
    # A word in short files of its own, which score high, next to a rare
    # word found only in long files, which score low: the best files are
    # ones a pruning of "common" would skip.
    for i in range(40):
        write(root, f"short/c{i:02}.md", "common " * (1 + i % 3))
    for i in range(12):
        write(root, f"long/r{i:02}.md", "rare " + " ".join(rng.choices(VOCAB, k=300)) + " common")
    return root


@pytest.fixture
def index(corpus, tmp_path):
    with MemoryIndex(corpus, tmp_path / "db") as idx:
        idx.reconcile()
        yield idx


def results(idx, query, limit, floor, type_=None):
    result = idx.search_result(query, limit, type=type_, floor=floor, reconcile=False)
    return [(h.path, h.score, h.snippet) for h in result.hits], result.floored


def same(a, b):
    (hits_a, floored_a), (hits_b, floored_b) = a, b
    assert [h[0] for h in hits_a] == [h[0] for h in hits_b]
    assert [h[1] for h in hits_a] == pytest.approx([h[1] for h in hits_b], rel=1e-9)
    assert [h[2] for h in hits_a] == [h[2] for h in hits_b]
    assert floored_a == floored_b


def test_pruned_ranking_equals_the_unpruned_one(index, monkeypatch):
    ways = Counter()
    real = search_mod._ranked

    def spy(conn, scored, common, where, filter_params, size):
        rows = real(conn, scored, common, where, filter_params, size)
        pruned = len(common)
        ways["pruned" if pruned else "unpruned"] += 1
        ways[f"pruned {pruned}"] += bool(pruned)
        return rows

    cases = [(q, limit, floor, type_) for q in QUERIES for limit in (1, 3, 10, 30)
             for floor in (0.0, 0.15) for type_ in (None, "notes")]
    monkeypatch.setattr(search_mod, "PRUNE_MIN_FILES", 10**9)
    expected = [results(index, *case) for case in cases]
    monkeypatch.setattr(search_mod, "PRUNE_MIN_FILES", 1)
    monkeypatch.setattr(search_mod, "_ranked", spy)
    for case, want in zip(cases, expected):
        same(results(index, *case), want)
    # Every way through _rank was taken: pruned and kept, pruned and run
    # again with fewer strings (two pruned runs in one search), unpruned.
    assert ways["pruned"] > ways["unpruned"] > 0
    assert ways["pruned 2"] + ways["pruned 3"] > 0


def test_a_file_of_common_words_alone_still_ranks_first(index, monkeypatch):
    monkeypatch.setattr(search_mod, "PRUNE_MIN_FILES", 1)
    hits = index.search("common rare", limit=3, floor=0)
    # The short files of "common" alone outscore the long files with both.
    assert all(h.path.startswith("short/") for h in hits)


def test_ties_past_the_spare_rows_are_in_path_order(tmp_path, monkeypatch):
    # Copies of one file tie. The later ones get higher rowids but come
    # first by path, so rows picked by score alone would be the wrong ones.
    root = tmp_path / "root"
    root.mkdir()
    with MemoryIndex(root, tmp_path / "db") as idx:
        for batch in ("kb", "ka"):
            for i in range(10):
                write(root, f"copies/{batch}{i}.md", "w0 w1 copy")
            write(root, f"other/{batch}.md", "copy copy w1 " + "filler " * 40)
            idx.reconcile()
        monkeypatch.setattr(search_mod, "SPARE", 2)  # fewer spare rows than ties
        shown = [h.path for h in idx.search("copy", limit=3, floor=0)]
        assert shown == ["copies/ka0.md", "copies/ka1.md", "copies/ka2.md"]
        monkeypatch.setattr(search_mod, "SPARE", 256)
        assert [h.path for h in idx.search("copy", limit=3, floor=0)] == shown
