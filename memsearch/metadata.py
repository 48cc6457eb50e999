"""What a Markdown memory file says about itself in its YAML frontmatter.

    ---
    name: db-port
    description: PostgreSQL listens on 5433 in dev
    type: project            # or, as ZCode writes it, metadata: {type: project}
    ---
    body...

PyYAML costs as much as indexing the file, so the usual block (``key: plain text`` lines, one
level of nesting) is read by :func:`_simple`, which accepts only what PyYAML reads alike (a test
checks). Unusable frontmatter (unclosed, invalid, not a mapping, past a MAX_* bound: deep nesting,
alias bombs) never costs a file its place: it is indexed as plain text, the reason kept.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

# The memory types Claude Code and ZCode give a file: the only ones filtered on.
MEMORY_TYPES = ("user", "feedback", "project", "reference")

# The frontmatter fields indexed in columns of their own and ranked (each a Metadata field): a new one
# is a name here, a migration adding its columns (``x``, ``x_seg``, ``idx_x``) and its weight in search.py.
FIELDS = ("name", "description")

FENCE = "---"
BOM = "\ufeff"

# Bounds on the work one block may cost: far above real blocks (a few lines), far below harm.
MAX_BLOCK = 64 * 1024  # characters of YAML handed to the parser
MAX_EVENTS = 20_000  # YAML parse events (scalars, collections, aliases) in the block
MAX_DEPTH = 32  # collections inside collections
# A chain of A anchors repeats a value at most ~3^(A/3) times: 3^5 = 243 for 16.
MAX_ALIASES = 16
MAX_PAIRS = 20_000  # key/value pairs that merge keys ('<<') may copy in
MAX_FIELD = 20_000  # characters of a flattened name or description, and items visited to flatten it
# Characters of an integer: one in base 60 (1:30:00) is built in time the square of its length, and a longer one
# might not be spelled out (Python's 4,300 digits).
MAX_NUMBER = 1000


class Metadata(NamedTuple):
    """What a file's frontmatter says. ``type``: one of MEMORY_TYPES, else None; ``body``: the text
    after the frontmatter (all of it when there is none); ``error``: why it was ignored."""

    name: str | None = None
    description: str | None = None
    type: str | None = None
    body: str = ""
    error: str | None = None


def parse(text: str) -> Metadata:
    """``text``'s frontmatter fields and body. Never raises: a failure costs the frontmatter only."""
    try:
        return _parse(text)
    except Exception as ex:  # a bug or a case no bound foresaw: the file is still indexed
        return Metadata(body=text, error=f"frontmatter could not be read ({type(ex).__name__})")


def _parse(text: str) -> Metadata:
    if not starts_with_fence(text):
        return Metadata(body=text)
    text = text.lstrip(BOM)
    if not FENCE_LINE.match(text):  # "---x" or "--- title": not a fence line
        return Metadata(body=text)
    parts = FENCE_LINE.split(text, 2)
    if len(parts) < 3:
        return Metadata(body=text, error="frontmatter fence '---' is never closed")
    _, raw, body = parts
    if len(raw) > MAX_BLOCK:
        return Metadata(body=text, error=f"frontmatter is too large (over {MAX_BLOCK // 1024} KiB)")
    try:
        data = _simple(raw)
    except _NotSimple:
        try:
            data = _load(raw)
        except TooComplex as ex:
            return Metadata(body=text, error=f"frontmatter is too complex ({ex})")
        except Exception as ex:  # yaml.YAMLError, and whatever else a hostile document raises
            return Metadata(body=text, error=f"frontmatter is not valid YAML ({_first_line(ex)})")
    if data is None:  # an empty block: nothing declared, nothing wrong
        return Metadata(body=body.lstrip("\r\n"))
    if not isinstance(data, dict):
        return Metadata(body=text, error=f"frontmatter is a YAML {type(data).__name__}, not a mapping")
    try:
        fields = {field: _text(data.get(field)) for field in FIELDS}
    except TooComplex as ex:
        return Metadata(body=text, error=f"frontmatter is too complex ({ex})")
    return Metadata(**fields, type=memory_type(data), body=body.lstrip("\r\n"))


class TooComplex(ValueError):
    """A frontmatter block past one of the bounds above."""


def starts_with_fence(text: str) -> bool:
    """Cheap test done before anything is imported (a byte-order mark is dropped)."""
    return text.startswith(FENCE) or (text.startswith(BOM) and text.lstrip(BOM).startswith(FENCE))


def memory_type(data: dict) -> str | None:
    """``type``, else ``metadata.type`` (ZCode nests it), when in MEMORY_TYPES."""
    nested = data.get("metadata")
    for value in (data.get("type"), nested.get("type") if isinstance(nested, dict) else None):
        if isinstance(value, str) and value.strip().lower() in MEMORY_TYPES:
            return value.strip().lower()
    return None


def _text(value) -> str | None:
    """A field as text: other scalars spelled out (``2024-05-01`` is a date to YAML), lists joined
    depth first; bounded in items and characters (TooComplex): aliases make 435 bytes hold 9^8."""
    parts: list[str] = []
    stack = [value]
    visited = length = 0
    while stack:
        item = stack.pop()
        visited += 1
        if visited > MAX_FIELD:
            raise TooComplex(f"a field holds over {MAX_FIELD} items")
        if item is None or isinstance(item, dict):
            continue
        if isinstance(item, (list, tuple)):  # (!!omap and !!pairs are lists of tuples, which str() spells whole)
            stack.extend(reversed(item))
            continue
        text = (item if isinstance(item, str) else str(item)).strip()
        if text:
            parts.append(text)
            length += len(text) + 1
            if length > MAX_FIELD:
                raise TooComplex(f"a field is over {MAX_FIELD} characters")
    return " ".join(parts) or None


def _load(raw: str):
    """The block as PyYAML's safe loader reads it, within the bounds: events, depth and aliases are
    counted first by the event parser, which does not recurse (the composer would, once a level)."""
    import yaml

    events = depth = aliases = 0
    for event in yaml.parse(raw, Loader=_handler_loader()):
        events += 1
        depth += isinstance(event, yaml.CollectionStartEvent) - isinstance(event, yaml.CollectionEndEvent)
        aliases += isinstance(event, yaml.AliasEvent)
        if events > MAX_EVENTS:
            raise TooComplex(f"over {MAX_EVENTS} YAML nodes")
        if depth > MAX_DEPTH:
            raise TooComplex(f"nested over {MAX_DEPTH} levels deep")
        if aliases > MAX_ALIASES:
            raise TooComplex(f"over {MAX_ALIASES} aliases")
    return yaml.load(raw, Loader=_bounded_loader())


@functools.cache
def _bounded_loader():
    """The safe loader with merge keys ('<<: [*a, *a, *a]') bounded in the pairs they copy, integers in length."""

    class Bounded(_handler_loader()):
        def flatten_mapping(self, node):
            super().flatten_mapping(node)
            self._copied = getattr(self, "_copied", 0) + len(node.value)
            if self._copied > MAX_PAIRS:
                raise TooComplex(f"merge keys copy over {MAX_PAIRS} pairs")

        def construct_yaml_int(self, node):
            if len(node.value) > MAX_NUMBER:
                raise TooComplex(f"a number of over {MAX_NUMBER} characters")
            return super().construct_yaml_int(node)

    Bounded.add_constructor("tag:yaml.org,2002:int", Bounded.construct_yaml_int)
    return Bounded


def _handler_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when libyaml is present


# The most of a parser's message a reason quotes: it may quote the block, and the reason is stored.
MAX_PROBLEM = 200


def _first_line(ex: Exception) -> str:
    mark = getattr(ex, "problem_mark", None)
    problem = getattr(ex, "problem", None) or (str(ex).splitlines() or [type(ex).__name__])[0]
    if len(problem) > MAX_PROBLEM:
        problem = problem[:MAX_PROBLEM] + "..."
    return f"{problem}, line {mark.line + 1}" if mark is not None else problem


# A line of three or more dashes, as python-frontmatter's fence (a test checks they agree).
FENCE_LINE = re.compile(r"^-{3,}\s*$", re.MULTILINE)

class _NotSimple(Exception):
    """The block needs the real YAML parser."""


# The fast reader's patterns, compiled on its first block: a query over unchanged files never is.
_LINE = _QUOTED = _UNESCAPE = _FLOW_ITEM = _AWKWARD = None


def _compile() -> None:
    global _LINE, _QUOTED, _UNESCAPE, _FLOW_ITEM, _AWKWARD
    # key: value on one line, read by _scalar(). The value is anchored at non-spaces at both ends:
    # a lazy "(.*?) *" is quadratic in a run of spaces.
    _LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)*):(?: +([^ ](?:.*[^ ])?))? *")
    # The inside of a double-quoted scalar whose only escapes are \" and \\.
    _QUOTED = re.compile(r'(?:[^"\\]|\\["\\])*')
    _UNESCAPE = re.compile(r'\\(["\\])')
    # One item of a one-line flow sequence and the comma after it (or the end); a plain item ends at its last
    # character that is not a space (linear, as _LINE).
    _FLOW_ITEM = re.compile(r' *("(?:[^"\\]|\\["\\])*"|\'(?:[^\']|\'\')*\'|[^,\[\]{}"\'#: ](?:[^,\[\]{}"\'#:]*[^,\[\]{}"\'#: ])?) *(,|$)')
    # Characters PyYAML errors on, breaks lines at or reads otherwise: C0 and C1 controls (tab too), lone CR,
    # NEL, LS, PS, BOM, surrogates, non-characters.
    _AWKWARD = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]|\r(?!\n)")


# A plain scalar cannot start with these (YAML's indicators); '-' and '?' may also open a sequence entry or complex key.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

# The words YAML 1.1 reads as a bool or null: the only keys _LINE accepts (a letter or '_' first) not strings.
_NOT_STR_KEYS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split()
)
# Plain scalars of these types are built by SafeConstructor itself; any other tag ('<<', '=') is left to PyYAML.
_BUILT = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "timestamp")}


def _simple(raw: str):
    """The block as PyYAML reads it, when only one-line ``key: value`` entries (one level of them
    under a key with no value); else _NotSimple."""
    if _AWKWARD is None:
        _compile()
    if _AWKWARD.search(raw):
        raise _NotSimple
    data: dict = {}
    parent = None  # the key whose nested mapping indented lines go into
    child_indent = None
    for line in raw.splitlines():
        if not line.strip() or line[0] == "#":
            continue
        match = _LINE.fullmatch(line)
        if match is None or match[2] in _NOT_STR_KEYS:  # "on:", "no:", "null:" are a bool or None to YAML
            raise _NotSimple
        indent, key, raw_value = match.groups()
        value = _scalar(raw_value) if raw_value else None
        if not indent:
            data[key] = value
            # Only a key with nothing after it opens a nested mapping ("key: ~" is a null; lines under it an error).
            parent, child_indent = (None if raw_value else key), None
            continue
        # Indented under a key that has a value, or a deeper level.
        if parent is None or (child_indent is not None and indent != child_indent):
            raise _NotSimple
        if child_indent is None:
            child_indent = indent
            data[parent] = {}
        data[parent][key] = value
    return data or None


def _scalar(value: str):
    """What PyYAML reads from a one-line scalar; _NotSimple when it might read it otherwise."""
    first = value[0]
    if first == '"':
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == '"' and _QUOTED.fullmatch(inner):
            return _UNESCAPE.sub(r"\1", inner) if "\\" in inner else inner
        raise _NotSimple
    if first == "'":
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == "'" and "'" not in inner.replace("''", ""):
            return inner.replace("''", "'")
        raise _NotSimple
    if first == "[" and value[-1] == "]":
        return _flow_sequence(value[1:-1])
    if first in _INDICATORS or ": " in value or " #" in value or value[-1] == ":":
        raise _NotSimple
    return _plain(value)


def _flow_sequence(inner: str) -> list:
    """``[a, "b", 'c']`` on one line: items quoted, or plain without YAML's special characters."""
    items: list = []
    if not inner.strip():
        return items
    pos = 0
    while True:
        match = _FLOW_ITEM.match(inner, pos)
        if match is None:
            raise _NotSimple
        item = match[1]
        if item[0] in "\"'":
            items.append(_scalar(item))
        elif item[0] in _INDICATORS or item.endswith(" "):
            raise _NotSimple
        else:
            items.append(_plain(item))
        if not match[2]:
            return items
        pos = match.end()
        if pos >= len(inner):  # a trailing comma: left to PyYAML
            raise _NotSimple


def _plain(value: str):
    """A plain scalar resolved and built by PyYAML's own code."""
    resolvers, anywhere, constructor = _yaml()
    for tag, regexp in resolvers.get(value[0], anywhere):
        if regexp.match(value):
            break
    else:  # most text: no implicit type starts with its first character
        return value
    if tag not in _BUILT:
        raise _NotSimple
    from yaml.nodes import ScalarNode

    try:
        return constructor.yaml_constructors[tag](constructor, ScalarNode(tag, value))
    except Exception:  # a date like 2024-13-45: PyYAML fails on it too, with its own message
        raise _NotSimple from None


@functools.cache
def _yaml():
    """(implicit resolvers by first character, those for any, the bounded loader as a constructor)."""
    from yaml.resolver import Resolver  # what SafeLoader and CSafeLoader resolve with

    table = Resolver.yaml_implicit_resolvers
    anywhere = table.get(None, [])  # none in stock PyYAML
    resolvers = {first: list(found) + anywhere for first, found in table.items() if first is not None}
    return resolvers, anywhere, _bounded_loader()("")
