import pytest

from memsearch.layout import classify


@pytest.mark.parametrize(
    "path, expected",
    [
        ("projects/p1/MEMORY.md", ("projects", "p1", "memory")),
        ("projects/p1/memory.md", ("projects", "p1", "memory")),
        ("projects/p1/Memory-db.md", ("projects", "p1", "memory")),
        ("projects/p1/memoryx.md", ("projects", "p1", "free")),
        ("sessions/s1/checkpoint.md", ("sessions", "s1", "checkpoint")),
        ("sessions/s1/checkpoint-3.md", ("sessions", "s1", "checkpoint")),
        # Only the memory class ignores letter case, as in MiMo Code.
        ("sessions/s1/CHECKPOINT-3.md", ("sessions", "s1", "free")),
        ("sessions/s1/Checkpoint.md", ("sessions", "s1", "free")),
        ("sessions/s1/checkpoint.MD", ("sessions", "s1", "free")),
        ("sessions/s1/tasks/T1/Progress.md", ("sessions", "s1", "free")),
        ("sessions/s1/tasks/T1/NOTES.md", ("sessions", "s1", "free")),
        ("sessions/s1/tasks/T1/progress.MD", ("sessions", "s1", "free")),
        ("projects/p1/MEMORY.MD", ("projects", "p1", "memory")),
        ("projects/p1/MEMORY-Db.md", ("projects", "p1", "memory")),
        ("sessions/s1/notes.md", ("sessions", "s1", "free")),
        ("sessions/s1/tasks/T1/progress.md", ("sessions", "s1", "progress")),
        ("sessions/s1/tasks/T1.2/notes.md", ("sessions", "s1", "notes")),
        ("sessions/s1/tasks/T1/other.md", ("sessions", "s1", "free")),
        ("global/user/prefs.md", ("global", "user", "free")),
        ("global/prefs.md", (None, None, "free")),
        ("README.md", (None, None, "free")),
        ("other/x/MEMORY.md", (None, None, "memory")),
        ("Projects/p1/a.md", (None, None, "free")),
    ],
)
def test_classify(path, expected):
    assert classify(path) == expected
