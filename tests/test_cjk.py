import contextlib
import json
import re
import sqlite3
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import cli, write
from memsearch import MemoryIndex, NoSearchableWords, build_query, cjk, codewords, migrate, reconcile as reconcile_mod
from memsearch.cjk import SEPARATOR as S
from memsearch.codewords import expand, folded
from memsearch.cjk import has_cjk, original, query_terms, segment, segmented, stored, unsegment_snippet
from memsearch.query import QUERY_SYMBOL, STOP_WORDS, plan, quote, words

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
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
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
        ("２０２４年", ['"2024"', '"年"*']),  # full width folded, as the index's expansions (issue 33)
        ("ｇｉｔ", ['"git"']),
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
@example("0\u0300")
@example("\u00d9\u064b")  # a Latin accent and an Arabic haraka in one word: both fold away
@example("_ __init__ a_")
def test_latin_text_is_untouched(text):
    """Without CJK, indexing and querying are exactly what they were, but for
    a word case folding spells otherwise (ß, ligatures, µ), also asked for so.
    A word runs on through the combining accents (U+0300-U+036F) FTS5's
    remove_diacritics folds into it: "0" + U+0300, which NFC cannot compose;
    and through Hebrew points and Arabic harakat, which fold away with them.
    Underscores alone are no word (unicode61 reads "_" as a separator)."""
    assert segment(text) == text
    # folded(): accents unicode61 leaves (Greek, ı, ø...) fold as the index's expansions do (issue 33).
    assert query_terms(text) == [term for w in map(folded, re.findall(rf"_*[^\W_][\w{codewords.MARKS}]*", text))
                                 for term in dict.fromkeys([f'"{w}"', f'"{w.casefold()}"'])
                                 if term == f'"{w}"' or w.casefold() != w.lower().replace("ς", "σ")]


# --- unsegment_snippet -----------------------------------------------------------


@pytest.mark.parametrize("length", [cjk._SLICE - 1, cjk._SLICE, cjk._SLICE + 1, cjk._SLICE + 2, 3 * cjk._SLICE + 5])
def test_a_long_run_is_spelled_a_slice_at_a_time_with_no_bigram_lost(length):
    run = "".join("東京用提交到仓库"[(i * 7) % 8] for i in range(length))
    spelled = segment(run)
    assert spelled.split(S) == [a + b for a, b in zip(run, run[1:])] + [run[-1]]
    assert unsegment_snippet(spelled) == run


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
        ("...库 and <<git>>", "...库 and <<git>>"),
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


@pytest.mark.parametrize(
    "snippet,query,expected",
    [
        # A one-character word matches the bigram it starts: only it is marked.
        (f"<<変更>>{S}更し{S}した", '"変"*', "<<変>>更した"),
        (f"仓库{S}<<库房>>{S}房间{S}间", '"git" OR "库"*', "仓<<库>>房间"),
        # ...unless the query asks for the bigram too.
        (f"<<変更>>{S}更し{S}した", '"変"* OR "変更"', "<<変更>>した"),
        (f"<<仓库>>{S}<<库房>>{S}房", '"库"* OR "仓库"', "<<仓库>>房"),
        (f"<<仓库>>{S}<<库房>>{S}房", '"库"* OR "仓库 库房"', "<<仓库房>>"),
        # Two one-character words side by side: both marked.
        (f"仓库{S}<<库房>>{S}<<房间>>{S}间", '"库"* OR "房"*', "仓<<库房>>间"),
        # The unigram ending a run is whole already.
        (f"仓库{S}<<库>>", '"库"*', "仓<<库>>"),
    ],
)
def test_unsegment_snippet_marks_one_character_words_alone(snippet, query, expected):
    assert unsegment_snippet(snippet, query=query) == expected


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
    # What the index holds: segmented, with code words' expansions (full-width ２０２４ also as 2024).
    db.execute("INSERT INTO docs (id, body, body_seg) VALUES (?, ?, ?)", (doc_id, body, segmented(body) or body))


@pytest.fixture
def db():
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    for doc_id, body in DOCS.items():
        add(db, doc_id, body)
    yield db
    db.close()  # unclosed, Python 3.13 warns (ResourceWarning) wherever it is collected


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
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.executescript(SCHEMA)
        add(db, 1, body)
        hits = search(db, query)
        if has_cjk(query) and query in body:
            assert hits
        for _, snippet in hits:
            plain = snippet.replace("<<", "").replace(">>", "")
            assert all(part in body for part in plain.split("..."))
            for m in re.finditer("<<(.*?)>>", snippet):
                marked = m.group(1)
                # A window may end (or start) inside the word: then the marks
                # hold the part of it that is shown.
                cut_after = snippet.startswith("...", m.end()) and any(
                    marked.endswith(query[:k]) for k in range(2, len(query)))
                cut_before = snippet[: m.start()].endswith("...") and any(
                    marked.startswith(query[k:]) for k in range(1, len(query) - 1))
                assert query in marked or (len(query) == 1 and marked.startswith(query)) or cut_after or cut_before


# --- segmented(): what reconcile stores ---------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        (None, None),
        ("", None),
        ("plain ASCII", None),
        ("café — naïve “quotes” Tiếng Việt ∑ 😀",  # not CJK; two marks on a letter: folded (issue 33)
         "café — naïve “quotes” Tiếng\u2064Tieng\u2062 Việt\u2064Viet\u2062 ∑ 😀"),
        ("café — naïve “quotes” ∑ 😀", None),  # not ASCII, nothing unicode61 does not fold itself
        ("２０２４，。", "２０２４\u20642024\u2062，。"),  # full-width digits are folded, punctuation is not CJK
        ("提交", f"提交{S}交"),
        (f"a{S}b", f"a{S}{S}b"),  # the separator itself: kept reversible
    ],
)
def test_segmented(text, expected):
    assert segmented(text) == expected


# Code words and folded letters too, and the markers of expansions (issue 33).
stored_text = st.lists(st.sampled_from(
    list("提交到仓库ひらがな한국어aAbZ09_-+#. \n") + ["C++", ".NET", "getUserById", "utf8", "Αθηνά", "tiếng", "ı",
                                                 "ｇ", "e\u0301", "\u3099", "\u0000", "\u2062", "\u2064", S])).map("".join)


@given(stored_text)
@example("getUserById\u2062\u2062")  # an expansion, then the text's own CLOSE
@example("a\u2062\u2064b")  # both markers in a row: each doubled, not the run
def test_stored_text_is_given_back_exactly(text):
    """What a row holds (a text column "" where the shadow holds the text) gives the text back, byte for byte."""
    body, shadow = stored(text)
    assert shadow == segmented(text) and original(body, shadow) == text
    assert body == text if shadow is None or unicodedata.normalize("NFC", text) != text else body == ""


@given(mixed_text)
def test_segmented_is_segment_or_none(text):
    shadow = segment(expand(unicodedata.normalize("NFC", text)))  # code words' expansions first (issue 33)
    assert segmented(text) == (None if shadow == text else shadow)


# --- the query builder ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("暂存 提交", '"暂存" OR "提交"'),
        ("git 提交", '"git" OR "提交"'),
        ("提交到仓库", '("提交" OR "交到" OR "到仓" OR "仓库")'),
        ("库", '"库"*'),
        ("docker部署 部署", '"docker" OR "部署"'),  # the same fragment once
        ("提交，推送。", '"提交" OR "推送"'),
        ("「暂存」！", '"暂存"'),
        ("２０２４年", '"2024" OR "年"*'),
        ("コミット", '("コミ" OR "ミッ" OR "ット")'),
        ("저장소 커밋", '("저장" OR "장소") OR "커밋"'),
    ],
)
def test_build_query_segments_cjk_words(text, expected):
    assert build_query(text) == expected


# Text without CJK, full-width forms, symbol words (C#, A#: searched by their
# name, tests/test_code_words.py) or letters case folding spells otherwise
# (ß, ligatures): whatever it is, its words are searched as they were before
# CJK support (each word quoted).
@given(st.text(st.characters(blacklist_categories=("Cs",))).filter(
    lambda t: not has_cjk(t) and not re.search("[\uff01-\uff5e]", t) and not QUERY_SYMBOL.search(t)
    and all(c.casefold() in (c, c.lower().replace("ς", "σ")) for c in t)))
def test_build_query_without_cjk_is_unchanged(text):
    found = words(text)
    if found:
        # Each word quoted as before; stop words and word pairs are the
        # ranking's business (issue 8, tests/test_ranking.py).
        kept = [w for w in found if w.casefold() not in STOP_WORDS] or found
        # Code words add forms (issue 33: an identifier's parts, a path as a
        # phrase); a letter unicode61 does not fold is searched folded.
        expected = list(dict.fromkeys(quote(folded(w)) for w in kept))
        assert [t for t in plan(text).terms if t in expected] == expected


# --- the engine: MemoryIndex, migration 0004 and the CLI ------------------------------

CJK_TREE = {
    "projects/git/commit.md": "# git commit\n\n将暂存的文件提交到仓库。\n\n- 提交所有更改：`git commit -a`\n",
    "projects/git/push.md": "# git push\n\n将本地分支推送到远程。\n",
    "projects/ops/deploy.md": "# 部署\n\n用 docker 部署服务，然后查看日志。端口：８０８０，２０２４年启用。\n",
    "projects/ops/disk.md": "# df\n\n显示磁盘的可用空间。\n",
    "global/ja/commit.md": "# コミット\n\n変更したファイルをリポジトリにコミットします。\n",
    "global/ko/commit.md": "# 커밋\n\n변경 사항을 저장소에 커밋합니다.\n",
    "global/en/commit.md": "# English\n\nCommit the staged files to the repository.\n",
    "sessions/s1/mixed.md": "Upgrade the release 到 k8s 集群，用 helm 3。\n",
    "projects/db/port.md": (
        "---\nname: 数据库端口\ndescription: 开发环境的 PostgreSQL 监听 5433\ntype: project\n---\n"
        "连接经过 pgbouncer。\n"
    ),
}


@pytest.fixture
def cjk_tree(root):
    for rel, text in CJK_TREE.items():
        write(root, rel, text)
    return root


@pytest.fixture
def cjk_index(cjk_tree, tmp_path):
    with MemoryIndex(cjk_tree, tmp_path / "index.db") as idx:
        idx.reconcile()
        yield idx


def integrity_check(conn):
    # rank 1: the index also agrees with the external content it reads.
    conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx, rank) VALUES ('integrity-check', 1)")


def test_issue_example_finds_the_git_commit_page(cjk_index):
    hits = cjk_index.search("暂存 提交")
    assert hits[0].path == "projects/git/commit.md"
    assert "将<<暂存>>的文件<<提交>>到仓库" in hits[0].snippet
    assert S not in hits[0].snippet


@pytest.mark.parametrize(
    "query,path,marked",
    [
        # Chinese: a word of one (inside a run, ending one), two and five characters.
        ("盘", "projects/ops/disk.md", "显示磁<<盘>>的"),
        ("间", "projects/ops/disk.md", "空<<间>>。"),
        ("磁盘", "projects/ops/disk.md", "显示<<磁盘>>的"),
        ("提交到仓库", "projects/git/commit.md", "<<提交到仓库>>"),
        # A compound typed without spaces that the text does not hold verbatim.
        ("推送分支", "projects/git/push.md", "本地<<分支推送>>到"),
        # Mixed scripts, glued or not.
        ("git 提交", "projects/git/commit.md", "<<提交>>到仓库"),
        ("docker部署", "projects/ops/deploy.md", "用 <<docker>> <<部署>>服务"),
        ("helm 集群", "sessions/s1/mixed.md", "k8s <<集群>>，用 <<helm>> 3"),
        ("k8s集群", "sessions/s1/mixed.md", "<<k8s>> <<集群>>"),
        # Japanese: katakana, kanji + kana, one kanji.
        ("コミット", "global/ja/commit.md", "<<コミット>>します"),
        ("リポジトリ", "global/ja/commit.md", "<<リポジトリ>>に"),
        ("変", "global/ja/commit.md", "<<変>>更した"),
        # Korean: a word with its particle glued in the text.
        ("저장소", "global/ko/commit.md", "<<저장소>>에"),
        ("커밋", "global/ko/commit.md", "<<커밋>>합니다"),
        # Full-width digits and punctuation.
        ("８０８０", "projects/ops/deploy.md", "<<８０８０>>"),
        ("２０２４年", "projects/ops/deploy.md", "，<<２０２４年>>启用"),
        ("日志，端口", "projects/ops/deploy.md", "查看<<日志>>。<<端口>>："),
        # The frontmatter's name and description have segmented columns too.
        ("监听", "projects/db/port.md", "<<监听>> 5433"),
        ("数据库", "projects/db/port.md", "<<数据库>>端口"),
    ],
)
def test_queries_through_the_engine(cjk_index, query, path, marked):
    hits = cjk_index.search(query)
    assert hits[0].path == path
    assert marked in hits[0].snippet
    assert all(S not in h.snippet for h in hits)


def test_cjk_does_not_change_english_hits(cjk_index):
    hits = cjk_index.search("staged repository")
    assert [h.path for h in hits] == ["global/en/commit.md"]
    assert hits[0].snippet == "# English\n\nCommit the <<staged>> files to the <<repository>>.\n"


def test_only_text_with_cjk_stores_a_segmented_copy(cjk_index):
    rows = {path: (body, name, description) for path, body, name, description in cjk_index.conn.execute(
        "SELECT path, body_seg, name_seg, description_seg FROM memory_fts")}
    assert rows["global/en/commit.md"] == (None, None, None)
    assert rows["projects/git/commit.md"][0] == segment(CJK_TREE["projects/git/commit.md"])
    assert rows["projects/db/port.md"] == (segment("连接经过 pgbouncer。\n"), segment("数据库端口"),
                                           segment(expand("开发环境的 PostgreSQL 监听 5433")))


def test_edited_cjk_file_is_reindexed(cjk_index, cjk_tree):
    write(cjk_tree, "projects/git/commit.md", "# git commit\n\n改用 podman 部署，不再暂存。\n")
    assert "projects/git/commit.md" not in [h.path for h in cjk_index.search("提交到仓库")]
    hits = cjk_index.search("podman 暂存")
    assert hits[0].path == "projects/git/commit.md"
    assert hits[0].snippet == "# git commit\n\n改用 <<podman>> 部署，不再<<暂存>>。\n"
    write(cjk_tree, "projects/git/commit.md", "English only now.\n")  # CJK gone: the copy goes too
    cjk_index.reconcile()
    assert cjk_index.conn.execute(
        "SELECT body_seg FROM memory_fts WHERE path = 'projects/git/commit.md'").fetchone() == (None,)
    assert [h.path for h in cjk_index.search("暂存")] == []
    (cjk_tree / "projects/ops/deploy.md").unlink()
    assert cjk_index.search("部署") == []
    integrity_check(cjk_index.conn)


def test_relative_floor_still_applies(cjk_index):
    result = cjk_index.search_result("暂存 提交 仓库 本地", floor=0.9)
    assert [h.path for h in result.hits] == ["projects/git/commit.md"]
    assert result.floored == 1
    assert [h.path for h in cjk_index.search("暂存 提交 仓库 本地", floor=0)] == [
        "projects/git/commit.md", "projects/git/push.md"]


def test_bulk_build_indexes_the_segmented_columns(cjk_tree, tmp_path, monkeypatch):
    """A large cold batch drops the triggers and has FTS5 'rebuild' the
    index from the content table: that reads the generated columns too."""
    monkeypatch.setattr(reconcile_mod, "BULK_MIN", 1)
    with MemoryIndex(cjk_tree, tmp_path / "db") as idx:
        idx.reconcile()
        integrity_check(idx.conn)
        assert idx.search("暂存 提交")[0].path == "projects/git/commit.md"


def test_schema_indexes_generated_columns(cjk_index):
    conn = cjk_index.conn
    # PRAGMA table_xinfo: hidden = 2 for a VIRTUAL generated column.
    columns = {name: hidden for _, name, _, _, _, _, hidden in conn.execute("PRAGMA table_xinfo(memory_fts)")}
    assert {c: columns[c] for c in ("body_seg", "name_seg", "description_seg")} == dict.fromkeys(
        ("body_seg", "name_seg", "description_seg"), 0)
    assert {c: columns[c] for c in ("idx_body", "idx_name", "idx_description")} == dict.fromkeys(
        ("idx_body", "idx_name", "idx_description"), 2)
    fts_columns = [r[1] for r in conn.execute("PRAGMA table_info(memory_fts_idx)")]
    assert fts_columns == ["idx_body", "idx_name", "idx_description"]  # bm25 weights follow this order
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_fts_idx'").fetchone()[0]
    assert "content = 'memory_fts'" in sql and "content_rowid = 'id'" in sql
    assert "unicode61 remove_diacritics 1'" in sql  # porter wraps it since 0005 (issue 8)
    triggers = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    assert "'delete', old.id, old.idx_body, old.idx_name, old.idx_description" in triggers["memory_fts_ad"]
    assert "WHEN old.idx_body IS NOT new.idx_body" in triggers["memory_fts_au"]
    integrity_check(conn)


def test_unchanged_indexed_text_fires_no_index_update(cjk_index):
    """The update trigger compares the indexed values: a row rewritten with
    the same text (a touched file) costs FTS5 nothing."""
    conn = cjk_index.conn
    conn.execute("CREATE TEMP TABLE fired (n)")
    conn.execute("CREATE TEMP TRIGGER count_au AFTER UPDATE ON memory_fts "
                 "WHEN old.idx_body IS NOT new.idx_body BEGIN INSERT INTO fired VALUES (1); END")
    conn.execute("UPDATE memory_fts SET size = -1, racy = 1")
    assert conn.execute("SELECT count(*) FROM fired").fetchone()[0] == 0
    conn.execute("UPDATE memory_fts SET body_seg = NULL WHERE path = 'projects/git/commit.md'")
    assert conn.execute("SELECT count(*) FROM fired").fetchone()[0] == 1
    integrity_check(conn)


def test_an_index_from_before_0004_is_upgraded(cjk_tree, tmp_path):
    """Rows written before migration 0004 have no segmented copies. They
    stay searchable by their Latin words, and the next reconcile re-reads
    every file and segments the ones with CJK."""
    db = tmp_path / "db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT)")
    for number, name, path in migrate.available():
        if number < 4:
            for statement in migrate.split_statements(path.read_text("utf-8")):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'then')", (number, name))
            conn.execute(f"PRAGMA user_version = {number}")
    key = MemoryIndex(cjk_tree, db).roots[0].key
    conn.execute("INSERT INTO memory_roots (id, key) VALUES (1, ?)", (key,))
    for rel in ("projects/git/commit.md", "global/en/commit.md"):
        st = (cjk_tree / rel).stat()
        conn.execute("INSERT INTO memory_fts (path, root, scope, type, body, fingerprint) VALUES (?, 1, 'x', 'x', ?, ?)",
                     (rel, CJK_TREE[rel], f"{st.st_size}-{st.st_mtime_ns}"))
    conn.close()
    with MemoryIndex(cjk_tree, db) as idx:
        assert idx.status()["schema_version"] == migrate.latest_version()
        integrity_check(idx.conn)
        # Before any reconcile: the old rows answer as before.
        assert [h.path for h in idx.search("staged", reconcile=False)] == ["global/en/commit.md"]
        assert idx.search("暂存", reconcile=False) == []  # one unicode61 token holds the whole run
        report = idx.reconcile()
        assert {"projects/git/commit.md", "global/en/commit.md"} <= set(report.updated)
        assert idx.search("暂存 提交")[0].path == "projects/git/commit.md"
        integrity_check(idx.conn)


def test_cli_query(cjk_tree, tmp_path):
    db = ["--root", str(cjk_tree), "--db", str(tmp_path / "db")]
    r = cli("query", "暂存", "提交", *db)
    assert r.exit_code == 0
    assert r.output.splitlines()[0].startswith(f"{cjk_tree}/projects/git/commit.md")
    assert "将<<暂存>>的文件<<提交>>到仓库" in r.output and S not in r.output
    r = cli("query", "コミット", *db, "--json")
    data = json.loads(r.output)
    assert data["fts_query"] == '("コミ" OR "ミッ" OR "ット")'
    assert data["results"][0]["path"] == "global/ja/commit.md"
    assert "<<コミット>>します" in data["results"][0]["snippet"]
    assert cli("query", "「」，。", *db).exit_code == 2  # full-width punctuation only: no words
    assert cli("query", "鬱", *db).exit_code == 1  # a character no file holds


# Hostile CJK input: any mix of scripts, separators and punctuation is a valid
# query, and every snippet is a piece of the file's original text.
SEARCHABLE = {f"n{i}.md": text for i, text in enumerate(CJK_TREE.values())} | {"sep.md": f"提交{S}仓库 a{S}b"}


@pytest.fixture(scope="module")
def searchable(tmp_path_factory):
    root = tmp_path_factory.mktemp("cjk-root")
    for name, text in SEARCHABLE.items():
        (root / name).write_text(text, encoding="utf-8")
    with MemoryIndex(root, tmp_path_factory.mktemp("cjk-db") / "db") as idx:
        idx.reconcile()
        yield idx


@settings(max_examples=150, deadline=None)
@given(mixed_text)
def test_any_cjk_query_runs_and_shows_original_text(searchable, text):
    try:
        hits = searchable.search(text, reconcile=False, floor=0)
    except NoSearchableWords:
        return
    for hit in hits:
        plain = hit.snippet.replace("<<", "").replace(">>", "")
        assert all(part in SEARCHABLE[hit.path] for part in plain.split("..."))
