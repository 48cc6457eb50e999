"""The low items of issue 29 on the memory side: one-line usage errors, doctor
on nested instruction files, memory_read reading what the index reads, roots
whose folder name is not UTF-8, unparseable MCP requests."""

import pytest

from conftest import run_memsearch, write


@pytest.mark.parametrize("args", [["query", "--bogus", "x"], ["nope"], ["query"], ["query", "x", "--limit", "0"],
                                  ["index", "--root"], ["history", "x", "--role", "nobody"]])
def test_usage_errors_are_one_line(args):
    run = run_memsearch(*args)
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("Error: "), run.stderr


def test_doctor_on_nested_instruction_files_finds_them_and_fix_clears_real_problems(tmp_path):
    src = tmp_path / "src"
    write(src, "lib/CLAUDE.md", "top\n")
    write(src, "lib/pkg/a/AGENTS.md", "nested quokka\n")
    db = tmp_path / "db"
    assert run_memsearch("index", "--root", f"repos={src}", "--db", db).returncode == 0
    checked = run_memsearch("doctor", "--root", f"repos={src}", "--db", db)
    assert checked.returncode == 0, checked.stdout
    write(src, "lib/pkg/b/CLAUDE.md", "another nested one\n")  # a real problem: not indexed yet
    checked = run_memsearch("doctor", "--root", f"repos={src}", "--db", db)
    assert checked.returncode == 1 and "1 files missing from the index (lib/pkg/b/CLAUDE.md)" in checked.stdout
    fixed = run_memsearch("doctor", "--root", f"repos={src}", "--db", db, "--fix")
    assert fixed.returncode == 0, fixed.stdout
    assert run_memsearch("doctor", "--root", f"repos={src}", "--db", db).returncode == 0
