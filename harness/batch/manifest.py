"""`manifest.json` of a submission: what exactly was run, on what, with which isolation, and how long it took.

Recorded: image digest, harness version and git commit, config hash, dataset file hashes, sacrebleu signature,
the isolation flags as read back from `docker inspect` (per run), hardware (CPU, memory, GPUs and driver) and
timings (build, start-up, run, tear-down).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any

from harness import __version__
from harness.config import Dataset, TaskConfig, data_files
from harness.digest import sha256_file
from harness.jsonio import write_json
from harness.run.hardware import hardware


def dataset_hashes(dataset: Dataset, modality: str) -> dict[str, str]:
    """{path: sha256} of every file a run of the dataset reads (`harness.config.data_files`: source, reference sets,
    segmentation, transcripts, source text, context list and documents, and for speech every listed recording); a
    file that is missing hashes as `missing` (the run itself reports it)."""
    files = data_files(dataset, modality == "speech")
    return {str(f.path): sha256_file(f.path) if f.path.is_file() else "missing" for f in files}


@functools.lru_cache(maxsize=1)
def harness_commit() -> str | None:
    """The git commit of the harness source checkout (with `-dirty` if it has changes), or None."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or not shutil.which("git"):
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "harness"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head


def sacrebleu_signature(tokenizer: str, nrefs: int = 1) -> str:
    """sacrebleu's BLEU signature for a track's tokenizer (the scores.json carries the per-metric ones)."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize=tokenizer)
    bleu.corpus_score(["a"], [["a"]] * nrefs)  # the signature needs the number of references
    return bleu.get_signature().format()


def write_manifest(path: Path, manifest: dict[str, Any]) -> Path:
    """Write (atomically) `manifest.json`."""
    return write_json(path, manifest, default=str, mkdir=True)


def base_manifest(submission: str, config: TaskConfig) -> dict[str, Any]:
    """The submission-independent part of a manifest."""
    return {
        "submission": submission,
        "harness_version": __version__,
        "harness_commit": harness_commit(),
        "config": str(config.path),
        "config_sha256": config.sha256,
        "hardware": hardware(),
        "runs": {},
    }
