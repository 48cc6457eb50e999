"""Poison files: what one hostile memory file costs to index.

Each case is a root with one good file and one poison file (at most the 2 MB
file cap). `memsearch index` runs in a process of its own, once on the good
file alone and once with the poison beside it; the difference in CPU time
and peak RSS is what the poison file cost. The good file must stay
searchable. Target: under 1 s of CPU and 50 MB of RSS per file.

    python bench/hostile_poison.py     (or, with every other attack, bench/hostile.py)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CAP = 2_000_000  # memsearch's max_file_bytes


# The poison files' generators; tests/test_poison.py uses them too. The body
# is one word no good file holds, so a test can find the poison file by it.
BODY = "poisonbody"


def nested(depth: int) -> str:
    return "---\nname: deep\ndescription: " + "[" * depth + "x" + "]" * depth + f"\n---\n{BODY}\n"


def alias_bomb(levels: int, width: int) -> str:
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "---\n" + "\n".join(lines) + f"\nname: bomb\ndescription: *a{levels}\n---\n{BODY}\n"


def merge_bomb(levels: int, width: int, keys: int = 2) -> str:
    lines = ["m0: &m0 {" + ", ".join(f"k{j}: v" for j in range(keys)) + "}"]
    lines += [f"m{i}: &m{i} {{<<: [{','.join([f'*m{i - 1}'] * width)}]}}" for i in range(1, levels + 1)]
    return "---\n" + "\n".join(lines) + f"\nname: merge\n---\n{BODY}\n"


def fill(unit: str, head: str = "") -> str:
    return head + unit * ((CAP - len(head.encode())) // len(unit.encode()))


CASES = {
    "nested 600 (1.3 KB)": lambda: nested(600),
    "nested 30k (60 KB block)": lambda: nested(30_000),
    "nested 990k (2 MB block)": lambda: nested(990_000),
    "alias bomb 8x9 (435 B)": lambda: alias_bomb(8, 9),
    "alias bomb 9x9": lambda: alias_bomb(9, 9),
    "alias chain 2000x2 (fills the cap)": lambda: alias_bomb(2000, 2),
    "merge bomb 8x9": lambda: merge_bomb(8, 9),
    "64 KB block of 6k aliases": lambda: "---\na: &a x\nb: [" + ",".join(["*a"] * 6000) + "]\n---\nbody\n",
    "2 MB scalar description": lambda: "---\nname: n\ndescription: \"" + "y" * (CAP - 100) + "\"\n---\nb\n",
    "2 MB of one-letter words": lambda: fill("a "),
    "2 MB of CJK (segmented)": lambda: fill("東京の天気"),
    "2 MB one token": lambda: fill("x"),
    "2 MB one full-width token": lambda: fill("\uff41", f"{BODY} "),
    "2 MB run of combining marks (mixed order)": lambda: fill("\u05b3\u05b2\u05b1\u05b0", f"{BODY} \u05d0"),
    "2 MB one line of { (JSON-like)": lambda: fill("{},", f"{BODY} "),
    "2 MB unclosed fence": lambda: fill("key: value\n", "---\n"),
}

GOOD = "---\nname: good\ndescription: the port\n---\nPostgreSQL listens on 5433\n"


def _index(root: str, db: str) -> tuple[float, float, str]:
    """CPU seconds and peak RSS (MB) of one `memsearch index` process."""
    exe = os.path.join(os.path.dirname(sys.executable), "memsearch")
    wrapper = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
               "u = resource.getrusage(resource.RUSAGE_CHILDREN);"
               "print(u.ru_utime + u.ru_stime, u.ru_maxrss / 1024, r.returncode, repr(r.stdout[-300:]))")
    out = subprocess.run([sys.executable, "-c", wrapper, exe, "index", "--root", root, "--db", db],
                         capture_output=True, text=True, check=True).stdout.split(" ", 3)
    return float(out[0]), float(out[1]), out[3]


def _query_ok(root: str, db: str) -> bool:
    exe = os.path.join(os.path.dirname(sys.executable), "memsearch")
    run = subprocess.run([exe, "query", "postgresql", "--root", root, "--db", db, "--json"],
                         capture_output=True, text=True)
    return run.returncode == 0 and "good.md" in run.stdout


def attack_poison_files() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        base_root = os.path.join(d, "base")
        os.makedirs(base_root)
        with open(os.path.join(base_root, "good.md"), "w") as f:
            f.write(GOOD)
        base = min((_index(base_root, os.path.join(d, f"base{i}.db")) for i in range(3)), key=lambda r: r[0])
        for i, (case, make) in enumerate(CASES.items()):
            root = os.path.join(d, f"r{i}")
            os.makedirs(root)
            with open(os.path.join(root, "good.md"), "w") as f:
                f.write(GOOD)
            text = make()
            with open(os.path.join(root, "poison.md"), "w") as f:
                f.write(text)
            cpu, rss, _ = _index(root, os.path.join(d, f"r{i}.db"))
            rows.append({"case": case, "bytes": len(text.encode()), "cpu_s": cpu - base[0],
                         "rss_mb": rss - base[1], "good_found": _query_ok(root, os.path.join(d, f"r{i}.db"))})
    return rows


def main() -> None:
    rows = attack_poison_files()
    print("| poison file | size | extra CPU (s) | extra peak RSS (MB) | good file found |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['bytes']:,} B | {r['cpu_s']:.3f} | {r['rss_mb']:.1f} | {r['good_found']} |")
    worst_cpu = max(r["cpu_s"] for r in rows)
    worst_rss = max(r["rss_mb"] for r in rows)
    print(f"\nworst: {worst_cpu:.3f} s CPU (target < 1), {worst_rss:.1f} MB RSS (target < 50);"
          f" good file found in {sum(r['good_found'] for r in rows)}/{len(rows)}")


if __name__ == "__main__":
    main()
