"""What a one-shot `memsearch query` process loads: start-up is most of its
cost, so the modules only other commands (or --json) need stay unloaded.
No timings here: the import lists are what the tests can hold steady."""

import hashlib
import json
import subprocess
import sys

import pytest

from memsearch import migrate
from memsearch.settings import default_db_path, roots_db_path

# Stdlib modules a query without --json has no use for (click itself loads
# re, typing, inspect, enum, threading, uuid, datetime and gettext).
NOT_FOR_A_QUERY = ("json", "hashlib", "_hashlib", "logging", "tomllib", "importlib.metadata",
                   "importlib.resources", "subprocess", "tempfile", "shutil", "sqlite_utils", "watchdog", "yaml",
                   "frontmatter", "mcp")


def _loaded_by_query(*args) -> list[str]:
    code = (
        "import sys\n"
        "from memsearch.cli import main\n"
        "try:\n"
        f"    main(['query', *{list(args)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED=' + ','.join(m for m in {NOT_FOR_A_QUERY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_a_query_loads_none_of_the_modules_it_does_not_need(tree):
    # No --db: the default index path is hashed without importing hashlib.
    lines = _loaded_by_query("pgbouncer", "--root", str(tree))
    assert "<<pgbouncer>>" in "\n".join(lines)
    assert lines[-1] == "LOADED="


def test_json_is_loaded_for_json_output_only(tree, tmp_path):
    lines = _loaded_by_query("pgbouncer", "--root", str(tree), "--db", str(tmp_path / "db"), "--json")
    assert json.loads(lines[0])["results"][0]["path"] == "projects/shop/memory-db.md"
    assert lines[-1] == "LOADED=json"


def test_index_file_names_keep_their_sha256_digest(tmp_path):
    # The digest names the cache file: computing it without hashlib must not move any index.
    resolved = str(tmp_path.resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    assert default_db_path(tmp_path).name == f"{tmp_path.name}-{digest}.db"
    keys = ["plain:/b", "mimo:/a"]
    assert roots_db_path(keys).name == f"roots-{hashlib.sha256(b'mimo:/a' + bytes([10]) + b'plain:/b').hexdigest()[:16]}.db"


def test_migrations_are_listed_once_and_handed_out_as_copies():
    first = migrate.available()
    first.clear()
    assert migrate.available() and migrate.available() == migrate.available()
    assert migrate.latest_version() == migrate.available()[-1][0]


def test_settings_behave_as_the_frozen_record_they_were():
    from memsearch.settings import FLOOR, Settings

    base = Settings()
    assert base.floor == FLOOR and base == Settings() and hash(base) == hash(Settings())
    assert repr(base).startswith(f"Settings(floor={FLOOR!r}, reconcile=True, ")
    changed = base.with_overrides(floor=0.5, reconcile=None)  # None: keep the value
    assert (changed.floor, changed.reconcile) == (0.5, base.reconcile) and changed != base
    assert Settings(0.5) == changed
    with pytest.raises(AttributeError):
        base.floor = 0.2
    with pytest.raises(TypeError):
        base.with_overrides(flor=0.2)
