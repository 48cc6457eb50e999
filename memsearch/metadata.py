"""What a Markdown memory file says about itself in its YAML frontmatter.

    ---
    name: db-port
    description: PostgreSQL listens on 5433 in dev
    type: project            # or, as ZCode writes it, metadata: {type: project}
    ---
    body...

python-frontmatter (and PyYAML under it) is imported only when a file that
is being read starts with ``---``: a tree without frontmatter, and a query
over unchanged files, never pay for the import. python-frontmatter parses
with PyYAML's C loader (``CSafeLoader``) when libyaml is present, and still
costs ~70 us for a three-line block (PyYAML resolves every scalar with
Python regexes), as much as indexing the file. So the usual block, lines of
``key: plain text`` and one level of nesting, is read by :func:`_simple`,
which accepts only what PyYAML is known to read as the same strings and
hands everything else to python-frontmatter (tests/test_metadata.py checks
the two agree).

Frontmatter that cannot be used (a fence never closed, YAML that does not
parse, tabs used as indentation, YAML that is not a mapping) never costs the
file its place in the index: the whole text is indexed as plain text and the
reason is kept so that ``memsearch index`` can report it.
"""

from __future__ import annotations

import re

from .record import Record

# The memory types Claude Code and ZCode give a file; anything else in the
# frontmatter is not a type memsearch can filter on.
MEMORY_TYPES = ("user", "feedback", "project", "reference")

FENCE = "---"
BOM = "\ufeff"


class Metadata(Record):
    """What a file's frontmatter says. ``type``: one of MEMORY_TYPES, else
    None; ``body``: the text after the frontmatter (all of it when there is
    none); ``error``: why the frontmatter was ignored."""

    __slots__ = __match_args__ = ("name", "description", "type", "body", "error")

    def __init__(self, name: str | None = None, description: str | None = None, type: str | None = None,
                 body: str = "", error: str | None = None):
        self._set(name=name, description=description, type=type, body=body, error=error)


def parse(text: str) -> Metadata:
    """Split ``text`` into its frontmatter fields and its body."""
    if not starts_with_fence(text):
        return Metadata(body=text)
    text = text.lstrip(BOM)
    # The fences are found exactly as python-frontmatter finds them.
    if not FENCE_LINE.match(text):  # "---x" or "--- title": not a fence line
        return Metadata(body=text)
    parts = FENCE_LINE.split(text, 2)
    if len(parts) < 3:
        return Metadata(body=text, error="frontmatter fence '---' is never closed")
    _, raw, body = parts
    data = _simple(raw)
    if data is _NOT_SIMPLE:
        try:
            data = _handler().load(raw)
        except Exception as ex:  # yaml.YAMLError, and whatever else a hostile document raises
            return Metadata(body=text, error=f"frontmatter is not valid YAML ({_first_line(ex)})")
    if data is None:  # an empty block: nothing declared, nothing wrong
        return Metadata(body=body.lstrip("\r\n"))
    if not isinstance(data, dict):
        return Metadata(body=text, error=f"frontmatter is a YAML {type(data).__name__}, not a mapping")
    return Metadata(
        name=_text(data.get("name")),
        description=_text(data.get("description")),
        type=memory_type(data),
        body=body.lstrip("\r\n"),
    )


def starts_with_fence(text: str) -> bool:
    """Cheap test done before anything is imported. A byte-order mark is not
    malformed frontmatter: it is dropped, and the block after it parsed."""
    return text.startswith(FENCE) or (text.startswith(BOM) and text.lstrip(BOM).startswith(FENCE))


def memory_type(data: dict) -> str | None:
    """``type``, else ``metadata.type`` (ZCode nests it), when it is one of
    MEMORY_TYPES."""
    nested = data.get("metadata")
    for value in (data.get("type"), nested.get("type") if isinstance(nested, dict) else None):
        if isinstance(value, str) and value.strip().lower() in MEMORY_TYPES:
            return value.strip().lower()
    return None


def _text(value) -> str | None:
    """A field as text: strings as they are, other scalars spelled out
    (``description: 2024-05-01`` is a date to YAML), lists joined."""
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, list):
        parts = [_text(v) for v in value]
        return " ".join(p for p in parts if p) or None
    text = value if isinstance(value, str) else str(value)
    return text.strip() or None


def _first_line(ex: Exception) -> str:
    mark = getattr(ex, "problem_mark", None)
    problem = getattr(ex, "problem", None) or (str(ex).splitlines() or [type(ex).__name__])[0]
    return f"{problem}, line {mark.line + 1}" if mark is not None else problem


# python-frontmatter's YAMLHandler.FM_BOUNDARY (checked by a test).
FENCE_LINE = re.compile(r"^-{3,}\s*$", re.MULTILINE)

_NOT_SIMPLE = object()


class _NotSimple(Exception):
    """The block needs the real YAML parser."""


# The patterns of the fast reader, compiled by _compile() on the first block
# it reads: a process that reads none (a query over unchanged files) saves
# the ~1.5 ms they take.
_LINE = _QUOTED = _UNESCAPE = _FLOW_ITEM = _AWKWARD = None


def _compile() -> None:
    global _LINE, _QUOTED, _UNESCAPE, _FLOW_ITEM, _AWKWARD
    # key: value on one line; the value is read by _scalar().
    _LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)*):(?: +(.*?))? *")
    # The inside of a double-quoted scalar whose only escapes are \" and \\.
    _QUOTED = re.compile(r'(?:[^"\\]|\\["\\])*')
    _UNESCAPE = re.compile(r'\\(["\\])')
    # One item of a one-line flow sequence and the comma after it (or the end).
    _FLOW_ITEM = re.compile(r' *("(?:[^"\\]|\\["\\])*"|\'(?:[^\']|\'\')*\'|[^,\[\]{}"\'#:]+?) *(,|$)')
    # Characters on which PyYAML errors, breaks lines or reads differently: C0
    # and C1 controls (tab included), lone CR, NEL, LS, PS, BOM, surrogates and
    # non-characters.
    _AWKWARD = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]|\r(?!\n)")


# A plain scalar cannot start with these (YAML's indicators); '-' and '?'
# could also open a sequence entry or a complex key.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

# The words YAML 1.1 reads as a bool or null: the only keys _LINE accepts
# (a letter or '_' first) that are not strings.
_NOT_STR_KEYS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split()
)
# Plain scalars of these types are built by SafeConstructor itself, as
# PyYAML would build them; any other tag (merge '<<', value '=') is left to
# PyYAML.
_BUILT = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "timestamp")}


def _simple(raw: str):
    """The block as PyYAML reads it, when it is made only of one-line
    ``key: value`` entries (and one level of them under a key with no value);
    else _NOT_SIMPLE."""
    if _AWKWARD is None:
        _compile()
    if _AWKWARD.search(raw):
        return _NOT_SIMPLE
    data: dict = {}
    parent = None  # the key whose nested mapping indented lines go into
    child_indent = None
    try:
        for line in raw.splitlines():
            if not line.strip() or line[0] == "#":
                continue
            match = _LINE.fullmatch(line)
            if match is None:
                return _NOT_SIMPLE
            indent, key, raw_value = match.groups()
            if key in _NOT_STR_KEYS:  # "on:", "no:", "null:" are a bool or None to YAML
                raise _NotSimple
            value = _scalar(raw_value) if raw_value else None
            if not indent:
                data[key] = value
                # Only a key with nothing after it may open a nested mapping
                # ("key: ~" is a null, and indented lines after it an error).
                parent, child_indent = (None if raw_value else key), None
                continue
            # Indented under a key that has a value, or a deeper level.
            if parent is None or (child_indent is not None and indent != child_indent):
                return _NOT_SIMPLE
            if child_indent is None:
                child_indent = indent
                data[parent] = {}
            data[parent][key] = value
    except _NotSimple:
        return _NOT_SIMPLE
    return data or None


def _scalar(value: str):
    """What PyYAML reads from a one-line scalar; _NotSimple when it might
    read it differently (a collection, alias, anchor, tag, escape sequence,
    block scalar, comment...)."""
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
    """``[a, "b", 'c']`` on one line: items quoted as above, or plain without
    the characters that would make them anything but one scalar."""
    items: list = []
    if not inner.strip():
        return items
    pos = 0
    while True:
        match = _FLOW_ITEM.match(inner, pos)
        if match is None or not match[1]:
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
    """A plain scalar resolved (Resolver.resolve) and built (SafeConstructor)
    by PyYAML's own code."""
    resolvers, constructor = _yaml()
    candidates = resolvers.get(value[0])
    if candidates is None:  # most text: no implicit type starts with its first character
        return value
    for tag, regexp in candidates:
        if regexp.match(value):
            break
    else:
        return value
    if tag not in _BUILT:
        raise _NotSimple
    from yaml.nodes import ScalarNode

    try:
        return constructor.yaml_constructors[tag](constructor, ScalarNode(tag, value))
    except Exception:  # a date like 2024-13-45: PyYAML fails on it too, with its own message
        raise _NotSimple from None


_YAML = None


def _yaml():
    global _YAML
    if _YAML is None:
        from yaml.constructor import SafeConstructor
        from yaml.resolver import Resolver  # what SafeLoader and CSafeLoader resolve with

        table = Resolver.yaml_implicit_resolvers
        anywhere = table.get(None, [])
        resolvers = {first: list(found) + anywhere for first, found in table.items() if first is not None}
        _YAML = (resolvers, SafeConstructor())
        if anywhere:  # no stock resolver applies to every first character; keep it exact if one does
            _YAML = (_Everywhere(resolvers, anywhere), _YAML[1])
    return _YAML


class _Everywhere(dict):
    def __init__(self, resolvers, anywhere):
        super().__init__(resolvers)
        self.anywhere = anywhere

    def get(self, key, default=None):
        return super().get(key, self.anywhere)


_HANDLER = None


def _handler():
    global _HANDLER
    if _HANDLER is None:
        from frontmatter.default_handlers import YAMLHandler

        _HANDLER = YAMLHandler()
    return _HANDLER
