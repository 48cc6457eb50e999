"""Turn what a user typed into FTS5 queries that cannot fail to parse.

Every run of letters, digits and ``_`` is a word, searched as a double-quoted FTS5 string, so FTS5 syntax in the
input (``AND``, ``NEAR``, ``*``, ``-``, ``:``, parentheses, quotes) is never interpreted. The strings are ORed, so
one unmatched word never empties the result. :func:`plan` searches every word but English stop words (unless
nothing else is left: they push files sharing only them above files sharing the one rare word), and every pair of
adjacent words not both stop words and neither a question word, as a phrase, so files holding them together rank
higher. A CJK word is matched through the index's bigrams (``memsearch.cjk``): ``提交到`` asks for
``("提交" OR "交到")``, one character is a prefix (``"库"*``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from . import codewords
from .cjk import WORD, has_cjk, nfc, query_terms, quote
from .errors import NoSearchableWords, quoted
from .settings import given_type

# NLTK's English stop words (bm25s ships the same 179 as STOPWORDS_EN_PLUS), left out of queries:
# on LoCoMo they cost recall (bench/RANKING.md). \w+ splits contractions, hence "didn", "t", "ll".
STOP_WORDS = frozenset(
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her "
    "hers herself it its itself they them their theirs themselves what which who whom this that these "
    "those am is are was were be been being have has had having do does did doing a an the and but if "
    "or because as until while of at by for with about against between into through during before after "
    "above below to from up down in out on off over under again further then once here there when where "
    "why how all any both each few more most other some such no nor not only own same so than too very s "
    "t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma "
    "mightn mustn needn shan shouldn wasn weren won wouldn".split()
)

# A question word says what kind of answer is wanted, not what it is about: paired with the
# next word ("how much", "what format") it lifts files that merely say the same phrase.
QUESTION_WORDS = frozenset("what which who whom how why where when".split())

# One FTS5 query is run per searched string (memsearch.search); past this many (a pasted paragraph, not a
# question) the words are searched as one OR query ranked by FTS5's own bm25(), and pairs are left out.
MAX_STRINGS = 64

_ONE_PHRASE = re.compile(r'"[^"]*"\*?')


class Query(NamedTuple):
    """The FTS5 strings a search scores and adds up: ``terms``, one per word kept (a CJK word may give an OR of
    bigrams), ``pairs``, as phrases, and ``code``: the terms naming a code word (a symbol word's token, an
    identifier as typed), which weigh CODE_WEIGHT (memsearch.search)."""

    terms: tuple[str, ...]
    pairs: tuple[str, ...] = ()
    code: tuple[str, ...] = ()

    def __repr__(self) -> str:  # (code only when there is some: a plain query prints as before)
        return f"Query(terms={self.terms!r}, pairs={self.pairs!r}{f', code={self.code!r}' if self.code else ''})"

    @property
    def fts(self) -> str:
        """Everything searched, as one FTS5 OR expression (past MAX_STRINGS the
        words alone: the pairs are not searched, see memsearch.search.scored_strings)."""
        return " OR ".join(self.terms + self.pairs if self.separate else self.terms)

    @property
    def separate(self) -> bool:
        """Whether each string gets a query of its own (else one OR query)."""
        return len(self.terms) + len(self.pairs) <= MAX_STRINGS


def is_phrase(fragment: str) -> bool:
    """One quoted phrase (or prefix), as opposed to an OR of several."""
    return _ONE_PHRASE.fullmatch(fragment) is not None


def words(text: str) -> list[str]:
    """The query's words, in order, each once (case-insensitively)."""
    first: dict[str, str] = {}  # casefolded word -> its first spelling
    for word in WORD.findall(nfc(text)):
        first.setdefault(word.casefold(), word)
    return list(first.values())


# A symbol word as typed, read as the index reads it: C++, c#, F#, .NET, .net where no word precedes it.
QUERY_SYMBOL = codewords.SYMBOL
# Words joined without spaces by . / \ : @ (a path, a dotted name, a version) or by - alone (user-id): searched as
# a phrase too, or joined. Tried only where a word starts: from inside one it reaches the same end, and retrying
# at each letter cost a long word its length squared.
COMPOUND = re.compile(rf"(?<![\w{codewords.MARKS}])_*[^\W_][\w{codewords.MARKS}]*(?:[./\\:@-]+_*[^\W_][\w{codewords.MARKS}]*)+")


def _typed(text: str) -> str:
    """``text`` in NFC, full-width ASCII as ASCII (Ｃ＋＋ typed with a Japanese input method is C++)."""
    return text if text.isascii() else nfc(text).translate(codewords.FULL_WIDTH)


def _searched(text: str) -> tuple[list[tuple[str, str]], str, list[str], list[str], bool]:
    """((symbol as typed, its token) of each symbol word, ``text`` without them, its words, the
    words searched: stop words only when nothing else is left, and whether a C stands alone in it,
    as the index gives one C the language's token (not Objective-C's))."""
    symbols = [(m.group(), codewords.symbol_name(m)) for m in QUERY_SYMBOL.finditer(text)]
    rest = QUERY_SYMBOL.sub(" ", text) if symbols else text
    found = words(rest)
    kept = [w for w in found if w.casefold() not in STOP_WORDS] or ([] if symbols else found)
    return symbols, rest, found, kept, codewords.TYPED_LONE_C.search(rest) is not None


def _fragments(word: str, lone_c: bool) -> list[str]:
    """What one word is searched as: query_terms(), then, for an identifier with a case change, its parts as a
    phrase (getUserById: "get User By Id") and, joined by _, its parts joined ("userid"), as the index holds them;
    C also as the language where the query has it alone (``lone_c``)."""
    terms = query_terms(word)
    if lone_c and word in codewords.LONE_C_WORDS:
        terms.append(quote(codewords.LONE_C))
    if is_identifier(word):
        terms += [quote(form) for form in codewords.identifier_forms(word)]
    return list(dict.fromkeys(terms))


def is_identifier(word: str) -> bool:
    """Whether ``word`` is a name as code spells it: a case change, a ``_``, a name and its number."""
    return word.isascii() and (CASE_OR_JOINT.search(word) or NAME_NUMBER.fullmatch(word)) is not None


# A word split at digits alone (8th, 5K, x86) is searched as typed: the index holds it whole; a name
# and its number (utf8, python3) also as the two words, as UTF-8 and Python 3 are indexed.
CASE_OR_JOINT = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|_")
NAME_NUMBER = re.compile(r"[A-Za-z]{2,}[0-9]+")  # (x86, v8, s3: written whole)


def _compound_terms(text: str, signs: dict[int, tuple[int, str]]) -> list[str]:
    """A phrase of each path, dotted name or version (expanded as the index is, so its words stay
    adjacent), and the join of each word-word; ``signs``: codewords.sign_words(text)."""
    terms = []
    signs = {at for at, _ in signs.values()}  # where each sign word's sign is
    for m in COMPOUND.finditer(text):
        run = text[m.start() - (m.start() - 1 in signs):m.end()]  # (.env.local: with its dot, as the index reads it)
        numbers = codewords.dotted_numbers(run)
        for number in numbers:  # 2.0.7, v2.0.7: its digits as a phrase wherever they stand, and its token
            terms += [quote(" ".join(number.split("."))), quote(codewords.dotted_name(number))]
        if numbers == [run]:
            continue
        if re.search(r"[./\\:@]", run):
            spelled = codewords.expand(run).replace(codewords.OPEN, " ").replace(codewords.CLOSE, " ")
            terms.append(quote(" ".join(WORD.findall(spelled))))
        else:
            terms += [quote(form) for form in codewords.identifier_forms(run)[-1:] if " " not in form]
    return terms


_ITEM = re.compile(f"{QUERY_SYMBOL.pattern}|{WORD.pattern}")


def _sequence(text: str, signs: dict[int, tuple[int, str]]) -> list[tuple[str, str, str]]:
    """(key, first words, all words) of each word and symbol word of ``text`` in order, as the index spells them:
    a pair's phrase runs through the first word's expansion (``C++ samples``: ``"C cplusplus samples"``), and a
    symbol's own, which follows each of its occurrences (``in F#``: ``"in F fsharp"``, not the letter F of "in F,").
    An identifier's parts follow only its first occurrence in a file, as a rule its title or heading
    (codewords._runs), so a pair ends with the identifier alone. ``signs``: codewords.sign_words(text)."""
    items = []
    for m in _ITEM.finditer(text):
        if m.group().startswith(".") or m.group().endswith(("+", "#")):
            token = codewords.symbol_name(m)
            head = " ".join(WORD.findall(m.group()))
            items.append((token, f"{head} {token}", f"{head} {token}"))
        else:
            word = m.group()
            lone_c = word in codewords.LONE_C_WORDS and codewords.TYPED_LONE_C.match(text, m.start())
            forms = ((codewords.LONE_C,) if lone_c
                     else codewords.index_forms(word) if word.isascii() else ())
            if m.end() in signs:  # (.env: "env dotenv", its token first, as the index adds it)
                forms = (signs[m.end()][1], *forms)
            items.append((word.casefold(), word, " ".join((word, *forms))))
    return items


def plan(text: str) -> Query:
    """What to search for ``text``; NoSearchableWords if it has no words."""
    text = _typed(given_type(text, str, "the query must be a string of words"))
    symbols, rest, found, kept, lone_c = _searched(text)
    if not found and not symbols:
        raise NoSearchableWords(
            f"no searchable words in {quoted(text.strip(), 40, always=True)}: type some letters or digits"
            if text.strip()
            else "empty query: type a word to search for"
        )
    # query_terms() quotes a word without CJK exactly as quote() does; a word with CJK (or full-width letters)
    # becomes one or more fragments. A pasted text (see MAX_STRINGS) gets no code-word forms.
    short = len(found) <= MAX_STRINGS
    fragments = {word: _fragments(word, lone_c) if short else query_terms(word) for word in found}
    signs = codewords.sign_words(rest) if short else {}  # read once: rest is text but for its symbol words
    sign_terms = [quote(token) for _, token in signs.values()]
    terms = tuple(dict.fromkeys([*(quote(token) for _, token in symbols),
                                 *(term for word in kept for term in fragments[word]), *sign_terms,
                                 *(_compound_terms(rest, signs) if short else ())]))
    # A pair with a CJK word could only match its unsegmented spelling, which the index never holds (a full-width
    # word is left unpaired too; a word also searched case folded is paired as typed).
    plain = {word.casefold() for word in found if fragments[word][0] == quote(word) and not has_cjk(word)}
    plain.update(token for _, token in symbols)
    sequence = (_sequence(text, codewords.sign_words(text) if symbols else signs) if symbols or short
                else [(w.casefold(), w, w) for w in WORD.findall(rest)])
    pairs = {}
    for (key_a, _, spelled_a), (key_b, head_b, _) in zip(sequence, sequence[1:]):
        if (key_a == key_b or (key_a in STOP_WORDS and key_b in STOP_WORDS) or not {key_a, key_b} <= plain
                or key_a in QUESTION_WORDS or key_b in QUESTION_WORDS):
            continue
        pairs.setdefault(f"{key_a} {key_b}", quote(f"{spelled_a} {head_b}"))
    single = set(terms)  # not the tuple: a search of it per pair was quadratic in a pasted text's words
    # (A capitalized name may be a person's or a brand's, as prose writes them: McGee, YouTube, MoMA.)
    code = [quote(t) for _, t in symbols] + sign_terms + [quote(w) for w in kept if short and is_identifier(w)
                                                         and ("_" in w or not w[0].isupper())]
    if lone_c and short and any(w in codewords.LONE_C_WORDS for w in kept):
        code.append(quote(codewords.LONE_C))  # (the language, as C++ is)
    return Query(terms, tuple(p for p in pairs.values() if p not in single), tuple(dict.fromkeys(code)))


def unmatched(text: str, counts: dict[str, int]) -> tuple[str, ...]:
    """The searched words of ``text`` that no file holds, by ``counts`` (files each FTS5 string matched; one not
    counted is taken to match): a model must not read a hit on "secret" as one on "stripe webhook secret"."""
    symbols, _, _, kept, lone_c = _searched(_typed(text))
    searched = [(symbol, [quote(token)]) for symbol, token in symbols] + [(w, _fragments(w, lone_c)) for w in kept]
    return tuple(w for w, terms in searched if all(counts.get(term, 1) == 0 for term in terms))


def build_query(text: str) -> str:
    """The FTS5 MATCH expression for ``text`` (:func:`plan`'s strings, ORed). Raises NoSearchableWords if
    ``text`` has no word, InvalidArgument if it is no string."""
    return plan(text).fts
