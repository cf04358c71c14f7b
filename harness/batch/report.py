"""What `harness evaluate` prints when a batch ends: one line per failed run, with the last lines of that run's
output (client.log), every participant string escaped."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.run import failures
from harness.run.tail import TAIL_WIDTH
from harness.text import printable

#: Prefix of a client.log line under its run.
TAIL_PREFIX = "    | "


def tail_lines(tail: Iterable[str] | None) -> list[str]:
    """The client.log lines of a run as printed under it (already escaped when recorded; escaped again here, since
    a summary.json may come from elsewhere)."""
    return [TAIL_PREFIX + printable(line)[:TAIL_WIDTH] for line in tail or ()]


def not_ranked_runs(records: Iterable[dict[str, Any]]) -> list[str]:
    """For every scored run that cannot be ranked (no result on its track's `regime_from` set): one line."""
    return [f"{printable(rec.get('submission'))} ({printable(rec.get('dataset'))}): {printable(rec['not_ranked'])}"
            for rec in records if isinstance(rec.get("not_ranked"), str)]


def failed_runs(records: Iterable[dict[str, Any]]) -> list[str]:
    """For every run that is not ok: `submission (dataset): status: reason`, then its client.log tail."""
    out: list[str] = []
    for rec in records:
        if rec.get("status") == failures.OK:
            continue
        reason = f": {printable(rec['reason'])}" if rec.get("reason") else ""
        out.append(f"{printable(rec.get('submission'))} ({printable(rec.get('dataset'))}): "
                   f"{printable(rec.get('status'))}{reason}")
        tail = rec.get("client_log_tail")
        if tail:
            out.append(f"{TAIL_PREFIX.rstrip()} last lines of client.log:")
            out += tail_lines(tail)
    return out
