"""Untrusted strings made safe to publish: length caps for pages and downloads, neutral spreadsheet cells, no
control characters.

Team, system and submission names, reasons and descriptions come from participants (submission.yaml, folder
names, their own error output). Pages escape them (jinja2 autoescape); here they are also shortened, so a 5 MB
team name cannot make a 5 MB page, CSV cells cannot start a spreadsheet formula, and control characters (ESC, BEL,
bidirectional overrides) are written as escapes (`\\x1b`) as on the terminal (`harness.text.printable`), so a
terminal that prints a page or a CSV file does not obey them. Line breaks stay (client-log tails are multi-line).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from harness.text import printable

NAME_MAX = 200  # team, system, submission id, track, reason, description: one line on a page
PAGE_TEXT_MAX = 10_000  # a hypothesis, a revision or a client-log tail on one page
ELLIPSIS = "…"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cap(text: str, limit: int = NAME_MAX) -> str:
    """`text` cut to `limit` characters, the last one an ellipsis when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def capped(value: Any, limit: int = NAME_MAX) -> Any:
    """Every string inside `value` (nested lists and objects too, keys included) capped to `limit`."""
    if isinstance(value, str):
        return cap(value, limit)
    if isinstance(value, dict):
        return {cap(str(k), limit): capped(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [capped(v, limit) for v in value]
    return value


def public_run(raw: dict[str, Any]) -> dict[str, Any]:
    """A summary.json run record as the site publishes it: its own strings capped, its scores as written."""
    return {k: (v if k == "scores" else capped(v)) for k, v in raw.items()}


def csv_text(value: str) -> str:
    """A text cell a spreadsheet will not run: a leading `= + - @`, tab or CR gets a `'` in front (OWASP); control
    characters are escaped (`page_text`)."""
    value = "'" + value if value.startswith(FORMULA_STARTS) else value
    return page_text(value)


def page_text(value: Any) -> Any:
    """A string with every control character but the line break escaped (`\\x1b`, `\\x07`, `\\u202e`); Markup
    stays Markup (an escape sequence of plain ASCII cannot make markup); anything else as it is. The jinja2
    environment's `finalize`: every value a page prints goes through it."""
    if isinstance(value, Markup):
        return Markup(_lines(str(value)))
    if isinstance(value, str):
        return _lines(value)
    return value


def _lines(text: str) -> str:
    return "\n".join(printable(line) for line in text.split("\n"))
