import re
import sqlite3
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsearch import cjk
from memsearch.cjk import SEPARATOR as S
from memsearch.cjk import has_cjk, query_terms, segment, unsegment_snippet

# --- segment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", ""),
        ("plain English, café 2024", "plain English, café 2024"),
        ("库", "库"),
        ("仓库", f"仓库{S}库"),
        ("提交到仓库", f"提交{S}交到{S}到仓{S}仓库{S}库"),
        ("用 git 提交", f"用 git 提交{S}交"),
        ("docker部署", f"docker{S}部署{S}署"),
        ("部署v2", f"部署{S}署{S}v2"),
        ("v2版", f"v2{S}版"),
        # Japanese: kana and kanji form one run; ー belongs to it, ・ does not.
        ("コミットする", f"コミ{S}ミッ{S}ット{S}トす{S}する{S}る"),
        ("ユーザー・名", f"ユー{S}ーザ{S}ザー{S}ー・名"),
        # Korean: Hangul syllables between spaces.
        ("한국어 문서", f"한국{S}국어{S}어 문서{S}서"),
        # Full-width punctuation separates runs and stays as it is.
        ("提交，推送。", f"提交{S}交，推送{S}送。"),
        ("「暂存」！？", f"「暂存{S}存」！？"),
        # Full-width digits and letters are not CJK: unchanged, split from the run.
        ("２０２４年", f"２０２４{S}年"),
        ("ＯＳ版本", f"ＯＳ{S}版本{S}本"),
        # A separator already in the text is doubled, so it can be read back.
        (f"a{S}b", f"a{S}{S}b"),
        (f"仓{S}库", f"仓{S}{S}库"),
    ],
)
def test_segment(text, expected):
    assert segment(text) == expected
    assert unsegment_snippet(segment(text)) == text


def test_segment_tokens_in_sqlite():
    """What unicode61 makes of the segmented text: bigrams, plus the last
    character of each run, and Latin words as before."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t VALUES (?)", (segment("用Docker部署，２０２４年 Café"),))
    terms = [r[0] for r in db.execute("SELECT term FROM v ORDER BY offset")]
    assert terms == ["用", "docker", "部署", "署", "２０２４", "年", "cafe"]


def test_cjk_class_holds_only_token_characters():
    """Every character segment() treats as CJK is one unicode61 keeps inside a
    token (letter, number or mark); unassigned code points do not matter."""
    ranges = re.findall(r"(.)-(.)|(.)", cjk._CJK_CLASS)
    bad = []
    for lo, hi, single in ranges:
        first, last = (lo, hi) if lo else (single, single)
        for code in range(ord(first), ord(last) + 1):
            category = unicodedata.category(chr(code))
            if category[0] not in "LNM" and category != "Cn":
                bad.append(hex(code))
    assert bad == []


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", False),
        ("hello 2024", False),
        ("２０２４，。", False),
        ("提交", True),
        ("ひらがな", True),
        ("カタカナ", True),
        ("ｶﾀｶﾅ", True),
        ("한글", True),
        ("mixed 文", True),
    ],
)
def test_has_cjk(text, expected):
    assert has_cjk(text) is expected


# --- query_terms -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", []),
        ("git commit", ['"git"', '"commit"']),
        ("don't-panic", ['"don"', '"t"', '"panic"']),
        ("库", ['"库"*']),
        ("提交", ['"提交"']),
        ("暂存 提交", ['"暂存"', '"提交"']),
        ("提交到", ['("提交" OR "交到")']),
        ("git 提交", ['"git"', '"提交"']),
        ("用 docker 部署", ['"用"*', '"docker"', '"部署"']),
        ("docker部署", ['"docker"', '"部署"']),
        ("v2版本", ['"v2"', '"版本"']),
        ("提交，推送", ['"提交"', '"推送"']),
        ("ブランチ削除", ['("ブラ" OR "ラン" OR "ンチ" OR "チ削" OR "削除")']),
        ("저장소", ['("저장" OR "장소")']),
        ("２０２４年", ['("２０２４" OR "2024")', '"年"*']),
        ("ｇｉｔ", ['("ｇｉｔ" OR "git")']),
    ],
)
def test_query_terms(text, expected):
    assert query_terms(text) == expected


@pytest.mark.parametrize(
    "mode,expected",
    [
        ("phrase", '"提交 交到 到仓"'),
        ("and", '("提交" AND "交到" AND "到仓")'),
        ("or", '("提交" OR "交到" OR "到仓")'),
        ("hybrid", '("提交 交到 到仓" OR "提交" OR "交到" OR "到仓")'),
    ],
)
def test_query_terms_modes(mode, expected):
    assert query_terms("提交到仓", mode) == [expected]


def test_query_terms_rejects_unknown_mode():
    with pytest.raises(ValueError, match="mode must be one of"):
        query_terms("提交", "bigram")


# Latin, Greek, Cyrillic, Arabic, Indic... and punctuation: everything below
# the CJK blocks except Hangul Jamo and the separator.
latin_text = st.text(
    st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FFF).filter(lambda c: c != S and not has_cjk(c))
)


@given(latin_text)
def test_latin_text_is_untouched(text):
    """Without CJK, indexing and querying are exactly what they were."""
    assert segment(text) == text
    assert query_terms(text) == [f'"{w}"' for w in re.findall(r"\w+", text)]


# --- unsegment_snippet -----------------------------------------------------------


@pytest.mark.parametrize(
    "snippet,expected",
    [
        # The example of the issue: two matched bigrams overlap.
        (f"将暂{S}<<暂存>>{S}<<存的>>{S}的文", "将<<暂存的>>文"),
        # A phrase match is one highlight spanning its separators.
        (f"将暂{S}<<暂存{S}存的>>{S}的文", "将<<暂存的>>文"),
        (f"<<提交>>{S}交到{S}到仓{S}<<仓库>>{S}库", "<<提交>>到<<仓库>>"),
        # The window starts in the middle of a run: its first bigram is whole.
        (f"...存的{S}的文{S}<<文件>>{S}件提...", "...存的<<文件>>提..."),
        # ...or on the last character of a run.
        (f"...库 and <<git>>", "...库 and <<git>>"),
        # A trailing separator before the ellipsis is dropped.
        (f"...<<提交>>{S}交到{S}...", "...<<提交>>到..."),
        # The unigram of a run's last character matched (a one-character query).
        (f"仓库{S}<<库>>", "仓<<库>>"),
        # Latin glued to a run, both matched: one highlight.
        (f"<<docker>>{S}<<部署>>{S}署", "<<docker部署>>"),
        (f"docker{S}<<部署>>{S}署", "docker<<部署>>"),
        # Latin-only snippets come back unchanged, even with odd markers.
        ("a << b <<c>> d", "a << b <<c>> d"),
        # Japanese and Korean.
        (f"リポ{S}ポジ{S}ジト{S}トリ{S}リに{S}に<<コミ{S}ミッ{S}ット>>{S}トす", "リポジトリに<<コミット>>す"),
        (f"<<저장>>{S}<<장소>>{S}소에", "<<저장소>>에"),
    ],
)
def test_unsegment_snippet(snippet, expected):
    assert unsegment_snippet(snippet) == expected


def test_unsegment_snippet_custom_markers():
    snippet = f"将暂{S}[暂存]{S}存的"
    assert unsegment_snippet(snippet, "[", "]") == "将[暂存]的"
    with pytest.raises(ValueError, match="markers"):
        unsegment_snippet(snippet, "|", "|")


def test_unsegment_keeps_literal_markers_of_the_original():
    text = "std::cout << 提交 >> x;  a << b"
    assert unsegment_snippet(segment(text)) == text


# A mix that exercises every path: runs of each script, glued Latin and
# digits, full-width forms, punctuation, spaces and the separator itself.
mixed_text = st.text(
    st.sampled_from(
        list("提交到仓库的文件暂存ひらがなカタカナー한국어abcXYZ019_ ，。！？「」()<>.-\n")
        + ["２", "０", "ｇ", "ｰ", "ｶ", "\u3099", "\u0301", "\ue000", "𠀋", S]
    )
).filter(lambda t: "<<" not in t and ">>" not in t)


@given(mixed_text)
def test_round_trip(text):
    assert unsegment_snippet(segment(text)) == text


# --- end to end through SQLite FTS5 -----------------------------------------------

SCHEMA = """
CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT, body_seg TEXT);
CREATE VIRTUAL TABLE docs_fts USING fts5(
    body_seg, content='docs', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, body_seg) VALUES (new.id, new.body_seg);
END;
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, body_seg) VALUES ('delete', old.id, old.body_seg);
END;
CREATE TRIGGER docs_au AFTER UPDATE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, body_seg) VALUES ('delete', old.id, old.body_seg);
  INSERT INTO docs_fts(rowid, body_seg) VALUES (new.id, new.body_seg);
END;
"""

DOCS = {
    1: "# git commit\n\n- 将暂存的文件提交到仓库，再写一条提交说明：",
    2: "# git push\n\n- 将本地提交推送到远程仓库。",
    3: "# docker\n\n用 docker 部署服务，然后查看日志。",
    4: "# 日本語\n\n変更したファイルをリポジトリにコミットします。",
    5: "# 한국어\n\n변경 사항을 저장소에 커밋합니다.",
    6: "# Release\n\nShipped in 2024, see the changelog.",
    7: "# 発表\n\n２０２４年に公開、ｇｉｔで管理。",
    8: "# English only\n\nCommit the staged files to the repository.",
}


def add(db, doc_id, body):
    db.execute("INSERT INTO docs (id, body, body_seg) VALUES (?, ?, ?)", (doc_id, body, segment(body)))


@pytest.fixture
def db():
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    for doc_id, body in DOCS.items():
        add(db, doc_id, body)
    return db


def search(db, text, mode=cjk.DEFAULT_WORD_MODE):
    query = " OR ".join(query_terms(text, mode))
    rows = db.execute(
        "SELECT rowid, snippet(docs_fts, 0, '<<', '>>', '...', 32) FROM docs_fts"
        " WHERE docs_fts MATCH ? ORDER BY rank",
        (query,),
    ).fetchall()
    return [(rowid, unsegment_snippet(snippet)) for rowid, snippet in rows]


def test_issue_example_finds_git_commit_and_marks_original(db):
    hits = search(db, "暂存 提交")
    assert hits[0] == (1, "# git commit\n\n- 将<<暂存>>的文件<<提交>>到仓库，再写一条<<提交>>说明：")
    assert {rowid for rowid, _ in hits} == {1, 2}


@pytest.mark.parametrize(
    "query,found,marked",
    [
        ("提交到仓库", 1, "<<提交到仓库>>"),
        ("库", 1, "仓<<库>>"),
        ("git 提交", 1, "<<提交>>"),
        ("docker部署", 3, "<<docker>> <<部署>>"),
        ("用 docker 部署", 3, "<<用>> <<docker>> <<部署>>"),
        ("コミット", 4, "<<コミット>>"),
        ("リポジトリ", 4, "<<リポジトリ>>"),
        ("変", 4, "<<変更>>"),
        ("저장소", 5, "<<저장소>>에"),
        ("日志", 3, "查看<<日志>>"),
        ("2024", 6, "<<2024>>"),
        ("２０２４", 7, "<<２０２４>>"),
        ("ｇｉｔ", 7, "<<ｇｉｔ>>"),
    ],
)
def test_queries(db, query, found, marked):
    snippets = dict(search(db, query))
    assert marked in snippets[found]
    assert S not in snippets[found]


def test_full_width_query_also_finds_ascii(db):
    assert {rowid for rowid, _ in search(db, "２０２４")} == {6, 7}


def test_bigrams_do_not_cross_punctuation(db):
    # "仓库，再写" in doc 1 does not hold the word 库再.
    assert search(db, "库再") == []
    assert search(db, "库再", "phrase") == []


def test_english_unchanged(db):
    hits = search(db, "staged repository")
    assert hits == [(8, "# English only\n\nCommit the <<staged>> files to the <<repository>>.")]


def test_update_and_delete_keep_index_in_step(db):
    db.execute("UPDATE docs SET body = ?, body_seg = ? WHERE id = 3", ("改用 podman 部署", segment("改用 podman 部署")))
    assert [r for r, _ in search(db, "日志")] == []
    assert search(db, "部署") == [(3, "改用 podman <<部署>>")]
    db.execute("DELETE FROM docs WHERE id = 3")
    assert search(db, "部署") == []
    db.execute("INSERT INTO docs_fts(docs_fts) VALUES ('integrity-check')")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["提交", "仓库", "暂存的", "文件", "git", "push", "，", "。", " ", "コミット"]), max_size=60),
    st.sampled_from(["提交", "仓库", "暂存", "コミット", "库", "git"]),
)
def test_snippets_show_original_text(words, query):
    """Whatever window snippet() picks, the mapped snippet is the original
    text with markers on characters of the query word."""
    body = "".join(words)
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    add(db, 1, body)
    hits = search(db, query)
    if has_cjk(query) and query in body:
        assert hits
    for _, snippet in hits:
        plain = snippet.replace("<<", "").replace(">>", "")
        assert all(part in body for part in plain.split("..."))
        for marked in re.findall("<<(.*?)>>", snippet):
            assert query in marked or (len(query) == 1 and marked.startswith(query))
