"""What a one-shot `memsearch query` process loads: start-up is most of its
cost, so the modules only other commands (or --json) need stay unloaded.
No timings here: the import lists are what the tests can hold steady."""

import copy
import dataclasses
import hashlib
import json
import os
import pickle
from pathlib import Path

import pytest

from conftest import imports_of
from memsearch import MemoryIndex, Root, SearchResult, migrate
from memsearch.query import Query, plan
from memsearch.db import default_db_file, roots_db_file
from memsearch.settings import path_text

# Stdlib modules a query without --json has no use for (click itself loads
# re, typing, inspect, enum, threading, uuid, datetime and gettext).
NOT_FOR_A_QUERY = ("json", "hashlib", "_hashlib", "logging", "tomllib", "importlib.metadata",
                   "importlib.resources", "subprocess", "tempfile", "shutil", "sqlite_utils", "inotify_simple", "yaml",
                   "frontmatter", "mcp", "pathlib", "dataclasses",
                   # ~0.8 ms, and the console script's quick exit looks for live threads when it is loaded
                   "threading",
                   # conversation history (issue 16) is its own command: memory never reads transcripts
                   "memsearch.history", "memsearch.history_refresh", "memsearch.history_sessions",
                   "memsearch.transcripts", "memsearch.session_context", "memsearch.session_rank")


def _loaded_by_query(*args) -> tuple[list[str], str]:
    """Which NOT_FOR_A_QUERY modules `memsearch query ARGS` loaded, and its output."""
    # What click loads is loaded by every command anyway and is not ours to
    # avoid: on 3.10 click's `import uuid` brings platform and subprocess.
    code = (
        "from memsearch.cli import main\n"
        "try:\n"
        f"    main(['query', *{list(args)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    loaded, out = imports_of(code, NOT_FOR_A_QUERY, after="import click")
    assert out.returncode == 0, out.stderr
    return loaded, out.stdout


def test_a_query_loads_none_of_the_modules_it_does_not_need(tree):
    # No --db: the default index path is hashed without importing hashlib.
    loaded, out = _loaded_by_query("pgbouncer", "--root", str(tree))
    assert "<<pgbouncer>>" in out
    assert loaded == []


def test_the_console_scripts_quick_path_loads_none_of_them_either(tree, tmp_path):
    """The quick path (memsearch.entry, no click) over a long file, whose
    excerpt comes from slices: not even threading, which click would bring."""
    from conftest import write

    write(tree, "projects/shop/long.md", "okapi " + "filler words here " * 400)
    code = ("import sys\nsys.argv = ['memsearch', 'query', 'okapi', '--root', sys.argv[1], '--db', sys.argv[2]]\n"
            "from memsearch.entry import entry\nentry()\n")
    loaded, run = imports_of(code, NOT_FOR_A_QUERY, tree, tmp_path / "db")
    assert run.returncode == 0 and "long.md" in run.stdout, run.stderr
    assert [m for m in loaded if m not in ("yaml", "frontmatter")] == []  # those two: the first build reads frontmatter


def test_json_is_loaded_for_json_output_only(tree, tmp_path):
    loaded, out = _loaded_by_query("pgbouncer", "--root", str(tree), "--db", str(tmp_path / "db"), "--json")
    assert json.loads(out)["results"][0]["path"] == "projects/shop/memory-db.md"
    assert loaded == ["json"]


def test_index_file_names_keep_their_sha256_digest(tmp_path):
    # The digest names the cache file: computing it without hashlib must not move any index.
    resolved = str(tmp_path.resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    assert Path(default_db_file(tmp_path)).name == f"{tmp_path.name}-{digest}.db"
    keys = ["plain:/b", "mimo:/a"]
    assert Path(roots_db_file(keys)).name == f"roots-{hashlib.sha256(b'mimo:/a' + bytes([10]) + b'plain:/b').hexdigest()[:16]}.db"


def test_migrations_are_listed_once_and_handed_out_as_copies():
    first = migrate.available()
    first.clear()
    assert migrate.available() and migrate.available() == migrate.available()
    assert migrate.latest_version() == migrate.available()[-1][0]


def test_settings_are_an_immutable_record():
    from memsearch.settings import FLOOR, Settings

    base = Settings()
    assert base.floor == FLOOR and base == Settings() and hash(base) == hash(Settings())
    assert repr(base).startswith(f"Settings(floor={FLOOR!r}, reconcile=True, ")
    changed = base.with_overrides(floor=0.5, reconcile=None)  # None: keep the value
    assert (changed.floor, changed.reconcile) == (0.5, base.reconcile) and changed != base
    assert Settings(0.5) == changed
    with pytest.raises(AttributeError):
        base.floor = 0.2
    with pytest.raises(TypeError, match="flor"):
        base.with_overrides(flor=0.2)


@pytest.mark.parametrize("given", [
    "/a/b", "/a/b/", "//a/b", "///a//b/", "a", "a/", "./a/./b/.", ".", "", "..", "../a/../b", "/", "//", "a//b",
    "~/x", "/a/b.db", " a /b ",
])
def test_path_text_prints_what_a_path_would(given):
    assert path_text(given) == str(Path(given))


def test_the_index_path_is_a_path_as_it_was(tmp_path):
    (tmp_path / "root").mkdir()
    idx = MemoryIndex(str(tmp_path / "root"), str(tmp_path) + "//db/./x.db")
    assert idx.db_path == tmp_path / "db" / "x.db" and isinstance(idx.db_path, Path)
    idx.db_path = tmp_path / "y.db"
    assert idx.db_path == tmp_path / "y.db"
    assert MemoryIndex(str(tmp_path / "root")).db_path == Path(default_db_file(tmp_path / "root"))
    assert all(isinstance(path, Path) and path.is_file() for _, _, path in migrate.available())


@pytest.mark.parametrize("record, same, other", [
    (Root("plain", "/notes"), Root(kind="plain", path="/notes", name=None), Root("plain", "/notes", "n")),
    (Query(("a",), ("b c",)), Query(("a",), ("b c",)), Query(("a",))),
    (SearchResult("q", "f", [], 0), SearchResult("q", "f", [], 0, None, None), SearchResult("q", "f", [], 1)),
])
def test_records_are_named_tuples(record, same, other):
    # One record style (issue 17): typing.NamedTuple, a tuple of its fields.
    assert isinstance(record, tuple) and tuple(record) == tuple(getattr(record, f) for f in record._fields)
    assert record == same and record != other
    if not isinstance(record, SearchResult):  # holds a list: unhashable, as before
        assert hash(record) == hash(same)
    for name in record._fields:
        with pytest.raises(AttributeError):
            setattr(record, name, None)
        with pytest.raises(AttributeError):
            delattr(record, name)
    assert pickle.loads(pickle.dumps(record)) == record == copy.deepcopy(record) == copy.copy(record)
    assert type(pickle.loads(pickle.dumps(record))) is type(record)


def test_no_record_class_is_a_dataclass_or_a_hand_made_base():
    import importlib
    import pkgutil

    import memsearch

    for info in pkgutil.iter_modules(memsearch.__path__):
        if info.name in ("mcp_server", "__main__"):
            continue
        module = importlib.import_module(f"memsearch.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                assert not dataclasses.is_dataclass(value), value
    assert importlib.util.find_spec("memsearch.record") is None


def test_records_print_and_change_as_before():
    root = Root("plain", "/notes")
    assert repr(root) == "Root(kind='plain', path='/notes', name=None)"
    assert root.key == "plain:" + os.path.realpath("/notes") and Root("claude").key == "claude"
    assert root._replace(name="n") == Root("plain", "/notes", "n")
    with pytest.raises(ValueError):
        root._replace(kind="svn")
    assert repr(plan("stripe webhook")) == """Query(terms=('"stripe"', '"webhook"'), pairs=('"stripe webhook"',))"""
    # reconcile and freshness stay out of the repr, as field(repr=False) kept them
    shown = repr(SearchResult("q", "f", [], 2, object(), object()))
    assert shown == "SearchResult(query='q', fts_query='f', hits=[], floored=2)"
