"""Resume keys and `run.json`: a run whose `run.json` holds the same content key (image digest + config + data
hashes) and a final status is not run again under `--resume`; an unfinished run starts over from its first
instance (2020-style clients iterate over every sentence and cannot skip the ones already logged)."""

from __future__ import annotations

from typing import Any

from harness import layout
from harness.batch import manifest
from harness.batch.results import read_json, write_json
from harness.config import Dataset, TaskConfig, Track
from harness.run import failures


def run_key(image_digest: str, config: TaskConfig, track: Track, dataset: Dataset) -> tuple[str, dict[str, str]]:
    """(content key, {path: sha256} of the dataset's files) of one run."""
    hashes = manifest.dataset_hashes(dataset, track.modality)
    return manifest.content_key(image_digest, config, track.name, dataset.name, hashes), hashes


def finished_run(run: layout.RunDir, key: str) -> dict[str, Any] | None:
    """The `run.json` of a finished run with this key, else None."""
    prev = read_json(run.run_meta)
    return prev if prev and prev.get("content_key") == key and prev.get("finished") else None


def mark_started(run: layout.RunDir, key: str) -> None:
    write_json(run.run_meta, {"content_key": key, "finished": False})


def mark_finished(run: layout.RunDir, key: str, outcome: failures.Outcome, entry: dict[str, Any]) -> None:
    write_json(run.run_meta, {"content_key": key, "finished": True, "status": outcome.status,
                              "reason": outcome.reason, "partial": outcome.partial, "manifest": entry})
