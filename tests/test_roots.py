"""Several roots of the four kinds in one index: scopes, types, paths,
filters, roots turned off, and where roots come from."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import NO_CORPORA, SHARED, cli, run_memsearch, write
from memsearch import InvalidArgument, MemoryIndex, Root, RootNotFound, metadata
from memsearch import roots as roots_mod
from memsearch.db import roots_db_file

CC_PROJECT = "-home-me-code-shop"
ZC_PROJECT = "shop-0123456789abcdef"


def fm(body, **fields):
    head = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{head}---\n\n{body}\n"


@pytest.fixture
def layouts(tmp_path):
    """One small tree in each layout, every file mentioning 'walrus'."""
    cc = tmp_path / "claude"  # a Claude Code config dir
    mem = f"projects/{CC_PROJECT}/memory"
    write(cc, f"{mem}/MEMORY.md", "- [DB](db.md) walrus index\n")
    write(cc, f"{mem}/db.md", fm("Postgres walrus on 5433.", name="db", description="database port", type="project"))
    write(cc, f"{mem}/style.md", fm("Tabs, walrus style.", name="style", description="style rules", type="feedback"))
    write(cc, f"{mem}/nested/deep.md", fm("walrus deep", metadata="\n  type: reference"))
    write(cc, f"{mem}/untyped.md", "walrus without frontmatter\n")
    write(cc, f"projects/{CC_PROJECT}/transcript.md", "walrus outside the memory folder\n")
    write(cc, "projects/-other/memory/user.md", fm("walrus user", type="user"))

    zc = tmp_path / "zcode"  # ZCode storage
    zmem = f"cli/memories/projects/{ZC_PROJECT}/memory"
    write(zc, f"{zmem}/z.md", fm("walrus zcode", name="z", description="zebra crossing",
                                 metadata="\n  node_type: memory\n  type: feedback"))
    write(zc, f"{zmem}/top.md", fm("walrus zcode top-level type", type="project"))

    plain = tmp_path / "notes"
    write(plain, "ideas.md", fm("walrus plain", type="reference"))
    write(plain, "projects/x/y.md", "walrus plain nested\n")

    mimo = tmp_path / "mimo"
    write(mimo, "projects/shop/memory-db.md", fm("walrus mimo", type="feedback"))
    write(mimo, "sessions/s1/tasks/T1/progress.md", "walrus progress\n")
    return {"claude": cc, "zcode": zc, "plain": plain, "mimo": mimo}


def all_roots(layouts):
    return [Root(kind, str(path)) for kind, path in layouts.items()]


def hits_by_path(idx, text="walrus", **filters):
    return {h.path: (h.scope, h.scope_id, h.type) for h in idx.search(text, limit=50, floor=0, **filters)}


def test_scope_scope_id_and_type_in_all_four_layouts(layouts, tmp_path):
    with MemoryIndex(roots=all_roots(layouts), db_path=tmp_path / "db") as idx:
        found = hits_by_path(idx)
    assert found == {
        f"cc:{CC_PROJECT}/memory/MEMORY.md": ("cc", CC_PROJECT, "memory"),
        f"cc:{CC_PROJECT}/memory/db.md": ("cc", CC_PROJECT, "project"),
        f"cc:{CC_PROJECT}/memory/style.md": ("cc", CC_PROJECT, "feedback"),
        f"cc:{CC_PROJECT}/memory/nested/deep.md": ("cc", CC_PROJECT, "reference"),
        f"cc:{CC_PROJECT}/memory/untyped.md": ("cc", CC_PROJECT, "free"),
        "cc:-other/memory/user.md": ("cc", "-other", "user"),
        f"zcode:{ZC_PROJECT}/memory/z.md": ("zcode", ZC_PROJECT, "feedback"),
        f"zcode:{ZC_PROJECT}/memory/top.md": ("zcode", ZC_PROJECT, "project"),
        "notes:ideas.md": (None, None, "reference"),
        "notes:projects/x/y.md": (None, None, "free"),
        # mimo: the path decides (layout.py), not the frontmatter
        "mimo:projects/shop/memory-db.md": ("projects", "shop", "memory"),
        "mimo:sessions/s1/tasks/T1/progress.md": ("sessions", "s1", "progress"),
    }


def test_filters_by_scope_scope_id_and_type(layouts, tmp_path):
    with MemoryIndex(roots=all_roots(layouts), db_path=tmp_path / "db") as idx:
        assert {s for s, _, _ in hits_by_path(idx, scope="cc").values()} == {"cc"}
        assert set(hits_by_path(idx, scope="zcode")) == {f"zcode:{ZC_PROJECT}/memory/z.md",
                                                         f"zcode:{ZC_PROJECT}/memory/top.md"}
        assert set(hits_by_path(idx, scope="cc", scope_id="-other")) == {"cc:-other/memory/user.md"}
        assert set(hits_by_path(idx, type="feedback")) == {f"cc:{CC_PROJECT}/memory/style.md",
                                                          f"zcode:{ZC_PROJECT}/memory/z.md"}
        assert set(hits_by_path(idx, scope="projects")) == {"mimo:projects/shop/memory-db.md"}


def test_one_root_keeps_paths_relative_to_it(layouts, tmp_path):
    with MemoryIndex(Root("claude", str(layouts["claude"])), tmp_path / "db") as idx:
        assert idx.root == str(layouts["claude"] / "projects")
        found = hits_by_path(idx, "5433")
    assert found == {f"{CC_PROJECT}/memory/db.md": ("cc", CC_PROJECT, "project")}


def test_claude_and_zcode_roots_may_be_named_at_any_level(layouts):
    cc, zc = layouts["claude"], layouts["zcode"]
    expect_cc, expect_zc = str(cc / "projects"), str(zc / "cli" / "memories" / "projects")
    for given in (cc, cc / "projects"):
        assert roots_mod.resolve([Root("claude", str(given))])[0].path == expect_cc
    for given in (zc, zc / "cli", zc / "cli" / "memories", zc / "cli" / "memories" / "projects"):
        assert roots_mod.resolve([Root("zcode", str(given))])[0].path == expect_zc


def test_a_root_turned_off_disappears(layouts, tmp_path):
    db = tmp_path / "db"
    with MemoryIndex(roots=all_roots(layouts), db_path=db) as idx:
        assert any(p.startswith("zcode:") for p in hits_by_path(idx))
    without_zcode = [r for r in all_roots(layouts) if r.kind != "zcode"]
    with MemoryIndex(roots=without_zcode, db_path=db) as idx:
        report = idx.reconcile()
        assert sorted(report.removed) == [f"zcode:{ZC_PROJECT}/memory/top.md", f"zcode:{ZC_PROJECT}/memory/z.md"]
        assert not any(p.startswith("zcode:") for p in hits_by_path(idx))
        assert idx.conn.execute("SELECT count(*) FROM memory_fts WHERE path LIKE 'zcode:%'").fetchone()[0] == 0
    # Even a query that skips the reconcile shows no row of a root that is off.
    with MemoryIndex(roots=all_roots(layouts), db_path=db) as idx:
        idx.reconcile()
    with MemoryIndex(roots=without_zcode, db_path=db, reconcile=False) as idx:
        assert not any(p.startswith("zcode:") for p in hits_by_path(idx))


def test_a_query_that_skips_the_reconcile_leaves_out_rows_spelled_for_one_root(layouts, tmp_path):
    """An index last reconciled for one root spells its paths without a label: searched for several roots without
    a reconcile, a hit's file raised KeyError out of the search (a traceback from `memsearch query`)."""
    db = tmp_path / "db"
    with MemoryIndex(Root("plain", str(layouts["plain"])), db) as idx:
        assert hits_by_path(idx)
    with MemoryIndex(roots=all_roots(layouts), db_path=db, reconcile=False) as idx:
        assert idx.search("walrus") == []
    run = run_memsearch("query", "walrus", "--root", f"plain={layouts['plain']}", "--root", str(layouts["mimo"]),
                        "--db", db, "--no-reconcile")
    assert run.returncode == 1 and run.stderr == "no matches\n", run.stderr


def test_a_root_whose_kind_changes_is_reread(layouts, tmp_path):
    db = tmp_path / "db"
    with MemoryIndex(Root("mimo", str(layouts["mimo"])), db) as idx:
        assert hits_by_path(idx, "mimo")["projects/shop/memory-db.md"][0] == "projects"
    with MemoryIndex(Root("plain", str(layouts["mimo"])), db) as idx:
        assert hits_by_path(idx, "mimo")["projects/shop/memory-db.md"] == (None, None, "feedback")


def test_projects_and_files_come_and_go(layouts, tmp_path):
    cc = layouts["claude"] / "projects"
    with MemoryIndex(roots=all_roots(layouts), db_path=tmp_path / "db") as idx:
        idx.reconcile()
        shutil.rmtree(cc / "-other")
        write(cc, "-new/memory/n.md", "walrus new project")
        write(cc, "-new/notes.md", "walrus not memory")
        report = idx.reconcile()
        assert report.removed == ("cc:-other/memory/user.md",)
        assert report.added == ("cc:-new/memory/n.md",)
        assert idx.reconcile().changed is False


def test_locate_gives_the_file(layouts, tmp_path):
    with MemoryIndex(roots=all_roots(layouts), db_path=tmp_path / "db") as idx:
        for hit in idx.search("walrus", limit=50, floor=0):
            assert os.path.isfile(idx.locate(hit.path))
        assert idx.locate("notes:ideas.md") == str(layouts["plain"] / "ideas.md")


def test_malformed_frontmatter_is_found_and_reported(tmp_path):
    root = tmp_path / "memory"
    write(root, "unclosed.md", "---\nname: a\nwalrus unclosed\n")
    write(root, "list.md", "---\n- walrus\n- list\n---\nbody\n")
    write(root, "tabs.md", "---\nname: a\n\tdescription: walrus tabs\n---\nbody\n")
    write(root, "bom.md", "\ufeff---\nname: walrus-bom\ndescription: with a byte order mark\n---\nbody\n")
    write(root, "bad-yaml.md", "---\nname: [walrus\n---\nbody\n")
    with MemoryIndex(Root("plain", str(root)), tmp_path / "db") as idx:
        report = idx.reconcile()
        found = {h.path for h in idx.search("walrus", floor=0)}
    assert found == {"unclosed.md", "list.md", "tabs.md", "bom.md", "bad-yaml.md"}
    assert {m.path for m in report.malformed} == {"unclosed.md", "list.md", "tabs.md", "bad-yaml.md"}
    out = cli("index", "--root", f"plain={root}", "--db", str(tmp_path / "db2"))
    assert "4 with unusable frontmatter" in out.output
    assert "indexed as plain text tabs.md: frontmatter is not valid YAML" in out.output


def test_name_and_description_are_searchable_and_the_body_keeps_its_text(tmp_path):
    root = tmp_path / "memory"
    write(root, "a.md", fm("Body words only.", name="okapi-name", description="giraffe relative",
                           originSessionId="72a287b6-0848-46fb-9488-35659d2d3ccc"))
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("okapi")] == ["a.md"]
        assert [h.path for h in idx.search("giraffe")] == ["a.md"]
        assert idx.search("72a287b6") == []  # bookkeeping keys are not indexed
        row = idx.conn.execute("SELECT name, description, body FROM memory_fts").fetchone()
    assert row == ("okapi-name", "giraffe relative", "Body words only.\n")


# -- where roots come from -----------------------------------------------------------
@pytest.mark.parametrize(
    "spec, expected",
    [
        ("/m", Root("mimo", "/m")),
        ("claude", Root("claude")),
        ("zcode", Root("zcode")),
        ("mimo", Root("mimo")),
        ("plain=/notes", Root("plain", "/notes")),
        ("claude=/x/.claude", Root("claude", "/x/.claude")),
        ("/a=b", Root("mimo", "/a=b")),
        ("plain", Root("mimo", "plain")),
    ],
)
def test_root_specs(spec, expected):
    assert Root.parse(spec) == expected


def test_bad_roots():
    with pytest.raises(ValueError):
        Root("svn", "/x")
    with pytest.raises(ValueError):
        Root.parse("claude=")
    with pytest.raises(ValueError):
        Root("plain", "/x", name="a:b")
    for spec in (None, 123, b"/x"):  # a TypeError before
        with pytest.raises(InvalidArgument, match="a root must be DIR, KIND or KIND=DIR"):
            Root.parse(spec)


def test_default_locations(monkeypatch, isolated_home):
    assert roots_mod.default_path("mimo") == str(isolated_home / "data" / "mimocode" / "memory")
    monkeypatch.setenv("MIMOCODE_HOME", "relative/ignored")
    assert roots_mod.default_path("mimo") == str(isolated_home / "data" / "mimocode" / "memory")
    monkeypatch.setenv("MIMOCODE_HOME", "/opt/mimo")
    assert roots_mod.default_path("mimo") == "/opt/mimo/data/memory"
    assert roots_mod.default_path("claude") == str(isolated_home / ".claude" / "projects")
    assert roots_mod.default_path("zcode") == str(isolated_home / ".zcode" / "cli" / "memories" / "projects")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG spec ignores a relative one
    monkeypatch.delenv("MIMOCODE_HOME")
    assert roots_mod.default_path("mimo") == str(isolated_home / ".local" / "share" / "mimocode" / "memory")
    monkeypatch.delenv("XDG_DATA_HOME")
    assert roots_mod.default_path("mimo") == str(isolated_home / ".local" / "share" / "mimocode" / "memory")


def test_default_location_roots_by_kind_name(isolated_home, tmp_path):
    write(isolated_home, f".claude/projects/{CC_PROJECT}/memory/a.md", "walrus home")
    write(isolated_home, "data/mimocode/memory/global/user/p.md", "walrus mimo home")
    with MemoryIndex(roots=[Root("claude"), Root("mimo")], db_path=tmp_path / "db") as idx:
        assert [r.name for r in idx.roots] == ["cc", "mimo"]
        assert set(hits_by_path(idx)) == {f"cc:{CC_PROJECT}/memory/a.md", "mimo:global/user/p.md"}
    with pytest.raises(RootNotFound, match="default location"):
        MemoryIndex(Root("zcode"), tmp_path / "db2")


def test_a_missing_root_is_named_on_one_line(tmp_path):
    """A folder name with a line break forged a second "Error:" line."""
    missing = str(tmp_path / "no\nError: forged\x1b[2J")
    with pytest.raises(RootNotFound) as raised:
        MemoryIndex(missing, tmp_path / "db")
    assert str(raised.value).endswith("no\\nError: forged\\x1b[2J'") and str(raised.value).isprintable()
    r = cli("query", "x", "--root", f"plain={missing}")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr


def test_names_are_unique(tmp_path):
    (tmp_path / "a" / "notes").mkdir(parents=True)
    (tmp_path / "b" / "notes").mkdir(parents=True)
    resolved = roots_mod.resolve([Root("plain", str(tmp_path / "a" / "notes")), str(tmp_path / "b" / "notes"),
                                  str(tmp_path / "b" / "notes")])
    assert [r.name for r in resolved] == ["notes", "notes-2"]  # the duplicate root counts once
    with pytest.raises(ValueError, match="same name"):
        roots_mod.resolve([Root("plain", str(tmp_path / "a"), "x"), Root("plain", str(tmp_path / "b"), "x")])


def test_config_file_roots(layouts, tmp_path, monkeypatch):
    conf = tmp_path / "config.toml"
    conf.write_text(
        "[[roots]]\n"
        f'kind = "claude"\npath = "{layouts["claude"]}"\n'
        "[[roots]]\n"
        f'kind = "plain"\npath = "{layouts["plain"]}"\nname = "my-notes"\n'
        "[[roots]]\n"
        f'kind = "zcode"\npath = "{layouts["zcode"]}"\nenabled = false\n'
    )
    monkeypatch.setenv("MEMSEARCH_CONFIG", str(conf))
    with MemoryIndex(db_path=tmp_path / "db") as idx:
        assert [(r.kind, r.name) for r in idx.roots] == [("claude", "cc"), ("plain", "my-notes")]
        paths = set(hits_by_path(idx))
    assert "my-notes:ideas.md" in paths and not any(p.startswith("zcode") for p in paths)
    r = cli("query", "walrus", "--db", str(tmp_path / "db"), "--json", "--no-floor")
    assert {h["path"] for h in json.loads(r.output)["results"]} <= paths


@pytest.mark.parametrize("table", ['path = 123', 'name = 5', 'kind = 7', 'path = "{plain}"\nenabled = "no"'])
def test_a_roots_table_of_the_wrong_types_is_a_one_line_error(layouts, tmp_path, table):
    conf = tmp_path / "config.toml"
    conf.write_text('[[roots]]\nkind = "plain"\n'.replace('kind = "plain"\n', "" if "kind" in table else 'kind = "plain"\n')
                    + table.format(plain=layouts["plain"]) + "\n")
    r = run_memsearch("query", "walrus", "--db", tmp_path / "db", env={"MEMSEARCH_CONFIG": str(conf)})
    assert r.returncode == 2 and r.stderr.startswith("Error: config: ") and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("entry", ['"claude="', '""', '"  "'])
def test_a_roots_string_of_the_config_file_errs_as_the_config_s(tmp_path, entry):
    """A bad string in roots = [...] says the config file holds it, as a bad [[roots]] table does."""
    conf = tmp_path / "config.toml"
    conf.write_text(f"roots = [{entry}]\n")
    r = run_memsearch("query", "walrus", "--db", tmp_path / "db", env={"MEMSEARCH_CONFIG": str(conf)})
    assert r.returncode == 2 and r.stderr.startswith("Error: config: ") and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("text,said", [
    ('rootz = ["x"]\nflorr = 0\n', "unknown key(s) florr, rootz in "),  # typos: every setting at its default
    ('history_root = ["x"]\n', "unknown key(s) history_root in "),
    (None, "(MEMSEARCH_CONFIG) does not exist"),  # a file named that is not there
])
def test_a_config_file_s_typo_is_a_one_line_error(layouts, tmp_path, text, said):
    conf = tmp_path / "config.toml"
    if text is not None:
        conf.write_text(text)
    r = run_memsearch("query", "walrus", "--root", layouts["plain"], "--db", tmp_path / "db",
                      env={"MEMSEARCH_CONFIG": str(conf)})
    assert r.returncode == 2 and said in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("Error: config") and not (tmp_path / "db").exists()


@pytest.mark.parametrize("text,said", [(None, "(MEMSEARCH_CONFIG) does not exist"), ("bogus = 1\n", "unknown key(s)"),
                                       ("= x\n", "is not valid TOML"), ("", "cannot read config file")])
def test_a_config_file_s_path_is_quoted_in_its_errors(layouts, tmp_path, text, said):
    """The config file's path stood bare in its errors: a folder named with a line break or a character that shows
    nothing (U+3164) read as another path; it is quoted as every other path an error names."""
    from memsearch.errors import quoted

    conf = tmp_path / "cfg\n\u3164x" / "config.toml"
    conf.parent.mkdir()
    if text == "":
        conf.mkdir()  # not a file: cannot be read
    elif text is not None:
        conf.write_text(text)
    r = run_memsearch("query", "walrus", "--root", layouts["plain"], "--db", tmp_path / "db",
                      env={"MEMSEARCH_CONFIG": str(conf)})
    assert r.returncode == 2 and said in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert quoted(str(conf)) in r.stderr and "\u3164" not in r.stderr, r.stderr


def test_a_root_of_no_kind_says_so(tmp_path):
    """--root bogus=DIR was read as a folder named "bogus=DIR" and said only that it does not exist."""
    r = run_memsearch("query", "walrus", "--root", f"bogus={tmp_path}", "--db", tmp_path / "db")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "no root kind is named bogus: mimo, claude, zcode, plain, repos" in r.stderr


def test_environment_roots(layouts, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSEARCH_ROOTS", os.pathsep.join([f"zcode={layouts['zcode']}", str(layouts["mimo"])]))
    with MemoryIndex(db_path=tmp_path / "db") as idx:
        assert [r.kind for r in idx.roots] == ["zcode", "mimo"]
    r = cli("query", "walrus", "--db", str(tmp_path / "db"), "--json", "--scope", "zcode")
    assert r.exit_code == 0 and {h["scope"] for h in json.loads(r.output)["results"]} == {"zcode"}


def test_cli_with_several_roots(layouts, tmp_path):
    args = ["--root", f"claude={layouts['claude']}", "--root", f"zcode={layouts['zcode']}",
            "--root", f"plain={layouts['plain']}", "--root", str(layouts["mimo"]), "--db", str(tmp_path / "db")]
    r = cli("query", "zebra", *args)
    zfile = layouts["zcode"] / "cli" / "memories" / "projects" / ZC_PROJECT / "memory" / "z.md"
    assert r.output.startswith(f"{zfile}  [zcode/{ZC_PROJECT} · feedback]")
    r = cli("query", "walrus", *args, "--type", "user", "--json")
    assert [(h["path"], h["scope"], h["scope_id"]) for h in json.loads(r.output)["results"]] == [
        ("cc:-other/memory/user.md", "cc", "-other")]
    status = json.loads(cli("status", *args, "--json").output)
    assert [line.split(" ")[0] for line in status["roots"]] == ["cc", "zcode", "notes", "mimo"]
    assert cli("query", "walrus", "--root", "svn=/x").exit_code == 2


def test_default_database_is_keyed_by_the_set_of_roots(layouts):
    a = MemoryIndex(roots=[Root("claude", str(layouts["claude"])), Root("plain", str(layouts["plain"]))])
    b = MemoryIndex(roots=[Root("plain", str(layouts["plain"])), Root("claude", str(layouts["claude"]))])
    c = MemoryIndex(roots=[Root("plain", str(layouts["plain"]))])
    assert a.db_path == b.db_path == Path(roots_db_file(r.key for r in a.roots))
    assert c.db_path != a.db_path


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "agent-memory").is_dir(), reason=NO_CORPORA)
def test_real_claude_and_zcode_memory_files(tmp_path):
    """Real memory folders from the shared corpus, laid out as Claude Code
    and ZCode keep them (copied at test time, never into the repository)."""
    folders = sorted(p for p in (SHARED / "agent-memory").glob("*/.claude/memory") if p.is_dir())
    assert len(folders) >= 5
    cc = tmp_path / "claude" / "projects"
    zc = tmp_path / "zcode" / "cli" / "memories" / "projects"
    projects = set()
    for n, folder in enumerate(folders):
        repo = folder.parent.parent.name.lower()
        project = cc / f"-src-{repo}" if n % 2 == 0 else zc / f"{repo[:20]}-{n:016x}"
        shutil.copytree(folder, project / "memory")
        projects.add(project.name)
    roots = [Root("claude", str(tmp_path / "claude")), Root("zcode", str(tmp_path / "zcode"))]
    with MemoryIndex(roots=roots, db_path=tmp_path / "db") as idx:
        report = idx.reconcile()
        assert not report.skipped
        assert len(report.added) == sum(1 for f in folders for _ in f.rglob("*.md"))
        rows = idx.conn.execute("SELECT path, scope, scope_id, type, description FROM memory_fts").fetchall()
        typed = 0
        for path, scope, scope_id, type_, description in rows:
            assert scope == path.split(":")[0] and scope_id in projects
            text = Path(idx.locate(path)).read_text(encoding="utf-8")
            declared = metadata.parse(text).type
            if os.path.basename(path) == "MEMORY.md":
                assert type_ == (declared or "memory")
                continue
            assert type_ == (declared or "free"), path
            typed += declared is not None
            if description:  # a file's own description finds it
                assert path in [h.path for h in idx.search(description)], (path, description)
        assert typed > 100
        # Two files of the corpus have frontmatter whose YAML does not parse.
        assert len(report.malformed) >= 2
        for bad in report.malformed:
            text = Path(idx.locate(bad.path)).read_text(encoding="utf-8")
            name = re.search(r"^name: *(.+)$", text, re.M)[1]
            assert bad.path in [h.path for h in idx.search(name, limit=50, floor=0)]


@pytest.mark.parametrize("kind", ["mimo", "claude"])
def test_locate_gives_the_file_of_a_name_that_is_not_utf8(kind, tmp_path):
    """The walk spells such a name with \\xNN; locate reads it back as the real name,
    folders and the claude project folder too, unless that spelling is a real name."""
    root = tmp_path / "r"
    folder = os.path.join(os.fsencode(root), b"p\xff", b"memory" if kind == "claude" else b"sub\xfe")
    os.makedirs(folder)
    with open(os.path.join(folder, b"caf\xe9.md"), "wb") as f:
        f.write(b"walrus latin-1\n")
    with MemoryIndex(roots=[Root(kind, str(root))], db_path=tmp_path / "db") as idx:
        [hit] = idx.search("walrus")
        assert "\\xff" in hit.path and "\\xe9" in hit.path
        assert idx.locate(hit.path) == os.fsdecode(os.path.join(folder, b"caf\xe9.md"))
    write(root, "p\\xff/x\\xe9.md", "a literal name")
    with MemoryIndex(roots=[Root(kind, str(root))], db_path=tmp_path / "db") as idx:
        assert idx.locate("p\\xff/x\\xe9.md") == str(root / "p\\xff" / "x\\xe9.md")


def test_an_empty_root_is_an_error_in_the_library_as_on_the_command_line(tmp_path, monkeypatch):
    """MemoryIndex(roots=[""]) (or Root("plain", "")) indexed the working directory, and MEMSEARCH_ROOTS' empty items
    were left out by the library though `memsearch query` refused them: one rule, where a root is made."""
    write(tmp_path / "here", "n.md", "walrus in the working directory\n")
    monkeypatch.chdir(tmp_path / "here")
    for make in (lambda: MemoryIndex(roots=[""], db_path=tmp_path / "db"), lambda: MemoryIndex("", tmp_path / "db"),
                 lambda: Root("plain", ""), lambda: Root("mimo", "  "), lambda: Root.parse(" ")):
        with pytest.raises(InvalidArgument, match="^empty root: "):
            make()
    for value in (":", f"{tmp_path / 'here'}:"):
        monkeypatch.setenv("MEMSEARCH_ROOTS", value)
        with pytest.raises(InvalidArgument, match="^empty root: "):
            MemoryIndex(db_path=tmp_path / "db")


def test_a_missing_folder_is_not_called_a_root_kind(tmp_path):
    """The hint of --root bogus=DIR ("no root kind is named bogus") came with any missing folder whose name is a word:
    --root notez (a typo) said no root kind is named notez, MemoryIndex(root="claude") that none is named claude."""
    r = run_memsearch("query", "walrus", "--root", "notez", "--db", tmp_path / "db")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "does not exist" in r.stderr, r.stderr
    assert "root kind" not in r.stderr, r.stderr
    with pytest.raises(RootNotFound) as err:
        MemoryIndex(root="claude", db_path=tmp_path / "db")
    assert "root kind" not in str(err.value)
