"""What a run page and the index show of a run's hardware and compute, from its submission's manifest.json.

Measured (a run the harness timed): the run entry's `hardware` (else the manifest's), `startup` and `compute`
(harness/run/compute.py). Declared (a log submission: `hardware:` of submission.yaml, in the manifest as a
string `hardware`, `hardware.declared`, or `submission_yaml.hardware`): shown as the team declared it, marked so,
and preferred over the scoring host's for a manifest of kind `log`. The fetch step's bytes and seconds come from
the manifest's `fetch` block (harness/run/fetch): before any data, never part of a latency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leaderboard.safe import cap

UNSET = "–"


@dataclass
class ComputeView:
    """One run's hardware and compute, ready to show (None: not known)."""

    hardware: str | None = None  # one line (the declared text, or the measured host's summary)
    gpu: str | None = None  # measured GPUs in one line (`none` without any)
    cores: int | None = None  # measured CPU cores
    declared: bool = False  # the team's declaration, not measured by the harness
    startup_s: float | None = None
    startup_by: str | None = None  # request | probe
    participant_s: float | None = None
    source: float | None = None
    source_unit: str | None = None  # s (speech) | word (text)
    rtf: float | None = None
    fetch_bytes: float | None = None  # what the submission's `fetch:` step downloaded (its volume's bytes)
    fetch_s: float | None = None  # how long that took (the first fetch's, when the volume was cached)
    fetch_cached: bool = False

    @property
    def short_hardware(self) -> str:
        """The index cell, one short line (the whole text is its tooltip): the GPUs if any, else the CPU cores
        (`CPU, 16 cores`); declared text as it is (the cell cuts it with an ellipsis)."""
        if self.declared or not self.hardware:
            return self.hardware or UNSET
        if self.gpu and self.gpu != "none":
            return self.gpu
        return f"CPU, {self.cores} cores" if self.cores else "CPU"

    @property
    def rtf_unit(self) -> str:
        """`` for speech (a factor), ` s/word` for text (compute seconds per source word)."""
        return " s/word" if self.source_unit == "word" else ""


def _text(value: Any) -> str | None:
    return cap(value.strip()) if isinstance(value, str) and value.strip() else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def declared_hardware(manifest: dict[str, Any]) -> str | None:
    """The hardware a submission declared (a log submission's `hardware:`), or None."""
    hw = manifest.get("hardware")
    yaml_meta = manifest.get("submission_yaml")
    for value in (hw, hw.get("declared") if isinstance(hw, dict) else None,
                  yaml_meta.get("hardware") if isinstance(yaml_meta, dict) else None):
        if _text(value):
            return _text(value)
    return None


def _measured_summary(hw: dict[str, Any]) -> str | None:
    """A measured host in one line (older manifests have no `summary`: made from its fields)."""
    if _text(hw.get("summary")):
        return _text(hw.get("summary"))
    if not hw.get("cpu"):
        return None
    mem = _number(hw.get("memory_bytes"))
    found = hw.get("gpus")
    gpus: list[Any] = found if isinstance(found, list) else []
    names = ", ".join(str(g.get("name")) for g in gpus if isinstance(g, dict)) or "none"
    return cap(f"{hw['cpu']}, {hw.get('cpu_count')} cores" + (f", {mem / 2**30:.1f} GiB" if mem else "")
               + f"; GPU: {names}")


def compute_view(manifest: dict[str, Any], dataset: str) -> ComputeView:
    """The hardware and compute of the run of `dataset` in a submission's manifest."""
    runs = manifest.get("runs")
    found = runs.get(dataset) if isinstance(runs, dict) else None
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    view = ComputeView()
    measured = next((h for h in (entry.get("hardware"), manifest.get("hardware"))
                     if isinstance(h, dict) and h.get("cpu")), None)
    declared = declared_hardware(manifest)
    if declared and (measured is None or manifest.get("kind") == "log" or entry.get("kind") == "log"):
        view.hardware, view.declared = declared, True
    elif measured is not None:
        view.hardware, view.gpu = _measured_summary(measured), _text(measured.get("gpu"))
        cores = measured.get("cpu_count")
        view.cores = cores if isinstance(cores, int) and not isinstance(cores, bool) else None
    start = entry.get("startup")
    if isinstance(start, dict):
        view.startup_s, view.startup_by = _number(start.get("seconds")), _text(start.get("by"))
    comp = entry.get("compute")
    if isinstance(comp, dict):
        view.participant_s, view.source = _number(comp.get("participant_s")), _number(comp.get("source"))
        view.source_unit, view.rtf = _text(comp.get("source_unit")), _number(comp.get("rtf"))
    fetched = manifest.get("fetch")
    if isinstance(fetched, dict):
        view.fetch_bytes, view.fetch_s = _number(fetched.get("bytes")), _number(fetched.get("fetch_s"))
        view.fetch_cached = fetched.get("cached") is True
    return view
