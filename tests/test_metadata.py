import json
import subprocess
import sys

import frontmatter
import pytest
import yaml
from frontmatter.default_handlers import YAMLHandler
from hypothesis import given, settings, strategies as st

from conftest import NO_CORPORA, SHARED, imports_of
from memsearch import metadata
from memsearch.metadata import Metadata, parse


@pytest.mark.parametrize(
    "text, name, description, type_",
    [
        ("---\nname: db\ndescription: port 5433\ntype: project\n---\nbody\n", "db", "port 5433", "project"),
        ("---\nname: z\nmetadata:\n  node_type: memory\n  type: Feedback\n---\nb", "z", None, "feedback"),
        ("---\ntype: handoff\nmetadata:\n  type: user\n---\nb", None, None, "user"),
        ("---\ntype: handoff\n---\nb", None, None, None),
        ('---\ndescription: "a: quoted \\"one\\""\n---\nb', None, 'a: quoted "one"', None),
        ("---\ndescription: 'it''s'\n---\nb", None, "it's", None),
        ("---\ndescription: 2024-05-01\n---\nb", None, "2024-05-01", None),
        ("---\ndescription: [a, b]\n---\nb", None, "a b", None),
        ("---\r\nname: crlf\r\n---\r\nbody", "crlf", None, None),
        ("\ufeff---\nname: bom\n---\nbody", "bom", None, None),
    ],
)
def test_fields(text, name, description, type_):
    meta = parse(text)
    assert (meta.name, meta.description, meta.type, meta.error) == (name, description, type_, None)
    assert meta.body.strip() == "body" or meta.body.strip() == "b"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("---\nname: a\nnever closed\n", "never closed"),
        ("---\n- a list\n- not a mapping\n---\nbody", "not a mapping"),
        ("---\njust a sentence\n---\nbody", "not a mapping"),
        ("---\nname: a\n\tdescription: tab indented\n---\nbody", "not valid YAML"),
        ("---\nname: [unclosed\n---\nbody", "not valid YAML"),
        ("---\nwhen: 2024-13-45\n---\nbody", "not valid YAML"),
    ],
)
def test_unusable_frontmatter_keeps_the_whole_text(text, reason):
    meta = parse(text)
    assert reason in meta.error
    assert meta.body == text and meta.name is None and meta.type is None


@pytest.mark.parametrize("text", ["plain text", "---x\nno fence", "-- two dashes\n", "", "---"[:2]])
def test_no_frontmatter(text):
    assert parse(text) == Metadata(body=text)


def test_empty_block_is_not_an_error():
    assert parse("---\n---\nbody") == Metadata(body="body")


def test_fence_is_python_frontmatters():
    assert metadata.FENCE_LINE.pattern == YAMLHandler.FM_BOUNDARY.pattern
    assert metadata.FENCE_LINE.flags == YAMLHandler.FM_BOUNDARY.flags


def test_pyyaml_uses_the_c_loader_when_libyaml_is_present():
    if yaml.__with_libyaml__:
        assert metadata._handler_loader() is yaml.CSafeLoader


def _yaml_or_error(raw):
    try:
        return yaml.load(raw, Loader=yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    except Exception:
        return "ERROR"


KEYS = st.sampled_from(["name", "description", "type", "metadata", "on", "null", "a.b", "x-y", "k"])
VALUES = st.one_of(
    st.text(alphabet="ab :#'\"\\-?[]{},&*!|>%@`0123456789.+~=<TtYyNnOo\t\u00e9\u4e2d\u2028\x85", max_size=12),
    st.sampled_from(["yes", "No", "null", "~", "1.5", "0x1F", "0b_", "2024-05-01", "2024-13-45", "12:30",
                     ".inf", "=", "<<", "-", "- a", "a: b", "a #b", "'q'", '"q"', '"a\\"b"', "''", "'it''s'"]),
)
LINES = st.lists(
    st.tuples(st.sampled_from(["", "", "  ", "   ", "\t"]), KEYS, st.one_of(st.none(), VALUES)),
    max_size=6,
)


NOT_SIMPLE = object()


def fast_read(raw):
    """metadata._simple(raw), or NOT_SIMPLE where it leaves the block to PyYAML."""
    try:
        return metadata._simple(raw)
    except metadata._NotSimple:
        return NOT_SIMPLE


@settings(max_examples=400, deadline=None)
@given(LINES)
def test_the_fast_path_reads_what_pyyaml_reads(lines):
    raw = "".join(f"{indent}{key}:{'' if value is None else ' ' + value}\n" for indent, key, value in lines)
    fast = fast_read(raw)
    if fast is not NOT_SIMPLE:
        assert fast == _yaml_or_error(raw), raw


@pytest.mark.skipif(not (SHARED / "agent-memory").is_dir(), reason=NO_CORPORA)
def test_the_fast_path_agrees_with_python_frontmatter_on_real_memory_files():
    checked = 0
    for path in sorted((SHARED / "agent-memory").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---"):
            continue
        parts = metadata.FENCE_LINE.split(text, 2)
        if len(parts) < 3:
            continue
        fast = fast_read(parts[1])
        if fast is NOT_SIMPLE:
            continue
        checked += 1
        post = frontmatter.loads(text)
        assert fast == post.metadata, path
    assert checked > 100


def test_files_without_frontmatter_import_nothing():
    code = (
        "from memsearch.metadata import parse, starts_with_fence\n"
        "parse('# Title\\nno frontmatter here\\n')\n"
    )
    loaded, out = imports_of(code, ("frontmatter", "yaml"))
    assert out.returncode == 0, out.stderr
    assert loaded == []


def test_memory_types():
    assert metadata.memory_type({"type": " Reference "}) == "reference"
    assert metadata.memory_type({"metadata": {"type": "user"}}) == "user"
    assert metadata.memory_type({"metadata": "user"}) is None
    assert metadata.memory_type({"type": ["user"]}) is None


def test_runs_of_spaces_in_a_value_cost_linear_time():
    """The fast reader's patterns tried every end of a value ("(.*?) *"): a
    value with 60,000 spaces, which a 64 KiB block holds, took 12 s, in a flow
    list 45 s. The guard is a generous timeout, in a child process; the
    values read are checked against PyYAML's."""
    spaces = " " * 60_000
    code = (
        "import json, sys\n"
        "from memsearch.metadata import parse\n"
        "blocks = json.loads(sys.stdin.read())\n"
        "print(json.dumps([[m.name, m.error] for m in map(parse, blocks)]))\n"
    )
    # Other keys: a name or description is at most 20,000 characters.
    half = spaces[:30_000]
    values = [f"'{spaces}x'", f"a{spaces}b", f"[a{spaces}b]", f"[{half}c, d{half}]", f"a{spaces}#"]
    blocks = [f"---\nname: n\nnote: {value}\n---\nbody" for value in values]
    run = subprocess.run([sys.executable, "-c", code], input=json.dumps(blocks), capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [["n", None]] * len(values)
    for block in blocks:
        raw = block.split("---\n")[1]
        fast = fast_read(raw)
        assert fast is NOT_SIMPLE or fast == _yaml_or_error(raw)


def test_a_reason_quotes_a_bounded_part_of_the_parsers_message():
    """PyYAML's message quotes the tag or alias it stopped at, of up to 64 KiB."""
    for block in ("name: !" + "t" * 60_000 + " x", "name: *" + "a" * 60_000):
        meta = parse(f"---\n{block}\n---\nbody")
        assert meta.error.startswith("frontmatter is not valid YAML (") and len(meta.error) < 300, meta.error[:300]
        assert meta.name is None and meta.body.endswith("body")
