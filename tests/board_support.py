"""Text-track campaigns for the board tests (issue 35: domains, rank clusters, regime flags, resubmissions):
a task config over the bundled UDHR test split (en→es, 20 lines) whose lines carry domains, and log submissions
of wait-k systems whose output is the reference with every n-th word left out (a lower quality), scored by the
real `harness evaluate` without Docker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
UDHR = ROOT / "data" / "udhr"
NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
TRACK = "text-en-es"


def harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, in a fresh process (no Docker engine reachable)."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **NO_DOCKER, **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, env=full,
                          timeout=900, cwd=ROOT)


def domain_file(path: Path, ranges: dict[str, str]) -> Path:
    """A domain file of a text dataset: `{"1-8": "news", ...}` (source line ranges → domain)."""
    path.write_text("# line(s)  domain\n" + "".join(f"{k}\t{v}\n" for k, v in ranges.items()), encoding="utf-8")
    return path


def text_config(folder: Path, domains: Any = None, regimes: list[dict[str, Any]] | None = None,
                bootstrap_sets: tuple[str, ...] = ("dev", "test")) -> Path:
    """FOLDER/task.yaml: one text track over data/udhr (dev and test), primary BLEU and AL, `regimes` (default:
    low ≤ 3, high ≤ 6 words of AL) and, on the test set, `domains` as given (None: none)."""
    datasets: dict[str, Any] = {
        name: {"source": str(UDHR / f"{name}.en"), "references": {"orig": str(UDHR / f"{name}.es")}}
        for name in bootstrap_sets}
    if domains is not None:
        datasets["test"]["domains"] = domains
    doc = {"task": "board-test", "tracks": [{
        "name": TRACK, "modality": "text", "source_lang": "en", "target_lang": "es", "latency_unit": "word",
        "quality": ["BLEU", "chrF"], "latency": ["AL", "LAAL"], "primary": {"quality": "BLEU", "latency": "AL"},
        "regimes": regimes if regimes is not None else [{"name": "low", "max_latency": 3},
                                                        {"name": "high", "min_latency": 3, "max_latency": 6}],
        "datasets": datasets}]}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def text_log(dataset: str, path: Path, k: int, drop_every: int = 0, jitter: int = 0) -> Path:
    """A SimulEval-style instances.log of a wait-k system on data/udhr/DATASET whose output is the reference with
    every `drop_every`-th word left out; `jitter` > 0 makes k alternate between k and k + jitter by line (a wider
    latency interval)."""
    sources = (UDHR / f"{dataset}.en").read_text(encoding="utf-8").splitlines()
    refs = (UDHR / f"{dataset}.es").read_text(encoding="utf-8").splitlines()
    with path.open("w", encoding="utf-8") as fh:
        for i, (src, ref) in enumerate(zip(sources, refs, strict=True)):
            n = len(src.split())
            words = [w for j, w in enumerate(ref.split(), 1) if not drop_every or j % drop_every]
            lag = k + (jitter if jitter and i % 2 else 0)
            fh.write(json.dumps({"index": i, "prediction": " ".join(words),
                                 "delays": [min(lag + j, n) for j in range(len(words))],
                                 "elapsed": [0.0] * len(words), "prediction_length": len(words),
                                 "reference": "not scored", "source": src, "source_length": n},
                                ensure_ascii=False) + "\n")
    return path


def text_submission(folder: Path, *, team: str, system: str = "sys", k: int = 3, drop_every: int = 0,
                    datasets: tuple[str, ...] = ("test",), jitter: int = 0, extra: str = "") -> Path:
    """A log submission folder on the text track with a wait-k log per dataset."""
    folder.mkdir(parents=True, exist_ok=True)
    for ds in datasets:
        text_log(ds, folder / f"{ds}.log", k, drop_every, jitter)
    logs = ", ".join(f"{ds}: {ds}.log" for ds in datasets)
    (folder / "submission.yaml").write_text(
        f"team: {team}\nsystem: {system}\ntrack: {TRACK}\nlogs: {{{logs}}}\nhardware: \"1x CPU\"\n{extra}",
        encoding="utf-8")
    return folder
