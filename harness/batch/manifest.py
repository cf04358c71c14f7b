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
from harness.config import Dataset, TaskConfig, context_documents
from harness.digest import sha256_file
from harness.jsonio import write_json
from harness.run.hardware import hardware


def dataset_hashes(dataset: Dataset, modality: str) -> dict[str, str]:
    """{path: sha256} of a dataset's source, its reference sets, (speech) every listed audio file and its context
    list with every document it names."""
    files = [dataset.source, *dataset.references.values()]
    if dataset.context is not None:
        files += [dataset.context, *context_documents(dataset.context)]
    if modality == "speech":
        for line in dataset.source.read_text(encoding="utf-8").splitlines():
            if line.strip():
                files.append((dataset.source.parent / line.strip()).resolve())
    return {str(p): sha256_file(p) for p in files}


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
