"""Chinese and Japanese retrieval over the tldr pages: which index and query scheme?

    python bench/cjk.py [--corpus DIR] [--out bench/results/cjk.md]

Builds one index of the tldr zh and ja pages per scheme in a temporary
directory, runs the query sets and writes a Markdown report. Schemes:

- ``unicode61``: today's engine, the body indexed as is, user words quoted.
- ``trigram``: FTS5's trigram tokenizer over the body, same queries.
- ``bigram-<mode>``: the body segmented by ``memsearch.cjk.segment`` into a
  shadow column, queries from ``memsearch.cjk.query_terms(q, mode)``.
- ``memsearch``: the shipped engine. The pages are written as a tree
  (``zh/common/git-commit.md``), indexed by ``MemoryIndex.reconcile()`` and
  queried by ``MemoryIndex.search(q, limit=10)``, migrations, query builder,
  floor and snippets included.

Every scheme ranks by bm25 and applies the engine's 15% relative floor.
The query sets and how they are made are described in bench/CJK.md.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from memsearch import MemoryIndex, cjk  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "tldr"
DEFAULT_OUT = ROOT / "bench" / "results" / "cjk.md"
LANGS = ("zh", "ja")

# Mirrors the engine: keep hits scoring at least 15% of the best one, and
# over-fetch before cutting to k.
RELATIVE_FLOOR = 0.15
FETCH = 50
MRR_CUTOFF = 10
BUILD_REPEATS = 5

# --- query sets ----------------------------------------------------------------

# Lines that every page has, or that only point elsewhere: no words from them.
BOILERPLATE = re.compile(
    "更多信息|另请参阅|此命令为|此命令仅|原命令的文档|詳細情報|参照:|このコマンドは|オリジナルのコマンド"
)
# Function characters that end a Chinese word candidate (particles,
# conjunctions, prepositions, measure words). Crude on purpose: no dictionary.
ZH_STOP = set("的了和与或及并将把被从到对为个一等其所该此于给向让使也都就而且之着过这那在是中以")
ZH_RUN = re.compile("[\u3400-\u9fff]+")
# Japanese content words: runs of kanji, or runs of katakana; hiragana is
# mostly grammar (okurigana and particles), so it ends a word.
JA_WORD = re.compile("[\u3400-\u9fff々〆]{2,}|[\u30a1-\u30fa\u30fc]{2,}")
KATAKANA = re.compile("[\u30a1-\u30fa\u30fc]+")
ALIAS = re.compile("此命令为 `([^`]+)` 的别名|このコマンドは `([^`]+)` のエイリアスです")
# See Segmenter; the ja pages are a third of the zh ones, so fewer sightings.
SEGMENT_MIN_COUNT = {"zh": 3, "ja": 2}
# Few pages contain a word a person would type to find one page. Words that
# appear on more pages than this share are not used as query words.
MAX_DF_SHARE = 0.02

# The ja pages with prose are few (most are alias stubs), so each yields
# several queries, drawn independently.
QUERIES_PER_PAGE = {"zh": 1, "ja": 3}

# Written by hand from knowledge of the commands, not from the pages' text:
# how a person might look for each page. Gold: any of the listed paths (and
# every page with the same title, as for the generated sets).
HAND_QUERIES = {
    "zh": [
        ("提交 更改", "common/git-commit.md"),
        ("暂存 提交", "common/git-commit.md"),
        ("删除分支", "common/git-branch.md"),
        ("克隆 仓库", "common/git-clone.md"),
        ("推送到远程", "common/git-push.md"),
        ("查看提交历史", "common/git-log.md"),
        ("切换分支", "common/git-checkout.md"),
        ("git 差异", "common/git-diff.md"),
        ("合并分支", "common/git-merge.md"),
        ("变基", "common/git-rebase.md"),
        ("git 撤销", "common/git-reset.md"),
        ("tar 解压", "common/tar.md"),
        ("磁盘 可用空间", "common/df.md"),
        ("目录占用空间", "common/du.md"),
        ("列出目录内容", "common/ls.md"),
        ("复制文件", "common/cp.md"),
        ("移动 重命名", "common/mv.md"),
        ("删除文件", "common/rm.md"),
        ("创建目录", "common/mkdir.md"),
        ("修改权限", "common/chmod.md"),
        ("更改所有者", "common/chown.md"),
        ("正在运行的进程", "common/ps.md"),
        ("终止进程", "common/kill.md"),
        ("搜索文本", "common/grep.md"),
        ("查找文件", "common/find.md"),
        ("远程登录", "common/ssh.md"),
        ("复制到远程主机", "common/scp.md"),
        ("下载文件", ("common/wget.md", "common/curl.md")),
        ("网络 连通", "common/ping.md"),
        ("运行容器", "common/docker-run.md"),
        ("列出容器", "common/docker-ps.md"),
        ("构建镜像", "common/docker-build.md"),
        ("docker 镜像列表", "common/docker-images.md"),
        ("容器 执行命令", "common/docker-exec.md"),
        ("解压 zip", "common/unzip.md"),
        ("符号链接", "common/ln.md"),
        ("定时任务", "common/crontab.md"),
        ("重启系统", "linux/reboot.md"),
        ("网络接口", ("linux/ip.md", "common/ifconfig.md")),
        ("去除重复行", "common/uniq.md"),
        ("统计行数", "common/wc.md"),
        ("文件前几行", "common/head.md"),
        ("文件末尾", "common/tail.md"),
        ("比较文件", "common/diff.md"),
        ("替换文本", "linux/sed.md"),
        ("视频 转换", "common/ffmpeg.md"),
        ("pip 安装包", "common/pip.md"),
        ("启动服务", "linux/systemctl.md"),
        ("同步目录", "common/rsync.md"),
        ("目录树", "common/tree.md"),
        ("当前用户名", "common/whoami.md"),
        ("内核 系统信息", "common/uname.md"),
        ("加密 签名", "common/gpg.md"),
        ("base64 编码", "common/base64.md"),
        ("校验和", "common/md5sum.md"),
        ("命令别名", "common/alias.md"),
        ("环境变量", "common/export.md"),
        ("可执行文件 路径", "common/which.md"),
        ("手册页", "common/man.md"),
        ("创建空文件", "common/touch.md"),
        ("编译 C 程序", "common/gcc.md"),
        ("切换目录", "common/cd.md"),
        ("卸载文件系统", "common/umount.md"),
    ],
    "ja": [
        ("変更 コミット", "common/git-commit.md"),
        ("アーカイブ 展開", "common/tar.md"),
        ("ディスク 空き容量", "common/df.md"),
        ("ディレクトリ サイズ", "common/du.md"),
        ("ファイル一覧", "common/ls.md"),
        ("ファイルをコピー", "common/cp.md"),
        ("ディレクトリ作成", "windows/mkdir.md"),
        ("パーミッション 変更", "common/chmod.md"),
        ("所有者 変更", "common/chown.md"),
        ("プロセス 一覧", "common/ps.md"),
        ("テキスト 検索", "common/grep.md"),
        ("ファイル 検索", "common/find.md"),
        ("リモート ログイン", "common/ssh.md"),
        ("ダウンロード", ("common/wget.md", "common/curl.md")),
        ("ネットワーク 到達", "common/ping.md"),
        ("コンテナ 実行", "common/docker-run.md"),
        ("コンテナ一覧", "common/docker-ps.md"),
        ("イメージ ビルド", "common/docker-build.md"),
        ("docker イメージ 一覧", "common/docker-images.md"),
        ("zip 圧縮", "common/zip.md"),
        ("コマンド履歴", "common/history.md"),
        ("ネットワーク インターフェース", "linux/ip.md"),
        ("ポート 接続", "common/netstat.md"),
        ("ファイル 比較", "common/diff.md"),
        ("文字列 置換", "common/sed.md"),
        ("動画 変換", "common/ffmpeg.md"),
        ("パッケージ インストール", "linux/apt.md"),
        ("サービス 起動", "linux/systemctl.md"),
        ("ファイルの内容 表示", "common/cat.md"),
        ("ユーザー名", "common/whoami.md"),
        ("システム情報", "common/uname.md"),
        ("鍵 生成", "common/ssh-keygen.md"),
        ("暗号化", "common/gpg.md"),
        ("エイリアス", "common/alias.md"),
        ("ディレクトリ 移動", "common/cd.md"),
        ("現在のディレクトリ", "common/pwd.md"),
        ("コンパイル", ("common/gcc.md", "common/make.md")),
        ("Kubernetes クラスター", "common/kubectl.md"),
        ("テキストエディタ", "common/vim.md"),
    ],
}


@dataclass
class Page:
    lang: str
    path: str  # relative to pages.<lang>/
    title: str
    body: str


@dataclass
class QuerySet:
    lang: str
    name: str
    queries: list[tuple[str, frozenset[str]]] = field(default_factory=list)  # (text, gold keys)


def load_pages(corpus: Path) -> list[Page]:
    pages = []
    for lang in LANGS:
        base = corpus / f"pages.{lang}"
        for file in sorted(base.rglob("*.md")):
            body = file.read_text(encoding="utf-8")
            title = body.splitlines()[0].lstrip("# ").strip() if body else file.stem
            pages.append(Page(lang, file.relative_to(base).as_posix(), title, body))
    return pages


def _prose_lines(body: str) -> list[str]:
    """Description and example lines, without code, placeholders or boilerplate."""
    lines = []
    for line in body.splitlines():
        if not line.startswith(("> ", "- ")) or BOILERPLATE.search(line):
            continue
        lines.append(re.sub(r"`[^`]*`|\{\{.*?\}\}", " ", line[2:]))
    return lines


class Segmenter:
    """Cuts a run of CJK characters into likely words without a dictionary.

    Maximum-likelihood segmentation under a unigram model whose
    probabilities are the counts of 1-4 character strings in the same
    language's pages: "转换文件格式" becomes 转换|文件|格式 because 文件 and
    格式 are frequent and 件格 is not. Pieces of one character are dropped.
    """

    MAX_LEN = 4

    def __init__(self, runs: list[str], min_count: int):
        # A piece of two or more characters seen fewer times than this is not
        # a word; without it rare long pieces that straddle two words win.
        self.min_count = min_count
        self.counts: Counter[str] = Counter()
        for run in runs:
            for n in range(1, self.MAX_LEN + 1):
                self.counts.update(run[i : i + n] for i in range(len(run) - n + 1))
        self.total = sum(self.counts.values())

    def __call__(self, run: str) -> list[str]:
        best = [(0.0, 0)] + [(-math.inf, 0)] * len(run)  # (log-likelihood, piece length)
        for end in range(1, len(run) + 1):
            for n in range(1, min(self.MAX_LEN, end) + 1):
                count = self.counts[run[end - n : end]]
                if n == 1 or count >= self.min_count:
                    count = max(count, 1)
                    score = best[end - n][0] + math.log(count / self.total)
                    if score > best[end][0]:
                        best[end] = (score, n)
        pieces, end = [], len(run)
        while end:
            n = best[end][1]
            pieces.append(run[end - n : end])
            end -= n
        return [p for p in reversed(pieces) if len(p) >= 2]


def _runs(page: Page) -> list[str]:
    """CJK stretches of a page's prose that could hold content words: for
    Chinese, Han runs cut at function characters; for Japanese, kanji runs and
    katakana runs (hiragana is mostly grammar there: okurigana, particles)."""
    runs = []
    for line in _prose_lines(page.body):
        if page.lang == "zh":
            for run in ZH_RUN.findall(line):
                runs += re.split("[" + "".join(ZH_STOP) + "]", run)
        else:
            runs += JA_WORD.findall(line)
    return [r for r in runs if len(r) >= 2]


def words_of(page: Page, segmenter: Segmenter) -> list[str]:
    """Candidate query words from a page's prose, in order, without duplicates.
    Katakana runs are loanwords and stay whole."""
    words: list[str] = []
    for run in _runs(page):
        words += [run] if KATAKANA.fullmatch(run) else segmenter(run)
    return list(dict.fromkeys(words))


def gold_key(lang: str, title: str) -> str:
    return f"{lang}:{title.lower()}"


def make_query_sets(pages: list[Page]) -> list[QuerySet]:
    """Deterministic query sets per language; see bench/CJK.md for the method."""
    sets = []
    for lang in LANGS:
        mine = [p for p in pages if p.lang == lang]
        lowered = [p.body.lower() for p in mine]
        segmenter = Segmenter([r for p in mine for r in _runs(p)], SEGMENT_MIN_COUNT[lang])
        per_page = {p.path: words_of(p, segmenter) for p in mine}
        vocab = {w for ws in per_page.values() for w in ws}
        df = {w: sum(w in b for b in lowered) for w in vocab}
        max_df = max(3, int(MAX_DF_SHARE * len(mine)))
        spaced, joined, mixed = (QuerySet(lang, n) for n in ("spaced", "joined", "mixed"))
        for page in mine:
            candidates = [w for w in per_page[page.path] if df[w] <= max_df]
            if not candidates:
                continue
            rng = random.Random(f"{lang}:{page.path}")
            gold = frozenset([gold_key(lang, page.title)])
            head = page.title.split()
            seen = set()
            for _ in range(QUERIES_PER_PAGE[lang]):
                k = min(rng.choice((1, 2, 2, 3)), len(candidates))
                words = rng.sample(candidates, k)
                if " ".join(words) in seen:
                    continue
                seen.add(" ".join(words))
                spaced.queries.append((" ".join(words), gold))
                if k >= 2:
                    joined.queries.append(("".join(words[:2]), gold))
                if len(head) >= 2 and re.fullmatch(r"[\w.-]+", head[0]):
                    mixed.queries.append((f"{head[0]} {words[0]}", gold))
        hand = QuerySet(lang, "hand")
        by_path = {p.path: p for p in mine}
        for text, paths in HAND_QUERIES[lang]:
            paths = (paths,) if isinstance(paths, str) else paths
            gold = set()
            for path in paths:
                gold.add(gold_key(lang, by_path[path].title))
                # An alias stub ("docker run") counts its target's page too.
                target = ALIAS.search(by_path[path].body)
                if target:
                    gold.add(gold_key(lang, target.group(1) or target.group(2)))
            hand.queries.append((text, frozenset(gold)))
        sets += [spaced, joined, mixed, hand]
    return sets


# --- schemes -------------------------------------------------------------------

SCHEMA = """
CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT, lang TEXT, title TEXT, body TEXT{seg_col});
CREATE VIRTUAL TABLE docs_fts USING fts5({col}, content='docs', content_rowid='id', tokenize="{tokenize}");
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, {col}) VALUES (new.id, new.{col});
END;
"""


def quote_words(text: str) -> list[str]:
    """Today's query builder: every \\w+ run quoted, joined with OR."""
    return [f'"{w}"' for w in re.findall(r"\w+", text)]


@dataclass
class Scheme:
    name: str
    tokenize: str
    segmented: bool
    # text -> FTS5 fragments per stage; a later stage runs only while the hits
    # so far are fewer than FALLBACK_BELOW, and appends the new ones.
    stages: Callable[[str], list[list[str]]]
    index: str  # the built index it queries (schemes share them)


# What a search with a limit of 10 would do with a two-stage scheme.
FALLBACK_BELOW = 10

_UNICODE61 = "unicode61 remove_diacritics 2"
SCHEMES = [
    Scheme("unicode61", _UNICODE61, False, lambda q: [quote_words(q)], "unicode61"),
    Scheme("trigram", "trigram", False, lambda q: [quote_words(q)], "trigram"),
    *(
        Scheme(f"bigram-{mode}", _UNICODE61, True, lambda q, m=mode: [cjk.query_terms(q, m)], "bigram")
        for mode in cjk.WORD_MODES
    ),
    Scheme(
        "bigram-phrase,or",
        _UNICODE61,
        True,
        lambda q: [cjk.query_terms(q, "phrase"), cjk.query_terms(q, "or")],
        "bigram",
    ),
]


def build(path: Path, scheme: Scheme, pages: list[Page]) -> tuple[float, float]:
    """Build the index; return (CPU seconds in all, of them in segment()).

    CPU time, not wall time: the benchmark machine is shared, and SQLite runs
    in this process, so CPU time is what the build costs here."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    col = "body_seg" if scheme.segmented else "body"
    db.executescript(SCHEMA.format(seg_col=", body_seg TEXT" if scheme.segmented else "",
                                   col=col, tokenize=scheme.tokenize))
    started = time.process_time()
    if scheme.segmented:
        segmented = [cjk.segment(p.body) for p in pages]
    segmenting = time.process_time() - started if scheme.segmented else 0.0
    with db:
        if scheme.segmented:
            rows = ((p.path, p.lang, p.title, p.body, seg) for p, seg in zip(pages, segmented))
            db.executemany("INSERT INTO docs (path, lang, title, body, body_seg) VALUES (?,?,?,?,?)", rows)
        else:
            rows = ((p.path, p.lang, p.title, p.body) for p in pages)
            db.executemany("INSERT INTO docs (path, lang, title, body) VALUES (?,?,?,?)", rows)
    elapsed = time.process_time() - started
    db.close()
    return elapsed, segmenting


def sizes(path: Path, fts_table: str = "docs_fts") -> tuple[int, int]:
    """(file bytes, bytes of the FTS index's own tables)."""
    db = sqlite3.connect(path)
    fts = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE ?", (fts_table + "%",)).fetchone()[0]
    db.close()
    return path.stat().st_size, fts


def search(db: sqlite3.Connection, fragments: list[str]) -> list[tuple[int, str]]:
    """(rowid, gold key) of the hits, best first, after the relative floor."""
    if not fragments:
        return []
    rows = db.execute(
        "SELECT d.id, d.lang, d.title, docs_fts.rank FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid"
        " WHERE docs_fts MATCH ? ORDER BY docs_fts.rank LIMIT ?",
        (" OR ".join(fragments), FETCH),
    ).fetchall()
    if not rows:
        return []
    best = rows[0][3]  # bm25: more negative is better
    return [(id_, gold_key(lang, title)) for id_, lang, title, score in rows if score <= best * RELATIVE_FLOOR]


@dataclass
class Score:
    n: int = 0
    r1: float = 0.0
    r5: float = 0.0
    mrr: float = 0.0
    empty: int = 0
    ms: list[float] = field(default_factory=list)


def staged_search(db: sqlite3.Connection, scheme: Scheme, text: str) -> list[str]:
    """Gold keys of a scheme's hits for ``text``, best first."""
    found: dict[int, str] = {}
    for fragments in scheme.stages(text):
        if len(found) >= FALLBACK_BELOW:
            break
        for rowid, key in search(db, fragments):
            found.setdefault(rowid, key)
    return list(found.values())


def evaluate(searcher: Callable[[str], list[str]], qs: QuerySet) -> Score:
    """``searcher``: query text -> gold keys of the hits, best first."""
    s = Score()
    for text, gold in qs.queries:
        started = time.perf_counter()
        hits = searcher(text)
        s.ms.append((time.perf_counter() - started) * 1000)
        s.n += 1
        s.empty += not hits
        rank = next((i for i, h in enumerate(hits, 1) if h in gold), None)
        if rank:
            s.r1 += rank == 1
            s.r5 += rank <= 5
            s.mrr += 1 / rank if rank <= MRR_CUTOFF else 0
    return s


# --- the shipped engine -----------------------------------------------------------

LIBRARY = "memsearch"
# What an agent asks for; R@5 and MRR@10 need no more.
LIBRARY_LIMIT = 10


class Library:
    """The pages as a memory tree (``zh/common/git-commit.md``) and the
    engine over it, used exactly as a caller would."""

    def __init__(self, folder: Path, pages: list[Page]):
        self.tree, self.db = folder / "tree", folder / "memsearch.db"
        for page in pages:
            file = self.tree / page.lang / page.path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(page.body, encoding="utf-8")
        self.keys = {f"{p.lang}/{p.path}": gold_key(p.lang, p.title) for p in pages}
        self.pages = pages
        self.index: MemoryIndex | None = None

    def build(self) -> tuple[float, float]:
        """CPU seconds of a cold ``reconcile()``, and of ``cjk.segmented()``
        over the same text (inside the build, timed apart here)."""
        self.close()
        for file in self.db.parent.glob(self.db.name + "*"):
            file.unlink()
        started = time.process_time()
        with MemoryIndex(self.tree, self.db) as idx:
            idx.reconcile()
        elapsed = time.process_time() - started
        started = time.process_time()
        for page in self.pages:
            cjk.segmented(page.body)
        return elapsed, time.process_time() - started

    def search(self, text: str) -> list[str]:
        if self.index is None:
            # reconcile=False: the tree does not change, and the other
            # schemes pay for no freshness check either.
            self.index = MemoryIndex(self.tree, self.db, reconcile=False)
        return [self.keys[hit.path] for hit in self.index.search(text, limit=LIBRARY_LIMIT)]

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
            self.index = None


# --- report --------------------------------------------------------------------


def report(pages, sets, names, results, builds, english) -> str:
    counts = Counter(p.lang for p in pages)
    out = [
        "# CJK retrieval on the tldr pages",
        "",
        f"Index: {counts['zh']} zh + {counts['ja']} ja pages in one index. "
        f"bm25, {RELATIVE_FLOOR:.0%} relative floor, {FETCH} fetched "
        f"(`memsearch`: `MemoryIndex.search(q, limit={LIBRARY_LIMIT})`, which fetches 30). "
        f"Generated by `python bench/cjk.py`; method in bench/CJK.md.",
        "",
        "## Quality",
        "",
        "| lang | set | queries | scheme | R@1 | R@5 | MRR@10 | no hit | median ms |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for qs in sets:
        for name in names:
            s = results[(qs.lang, qs.name, name)]
            out.append(
                f"| {qs.lang} | {qs.name} | {s.n} | {name} | {s.r1 / s.n:.3f} | {s.r5 / s.n:.3f} "
                f"| {s.mrr / s.n:.3f} | {s.empty / s.n:.1%} | {statistics.median(s.ms):.2f} |"
            )
    out += [
        "",
        "## Index size and build time",
        "",
        f"Build: CPU seconds, best of {BUILD_REPEATS}, inserting all pages in one transaction through",
        "the insert trigger, `segment()` included; `memsearch`: a cold `MemoryIndex.reconcile()` of the",
        "tree (walk, read, `cjk.segmented()`, insert). Size: the database file, and the FTS5 tables alone.",
        "",
        "| index | build s | of which segment() s | file KiB | FTS KiB |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (secs, segmenting, file_bytes, fts_bytes) in builds.items():
        out.append(
            f"| {name} | {secs:.3f} | {segmenting:.3f} | {file_bytes / 1024:.0f} | {fts_bytes / 1024:.0f} |"
        )
    out += [
        "",
        f"Latin text: `segment()` changes {english[1]} of the {english[0]} English pages "
        "(it leaves text without CJK byte-identical, so the English index and its results are unchanged).",
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the tldr folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown report to write")
    names = [s.name for s in SCHEMES] + [LIBRARY]
    parser.add_argument("--schemes", nargs="+", choices=names, default=names, metavar="SCHEME",
                        help=f"schemes to run (default: all of {', '.join(names)})")
    args = parser.parse_args(argv)
    if not (args.corpus / "pages.zh").is_dir():
        parser.error(f"no pages.zh in {args.corpus}; pass --corpus pointing at the tldr folder")

    pages = load_pages(args.corpus)
    sets = make_query_sets(pages)
    results, builds = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        built: dict[str, Path] = {}
        for scheme in SCHEMES:
            if scheme.name not in args.schemes:
                continue
            if scheme.index not in built:
                path = Path(tmp) / f"{scheme.index}.db"
                secs = min(build(path, scheme, pages) for _ in range(BUILD_REPEATS))
                builds[scheme.index] = (*secs, *sizes(path))
                built[scheme.index] = path
            db = sqlite3.connect(built[scheme.index])
            for qs in sets:
                results[(qs.lang, qs.name, scheme.name)] = evaluate(lambda q: staged_search(db, scheme, q), qs)
            db.close()
        if LIBRARY in args.schemes:
            library = Library(Path(tmp), pages)
            secs = min(library.build() for _ in range(BUILD_REPEATS))
            builds[LIBRARY] = (*secs, *sizes(library.db, "memory_fts_idx"))
            for qs in sets:
                results[(qs.lang, qs.name, LIBRARY)] = evaluate(library.search, qs)
            library.close()
    english = sorted((args.corpus / "pages").rglob("*.md"))
    changed = sum(cjk.segment(t) != t for t in (f.read_text(encoding="utf-8") for f in english))
    text = report(pages, sets, [n for n in names if n in args.schemes], results, builds, (len(english), changed))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
