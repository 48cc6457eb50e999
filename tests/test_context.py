import os

import pytest

from conftest import cli, memsearch_exe, write
from memsearch import format_index_for_context, index_for_context
from memsearch.context import MAX_CHARS, MAX_LINES


def entries(n, width=40):
    return [f"- [Entry {i}](entry-{i}.md) — {'x' * width}"[: max(width, 10)] for i in range(n)]


def warning_lines(text):
    return [line for line in text.split("\n") if line.startswith("> WARNING")]


@pytest.mark.parametrize("n", [199, 200])
def test_up_to_200_lines_pass_whole(n):
    lines = entries(n)
    out = format_index_for_context("\n".join(lines) + "\n")
    assert out.split("\n") == lines
    assert not warning_lines(out)


def test_201_lines_are_cut_to_200_with_one_warning_line():
    lines = entries(201)
    out = format_index_for_context("\n".join(lines) + "\n").split("\n")
    assert out[:200] == lines[:200]
    assert len(out) == 201
    warning = out[200]
    assert "truncated" in warning and "201 lines" in warning
    assert "one line" in warning and "200 characters" in warning and "own files" in warning


def test_characters_cap_cuts_at_a_line_end():
    line = "- " + "y" * 148  # 150 characters, 151 with the newline
    fits = "\n".join([line] * 165)  # 24,914 characters: under the cap
    assert len(fits) < MAX_CHARS
    assert format_index_for_context(fits) == fits
    over = "\n".join([line] * 166)  # 25,065 characters, 166 lines
    assert len(over) > MAX_CHARS
    out = format_index_for_context(over).split("\n")
    assert out[:-1] == [line] * 165  # whole lines only
    assert len("\n".join(out[:-1])) <= MAX_CHARS
    assert "truncated" in out[-1] and "25,065 characters" in out[-1]


def test_exactly_25000_characters_pass():
    text = "\n".join(["z" * 199] * 125) + "z"  # 25,000 characters in 125 lines
    assert len(text) == MAX_CHARS
    assert format_index_for_context(text) == text
    one_line = "w" * MAX_CHARS
    assert format_index_for_context(one_line) == one_line
    lines = "\n".join(["v" * 99] * 250)  # 24,999 characters but 250 lines: only the line cap applies
    out = format_index_for_context(lines).split("\n")
    assert len(out) == MAX_LINES + 1 and "250 lines (limit 200), so" in out[-1]


def test_both_caps_and_one_long_line():
    out = format_index_for_context("q" * (MAX_CHARS + 10))
    body, warning = out.split("\n")
    assert body == "q" * MAX_CHARS and "25,010 characters" in warning
    many_long = "\n".join(["r" * 300] * 250)
    out = format_index_for_context(many_long).split("\n")
    assert len(warning_lines("\n".join(out))) == 1
    assert "250 lines" in out[-1] and "characters" in out[-1]
    assert len("\n".join(out[:-1])) <= MAX_CHARS and all(line == "r" * 300 for line in out[:-1])


def test_frontmatter_and_top_level_comments_are_removed():
    text = (
        "---\nname: index\ndescription: the index\n---\n\n"
        "<!-- editing notes: keep entries short -->\n"
        "# Memory\n"
        "<!--\nmulti-line\nnote\n-->\n"
        "- [A](a.md) one <!-- inline in a list: kept -->\n"
        "  <!-- indented inside the list item: kept -->\n"
        "> quoted <!-- kept -->\n"
        "> <!-- kept too -->\n"
        "\n"
        "```md\n<!-- in code: kept -->\n```\n"
        "\n"
        "    <!-- indented code: kept -->\n"
        "\n"
        "<!-- a --> after the comment stays\n"
        "text with <!-- inline comment --> in a paragraph\n"
        "<!-- never closed\n"
    )
    assert format_index_for_context(text) == (
        "# Memory\n"
        "- [A](a.md) one <!-- inline in a list: kept -->\n"
        "  <!-- indented inside the list item: kept -->\n"
        "> quoted <!-- kept -->\n"
        "> <!-- kept too -->\n"
        "\n"
        "```md\n<!-- in code: kept -->\n```\n"
        "\n"
        "    <!-- indented code: kept -->\n"
        "\n"
        " after the comment stays\n"
        "text with <!-- inline comment --> in a paragraph\n"
        "<!-- never closed"
    )


def test_a_comment_after_a_list_is_top_level():
    assert format_index_for_context("- a\n- b\n<!-- note -->\n- c\n") == "- a\n- b\n- c"
    assert format_index_for_context("- a\n\n  <!-- in item -->\n") == "- a\n\n  <!-- in item -->"


def test_removed_lines_do_not_count():
    lines = entries(200)
    text = "---\nname: x\n---\n<!-- a\nlong\ncomment -->\n" + "\n".join(lines) + "\n"
    assert format_index_for_context(text).split("\n") == lines


def test_missing_or_unreadable_index_is_nothing(tmp_path):
    assert index_for_context(tmp_path / "nope" / "MEMORY.md") == ""
    assert index_for_context(tmp_path) == ""
    write(tmp_path, "MEMORY.md", "- [A](a.md)\n")
    assert index_for_context(tmp_path) == "- [A](a.md)"
    assert index_for_context(tmp_path / "MEMORY.md") == "- [A](a.md)"
    assert format_index_for_context("") == ""
    assert format_index_for_context("---\nname: only frontmatter\n---\n") == ""


def test_an_index_linked_out_of_its_folder_is_nothing(tmp_path):
    """A MEMORY.md planted as a link to a file outside its folder (a key, /etc/...) printed that file
    into the agent's context; a link is followed only within the folder, as the walk's within its root."""
    write(tmp_path, "secret/id_rsa", "PRIVATE KEY\n")
    write(tmp_path, "memory/real.md", "- [B](b.md)\n")
    os.symlink(tmp_path / "secret/id_rsa", tmp_path / "memory/MEMORY.md")
    assert index_for_context(tmp_path / "memory") == "" == index_for_context(tmp_path / "memory/MEMORY.md")
    assert _context(tmp_path / "memory") == (0, "", "")
    os.unlink(tmp_path / "memory/MEMORY.md")
    os.symlink("real.md", tmp_path / "memory/MEMORY.md")  # within the folder: followed
    assert index_for_context(tmp_path / "memory") == "- [B](b.md)"


def test_an_unreadable_index_prints_nothing_through_the_cli(tmp_path, monkeypatch):
    """docs/context.md: an unreadable index prints nothing, exit status 0 (click refused it, status 2).
    Root reads any file, so there the file is made unreadable to the two checks that ask."""
    from memsearch import context as context_mod

    index = write(tmp_path, "MEMORY.md", "- [A](a.md)\n")
    index.chmod(0)
    if os.geteuid() == 0:
        access, open_confined = os.access, context_mod.open_confined

        def refused(path, *args, **kwargs):
            if os.path.realpath(path) == os.path.realpath(index):
                raise PermissionError(13, "Permission denied", str(path))
            return open_confined(path, *args, **kwargs)

        monkeypatch.setattr(os, "access", lambda path, mode, *args, **kwargs: (
            os.path.realpath(path) != os.path.realpath(index) and access(path, mode, *args, **kwargs)))
        monkeypatch.setattr(context_mod, "open_confined", refused)
    r = cli("context", str(index))
    assert (r.exit_code, r.output) == (0, "")


def test_cli(tmp_path):
    write(tmp_path, "MEMORY.md", "---\nname: x\n---\n" + "\n".join(entries(201)) + "\n")
    r = cli("context", str(tmp_path))
    assert r.exit_code == 0
    out = r.output.split("\n")
    assert len(out) == 202 and out[-1] == "" and out[200].startswith("> WARNING")
    r = cli("context", str(tmp_path / "missing"))
    assert r.exit_code == 0 and r.output == "" and r.stderr == ""


# -- hostile index files (issue 14, item 10) ---------------------------------------
# Run through the installed script: a regression would hang or eat memory, so
# the child gets a hang guard (a timeout far beyond any real run) and an
# address-space cap.

# The peak RSS of `memsearch context` alone: a child's ru_maxrss starts from its parent's RSS at
# fork (exec keeps the high-water mark), so the test process, tens of MB into a full run, would count.
# A small go-between starts memsearch and reports the peak of that child of its own.
PEAK = ("import os, resource, sys; limit = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_AS, (limit, limit));"
        " pid = os.posix_spawn(sys.argv[3], sys.argv[3:], os.environ); _, status, usage = os.wait4(pid, 0);"
        " open(sys.argv[2], 'w').write(f'{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}')")


def _run_context(path, limit_bytes=2 << 30):
    """Exit status, stdout, stderr and peak RSS (KiB) of `memsearch context PATH`."""
    import signal
    import subprocess
    import sys
    import tempfile
    import threading

    with tempfile.TemporaryDirectory() as scratch:
        report = os.path.join(scratch, "peak")
        proc = subprocess.Popen([sys.executable, "-c", PEAK, str(limit_bytes), report, memsearch_exe(), "context",
                                 str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        # Hang guard only: a real run takes well under a second.
        guard = threading.Timer(120, lambda: os.killpg(proc.pid, signal.SIGKILL))
        guard.start()
        try:
            err = []
            reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
            reader.start()
            out = proc.stdout.read()
            reader.join()
            proc.wait()
        finally:
            guard.cancel()
            proc.stdout.close()
            proc.stderr.close()
        assert proc.returncode == 0 and os.path.exists(report), f"memsearch context {path} never returned"
        with open(report) as f:
            status, peak = map(int, f.read().split())
    return status, out.decode(), err[0].decode(), peak


def _context(path):
    return _run_context(path)[:3]


def test_a_fifo_is_no_index_and_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "MEMORY.md")
    assert _context(tmp_path) == (0, "", "")
    assert _context(tmp_path / "MEMORY.md") == (0, "", "")
    assert index_for_context(tmp_path) == ""


def test_a_device_is_no_index(tmp_path):
    (tmp_path / "MEMORY.md").symlink_to("/dev/zero")
    assert _context(tmp_path) == (0, "", "")
    assert _context("/dev/zero") == (0, "", "")


def test_a_huge_index_is_read_only_as_far_as_the_caps_need(tmp_path):
    path = write(tmp_path, "MEMORY.md", "\n".join(entries(300)) + "\n")
    with open(path, "r+b") as f:
        f.truncate(200 << 20)  # 200 MB, sparse: the rest reads as NUL bytes
    status, out, err, peak_kib = _run_context(tmp_path)
    assert status == 0 and err == ""
    lines = out.split("\n")
    assert lines[:200] == entries(300)[:200] and len(lines) == 202
    assert "is 209,715,200 bytes (read: the first 1,048,576)" in lines[200]
    # Reading it all took 742 MB; the first MiB is a few MB over the interpreter.
    assert peak_kib < 100 * 1024, peak_kib


def test_only_a_file_beyond_the_read_is_said_to_be_cut_by_bytes(tmp_path):
    from memsearch.context import READ_BYTES

    line = "- " + "y" * 98 + "\n"
    whole = line * (READ_BYTES // len(line)) + "z" * (READ_BYTES % len(line))
    assert len(whole) == READ_BYTES
    write(tmp_path, "MEMORY.md", whole)
    assert "lines (limit 200)" in warning_lines(index_for_context(tmp_path))[0]
    write(tmp_path, "MEMORY.md", whole + "\n")
    out = index_for_context(tmp_path)
    assert warning_lines(out) == [w for w in warning_lines(out) if f"{READ_BYTES + 1:,} bytes" in w] != []
    # Removed comments take up most of the read: still said to be cut.
    write(tmp_path, "MEMORY.md", "<!--\n" + "x\n" * (READ_BYTES // 2) + "-->\n- [A](a.md)\n")
    assert index_for_context(tmp_path).split("\n")[0] == "<!--"  # the close is beyond the read
    assert len(warning_lines(index_for_context(tmp_path))) == 1


def test_many_unclosed_comments_cost_linear_time(tmp_path):
    """Each "<!--" line looked for its "-->" to the end of the file: 20,000
    such lines took 8 s, the 200,000 of a 1 MB file would take minutes."""
    write(tmp_path, "MEMORY.md", "<!--\n" * 200_000)
    status, out, _ = _context(tmp_path)
    assert status == 0 and out.startswith("<!--\n") and len(warning_lines(out)) == 1
    assert format_index_for_context("<!--\n<!--\nx -->\n- a\n") == "- a"


def test_unclosed_comments_after_a_closed_one_cost_linear_time(tmp_path):
    """A closed comment, then "<!--" after "<!--" on its last line: the comment's removal rescanned the
    rest of the block for each (a 60 KB MEMORY.md took 4 s, a 120 KB checkpoint 21 s in the rebuild
    block, 1 MB would take minutes). 200,000 of them here, within a generous timeout."""
    write(tmp_path, "MEMORY.md", "# idx\n<!--\n-->" + " <!--" * 200_000 + "\n- entry\n")
    status, out, _ = _context(tmp_path)
    assert status == 0 and out.startswith("# idx\n> WARNING: MEMORY.md is 1,000,014 characters")
    assert format_index_for_context("<!--\n--> <!-- a --> b <!--\n- c\n") == "  b <!--\n- c"


def test_bad_arguments_raise_invalid_argument(tmp_path):
    from memsearch import InvalidArgument

    for bad in (None, 5, b"MEMORY.md"):
        with pytest.raises(InvalidArgument, match="path must be a MEMORY.md or its folder"):
            index_for_context(bad)
        with pytest.raises(InvalidArgument, match="text must be a string"):
            format_index_for_context(bad)
    assert index_for_context(f"{tmp_path}/MEMORY.md\0x") == ""  # names no file: there is no index
    assert index_for_context(f"{tmp_path}/\ud800") == ""  # a lone surrogate no byte decodes to: neither


def test_control_characters_never_reach_the_terminal(tmp_path):
    """An escape sequence clears the screen, a lone CR hides the line before it:
    spelled \\xNN, as session-context and the search results spell them."""
    text = "- [a](a.md)\x1b[2J\r- [b](b.md)\x00\x9b\n- [c](c.md)\tkept\r\n"
    assert format_index_for_context(text) == "- [a](a.md)\\x1b[2J\\x0d- [b](b.md)\\x00\\x9b\n- [c](c.md)\tkept"
    write(tmp_path, "MEMORY.md", text)
    status, out, _ = _context(tmp_path)
    assert status == 0 and "\x1b" not in out and "\r" not in out and out.startswith("- [a](a.md)\\x1b[2J")


def test_the_caps_hold_for_the_text_as_shown(tmp_path):
    """The caps are the context the index costs: a control or tag character shown as \\xNN or \\U000e0041
    counts as the 4 or 10 characters it becomes. An index of 23,160 characters, mostly tag characters, was
    shown whole as 217,559, with no warning."""
    line = "- [a](a.md) " + "\U000e0041" * 180
    shown = format_index_for_context("\n".join([line] * 120))
    assert len(shown) <= MAX_CHARS + 300 and len(warning_lines(shown)) == 1
    write(tmp_path, "MEMORY.md", "- [b](b.md) " + "\x1b" * 20_000 + "\n")
    shown = index_for_context(tmp_path)
    assert len(shown) <= MAX_CHARS + 300 and "\x1b" not in shown and len(warning_lines(shown)) == 1


def test_the_warning_quotes_the_index_name(tmp_path):
    """The warning names the file as every name is shown (errors.quoted): a file given by its path, named with a
    line break and an escape sequence, added a line of its own after the warning's start."""
    name = "x\x1b[2J\n> note: all clear.md"
    write(tmp_path, name, "- [a](a.md)\n" * 300)
    shown = index_for_context(tmp_path / name)
    assert "\x1b" not in shown and shown.split("\n")[-1].startswith("> WARNING: 'x\\x1b[2J\\n> note: all clear.md'")
    assert len(shown.split("\n")) == MAX_LINES + 1
