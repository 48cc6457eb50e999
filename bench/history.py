"""Conversation history (issue 16): retrieval, ReadSessionContext and scale.

    python bench/history.py                          # retrieval, oracle, context
    python bench/history.py --parts '' --scale-mb 1024  # the scale run alone
    python bench/history.py --scale-mb 1024          # everything

LongMemEval's sessions become Claude Code transcripts, one JSONL per
session, with the noise a real one has: a summary line, a file snapshot,
meta caveats, system reminders inside user turns, and tool calls with
their results. `--noise full` adds what a live history holds besides
(issue 30): sub-agents (a Task call in the session, the sub-agent's own
transcript under `<session>/subagents/` or, as older versions wrote it,
`agent-*.jsonl` beside the session, its first "user" line the main agent's
prompt) and a last line cut mid-JSON, as a transcript being written ends.

* retrieval: the `_s` subset, each question's haystack its own folder and
  index. `history` (HistoryIndex.search) against tantivy and bm25s
  (bench/engines.py adapters) over the same cleaned messages, read back
  from the history index itself, one document per session (as the
  LongMemEval paper indexes them) and one per message (`-msg`): session
  any@k (an answer session in the first k), all@k (every one: the official
  script's recall_all@k) and R@k (the share of them), and turn-level R@10
  (the share of has_answer turns among the top 10 messages) for message
  rankings. `_abs` questions are skipped, as upstream.
* s_like: `_s` at the oracle's size (the subset has 32 questions): each
  oracle question over its own ~50 sessions, its answer sessions among
  sessions drawn from the subset's haystacks, re-dated to end on its day.
  Not run by default (~5 min with the peers).
* oracle: the 500-question oracle, its sessions pooled into one history
  (each question alone comes with its evidence sessions only), the same
  measures over all of it.
* locomo: LoCoMo's conversations as transcripts, a project each: the
  same measures per project and pooled.
* context: one long session per `_s` question (its answer sessions among
  other haystack sessions, shuffled, LONG_CHARS or more): the share of
  questions whose answer turns all fall inside ReadSessionContext's
  `relevant` result at the default budget, against the session's last
  24,000 characters.
* scale: a synthetic history of about --scale-mb built from the corpus
  and written out to disk (sync) before the build: cold build throughput
  and peak RSS (a child process), database size, query p50 and p90 (and
  the refresh and search p50 apart), the next query after an append to the
  largest transcript (its bytes read and time), and each question as a
  whole process, `memsearch history` against `rg -i -F -c` of its rarest
  word (rg on PATH).

Results go to bench/results/history.md (and .json: a part not run keeps
its last results).
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from engines import Bm25sEngine, TantivyEngine  # noqa: E402
from scale import bytecode_env, memsearch_exe  # noqa: E402

from memsearch import HistoryIndex, session_rank  # noqa: E402
from memsearch.cjk import original  # noqa: E402

# The shared corpora sit beside the checkout (/work/main) or two levels up (a worktree).
CORPORA = next((p / "shared" / "corpora" for p in HERE.parents if (p / "shared" / "corpora").is_dir()),
               Path("/work/shared/corpora"))
S_FILE = CORPORA / "longmemeval" / "longmemeval_s_cleaned.subset36.json"
ORACLE_FILE = CORPORA / "longmemeval" / "longmemeval_oracle.json"
PROJECT = "-home-bench-lme"


def iso(date: str, minute: int) -> str:
    """LongMemEval's '2023/05/30 (Tue) 23:40' plus some minutes, as Claude Code writes times."""
    day, _, clock = date.partition(" (")
    clock = clock.split(") ")[-1]
    y, m, d = day.split("/")
    hh, mm = clock.split(":")
    total = int(hh) * 60 + int(mm) + minute
    return f"{y}-{m}-{d}T{min(total // 60, 23):02d}:{total % 60:02d}:00.000Z"


def write_session(folder: Path, sid: str, date: str, turns: list, rng: random.Random) -> dict:
    """One transcript; returns {turn index: uuid} of every turn."""
    lines = [{"type": "summary", "summary": f"Session {sid[:8]}", "leafUuid": "x"},
             {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {"trackedFileBackups": {}}}]
    uuids = {}
    parent = None
    base = {"sessionId": sid, "cwd": "/home/bench/lme", "gitBranch": "main", "isSidechain": False,
            "userType": "external", "version": "2.0.0"}

    def add(obj):
        nonlocal parent
        obj.update(base, uuid=f"{sid}-{len(lines)}", parentUuid=parent)
        parent = obj["uuid"]
        lines.append(obj)
        return obj["uuid"]

    add({"type": "user", "isMeta": True, "timestamp": iso(date, 0), "message": {"role": "user", "content":
         "Caveat: The messages below were generated by the user while running local commands."}})
    for i, turn in enumerate(turns):
        at = iso(date, i)
        if turn["role"] == "user":
            content = [{"type": "text", "text": turn["content"]}]
            if rng.random() < 0.3:
                content.append({"type": "text", "text": "<system-reminder>Remember the todo list; the user"
                                " may ask about files in the project.</system-reminder>"})
            uuids[i] = add({"type": "user", "timestamp": at, "message": {"role": "user", "content": content}})
        else:
            uuids[i] = add({"type": "assistant", "timestamp": at, "message": {
                "role": "assistant", "model": "claude", "content": [{"type": "text", "text": turn["content"]}]}})
            if rng.random() < 0.25:
                tool = f"toolu_{len(lines)}"
                add({"type": "assistant", "timestamp": at, "message": {"role": "assistant", "model": "claude",
                     "content": [{"type": "tool_use", "id": tool, "name": "Bash",
                                  "input": {"command": "ls -la notes/", "description": "List notes"}}]}})
                add({"type": "user", "timestamp": at, "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tool,
                     "content": "total 8\ndrwxr-xr-x 2 user user 4096 notes\n-rw-r--r-- 1 user user 120 todo.md"}]}})
    cut = live_noise(folder, sid, lines, base) if NOISE == "full" else ""
    with open(folder / f"{sid}.jsonl", "w", encoding="utf-8") as f:
        for obj in lines:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        f.write(cut)
    return uuids


# What write_session adds: "classic" (tool calls, reminders, caveats, a summary), or "full": sub-agents and a
# half-written last line besides (live_noise).
NOISE = "classic"
# --seed: the noise, the `_s`-like haystacks and the other draws from other seeds (0: as published), to see how
# much a figure owes to one draw.
SEED = 0


def seeded(seed: int | str) -> random.Random:
    """The random source a part draws from: ``seed`` moved by SEED."""
    return random.Random(seed if not SEED else f"{seed}+{SEED}" if isinstance(seed, str) else seed + SEED)
# The prompts a main agent writes for a sub-agent: generic work on the project, nothing the user said.
SUBAGENT_PROMPTS = (
    "Search the codebase for every place the configuration file is read and list the paths with line numbers.",
    "Find all TODO and FIXME comments in the project and summarise them by file.",
    "Look through the notes folder for anything about the deployment checklist and report back what is missing.",
    "Run the test suite and tell me which tests fail, with the first lines of each error.",
    "Read the README and the docs folder and explain in a few sentences how the project is built and released.",
    "Check the git log for the last ten commits and summarise what changed and why.",
    "Review the recent changes under src/ for obvious bugs. Do not edit any file; just report.",
    "Explore the repository layout and tell me where the command line entry point and its options are defined.",
)
SUBAGENT_TOOLS = (("Grep", {"pattern": "config", "path": "src"}, "src/app.py:12: config = load_config(path)\n"
                   "src/cli.py:40: from .app import config"),
                  ("Glob", {"pattern": "**/*.md"}, "README.md\ndocs/build.md\nnotes/todo.md"),
                  ("Bash", {"command": "git log --oneline -10", "description": "Recent commits"},
                   "a1b2c3d fix the release script\n9f8e7d6 bump the version"),
                  ("Read", {"file_path": "/home/bench/lme/README.md"}, "1\t# bench\n2\tA small project.\n"))
SUBAGENT_REPORTS = ("Done. I found three places and listed them above with their line numbers.",
                    "Summary: nothing blocking; two small issues, both noted with their files.",
                    "I could not find anything matching that; the closest files are listed above.")


def live_noise(folder: Path, sid: str, lines: list, base: dict) -> str:
    """Sub-agents for some sessions (a Task call and its result appended to ``lines``, each sub-agent's transcript
    written), and the half-written line ending some transcripts, returned (no newline after it). Seeded by the
    session, so the classic noise (write_session's rng) is the same with or without it."""
    rng = seeded(f"live-{sid}")
    at = lines[-1].get("timestamp", "2023-01-01T00:00:00.000Z")
    for n in range(rng.choice((0, 0, 0, 0, 1, 1, 2))):
        agent = f"{rng.getrandbits(28):07x}"
        prompt, report = rng.choice(SUBAGENT_PROMPTS), rng.choice(SUBAGENT_REPORTS)
        tool, parent = f"toolu_task_{agent}", lines[-1]["uuid"]
        lines.append({"type": "assistant", "timestamp": at, **base, "uuid": f"{sid}-task-{n}", "parentUuid": parent,
                      "message": {"role": "assistant", "model": "claude", "content": [{
                          "type": "tool_use", "id": tool, "name": "Task", "input": {
                              "description": " ".join(prompt.split()[:3]),
                              "prompt": prompt, "subagent_type": "general-purpose"}}]}})
        lines.append({"type": "user", "timestamp": at, **base, "uuid": f"{sid}-task-{n}-result",
                      "parentUuid": f"{sid}-task-{n}", "message": {"role": "user", "content": [{
                          "type": "tool_result", "tool_use_id": tool, "content": [
                              {"type": "text", "text": report}, {"type": "text", "text": f"agentId: {agent}"}]}]}})
        side = {**base, "isSidechain": True, "agentId": agent}
        name, call, output = rng.choice(SUBAGENT_TOOLS)
        agent_lines = [
            {"type": "user", "message": {"role": "user", "content": prompt}},
            {"type": "assistant", "message": {"role": "assistant", "model": "claude", "content": [
                {"type": "text", "text": "I'll start by looking at the files involved."},
                {"type": "tool_use", "id": f"toolu_{agent}_1", "name": name, "input": call}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{agent}_1", "content": output}]}},
            {"type": "assistant", "message": {"role": "assistant", "model": "claude", "content": [
                {"type": "text", "text": report}]}}]
        # Claude Code 1.x wrote agent-<id>.jsonl beside the session, 2.x writes it in <session>/subagents/.
        path = (folder if rng.random() < 0.3 else folder / sid / "subagents") / f"agent-{agent}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        previous = None
        with open(path, "w", encoding="utf-8") as f:
            for i, obj in enumerate(agent_lines):
                obj.update(side, timestamp=at, uuid=f"{agent}-{i}", parentUuid=previous)
                previous = obj["uuid"]
                f.write(json.dumps(obj, ensure_ascii=False) + "\n")
    if rng.random() >= 0.15:
        return ""
    # The reply being written when the transcript was read: its line cut anywhere.
    line = json.dumps({"type": "assistant", "timestamp": at, **base, "uuid": f"{sid}-cut", "parentUuid":
                       lines[-1]["uuid"], "message": {"role": "assistant", "model": "claude", "content": [
                           {"type": "text", "text": "Let me look into that and come back with the details."}]}})
    return line[:rng.randint(20, len(line) - 2)]


def session_file_id(index: int, sid: str) -> str:
    return f"{index:03d}-{''.join(c if c.isalnum() else '-' for c in sid)}"


# `history`: HistoryIndex.search as shipped (sessions ranked when it can, its floor); `history-nofloor`
# the same without the floor (the floor must not cut answer sessions); `history-msg`: message hits,
# each session ranked by its best message. The peers: one document per message (`tantivy-msg`,
# `bm25s-msg`) and one per session (`tantivy`, `bm25s`), as the LongMemEval paper indexes them.
PEERS = {"tantivy": TantivyEngine, "bm25s": Bm25sEngine}
KS = (5, 10)


def _history_modes() -> dict:
    import inspect

    sessions = "messages" in inspect.signature(HistoryIndex.search_result).parameters
    modes = {"history": {}, "history-nofloor": {"floor": 0.0}}
    if sessions:
        modes["history-msg"] = {"messages": True, "floor": 0.0}
    return modes


HISTORY_MODES = _history_modes()


def history_ranked(h: HistoryIndex, question: str, project: str | None, **mode) -> tuple[list, list]:
    hits = h.search(question, limit=50, refresh=False, project=project, **mode)
    return [hit.session for hit in hits], [getattr(hit, "uuid", None) for hit in hits]


def peer_trees(h: HistoryIndex, scratch: Path, project: str | None = None) -> tuple[Path, Path]:
    """The cleaned messages the history index holds, read back from it: one file per message
    (tree/session/uuid.md) and one per session (sessions/session.md, its messages in order)."""
    tree, sessions = scratch / "tree", scratch / "sessions"
    where, params = ("WHERE project = ?", [project]) if project else ("", [])
    bodies: dict[str, list[str]] = {}
    for session, uuid, body, body_seg in h.conn.execute(
            f"SELECT session, uuid, body, body_seg FROM history_messages {where} ORDER BY file, line_at, part", params):
        body = original(body, body_seg)
        path = tree / session / f"{uuid}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        bodies.setdefault(session, []).append(body)
    sessions.mkdir(parents=True)
    for session, texts in bodies.items():
        (sessions / f"{session}.md").write_text("\n".join(texts), encoding="utf-8")
    return tree, sessions


def ranked_by_all(h: HistoryIndex, questions: list[str], scratch: Path, project: str | None = None) -> dict:
    """{engine: [(sessions, message uuids) of each question, best first]}."""
    ranked = {name: [history_ranked(h, q, project, **mode) for q in questions] for name, mode in HISTORY_MODES.items()}
    tree, sessions = peer_trees(h, scratch, project)
    for name, cls in PEERS.items():
        for suffix, folder in (("-msg", tree), ("", sessions)):
            engine = cls(scratch / name)
            engine.build(folder)
            out = []
            for question in questions:
                paths = engine.search(question, 50)
                if suffix:
                    out.append(([p.split("/")[0] for p in paths], [p.split("/")[1][:-3] for p in paths]))
                else:
                    out.append(([p[:-3] for p in paths], []))
            ranked[name + suffix] = out
            engine.close()
    shutil.rmtree(tree)
    shutil.rmtree(sessions)
    return ranked


def new_sums() -> dict:
    return {"n": 0, "turns": 0, "turn R@10": 0.0, **{f"{m}@{k}": 0.0 for m in ("any", "all", "R") for k in KS}}


def add_scores(sums: dict, name: str, ranked: tuple, gold_sessions: set, gold_turns: set) -> None:
    sessions, uuids = ranked
    order = list(dict.fromkeys(sessions))
    m = sums.setdefault(name, new_sums())
    m["n"] += 1
    for k in KS:
        found = len(gold_sessions & set(order[:k]))
        m[f"R@{k}"] += found / len(gold_sessions)
        m[f"any@{k}"] += found > 0
        m[f"all@{k}"] += found == len(gold_sessions)
    if gold_turns and any(uuids):
        m["turn R@10"] += len(gold_turns & set(uuids[:10])) / len(gold_turns)
        m["turns"] += 1


def averages(sums: dict) -> dict:
    return {name: {**{key: v / m["n"] for key, v in m.items() if "@" in key and key != "turn R@10"},
                   "turn R@10": m["turn R@10"] / m["turns"] if m["turns"] else None}
            for name, m in sums.items()}


def retrieval(questions: list, scratch: Path) -> dict:
    """The `_s` subset: each question's haystack (~50 sessions) is its own
    folder and index."""
    sums: dict = {}
    counted = 0
    rng = seeded(16)
    for q in questions:
        if q["question_id"].endswith("_abs"):
            continue
        counted += 1
        work = scratch / q["question_id"]
        folder = work / "projects" / PROJECT
        folder.mkdir(parents=True)
        gold_sessions, gold_turns = set(), set()
        for n, (sid, date, turns) in enumerate(zip(q["haystack_session_ids"], q["haystack_dates"],
                                                  q["haystack_sessions"])):
            fid = session_file_id(n, sid)
            uuids = write_session(folder, fid, date, turns, rng)
            gold_turns.update(uuids[i] for i, turn in enumerate(turns) if turn.get("has_answer"))
            if sid in q["answer_session_ids"]:
                gold_sessions.add(fid)
        with HistoryIndex(folder.parent, work / "index.db") as h:
            h.refresh()
            ranked = ranked_by_all(h, [q["question"]], work)
        for name, (one,) in ranked.items():
            add_scores(sums, name, one, gold_sessions, gold_turns)
        shutil.rmtree(work)
    return {"questions": counted, "retrieval": averages(sums)}


def s_like(oracle_questions: list, s_questions: list, scratch: Path) -> dict:
    """`_s` at the oracle's size: each of its questions over its own haystack of 44-52 sessions, its
    answer sessions among sessions drawn from the `_s` subset's haystacks (none an answer session),
    those dated from the question's first answer session (or 10 days) before it up to its date, as `_s`
    haystacks mostly end on the question's day."""
    pool = {sid: turns for q in s_questions
            for sid, turns in zip(q["haystack_session_ids"], q["haystack_sessions"])
            if sid not in q["answer_session_ids"] and not sid.startswith("answer_")}
    filler = sorted(pool)
    rng = seeded(44)
    made = []
    for q in oracle_questions:
        if q["question_id"].endswith("_abs"):
            continue
        day = dt.datetime.strptime(q["question_date"][:10], "%Y/%m/%d")
        own = list(zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]))
        span = max(10, (day - min(dt.datetime.strptime(d[:10], "%Y/%m/%d") for _, d, _ in own)).days + 5)
        drawn = [(sid, (day - dt.timedelta(days=rng.randint(0, span), minutes=rng.randint(0, 1439)))
                  .strftime("%Y/%m/%d (%a) %H:%M"), pool[sid])
                 for sid in rng.sample(filler, rng.randint(44, 52) - len(own))]
        hay = sorted(own + drawn, key=lambda h: h[1])
        made.append({**q, "haystack_session_ids": [h[0] for h in hay], "haystack_dates": [h[1] for h in hay],
                     "haystack_sessions": [h[2] for h in hay]})
    return {**retrieval(made, scratch), "filler": len(filler)}


def oracle(questions: list, scratch: Path) -> dict:
    """The 500-question oracle: its questions' sessions (1-6 each, 940
    distinct) pooled into one history, every question searched over all of
    them: the answer sessions must outrank every other question's."""
    rng = seeded(500)
    folder = scratch / "oracle" / "projects" / PROJECT
    folder.mkdir(parents=True)
    written: dict[str, dict] = {}
    cases = []
    for q in questions:
        if q["question_id"].endswith("_abs"):
            continue
        gold_turns = set()
        for sid, date, turns in zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]):
            fid = "".join(c if c.isalnum() else "-" for c in sid)
            if fid not in written:  # 8 sessions serve two questions, with the same text
                written[fid] = write_session(folder, fid, date, turns, rng)
            gold_turns.update(written[fid][i] for i, turn in enumerate(turns) if turn.get("has_answer"))
        gold = {"".join(c if c.isalnum() else "-" for c in sid) for sid in q["answer_session_ids"]}
        cases.append((q["question"], gold, gold_turns))
    sums: dict = {}
    with HistoryIndex(folder.parent, scratch / "oracle" / "index.db") as h:
        h.refresh()
        messages = h.status()["messages"]
        ranked = ranked_by_all(h, [question for question, _, _ in cases], scratch / "oracle")
    for name, per_question in ranked.items():
        for one, (_, gold, gold_turns) in zip(per_question, cases):
            add_scores(sums, name, one, gold, gold_turns)
    shutil.rmtree(scratch / "oracle")
    return {"questions": len(cases), "sessions": len(written), "messages": messages,
            "retrieval": averages(sums)}


LOCOMO_FILE = CORPORA / "locomo" / "locomo10.json"


def locomo_gold(conversation: dict, evidence: list) -> set[int]:
    """The sessions ('D<N>:<t>' ids, normalised as corpora/README.md says) holding the evidence."""
    out = set()
    for item in evidence:
        for one in re.split(r"[;\s]+", item):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", one)
            if m and int(m[2]) <= len(conversation.get(f"session_{int(m[1])}", [])):
                out.add(int(m[1]))
    return out


def locomo_time(text: str, minute: int) -> str:
    """LoCoMo's '1:56 pm on 8 May, 2023' plus some minutes, as Claude Code writes times."""
    import datetime

    moment = datetime.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y") + datetime.timedelta(minutes=minute)
    return moment.strftime("%Y-%m-%dT%H:%M:00.000Z")


def locomo(conversations: list, scratch: Path) -> dict:
    """LoCoMo's 10 conversations as Claude Code transcripts: a project each, a transcript per session
    (speaker_a the user, speaker_b the assistant, no names, a shared image as its caption), with the noise
    write_session adds. Categories 1-4 (5 is adversarial, left out as most memory benchmarks do);
    each question searched within its project and over all ten pooled."""
    rng = seeded(10)
    root = scratch / "locomo" / "projects"
    cases = []
    for conv in conversations:
        c = conv["conversation"]
        project = f"-home-bench-{conv['sample_id']}"
        (root / project).mkdir(parents=True)
        n = 1
        while f"session_{n}" in c:
            turns = [{"role": "user" if t["speaker"] == c["speaker_a"] else "assistant",
                      "content": t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")}
                     for t in c[f"session_{n}"]]
            write_locomo_session(root / project, f"{conv['sample_id']}-s{n:02d}",
                                 locomo_time(c[f"session_{n}_date_time"], 0), turns, rng)
            n += 1
        for qa in conv["qa"]:
            gold = locomo_gold(c, qa.get("evidence", []))
            if qa["category"] == 5 or not gold:
                continue
            cases.append((project, qa["question"], {f"{conv['sample_id']}-s{g:02d}" for g in gold}))
    per_project: dict = {}
    pooled: dict = {}
    with HistoryIndex(root, scratch / "locomo" / "index.db") as h:
        h.refresh()
        for project in dict.fromkeys(p for p, _, _ in cases):
            mine = [(q, g) for p, q, g in cases if p == project]
            ranked = ranked_by_all(h, [q for q, _ in mine], scratch / "locomo" / "work", project)
            for name, per_question in ranked.items():
                for one, (_, gold) in zip(per_question, mine):
                    add_scores(per_project, name, one, gold, set())
        ranked = ranked_by_all(h, [q for _, q, _ in cases], scratch / "locomo" / "work")
        for name, per_question in ranked.items():
            for one, (_, _, gold) in zip(per_question, cases):
                add_scores(pooled, name, one, gold, set())
    shutil.rmtree(scratch / "locomo")
    return {"questions": len(cases), "per_project": averages(per_project), "pooled": averages(pooled)}


def write_locomo_session(folder: Path, sid: str, at: str, turns: list, rng: random.Random) -> None:
    """write_session with a LoCoMo time (already ISO)."""
    day = f"{at[:4]}/{at[5:7]}/{at[8:10]} (X) {at[11:16]}"
    write_session(folder, sid, day, turns, rng)


# Each question's long session: its answer sessions among other sessions of
# its haystack, in a shuffled order, until it holds LONG_CHARS characters
# of conversation: a long agent session whose answer is far from its end.
LONG_CHARS = 200_000
BASELINE_CHARS = 24_000


def context(questions: list, scratch: Path) -> dict:
    """ReadSessionContext on long sessions: the share of questions whose
    answer turns all fall inside the `relevant` result at the default
    budget, against the last 24,000 characters of the session."""
    rng = seeded(24)
    folder = scratch / "long" / "projects" / PROJECT
    folder.mkdir(parents=True)
    cases = []
    for q in questions:
        if q["question_id"].endswith("_abs"):
            continue
        sessions = list(zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]))
        gold = [s for s in sessions if s[0] in q["answer_session_ids"]]
        others = [s for s in sessions if s[0] not in q["answer_session_ids"]]
        rng.shuffle(others)
        chosen, size = list(gold), sum(len(t["content"]) for s in gold for t in s[2])
        for s in others:
            if size >= LONG_CHARS:
                break
            chosen.append(s)
            size += sum(len(t["content"]) for t in s[2])
        rng.shuffle(chosen)
        turns = [t for s in chosen for t in s[2]]
        probes = [t["content"][:200] for t in turns if t.get("has_answer")]
        if not probes:
            continue
        fid = "long-" + "".join(c if c.isalnum() else "-" for c in q["question_id"])
        write_session(folder, fid, chosen[-1][1], turns, rng)
        cases.append((fid, q["question"], probes, size))
    relevant = baseline = turns_in = turns_last = turns_all = 0
    with HistoryIndex(folder.parent, scratch / "long" / "index.db") as h:
        h.refresh()
        for fid, question, probes, _ in cases:
            found = h.read_session_context(fid, question)
            inside = "\n".join(f[3] for f in found.fragments)
            last = "\n".join(m.text for m in h.session_messages(fid, refresh=False))[-BASELINE_CHARS:]
            relevant += all(p in inside for p in probes)
            baseline += all(p in last for p in probes)
            turns_in += sum(p in inside for p in probes)
            turns_last += sum(p in last for p in probes)
            turns_all += len(probes)
    shutil.rmtree(scratch / "long")
    return {"sessions": len(cases), "median_chars": statistics.median(c[3] for c in cases),
            "relevant": relevant / len(cases), "last 24,000 chars": baseline / len(cases),
            "turns": turns_all, "relevant turns": turns_in / turns_all, "last 24,000 chars turns": turns_last / turns_all}


# -- scale ---------------------------------------------------------------------------
# The build's peak RSS is VmHWM, this process image's own high-water mark:
# Linux's ru_maxrss carries over through exec() the peak of the forked copy
# of the parent, whose RSS (the corpus loaded, the earlier parts run) it
# reported as the build's (181 MB at 256 MB, 281 MB at 1 GB: the parent's).
BUILD_CHILD = r"""
import json, resource, sys, time
from memsearch import HistoryIndex
start = time.perf_counter()
with HistoryIndex(sys.argv[1], sys.argv[2]) as h:
    report = h.refresh()
seconds = time.perf_counter() - start
try:
    with open("/proc/self/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "bytes": report.bytes_read, "messages": report.messages, "rss_mb": rss}))
"""


def scale(questions: list, scratch: Path, megabytes: int) -> dict:
    rng = seeded(1)
    root = scratch / "projects"
    sessions = [(sid, date, turns) for q in questions for sid, date, turns in
                zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"])]
    target = megabytes << 20
    written, n = 0, 0
    largest = None
    while written < target:
        project = root / f"-home-bench-p{n % 40:02d}"
        project.mkdir(parents=True, exist_ok=True)
        # A transcript is many sessions' turns, as a long-running session is.
        turns, date = [], None
        for _ in range(rng.randint(5, 40)):
            sid, date, t = rng.choice(sessions)
            turns.extend(t)
        sid = f"{n:06d}-{rng.getrandbits(64):016x}"
        write_session(project, sid, date, turns, rng)
        path = project / f"{sid}.jsonl"
        size = path.stat().st_size
        written += size
        if largest is None or size > largest[1]:
            largest = (path, size)
        n += 1
    # Written out before the build: a user's transcripts were written over weeks, not flushed while it reads them.
    os.sync()
    db = scratch / "scale.db"
    out = subprocess.run([sys.executable, "-c", BUILD_CHILD, str(root), str(db)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    build = json.loads(out.stdout)
    queries = [q["question"] for q in questions]
    times = {"with refresh": [], "refresh": [], "search": [], "unpruned": []}

    def unpruned(query):  # session ranking with its common words scored in every piece
        saved, session_rank.PRUNE_MIN_FILES = session_rank.PRUNE_MIN_FILES, 10**12
        try:
            h.search(query, refresh=False)
        finally:
            session_rank.PRUNE_MIN_FILES = saved

    with HistoryIndex(root, db) as h:
        h.refresh()
        for query in queries:  # warm the page cache, as a live session's queries find it
            h.search(query, refresh=False)
        for query in queries:
            for name, call in (("with refresh", lambda: h.search(query)), ("refresh", h.refresh),
                               ("search", lambda: h.search(query, refresh=False)),
                               ("unpruned", lambda: unpruned(query))):
                t0 = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - t0)
        versus_grep = grep_race(h, root, db, queries)
        path, _ = largest
        line = {"type": "user", "sessionId": path.stem, "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": "the zyxwvut deploy token moved to vault"}}
        data = (json.dumps(line) + "\n").encode()
        with open(path, "ab") as f:
            f.write(data)
        t0 = time.perf_counter()
        result = h.search_result("zyxwvut")
        after = time.perf_counter() - t0
        assert result.hits, "the appended line was not found"
    db_bytes = sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if os.path.exists(p))
    return {"transcripts": n, "transcript_mb": written / 2**20, "build_s": build["seconds"],
            "build_mb_s": written / 2**20 / build["seconds"], "messages": build["messages"],
            "peak_rss_mb": build["rss_mb"], "db_mb": db_bytes / 2**20,
            "query_p50_ms": statistics.median(times["with refresh"]) * 1000,
            "query_p90_ms": percentile(times["with refresh"], 0.9) * 1000, **versus_grep,
            "refresh_p50_ms": statistics.median(times["refresh"]) * 1000,
            "search_p50_ms": statistics.median(times["search"]) * 1000,
            "search_p90_ms": percentile(times["search"], 0.9) * 1000,
            "unpruned_p50_ms": statistics.median(times["unpruned"]) * 1000,
            "unpruned_p90_ms": percentile(times["unpruned"], 0.9) * 1000, "largest_mb": largest[1] / 2**20,
            "append_bytes": len(data), "append_bytes_read": result.refresh.bytes_read,
            "append_query_ms": after * 1000}


def percentile(values: list[float], share: float) -> float:
    """The value ``share`` of the way up ``values`` sorted (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def grep_race(h: HistoryIndex, root: Path, db: Path, queries: list[str], rounds: int = 3) -> dict:
    """Each question as a whole process, `memsearch history` (its refresh included) against
    `rg -i -F -c` of the question's rarest word (the word the fewest messages hold) over the
    transcripts, ``rounds`` times in turn: per question the median wall times, and for how many
    questions memsearch answered first by them (and in the first round alone, which runs while
    the build's writes may still be flushing)."""
    from memsearch.query import plan

    rg = shutil.which("rg")
    if rg is None:
        return {"grep": None}
    # The installed command with a bytecode cache, as a user runs it (see scale.bytecode_env).
    env = {**bytecode_env(db.parent / "pycache"), "PYTHONPATH": str(HERE.parent)}
    subprocess.run([*memsearch_exe(), "--version"], env=env, stdout=subprocess.DEVNULL, check=False)  # fills it
    commands = []
    for query in queries:
        terms = [t for t in plan(query).terms if t.startswith('"') and '" ' not in t]  # single words
        counts = {t: h.conn.execute("SELECT count(*) FROM history_fts WHERE history_fts MATCH ?", (t,)).fetchone()[0]
                  for t in terms}
        rarest = min(counts, key=counts.get).strip('"').replace('""', '"') if counts else query.split()[0]
        commands.append(([*memsearch_exe(), "history", query, "--history-root", str(root), "--db", str(db)],
                         [rg, "-i", "-F", "-c", rarest, str(root)]))
    times = [[[], []] for _ in queries]  # per question: memsearch's and rg's times
    for _ in range(rounds):
        for pair, timed in zip(commands, times):
            for command, out in zip(pair, timed):
                t0 = time.perf_counter()
                subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                out.append(time.perf_counter() - t0)
    cli, grep = ([statistics.median(t[i]) for t in times] for i in (0, 1))
    return {"grep": {"questions": len(queries), "rounds": rounds,
                     "memsearch_faster": sum(c < g for c, g in zip(cli, grep)),
                     "first_round_faster": sum(t[0][0] < t[1][0] for t in times),
                     "cli_p50_ms": statistics.median(cli) * 1000, "cli_p90_ms": percentile(cli, 0.9) * 1000,
                     "rg_p50_ms": statistics.median(grep) * 1000, "rg_p90_ms": percentile(grep, 0.9) * 1000}}


def table(retrieval: dict) -> list[str]:
    lines = ["| engine | any@5 | all@5 | R@5 | any@10 | all@10 | R@10 | turn R@10 |", "|---|---|---|---|---|---|---|---|"]
    for name, m in retrieval.items():
        turn = "" if m.get("turn R@10") is None else f"{m['turn R@10']:.3f}"
        lines.append(f"| {name} | {m['any@5']:.3f} | {m['all@5']:.3f} | {m['R@5']:.3f} | {m['any@10']:.3f}"
                     f" | {m['all@10']:.3f} | {m['R@10']:.3f} | {turn} |")
    return lines


def report(results: dict) -> str:
    """bench/results/history.md from the parts' latest results, each with
    its date and command."""
    lines = ["# Conversation history benchmark (bench/history.py)", "",
             "Turn R@10: the share of a question's `has_answer` turns among the top 10 messages, averaged over"
             " the questions that have such turns. `_abs` questions are skipped, as upstream."]
    if "retrieval" in results:
        r = results["retrieval"]
        lines += ["", f"## LongMemEval `_s` subset ({r['when']}, `{r['command']}`)", "",
                  f"{r['questions']} questions, each haystack (~50 sessions) converted to Claude Code transcripts"
                  " with noise; one index per question.", "", *table(r["retrieval"])]
    if "s_like" in results:
        r = results["s_like"]
        lines += ["", f"## `_s`-like haystacks for the oracle's questions ({r['when']}, `{r['command']}`)", "",
                  f"{r['questions']} questions, each over 44-52 sessions: its answer sessions among sessions drawn"
                  f" from the `_s` subset's {r['filler']} other sessions, dated up to the question's day; one index"
                  " per question.", "", *table(r["retrieval"])]
    if "oracle" in results:
        r = results["oracle"]
        lines += ["", f"## LongMemEval oracle, pooled ({r['when']}, `{r['command']}`)", "",
                  f"{r['questions']} questions; the {r['sessions']} distinct sessions of all of them in one history"
                  f" ({r['messages']} messages), each question searched over all.",
                  "", *table(r["retrieval"])]
    if "locomo" in results:
        r = results["locomo"]
        lines += ["", f"## LoCoMo as transcripts ({r['when']}, `{r['command']}`)", "",
                  f"{r['questions']} questions (categories 1-4), a project per conversation, a transcript per"
                  " session. Per project (`--project`; the peers over that conversation's sessions):", "",
                  *table(r["per_project"]), "", "All ten projects pooled:", "", *table(r["pooled"])]
    if "context" in results:
        c = results["context"]
        lines += ["", f"## ReadSessionContext on long sessions ({c['when']}, `{c['command']}`)", "",
                  f"{c['sessions']} long sessions, one per `_s` question: its answer sessions among other sessions of"
                  f" its haystack, shuffled, {LONG_CHARS:,}+ characters (median {c['median_chars']:,.0f}). Share"
                  " whose answer turns all fall inside the context, default budget (24,000 characters), and share"
                  f" of the {c['turns']} answer turns inside:", "",
                  "| context | questions with every answer turn | answer turns |", "|---|---|---|",
                  f"| relevant (ReadSessionContext) | {c['relevant']:.3f} | {c['relevant turns']:.3f} |",
                  f"| last 24,000 characters | {c['last 24,000 chars']:.3f} | {c['last 24,000 chars turns']:.3f} |"]
    if "scale" in results:
        s = results["scale"]
        lines += ["", f"## Scale ({s['when']}, `{s['command']}`)", "",
                  f"{s['transcripts']} synthetic transcripts, {s['transcript_mb']:.0f} MB ({s['messages']} messages"
                  " indexed), written out to disk before the build.", "", "| measure | value |", "|---|---|",
                  f"| cold build | {s['build_s']:.1f} s, {s['build_mb_s']:.1f} MB/s |",
                  f"| peak RSS of the build | {s['peak_rss_mb']:.0f} MB |",
                  f"| database size | {s['db_mb']:.0f} MB |",
                  f"| query p50 / p90, refresh included | {s['query_p50_ms']:.1f} ms /"
                  f" {s['query_p90_ms']:.1f} ms |" if "query_p90_ms" in s else
                  f"| query p50, refresh included | {s['query_p50_ms']:.1f} ms |",
                  f"| of which refresh (p50) / search (p50) | {s['refresh_p50_ms']:.1f} ms / {s['search_p50_ms']:.1f} ms |",
                  *([f"| search alone p50 / p90, pruned (as shipped) / common words scored everywhere |"
                     f" {s['search_p50_ms']:.1f} / {s['search_p90_ms']:.1f} ms,"
                     f" {s['unpruned_p50_ms']:.1f} / {s['unpruned_p90_ms']:.1f} ms |"] if "unpruned_p50_ms" in s else []),
                  f"| next query after a {s['append_bytes']}-byte append to a {s['largest_mb']:.1f} MB transcript"
                  f" | {s['append_query_ms']:.1f} ms, {s['append_bytes_read']} bytes read |"]
        g = s.get("grep", "absent")
        if g is None:
            lines += ["", "Against grep: rg is not on PATH, not measured."]
        elif g != "absent":
            rounds = g.get("rounds", 1)
            lines += ["", "Against grep, each question as a whole process: `memsearch history QUESTION --history-root"
                      " ROOT --db DB` (its refresh included) against `rg -i -F -c WORD ROOT`, WORD the question's"
                      f" word the fewest messages hold; {rounds} rounds in turn, each question's median time:", "",
                      "| process | p50 | p90 |", "|---|---|---|",
                      f"| memsearch history | {g['cli_p50_ms']:.0f} ms | {g['cli_p90_ms']:.0f} ms |",
                      f"| rg -i -F -c | {g['rg_p50_ms']:.0f} ms | {g['rg_p90_ms']:.0f} ms |", "",
                      f"memsearch answered first for {g['memsearch_faster']} of {g['questions']} questions"
                      + (f" ({g['first_round_faster']} in the first round alone, run right after the build)."
                         if "first_round_faster" in g else ".")]
    return "\n".join(lines) + "\n"


PARTS = ("retrieval", "s_like", "oracle", "locomo", "context", "scale")


def main() -> None:
    global NOISE, SEED
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="retrieval,oracle,locomo,context",
                        help=f"comma-separated, of {', '.join(PARTS)} (scale runs with --scale-mb)")
    parser.add_argument("--scale-mb", type=int, default=0, help="also run the scale test at about this many MB")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "history.md")
    parser.add_argument("--noise", choices=("classic", "full"), default="classic",
                        help="the transcripts' noise: classic, or full (sub-agents and a half-written last line too)")
    parser.add_argument("--seed", type=int, default=0,
                        help="draw the noise and the haystacks from other seeds (0: as published)")
    args = parser.parse_args()
    NOISE, SEED = args.noise, args.seed
    parts = list(dict.fromkeys([p for p in args.parts.split(",") if p] + (["scale"] if args.scale_mb else [])))
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    if "scale" in parts and not args.scale_mb:
        parser.error("the scale part needs --scale-mb N")
    # Parts not run keep their last results (and dates): a slow part need not run again.
    store = args.out.with_suffix(".json")
    results = json.loads(store.read_text(encoding="utf-8")) if store.exists() else {}
    command = shlex.join(["python", "bench/history.py", *sys.argv[1:]])
    questions = json.loads(S_FILE.read_text(encoding="utf-8"))
    runs = {"retrieval": lambda tmp: retrieval(questions, tmp),
            "s_like": lambda tmp: s_like(json.loads(ORACLE_FILE.read_text(encoding="utf-8")), questions, tmp),
            "oracle": lambda tmp: oracle(json.loads(ORACLE_FILE.read_text(encoding="utf-8")), tmp),
            "locomo": lambda tmp: locomo(json.loads(LOCOMO_FILE.read_text(encoding="utf-8")), tmp),
            "context": lambda tmp: context(questions, tmp),
            "scale": lambda tmp: scale(questions, tmp, args.scale_mb)}
    for part in parts:
        with tempfile.TemporaryDirectory(prefix="memsearch-history-") as tmp:
            results[part] = {**runs[part](Path(tmp)), "when": time.strftime("%Y-%m-%d"), "command": command}
        print(f"{part}: done", file=sys.stderr)
    text = report(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
