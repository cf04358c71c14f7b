"""The fetch cache: one Docker volume per (image digest, fetch command), and the harness's record of each.

A volume `harness-fetch-<key>` (labels `harness.fetch=1`, the image digest and the command) holds what a
submission's `fetch:` wrote. Its record, `$HARNESS_CACHE/fetch/<volume>.json`, is written only once the fetch
ended well (bytes, seconds, when, the allow-list it ran under); a volume without a record is an interrupted fetch
and is fetched again. `harness fetch-cache list|prune` reads and removes both.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cache import cache_root
from harness.jsonio import read_json_or_none, write_json

LABEL = "harness.fetch"
VOLUME_PREFIX = "harness-fetch-"


def cache_key(image_digest: str, command: tuple[str, ...] | list[str]) -> str:
    """The cache key: sha256 of the image digest and the fetch command's argv."""
    text = json.dumps([image_digest, list(command)], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def volume_name(key: str) -> str:
    return f"{VOLUME_PREFIX}{key[:24]}"


def volume_labels(key: str, image_digest: str, image_id: str, command: tuple[str, ...] | list[str]
                  ) -> dict[str, str]:
    return {LABEL: "1", f"{LABEL}.key": key, f"{LABEL}.image": image_digest, f"{LABEL}.image_id": image_id,
            f"{LABEL}.command": json.dumps(list(command))[:2000]}


def _records() -> Path:
    return cache_root() / "fetch"


def record_path(volume: str) -> Path:
    return _records() / f"{volume}.json"


def read_record(volume: str, key: str) -> dict[str, Any] | None:
    """The record of a finished fetch into `volume` with this `key`, or None."""
    path = record_path(volume)
    rec = read_json_or_none(path) if path.is_file() else None
    return rec if isinstance(rec, dict) and rec.get("key") == key else None


def lock_folder() -> Path:
    """Where the fetches' lock files are (created if needed): beside the records."""
    folder = _records()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_record(volume: str, record: dict[str, Any]) -> None:
    lock_folder()
    write_json(record_path(volume), {**record, "volume": volume, "finished_at": round(time.time(), 3)})


def forget(api: Any, volume: str) -> None:
    """Remove a volume (if present) and its record; the engine's refusal (in use) propagates."""
    import docker.errors

    record_path(volume).unlink(missing_ok=True)
    try:
        api.remove_volume(volume, force=True)
    except docker.errors.NotFound:
        pass


@dataclass(frozen=True)
class Entry:
    """One cache volume as `harness fetch-cache list` shows it."""

    volume: str
    image: str
    image_id: str
    command: str
    complete: bool
    bytes: int | None
    fetch_s: float | None
    finished_at: float | None


def entries(api: Any) -> list[Entry]:
    """Every fetch volume on this engine, with its record when the fetch finished."""
    volumes = (api.volumes(filters={"label": f"{LABEL}=1"}) or {}).get("Volumes") or []
    out = []
    for v in sorted(volumes, key=lambda v: v["Name"]):
        labels = v.get("Labels") or {}
        rec = read_record(v["Name"], labels.get(f"{LABEL}.key", ""))
        out.append(Entry(volume=v["Name"], image=labels.get(f"{LABEL}.image", ""),
                         image_id=labels.get(f"{LABEL}.image_id", ""),
                         command=labels.get(f"{LABEL}.command", ""), complete=rec is not None,
                         bytes=rec.get("bytes") if rec else None, fetch_s=rec.get("fetch_s") if rec else None,
                         finished_at=rec.get("finished_at") if rec else None))
    return out


def prune(api: Any, names: list[str], everything: bool) -> tuple[list[str], list[str]]:
    """Remove the named volumes, or all (`everything`), or else those of an interrupted fetch and those whose
    image is no longer on this engine. Returns (removed, kept with why)."""
    import docker.errors

    removed, kept = [], []
    for e in entries(api):
        if names and e.volume not in names:
            continue
        if not (names or everything or not e.complete or not _image_present(api, e.image_id)):
            continue
        try:
            forget(api, e.volume)
            removed.append(e.volume)
        except docker.errors.APIError as exc:
            kept.append(f"{e.volume}: {str(getattr(exc, 'explanation', None) or exc).splitlines()[0]}")
    known = {e.volume for e in entries(api)} | set(removed)
    kept += [f"{n}: no such fetch volume" for n in names if n not in known]
    return removed, kept


def _image_present(api: Any, image_id: str) -> bool:
    import docker.errors

    try:
        api.inspect_image(image_id)
        return True
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError:
        return True  # cannot tell: keep it
