import os

import pytest

from conftest import bump_mtime, paths, run_memsearch, write
from memsearch import MemoryIndex, MemsearchError, NoSearchableWords
from memsearch.query import plan
from memsearch.search import Hit, apply_floor


def test_hits_carry_path_scope_type_score_snippet(index):
    hits = index.search("pgbouncer")
    assert len(hits) == 1
    hit = hits[0]
    assert hit.path == "projects/shop/memory-db.md"
    assert (hit.scope, hit.scope_id, hit.type) == ("projects", "shop", "memory")
    assert hit.score > 0
    assert "<<pgbouncer>>" in hit.snippet


def test_more_and_rarer_words_rank_first(index):
    hits = index.search("postgresql 5433 pgbouncer")
    assert paths(hits)[0] == "projects/shop/memory-db.md"
    assert "projects/shop/MEMORY.md" in paths(hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_fts5_syntax_in_query_is_searched_as_words(index):
    for text in ['"pgbouncer', "pgbouncer*", "-pgbouncer", "body:pgbouncer", "^pgbouncer", "(pgbouncer",
                 # (not "nothing": the tree's README.md holds it, and the two files then tie
                 # within a token of length; code words' expansions tipped that tie, issue 33)
                 "pgbouncer NEAR x", "pgbouncer AND zilch", "NOT pgbouncer"]:
        assert paths(index.search(text))[0] == "projects/shop/memory-db.md", text


def test_empty_query_is_an_error_not_everything(index):
    for text in ["", "  ", "*", '""', "_", "___", "_ -"]:
        with pytest.raises(NoSearchableWords):
            index.search(text)


def test_underscores_alone_are_no_word(index):
    """unicode61 reads "_" as a separator: "_" was an empty phrase, named unmatched, and paired
    with the next word it scored that word a second time."""
    alone = index.search_result("pgbouncer")
    result = index.search_result("_ pgbouncer __")
    assert result.fts_query == '"pgbouncer"' and result.unmatched == ()
    assert [(h.path, h.score) for h in result.hits] == [(h.path, h.score) for h in alone.hits]
    # Joining parts, "_" stays in the word (and a special name is also asked for as its token, 0027).
    assert plan("__init__ py").terms == ('"__init__"', '"dunderinit"', '"py"')
    assert plan("部署_").terms == ('"部署"',)


def test_filters(index):
    assert {h.scope for h in index.search("rounding cents checkpoint", scope="sessions")} == {"sessions"}
    assert paths(index.search("rounding checkpoint", type="checkpoint")) == ["sessions/s1/checkpoint.md"] or all(
        h.type == "checkpoint" for h in index.search("rounding checkpoint", type="checkpoint")
    )
    assert paths(index.search("checkpoint", scope="projects", scope_id="shop")) == ["projects/shop/checkpoint-2.md"]
    assert index.search("webhook", type="notes")[0].path == "sessions/s1/tasks/T1/notes.md"
    assert index.search("webhook", scope_id="nope") == []


def test_a_word_only_files_outside_the_filters_hold_is_named_unmatched(index, root, tmp_path):
    """Under --scope the hits cannot hold a word only other scopes' files do: saying nothing let a
    hit on "cents" alone pass for one on "stripe cents"."""
    from conftest import run_memsearch
    from memsearch.tool import call_tool

    assert index.search_result("stripe cents").unmatched == ()  # sessions/s1/tasks/T1/notes.md holds it
    result = index.search_result("stripe cents", scope="projects")
    assert paths(result.hits) == ["projects/shop/checkpoint-2.md"] and result.unmatched == ("stripe",)
    assert index.search_result("stripe cents", type="checkpoint").unmatched == ("stripe",)
    assert index.search_result("stripe cents", scope_id="s1").unmatched == ()
    tool = call_tool(index, "memory_search", {"query": "stripe cents", "scope": "projects"})
    assert tool.text.startswith("No memory file contains 'stripe':") and tool.data["unmatched"] == ["stripe"]
    done = run_memsearch("query", "--root", root, "--db", tmp_path / "cli.db", "--scope", "projects",
                         "stripe", "cents")
    assert done.returncode == 0 and done.stdout.startswith("No memory file contains 'stripe':"), done.stderr


def test_scope_and_type_ignore_letter_case_as_the_tool_does(index, root, tmp_path):
    """Every indexed scope and type is lower case: "Projects" is no typo, in
    the library, the installed CLI and the tool alike."""
    from conftest import run_memsearch
    from memsearch.tool import call_tool

    want = paths(index.search("checkpoint", scope="projects", type="checkpoint"))
    assert want == ["projects/shop/checkpoint-2.md"]
    assert paths(index.search("checkpoint", scope="Projects", type="CHECKPOINT")) == want
    result = index.search_result("checkpoint", scope="PROJECTS")
    assert {h.scope for h in result.hits} == {"projects"}
    done = run_memsearch("query", "--root", root, "--db", tmp_path / "cli.db", "--scope", "Projects",
                         "--type", "Checkpoint", "checkpoint")
    assert done.returncode == 0 and done.stdout.count("projects/shop/checkpoint-2.md") == 1, done.stderr
    tool = call_tool(index, "memory_search", {"query": "checkpoint", "scope": "Projects", "type": "CheckPoint"})
    assert not tool.is_error and tool.data["filters"]["scope"] == "projects", tool.text


def test_limit(index):
    assert len(index.search("the rounding cents checkpoint tests", limit=2, floor=0)) == 2
    with pytest.raises(ValueError):
        index.search("x", limit=0)


def test_floor_drops_weak_hits_and_can_be_turned_off(root, tmp_path):
    # One file matches the rare word many times, many files match a common one once.
    write(root, "a.md", "zebra zebra zebra zebra quagga quagga")
    for i in range(30):
        write(root, f"filler{i}.md", f"filler note {i} about the common word horse")
    with MemoryIndex(root, tmp_path / "db") as idx:
        result = idx.search_result("zebra quagga horse", limit=50)
        assert result.hits[0].path == "a.md"
        top = result.hits[0].score
        assert all(h.score >= 0.15 * top for h in result.hits)
        assert result.floored > 0
        unfloored = idx.search("zebra quagga horse", limit=50, floor=0)
        assert len(unfloored) == 31


def test_apply_floor_always_keeps_top():
    hits = [Hit("a", None, None, "free", 10.0, ""), Hit("b", None, None, "free", 1.4, ""),
            Hit("c", None, None, "free", 1.5, "")]
    assert [h.path for h in apply_floor(hits, 0.15)] == ["a", "c"]
    assert [h.path for h in apply_floor(hits[:1], 0.99)] == ["a"]


def test_snippet_markers_ellipsis_and_length(root, tmp_path):
    words = " ".join(f"w{i}" for i in range(200))
    write(root, "long.md", f"{words} needle {words}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        snippet = idx.search("needle")[0].snippet
    assert "<<needle>>" in snippet
    assert snippet.startswith("...") and snippet.endswith("...")
    assert len(snippet.replace("...", " ").split()) <= 32


def test_added_edited_deleted_are_seen_by_the_very_next_query(root, tmp_path):
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert idx.search("walrus") == []
        f = write(root, "projects/p/memory-a.md", "the walrus sleeps")
        assert paths(idx.search("walrus")) == ["projects/p/memory-a.md"]
        # Same size, edited immediately: must still be seen.
        f.write_text("the narwal sleeps", encoding="utf-8")
        assert idx.search("walrus") == []
        assert paths(idx.search("narwal")) == ["projects/p/memory-a.md"]
        f.unlink()
        assert idx.search("narwal") == []


def test_same_size_edit_with_old_mtime_is_seen(root, tmp_path):
    f = write(root, "a.md", "alpha beta")
    bump_mtime(f, -100)
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert paths(idx.search("alpha")) == ["a.md"]
        f.write_text("gamma beta", encoding="utf-8")
        bump_mtime(f, -50)
        assert paths(idx.search("gamma")) == ["a.md"]
        assert idx.search("alpha") == []


def test_no_reconcile_queries_the_index_as_is(root, tmp_path):
    with MemoryIndex(root, tmp_path / "db") as idx:
        idx.reconcile()
        write(root, "new.md", "platypus")
        assert idx.search("platypus", reconcile=False) == []
        assert paths(idx.search("platypus")) == ["new.md"]
    with MemoryIndex(root, tmp_path / "db", reconcile=False) as idx:
        write(root, "newer.md", "platypus platypus")
        assert paths(idx.search("platypus")) == ["new.md"]


def test_config_file_overrides(root, tmp_path, monkeypatch):
    conf = tmp_path / "c.toml"
    conf.write_text("floor = 0.0\nreconcile = false\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(conf))
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert idx.settings.floor == 0.0 and idx.settings.reconcile is False


@pytest.mark.parametrize("line", ['reconcile = "yes"', "floor = 2", "max_file_bytes = true",
                                  "sync_timeout = -1", "floor = [", "max_file_bytes = 1.5", "sync_timeout = nan"])


def test_a_bad_config_file_is_a_memsearch_error(root, tmp_path, monkeypatch, line):
    """Every wrong setting (and unparsable TOML) is the project's own error,
    one line naming the setting or the file, never a bare ValueError."""
    conf = tmp_path / "c.toml"
    conf.write_text(line + "\n")
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(conf))
    with pytest.raises(MemsearchError) as caught:
        MemoryIndex(root, tmp_path / "db")
    assert "\n" not in str(caught.value) and (line.split()[0] in str(caught.value) or "c.toml" in str(caught.value))


@pytest.mark.parametrize("kind", ["deep", "fifo", "large"])
def test_a_hostile_config_file_is_one_line_not_a_hang(root, tmp_path, kind):
    """TOML nested 5,000 deep was a RecursionError traceback from every command; a FIFO hung every
    command (and /dev/zero grew to gigabytes). The config is read if it is a regular file of at most
    1 MiB. Through the installed command, within a generous timeout."""
    conf = tmp_path / "c.toml"
    if kind == "deep":
        conf.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    elif kind == "fifo":
        os.mkfifo(conf)
    else:
        conf.write_text("# " + "x" * (1 << 20) + "\n")
    done = run_memsearch("query", "aardvark", "--root", root, "--db", tmp_path / "db",
                         env={"MEMSEARCH_CONFIG": str(conf)}, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "c.toml" in done.stderr, done.stderr


@pytest.mark.parametrize("change", [dict(max_file_bytes="x"), dict(sync_timeout=float("nan")),
                                    dict(sync_timeout=-5), dict(manifest_limit=0), dict(reconcile="yes")])
def test_a_callers_settings_are_checked_as_the_config_files_are(root, tmp_path, change):
    """A Settings of wrong values was taken as it was: "x" for max_file_bytes was a TypeError mid-walk,
    NaN and -5 for sync_timeout were used silently."""
    from memsearch import HistoryIndex, InvalidArgument
    from memsearch.settings import Settings

    for make in (lambda: MemoryIndex(root, tmp_path / "db", settings=Settings(**change)),
                 lambda: HistoryIndex(root, tmp_path / "db", settings=Settings(**change))):
        with pytest.raises(InvalidArgument, match=f"settings: {next(iter(change))} must be"):
            make()


def test_a_relative_xdg_folder_is_ignored(tmp_path, monkeypatch):
    """The XDG spec ignores a relative XDG_CACHE_HOME: used as given, it put the index wherever a
    command ran, a memory root included."""
    from memsearch.db import cache_folder

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relcache")
    assert cache_folder() == str(tmp_path / ".cache" / "memsearch")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "abs"))
    assert cache_folder() == str(tmp_path / "abs" / "memsearch")


@pytest.mark.parametrize("home", ["rel", "~"])
def test_a_home_that_is_no_absolute_path_is_one_line(tmp_path, monkeypatch, home):
    """A relative HOME put the index (and read the config) under the folder a command ran in, a memory root
    included; HOME=~ was a traceback. Either is a one-line error; nothing is made in the working folder."""
    root = write(tmp_path / "mem", "a.md", "kestrel note").parent
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.chdir(root)
    done = run_memsearch("query", "kestrel", "--root", root, env={"HOME": home})
    assert done.returncode == 2 and done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "HOME" in done.stderr and sorted(os.listdir(root)) == ["a.md"]


def test_hit_to_dict(index):
    d = index.search("pgbouncer")[0].to_dict()
    assert set(d) == {"path", "scope", "scope_id", "type", "score", "snippet", "file"}


def test_diacritics_are_folded(root, tmp_path):
    write(root, "a.md", "Le café est fermé")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert paths(idx.search("cafe ferme")) == ["a.md"]


def test_a_word_with_a_combining_mark_nfc_cannot_compose_is_found_as_typed(root, tmp_path):
    # Russian stress marks: U+0301 after a Cyrillic letter has no NFC form;
    # unicode61 keeps it inside the token, so the query must keep it inside the word.
    write(root, "a.md", "\u043c\u043e\u043b\u043e\u0301\u043a\u043e and bread")  # молоко, stressed
    with MemoryIndex(root, tmp_path / "db") as idx:
        result = idx.search_result("\u043c\u043e\u043b\u043e\u0301\u043a\u043e")
    assert paths(result.hits) == ["a.md"] and result.unmatched == ()


def test_excerpt_is_capped_around_the_match(root, tmp_path):
    # A run of punctuation is no token: 32 tokens of it can be 40 KB of text.
    write(root, "a.md", "start " + "[" * 40000 + " needle " + "]" * 40000 + " end")
    with MemoryIndex(root, tmp_path / "db") as idx:
        snippet = idx.search("needle")[0].snippet
    assert "<<needle>>" in snippet
    assert len(snippet) <= 700


def test_cap_keeps_a_match_whole():
    from memsearch.search import cap

    text = "x" * 50 + "<<" + "y" * 100 + ">>" + "z" * 1000
    out = cap(text, 100)
    assert out.count("<<") == out.count(">>") == 1 and out.endswith("...")
    assert cap("short <<one>>", 100) == "short <<one>>"


def test_a_files_own_unclosed_marks_do_not_collapse_its_excerpt(root, tmp_path):
    write(root, "heredoc.md", "The okapi config: << " + "-" * 700 + "\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        snippet = next(h.snippet for h in idx.search("okapi") if h.path == "heredoc.md")
    assert snippet.startswith("The <<okapi>> config: << ---") and len(snippet) >= 500, snippet


def test_a_long_files_excerpt_comes_from_where_most_query_words_meet(root, tmp_path):
    """A file past snippet()'s safe length is excerpted from a slice: the
    one holding most of the query's words, wherever it lies in the file."""
    filler = " ".join(f"w{i}" for i in range(4000))  # ~24 KB: more slices than one batch
    write(root, "long.md", f"the walrus {filler} a walrus never forgets a pelican {filler}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        snippet = idx.search("walrus pelican")[0].snippet
    assert "<<walrus>> never forgets a <<pelican>>" in snippet


@pytest.mark.parametrize("query, words, expected", [
    ("提交到 仓库里", "提交到 仓库里", "<<提交到>> <<仓库里>>"),  # CJK words: groups of pairs
    ("walrus* pelican", "walrus never forgets a pelican", "<<walrus>> never forgets a <<pelican>>"),
])


def test_a_long_files_excerpt_where_most_words_meet_for_every_kind_of_word(root, tmp_path, query, words,
                                                                           expected):
    """The guess of the likeliest slice reads each string of the query, CJK
    pairs and prefixes included (it used to misread them and guess nothing,
    leaving the first slice with any one word)."""
    filler = " ".join(f"w{i}" for i in range(4000))
    lone = words.split()[0]
    write(root, "long.md", f"{lone} {filler} {words} {filler}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        snippet = idx.search(query)[0].snippet
    assert expected in snippet, snippet


def test_a_long_files_excerpt_when_no_slice_holds_a_words_prefix(root, tmp_path):
    """Diacritics are folded by the index, not by the guess of the likeliest
    slice: the guess finds nothing, the batches still find the match."""
    filler = " ".join(f"w{i}" for i in range(2000))
    write(root, "long.md", f"{filler} a café by the harbour {filler}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        snippet = idx.search("cafe")[0].snippet
    assert "<<café>>" in snippet


def test_paths_lists_one_roots_indexed_files(tmp_path):
    """MemoryIndex.paths(root): what is indexed now under that root alone,
    spelled as hits spell them (with the root's label among several)."""
    from memsearch import Root

    for name in ("a", "b"):
        write(tmp_path / name, f"{name}1.md", "one")
        write(tmp_path / name, f"sub/{name}2.md", "two")
    roots = [Root("plain", str(tmp_path / "a"), "a"), Root("plain", str(tmp_path / "b"), "b")]
    with MemoryIndex(roots=roots, db_path=tmp_path / "db") as idx:
        idx.reconcile()
        first, second = idx.roots
        assert sorted(idx.paths(first)) == ["a:a1.md", "a:sub/a2.md"]
        (tmp_path / "b" / "b1.md").unlink()
        idx.reconcile()
        assert idx.paths(second) == ["b:sub/b2.md"]
