"""Resume keys and `run.json`: a run whose `run.json` holds the same content key (`content_key`: everything that
can change its result) and a final status is not run again under `--resume`; an unfinished run starts over from its
first instance (2020-style clients iterate over every sentence and cannot skip the ones already logged)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from harness import __version__, layout
from harness.batch import manifest
from harness.config import Dataset, TaskConfig, Track
from harness.errors import HarnessError
from harness.run import failures
from harness.runmeta import read_run_meta, update_run_meta

#: keys of run.json that describe how a run ended (cleared when it starts again)
_OUTCOME_KEYS = ("status", "reason", "partial", "manifest", "finished_at")


def content_key(image_digest: str, config: TaskConfig, track: str, dataset: str, data_hashes: dict[str, str], *,
                command: str | Sequence[str] = "", server_image_id: str = "") -> str:
    """The resume key of a run: everything that can change its result. Same submission image and `command`, same
    server image and harness version, same config (its limits included) and data ⇒ same key, whatever the
    folder is called."""
    payload = json.dumps({"image": image_digest, "command": command if isinstance(command, str) else list(command),
                          "server_image": server_image_id, "harness_version": __version__,
                          "config": config.sha256, "limits": dataclasses.asdict(config.limits), "track": track,
                          "dataset": dataset, "data": sorted(data_hashes.values())}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def run_key(image_digest: str, config: TaskConfig, track: Track, dataset: Dataset, *,
            command: str | Sequence[str] = "", server_image_id: str = "") -> tuple[str, dict[str, str]]:
    """(content key, {path: sha256} of the dataset's files) of one run."""
    hashes = manifest.dataset_hashes(dataset, track.modality)
    key = content_key(image_digest, config, track.name, dataset.name, hashes, command=command,
                      server_image_id=server_image_id)
    return key, hashes


def finished_run(run: layout.RunDir, key: str) -> dict[str, Any] | None:
    """The `run.json` of a finished run with this key, else None."""
    try:
        prev = read_run_meta(run)
    except HarnessError:
        return None
    return prev if prev and prev.get("content_key") == key and prev.get("finished") else None


def mark_started(run: layout.RunDir, key: str) -> None:
    update_run_meta(run, {"content_key": key, "finished": False}, remove=_OUTCOME_KEYS)


def mark_finished(run: layout.RunDir, key: str, outcome: failures.Outcome, entry: dict[str, Any]) -> None:
    from harness.batch.history import now

    update_run_meta(run, {"content_key": key, "finished": True, "finished_at": now(), "status": outcome.status,
                          "reason": outcome.reason, "partial": outcome.partial, "manifest": entry})
