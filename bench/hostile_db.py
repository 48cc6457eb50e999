"""Hostile files for `memsearch context`, hostile --db files and an unusable
index (issue 14, items 10-13): each attack returns a dict of figures.

    python bench/hostile_db.py

Every run goes through the installed console script, in a child process
whose own time and peak RSS (os.wait4) are measured. A child that has not
answered after HANG_S is killed and reported as hung. bench/hostile.py runs
them with the other attacks.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import memsearch_exe  # noqa: E402

HANG_S = 60.0


def run(*args, env=None) -> dict:
    """One memsearch process: exit code, seconds, peak RSS (MiB), output."""
    started = time.perf_counter()
    proc = subprocess.Popen([*memsearch_exe(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    guard = threading.Timer(HANG_S, proc.kill)
    guard.start()
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
    reader.start()
    out = proc.stdout.read()
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)
    guard.cancel()
    proc.stdout.close()
    proc.stderr.close()
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    return {"exit": code, "hung": code == -signal.SIGKILL, "seconds": round(time.perf_counter() - started, 3),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "stdout": out.decode(errors="replace"),
            "stderr": err[0].decode(errors="replace")}


def _figures(result: dict, **extra) -> dict:
    return {k: v for k, v in result.items() if k not in ("stdout", "stderr")} | extra


def _tree(folder: Path) -> Path:
    root = folder / "memory"
    (root / "global" / "user").mkdir(parents=True)
    (root / "global" / "user" / "a.md").write_text("A walrus note about pgbouncer.\n")
    return root


# -- memsearch context (item 10) ----------------------------------------------------------

def attack_context_fifo() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        os.mkfifo(Path(tmp) / "MEMORY.md")
        r = run("context", tmp)
        return _figures(r, output_bytes=len(r["stdout"]))


def attack_context_dev_zero() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "MEMORY.md").symlink_to("/dev/zero")
        r = run("context", tmp)
        return _figures(r, output_bytes=len(r["stdout"]))


def attack_context_200mb() -> dict:
    """A real 200 MB index (written out, not sparse): one-line entries."""
    with tempfile.TemporaryDirectory() as tmp:
        line = b"- [Entry](entry.md) " + b"x" * 79 + b"\n"  # 100 bytes
        with open(Path(tmp) / "MEMORY.md", "wb") as f:
            block = line * 10_000
            for _ in range(200 * (1 << 20) // len(block)):
                f.write(block)
        r = run("context", tmp)
        return _figures(r, file_mib=round(os.path.getsize(Path(tmp) / "MEMORY.md") / (1 << 20)),
                        output_chars=len(r["stdout"]))


def attack_context_unclosed_comments() -> dict:
    """1 MB of '<!--' lines: each one looked for its '-->' to the end (quadratic)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "MEMORY.md").write_text("<!--\n" * 200_000)
        return _figures(run("context", tmp))


# -- --db files that are not our index (item 11, item 14's /dev/null) --------------------

def _foreign_files(folder: Path) -> list[Path]:
    def make(name, *statements, wal=False):
        conn = sqlite3.connect(folder / name, isolation_level=None)
        if wal:
            conn.execute("PRAGMA journal_mode = WAL")
        for statement in statements:
            conn.execute(statement)
        conn.close()
        return folder / name

    files = [
        make("view-only.db", "CREATE VIEW v AS SELECT 1"),
        make("user-version-7.db", "PRAGMA user_version = 7"),
        make("own-memory-fts.db", "CREATE VIRTUAL TABLE memory_fts USING fts5(body)"),
        make("foreign-wal.db", "CREATE TABLE t (x)", "INSERT INTO t VALUES (1)", wal=True),
        make("other-app-id.db", "PRAGMA application_id = 42", "CREATE TABLE memory_fts (x)"),
    ]
    newer = folder / "memsearch-newer-rollback.db"
    conn = sqlite3.connect(newer, isolation_level=None)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from memsearch import migrate

    migrate.migrate(conn)
    version = migrate.latest_version() + 1
    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, 'future')", (version,))
    conn.execute(f"PRAGMA user_version = {version}")
    conn.close()
    text = folder / "not-sqlite.db"
    text.write_text("my own notes\n" * 100)
    return [*files, newer, text]


def _state(folder: Path) -> dict:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def attack_refused_db_files() -> dict:
    commands = (["query", "walrus"], ["index"], ["status"], ["doctor"], ["doctor", "--fix"])
    with tempfile.TemporaryDirectory() as tmp:
        root = _tree(Path(tmp))
        folder = Path(tmp) / "mine"
        folder.mkdir()
        files = _foreign_files(folder)
        before = _state(folder)
        runs, one_line, max_s = 0, 0, 0.0
        for db in files:
            for command in commands:
                r = run(*command, "--root", str(root), "--db", str(db))
                runs += 1
                max_s = max(max_s, r["seconds"])
                one_line += r["exit"] != 0 and (command[0] == "doctor" or r["stderr"].count("\n") == 1)
        after = _state(folder)
        identical = sum(before[name] == after.get(name) for name in before)
        return {"files": len(files), "byte_identical": identical, "new_files": len(set(after) - set(before)),
                "runs": runs, "refused_cleanly": one_line, "max_seconds": round(max_s, 3)}


def attack_db_dev_null() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        r = run("query", "walrus", "--root", str(_tree(Path(tmp))), "--db", "/dev/null")
        return _figures(r, message=r["stderr"].strip())


# -- doctor on an index no query can use (item 12) ----------------------------------------

def attack_doctor_unusable_index() -> dict:
    """The index folder made immutable (root: chattr +i) or read-only."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _tree(Path(tmp))
        folder = Path(tmp) / "frozen"
        folder.mkdir()
        db = str(folder / "index.db")
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
                return {"skipped": "chattr +i not permitted here"}
            undo = ["chattr", "-i", str(folder)]
        else:
            folder.chmod(0o555)
            undo = ["chmod", "755", str(folder)]
        try:
            query = run("query", "walrus", "--root", str(root), "--db", db)
            doctor = run("doctor", "--root", str(root), "--db", db)
            fixed = run("doctor", "--fix", "--root", str(root), "--db", db, "--json")
        finally:
            subprocess.run(undo, check=True)
        return {"query_exit": query["exit"], "doctor_exit": doctor["exit"], "doctor_fix_exit": fixed["exit"],
                "doctor_says_healthy": doctor["stdout"].rstrip().endswith("healthy"),
                "doctor_fix_ok": json.loads(fixed["stdout"])["ok"] if fixed["stdout"] else None}


# -- cookies of killed queries (item 13) --------------------------------------------------

def attack_stranded_cookies() -> dict:
    """Cookies a killed query left (aged past the bound) beside a dead
    watcher's row: what one query leaves of them."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _tree(Path(tmp))
        db = str(Path(tmp) / "index.db")
        watcher = subprocess.Popen([*memsearch_exe(), "watch", "--root", str(root), "--db", db],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + HANG_S
            while time.monotonic() < deadline:
                status = run("status", "--root", str(root), "--db", db, "--json")
                if status["stdout"] and json.loads(status["stdout"])["watcher"] == "ready":
                    break
                time.sleep(0.1)
        finally:
            watcher.kill()
            watcher.wait()
        old = time.time() - 3600
        for i in range(100):
            path = root / f".memsearch-cookie-999999-{i}-dead"
            path.touch()
            os.utime(path, (old, old))
        r = run("query", "walrus", "--root", str(root), "--db", db)
        left = [n for n in os.listdir(root) if n.startswith(".memsearch-cookie-")]
        return _figures(r, stranded=100, left_after_one_query=len(left))


ATTACKS = [attack_context_fifo, attack_context_dev_zero, attack_context_200mb, attack_context_unclosed_comments,
           attack_refused_db_files, attack_db_dev_null, attack_doctor_unusable_index, attack_stranded_cookies]


def main() -> None:
    for attack in ATTACKS:
        figures = attack()
        print(f"{attack.__name__[len('attack_'):]:<26} " + ", ".join(f"{k}={v}" for k, v in figures.items()),
              flush=True)


if __name__ == "__main__":
    main()
