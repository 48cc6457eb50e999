"""Search engines behind one interface, so one harness can compare them.

Every engine is built once per tree and then asked questions::

    engine = ENGINES["baseline"](scratch_dir)
    engine.build(tree_dir)          # index every *.md file under tree_dir
    engine.search(question, k)      # -> relpaths, best first, at most k
    engine.close()

Paths are relative to the tree root with ``/`` separators. Ties are broken
by path so that every run ranks identically.

The peers (tantivy, bm25s, ripgrep) and sqlite-utils (the baseline) are
bench-only dependencies, imported inside their adapters so that a missing
one only disables that engine.
The library itself never imports any of them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

# Shared by every engine that takes the query apart itself: the runs of word
# characters, exactly what the design quotes and ORs together.
WORD = re.compile(r"\w+")


def tree_files(root: Path) -> list[tuple[str, str]]:
    """Every Markdown file under ``root`` as (relpath, text), sorted by path."""
    files = []
    for path in sorted(root.rglob("*.md")):
        relpath = path.relative_to(root).as_posix()
        files.append((relpath, path.read_text(encoding="utf-8")))
    return files


class Engine:
    """Base class: a scratch directory for indexes, fresh for each build."""

    name = "engine"
    description = ""

    def __init__(self, scratch: Path):
        self.scratch = scratch

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this engine cannot run here, or None when it can."""
        return None

    def _fresh_scratch(self) -> Path:
        if self.scratch.exists():
            shutil.rmtree(self.scratch)
        self.scratch.mkdir(parents=True)
        return self.scratch

    def build(self, root: Path) -> None:
        raise NotImplementedError

    def search(self, question: str, k: int) -> list[str]:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------
# The design's plain settings


class BaselineEngine(Engine):
    """memsearch's design with its plain settings, through sqlite-utils.

    A content table plus an external-content FTS5 table over the whole file
    text (frontmatter included: the plain design indexes the file as it is
    on disk), ``unicode61 remove_diacritics 1``, every word quoted and ORed,
    ``bm25`` order, an over-fetch of ``min(3k, 50)`` and hits below 15% of
    the top score dropped. sqlite-utils' ``enable_fts(create_triggers=True)``
    writes the design's table and triggers, and ``search()`` its query
    (FTS5's ``rank`` is ``bm25()``).
    """

    name = "baseline"
    description = "design's plain settings: FTS5 unicode61, OR-quoted words, bm25, 15% floor"

    # The design's constants, with its reasons: the floor removes hits that
    # only share a stop word with the query (in an OR query every common
    # word matches), and the over-fetch gives the floor something to cut.
    FLOOR = 0.15
    OVERFETCH = 3
    OVERFETCH_MAX = 50

    TOKENIZE = "unicode61 remove_diacritics 1"

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            import sqlite_utils  # noqa: F401
        except ImportError:
            return "sqlite-utils not installed (pip install -e '.[bench]')"
        return None

    def build(self, root: Path) -> None:
        import sqlite_utils

        self.db = sqlite_utils.Database(self._fresh_scratch() / "baseline.db")
        files = self.db["files"]
        files.create({"id": int, "path": str, "body": str}, pk="id", not_null={"path", "body"})
        files.create_index(["path"], unique=True)
        # Before the rows: the design fills the index through its insert trigger.
        files.enable_fts(["body"], create_triggers=True, tokenize=self.TOKENIZE)
        files.insert_all({"path": relpath, "body": text} for relpath, text in tree_files(root))

    @staticmethod
    def fts_query(question: str) -> str:
        # Quoting every word means user text can never be FTS5 syntax, and
        # OR means no word can turn the query into a zero-hit AND.
        return " OR ".join(f'"{word}"' for word in WORD.findall(question))

    def search(self, question: str, k: int) -> list[str]:
        query = self.fts_query(question)
        if not query:
            return []
        fetch = min(k * self.OVERFETCH, self.OVERFETCH_MAX)
        # rank ascending is best first; ties go by path, as every engine breaks them.
        rows = [(row["path"], -row["rank"]) for row in self.db["files"].search(
            query, order_by="rank, path", columns=["path"], limit=fetch, include_rank=True)]
        if not rows:
            return []
        floor = rows[0][1] * self.FLOOR
        return [path for path, score in rows if score >= floor][:k]

    def close(self) -> None:
        self.db.close()


# --------------------------------------------------------------------------
# memsearch as shipped


class MemsearchEngine(Engine):
    """The real library with its defaults, through its public API."""

    name = "memsearch"
    description = "memsearch as shipped (library defaults)"

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            from memsearch import MemoryIndex  # noqa: F401
        except ImportError as ex:
            return f"memsearch.MemoryIndex not importable ({ex})"
        return None

    def build(self, root: Path) -> None:
        from memsearch import MemoryIndex

        db_path = self._fresh_scratch() / "memsearch.db"
        self.index = MemoryIndex(root, db_path=db_path)
        self.index.reconcile()

    def search(self, question: str, k: int) -> list[str]:
        from memsearch import NoSearchableWords

        # Searching reconciles the index with the tree first (the library's
        # "always fresh" default), so the timed query includes that check,
        # as it does for an agent using memsearch as shipped.
        try:
            hits = self.index.search(question, limit=k)
        except NoSearchableWords:
            # The library refuses a query with no words; the other engines
            # return nothing for it, and so does this adapter.
            return []
        return [hit.path for hit in hits]

    def close(self) -> None:
        close = getattr(self.index, "close", None)
        if close:
            close()


# --------------------------------------------------------------------------
# Lexical peers


class TantivyEngine(Engine):
    """tantivy with its English stemmer (``en_stem``), words ORed."""

    name = "tantivy"
    description = "tantivy (PyPI), en_stem tokenizer, OR of quoted words, BM25"

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            import tantivy  # noqa: F401
        except ImportError:
            return "tantivy not installed (pip install -e '.[bench]')"
        return None

    def build(self, root: Path) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("path", stored=True, tokenizer_name="raw")
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        self.index = tantivy.Index(builder.build(), path=str(self._fresh_scratch()))
        # One indexing thread: the machine has two cores and the harness
        # runs one heavy thing at a time.
        writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        for relpath, text in tree_files(root):
            writer.add_document(tantivy.Document(path=relpath, body=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, question: str, k: int) -> list[str]:
        words = WORD.findall(question)
        if not words:
            return []
        # Quoted words cannot be query syntax (a word has no quote in it),
        # and the parser's default conjunction is OR.
        query = self.index.parse_query(
            " ".join(f'"{word}"' for word in words), ["body"]
        )
        hits = self.searcher.search(query, limit=k).hits
        ranked = [
            (-score, self.searcher.doc(address)["path"][0])
            for score, address in hits
        ]
        return [path for _, path in sorted(ranked)]


class Bm25sEngine(Engine):
    """bm25s with its defaults and its English stop-word list.

    bm25s ships no stemmer of its own (it takes PyStemmer's when given one),
    so the plain peer runs without; that is the configuration behind the
    issue's reference figures. :class:`Bm25sStemEngine` adds the stemmer.
    """

    name = "bm25s"
    description = "bm25s (PyPI) defaults (Lucene BM25, k1=1.5, b=0.75), stopwords='en', no stemmer"
    STEM = False

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            import bm25s  # noqa: F401

            if cls.STEM:
                import Stemmer  # noqa: F401
        except ImportError as ex:
            return f"{ex.name} not installed (pip install -e '.[bench]')"
        return None

    def build(self, root: Path) -> None:
        import bm25s

        stemmer = None
        if self.STEM:
            import Stemmer

            stemmer = Stemmer.Stemmer("english")
        files = tree_files(root)
        self.paths = [relpath for relpath, _ in files]
        self.tokenizer = bm25s.tokenization.Tokenizer(stopwords="en", stemmer=stemmer)
        tokens = self.tokenizer.tokenize(
            [text for _, text in files],
            update_vocab=True,
            return_as="ids",
            show_progress=False,
        )
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)

    def search(self, question: str, k: int) -> list[str]:
        # update_vocab=False: words the tree never saw cannot match anything.
        tokens = self.tokenizer.tokenize(
            [question], update_vocab=False, return_as="ids", show_progress=False
        )
        k = min(k, len(self.paths))
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        # bm25s always returns k documents; those scoring 0 share no word
        # with the question and are not hits.
        ranked = [
            (-float(score), self.paths[doc])
            for doc, score in zip(docs[0], scores[0])
            if score > 0
        ]
        return [path for _, path in sorted(ranked)]


class Bm25sStemEngine(Bm25sEngine):
    """bm25s as above plus PyStemmer's Snowball English stemmer."""

    name = "bm25s-stem"
    description = "bm25s as above plus PyStemmer's English (Snowball) stemmer"
    STEM = True


class RipgrepEngine(Engine):
    """ripgrep as the grep baseline: files ranked by query-word matches.

    ``rg --count-matches -i -w -F -e word ...`` counts, per file, how many
    times any query word occurs as a whole word. No index, no idf: a common
    word counts as much as a rare one, which is what grepping gives you.
    """

    name = "rg"
    description = "ripgrep, files ranked by count of whole-word query matches"

    RG = "rg"

    @classmethod
    def unavailable(cls) -> str | None:
        if shutil.which(cls.RG) is None:
            return "ripgrep not installed (apt-get install -y ripgrep)"
        return None

    def build(self, root: Path) -> None:
        # Nothing to build: grep reads the tree on every query.
        self.root = root

    def search(self, question: str, k: int) -> list[str]:
        words = sorted({word.lower() for word in WORD.findall(question)})
        if not words:
            return []
        command = [
            self.RG, "--count-matches", "-i", "-w", "-F",
            "--no-ignore", "--hidden", "--no-messages", "--glob", "*.md",
        ]
        for word in words:
            command += ["-e", word]
        command.append(".")
        # rg exits 1 when nothing matches, which is a valid empty answer.
        result = subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, check=False
        )
        ranked = []
        for line in result.stdout.splitlines():
            path, _, count = line.rpartition(":")
            ranked.append((-int(count), path.removeprefix("./")))
        return [path for _, path in sorted(ranked)[:k]]


ENGINES: dict[str, type[Engine]] = {
    engine.name: engine
    for engine in (
        MemsearchEngine,
        BaselineEngine,
        TantivyEngine,
        Bm25sEngine,
        Bm25sStemEngine,
        RipgrepEngine,
    )
}
