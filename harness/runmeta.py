"""`run.json`, what a run folder is and how its run ended: the one reader and writer of that file.

Two stages keep keys in it: the evaluation server records the run's identity (`harness.server.identity`), the
batch its resume key and final status (`harness.batch.resume`). Every write reads the file, changes only its own
keys and replaces the file atomically, so neither stage drops the other's keys.
"""

from __future__ import annotations

import json
from typing import Any

from harness import layout
from harness.errors import HarnessError
from harness.jsonio import write_json

#: run.json's key for when the evaluation server first heard from the participant, on the server's clock:
#: {"at": epoch seconds, "by": "request" (its first request) | "probe" (an agent server's first good probe)}
FIRST_REQUEST = "first_request"


def read_run_meta(run: layout.RunDir) -> dict[str, Any]:
    """run.json of a run folder ({} when absent); a HarnessError naming the file when unreadable."""
    try:
        data = json.loads(run.run_meta.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{run.run_meta}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise HarnessError(f"{run.run_meta}: not a JSON object")
    return data


def update_run_meta(run: layout.RunDir, changes: dict[str, Any], remove: tuple[str, ...] = ()) -> dict[str, Any]:
    """Set `changes` and drop `remove` in run.json, keeping every other key; the new content."""
    meta = {k: v for k, v in read_run_meta(run).items() if k not in remove}
    meta.update(changes)
    write_json(run.run_meta, meta, sort_keys=True, default=str)
    return meta


def note_harness_stop(run: layout.RunDir, reason: str) -> None:
    """Say (in the run folder) that the harness is about to kill the participant, and why ("total timeout
    (3600 s)"): what the participant's server fails to answer from then on is the harness's doing."""
    run.harness_stop.write_text(reason + "\n", encoding="utf-8")


def harness_stop(run: layout.RunDir) -> str | None:
    """The harness's reason for killing the participant, or None while it has not decided to."""
    try:
        return run.harness_stop.read_text(encoding="utf-8").strip() or "stopped by the harness"
    except FileNotFoundError:
        return None
    except OSError:
        return "stopped by the harness"


def clear_harness_stop(run: layout.RunDir) -> None:
    """Remove the note (before a run starts, and once it is over)."""
    run.harness_stop.unlink(missing_ok=True)
