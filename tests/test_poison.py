"""Poison files: one hostile memory file never stops search for the rest.

Frontmatter nested hundreds of levels deep, alias and merge-key bombs and
huge scalars are cut short by metadata's bounds, and are indexed as plain
text with the reason reported; anything else that goes wrong with one file
costs that file alone (reconcile.prepare_one's isolation)."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import bench, memsearch_exe, run_memsearch, write
from memsearch import MemoryIndex, cjk, metadata
from memsearch.metadata import MAX_FIELD, parse


# The generators bench/hostile_poison.py measures; their body is "poisonbody".
_poison = bench("hostile_poison")
nested, alias_bomb, merge_bomb = _poison.nested, _poison.alias_bomb, _poison.merge_bomb


def wide_merge_bomb() -> str:
    """Few aliases, but each copies a mapping of 3,000 pairs: 4 x 4 x 4 x 3,000."""
    lines = ["m0: &m0 {" + ", ".join(f"k{j}: v" for j in range(3000)) + "}"]
    lines += [f"m{i}: &m{i} {{<<: [{','.join([f'*m{i - 1}'] * 4)}]}}" for i in range(1, 4)]
    return "---\n" + "\n".join(lines) + "\nname: merge\n---\npoisonbody\n"


POISON = {
    "nested-600": nested(600),
    "nested-5000": nested(5000),
    "nested-30000": nested(30000),  # within the block limit: the event scan sees the depth
    "nested-900k": nested(900_000),  # a 1.8 MB block, under the 2 MB file cap
    "nested-mappings": "---\n" + "".join(" " * i + f"k{i}:\n" for i in range(400)) + "---\npoisonbody\n",
    "alias-8x9": alias_bomb(8, 9),
    "alias-9x9": alias_bomb(9, 9),
    "alias-30x2": alias_bomb(30, 2),
    "merge-8x9": merge_bomb(8, 9),
    "merge-wide": wide_merge_bomb(),
    "huge-scalar": "---\nname: n\ndescription: \"" + "y" * 500_000 + "\"\n---\npoisonbody\n",
    "huge-hex-int": "---\nname: n\ndescription: 0x" + "f" * 20_000 + "\n---\npoisonbody\n",
    "many-nodes": "---\nname: n\ndescription: [" + ",".join(["z"] * 100_000) + "]\n---\npoisonbody\n",
}


@pytest.mark.parametrize("case", sorted(POISON))
def test_a_poison_file_is_indexed_as_plain_text_beside_good_files(case, root, tmp_path):
    write(root, "projects/p/good.md", "---\nname: good\ndescription: the port\n---\nPostgreSQL listens on 5433\n")
    write(root, f"projects/p/{case}.md", POISON[case])
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        assert sorted(report.added) == sorted(["projects/p/good.md", f"projects/p/{case}.md"])
        reasons = {m.path: m.reason for m in report.malformed}
        assert list(reasons) == [f"projects/p/{case}.md"]
        # Past a bound, or past libyaml's own depth limit: unusable either way.
        assert reasons[f"projects/p/{case}.md"].startswith(("frontmatter is too", "frontmatter is not valid YAML"))
        assert [h.path for h in idx.search("postgresql")] == ["projects/p/good.md"]
        # The poison file is still searchable, by its whole text.
        assert [h.path for h in idx.search("poisonbody")] == [f"projects/p/{case}.md"]
        row = idx.conn.execute("SELECT name, description FROM memory_fts WHERE path = ?",
                               (f"projects/p/{case}.md",)).fetchone()
        assert row == (None, None)
        assert idx.status()["unusable_frontmatter"] == 1


def test_small_alias_use_still_reads_as_before():
    meta = parse(alias_bomb(3, 3))
    assert meta.error is None and meta.description == " ".join(["lol"] * 27)
    meta = parse("---\nbase: &b {type: user}\nname: n\nmetadata:\n  <<: *b\n---\nbody")
    assert (meta.error, meta.type) == (None, "user")


@pytest.mark.parametrize("text, reason", [
    (nested(33), "nested over 32 levels"),
    (alias_bomb(1, 17), "over 16 aliases"),
    (merge_bomb(2, 8), None),  # 16 aliases: allowed, and small
    ("---\ndescription: \"" + "y" * (MAX_FIELD + 1) + "\"\n---\nb", f"over {MAX_FIELD} characters"),
    ("---\n" + "k: v\n" * 20_000 + "---\nb", "too large"),
])
def test_bounds_at_their_edges(text, reason):
    meta = parse(text)
    if reason is None:
        assert meta.error is None
    else:
        assert reason in meta.error and meta.body == text
    assert parse(nested(31)).error is None


def omap_bomb(levels: int, chars: int) -> str:
    """An alias chain inside an !!omap name: its pairs are tuples, and str() of one spelled the whole chain, 2^levels
    copies of a string of ``chars`` tag characters (each \\U000e00NN, ten characters, in a repr)."""
    chain = [f'&a0 ["{chr(0xE0041) * chars}"]'] + [f"&a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, levels + 1)]
    return f"---\nname: !!omap [{{k: [{', '.join(chain)}]}}]\n---\n{bench('hostile_poison').BODY}\n"


def test_an_alias_chain_in_an_omap_costs_no_more_than_a_list(root, tmp_path):
    """A 100 KB file held ~250 MB (600 MB at the block's 64K characters, 1.7 s): its field was spelled whole
    before its length was checked. Now its items are visited as a list's are."""
    import tracemalloc

    write(root, "projects/p/omap.md", omap_bomb(8, 20_000))
    with MemoryIndex(root, tmp_path / "db") as idx:
        tracemalloc.start()
        try:
            report = idx.reconcile()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert [(m.path, m.reason) for m in report.malformed] == [
            ("projects/p/omap.md", f"frontmatter is too complex (a field is over {MAX_FIELD} characters)")]
        assert [h.path for h in idx.search("poisonbody")] == ["projects/p/omap.md"]
    assert peak < 16 << 20, peak
    assert parse("---\nname: !!omap [{a: 1}, {b: [x, y]}]\n---\nb").name == "a 1 b x y"


@pytest.mark.parametrize("number", ["1" + ":5" * 32_000, "-1" + ":59" * 21_000, "[1" + ":5" * 32_000 + "]"])
def test_a_long_base_60_number_is_refused_before_it_is_built(number, root, tmp_path, monkeypatch):
    """PyYAML builds 1:5:5:... (base 60) in time the square of its length: a 64 KB one cost a file five times the
    costliest block the bounds let through (a digit limit refused it only once built). An integer over MAX_NUMBER
    characters is never built."""
    from yaml.constructor import SafeConstructor

    built = []
    build = SafeConstructor.construct_yaml_int
    monkeypatch.setattr(SafeConstructor, "construct_yaml_int", lambda self, node: built.append(node.value) or build(
        self, node))
    write(root, "projects/p/n.md", f"---\nname: {number}\n---\npoisonbody\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [(m.path, m.reason) for m in idx.reconcile().malformed] == [
            ("projects/p/n.md", f"frontmatter is too complex (a number of over {metadata.MAX_NUMBER} characters)")]
        assert [h.path for h in idx.search("poisonbody")] == ["projects/p/n.md"]
    assert built == []
    assert parse("---\nname: 1:30:00\ndescription: [-0x1f, " + "9" * 999 + "]\n---\nb")[:2] == ("5400",
                                                                                                  "-31 " + "9" * 999)


def test_cli_query_survives_a_poisoned_root(root, tmp_path):
    """The installed console script, in a process of its own: exit 0 and the
    good hit (before the bounds, a RecursionError traceback and exit 1)."""
    write(root, "projects/p/good.md", "PostgreSQL listens on 5433\n")
    for case in ("nested-600", "alias-9x9", "merge-8x9"):
        write(root, f"projects/p/{case}.md", POISON[case])
    run = run_memsearch("query", "postgresql", "--root", root, "--db", tmp_path / "db")
    assert (run.returncode, run.stderr) == (0, "")
    assert "good.md" in run.stdout
    run = run_memsearch("index", "--root", root, "--db", tmp_path / "db")
    assert run.returncode == 0
    assert "3 with unusable frontmatter" in run.stdout and "alias-9x9.md: frontmatter is too complex" in run.stdout


# -- per-file isolation: any failure, not only the ones foreseen ---------------------------

@pytest.mark.parametrize("error", [RecursionError, MemoryError, KeyError, UnicodeError])
def test_a_failing_parse_costs_one_file_its_frontmatter(error, root, tmp_path, monkeypatch):
    write(root, "projects/p/good.md", "---\nname: good\n---\nPostgreSQL listens on 5433\n")
    write(root, "projects/p/bad.md", "---\nname: bad\n---\nbadbody\n")
    real = metadata.parse

    def parse_or_fail(text):
        if "badbody" in text:
            raise error("boom")
        return real(text)

    monkeypatch.setattr(metadata, "parse", parse_or_fail)
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        assert sorted(report.added) == ["projects/p/bad.md", "projects/p/good.md"]
        assert [(m.path, m.reason) for m in report.malformed] == [
            ("projects/p/bad.md", f"could not be indexed ({error.__name__}): indexed as plain text")]
        assert [h.path for h in idx.search("badbody")] == ["projects/p/bad.md"]
        assert [h.path for h in idx.search("postgresql")] == ["projects/p/good.md"]


def test_a_file_that_cannot_be_indexed_at_all_is_skipped_with_its_reason(root, tmp_path, monkeypatch):
    write(root, "projects/p/good.md", "PostgreSQL listens on 5433\n")
    write(root, "projects/p/bad.md", "badbody\n")
    real = cjk.stored

    def stored(text):
        if text and "badbody" in text:
            raise MemoryError
        return real(text)

    monkeypatch.setattr(cjk, "stored", stored)
    with MemoryIndex(root, tmp_path / "db") as idx:
        report = idx.reconcile()
        assert report.added == ("projects/p/good.md",)
        assert [(s.path, s.reason) for s in report.skipped] == [
            ("projects/p/bad.md", "could not be indexed (MemoryError)")]
        assert [h.path for h in idx.search("postgresql")] == ["projects/p/good.md"]
        # The watcher's path (reconcile_paths) is isolated the same way.
        write(root, "projects/p/bad.md", "badbody again\n")
        os.utime(root / "projects/p/bad.md", (1, 1))
        again = idx.reconcile_paths(["projects/p/bad.md"])
        assert [s.path for s in again.skipped] == ["projects/p/bad.md"]


def test_a_path_the_layout_cannot_describe_is_skipped(root, tmp_path, monkeypatch):
    write(root, "projects/p/good.md", "PostgreSQL listens on 5433\n")
    write(root, "projects/p/odd.md", "oddbody\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        real = type(idx.layout).describe

        def describe(self, relpath, meta):
            if relpath.endswith("odd.md"):
                raise ValueError("cannot describe")
            return real(self, relpath, meta)

        monkeypatch.setattr(type(idx.layout), "describe", describe)
        report = idx.reconcile()
        assert report.added == ("projects/p/good.md",)
        assert [(s.path, s.reason) for s in report.skipped] == [
            ("projects/p/odd.md", "could not be indexed (ValueError)")]


# -- property tests over generated YAML ------------------------------------------------------

SCALARS = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40).map(lambda s: yaml.safe_dump(s).strip()
                                                                           .removesuffix("...").strip()),
    st.sampled_from(["~", "null", "yes", "0x1f", "1e3", "2024-05-01", "'q''s'", "!!str 12", "!!binary aGk=",
                     "!custom x", "&anc v", "*anc", "*undefined", "|\n  block", ">-\n  folded"]),
    st.integers(min_value=0, max_value=3000).map(lambda n: '"' + "w" * n + '"'),
)


def flow(children):
    return st.one_of(
        st.lists(children, max_size=6).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.sampled_from(["a", "b", "<<", "type", "name"]), children), max_size=5)
        .map(lambda kvs: "{" + ", ".join(f"{k}: {v}" for k, v in kvs) + "}"),
        st.tuples(st.sampled_from(["&x ", "&y ", ""]), children).map("".join),
    )


VALUES = st.recursive(SCALARS, flow, max_leaves=60)
DEEP = st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "v" + "]" * n)


@pytest.mark.slow
@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(anchors=st.lists(VALUES, max_size=5), name=st.one_of(VALUES, DEEP), description=st.one_of(VALUES, DEEP),
       repeat=st.integers(min_value=0, max_value=12))
def test_any_generated_yaml_parses_or_is_reported(anchors, name, description, repeat):
    head = [f"v{i}: &v{i} {value}" for i, value in enumerate(anchors)]
    if anchors:  # a bomb's shape: each anchor repeats the one before
        head += [f"r{i}: &r{i} [{', '.join([f'*v{i}'] * repeat)}]" for i in range(len(anchors))]
    text = "---\n" + "\n".join(head + [f"name: {name}", f"description: {description}"]) + "\n---\nbody\n"
    meta = parse(text)
    assert isinstance(meta, metadata.Metadata)
    for field in (meta.name, meta.description):
        assert field is None or (isinstance(field, str) and len(field) <= MAX_FIELD)
    if meta.error is None:
        assert meta.body == "body\n"
    else:
        assert meta.body == text and meta.name is None and "\n" not in meta.error


# -- excerpts: snippet() is quadratic in the instances of a word in one file -----------------

def test_a_file_of_one_word_repeated_does_not_stall_queries(root, tmp_path):
    """400k instances of one word: before slicing, snippet() ran for more
    than seven minutes on this file (killed); the guard is a generous timeout."""
    write(root, "projects/p/flood.md", "word " * 399_999)
    write(root, "projects/p/good.md", "a note with the word in it\n")
    run = run_memsearch("query", "word", "--root", root, "--db", tmp_path / "db", "--json")
    assert run.returncode == 0, run.stderr
    hits = {h["path"]: h["snippet"] for h in json.loads(run.stdout)["results"]}
    assert set(hits) == {"projects/p/flood.md", "projects/p/good.md"}
    assert hits["projects/p/flood.md"].startswith("<<word>> <<word>>")
    assert hits["projects/p/good.md"].strip() == "a note with the <<word>> in it"


@pytest.mark.parametrize("text", [
    "<< " + "a" * 1_000_000 + " zebracap >>",  # the file's own marks around a megabyte
    "zebracap << " + "b" * 1_500_000 + " zebracap",  # its own "<<" between two matches
    "zebracap " + "\uff41" * 600_000,  # one full-width token of 1.8 MB and its folded copy
    "zebracap " + "\u0391\u03b8\u03b7\u03bd\u03ac" * 150_000,  # Greek: a token of 1.5 MB and its folded copy
])
def test_no_excerpt_is_longer_than_its_cap(text, root, tmp_path):
    """An excerpt is at most about 600 characters whatever the file holds: a "<<" of the file's own
    once stretched one to the next ">>" (1 MB shown a hit), and a file of one giant token was
    excerpted whole (300 MB of memory a query)."""
    write(root, "big.md", text + "\n")
    assert run_memsearch("index", "--root", root, "--db", tmp_path / "db").returncode == 0
    # The query in a child of a child, whose peak memory is the query's alone.
    measured = subprocess.run([sys.executable, "-c", PEAK_KIB, memsearch_exe(), "query", "--root", str(root),
                               "--db", str(tmp_path / "db"), "--json", "zebracap"],
                              capture_output=True, text=True, timeout=120)
    out, peak_kib = measured.stdout.rsplit("\n", 1)
    [hit] = json.loads(out)["results"]
    assert 0 < len(hit["snippet"]) <= 600 + 400
    assert int(peak_kib) < 150_000  # was 455 MB for the Greek token


PEAK_KIB = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
            " print(r.stdout.rstrip()); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, end='')")


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_long_file_is_excerpted_around_its_match(where, root, tmp_path):
    filler = " ".join(f"filler{i}" for i in range(3000))
    text = {"start": "needle here " + filler, "middle": filler + " needle here " + filler,
            "end": filler + " needle here"}[where]
    write(root, "long.md", "---\nname: long one\ndescription: about nothing\n---\n" + text)
    with MemoryIndex(root, tmp_path / "db") as idx:
        [hit] = idx.search("needle")
        assert "<<needle>> here" in hit.snippet
        [hit] = idx.search("nothing")  # only the description matches
        assert hit.snippet == "about <<nothing>>"


def test_a_long_cjk_file_is_excerpted_in_its_own_characters(root, tmp_path):
    write(root, "ja.md", "天気の話。" * 2000 + "東京タワーに行った。" + "天気の話。" * 2000)
    with MemoryIndex(root, tmp_path / "db") as idx:
        [hit] = idx.search("東京タワー")
        assert "<<東京タワー>>" in hit.snippet.replace(">><<", "") and "\u2063" not in hit.snippet


def test_a_long_querys_strings_do_not_each_cost_a_scan_of_a_long_hit(root, tmp_path, monkeypatch):
    """The guess of a long file's likeliest slice scanned every slice for each string of the query: a tool call's
    1,000 characters (999 CJK pairs, or hundreds of words) cost each hit of 2 MB seconds, 50 hits minutes."""
    from memsearch import search

    sought = set()

    class Counted(str):
        def count(self, sub, *args):
            sought.add(sub)
            return super().count(sub, *args)

    class Piece(str):
        def lower(self):
            return Counted(super().lower())

    slices = search._slices
    monkeypatch.setattr(search, "_slices", lambda text: map(Piece, slices(text)))
    filler = " ".join(f"w{i}" for i in range(4000))
    write(root, "long.md", f"{filler} the walrus here {filler}")
    with MemoryIndex(root, tmp_path / "db") as idx:
        [hit] = idx.search("walrus " + " ".join(f"q{i}x" for i in range(150)))
    assert "<<walrus>> here" in hit.snippet
    assert 0 < len(sought) <= search.MAX_NEEDLES


def test_the_slices_use_the_index_tokenizer(tmp_path):
    from memsearch import search

    with MemoryIndex(tmp_path, tmp_path / "db") as idx:
        idx.reconcile()
        sql = idx.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_fts_idx'").fetchone()[0]
    assert f"tokenize = '{search.TOKENIZE}'" in sql


# -- the indexer's own read: a folder swapped for a link between walk and read ---------------

@pytest.mark.parametrize("kind", ["mimo", "plain", "claude", "zcode"])
def test_no_outside_byte_reaches_the_index_while_a_folder_is_swapped_for_a_link(kind, tmp_path):
    """A thread swaps the note's folder for a link to an outside folder with
    the same names, while reconcile walks and reads: the outside text must
    never be indexed (searched and excerpted) nor kept."""
    import threading
    import time

    from memsearch import Root

    base = tmp_path
    folder = {"claude": base / kind / "projects" / "p" / "memory" / "sub",
              "zcode": base / kind / "cli/memories/projects/p-0123456789abcdef/memory" / "sub"}.get(
        kind, base / kind / "global" / "p")
    folder.mkdir(parents=True)
    outside = base / "outside"
    outside.mkdir()
    (outside / "ok.md").write_text("OUTSIDE secret\n")
    stop = threading.Event()
    swapped = folder.parent / "sub.real"

    def swap():
        i = 0
        while not stop.is_set():
            i += 1  # a new inside version each round, so every reconcile reads the file again
            (folder / "ok.md").write_text(f"inside note {i}\n")
            for step in (lambda: os.rename(folder, swapped), lambda: os.symlink(outside, folder),
                         lambda: os.unlink(folder), lambda: os.rename(swapped, folder)):
                step()
                time.sleep(0)

    (folder / "ok.md").write_text("inside note\n")
    seen = reads = 0
    with MemoryIndex(roots=[Root(kind, str(base / kind))], db_path=base / "index.db") as idx:
        swapper = threading.Thread(target=swap)
        swapper.start()
        try:
            # At least 300 rounds; more (up to 3000) while a loaded machine has
            # yet to schedule the swapper between two walks, so `reads` counts
            # rounds, never time. A note seen again after a swap is read too.
            for rounds in range(3000):
                if rounds >= 300 and reads:
                    break
                report = idx.reconcile()
                reads += len(report.updated) + len(report.added)
                seen += any("OUTSIDE" in h.snippet for h in idx.search("outside secret", reconcile=False))
                seen += idx.conn.execute("SELECT count(*) FROM memory_fts WHERE idx_body LIKE '%OUTSIDE%'").fetchone()[0]
        finally:
            stop.set()
            swapper.join()
    assert reads > 0  # the race ran: the inside note was read again and again
    assert seen == 0


def test_doctor_names_the_files_indexed_as_plain_text_or_left_out(root, tmp_path):
    write(root, "projects/p/good.md", "PostgreSQL listens on 5433\n")
    write(root, "projects/p/deep.md", POISON["nested-600"])
    write(root, "projects/p/huge.md", "x" * 2_000_001)
    args = ["--root", root, "--db", tmp_path / "db"]
    assert run_memsearch("index", *args).returncode == 0
    run = run_memsearch("doctor", *args)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 file(s) indexed as plain text (projects/p/deep.md: frontmatter is too complex" in run.stdout
    assert "1 file(s) left out of the index (projects/p/huge.md: too large" in run.stdout
    assert run.stdout.rstrip().endswith("healthy")


def test_a_file_that_grew_past_the_cap_since_the_walk_is_not_read(tmp_path):
    """The walk judged the size it saw; the read checks the size now (a file
    grown to gigabytes after the walk would otherwise be read whole)."""
    from memsearch.prepare import prepare_one

    path = write(tmp_path, "grew.md", "x" * 5000)
    assert prepare_one("grew.md", str(path), 4999) == ("grew.md", "too large (5000 bytes, cap 4999)")
    assert prepare_one("grew.md", str(path), 5000).body == "x" * 5000


def test_the_manifest_reads_a_bounded_head_and_never_blocks_on_a_fifo(tmp_path):
    from memsearch import manifests

    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert manifests.read_head(str(fifo)) == ""  # returns at once: not a regular file
    long_line = write(tmp_path, "long.md", "---\ndescription: " + "y" * 5_000_000 + "\n---\n")
    assert len(manifests.read_head(str(long_line))) == manifests.HEAD_BYTES
