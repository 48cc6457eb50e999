import posixpath
import unicodedata
from pathlib import PurePosixPath

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memsearch.errors import InvalidArgument, MemsearchError
from memsearch.write_gate import SENSITIVE_SEGMENTS, WriteDenied, check_write

WT = "/work/repo"
ROOT = "/work/repo/.mimocode/memory"
SANDBOX = "/work/repo/.mimocode"
CTX = dict(memory_root=ROOT, worktree=WT, project_id="p1", session_id="s1")
# Memory outside the worktree, under a directory that is itself sensitive:
# only the part below the root is judged.
OUT = dict(memory_root="/home/dev/.claude/memory", worktree=WT, project_id="p1", session_id="s1")
WIN = dict(memory_root="C:\\Users\\dev\\repo\\.mimocode\\memory", worktree="C:\\Users\\dev\\repo",
           project_id="p1", session_id="s1")

M = ".mimocode/memory/"  # the memory root, relative to the worktree
R = ROOT + "/"
CW = "checkpoint-writer"
T3 = dict(task_id="T3")
OFF = dict(write_enabled=False)

# (agent, target, extra context, expected): a path is allowed and returned,
# any other expectation is the rule code of the refusal.
CASES = [
    # Rule 1: sandbox of the system agents; resolved paths, not prefixes.
    (CW, M + "projects/p1/MEMORY.md", {}, R + "projects/p1/MEMORY.md"),
    (CW, "src/app.py", {}, "sandbox"),
    (CW, "/etc/passwd", {}, "sandbox"),
    (CW, M + "../../src/x.md", {}, "sandbox"),
    (CW, ".mimocode/notes.md", {}, "sandbox"),
    (CW, "/work/repo/.mimocode/memory-evil/projects/p1/MEMORY.md", {}, "sandbox"),
    (CW, M + "sessions/s1/../../../../../../etc/cron.d/x.md", {}, "sandbox"),
    ("Checkpoint-Writer", "src/app.py", {}, "sandbox"),
    ("\uff43heckpoint-writer", "src/app.py", {}, "sandbox"),
    # Invisible characters, dashes and _ fold too: a look-alike name is not the main agent.
    ("checkpoint-writer\u200b", "/home/me/.bashrc", {}, "sandbox"),
    ("dream\xad", "/home/me/.bashrc", {}, "sandbox"),
    ("\u200bdistill", "/home/me/.bashrc", {}, "sandbox"),
    ("checkpoint\u2010writer", "src/app.py", {}, "sandbox"),
    ("checkpoint_writer", "src/app.py", {}, "sandbox"),
    ("dream", ".mimocode/dream/state.json", {}, SANDBOX + "/dream/state.json"),
    ("distill", ".mimocode/distill.md", {}, SANDBOX + "/distill.md"),
    ("dream", ".mimocode/../src/x.ts", {}, "sandbox"),
    ("dream", "/work/repo/.mimocode-evil/x.md", {}, "sandbox"),
    ("dream", "/work/repo/.mimocode", {}, "sandbox"),
    ("dream", ".MIMOCODE/x.json", {}, "sandbox"),
    ("distill", "src/x.ts", {}, "sandbox"),
    ("dream", M + "global/team/facts.md", {}, R + "global/team/facts.md"),
    ("main", "src/app.py", {}, WT + "/src/app.py"),
    ("main", "/tmp/scratch.txt", {}, "/tmp/scratch.txt"),
    ("main", "../other/README.md", {}, "/work/other/README.md"),
    # Rule 2: writes switched off, for every path in (or folding into) the tree.
    ("main", M + "sessions/s1/notes.md", OFF, "writes-off"),
    (CW, M + "projects/p1/MEMORY.md", OFF, "writes-off"),
    ("main", M + "sessions/s1/../s1/notes.md", OFF, "writes-off"),
    ("main", "/work/repo/.mimocode/MEMORY/sessions/s1/notes.md", OFF, "writes-off"),
    ("main", M + "global/x/../../evil.sh", OFF, "writes-off"),
    ("main", "src/app.py", OFF, WT + "/src/app.py"),
    ("dream", ".mimocode/state.json", OFF, SANDBOX + "/state.json"),
    # Rule 3: shape.
    ("main", M + "notes.md", {}, "shape"),
    ("main", M + "sessions/notes.md", {}, "shape"),
    ("main", M + "scratch/s1/notes.md", {}, "shape"),
    ("main", M + "Sessions/s1/notes.md", {}, "shape"),
    ("main", M + "projects/p1/deep/x.md", {}, "shape"),
    ("main", M + "global/team/conventions.md", {}, R + "global/team/conventions.md"),
    ("main", M + "projects/p1/MEMORY.md", {}, R + "projects/p1/MEMORY.md"),
    ("main", M + "sessions/s2/notes.md", {}, R + "sessions/s2/notes.md"),
    ("main", M + "sessions/s1/tasks.md", {}, R + "sessions/s1/tasks.md"),
    # Rule 4: checkpoint-writer whitelist, in its own project and session.
    (CW, M + "projects/p1/memory-2024.md", {}, R + "projects/p1/memory-2024.md"),
    (CW, M + "projects/p1/notes.md", {}, "checkpoint-whitelist"),
    (CW, M + "projects/p1/memory.md", {}, "checkpoint-whitelist"),
    (CW, M + "projects/p2/MEMORY.md", {}, "checkpoint-whitelist"),
    (CW, M + "sessions/s1/checkpoint.md", {}, R + "sessions/s1/checkpoint.md"),
    (CW, M + "sessions/s1/checkpoint-3.md", {}, R + "sessions/s1/checkpoint-3.md"),
    (CW, M + "sessions/s1/notes.md", {}, R + "sessions/s1/notes.md"),
    (CW, M + "sessions/s1/MEMORY.md", {}, "checkpoint-whitelist"),
    (CW, M + "sessions/s2/checkpoint.md", {}, "checkpoint-whitelist"),
    (CW, M + "global/team/MEMORY.md", {}, "checkpoint-whitelist"),
    (CW, M + "sessions/s1/tasks/T3.1.2/progress.md", {},
     R + "sessions/s1/tasks/T3.1.2/progress.md"),
    (CW, M + "sessions/s1/tasks/3/progress.md", {}, "checkpoint-whitelist"),
    (CW, M + "sessions/s1/tasks/T3./progress.md", {}, "ambiguous"),
    (CW, M + "sessions/s1/tasks/T\u0663/progress.md", {}, "checkpoint-whitelist"),
    (CW, M + "sessions/s1/tasks/T3/sub/x.md", {}, "checkpoint-whitelist"),
    (CW, M + "sessions/s1/checkpoint.md@", {}, "extension"),
    # Rule 5: task folders belong to the sub-agent bound to the task.
    ("main", M + "sessions/s1/tasks/T3/progress.md", {}, "task-folder"),
    ("dream", M + "sessions/s1/tasks/T3/x.md", {}, "task-folder"),
    ("general", M + "sessions/s1/tasks/T3/progress.md", T3, R + "sessions/s1/tasks/T3/progress.md"),
    ("general", M + "sessions/s1/tasks/T3/logs/day1.md", T3, R + "sessions/s1/tasks/T3/logs/day1.md"),
    ("general", M + "sessions/s1/tasks/T4/progress.md", T3, "task-folder"),
    ("general", M + "sessions/s1/tasks/T3.1/progress.md", T3, "task-folder"),
    ("general", M + "sessions/s1/tasks/T3/progress.md", dict(task_id="T3.1"), "task-folder"),
    ("general", M + "sessions/s2/tasks/T3/progress.md", T3, "task-folder"),
    ("general", M + "sessions/s1/tasks/T3/../T4/progress.md", T3, "task-folder"),
    ("general", M + "sessions/s1/tasks/x.md", T3, "task-folder"),
    ("general", M + "sessions/s1/tasks/t3/x.md", T3, "task-folder"),
    ("general", M + "sessions/s1/notes.md", T3, R + "sessions/s1/notes.md"),
    # Rule 6: sensitive segments, after normalization.
    ("main", M + "sessions/s1/.git/notes.md", {}, "sensitive"),
    ("main", M + "projects/p1/hooks/x.md", {}, "sensitive"),
    ("main", M + "sessions/.GIT/x.md", {}, "sensitive"),
    ("main", M + "global/Skills/x.md", {}, "sensitive"),
    ("main", M + "projects/p1/agents.md", {}, R + "projects/p1/agents.md"),
    ("main", "src/.git/hooks/pre-commit", {}, "sensitive"),
    ("main", ".husky/pre-commit", {}, "sensitive"),
    ("main", ".github/workflows/ci.yml", {}, "sensitive"),
    ("main", "web/Node_Modules/x.js", {}, "sensitive"),
    ("main", ".claude/commands/evil.md", {}, "sensitive"),
    ("main", ".mimocode/x.md", {}, "sensitive"),
    ("main", ".env", {}, "sensitive"),
    ("main", ".env.example", {}, WT + "/.env.example"),
    ("main", "/home/dev/.ssh/authorized_keys", {}, "sensitive"),
    ("main", "src\\.git\\config", {}, "sensitive"),
    ("main", "src/.g\u0131t/config", {}, "sensitive"),  # NTFS upper-cases ı to I
    # cp1252's best fit drops marks and makes some letters ASCII: .ĝit is .git, .σsh .ssh, .e∩√ .env.
    ("main", "src/.\u011dit/config", {}, "sensitive"),
    ("main", "/home/dev/.\u03c3sh/authorized_keys", {}, "sensitive"),
    ("main", "src/.e\u2229\u221a", {}, "sensitive"),
    ("dream", ".mimocode/hooks/x.sh", {}, "sensitive"),
    ("dream", ".mimocode/.mimocode/x", {}, "sensitive"),
    # Unicode and Windows tricks: refused, never silently repaired.
    ("main", M + "sessions/.gi\u200dt/x.md", {}, "ambiguous"),
    ("main", M + "sessions/s1/\uff0egit/x.md", {}, "ambiguous"),
    ("main", M + "sessions/s1/\u202edm.exe", {}, "ambiguous"),
    ("main", M + "sessions/s1/notes.md\u200b", {}, "ambiguous"),
    ("main", M + "sessions/s1/\u200fnotes.md", {}, "ambiguous"),
    ("main", "src/.git./config", {}, "ambiguous"),
    ("main", "src/.git /config", {}, "ambiguous"),
    ("main", "src/.git::$INDEX_ALLOCATION/config", {}, "ambiguous"),
    ("main", "src/GIT~1/config", {}, "ambiguous"),
    ("main", "~/.ssh/authorized_keys", {}, "ambiguous"),
    ("main", M + "sessions/s1/\uff0e\uff0e/\uff0e\uff0e/x.md", {}, "ambiguous"),
    ("main", M + "sessions/s1\uff0fx.md", {}, "ambiguous"),
    ("main", M + "sessions/s1/..\u00a5..\u00a5x.md", {}, "ambiguous"),
    # cp1252's best fit (bestfit1252.txt): set minus is a backslash, ratio a ':', the tilde operator a '~'.
    ("dream", ".mimocode/..\u2216..\u2216..\u2216etc\u2216cron.d\u2216x", {}, "ambiguous"),
    (CW, M + "sessions/s1/checkpoint-x\u2216..\u2216..\u2216..\u2216..\u2216.git\u2216hooks\u2216x.md", {},
     "ambiguous"),
    ("main", "src/.git\u2236\u2236$INDEX_ALLOCATION/config", {}, "ambiguous"),
    ("main", "src/GIT\u223c1/config", {}, "ambiguous"),
    ("main", M + "sessions/s1/CON.md", {}, "ambiguous"),
    ("main", M + "sessions/s1/notes.md -> /etc/passwd", {}, "ambiguous"),
    ("main", "/work/repo/.mimocode/MEMORY/sessions/s1/notes.md", {}, "ambiguous"),
    ("main", M + "sessions/s1/caf\u0065\u0301.md", {}, R + "sessions/s1/caf\u0065\u0301.md"),
    ("main", M + "sessions/s1/\u7b14\u8bb0.md", {}, R + "sessions/s1/\u7b14\u8bb0.md"),
    # Rule 7: only .md in the memory tree.
    ("main", M + "sessions/s1/notes.txt", {}, "extension"),
    ("main", M + "sessions/s1/run.sh", {}, "extension"),
    ("main", M + "sessions/s1/.md", {}, "extension"),
    ("main", M + "sessions/s1/notes.md:evil", {}, "ambiguous"),
    ("main", M + "sessions/s1/notes.md.", {}, "ambiguous"),
    ("main", M + "sessions/s1/x.sh:y.md", {}, "ambiguous"),
    ("main", M + "sessions/s1/NOTES.MD", {}, R + "sessions/s1/NOTES.MD"),
    # Hidden names: the indexer never reads them, so the note would be lost.
    ("main", M + "sessions/s1/.notes.md", {}, "shape"),
    ("main", M + "sessions/.s1/notes.md", {}, "shape"),
    ("main", M + "sessions/s1/.md.md", {}, "shape"),
    ("general", M + "sessions/s1/tasks/T3/.logs/day1.md", T3, "shape"),
    (CW, M + "sessions/s1/tasks/T3/.progress.md", {}, "shape"),
    # Traversal, absolute paths and malformed targets.
    ("main", ROOT + "/../memory/sessions/s1/notes.md", {}, R + "sessions/s1/notes.md"),
    ("main", ROOT + "/sessions/s1//./notes.md", {}, R + "sessions/s1/notes.md"),
    ("main", "/../../.." + ROOT + "/sessions/s1/notes.md", {}, R + "sessions/s1/notes.md"),
    ("main", ".mimocode\\memory\\sessions\\s1\\notes.md", {}, R + "sessions/s1/notes.md"),
    ("main", "//server/share/x.md", {}, "invalid"),
    ("main", "\\\\?\\C:\\x.md", {}, "invalid"),
    ("main", "C:x.md", {}, "invalid"),
    ("main", "", {}, "invalid"),
    ("main", "   ", {}, "invalid"),
    ("main", "notes\0.md", {}, "invalid"),
    ("main", M + "sessions/s1/", {}, "invalid"),
    ("main", M + "sessions/s1/..", {}, "invalid"),
    ("main", "/..", {}, "invalid"),
]

OUT_CASES = [
    ("main", "/home/dev/.claude/memory/sessions/s1/notes.md", OUT,
     "/home/dev/.claude/memory/sessions/s1/notes.md"),
    ("main", "/home/dev/.claude/settings.json", OUT, "sensitive"),
    ("main", "/home/dev/.claude/memory/../commands/x.md", OUT, "sensitive"),
    (CW, "/home/dev/.claude/memory-evil/projects/p1/MEMORY.md", OUT, "sandbox"),
    ("dream", ".mimocode/x.md", OUT, SANDBOX + "/x.md"),
    ("main", "c:\\Users\\dev\\repo\\.mimocode\\memory\\sessions\\s1\\notes.md", WIN,
     "C:/Users/dev/repo/.mimocode/memory/sessions/s1/notes.md"),
    ("main", ".mimocode/memory/projects/p1/MEMORY.md", WIN,
     "C:/Users/dev/repo/.mimocode/memory/projects/p1/MEMORY.md"),
    (CW, "D:\\x.md", WIN, "sandbox"),
    ("main", "\\Users\\dev\\repo\\.mimocode\\memory\\sessions\\s1\\tasks\\T9\\x.md", WIN,
     "ambiguous"),
    ("main", "C:\\Users\\dev\\repo\\.MIMOCODE\\memory\\sessions\\s1\\notes.md", WIN, "ambiguous"),
    ("main", ".mimocode/memory/sessions/s1/notes.md", dict(CTX, memory_root=".mimocode/memory"),
     R + "sessions/s1/notes.md"),
    # A drive beside roots without one: relative on POSIX, and Git Bash's /c/...
    # is C:/..., so it was judged outside the memory tree even with writes off.
    ("main", "C:/x.md", {}, "ambiguous"),
    ("main", "c:\\sessions\\s1\\run.sh", {}, "ambiguous"),
    ("main", "C:/home/dev/.local/share/mimocode/memory/sessions/s1/run.sh",
     dict(CTX, memory_root="/c/home/dev/.local/share/mimocode/memory", write_enabled=False), "ambiguous"),
]


def _check(agent, target, extra):
    ctx = {**CTX, **extra}
    return check_write(target, agent=agent, **ctx)


@pytest.mark.parametrize("agent,target,extra,expected", CASES + OUT_CASES)
def test_table(agent, target, extra, expected):
    if expected.startswith("/") or expected[1:3] == ":/":
        assert _check(agent, target, extra) == expected
    else:
        with pytest.raises(WriteDenied) as info:
            _check(agent, target, extra)
        assert info.value.rule == expected, str(info.value)


def test_table_is_large():
    assert len(CASES) + len(OUT_CASES) >= 60


def test_sensitive_segments_are_the_documented_list():
    assert SENSITIVE_SEGMENTS == {
        ".git", "hooks", ".husky", "node_modules", ".vscode", ".idea", ".zcode",
        ".claude", ".mimocode", "skills", "commands", "agents", "plugins",
        ".github", ".gitlab", ".env", ".ssh", ".aws", ".config",
    }


def test_write_denied_is_a_memsearch_error():
    assert issubclass(WriteDenied, MemsearchError)


def test_a_huge_target_is_quoted_short_with_its_file_name():
    with pytest.raises(WriteDenied) as info:
        _check("main", "src/" + "x" * 1_000_000 + "/.git/hooks/pre-commit", {})
    message = str(info.value)
    assert len(message) < 2000 and "pre-commit" in message and "..." in message


def test_writes_off_message_says_retrying_will_not_help():
    with pytest.raises(WriteDenied) as info:
        _check("main", M + "sessions/s1/notes.md", OFF)
    message = str(info.value)
    assert "turned off" in message
    assert "will not help" in message
    assert "searched" in message


def test_shape_message_names_the_canonical_paths():
    with pytest.raises(WriteDenied) as info:
        _check("main", M + "notes.md", {})
    assert R + "projects/p1/MEMORY.md" in str(info.value)
    assert R + "sessions/s1/notes.md" in str(info.value)


def test_task_folder_message_names_the_own_folder():
    with pytest.raises(WriteDenied) as info:
        _check("general", M + "sessions/s1/tasks/T4/x.md", T3)
    assert R + "sessions/s1/tasks/T3/" in str(info.value)


def test_ambiguous_message_suggests_the_plain_name_and_hides_no_characters():
    with pytest.raises(WriteDenied) as info:
        _check("main", M + "sessions/s1/no\u200dtes.md", {})
    message = str(info.value)
    assert "'notes.md'" in message
    assert "\\u200d" in message and "\u200d" not in message


def test_path_objects_are_accepted():
    from pathlib import Path

    got = check_write(Path(ROOT) / "sessions/s1/notes.md", agent="main",
                      memory_root=Path(ROOT), worktree=Path(WT), project_id="p1", session_id="s1")
    assert got == R + "sessions/s1/notes.md"


@pytest.mark.parametrize("change", [
    dict(worktree="repo"),
    dict(worktree="//server/share"),
    dict(memory_root="/mem\0"),
    dict(project_id="p1/../p2"),
    dict(project_id=""),
    dict(session_id=".."),
    dict(session_id="s\u200b1"),
    dict(task_id="3"),
    dict(task_id="T3\n"),
    dict(write_enabled="no"),
    # Unexpanded: joined onto the worktree, the real memory tree was an ordinary folder to the rules.
    dict(memory_root="~/.local/share/mimocode/memory"),
    dict(memory_root="$HOME/.local/share/mimocode/memory"),
    dict(memory_root="%APPDATA%/mimocode/memory"),
])
def test_bad_host_arguments_raise_value_error(change):
    # memsearch's own type, as every library error (it was a bare ValueError)
    with pytest.raises(InvalidArgument):
        check_write("x.md", **{**CTX, "agent": "main", **change})


@pytest.mark.parametrize("change", [dict(worktree="//x" * 100_000), dict(worktree="rel" * 100_000),
                                    dict(memory_root="~" + "x" * 100_000), dict(project_id="a/" * 100_000),
                                    dict(task_id="x" * 100_000)])
def test_a_huge_bad_host_argument_is_quoted_cut(change):
    """The error echoes the argument as every message does (quoted, cut): not 300 KB of it."""
    with pytest.raises(InvalidArgument) as info:
        check_write("x.md", **{**CTX, "agent": "main", **change})
    assert len(str(info.value)) < 300 and str(info.value).endswith("...")


def test_a_target_longer_than_any_path_is_refused_at_once():
    """Each character costs the checks (~1.2 us: 5 MB took 6.4 s); no file has a longer path."""
    with pytest.raises(WriteDenied) as info:
        check_write("a/" * 3_000_000 + "x.md", agent="main", **CTX)
    assert info.value.rule == "invalid" and "longer than 4096" in str(info.value)


@pytest.mark.parametrize("target", [b"x.md", 3, None])
def test_non_text_target_raises_value_error(target):
    with pytest.raises(InvalidArgument):
        check_write(target, agent="main", **CTX)


# --- properties -------------------------------------------------------------

AGENTS = st.sampled_from(["main", CW, "dream", "distill", "general"])
PLAIN = st.sampled_from([
    "..", ".", "", "sessions", "s1", "s2", "projects", "p1", "global", "tasks", "T3", "T4",
    "notes.md", "MEMORY.md", "checkpoint.md", "memory-1.md", "x.md", "run.sh", "memory",
    ".mimocode", "repo", "work", "etc",
])
TRICKY = st.sampled_from([
    "\uff0e\uff0e", ".git\u200d", "Memory", "notes.md.", "a:b.md", "~", "C:", "\u202e",
    "hooks", ".GIT", "GIT~1", "con.md", "x.md ", "\u0131", "MEMORY.MD",
])
# Mostly plain names, so that allowed paths are common and the rules get
# exercised; some tricks; some arbitrary text.
SEGMENTS = st.one_of(*[PLAIN] * 6, TRICKY, st.text(min_size=1, max_size=6))
PREFIXES = st.sampled_from(["", "/", WT + "/", ROOT + "/", M, SANDBOX + "/", "\\", "C:\\"])
ANYWHERE = st.builds(
    lambda prefix, segs, sep: prefix + sep.join(segs),
    PREFIXES, st.lists(SEGMENTS, min_size=1, max_size=8), st.sampled_from(["/", "\\"]))
IN_TREE = st.builds(
    lambda prefix, scope, scope_id, middle, name: "/".join([prefix + scope, scope_id, *middle, name]),
    st.sampled_from([M, R, ".mimocode\\memory\\"]),
    st.sampled_from(["sessions", "projects", "global", "Sessions"]),
    st.sampled_from(["s1", "s2", "p1"]),
    st.lists(PLAIN, max_size=3),
    st.sampled_from(["notes.md", "MEMORY.md", "checkpoint.md", "memory-1.md", "x.md", "run.sh"]))
TARGETS = st.one_of(ANYWHERE, IN_TREE)


def _resolve(target):
    """Independent oracle: where a permissive host would put target."""
    text = target.replace("\\", "/")
    if text[1:3] == ":/":  # a drive: POSIX's normpath would keep a leading "//", Windows makes it one
        return text[0].upper() + ":/" + posixpath.normpath(text[2:]).lstrip("/")
    return posixpath.normpath(posixpath.join(WT, text))


def _inside(path, base):
    return PurePosixPath(path).is_relative_to(base)


def _gate(target, agent, task_id, write_enabled):
    return check_write(target, agent=agent, task_id=task_id if agent == "general" else None,
                       write_enabled=write_enabled, **CTX)


@settings(max_examples=1000, deadline=None)
@given(TARGETS, AGENTS, st.sampled_from([None, "T3"]), st.booleans())
@example(M + "sessions/s1/../../../../etc/x.md", CW, None, True)
@example(".mimocode/../src/x.ts", "dream", None, True)
@example("C:\\/0", "main", None, False)  # found by hypothesis: C:\/0 is C:/0
def test_allowed_paths_obey_every_rule(target, agent, task_id, write_enabled):
    """Any path, anywhere: denied, or allowed only as _assert_obeys_rules
    says (normalized, where the agent may write, no sensitive segment)."""
    _assert_obeys_rules(target, agent, task_id, write_enabled)


@settings(max_examples=1000, deadline=None)
@given(IN_TREE, AGENTS, st.sampled_from([None, "T3"]), st.sampled_from([True, True, True, False]))
@example(M + "sessions/s1/tasks/T4/notes.md", CW, None, True)  # found by hypothesis: the whitelist allows it
def test_allowed_memory_paths_obey_every_rule(target, agent, task_id, write_enabled):
    """The same rules (_assert_obeys_rules) for paths inside the memory
    tree, the ones most often allowed."""
    _assert_obeys_rules(target, agent, task_id, write_enabled)


def _assert_obeys_rules(target, agent, task_id, write_enabled):
    try:
        got = _gate(target, agent, task_id, write_enabled)
    except WriteDenied:
        return
    parts = PurePosixPath(got).parts
    assert not {"", ".", ".."} & set(parts[1:])
    assert got == _resolve(target)
    in_tree = _inside(got, ROOT)
    if agent == CW:
        assert in_tree
    if agent in ("dream", "distill"):
        assert in_tree or (_inside(got, SANDBOX) and got != SANDBOX)
    if in_tree:
        rel = PurePosixPath(got).relative_to(ROOT).parts
        assert write_enabled
        assert rel[0] in ("global", "projects", "sessions") and rel[-1].lower().endswith(".md")
        assert not any(p.startswith(".") for p in rel)  # the indexer would never read it
        # A task folder is the bound task's, or checkpoint-writer's whitelisted tasks/<TID>/<name>.md.
        assert len(rel) == 3 or rel[:4] == ("sessions", "s1", "tasks", "T3") or (
            agent == CW and rel[:3] == ("sessions", "s1", "tasks") and len(rel) == 5)
    base = ROOT if in_tree else SANDBOX if agent in ("dream", "distill") else WT
    judged = PurePosixPath(got).relative_to(base).parts if _inside(got, base) else parts
    assert not any(p.lower() in SENSITIVE_SEGMENTS for p in judged)
    # Normalization is idempotent: the returned path passes unchanged.
    assert _gate(got, agent, task_id, write_enabled) == got


@settings(max_examples=1000, deadline=None)
@given(TARGETS, st.sampled_from([CW, "dream", "distill"]))
def test_no_path_outside_the_sandbox_is_allowed_to_system_agents(target, agent):
    resolved = _resolve(target)
    allowed_base = ROOT if agent == CW else SANDBOX
    if _inside(resolved, allowed_base):
        return
    with pytest.raises(WriteDenied):
        _gate(target, agent, None, True)


@settings(max_examples=1000, deadline=None)
@given(st.text(), AGENTS, st.booleans())
def test_any_text_is_allowed_or_write_denied(target, agent, write_enabled):
    try:
        got = _gate(target, agent, "T3", write_enabled)
    except WriteDenied as denied:
        assert str(denied).startswith("Refused ")
        return
    assert isinstance(got, str)


def _disguise(name, draw):
    """A spelling of name that some host or file system reads as name."""
    out = "".join(c.upper() if draw(st.booleans()) else c for c in name)
    trick = draw(st.sampled_from(["zw", "bidi", "fullwidth", "dot", "space", "stream", "accent", "none"]))
    pos = draw(st.integers(0, len(out)))
    if trick == "zw":
        out = out[:pos] + draw(st.sampled_from("\u200b\u200c\u200d\u2060\ufeff")) + out[pos:]
    elif trick == "bidi":
        out = out[:pos] + draw(st.sampled_from("\u200e\u200f\u202a\u202e\u2066")) + out[pos:]
    elif trick == "fullwidth":
        out = out.replace(".", "\uff0e") if "." in out else unicodedata.normalize(
            "NFC", "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in out))
    elif trick == "dot":
        out += "." * draw(st.integers(1, 3))
    elif trick == "accent":  # a mark a best-fit conversion drops: ĝ, î
        out = unicodedata.normalize("NFC", out[:pos] + "\u0302" + out[pos:])
    elif trick == "space":
        out += " "
    elif trick == "stream":
        out += ":" + draw(st.sampled_from(["$DATA", "x", ""]))
    return out


@settings(max_examples=500, deadline=None)
@given(st.data(), st.sampled_from(sorted(SENSITIVE_SEGMENTS)), AGENTS,
       st.sampled_from(["src/", M + "sessions/", ".mimocode/", "/home/dev/"]))
def test_disguised_sensitive_segments_are_refused(data, name, agent, prefix):
    disguised = _disguise(name, data.draw)
    with pytest.raises(WriteDenied):
        _gate(f"{prefix}{disguised}/x.md", agent, "T3", True)
