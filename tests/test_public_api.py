import pkgutil

import memsearch
import pytest

from conftest import imports_of, run_memsearch, write
from memsearch import MemoryIndex, Root


def test_every_public_name_resolves_and_all_is_sorted():
    assert memsearch.__all__ == sorted(memsearch.__all__)
    for name in memsearch.__all__:
        assert getattr(memsearch, name) is not None, name
    assert set(memsearch.__all__) <= set(dir(memsearch))
    assert len(dir(memsearch)) == len(set(dir(memsearch)))  # each once, though the loop put them in globals()


def test_unknown_name_is_an_attribute_error():
    try:
        memsearch.no_such_thing  # noqa: B018
    except AttributeError as ex:
        assert "no_such_thing" in str(ex)
    else:
        raise AssertionError("expected AttributeError")


def test_exceptions_share_one_base():
    for name in memsearch.__all__:
        obj = getattr(memsearch, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, memsearch.MemsearchError), name


def test_importing_the_package_is_light():
    ours = ["memsearch", *(f"memsearch.{info.name}" for info in pkgutil.iter_modules(memsearch.__path__))]
    loaded, out = imports_of("import memsearch", ours)
    assert out.returncode == 0, out.stderr
    assert loaded == ["memsearch"]


def test_public_functions_are_not_shadowed_by_submodules():
    import importlib

    # Importing a submodule sets it as a package attribute; none may share a
    # public name, or `from memsearch import x` would hand out the module.
    for info in pkgutil.iter_modules(memsearch.__path__):
        if info.name not in ("mcp_server",):  # needs the optional mcp extra
            importlib.import_module(f"memsearch.{info.name}")
    for name in memsearch.__all__:
        assert not isinstance(getattr(memsearch, name), type(memsearch)), name


def test_arguments_of_the_wrong_type_are_the_projects_errors(tmp_path):
    from memsearch import InvalidArgument, MemsearchError

    write(tmp_path / "r", "global/g/a.md", "alpha note\n")
    with MemoryIndex(tmp_path / "r", db_path=tmp_path / "db") as idx:
        for bad in (lambda: idx.search(None), lambda: idx.search(5), lambda: idx.search("alpha", floor="0.5"),
                    lambda: idx.search("alpha", limit="5"), lambda: idx.search("alpha", limit=10 ** 5000),
                    lambda: idx.search("alpha", floor=-10 ** 5000), lambda: idx.reconcile(progress=123),
                    lambda: idx.search_result("alpha", progress="x"), lambda: idx.scope_ids("5"),
                    lambda: idx.scope_ids(0), lambda: idx.paths([]), lambda: idx.paths(str(tmp_path / "r")),
                    lambda: idx.scopes_of(5)):
            with pytest.raises(InvalidArgument):
                bad()
        assert issubclass(InvalidArgument, MemsearchError) and issubclass(InvalidArgument, ValueError)
        assert [h.path for h in idx.search("alpha")] == ["global/g/a.md"]
        assert idx.paths(Root("mimo", str(tmp_path / "r"))) == idx.paths(idx.roots[0]) == ["global/g/a.md"]
        assert idx.scope_ids(2 ** 70) == idx.scope_ids() == [("global", "g", 1)]
        assert idx.scopes_of("g") == ["global"] and idx.scopes_of("x") == []
        with pytest.raises(KeyError):
            idx.paths(Root("plain", str(tmp_path)))
    with pytest.raises(ValueError, match="must be a folder's path"):
        MemoryIndex(5, db_path=tmp_path / "db2")


def test_scopes_of_a_scope_id_holding_a_lone_surrogate_is_the_searchs_error(tmp_path):
    """scopes_of("\\udcff") (a --scope-id of bytes not UTF-8) raised UnicodeEncodeError from SQLite's binding,
    where search_result() with it raises UnknownFilter: no scope id holds a lone surrogate."""
    from memsearch import UnknownFilter

    write(tmp_path / "r", "global/g/a.md", "alpha note\n")
    with MemoryIndex(tmp_path / "r", db_path=tmp_path / "db") as idx:
        for call in (lambda: idx.search("alpha", scope_id="\udcff"), lambda: idx.scopes_of("\udcff")):
            with pytest.raises(UnknownFilter, match="lone surrogate"):
                call()


def test_bad_arguments_of_memory_index_raise_invalid_argument(tmp_path):
    """README: every error is a MemsearchError; bad arguments raise InvalidArgument."""
    from memsearch import InvalidArgument

    root = tmp_path / "r"
    write(root, "global/g/a.md", "alpha note\n")
    for bad in (lambda: MemoryIndex(5, db_path=tmp_path / "db"), lambda: MemoryIndex(b"/tmp", db_path=tmp_path / "db"),
                lambda: MemoryIndex(root, roots=[root]), lambda: MemoryIndex(roots=[]),
                lambda: Root("nosuchkind"), lambda: Root("plain", str(root), name="a:b"),
                lambda: MemoryIndex(root, db_path=b"/tmp/x.db"), lambda: MemoryIndex(root, db_path=5)):
        with pytest.raises(InvalidArgument):
            bad()


class _BadPath:
    """A path-like whose __fspath__ gives neither str nor bytes, or raises TypeError itself."""

    def __init__(self, value):
        self.value = value

    def __fspath__(self):
        if self.value is TypeError:
            raise TypeError("no path here")
        return self.value


def test_a_path_like_giving_no_text_is_invalid_argument(tmp_path):
    """os.fspath() of a path-like returning an int (or raising TypeError) let a raw TypeError out of given_path."""
    from memsearch import HistoryIndex, InvalidArgument

    root = tmp_path / "r"
    write(root, "global/g/a.md", "alpha note\n")
    for value in (5, None, TypeError):
        for make in (lambda: MemoryIndex(_BadPath(value), db_path=tmp_path / "db"),
                     lambda: MemoryIndex(root, db_path=_BadPath(value)), lambda: Root("plain", _BadPath(value)),
                     lambda: HistoryIndex(_BadPath(value), db_path=tmp_path / "hdb")):
            with pytest.raises(InvalidArgument, match="must be .*, got _BadPath$"):
                make()


def test_an_empty_db_path_is_refused_not_taken_for_the_default(tmp_path):
    """db_path="" (and --db "") marked the index as named by the caller yet opened the default cache file."""
    from memsearch import HistoryIndex, InvalidArgument

    root, cache = tmp_path / "r", tmp_path / "cache"
    write(root, "global/g/a.md", "alpha note\n")
    (tmp_path / "h").mkdir()
    for make in (lambda: MemoryIndex(root, db_path=""), lambda: HistoryIndex(tmp_path / "h", db_path="")):
        with pytest.raises(InvalidArgument, match="db_path is empty"):
            make()
    for args in (("query", "alpha", "--root", root), ("history", "alpha", "--history-root", tmp_path / "h")):
        done = run_memsearch(*args, "--db", "", env={"XDG_CACHE_HOME": str(cache)})
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and "db_path is empty" in done.stderr
    assert not cache.exists()  # no default index made


def test_the_other_bad_arguments_of_memory_index_raise_invalid_argument(tmp_path):
    """roots=5 was a TypeError, max_file_bytes="2MB" a TypeError at the first
    reconcile, settings={} an AttributeError, locate(None) an AttributeError."""
    from memsearch import InvalidArgument

    root = tmp_path / "r"
    write(root, "global/g/a.md", "alpha note\n")
    db = tmp_path / "db"
    for bad in (lambda: MemoryIndex(roots=5, db_path=db), lambda: MemoryIndex(root, db, max_file_bytes="2MB"),
                lambda: MemoryIndex(root, db, max_file_bytes=0), lambda: MemoryIndex(root, db, settings={}),
                lambda: MemoryIndex(root, db).locate(None), lambda: MemoryIndex(root, db).locate(b"global/g/a.md")):
        with pytest.raises(InvalidArgument):
            bad()
    with MemoryIndex(roots={root}, db_path=db, max_file_bytes=5) as idx:  # any iterable; a tiny limit
        assert idx.reconcile().skipped[0].path == "global/g/a.md"


def test_reconcile_paths_refuses_what_no_index_path_is(tmp_path):
    """A number, bytes, a list, a NUL or a lone surrogate raised AttributeError,
    TypeError, ValueError or UnicodeEncodeError; a lone string was taken as
    a list of its characters."""
    from memsearch import InvalidArgument

    root = tmp_path / "r"
    write(root, "global/g/a.md", "alpha note\n")
    with MemoryIndex(root, db_path=tmp_path / "db") as idx:
        idx.reconcile()
        for bad in ([5], [None], [b"global"], ["a\0b"], ["\udcff"], 5, [["global"]], [{"a": 1}]):
            with pytest.raises(InvalidArgument):
                idx.reconcile_paths(bad)
        write(root, "global/g/a.md", "alpha note, longer now\n")
        assert idx.reconcile_paths("global/g/a.md").updated == ("global/g/a.md",)


def test_a_search_s_reconcile_is_true_false_or_none(tmp_path):
    """search(reconcile="no") walked the tree (a non-empty string is true) and reconcile=1 passed, where the
    constructor's reconcile= and the config file's take only true or false."""
    from memsearch import InvalidArgument

    root = tmp_path / "r"
    write(root, "global/g/a.md", "alpha note\n")
    with MemoryIndex(root, db_path=tmp_path / "db") as idx:
        for bad in ("no", 1, 0, "false"):
            with pytest.raises(InvalidArgument, match="^reconcile must be true or false, got "):
                idx.search("alpha", reconcile=bad)
        assert idx.search_result("alpha", reconcile=False).reconcile is None  # nothing indexed yet, nothing walked
        assert [h.path for h in idx.search("alpha", reconcile=True)] == ["global/g/a.md"]
