"""The distribution as users get it: its name, its one version, and
dependencies that say what is used.

The version checks run the installed `memsearch` script, as a user would,
and compare with the installed distribution's metadata (what pip shows).
"""

import ast
import asyncio
import inspect
import json
import os
import re
import sys
from importlib import metadata
from pathlib import Path

import memsearch
from conftest import memsearch_exe, run_memsearch as run

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
DIST = PYPROJECT["project"]["name"]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return canonical(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group(0))


def test_the_distribution_is_not_the_other_memsearch():
    # "memsearch" on PyPI is another project; the import name and command stay ours.
    assert DIST == "memsearch-fts"
    assert PYPROJECT["project"]["scripts"] == {"memsearch": "memsearch.entry:entry"}
    assert metadata.version(DIST) == memsearch.__version__


def test_version_option_prints_the_installed_version():
    out = run("--version")
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == f"memsearch (memsearch-fts) {metadata.version(DIST)}\n"


def test_status_reports_the_version(tree, tmp_path):
    out = run("status", "--root", str(tree), "--db", str(tmp_path / "db"), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["version"] == metadata.version(DIST)
    text = run("status", "--root", str(tree), "--db", str(tmp_path / "db")).stdout
    assert "\nversion:" in text and text.rstrip().endswith(metadata.version(DIST))


def test_mcp_server_info_carries_the_version(tree, tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=memsearch_exe(), env=dict(os.environ),
                                   args=["mcp", "--root", str(tree), "--db", str(tmp_path / "db")])

    async def main():
        with open(tmp_path / "server-stderr.log", "w") as errlog:
            # The server's stderr goes to a file (the oldest 1.x clients cannot redirect it).
            redirect = {"errlog": errlog} if "errlog" in inspect.signature(stdio_client).parameters else {}
            async with stdio_client(params, **redirect) as (read, write):
                async with ClientSession(read, write) as session:
                    return await asyncio.wait_for(session.initialize(), 60)

    info = asyncio.run(main()).model_dump(by_alias=True, mode="json")["serverInfo"]  # SDK 1.x and 2.x alike
    assert (info["name"], info["version"]) == ("memsearch", metadata.version(DIST))


def test_the_changelog_starts_with_this_version():
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## (\S+) — (\d{4}-\d{2}-\d{2})$", text, re.MULTILINE)
    assert first is not None and first.group(1) == memsearch.__version__


# pip install X, pipx install X, uv tool install X, uv pip install X: X as written.
# Each argument follows a blank, so "pip install 'x[mcp]'." ends at the quote.
INSTALL = re.compile(r"\b(?:pip|pipx|uv tool|uv pip) install((?:[ \t]+(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"`&|;#)]+))+)")
ARGUMENT = re.compile(r"'[^']*'|\"[^\"]*\"|\S+")


def install_targets(text: str) -> list[str]:
    targets = []
    for match in INSTALL.finditer(text):
        for word in ARGUMENT.findall(match.group(1)):
            word = word.strip("'\"")
            if not word.startswith("-"):
                targets.append(word)
    return targets


def documents() -> list[Path]:
    docs = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "bench").glob("*.md")),
            *sorted((REPO / "docs").glob("*.md"))]
    return docs + sorted((REPO / "memsearch").glob("*.py")) + sorted((REPO / "bench").glob("*.py"))


def test_install_lines_name_this_distribution_and_its_extras():
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    named = []
    for path in documents():
        for target in install_targets(path.read_text(encoding="utf-8")):
            base, _, extra = target.partition("[")
            if base in (".", DIST):
                assert set(extra.rstrip("]").split(",")) - {""} <= extras, (path.name, target)
                named.append(base)
            else:
                # Anything else must be another project, never our old name.
                assert canonical(base) != "memsearch", (path.name, target)
    assert DIST in named and "." in named


def test_install_targets_are_read_as_written():
    line = "pip install -e '.[bench]' PyStemmer   # tantivy, bm25s"
    assert install_targets(line) == [".[bench]", "PyStemmer"]
    line = "pipx install memsearch-fts; (uv tool install 'memsearch-fts[mcp]'). `pip install 'memsearch[mcp]'`"
    assert install_targets(line) == ["memsearch-fts", "memsearch-fts[mcp]", "memsearch[mcp]"]


# tomllib is stdlib from 3.11 (on 3.10 settings.py falls back to the declared tomli).
STDLIB = sys.stdlib_module_names | {"tomllib"}


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level modules memsearch/ imports that are not the standard library."""
    found: dict[str, set[str]] = {}
    for path in (REPO / "memsearch").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                # _-prefixed: CPython's private accelerators (_sha2), never on PyPI.
                if top != "memsearch" and top not in STDLIB and not top.startswith("_"):
                    found.setdefault(top, set()).add(path.name)
    return found


def _shipping(module: str) -> set[str]:
    """The installed distributions whose files hold ``module`` (3.10's
    packages_distributions() reads only top_level.txt, which some wheels
    lack), else the module's own name."""
    found = set()
    for dist in metadata.distributions():
        if any(f.parts[0] in (module, f"{module}.py") for f in dist.files or ()):
            found.add(canonical(dist.metadata["Name"]))
    return found or {canonical(module)}


def test_dependencies_are_what_the_package_imports():
    runtime = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    mcp_extra = {requirement_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["mcp"]}
    providers = metadata.packages_distributions()
    imported = {}
    for module, files in _third_party_imports().items():
        dists = {canonical(d) for d in providers.get(module, [])} or _shipping(module)
        imported[module] = dists
        # mcp_server.py is the [mcp] extra's; every other import is a runtime dependency.
        declared = runtime | mcp_extra if files == {"mcp_server.py"} else runtime
        assert dists & declared, f"{module} (imported by {sorted(files)}) is not declared"
    used = set().union(*imported.values())
    assert runtime <= used, f"declared but never imported: {sorted(runtime - used)}"


def test_the_license_ships_with_the_distribution():
    """pyproject says MIT: the text is at the top of the repo, in the sdist's list and in the
    installed distribution's metadata (.ci/run checks the built sdist and wheel themselves)."""
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}
    assert "LICENSE" in PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    files = [f.name for f in metadata.distribution(DIST).files]
    assert "LICENSE" in files, files
    assert "License :: OSI Approved :: MIT License" in metadata.metadata(DIST).get_all("Classifier")


def test_classifiers_name_the_pythons_we_test():
    """The Pythons in the classifiers are requires-python's floor up to what .ci/run runs."""
    classifiers = PYPROJECT["project"]["classifiers"]
    named = sorted(c.rsplit(" ", 1)[1] for c in classifiers
                   if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    ci = re.search(r"^for minor in ([\d. ]+); do", (REPO / ".ci" / "run").read_text(), re.MULTILINE).group(1).split()
    assert named == ci and PYPROJECT["project"]["requires-python"] == f">={ci[0]}"
