"""walk.walk against known fingerprints: what is unchanged, what to read,
what is gone (the comparison is made per directory, see walk.Known)."""

import os

from conftest import write

from memsearch.fingerprint import Fingerprint, of
from memsearch.walk import Known, walk


def fingerprints(root) -> dict[str, Fingerprint]:
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root).replace(os.sep, "/")] = of(os.stat(path))
    return out


def test_unchanged_changed_new_and_missing_across_directories(tmp_path):
    root = tmp_path / "mem"
    for rel in ("top.md", "a/one.md", "a/two.md", "a/b/three.md", "gone/four.md"):
        write(root, rel, rel)
    known = fingerprints(root)
    write(root, "a/two.md", "a longer text than before")  # changed
    write(root, "a/b/new.md", "new")  # not known
    (root / "gone" / "four.md").unlink()
    (root / "gone").rmdir()  # a whole directory of known files is gone
    (root / "a" / "one.md").unlink()
    for given in (known, Known(known)):
        seen = walk(str(root), 1 << 20, given)
        assert sorted(seen.files) == ["a/b/new.md", "a/two.md"]
        assert sorted(seen.missing) == ["a/one.md", "gone/four.md"]
        assert seen.unchanged == 2  # top.md, a/b/three.md


def test_recheck_and_unusable_fingerprints_are_read_again(tmp_path):
    root = tmp_path / "mem"
    for rel in ("x.md", "d/y.md", "d/z.md"):
        write(root, rel, rel)
    known = fingerprints(root)
    known["d/z.md"] = Fingerprint(-1, -1, -1, -1, -1)  # as migration 0008 leaves a row
    seen = walk(str(root), 1 << 20, known, {"d/y.md"})
    assert sorted(seen.files) == ["d/y.md", "d/z.md"]
    assert seen.unchanged == 1 and seen.missing == []


def test_a_file_grown_past_the_cap_is_missing_not_unchanged(tmp_path):
    root = tmp_path / "mem"
    write(root, "d/big.md", "small")
    known = fingerprints(root)
    write(root, "d/big.md", "x" * 100)
    seen = walk(str(root), 50, known)
    assert seen.unchanged == 0 and seen.files == {}
    assert seen.missing == ["d/big.md"] and [s.path for s in seen.skipped] == ["d/big.md"]
