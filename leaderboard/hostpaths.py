"""The organizer's host paths a published site must not name.

Results hold absolute paths of the machine that made them: a run's log (`scores.json`'s `info.source`), the task
config and the data mounts a manifest records, the audio files a speech run's records read, paths in error reasons
and client-log tails. A site is published, so every page and download goes through `HostPaths` on its way out:
each known folder of this machine (the results folder, the config's folder, the folders of every data file the
config names, recordings included, the folders a manifest names that exist here, the home and working folders)
is cut from every path that starts with it (`RESULTS/sub/test/instances.log` is shown as `sub/test/instances.log`,
a recording as its file name), and a folder named alone is shown by its last name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from markupsafe import escape

from harness.config import TaskConfig, data_files

#: characters that continue a path or a name: a root matches only where none of them is next to it
_NAME = r"\w.~\-"
#: manifest keys whose string value is a path of the organizer's machine, wherever it is now
_HOST_KEYS = ("config",)


class HostPaths:
    """A set of host folders (roots) and the rewriting that cuts them out of published text."""

    def __init__(self, roots: Iterable[str | Path] = ()) -> None:
        self.roots: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(*roots)

    def add(self, *paths: str | Path, min_parts: int = 1) -> None:
        """Each absolute path of `paths` (as written and resolved) as a root; `/`, relative paths and paths of
        fewer than `min_parts` names are left out."""
        for path in paths:
            p = Path(path)
            if not p.is_absolute():
                continue
            for form in {os.path.normpath(p), os.path.normpath(p.resolve())}:
                if len(Path(form).parts) - 1 >= min_parts and form not in self.roots:
                    self.roots.add(form)
                    self._pattern = None

    def pattern(self) -> re.Pattern[str] | None:
        """One expression matching any root (plain or HTML-escaped, longest first) where a path starts, with the
        `/` after it when there is one; None without roots."""
        if self._pattern is None and self.roots:
            forms = {form for root in self.roots for form in (root, str(escape(root)))}
            alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
            start = rf"(?:(?<![{_NAME}/])|(?<=file://))"  # where a path starts, or a file:// address's path
            self._pattern = re.compile(rf"{start}({alternatives})(?:(/)|(?![{_NAME}/]))")
        return self._pattern

    def text(self, value: str) -> str:
        """`value` with every root cut out: `ROOT/rest` → `rest`, `ROOT` alone → its last name."""
        pattern = self.pattern()
        if pattern is None:
            return value
        return pattern.sub(lambda m: "" if m.group(2) else m.group(1).rstrip("/").rpartition("/")[2], value)

    def value(self, data: Any) -> Any:
        """`data` (JSON values: objects, lists, strings, numbers) with `text` applied to every string, keys too."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.text(str(k)): self.value(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(v) for v in data]
        return data


def config_roots(config: TaskConfig) -> list[Path]:
    """The config's folder and the folder of every file its datasets name (speech recordings included)."""
    roots = [config.path.absolute().parent]
    for track in config.tracks:
        for ds in track.datasets.values():
            roots += [f.path.absolute().parent for f in data_files(ds, track.modality == "speech")]
    return roots


def manifest_roots(manifest: Any) -> list[Path]:
    """The host folders a manifest names: the folder of its `config`, and every absolute path in it that exists
    on this machine (a data mount's source), itself when a folder, else its folder."""
    found: list[Path] = []
    stack = [manifest]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found += [Path(v).parent for k, v in item.items()
                      if k in _HOST_KEYS and isinstance(v, str) and Path(v).is_absolute()]
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str) and item.startswith("/") and "\n" not in item and len(item) < 4096:
            p = Path(item)
            if p.exists():
                found.append(p if p.is_dir() else p.parent)
    return found


def audio_folders(records: Iterable[dict[str, Any]]) -> list[Path]:
    """The folders of the audio files speech records read (their `source`: a list of paths)."""
    folders = {Path(str(p)).parent for rec in records if isinstance(rec.get("source"), list)
               for p in rec["source"] if str(p).startswith("/")}
    return sorted(folders)


def _own_folders() -> list[Path]:
    """This user's home folder and the working folder, those that can be told."""
    found = []
    for where in (Path.home, Path.cwd):
        try:
            found.append(where())
        except (OSError, RuntimeError):  # no home to be found, or a working folder that was removed
            continue
    return found


def site_host_paths(results_root: Path, config: TaskConfig | None, manifests: Iterable[Any]) -> HostPaths:
    """The host folders a site of `results_root` must not name (`HostPaths`)."""
    hosts = HostPaths([results_root.absolute(), *_own_folders()])
    if config is not None:
        hosts.add(*config_roots(config))
    for manifest in manifests:
        hosts.add(*manifest_roots(manifest), min_parts=2)
    return hosts
