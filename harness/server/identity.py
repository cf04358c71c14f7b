"""What a run folder is: track, dataset, data and config hashes, kept under `"identity"` in the folder's run.json.

`open_evaluation` records it when a run starts and, on `--resume`, refuses a folder that holds something else
(a dev run resumed as test, changed data, an edited config) with one line naming the folder and what differs.
Other keys of run.json (the batch's `content_key`, `finished`, ...) are kept (`harness.runmeta`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import layout
from harness.config import TaskConfig, Track, data_files
from harness.digest import sha256_file
from harness.errors import HarnessError
from harness.runmeta import read_run_meta, update_run_meta

IDENTITY_KEY = "identity"
SYSTEM_KEY = "system"  # the agent of a `harness run` (its file's hash, class and options); absent for a server


def run_identity(config: TaskConfig, track: Track, dataset_name: str,
                 system: dict[str, Any] | None = None) -> dict[str, Any]:
    """The identity of a run of `dataset_name` of `track` (every file it reads hashed), and of the system
    decoding it when the command knows it (`harness run`: `client.options.agent_identity`)."""
    ds = track.dataset(dataset_name)
    files = {f.label: f.path for f in data_files(ds, track.is_speech)}  # another paper, another offset: another run
    hashes = {k: sha256_file(p) if p.is_file() else "missing" for k, p in files.items()}
    identity = {"track": track.name, "dataset": dataset_name, "config": str(Path(config.path).resolve()),
                "config_sha256": config.sha256, "data_sha256": hashes}
    if system is not None:
        identity[SYSTEM_KEY] = system
    return identity


def identity_difference(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What makes the run `old` something other than `new` (one phrase), or None when they are the same run."""
    if (old.get("track"), old.get("dataset")) != (new["track"], new["dataset"]):
        return (f"it holds a run of {old.get('track')}/{old.get('dataset')}, not {new['track']}/{new['dataset']}")
    old_data = old.get("data_sha256") or {}
    for name, digest in new["data_sha256"].items():
        if old_data.get(name) != digest:
            return f"the {name} file of {new['dataset']} changed since the run began"
    if set(old_data) != set(new["data_sha256"]):
        return f"the reference sets of {new['dataset']} changed since the run began"
    if old.get("config_sha256") != new["config_sha256"]:
        return f"the task config changed since the run began (was {old.get('config')})"
    return system_difference(old.get(SYSTEM_KEY), new.get(SYSTEM_KEY))


def system_difference(old: Any, new: Any) -> str | None:
    """How the system a run began with differs from the one resuming it (`harness run`'s agent file, class and
    options), or None; a side that names no system (a run served by `harness server`) is not compared."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    if old.get("agent_sha256") != new.get("agent_sha256"):
        return "it was begun by another system (the agent file's content differs)"
    if old.get("agent_class") != new.get("agent_class"):
        return f"it was begun by another system (agent class {old.get('agent_class')}, not {new.get('agent_class')})"
    if old.get("agent_options") != new.get("agent_options"):
        changed = sorted(k for k in {*(old.get("agent_options") or {}), *(new.get("agent_options") or {})}
                         if (old.get("agent_options") or {}).get(k) != (new.get("agent_options") or {}).get(k))
        return f"it was begun by another system (agent options differ: {', '.join(changed)})"
    return None


def check_resume(run: layout.RunDir, identity: dict[str, Any]) -> None:
    """Refuse to resume `run` as `identity` when its run.json says it is another run; a folder without one passes."""
    old = read_run_meta(run).get(IDENTITY_KEY)
    if not isinstance(old, dict):
        return
    why = identity_difference(old, identity)
    if why:
        raise HarnessError(f"cannot resume {run.path}: {why}; use another --output, or --overwrite to start over")


def record_identity(run: layout.RunDir, identity: dict[str, Any]) -> None:
    """Write `identity` into run.json, keeping every other key."""
    update_run_meta(run, {IDENTITY_KEY: identity})
