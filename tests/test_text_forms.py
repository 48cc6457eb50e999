"""One text, one match: a file and a query spelling the same words in other
Unicode forms (composed or decomposed, ...) find each other, in memory
search, history search and session context alike."""

import json
import unicodedata

import pytest

from conftest import write
from memsearch import HistoryIndex, MemoryIndex, Root
from memsearch.query import Query, plan


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# Hangul as Jamo (macOS file names, text pasted from them), kana with a
# combining dakuten, and Vietnamese, whose letters carry two marks: FTS5's
# remove_diacritics 1 folds a decomposed "dữ" to "du" and keeps a composed one.
DECOMPOSED = [("데이터베이스 연결", "연결"), ("ガイドを更新する", "ガイド"),
              ("Tiếng Việt dữ liệu", "dữ liệu")]


@pytest.mark.parametrize("text,query", DECOMPOSED)
def test_a_decomposed_file_is_found_by_the_composed_query(tmp_path, text, query):
    root = tmp_path / "notes"
    write(root, "a.md", nfd(text) + "\n")
    with MemoryIndex(Root("plain", root), db_path=tmp_path / "index.db") as idx:
        hits = idx.search_result(nfd(query))  # the query is composed as it is read
        assert [h.path for h in hits.hits] == ["a.md"] and hits.unmatched == ()
        assert hits.hits[0].snippet.replace("<<", "").replace(">>", "") == unicodedata.normalize("NFC", text) + "\n"


@pytest.mark.parametrize("text,query", DECOMPOSED)
def test_a_decomposed_message_is_found_by_the_composed_query(tmp_path, text, query):
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    (root / "p" / "s-1.jsonl").write_text(json.dumps({"role": "user", "content": nfd(text)}) + "\n")
    with HistoryIndex(root, tmp_path / "index.db") as history:
        assert [h.session for h in history.search(query)] == ["s-1"]
        context = history.read_session_context("s-1", query)
        assert context.strategy == "relevant" and context.fragments[0][4] > 0


# unicode61 lowercases but does not fold: German capitals spell ß as SS, and
# a ligature pasted from a PDF is one letter of its own.
@pytest.mark.parametrize("text,query", [("# HAUPTSTRASSE 5", "Hauptstraße"), ("# HAUPTSTRASSE 5", "HAUPTSTRAẞE"),
                                        ("the config file", "conﬁg")])
def test_a_word_is_found_as_its_case_folded_spelling(tmp_path, text, query):
    root = tmp_path / "notes"
    write(root, "a.md", text + "\n")
    (tmp_path / "projects" / "p").mkdir(parents=True)
    (tmp_path / "projects" / "p" / "s-1.jsonl").write_text(json.dumps({"role": "user", "content": text}) + "\n")
    with MemoryIndex(Root("plain", root), db_path=tmp_path / "index.db") as idx:
        result = idx.search_result(query)
        assert [h.path for h in result.hits] == ["a.md"] and result.unmatched == ()
        assert "<<" in result.hits[0].snippet
    with HistoryIndex(tmp_path / "projects", tmp_path / "index.db") as history:
        assert [h.session for h in history.search(query)] == ["s-1"]


def test_the_case_folded_spelling_leaves_the_typed_one_as_it_was():
    """A string of its own, not an OR with the typed word: that keeps its
    Lucene idf and its pair, so files holding it score exactly as before.
    (ß, æ and œ fold as accents do: one string, the folded spelling.)"""
    assert plan("HAUPTSTRAẞE Weg") == Query(('"HAUPTSTRASSE"', '"Weg"'))
    assert plan("conﬁg file") == Query(('"conﬁg"', '"config"', '"file"'), ('"conﬁg file"',))


# Session context scores by substrings, not the index: it must read a message
# as history search matched it, or the session a hit named comes back as the
# fallback (its last messages) instead of the messages that matched.
@pytest.mark.parametrize("text,query", [("run git push --force first", "ｇｉｔ ｐｕｓｈ"),
                                        ("# HAUPTSTRASSE 5", "Hauptstraße"), (nfd("dữ liệu"), "dữ liệu")])
def test_session_context_scores_the_messages_history_search_finds(tmp_path, text, query):
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    lines = [{"role": "user", "content": text}] + [{"role": "assistant", "content": f"filler {n}"} for n in range(20)]
    (root / "p" / "s-1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with HistoryIndex(root, tmp_path / "index.db") as history:
        assert [h.session for h in history.search(query)] == ["s-1"]
        context = history.read_session_context("s-1", query)
    assert context.strategy == "relevant" and [f[0] for f in context.fragments] == [0]
