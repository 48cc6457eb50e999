"""Pure formatting of results for people and for programs (no printing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

# CONTROLS: those whitespace folding leaves (a file must not drive the terminal)
from .errors import CONTROLS, quoted, shows_all, unseen
from .settings import MARK_CLOSE, MARK_OPEN

if TYPE_CHECKING:  # annotations only: a query imports neither for printing
    from .reconcile import ReconcileReport

# ANSI bold yellow for matched words on a terminal.
HIGHLIGHT_ON, HIGHLIGHT_OFF = "\x1b[1;33m", "\x1b[0m"


def one_line(text: str) -> str:
    return " ".join(text.split()).translate(CONTROLS)


def snippet_line(snippet: str, color: bool) -> str:
    """A snippet on one line, its matched words highlighted when ``color``."""
    snippet = one_line(snippet)
    if not color:
        return snippet
    # Only marks that pair up are highlights: a file's own "<<" (a heredoc) stays text.
    pieces, paired = split_marks(snippet, MARK_OPEN, MARK_CLOSE)
    return "".join((HIGHLIGHT_ON if piece == MARK_OPEN else HIGHLIGHT_OFF) if i in paired else piece
                   for i, piece in enumerate(pieces))


def split_marks(text: str, start: str, end: str) -> tuple[list[str], set[int]]:
    """``text`` split at its marks (the odd indexes), and the indexes of the marks that pair up."""
    import re

    pieces = re.split(f"({re.escape(start)}|{re.escape(end)})", text)
    opens: list[int] = []
    paired: set[int] = set()
    for i in range(1, len(pieces), 2):
        if pieces[i] == start:
            opens.append(i)
        elif opens:
            paired.update((opens.pop(), i))
    return pieces, paired


def format_hits(result, *, color: bool = False, options=()) -> str:
    """A memory or history result as text; a history one ends with how to open its first session (open_hint)."""
    blocks = [hit_block(h, color) for h in result.hits]
    history = hasattr(result, "refresh")
    if history and result.hits:
        blocks.append(f"open a session: {open_hint(result, result.hits[0], options)}")
    if result.unmatched:  # as the tool says it: hits for the other words must not pass for an answer
        blocks.insert(0, unmatched_line(result.unmatched, "past message" if history else "memory file"))
    return "\n\n".join(blocks)


def hit_block(hit, color: bool = False) -> str:
    if not hasattr(hit, "session"):  # a memory hit
        return f"{hit_line(hit)}\n    {snippet_line(hit.snippet, color)}"
    where = f"session {quoted(hit.session)}  [{quoted(hit.project)}]  score {hit.score:.2f}"
    said = lambda m: f"{m.at or '(no time)'}  {m.role}{' (sub-agent)' if m.sidechain else ''}"
    if not hasattr(hit, "excerpts"):  # a message of the history
        return f"{said(hit)}  {where}\n    {snippet_line(hit.snippet, color)}"
    return "\n".join([f"{where}  {hit.matched} message{'' if hit.matched == 1 else 's'} matched",
                      *(f"    {said(e)}: {snippet_line(e.snippet, color)}" for e in hit.excerpts)])


def open_hint(result, hit, options=()) -> str:
    """The command that reads a history hit's session, quoted for a shell (a sessionId may be "x; rm -rf ~"); with
    the hit's project where more than one project folder holds the id, and ``options``, (option, value) pairs the
    search ran with (its transcript folders and database: without them the command reads others)."""
    session, query, project = hit.session, result.query, hit.project if hit.session in result.shared else None
    # An id holding a line break, a control or a character that shows nothing, or one session-context would take
    # back as another (the id 'x', quotes and all, read as x), is given quoted as the hit shows it: folded, it
    # named no session; bare, it read as another.
    session, project = (v if v is None or v.isprintable() and shows_all(v) and unquoted(v) == v
                        else quoted(v, always=True) for v in (session, project))
    given = [("--query", query), *([("--project", project)] if project else []), *options]
    words = " ".join(f"{option} {shell_word(value)}" for option, value in given)
    if session.startswith("-"):  # shlex leaves it bare: read as options, unless after "--"
        return f"memsearch session-context {words} -- {shell_word(session)}"
    return f"memsearch session-context {shell_word(session)} {words}"


def shell_word(value: str) -> str:
    """``value`` as one word of a command to paste: shlex.quote()'s, or, where it holds a character that is not
    printable or shows nothing (a line break, an escape, U+202E, a byte not UTF-8), bash's ``$'...'`` with each
    such character as its bytes (``\\x0a``): on one line, it still names the folder searched, where folding it
    named another."""
    import shlex

    if value.isprintable() and shows_all(value):
        return shlex.quote(value)

    def spelled(char: str) -> str:
        if char.isprintable() and shows_all(char):
            return "\\" + char if char in "\\'" else char
        try:
            raw = char.encode("utf-8", "surrogateescape")  # (a byte not UTF-8 of a file's name: that byte)
        except UnicodeEncodeError:
            raw = char.encode("utf-8", "surrogatepass")
        return "".join(f"\\x{b:02x}" for b in raw)

    return "$'" + "".join(map(spelled, value)) + "'"


# Unmatched words a line names, each cut: a pasted text's thousands of words made a line of tens of kilobytes.
SHOWN_WORDS, SHOWN_WORD_CHARS = 10, 40


def unmatched_line(words, what: str = "memory file") -> str:
    # quoted as repr() does: a query word cannot drive the terminal.
    missing = ", ".join(quoted(w, SHOWN_WORD_CHARS, always=True) for w in words[:SHOWN_WORDS])
    if len(words) > SHOWN_WORDS:
        missing += f" and {len(words) - SHOWN_WORDS} more"
    return (f"No {what} contains {missing}: these hits match the other words only,"
            " so check they answer the question.")


def result_json(result, encoding: str = "utf-8", options=()) -> str:
    """A memory or history result as JSON (a history hit with the command that opens its session: open_hint)."""
    payload = result_dict(result)
    if hasattr(result, "refresh"):  # history
        for shown, hit in zip(payload["results"], result.hits):
            shown["open"] = open_hint(result, hit, options)
        if result.refresh is not None:
            payload["refresh"] = result.refresh.to_dict()
    else:
        if result.reconcile is not None:
            payload["reconcile"] = report_dict(result.reconcile, brief=True)
        if result.freshness is not None:
            payload["freshness"] = result.freshness.to_dict()
    return json_text(payload, encoding)


def result_dict(result) -> dict:
    """The JSON shape every search answers in: the CLI's --json and the tools' data."""
    return {"query": result.query, "fts_query": result.fts_query, "results": [hit.to_dict() for hit in result.hits],
            "floored": result.floored, "unmatched": list(result.unmatched)}


def json_text(value, encoding: str = "utf-8") -> str:
    """JSON as text, escaped to ASCII where ``encoding`` (the output's) cannot spell it (a lone surrogate), and
    each character of errors.UNSEEN as JSON escapes it (``\\u202e``): read back, the same values."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return json.dumps(value)
    return unseen().sub(lambda m: json.dumps(m[0]).strip('"'), text)


def shown_values(value):
    """``value``, JSON data, with each string holding a character of errors.unseen(), or one unquoted() would read
    as another (a folder 'shop', quotes and all, read back as shop), as quoted() shows it (in quotes, escaped;
    unquoted() reads it back), for a host that hands it to its model."""
    if isinstance(value, str):
        return quoted(value, always=True) if unseen().search(value) or unquoted(value) != value else value
    if isinstance(value, dict):
        return {k: shown_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown_values(v) for v in value]
    return value


def report_dict(report: ReconcileReport, *, brief: bool = False) -> dict:
    counts = {"added": len(report.added), "updated": len(report.updated), "removed": len(report.removed),
              "unchanged": report.unchanged, "skipped": len(report.skipped),
              "malformed": len(report.malformed), "left_out": sum(x.files for x in report.left_out),
              "seconds": round(report.seconds, 4)}
    if brief:
        return counts
    return {**counts, **{f"{k}_paths": list(getattr(report, k)) for k in ("added", "updated", "removed")},
            **{f"{k}_paths": [s._asdict() for s in getattr(report, k)] for k in ("skipped", "malformed")},
            "left_out_reasons": [x._asdict() for x in report.left_out]}


def format_report(report: ReconcileReport) -> str:
    lines = [f"{report.summary()} in {report.seconds:.2f}s"]
    lines += [f"skipped {quoted(s.path)}: {one_line(s.reason)}" for s in report.skipped]
    lines += [f"indexed as plain text {quoted(s.path)}: {one_line(s.reason)}" for s in report.malformed]
    lines += [f"left out {one_line(x.describe())}" for x in report.left_out]
    return "\n".join(lines)


STATUS_UNITS = {"watcher_heartbeat_age": " s", "cookie_ms": " ms", "database_bytes": " bytes"}


def format_status(status: dict) -> str:
    """One line a field (line breaks and controls in a path escaped); a field with nothing to say (None, []) left out."""
    shown = {k.removesuffix("_ms").replace("_", " "): one_line(f"{'; '.join(v) if isinstance(v, list) else v}")
             + STATUS_UNITS.get(k, "") for k, v in status.items()
             if v is not None and v != [] and not (k == "root" and "roots" in status)}
    width = max(len(k) for k in shown)
    return "\n".join(f"{k + ':':<{width + 2}}{v}" for k, v in shown.items())


def unquoted(value):
    """A value as :func:`quoted` showed it, back to itself (a model copies the quotes)."""
    if isinstance(value, str) and len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        import ast

        try:
            inner = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
        if isinstance(inner, str) and quoted(inner, always=True) == value:
            return inner
    return value


def hit_line(hit) -> str:
    """A memory hit's head line, ``path  [projects/shop · memory]  score 1.00``, names quoted."""
    where = "/".join(p for p in (hit.scope, hit.scope_id and quoted(hit.scope_id)) if p)
    return f"{quoted(hit.file or hit.path)}  [{f'{where} · {hit.type}' if where else hit.type}]  score {hit.score:.2f}"
