"""SIGKILL in the middle of indexing, then the next run: it opens the
database without a warning, finishes the work, and the index passes SQLite's
and FTS5's integrity checks and holds exactly the files (bench/crash.py runs
the long version: python bench/crash.py --trials 20 --watcher-trials 5)."""

import os
import random
import tempfile
from pathlib import Path

import pytest

from conftest import bench

# Every test here kills memsearch processes over and over.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crash():
    return bench("crash")


@pytest.fixture
def work(tmp_path):
    """tmpfs when there is one (creating a thousand files is 10x faster and a
    SIGKILL does not care), else the test's own directory."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(prefix="memsearch-crash-", dir=shm) as d:
            yield Path(d) / "run"
    else:
        yield tmp_path / "run"


def test_kill_inside_the_write_transaction(crash, work):
    rng = random.Random(3)
    (work / "tree").mkdir(parents=True)
    crash.make_tree(work / "tree", 800, rng)
    result = crash.stalled_trial(work, 800, rng)
    assert result["problems"] == []


def test_kills_at_random_points_of_cold_builds_and_updates(crash, work):
    result = crash.run_trials(work, trials=3, files=800, seed=11)
    assert result["passed"] == result["trials"], result["failures"]


def test_kill_mid_watcher_batch(crash, work):
    """`memsearch watch` killed while it applies a burst of changes; the next
    query walks (the watcher is dead) and sees exactly the files, and a new
    watcher takes over. Extend here as the watcher grows (e.g. a kill during
    its rescan after an event-queue overflow)."""
    rng = random.Random(5)
    (work / "tree").mkdir(parents=True)
    crash.make_tree(work / "tree", 600, rng)
    for _ in range(2):
        result = crash.watcher_trial(work, 600, rng, burst_s=0.5)
        assert result["problems"] == []
