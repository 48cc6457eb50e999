"""The module boundaries issue 17 redrew, read from the code's own imports."""

import ast
import pickle
import subprocess
import sys
from pathlib import Path

import memsearch

PACKAGE = Path(memsearch.__file__).parent

# Cycles left for other parts of issue 17 (the shells, history): remove an
# entry when its cycle is gone. A new cycle fails the test.
KNOWN_CYCLES: list[set[str]] = []


def _imports(path: Path) -> set[str]:
    """The memsearch modules ``path`` imports at run time, anywhere in it
    (an import inside a function counts; one under TYPE_CHECKING does not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 1:
            found.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
        elif node.module and node.module.startswith("memsearch."):
            found.add(node.module.split(".")[1])
    return found


def _cycles() -> list[set[str]]:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    graph = {p.stem: _imports(p) & modules for p in PACKAGE.glob("*.py")}

    def reaches(start, goal):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    groups: list[set[str]] = []
    for module in sorted(graph):
        if reaches(module, module) and not any(module in g for g in groups):
            groups.append({m for m in graph if m == module or (reaches(module, m) and reaches(m, module))})
    return groups


def test_no_new_import_cycles():
    assert sorted(map(sorted, _cycles())) == sorted(map(sorted, KNOWN_CYCLES))


def test_the_reader_child_loads_no_database_module(tmp_path):
    # The child of a large build (memsearch.bulkread) only prepares files.
    note = tmp_path / "note.md"
    note.write_text("---\nname: n\n---\nokapi\n", encoding="utf-8")
    code = ("import sys; from memsearch.bulkread import serve; serve();"
            " print([m for m in ('sqlite3', 'memsearch.db', 'memsearch.roots', 'memsearch.layout',"
            " 'memsearch.reconcile') if m in sys.modules], file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", code], input=pickle.dumps([("note.md", str(note), 1 << 20)]),
                         capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr.decode().strip() == "[]"
    prepared = pickle.loads(run.stdout)
    assert prepared[0].body.strip() == "okapi" and prepared[0].meta.name == "n"
