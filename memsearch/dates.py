"""The dates a question names, as the times a session it asks about was held.

"What did Evan share on 9th December 2023?", "where did we deploy in July 2022?": the session was held
then, though its text rarely says the date. memsearch.history ranks the sessions held at a named date
higher (a factor, not a filter: ``--since`` filters). A question that names no date may count back
("two weeks ago", "last month", "in the past 10 days") from today (UTC).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import NamedTuple

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_NAME = {**{m: i for i, m in enumerate(MONTHS, 1)}, **{m[:3]: i for i, m in enumerate(MONTHS, 1)}, "sept": 9}
# (?a:...): a name matches in ASCII's cases alone, as the tables spell it; re.I's Unicode cases took 'auguſt' (a long
# s) and 'aprıl' (a dotless i) for names no table holds, and the search failed (KeyError).
_MONTH = f"(?a:{'|'.join(sorted(_NAME, key=len, reverse=True))})"
_YEAR = r"(?:19|20)\d\d"
# 9 December 2023, 9th of December, December 9th, 2023, December 2023, 2023-12-09, 2023-12. A month's name is a
# word of its own: not the start of Augustine, marathons (5 marathons) or decimals.
_DATE = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH})\b\.?"
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<m3>{_MONTH})\.?(?=,?\s+{_YEAR}\b)"
    rf"|(?P<iy>{_YEAR})-(?P<im>[01]\d)(?:-(?P<id>[0-3]\d))?\b"
    rf"|(?P<m4>(?a:{'|'.join(MONTHS)}))\b)(?:,?\s+(?P<y>{_YEAR})\b)?", re.I)
# Month names that are also words ("it may", "march on") count alone only capitalised, mid-sentence.
_ALSO_WORDS = ("may", "march")

_COUNT = {"a": 1, "an": 1, "one": 1, "a couple of": 2, "two": 2, "three": 3, "four": 4,
          "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_DAYS = {"day": 1, "week": 7, "month": 30}
_N = rf"(?P<n>\d{{1,3}}|(?a:{'|'.join(sorted(_COUNT, key=len, reverse=True))}))\s+(?P<unit>(?a:day|week|month))s?"
# Days back from today, not years: "a year ago" in a conversation tells of its story, not of its sessions.
_BACK = re.compile(rf"\b(?:{_N}\s+ago|the\s+(?:past|last)\s+{_N.replace('?P<', '?P<p')}"
                   r"|(?P<last>(?a:yesterday)|(?a:last)\s+(?a:weekend|week|month)))\b", re.I)
# How many days back each reaches (near, far): "last week" as far as the Monday a week before, "last month"
# either meaning of it.
_LAST = {"yesterday": (1, 2), "last weekend": (0, 9), "last week": (0, 13), "last month": (0, 62)}

# Days either side of a named day: "the week before August 3" and a session held the day after still meet it.
SLACK_DAYS = 3

# A session (or message) held at a date the question names counts this much more.
HELD_FACTOR = 2.0
# The dates of a question ranked by, the first named: each is an OR every row scored tests, and SQLite refuses
# an expression of about a thousand.
MAX_WINDOWS = 16


class Window(NamedTuple):
    """A time a session was held, ``start`` to ``end`` as messages' times are stored; for a month named
    without a year, that month of every year (``start`` and ``end`` empty, ``month`` 'MM')."""

    start: str
    end: str
    month: str = ""


def windows(text: str, today: dt.date | None = None) -> tuple[Window, ...]:
    """The dates ``text`` names (the first MAX_WINDOWS); if none, the days it counts back from ``today``
    (default: UTC's)."""
    out = []
    for m in _DATE.finditer(text):
        if m["iy"]:
            year, month, day = int(m["iy"]), int(m["im"]), int(m["id"] or 0)
        else:
            name = m["m1"] or m["m2"] or m["m3"] or m["m4"]
            if m["m4"] and not m["y"] and (name.lower() in _ALSO_WORDS and (name.islower() or m.start() == 0)):
                continue
            year, month, day = int(m["y"] or 0), _NAME[name.lower()], int(m["d1"] or m["d2"] or 0)
        if not year:  # (a month out of 1-12 is only ever given with its year: date() refuses it)
            out.append(Window("", "", f"{month:02d}"))
            continue
        try:
            first = dt.date(year, month, day or 1)
            first, last = ((first - dt.timedelta(SLACK_DAYS), first + dt.timedelta(SLACK_DAYS)) if day
                           else (first, dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(1)))
        except ValueError:  # 31 February
            continue
        out.append(_window(first, last))
    now = today or dt.datetime.now(dt.timezone.utc).date()
    for m in () if out else _BACK.finditer(text):
        if m["last"]:
            near, far = _LAST[" ".join(m["last"].lower().split())]
        elif m["n"]:  # N days ago, three days either side, or a day for each week counted back
            days = _days(m["n"], m["unit"])
            slack = max(SLACK_DAYS, days // 7)
            near, far = days - slack, days + slack
        else:  # the past two weeks: up to today
            near, far = 0, _days(m["pn"], m["punit"]) + SLACK_DAYS
        out.append(_window(now - dt.timedelta(far), now - dt.timedelta(max(near, 0))))
    return tuple(dict.fromkeys(out))[:MAX_WINDOWS]


def uncounted(text: str) -> str:
    """``text`` without the days it counts back ("two weeks ago", "in the past three months"), for ranking:
    they say when a session was held, which a session rarely says so, and matched as words they lift the
    sessions that happen to say "weeks" or "ago". "last week", "yesterday" stay: a session tells of them so."""
    return _BACK.sub(lambda m: m[0] if m["last"] else " ", text)


def _days(count: str, unit: str) -> int:
    return (int(count) if count.isdigit() else _COUNT[count.lower()]) * _DAYS[unit.lower()]


def _window(first: dt.date, last: dt.date) -> Window:
    return Window(f"{first.isoformat()}T00:00:00Z", f"{last.isoformat()}T23:59:59Z")


def held_factor(named: tuple[Window, ...], first: str, last: str) -> tuple[str, list]:
    """`` * <HELD_FACTOR where the span of times in the columns ``first`` to ``last`` meets a window of
    ``named``, else 1>`` for a score's SQL, and its parameters; ("", []) for no window."""
    terms, params = [], []
    for w in named:
        if w.month:  # that month of any year, within a span that may cross a new year
            terms.append(f"(CASE WHEN substr({first}, 1, 4) = substr({last}, 1, 4)"
                         f" THEN ? BETWEEN substr({first}, 6, 2) AND substr({last}, 6, 2)"
                         f" ELSE ? >= substr({first}, 6, 2) OR ? <= substr({last}, 6, 2) END)")
            params += [w.month] * 3
        else:
            terms.append(f"({last} >= ? AND {first} <= ?)")
            params += [w.start, w.end]
    return (f" * (CASE WHEN {' OR '.join(terms)} THEN {HELD_FACTOR!r} ELSE 1.0 END)", params) if terms else ("", [])
