"""Turn the shared benchmark corpora into Markdown memory trees on disk.

Every converter writes plain ``.md`` files under a cache directory outside
the repository and returns a :class:`Unit`: a named set of trees, each
queried only with its own questions. Gold answers are file paths relative
to the tree root, written with ``/`` separators, exactly what an engine's
``search`` returns.

Nothing here ranks or scores; ``quality.py`` wires trees to engines and
``metrics.py`` turns rankings into numbers.

File names never carry gold hints: LongMemEval's answer sessions are named
``answer_*`` upstream, so sessions are renamed by position before they are
written, otherwise an engine that indexes paths would find them for free.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

LOCOMO_FILE = "locomo/locomo10.json"
LME_HAYSTACKS_FILE = "longmemeval/longmemeval_s_cleaned.subset36.json"
LME_ORACLE_FILE = "longmemeval/longmemeval_oracle.json"
AGENT_MEMORY_DIR = "agent-memory"
DOCS_CPP_DIR = "docs-cpp/docs"

# Conversations 0-4 (file order) tune the ranking; 5-9 are only reported.
# Keeping the held-out half untouched is what makes its numbers honest.
TUNE_CONVERSATIONS = range(0, 5)

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
}
# Category 5 is adversarial: the answer is not in the conversation, so
# there is no gold file to retrieve.
LOCOMO_UNANSWERABLE = 5


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    gold: frozenset[str]
    category: str


@dataclass
class Tree:
    """One directory of Markdown files and the questions asked of it."""

    name: str
    root: Path
    questions: list[Question]
    split: str | None = None  # "tune" / "heldout" for LoCoMo, else None

    @property
    def files(self) -> int:
        return sum(1 for _ in self.root.rglob("*.md"))

    @property
    def bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*.md"))


@dataclass
class Unit:
    """A corpus converted one way, e.g. LoCoMo as one file per session."""

    name: str
    title: str
    description: str
    trees: list[Tree] = field(default_factory=list)
    # Quality units feed the recall chart; latency-only units only time.
    quality: bool = True

    @property
    def questions(self) -> int:
        return sum(len(t.questions) for t in self.trees)


def _fresh_dir(path: Path) -> Path:
    # Rewriting the trees on every run keeps results independent of what an
    # earlier (possibly different) converter left in the cache.
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


# Files are dated an hour back. memsearch re-reads at every query a file
# modified within the last two seconds (it may change again within the same
# mtime tick), and a tree converted just before its questions are timed would
# pay that on every question of its first seconds: not what a memory tree
# whose files were written earlier costs.
BACKDATE_S = 3600


def _write(root: Path, relpath: str, text: str) -> None:
    target = root / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    past = time.time() - BACKDATE_S
    os.utime(target, (past, past))


def _yaml_scalar(value: str) -> str:
    # json.dumps yields a double-quoted string that YAML reads back verbatim,
    # so colons, quotes and leading dashes in the text cannot break the
    # frontmatter.
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------
# LoCoMo


def _locomo_evidence_ids(evidence: list[str]) -> set[str]:
    """Normalise LoCoMo evidence strings to ``D<session>:<turn>`` ids.

    A few upstream strings pack several ids ("D8:6; D9:17"), carry a stray
    colon ("D:11:26") or a leading zero ("D30:05"); see corpora/README.md.
    """
    ids = set()
    for raw in evidence:
        for part in re.split(r"[;\s]+", raw.strip()):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
            if match:
                ids.add(f"D{int(match[1])}:{int(match[2])}")
    return ids


def _locomo_sessions(conversation: dict) -> list[int]:
    # conv-26 has date keys for sessions that do not exist, so count the
    # turn lists rather than the dates.
    numbers = []
    for key, value in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(value, list):
            numbers.append(int(match[1]))
    return sorted(numbers)


def _locomo_turn(turn: dict) -> str:
    # Shared images exist only as a URL and a machine-written BLIP caption
    # ("a photo of a dog walking past a wall"); nobody said those words, so
    # they are left out. With them, the reference figures do not
    # reproduce (baseline R@5 0.873 instead of 0.870, tantivy 0.902 not 0.906).
    return f"**{turn['speaker']}**: {turn['text']}"


def _locomo_session_text(conversation: dict, number: int) -> str:
    # The date line matters: temporal questions ("When did Caroline go to
    # the support group?") are answered by the session's date, and without
    # it every engine loses about 0.025 R@5.
    date = conversation.get(f"session_{number}_date_time", "")
    lines = [f"Date: {date}", ""]
    for turn in conversation[f"session_{number}"]:
        lines += [_locomo_turn(turn), ""]
    return "\n".join(lines)


def _locomo_questions(sample: dict, gold_for_ids) -> list[Question]:
    questions = []
    for index, qa in enumerate(sample["qa"]):
        if qa["category"] == LOCOMO_UNANSWERABLE:
            continue
        ids = _locomo_evidence_ids(qa.get("evidence", []))
        gold = gold_for_ids(ids)
        # A question with no gold file can only be a miss for every engine,
        # so it is left out like category 5: four cite no existing turn, and
        # in the fact trees 225 more cite turns that no observation covers.
        if not gold:
            continue
        questions.append(
            Question(
                qid=f"{sample['sample_id']}/q{index:03d}",
                text=qa["question"],
                gold=frozenset(gold),
                category=LOCOMO_CATEGORIES[qa["category"]],
            )
        )
    return questions


def _locomo_split(index: int) -> str:
    return "tune" if index in TUNE_CONVERSATIONS else "heldout"


def locomo_sessions(corpora: Path, cache: Path) -> Unit:
    """LoCoMo, one file per session: ``session-NN.md`` per conversation tree."""
    unit = Unit(
        name="locomo-session",
        title="LoCoMo, one file per session",
        description=(
            "10 conversations, each its own tree of 19-32 session files "
            "(a `Date:` line, then `**Speaker**: text` turns; no image captions); "
            "gold = sessions holding the evidence turns; category 5 skipped."
        ),
    )
    samples = json.loads((corpora / LOCOMO_FILE).read_text(encoding="utf-8"))
    base = _fresh_dir(cache / "sessions")
    for index, sample in enumerate(samples):
        conversation = sample["conversation"]
        root = _fresh_dir(base / sample["sample_id"])
        existing = {}
        for number in _locomo_sessions(conversation):
            relpath = f"session-{number:02d}.md"
            _write(root, relpath, _locomo_session_text(conversation, number))
            for turn in conversation[f"session_{number}"]:
                existing[turn["dia_id"]] = relpath

        def gold_for_ids(ids, existing=existing):
            return {existing[i] for i in ids if i in existing}

        unit.trees.append(
            Tree(
                sample["sample_id"],
                root,
                _locomo_questions(sample, gold_for_ids),
                _locomo_split(index),
            )
        )
    return unit


def _locomo_facts(sample: dict):
    """Yield (session, fact, dia_ids) in upstream order."""
    observations = sample["observation"]
    keys = sorted(
        observations, key=lambda k: int(re.search(r"\d+", k).group())
    )
    for key in keys:
        session = int(re.search(r"\d+", key).group())
        for facts in observations[key].values():
            for fact, ids in facts:
                # Ten facts cite a list of turns instead of one.
                ids = [ids] if isinstance(ids, str) else list(ids)
                yield session, fact, _locomo_evidence_ids(ids)


def _locomo_fact_text(name: str, fact: str) -> str:
    # The memory-file convention: name / description / type frontmatter and
    # the fact as the body. A one-fact memory's one-line description is the
    # fact itself, as an agent writing it would put it; the frontmatter is
    # part of the file, so the fact's words count twice for every fact alike.
    return (
        "---\n"
        f"name: {_yaml_scalar(name)}\n"
        f"description: {_yaml_scalar(fact)}\n"
        "type: user\n"
        "---\n\n"
        f"{fact}\n"
    )


def locomo_facts(corpora: Path, cache: Path) -> Unit:
    """LoCoMo, one file per observation fact, in a tree per conversation."""
    unit = Unit(
        name="locomo-fact",
        title="LoCoMo, one file per observation fact",
        description=(
            "10 conversations, each its own tree of 169-324 fact files "
            "(frontmatter name/description/type, the generated observation "
            "as body); gold = facts citing an evidence turn; questions whose "
            "evidence no fact cites are dropped."
        ),
    )
    samples = json.loads((corpora / LOCOMO_FILE).read_text(encoding="utf-8"))
    base = _fresh_dir(cache / "facts")
    for index, sample in enumerate(samples):
        root = _fresh_dir(base / sample["sample_id"])
        files_for_id: dict[str, set[str]] = {}
        counters: dict[int, int] = {}
        for session, fact, ids in _locomo_facts(sample):
            counters[session] = counters.get(session, 0) + 1
            stem = f"session-{session:02d}-fact-{counters[session]:02d}"
            relpath = f"{stem}.md"
            _write(root, relpath, _locomo_fact_text(stem, fact))
            for dia_id in ids:
                files_for_id.setdefault(dia_id, set()).add(relpath)

        def gold_for_ids(ids, files_for_id=files_for_id):
            return set().union(*(files_for_id.get(i, set()) for i in ids))

        unit.trees.append(
            Tree(
                sample["sample_id"],
                root,
                _locomo_questions(sample, gold_for_ids),
                _locomo_split(index),
            )
        )
    return unit


# --------------------------------------------------------------------------
# LongMemEval


def _lme_session_text(date: str, turns: list[dict]) -> str:
    # Same layout as the LoCoMo sessions: the date line, then the turns.
    lines = [f"Date: {date}", ""]
    for turn in turns:
        lines += [f"**{turn['role']}**: {turn['content']}", ""]
    return "\n".join(lines)


def _lme_answerable(record: dict) -> bool:
    # "_abs" questions have no answer in the haystack; upstream leaves them
    # out of retrieval scoring too.
    return not record["question_id"].endswith("_abs")


def longmemeval_haystacks(corpora: Path, cache: Path) -> Unit:
    """LongMemEval ``_s`` subset: each question its own ~50-session tree."""
    unit = Unit(
        name="lme-s",
        title="LongMemEval _s subset, one tree per question",
        description=(
            "32 answerable questions of the 36-question `_s` (cleaned) subset, "
            "each with its own haystack of 44-52 session files; "
            "gold = answer sessions."
        ),
    )
    records = json.loads(
        (corpora / LME_HAYSTACKS_FILE).read_text(encoding="utf-8")
    )
    base = _fresh_dir(cache / "longmemeval-s")
    for record in filter(_lme_answerable, records):
        root = _fresh_dir(base / record["question_id"])
        relpath_for = {}
        sessions = zip(
            record["haystack_session_ids"],
            record["haystack_dates"],
            record["haystack_sessions"],
        )
        for number, (sid, date, turns) in enumerate(sessions, start=1):
            relpath = f"session-{number:03d}.md"
            relpath_for[sid] = relpath
            _write(root, relpath, _lme_session_text(date, turns))
        question = Question(
            qid=record["question_id"],
            text=record["question"],
            gold=frozenset(relpath_for[s] for s in record["answer_session_ids"]),
            category=record["question_type"],
        )
        unit.trees.append(Tree(record["question_id"], root, [question]))
    return unit


def longmemeval_oracle(corpora: Path, cache: Path) -> Unit:
    """LongMemEval oracle: all evidence sessions pooled into one tree."""
    unit = Unit(
        name="lme-oracle",
        title="LongMemEval oracle, one pooled tree",
        description=(
            "the 940 distinct evidence sessions of all 500 oracle questions in "
            "one tree, queried with the 470 answerable questions; "
            "gold = answer sessions."
        ),
    )
    records = json.loads((corpora / LME_ORACLE_FILE).read_text(encoding="utf-8"))
    root = _fresh_dir(cache / "longmemeval-oracle")
    relpath_for: dict[str, str] = {}
    for record in records:
        sessions = zip(
            record["haystack_session_ids"],
            record["haystack_dates"],
            record["haystack_sessions"],
        )
        for sid, date, turns in sessions:
            # The same session can serve several questions; write it once,
            # numbered by first appearance (records are sorted by id).
            if sid in relpath_for:
                continue
            number = len(relpath_for) + 1
            relpath_for[sid] = f"session-{number:04d}.md"
            _write(root, relpath_for[sid], _lme_session_text(date, turns))
    questions = [
        Question(
            qid=r["question_id"],
            text=r["question"],
            gold=frozenset(relpath_for[s] for s in r["answer_session_ids"]),
            category=r["question_type"],
        )
        for r in records
        if _lme_answerable(r)
    ]
    unit.trees.append(Tree("oracle", root, questions))
    return unit


# --------------------------------------------------------------------------
# Agent memory and docs (sanity and scale)

_FRONTMATTER = re.compile(r"\A\ufeff?---\r?\n(.*?)\r?\n---\r?\n", re.DOTALL)


def _frontmatter(text: str) -> dict:
    match = _FRONTMATTER.match(text)
    if not match:
        return {}
    try:
        data = yaml.safe_load(match[1])
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _undotted(relpath: Path) -> str:
    # Most memory files live under ".claude/memory/"; an indexer that skips
    # hidden directories would never see them, and hiding is not what this
    # benchmark measures.
    return "/".join(part.lstrip(".") for part in relpath.parts)


def agent_memory(corpora: Path, cache: Path) -> Unit:
    """Real agent memory files; each ``description`` queries its own file."""
    unit = Unit(
        name="agent-memory",
        title="Agent memory (real files, sanity check)",
        description=(
            "280 memory and CLAUDE.md/AGENTS.md files from 18 repositories in "
            "one tree (dot directories undotted); query = a file's frontmatter "
            "`description`, gold = that file; MEMORY.md indexes not queried."
        ),
    )
    source = corpora / AGENT_MEMORY_DIR
    root = _fresh_dir(cache / "agent-memory")
    questions = []
    for path in sorted(source.rglob("*.md")):
        relpath = path.relative_to(source)
        if len(relpath.parts) == 1:  # SOURCES.md describes the corpus
            continue
        text = path.read_text(encoding="utf-8")
        target = _undotted(relpath)
        _write(root, target, text)
        meta = _frontmatter(text)
        description = meta.get("description")
        if path.name == "MEMORY.md" or not isinstance(description, str):
            continue
        kind = meta.get("type") or (meta.get("metadata") or {}).get("type")
        questions.append(
            Question(
                qid=target,
                text=description,
                gold=frozenset({target}),
                category=str(kind or "none"),
            )
        )
    unit.trees.append(Tree("agent-memory", root, questions))
    return unit


def docs_cpp(corpora: Path, cache: Path, sample_every: int = 20) -> Unit:
    """Microsoft C++ docs: a 5,954-file tree for latency at scale.

    Queries are the frontmatter ``title`` of every ``sample_every``-th file
    (by path) with that file as gold; titles are near-duplicates across
    overloads, so recall here says little, latency is the point.
    """
    unit = Unit(
        name="docs-cpp",
        title="C++ docs (scale, latency)",
        description=(
            "5,954 Microsoft C++ docs pages (28 MiB) in one tree; "
            f"query = the `title` of every {sample_every}th page, gold = that page."
        ),
        quality=False,
    )
    source = corpora / DOCS_CPP_DIR
    root = _fresh_dir(cache / "docs-cpp")
    questions = []
    for index, path in enumerate(sorted(source.rglob("*.md"))):
        relpath = path.relative_to(source).as_posix()
        text = path.read_text(encoding="utf-8")
        _write(root, relpath, text)
        title = _frontmatter(text).get("title")
        if index % sample_every == 0 and isinstance(title, str):
            questions.append(
                Question(relpath, title, frozenset({relpath}), "title")
            )
    unit.trees.append(Tree("docs-cpp", root, questions))
    return unit


CONVERTERS = {
    "locomo-session": locomo_sessions,
    "locomo-fact": locomo_facts,
    "lme-s": longmemeval_haystacks,
    "lme-oracle": longmemeval_oracle,
    "agent-memory": agent_memory,
    "docs-cpp": docs_cpp,
}
