"""Chinese, Japanese and Korean text for FTS5's ``unicode61`` tokenizer.

``unicode61`` makes a run of Han, kana or Hangul without spaces ONE token: ``暂存 提交`` cannot find
``将暂存的文件提交到仓库``. Instead of a tokenizer binary, memsearch indexes a *segmented* copy, each CJK run
spelled as its overlapping bigrams (Lucene's CJKAnalyzer scheme), joined by ``SEPARATOR``::

    segment("用 git 提交到仓库")  ->  "用 git 提交⁣交到⁣到仓⁣仓库⁣库"

Other text is untouched. Each run ends with a unigram of its last character, so every character starts some
token (a one-character query is a prefix, ``"库"*``) and phrases of bigrams cannot run across two runs. The form
is lossless, ``unsegment_snippet(segment(t)) == t``, so ``snippet()`` over it can show the original characters.
Pure functions over ``str``; no sqlite3.
"""

from __future__ import annotations

import functools
import re

from .codewords import CLOSE, MARKS, OPEN, expand, folded, normalized, unexpand, unexpand_marked
from .format import split_marks

# Joins the bigrams of a run and splits it from letters glued to it ("docker部署"). U+2063 is a format character
# (Cf): never inside a unicode61 token, rare in text; where text holds it, segment() doubles it.
SEPARATOR = "\u2063"

# Han, kana and Hangul letters and marks (L*, N*, M*) unicode61 keeps inside tokens; their punctuation
# (、。「」・゛゜) already separates tokens.
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3021-\u3029"  # Hangzhou numerals
    "\u3031-\u3035"  # kana repeat marks
    "\u303b\u303c"  # 〻 〼
    "\u3041-\u3096"  # Hiragana
    "\u3099\u309a"  # combining (han)dakuten
    "\u309d-\u309f"  # ゝ ゞ ゟ
    "\u30a1-\u30fa"  # Katakana
    "\u30fc-\u30ff"  # ー ヽ ヾ ヿ
    "\u3131-\u318e"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97c"  # Hangul Jamo extended A
    "\uac00-\ud7a3"  # Hangul syllables
    "\ud7b0-\ud7fb"  # Hangul Jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\uffa0-\uffdc"  # half-width Hangul
    "\U0001b000-\U0001b16f"  # Kana supplement and extensions
    "\U00020000-\U0003ffff"  # CJK extensions B and later, compatibility supplement
)

# A query's word, here and in memsearch.query, goes on through combining marks (codewords.MARKS): a stressed
# "моло́ко" (no NFC form) is one token to unicode61, a voweled Arabic or Hebrew word one word to fold. "_" joins
# a word's parts (snake_case) but separates unicode61's tokens, so a run of underscores alone is no word. Tried only
# where a run of them starts: from inside one it reaches the same end, and retrying at each cost its length squared.
WORD = re.compile(rf"(?<!_)_*[^\W_][\w{MARKS}]*")

# How query_terms() matches a CJK word of bigrams ab, bc, cd:
#   "phrase"  "ab bc cd"                      the word as a substring
#   "and"     ("ab" AND "bc" AND "cd")        all its bigrams, anywhere
#   "or"      ("ab" OR "bc" OR "cd")          any bigram; bm25 ranks
#   "hybrid"  ("ab bc cd" OR "ab" OR "bc" OR "cd")
# "or" is the default: people type compounds ("删除分支") that are not substrings of the page
# ("删除本地分支"), where "phrase" and "and" find nothing (bench/CJK.md).
WORD_MODES = ("phrase", "and", "or", "hybrid")
DEFAULT_WORD_MODE = "or"

# The UTF-8 lead bytes of _CJK_CLASS: a bytes search for them is several times faster than cjk_run().
_MAYBE_CJK = rb"[\xe1\xe3-\xed\xef\xf0]"


# Compiled on first use, off `memsearch query`'s start-up (ASCII text never needs it).
@functools.cache
def cjk_run() -> re.Pattern[str]:
    """A run of CJK letters (what segment() spells as bigrams)."""
    return re.compile(f"[{_CJK_CLASS}]+")


def has_cjk(text: str) -> bool:
    """True if ``text`` holds a Han, kana or Hangul character."""
    return not text.isascii() and cjk_run().search(text) is not None


def nfc(text: str) -> str:
    """``text`` in Unicode NFC; ASCII already is, so most texts never load unicodedata."""
    return text if text.isascii() else normalized("NFC", text)


def segmented(text: str | None) -> str | None:
    """The shadow column's text, ``segment(expand(nfc(text)))``, or None when that is ``text``
    itself. NFC because queries are: a decomposed file (``데이터`` as Jamo) is indexed composed."""
    return _shadow(text)[0]


def stored(text: str | None) -> tuple[str | None, str | None]:
    """The two columns that hold ``text``: (text column, shadow column). With a shadow, the text column is "" and
    :func:`original` derives the text from the shadow, so the row holds it once; a text not in NFC keeps its copy
    (its shadow spells the NFC form)."""
    shadow, exact = _shadow(text)
    return ("" if exact else text, shadow) if shadow is not None else (text, None)


def original(text: str | None, shadow: str | None) -> str | None:
    """The text a row's (text column, shadow column) hold, as :func:`stored` wrote them: every reader of a text
    column goes through this."""
    if text or shadow is None:
        return text
    if SEPARATOR in shadow:
        shadow = _JOINS.sub(_unjoin, shadow)
    return unexpand(shadow) if OPEN in shadow or CLOSE in shadow else shadow


# What segment() put in: an escaped SEPARATOR of the text, or a separator with the character after it (the repeat
# of a bigram's, or a neighbour's).
_JOINS = re.compile(f"{SEPARATOR}(?:({SEPARATOR})|(.?))", re.DOTALL)


def _unjoin(m: re.Match[str]) -> str:
    if m.group(1):
        return SEPARATOR
    after = m.group(2)
    # Only a bigram's second character repeats the one before the separator: a neighbour glued to a run is no CJK
    # letter, else it would be in the run.
    return "" if after and m.string[m.start() - 1] == after else after


def _shadow(text: str | None) -> tuple[str | None, bool]:
    """segmented(text), and whether original() gives ``text`` back from it."""
    if text is None:
        return None, True
    if text.isascii():
        spelled = expand(text)
        return (None if spelled is text or spelled == text else spelled), True
    composed = nfc(text)
    exact = composed is text or composed == text
    composed = expand(composed)
    if SEPARATOR not in composed and re.search(_MAYBE_CJK, composed.encode("utf-8", "surrogatepass")) is None:
        return (None if composed == text else composed), exact
    spelled = segment(composed)
    return (None if spelled == text else spelled), exact


def _glues(char: str) -> bool:
    """Would unicode61 put ``char`` in the same token as a neighbour?"""
    if char.isalnum():  # letters and numbers: the common case, and fast
        return True
    if char <= "\x7f":
        return False
    from unicodedata import category  # (imported the first time CJK text needs it)

    return category(char)[0] == "M" or category(char) == "Co"


def bigrams(run: str) -> list[str]:
    """The overlapping pairs of characters of ``run``: ``提交到`` gives ``提交``, ``交到``."""
    return list(map(str.__add__, run, run[1:]))


def runs(word: str):
    """(part, CJK?) of each CJK run of ``word`` and of the text between them, in order."""
    if word.isascii():
        yield word, False
        return
    last = 0
    for m in cjk_run().finditer(word):
        if m.start() > last:
            yield word[last:m.start()], False
        yield m.group(), True
        last = m.end()
    if last < len(word):
        yield word[last:], False


# segment() spells a long run a slice at a time (a list of a whole run's bigrams: ~60 bytes a character).
_SLICE = 4096


def segment(text: str) -> str:
    """The text to index: a CJK run of one character stays; a longer one is its bigrams plus its last character,
    joined by and split from glued letters by ``SEPARATOR``. ``segment(t) == t`` when ``t`` has no CJK nor SEPARATOR."""
    if SEPARATOR in text:
        text = text.replace(SEPARATOR, SEPARATOR * 2)
    elif not has_cjk(text):
        return text

    def spell(m: re.Match[str]) -> str:
        spelled = run = m.group()
        if len(run) > 1:
            slices = (SEPARATOR.join(bigrams(run[i:i + _SLICE + 1])) for i in range(0, len(run) - 1, _SLICE))
            spelled = SEPARATOR.join(slices) + SEPARATOR + run[-1]
        start, end = m.span()
        if start and _glues(text[start - 1]):
            spelled = SEPARATOR + spelled
        if end < len(text) and _glues(text[end]):
            spelled += SEPARATOR
        return spelled

    return cjk_run().sub(spell, text)


def quote(words: str) -> str:
    """``words`` as one FTS5 string (a phrase of several), any double quote dropped."""
    return '"' + words.replace('"', "") + '"'


def _cjk_word(run: str, mode: str) -> str:
    if len(run) == 1:
        # Matches the unigram of a one-character run and every bigram starting with it: every occurrence of it.
        return f"{quote(run)}*"
    pairs = bigrams(run)
    if len(pairs) == 1:
        return quote(pairs[0])
    phrase = quote(" ".join(pairs))
    if mode == "phrase":
        return phrase
    strings = [phrase] * (mode == "hybrid") + list(map(quote, pairs))
    return "(" + (" AND " if mode == "and" else " OR ").join(strings) + ")"


def _other_words(word: str) -> list[str]:
    """A word without CJK: one quoted token, folded as the index's expansions are (``Αθηνά`` ->
    ``Αθηνα``, ``ｇｉｔ`` -> ``git``), plus its case-folded spelling where unicode61, which lowercases
    but does not fold, would miss it ("Straße" and "STRASSE"). Underscores alone: none."""
    if not word.strip("_"):
        return []
    word = folded(word)
    cased = word.casefold()
    return [quote(word)] if cased in (word, word.lower().replace("ς", "σ")) else [quote(word), quote(cased)]


def query_terms(text: str, mode: str = DEFAULT_WORD_MODE) -> list[str]:
    """FTS5 query fragments, one per word of ``text`` (two where case folding spells it otherwise), to join with OR.
    A CJK run inside a ``\\w+`` word (``docker部署``) is a word of its own. A non-CJK word is one quoted token; a CJK
    word of one character a quoted prefix (``"库"*``), of two its bigram, longer its bigrams as ``mode`` says."""
    if mode not in WORD_MODES:
        raise ValueError(f"mode must be one of {', '.join(WORD_MODES)}, not {mode!r}")
    terms: list[str] = []
    for word in WORD.findall(text):
        if word.isascii():  # no CJK, no full-width letters: one quoted token
            terms.append(quote(word))
            continue
        for part, cjk in runs(word):
            terms.extend([_cjk_word(part, mode)] if cjk else _other_words(part))
    return terms


def _split_markers(snippet: str, start: str, end: str) -> list[tuple[str, bool]]:
    """Each character of ``snippet`` without its markers, and whether a marker pair encloses it. An unpaired marker
    stays text; a pair the original text held reads as a highlight, written back with the same markers."""
    pieces, paired = split_marks(snippet, start, end)
    chars: list[tuple[str, bool]] = []
    depth = 0
    for i, piece in enumerate(pieces):
        if i in paired:
            depth += 1 if piece == start else -1
        else:
            chars.extend((c, depth > 0) for c in piece)
    return chars


# A quoted string of an FTS5 query, and the * that makes it a prefix.
_QUERY_STRING = r'"([^"]*)"(\*?)'


def _unmark_prefix_matches(chars: list[tuple[str, bool]], query: str) -> None:
    """The prefix query ``"変"*`` matches the bigram token ``変更``: unmark its second character, unless the query
    also asks for the whole bigram."""
    prefixes, exact = set(), set()
    for text, star in re.findall(_QUERY_STRING, query):
        if star and len(text) == 1:
            prefixes.add(text)
        else:
            exact.update(text.split())
    if not prefixes:
        return
    cjk_char = cjk_run()
    i = 0
    while i < len(chars) - 1:
        (a, a_lit), (b, b_lit) = chars[i], chars[i + 1]
        if cjk_char.match(a) and cjk_char.match(b):
            # Two CJK characters in a row are one bigram token: segment() puts a separator between tokens.
            if a_lit and b_lit and a in prefixes and a + b not in exact:
                chars[i + 1] = (b, False)
            i += 2
        else:
            i += 1


def unsegment_snippet(snippet: str, start: str = "<<", end: str = ">>", *, query: str = "") -> str:
    """Map ``snippet()`` output over the segmented text back to the original: matched ``暂存`` and ``存的`` become
    ``<<暂存的>>``, a window cut inside a run maps back too, and with no markers this inverts ``segment()`` exactly.
    ``query``: the FTS5 query that made the snippet; with it, a character searched alone is marked alone
    (``<<変>>更``, not ``<<変更>>``). The expansions of code words go too (codewords.unexpand_marked)."""
    segmented_ = SEPARATOR in snippet
    if not segmented_ and OPEN not in snippet and CLOSE not in snippet:
        return snippet  # nothing was segmented or expanded
    if not start or not end or start == end:
        raise ValueError("start and end markers must be two different non-empty strings")
    chars = _split_markers(snippet, start, end)
    out = _unsegmented(chars, query) if segmented_ else [list(c) for c in chars]
    if OPEN in snippet or CLOSE in snippet:
        out = unexpand_marked(out)
    result: list[str] = []
    inside = False
    for char, lit in out:
        if lit != inside:
            result.append(start if lit else end)
            inside = lit
        result.append(char)
    if inside:
        result.append(end)
    return "".join(result)


def _unsegmented(chars: list[tuple[str, bool]], query: str) -> list[list]:
    cjk_char = cjk_run()
    if "*" in query:
        _unmark_prefix_matches(chars, query)
    out: list[list] = []  # [character, highlighted]
    i, n = 0, len(chars)
    while i < n:
        char, lit = chars[i]
        if char != SEPARATOR:
            out.append([char, lit])
            i += 1
            continue
        following = chars[i + 1][0] if i + 1 < n else ""
        if following == SEPARATOR:  # an escaped separator of the original
            out.append([SEPARATOR, lit or chars[i + 1][1]])
            i += 2
        elif out and following == out[-1][0] and cjk_char.match(following):
            # The next bigram of the run repeats the character we just wrote.
            out[-1][1] = out[-1][1] or chars[i + 1][1]
            i += 2
        else:  # splits a run from glued letters, or ends a cut window
            i += 1
    return out
