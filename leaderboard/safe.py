"""Untrusted strings made safe to publish: length caps for pages and downloads, neutral spreadsheet cells.

Team, system and submission names, reasons and descriptions come from participants (submission.yaml, folder
names, their own error output). Pages escape them (jinja2 autoescape); here they are also shortened, so a 5 MB
team name cannot make a 5 MB page, and CSV cells cannot start a spreadsheet formula.
"""

from __future__ import annotations

from typing import Any

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
    """A text cell a spreadsheet will not run: a leading `= + - @`, tab or CR gets a `'` in front (OWASP)."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value
