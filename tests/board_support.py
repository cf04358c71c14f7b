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
                regime_from: str | None = None, name: str = "task.yaml") -> Path:
    """FOLDER/NAME: one text track over data/udhr (dev and test), primary BLEU and AL, `regimes` (default:
    low ≤ 3, high 3–6 words of AL), `regime_from` and, on the test set, `domains` as given (None: none)."""
    datasets: dict[str, Any] = {
        split: {"source": str(UDHR / f"{split}.en"), "references": {"orig": str(UDHR / f"{split}.es")}}
        for split in ("dev", "test")}
    if domains is not None:
        datasets["test"]["domains"] = domains
    doc = {"task": "board-test", "tracks": [{
        "name": TRACK, "modality": "text", "source_lang": "en", "target_lang": "es", "latency_unit": "word",
        "quality": ["BLEU", "chrF"], "latency": ["AL", "LAAL"], "primary": {"quality": "BLEU", "latency": "AL"},
        "regimes": regimes if regimes is not None else [{"name": "low", "max_latency": 3},
                                                        {"name": "high", "min_latency": 3, "max_latency": 6}],
        "datasets": datasets}]}
    if regime_from is not None:
        doc["tracks"][0]["regime_from"] = regime_from
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def text_log(dataset: str, path: Path, k: int, drop_every: int = 0, jitter: int = 0,
             drop_lines: tuple[int, int] | None = None) -> Path:
    """A SimulEval-style instances.log of a wait-k system on data/udhr/DATASET whose output is the reference with
    every `drop_every`-th word left out (on the 1-based lines `drop_lines` only, when given); `jitter` > 0 makes k
    alternate between k and k + jitter by line (a wider latency interval)."""
    sources = (UDHR / f"{dataset}.en").read_text(encoding="utf-8").splitlines()
    refs = (UDHR / f"{dataset}.es").read_text(encoding="utf-8").splitlines()
    with path.open("w", encoding="utf-8") as fh:
        for i, (src, ref) in enumerate(zip(sources, refs, strict=True)):
            n = len(src.split())
            drop = drop_every if drop_lines is None or drop_lines[0] <= i + 1 <= drop_lines[1] else 0
            words = [w for j, w in enumerate(ref.split(), 1) if not drop or j % drop]
            lag = k + (jitter if jitter and i % 2 else 0)
            fh.write(json.dumps({"index": i, "prediction": " ".join(words),
                                 "delays": [min(lag + j, n) for j in range(len(words))],
                                 "elapsed": [0.0] * len(words), "prediction_length": len(words),
                                 "reference": "not scored", "source": src, "source_length": n},
                                ensure_ascii=False) + "\n")
    return path


def text_submission(folder: Path, *, team: str, system: str = "sys", k: int = 3, drop_every: int = 0,
                    datasets: tuple[str, ...] = ("test",), jitter: int = 0, extra: str = "",
                    drop_lines: tuple[int, int] | None = None, dev_k: int | None = None) -> Path:
    """A log submission folder on the text track with a wait-k log per dataset (`dev_k`: another k on dev)."""
    folder.mkdir(parents=True, exist_ok=True)
    for ds in datasets:
        lag = dev_k if ds == "dev" and dev_k is not None else k
        text_log(ds, folder / f"{ds}.log", lag, drop_every, jitter, drop_lines)
    logs = ", ".join(f"{ds}: {ds}.log" for ds in datasets)
    (folder / "submission.yaml").write_text(
        f"team: {team}\nsystem: {system}\ntrack: {TRACK}\nlogs: {{{logs}}}\nhardware: \"1x CPU\"\n{extra}",
        encoding="utf-8")
    return folder
