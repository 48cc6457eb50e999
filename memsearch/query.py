"""Turn what a user typed into an FTS5 query that cannot fail to parse.

Every run of letters, digits and ``_`` becomes one double-quoted FTS5
string and the strings are joined with OR. Quoting means FTS5 syntax in the
input (``AND``, ``NEAR``, ``*``, ``-``, ``:``, ``^``, parentheses, quotes) is
searched as words, never interpreted; OR means one unmatched word never
empties the result, and bm25 ranks files matching more and rarer words first.

A word in Chinese, Japanese or Korean is matched through the bigrams the
index holds for such text (``memsearch.cjk.query_terms``): ``提交到`` asks
for ``("提交" OR "交到")``, a one-character word is a prefix (``"库"*``).
"""

from __future__ import annotations

import re
import unicodedata

from .cjk import query_terms
from .errors import NoSearchableWords

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The query's words, in order, each once (case-insensitively)."""
    seen: set[str] = set()
    out = []
    for word in _WORD.findall(unicodedata.normalize("NFC", text)):
        key = word.casefold()
        if key not in seen:
            seen.add(key)
            out.append(word)
    return out


def quote(word: str) -> str:
    return '"' + word.replace('"', "") + '"'


def build_query(text: str) -> str:
    """The FTS5 MATCH expression for ``text``; NoSearchableWords if none."""
    found = words(text)
    if not found:
        raise NoSearchableWords(
            f"no searchable words in {text.strip()[:40]!r}: type some letters or digits"
            if text.strip()
            else "empty query: type a word to search for"
        )
    # query_terms() quotes a word without CJK exactly as quote() does; a
    # word with CJK (or full-width letters) becomes one or more fragments.
    terms = dict.fromkeys(term for word in found for term in query_terms(word))
    return " OR ".join(terms)
