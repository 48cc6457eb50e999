import os
from pathlib import Path

import pytest

from memsearch import MemoryIndex

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def bump_mtime(path: Path, seconds: float = -10) -> None:
    """Move a file's mtime so a same-size rewrite still changes the fingerprint."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + int(seconds * 1e9)))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """Never touch the real user cache or config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("HOME", str(home))
    for var in ("MEMSEARCH_ROOT", "MEMSEARCH_DB", "MEMSEARCH_CONFIG", "MEMSEARCH_ROOTS", "MIMOCODE_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "memory"
    r.mkdir()
    return r


@pytest.fixture
def tree(root):
    write(root, "global/user/prefs.md", "The user prefers tabs over spaces and short commits.\n")
    write(root, "projects/shop/MEMORY.md", "- Database: PostgreSQL on port 5433\n- Deploy with make release\n")
    write(root, "projects/shop/memory-db.md", "PostgreSQL 16 listens on port 5433. Connection via pgbouncer.\n")
    write(root, "projects/shop/checkpoint-2.md", "Checkpoint: migrating the cart to integer cents.\n")
    write(root, "sessions/s1/notes.md", "Session scratch: the cart rounding bug, cents versus float.\n")
    write(root, "sessions/s1/checkpoint.md", "Checkpoint of s1: rounding fixed, webhook tests next.\n")
    write(root, "sessions/s1/tasks/T1/progress.md", "T1 progress: rounding fix done, tests green.\n")
    write(root, "sessions/s1/tasks/T1/notes.md", "T1 notes: Stripe webhook retries for three days.\n")
    write(root, "README.md", "Top-level readme of the memory tree, about nothing in particular.\n")
    return root


@pytest.fixture
def index(tree, tmp_path):
    with MemoryIndex(tree, tmp_path / "index.db") as idx:
        yield idx
