"""Code words and folded letters for FTS5's ``unicode61`` tokenizer.

``unicode61`` drops ``+``, ``#`` and ``.``, keeps ``getUserById`` as one token and folds accents of Latin letters
only. So the indexed copy of a text (the shadow column memsearch.cjk fills) gets, right after each word that needs
it, an *expansion* between ``OPEN`` and ``CLOSE``, holding the extra tokens the word stands for::

    expand("use C++ and getUserById in Αθηνά")
      -> "use C++⁤cplusplus⁢ and getUserById⁤get User By Id⁢ in Αθηνά⁤Αθηνα⁢"

- a symbol word, a letter run ending in ``++`` or ``#`` (``C++``, ``g++``, ``C#``, ``F#``) or ``.NET``: its spelled
  name (``cplusplus``, ``csharp``, ``dotnet``), so it is a word of its own and not the letter ``c``;
- an identifier with case changes or digits (``getUserById``, ``utf8``): its parts (``get User By Id``), and, if
  ``_`` or ``-`` join some of them (``get_userById``), all of them joined (``getuserbyid``); a name with digits
  also the units it is typed as (``Base64Encode``: ``Base64``, ``sha256sum``: ``sha256``); an identifier with a
  ``_`` (``user_id``, which unicode61 splits), its parts joined (``userid``, as unicode61 keeps ``userId``), so the
  name ranks above prose's "user id", and ``user_id`` and ``userId`` meet whole as well as by their parts; a
  command line's option of several words (``--dry-run``), its words joined (``dryrun``); an
  ordinal alone its number (``15th``: ``15``), and a plural of capitals or a decade nothing (``TVs``, ``1990s``);
- ``C`` standing alone (``in C``, ``C/C++``; not ``Objective-C`` or ``200°C``): ``clanguage``, so C is not only
  the letter of ``C++`` and ``C#``;
- a dotted number (``2.0.7``, ``1.2``), after its first occurrence: its token (``2dot0dot7``), so ``2.0.7`` is not
  found as well in ``2.0.7.1``;
- a name a dot begins, not a folder's (``.env``, ``*.md``), a variable (``$HOME``), an issue's number (``#1234``) or
  an annotation (``@Test``), after each: its token (``dotenv``, ``dollarhome``, ``hash1234``, ``atsigntest``), so
  ``.env`` is not only ``env``;
- a word with accents unicode61 leaves (Greek, Cyrillic, Latin letters with two marks as in Vietnamese,
  ``ı ø ł đ``, full-width letters) or splits it at (Hebrew points, Arabic harakat): its folded form (``Αθηνα``,
  ``tieng``, ``git``, ``שלום``).

The query side (memsearch.query) asks for the same forms, and excerpts map back to the text (:func:`unexpand_marked`):
an expansion is dropped, and a match inside it marks the word it follows. Pure functions over ``str``.
"""

from __future__ import annotations

import functools
import re

# Invisible format characters (Cf), never inside a unicode61 token: INVISIBLE PLUS opens an expansion, INVISIBLE
# TIMES closes it. Two of a kind in a row are the character itself (expand() doubles those the text holds).
OPEN, CLOSE = "\u2064", "\u2062"

# What a symbol's characters spell (a token is letters and digits only).
SYMBOL_NAMES = {"++": "plusplus", "#": "sharp"}
# A letter run ending in ++ or # (C++, g++, C#, F#, notepad++), a version maybe after (C++17, C#10), and .NET (also
# in ASP.NET; lower-case .net only where no word precedes it: example.net stays a domain). Files are scanned from
# their ++, # and .NET (_symbols).
SYMBOL = re.compile(r"(?<![\w+#])([A-Za-z][A-Za-z0-9]*)(\+\+|#)(?![^\W\d]|[+#])|(?<![\w.])\.net\b|\.(?:NET|Net)\b")

# Files are scanned for identifiers in a copy of their text with one byte a character, each spelled by its class
# (a: lower case, A: upper case, 0: digit, _ and - as themselves, space: anything else): far cheaper than a regex.
_ALNUM = bytes(range(48, 58)) + bytes(range(65, 91)) + bytes(range(97, 123))  # ASCII digits and letters
_CLASSES = bytes.maketrans(_ALNUM, b"0" * 10 + b"A" * 26 + b"a" * 26)
_CLASSES = bytes(c if c in b"0Aa_-" else 32 for c in _CLASSES)

# The parts of an identifier: HTTPServer -> HTTP Server, getUserById -> get User By Id. A plural of capitals (APIs,
# TVs) and an ordinal or decade (2nd, 1990s) are one part: split, they made words of nothing (T Vs, 2 nd); the
# porter stemmer already finds them by API, TV and 1990.
PART = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+(?![0-9])(?:st|nd|rd|th|s)?(?![a-z])|[0-9]+")
# An ordinal alone (15th) adds its number, as a date is asked for ("August 15").
ORDINAL = re.compile(r"([0-9]+)(?:st|nd|rd|th)")
JOINT = re.compile(r"[_-]+")
# A join of more parts is a sentence-like chain (state-of-the-art-...), not a name.
MAX_JOINED = 6

FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}  # ＡＢＣ＋＋ -> ABC++
# Letters with no decomposition that are read as their plain letter (or two).
_PLAIN = str.maketrans({"ı": "i", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ħ": "h", "Ħ": "H",
                        "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
                        **FULL_WIDTH})
# Combining marks fold() drops: Latin's, then Hebrew's points and Arabic's harakat, which unicode61
# keeps or splits words at (a voweled word is then only single letters to it).
_OTHER_MARKS = ("\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
                "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed")
MARKS = "\u0300-\u036f" + _OTHER_MARKS
_MARKS = re.compile(f"[{MARKS}]+")


# unicodedata sorts a run of combining marks in time quadratic in its length: a run of more than
# the stream-safe 30 (UAX #15) is left as it is.
_LONG_RUN = re.compile(r"([^\w\s]{31,})")


def normalized(form: str, text: str) -> str:
    """``unicodedata.normalize(form, text)`` but for long runs of marks or symbols, kept as they are."""
    from unicodedata import is_normalized, normalize

    if is_normalized(form, text):  # (fast, hostile runs included)
        return text
    if _LONG_RUN.search(text) is None:
        return normalize(form, text)
    return "".join(p if i % 2 else normalize(form, p) for i, p in enumerate(_LONG_RUN.split(text)))


def fold(word: str) -> str:
    """``word`` without combining accents (MARKS, after NFD), with ``ı ø ł đ ħ`` as ``i o l d h`` and full-width
    ASCII as ASCII. Kana's (han)dakuten and Hangul are untouched (their marks are outside MARKS)."""
    if word.isascii():
        return word
    return normalized("NFC", _MARKS.sub("", normalized("NFD", word.translate(_PLAIN))))


# Latin letters with marks (Latin-1 to Extended-B, Extended Additional) and full-width letters and digits. The
# patterns kept as text are compiled where used (re caches them): a search in English words needs none of them,
# and compiled at import they cost every one-shot process.
_LATIN_RANGES = ((0xC0, 0x24F), (0x1E00, 0x1EFF), (0xFF10, 0xFF5A))
_LATIN = "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _LATIN_RANGES) + "]+"


@functools.cache
def _letters() -> dict[int, str]:
    """Each Latin or full-width letter or digit, and ＿, as the ASCII one fold() makes of it, one character
    for one: an identifier typed with them (ÜberClient, naïveBayes, ｇｅｔＵｓｅｒ) splits as in ASCII."""
    table = {}
    for c in (c for lo, hi in _LATIN_RANGES for c in range(lo, hi + 1)):
        plain = fold(chr(c))
        if len(plain) == 1 and plain.isascii() and (plain.isalnum() or plain == "_"):
            table[c] = plain
    return table


def _unicode61_folds(char: str) -> bool:
    """Whether ``remove_diacritics 1`` already folds ``char`` as fold() does: a Latin letter with one mark over an
    ASCII letter (tests/test_code_words.py checks this against FTS5 itself, letter by letter)."""
    if not ("\u00c0" <= char <= "\u024f" or "\u1e00" <= char <= "\u1eff"):
        return False
    from unicodedata import normalize

    spelled = normalize("NFD", char)
    return len(spelled) == 2 and spelled[0].isascii() and char.translate(_PLAIN) == char


@functools.cache
def _foldable() -> re.Pattern[str]:
    """A letter fold() changes and unicode61 does not fold."""
    from unicodedata import normalize

    ranges = [*range(0xC0, 0x530), *range(0x1E00, 0x2000)]
    # fold() changes only a letter with a decomposition or in _PLAIN (a lone mark unicode61 drops).
    changing = [chr(c) for c in ranges if c in _PLAIN or normalize("NFD", chr(c)) != chr(c)]
    chars = [c for c in changing if fold(c) not in (c, "") and not _unicode61_folds(c)]
    chars += [c for c in "ıøØłŁđĐħĦ" if c not in chars]
    return re.compile("[" + "".join(map(re.escape, chars)) + _OTHER_MARKS + "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


# What ends a word to fold: no letter, digit, mark or full-width joiner (ｕｓｅｒ＿ｉｄ is one word, as user_id),
# or one of a script fold() never changes (CJK).
_NOT_IN_WORD = f"[^\\w{MARKS}\uff0d\uff3f]|[^\u0000-\u052f\u0590-\u06ff\u1e00-\u1fff\uff0d\uff10-\uff5a]"


def folded(word: str) -> str:
    """fold(``word``) if it holds a letter the index folds by an expansion,
    else ``word`` as typed (unicode61 folds the rest itself)."""
    return word if word.isascii() or _foldable().search(word) is None else fold(word)


def symbol_name(match: re.Match[str]) -> str:
    """The token a SYMBOL match stands for: c++ -> cplusplus, .NET -> dotnet."""
    return "dotnet" if match.group(1) is None else (match.group(1) + SYMBOL_NAMES[match.group(2)]).lower()


# A longer run is no name anyone types (a base64 blob, a key): it adds nothing, and the cache of forms, keyed by
# the run, stays small whatever the files hold (4,096 runs of a megabyte held gigabytes).
MAX_NAME = 100


def identifier_forms(run: str, units: bool = False) -> tuple[str, ...]:
    """What a run of letters, digits, _ and - adds: its parts where unicode61 keeps them
    together, its parts joined where it splits them; with ``units`` (what the index adds), also
    the names with digits inside it (Base64Encode: base64; S3Bucket: s3; OAuth2: oauth). Nothing
    for a run longer than MAX_NAME."""
    return _forms(run, units) if len(run) <= MAX_NAME else ()


@functools.lru_cache(maxsize=4096)  # a file repeats its identifiers: split each once
def _forms(run: str, units: bool) -> tuple[str, ...]:
    if run[0].isdigit() and (ordinal := ORDINAL.fullmatch(run)) is not None:
        return (ordinal[1],)
    pieces = JOINT.split(run.strip("_-")) if "_" in run or "-" in run else [run]
    joined = "".join(pieces)
    # A Python special name (__init__): unicode61 reads it as init, so it also stands as one token (dunderinit)
    # and ranks a file naming it above one saying "init". Its shape is the file scan's own (_DUNDER_RUN).
    special = (("dunder" + joined.lower(),) if run[:2] == "__"
               and _DUNDER_RUN.fullmatch(run.encode("ascii", "replace").translate(_CLASSES)) else ())
    if joined.isalpha() and (joined.islower() or joined.isupper()):  # (most runs: snake_case, SCREAMING_CASE)
        return ((joined.lower(),) if 1 < len(pieces) <= MAX_JOINED else ()) + special
    forms = []
    parts = PART.findall(run)  # (as piece by piece: no part holds _ or -)
    if len(parts) > len(pieces):  # a case change or a digit split some piece
        forms.append(" ".join(parts))
        if units and not joined.isalpha() and (extra := _units(pieces, parts)):  # (no digit: no unit)
            forms.append(extra)
    if 1 < len(pieces) <= MAX_JOINED and not joined.isdigit():
        forms.append(joined.lower())
    return (*forms, *special)


# A piece split at case changes alone, digits kept with the letters before them (Base64|Encode), and at digits
# alone (OAuth|2); a name and its number before more letters (md5 of md5sum): the units a name with digits is typed as.
_CASE_ONLY = r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])(?![A-Z]s(?![a-z]))"
_DIGITS_ONLY = r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"
# Tried only where a letter run starts: from inside one it reaches the same digits, and retrying at each
# letter made a long run that ends in digits cost its length squared.
_NAME_NUMBER = r"(?<![A-Za-z])[A-Za-z]+[0-9]+(?=[A-Za-z])"


def _units(pieces: list[str], parts: list[str]) -> str:
    """Those units of ``pieces`` holding a letter that are neither a part nor a piece, in order."""
    found: list[str] = []
    for piece in pieces:
        if piece.isalpha() or piece.isdigit():
            continue
        if not piece.islower():  # (without capitals both splits give the piece or its parts)
            found += re.split(_CASE_ONLY, piece) + re.split(_DIGITS_ONLY, piece)
        elif piece[-1].isdigit():  # utf8, x86, python3: no letters after the number
            continue
        found += re.findall(_NAME_NUMBER, piece)
    if not found:
        return ""
    known = {p.lower() for p in (*parts, *pieces)}
    return " ".join(dict.fromkeys(u for u in found if u.lower() not in known and not u.isdigit()))


def expand(text: str) -> str:
    """``text`` with each word's expansion after it (module docstring), and
    any OPEN or CLOSE of its own doubled; ``text`` itself when nothing is added."""
    if text.isascii() and text.isalpha() and (text.islower() or text[1:].islower()):
        return text  # a plain word (as excerpts' last words are checked one by one): nothing to add
    if OPEN in text or CLOSE in text:
        pieces = re.split(f"([{OPEN}{CLOSE}]+)", text)
        # Each marker twice, not the run twice: "⁤⁢" as itself twice would read as an expansion.
        return "".join(p.replace(OPEN, OPEN * 2).replace(CLOSE, CLOSE * 2) if i % 2 else _expand(p)
                       for i, p in enumerate(pieces))
    return _expand(text)


# An escaped marker of the text, or an expansion (which holds no marker).
_EXPANSION = re.compile(f"{OPEN}{OPEN}|{CLOSE}{CLOSE}|{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")


def unexpand(spelled: str) -> str:
    """The text expand() made ``spelled`` from, exactly."""
    return _EXPANSION.sub(lambda m: m[0][0] if m[0][0] == m[0][-1] else "", spelled)


def index_forms(run: str) -> tuple[str, ...]:
    """What the index adds after the first ``run`` (ASCII letters, digits, _ and -) of a text."""
    cls = run.encode("ascii", "replace").translate(_CLASSES)
    return identifier_forms(run, True) if any(kind.search(cls) for kind in _RUN_KINDS) else ()


def _expand(text: str) -> str:
    plain = text if text.isascii() else re.sub(_LATIN, lambda m: m[0].translate(_letters()), text)  # offsets kept
    ascii_ = plain.encode("ascii", "replace")  # one byte a character
    adds = _symbols(plain, ascii_)
    adds.update((m.end(), LONE_C) for m in _LONE_C.finditer(plain) if text[m.start()] == "C")  # (not Ç)
    for end, (_, token) in _sign_words(ascii_).items():
        _add(adds, end, token)
    for end, number in _dotted(ascii_).items():
        _add(adds, end, dotted_name(number))
    for run, end in _runs(plain, ascii_.translate(_CLASSES)).items():
        forms = identifier_forms(run, True)
        if forms:
            _add(adds, end, " ".join(forms))
    if not text.isascii():
        for end, word in _foldable_words(text):
            _add(adds, end, fold(word))
    if not adds:
        return text
    out, at = [], 0
    for end in sorted(adds):
        out += [text[at:end], OPEN, adds[end], CLOSE]
        at = end
    out.append(text[at:])
    return "".join(out)


def _add(adds: dict[int, str], end: int, forms: str) -> None:
    adds[end] = f"{adds[end]} {forms}" if end in adds else forms


# Where a symbol may end: ++ or # after a letter or digit, .NET. Each regex starts with a literal, so re skips ahead
# to it (an alternation of them would try every character).
_SYMBOL_ENDS = (re.compile(rb"#(?<=[A-Za-z0-9]#)"), re.compile(rb"\+\+(?<=[A-Za-z0-9]\+\+)"),
                re.compile(rb"\.(?:NET|Net|net)"))


# A dotted number (a version, 1.2, 2.0.7; an address): unicode61 reads 2.0.7 as 2 0 7, which 2.0.7.1 holds too, so it
# also stands as one token (2dot0dot7). Tried at each dot between digits (a literal first: see _SYMBOL_ENDS).
_NUMBER_DOT = re.compile(rb"\.(?<=[0-9]\.)(?=[0-9])")
_DIGITS_ON = re.compile(rb"[0-9]+(?:\.[0-9]+)*")


def _dotted(spelled: bytes) -> dict[int, str]:
    """{end: number} of each dotted number's first occurrence in ``spelled`` (a byte a character), as an identifier's
    parts follow its first; none after a dot (file.2.txt) or longer than MAX_NAME."""
    found: dict[int, str] = {}
    seen: set[bytes] = set()
    after = 0
    for m in _NUMBER_DOT.finditer(spelled):
        at = m.start()
        if at < after:  # (inside the last number)
            continue
        before = spelled[max(at - MAX_NAME - 1, 0):at]
        start = at - (len(before) - len(before.rstrip(b"0123456789")))
        after = _DIGITS_ON.match(spelled, at + 1).end()
        number = spelled[start:after]
        if (start and spelled[start - 1] == 46) or len(number) > MAX_NAME or number in seen:
            continue
        seen.add(number)
        found[after] = number.decode()
    return found


def dotted_numbers(text: str) -> list[str]:
    """The dotted numbers of ``text`` the index gives a token, each once (a query's 2.0.7, v2.0.7, 1.2.3-beta)."""
    return list(_dotted(text.encode("ascii", "replace")).values())


def dotted_name(number: str) -> str:
    """The token a dotted number stands as: 2.0.7 -> 2dot0dot7."""
    return number.replace(".", "dot")


# C the language, a capital C standing alone (not C++, C#, Objective-C, .C, a drive, C:\ or {{C:}}, nor degrees
# Celsius, 20°C or 20ºC): after each, a token of its own, so a file about C ranks above one about C++ or C#, whose C
# is the same letter to unicode61.
LONE_C = "clanguage"
LONE_C_WORDS = ("C", "c")  # the query words that ask for it beside the letter (typed in lower case too)
_LONE_C_SIDES = r"(?<![A-Za-z0-9_.+#°º-]{c})(?![A-Za-z0-9_+#]|:\S)"
_LONE_C = re.compile("C" + _LONE_C_SIDES.format(c="C"))
# The same in a query, typed in either case: Objective-C asks for no clanguage, as its file holds none.
TYPED_LONE_C = re.compile("[Cc]" + _LONE_C_SIDES.format(c="[Cc]"))


# A name a sign begins, after each: its token, so the name ranks above the plain word. A dot (.env, .gitignore, *.md;
# not after a word, a dot, a bracket, ? or !: file.env, ../x, f().env, a?.b), but .NET (a symbol) and a folder's
# (.planning/: a token there broke the phrases a path's words are typed in, "planning files"): dotenv above "env vars".
# A shell's or a template's variable ($HOME, ${HOME}; not a price, $5): dollarhome above "go home". An issue's or a
# pull request's number (#1234; not repo#1, &#38; or a colour, #12ab): hash1234 above "1234 rows". An annotation,
# a decorator or a handle (@Transactional, @property, @alice; not an e-mail's, me@x.org, a scope's, @types/node, nor
# a dotted name's, whose phrase a token would break, @pytest.fixture): atsigntransactional above "transactional
# emails" (a plainer "at" made @Test attest).
_SIGN_WORDS = ((b".", "dot", re.compile(rb"\.(?<![A-Za-z0-9_.)\]}?!]\.)(?!(?i:net)(?![A-Za-z0-9]))"
                                        rb"([A-Za-z][A-Za-z0-9]*)(?![A-Za-z0-9_/\\-])")),
               (b"$", "dollar", re.compile(rb"\$(?<![A-Za-z0-9_$]\$)\{?(_*[A-Za-z][A-Za-z0-9_]*)")),
               (b"#", "hash", re.compile(rb"#(?=[0-9])(?<![A-Za-z0-9_&#]#)([0-9]+)(?![A-Za-z0-9_])")),
               (b"@", "atsign", re.compile(rb"@(?<![A-Za-z0-9_@]@)([A-Za-z][A-Za-z0-9_]*)(?![A-Za-z0-9_./\\-])")))
SIGNS = {sign.decode(): name for sign, name, _ in _SIGN_WORDS}


def _sign_words(spelled: bytes) -> dict[int, tuple[int, str]]:
    """{end: (where its sign is, token)} of each name a sign begins in ``spelled`` (a byte a character)."""
    found = {}
    for sign, name, pattern in _SIGN_WORDS:
        if sign in spelled:
            for m in pattern.finditer(spelled):
                if len(m[1]) <= MAX_NAME:
                    found[m.end()] = (m.start(), sign_token(name, m[1].decode()))
    return found


def sign_token(sign_name: str, name: str) -> str:
    """The token of a name a sign begins, ``sign_name`` the sign spelled (``SIGNS``): .env -> dotenv,
    $MY_VAR -> dollarmyvar."""
    return sign_name + name.replace("_", "").lower()


def sign_words(text: str) -> dict[int, tuple[int, str]]:
    """{end: (where its sign is, token)} of each name a sign begins in ``text``, as the index gives it a token
    (.env: dotenv, $HOME: dollarhome, #1234: hash1234)."""
    return _sign_words(text.encode("ascii", "replace"))


def _symbols(text: str, spelled: bytes) -> dict[int, str]:
    """{end: token} of each SYMBOL in ``text`` (``spelled``: as ASCII, a byte a character), tried once where the
    letters before a ``++`` or ``#`` start, and at each ``.NET``."""
    found: dict[int, str] = {}
    for symbol in _SYMBOL_ENDS:
        for m in symbol.finditer(spelled):
            at, end = m.span()
            if spelled[at] != 46:  # not .NET: from where the letters before start
                letters = spelled[max(end - 42, 0):at]  # (a name ends at most 42 characters back)
                at -= len(letters) - len(letters.rstrip(_ALNUM))
            s = SYMBOL.match(text, at, end + 1)  # (end + 1: what follows it decides too)
            if s is not None and s.end() == end:
                found[end] = symbol_name(s)
    return found


# Where a run needs forms: a case change (aA, AAa: getUser, HTTPServer), digits by letters (a0, 0a: utf8, 2nd),
# a _ inside (user_id: unicode61 splits it, so its join userid is what ranks it above prose's "user id"). One joined
# by - alone gets nothing: prose is full of them (well-known); but a command line's option does (--dry-run: dryrun,
# above prose's "dry run"). Each regex starts with a literal (see _SYMBOL_ENDS) and takes the rest of the run.
_CASE_CHANGE = re.compile(rb"A(?:(?<=aA)|(?=Aa))[0Aa_-]*")
_DIGIT_BY_LETTER = re.compile(rb"0(?:(?<=[aA]0)|(?=[aA]))[0Aa_-]*")
_UNDERSCORE = re.compile(rb"_(?<=[0Aa]_)(?=[0Aa])[0Aa_-]*")
# A Python special name's whole run: __, a letter, letters, digits or _, a letter or digit, __ (tried from a run's
# start alone: linear).
_DUNDER_RUN = re.compile(rb"__(?<![0Aa_-]__)(?=[Aa])[0Aa_]*?[0Aa]__(?![0Aa_-])")
_OPTION = re.compile(rb"--(?<![0Aa_-]--)[0Aa]+(?:-[0Aa]+)+(?![0Aa_-])")
_RUN_KINDS = (_CASE_CHANGE, _DIGIT_BY_LETTER, _UNDERSCORE, _DUNDER_RUN, _OPTION)  # a file's scans, a query word's test


def _runs(text: str, cls: bytes) -> dict[str, int]:
    """Each run of ASCII letters, digits, _ and - holding a boundary, found in ``cls`` (``text`` spelled by
    _CLASSES), and where its first occurrence ends: its parts follow that one only, so a name repeated does not
    repeat its parts' words (the whole name keeps its count)."""
    first: dict[str, int] = {}
    rfind = cls.rfind
    for boundary in _RUN_KINDS:
        for m in boundary.finditer(cls):
            end = m.end()
            run = text[rfind(b" ", 0, m.start()) + 1:end]
            if first.get(run, end) >= end:
                first[run] = end
    return first


def _foldable_words(text: str) -> list[tuple[int, str]]:
    """(end, word) of each word holding a letter to fold (_foldable); the word stops at CJK, which memsearch.cjk
    spells as bigrams."""
    found, end = [], 0
    stop = re.compile(_NOT_IN_WORD)
    for m in _foldable().finditer(text):
        start = m.start()
        if start < end:
            continue  # inside the last word found
        while start > 0 and stop.match(text, start - 1) is None:
            start -= 1
        end = m.end()
        while end < len(text) and stop.match(text, end) is None:
            end += 1
        found.append((end, text[start:end]))
    return found


def word_start(chars: str | list, end: int) -> int:
    """Where the word ending at ``end`` in ``chars`` (a text, or [char, marked] items)
    starts: letters, digits, _ - + # and a leading ``.``, ``$`` or ``@`` (``.NET``, ``.env``, ``$HOME``, ``@Test``)."""
    i = end
    while i > 0 and (chars[i - 1][0].isalnum() or chars[i - 1][0] in "_-+#" or _MARKS.match(chars[i - 1][0])):
        i -= 1
    if i > 0 and chars[i - 1][0] in ".$@" and (i == 1 or not chars[i - 2][0].isalnum()):
        i -= 1
    return i


def unexpand_marked(chars: list[list]) -> list[list]:
    """[char, marked] items of an excerpt without the expansions; a marked character inside one marks the word it
    follows. An excerpt may start or end inside an expansion (FTS5 cuts it by tokens): that piece goes too, and a
    match in the piece it ends with still marks the word shown before it."""
    inside = cut_ends("".join(c for c, _ in chars))[0]
    out: list[list] = []
    lit, inner = False, []  # whether a character of the expansion is marked, and its characters
    opened = False  # whether the excerpt holds the expansion's start (and so the word it follows)
    i, n = 0, len(chars)
    while i < n:
        char = chars[i][0]
        if char in (OPEN, CLOSE):
            # (Inside an expansion, which holds no marker, a CLOSE ends it, whatever follows.)
            if i + 1 < n and chars[i + 1][0] == char and not (inside and char == CLOSE):  # an escaped marker
                if not inside:
                    out.append([char, chars[i][1] or chars[i + 1][1]])
                i += 2
                continue
            if char == OPEN:
                inside, lit, inner, opened = True, False, [], True
            elif inside:
                if lit:
                    _mark_word(out, inner)
                inside = False
            i += 1
            continue
        if inside:
            lit = lit or chars[i][1]
            inner.append(char)
        else:
            out.append(list(chars[i]))
        i += 1
    if inside and lit and opened:  # it ends inside an expansion whose word it shows
        _mark_word(out, inner)
    # A dot or slash between two marked words joins them: ASP.NET is asked for as ASP and .NET, and
    # reads as one match (<<ASP.NET>>), as FTS5 marks a phrase (<<Node.js>>).
    for j in range(1, len(out) - 1):
        if out[j - 1][1] and out[j + 1][1] and not out[j][1] and out[j][0] in _JOINERS:
            out[j][1] = True
    return out


def _mark_word(out: list[list], inner: list[str]) -> None:
    """Mark the word at the end of ``out`` that an expansion of ``inner`` characters follows."""
    start = word_start(out, len(out))
    start += _own_word("".join(c for c, _ in out[start:]), "".join(inner).split())
    for item in out[start:]:
        item[1] = True


def _own_word(word: str, forms: list[str]) -> int:
    """Where in ``word`` (the letters, digits and joiners before an expansion) the word of the expansion's
    ``forms`` starts: a symbol's (foo-C# adds csharp for C#) or a folded word's own, else the whole run (an
    identifier's parts stand for all of it)."""
    for m in SYMBOL.finditer(word):
        if m.end() == len(word) and symbol_name(m) in forms:
            return m.start()
    # The last run of letters, digits and marks, from its first letter or digit (split and match: linear).
    run = re.split(_NOT_WORD, word)[-1]
    last = run[re.match(_NO_WORD_START, run).end():]
    if last and not last.isascii() and fold(last) in forms:
        return len(word) - len(last)
    # A leading sign is a sign word's (.env: dotenv), else not the name's: text...getUser is not .getUser.
    sign = SIGNS.get(word[:1])
    return int(sign is not None and sign_token(sign, word[1:]) not in forms)


_NOT_WORD = f"[^\\w{MARKS}]"  # (compiled where used: see _LATIN)
_NO_WORD_START = f"[_{MARKS}]*"


_JOINERS = frozenset("./\\:@-")
# A marker not doubled (a doubled one is the text's own): the first says where an excerpt starts, the last where
# it ends.
_LONE_MARKER = re.compile(f"{OPEN}{OPEN}|{CLOSE}{CLOSE}|([{OPEN}{CLOSE}])")


def cut_ends(excerpt: str) -> tuple[bool, bool]:
    """Whether ``excerpt`` (of an expanded text) starts inside an expansion, and whether it ends inside one."""
    if OPEN not in excerpt and CLOSE not in excerpt:
        return False, False
    lone = [m[1] for m in _LONE_MARKER.finditer(excerpt) if m[1]]
    return bool(lone) and lone[0] == CLOSE, bool(lone) and lone[-1] == OPEN

