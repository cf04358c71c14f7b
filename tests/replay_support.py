"""Long-form runs for the replay and caption tests (a helper, not a test module): `harness run` on the bundled talks
(configs/longform.yaml) with the oracle of tests/agents (an incremental system) and with a re-translating system
written here, and a results folder made of such runs as `harness evaluate` lays it out (the run folders as `harness
run` wrote them; summary.json and the results stage by the batch's own `finish_results`)."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import __version__, layout
from harness.batch.results import finish_results
from harness.config import load_config
from harness.runlog import read_records

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "longform.yaml"
DATA = ROOT / "data" / "longform"
ORACLE = ROOT / "tests" / "agents" / "longform_oracle.py"
TRACK = "longform-en-es"
DRAFT = "borrador"  # the word each draft ends with; the next revision replaces it

REVISING = f'''
"""Re-translates the talk it knows: at the middle of each reference sentence a draft (the first half of the
sentence and a wrong word), revised at the sentence's end into the whole sentence; computing 10 ms per revision."""
import time

import yaml

from harness.client.agent import ReadAction, ReviseAction, SpeechAgent, WriteAction


class Revising(SpeechAgent):
    def __init__(self, args=None):
        super().__init__(args)
        seg = yaml.safe_load(open(self.args.segmentation, encoding="utf-8"))
        refs = open(self.args.references, encoding="utf-8").read().splitlines()
        self.plan, done, last = [], [], 0.0
        for s, ref in zip(seg, refs, strict=True):
            words = ref.split()
            mid = max(last, (s["offset"] + s["duration"] / 2) * 1000)
            end = max(mid, (s["offset"] + s["duration"]) * 1000 + 300)
            self.plan.append((mid, " ".join(done + words[: max(1, len(words) // 2)] + [{DRAFT!r}])))
            done = done + words
            self.plan.append((end, " ".join(done)))
            last = end

    @staticmethod
    def add_args(parser):
        parser.add_argument("--segmentation", required=True)
        parser.add_argument("--references", required=True)

    def policy(self, states):
        ex = states.extra
        ex["seen"] = ex.get("seen", 0) + len(states.source)
        states.source.clear()
        now = ex["seen"] * 1000.0 / (states.source_sample_rate or 16000)
        k = ex.get("next", 0)
        if k < len(self.plan) and (self.plan[k][0] <= now or states.source_finished):
            ex["next"] = k + 1
            time.sleep(0.01)
            return ReviseAction(self.plan[k][1], finished=states.source_finished and k + 1 == len(self.plan))
        if states.source_finished:
            return WriteAction("", finished=True)
        return ReadAction()
'''


def harness_run(out: Path, dataset: str, agent: Path, *extra: str) -> Path:
    """`harness run` of `agent` on the bundled talk(s) of `dataset` (dev: 7 minutes, test: 22 minutes)."""
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(CONFIG), "--track", TRACK, "--dataset",
                    dataset, "--agent", str(agent), "--output", str(out), "--overwrite",
                    "--segmentation", str(DATA / f"{dataset}.yaml"), "--references", str(DATA / f"{dataset}.es"),
                    *extra], check=True, capture_output=True, timeout=600)
    return out


def revising_agent(root: Path) -> Path:
    path = root / "revising.py"
    path.write_text(REVISING, encoding="utf-8")
    return path


def records(run: Path) -> list[dict[str, Any]]:
    return read_records(layout.RunDir(run).instances_log)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def results_of(root: Path, runs: list[tuple[str, str, Path]], config: Path = CONFIG, track: str = TRACK) -> Path:
    """A results folder of `runs` ((submission, dataset, run folder)): each run folder copied where `harness
    evaluate` writes it, a manifest per submission, then summary.json and the results stage (`finish_results`)."""
    results = root / "results"
    entries: list[dict[str, Any]] = []
    for sub, dataset, run in runs:
        target = layout.ResultsDir(results).run(sub, dataset).path
        shutil.copytree(run, target)
        manifest = {"harness_version": __version__, "config": str(config),
                    "config_sha256": sha256(config), "image_digest": None,
                    "isolation": {"mode": "local process (test, no container)"},
                    "hardware": {"machine": platform.machine(), "python": platform.python_version()}}
        layout.ResultsDir(results).submission(sub).manifest.write_text(json.dumps(manifest), encoding="utf-8")
        scores = json.loads((target / "scores.json").read_text(encoding="utf-8"))
        entries.append({"submission": sub, "team": f"Team {sub}", "system": sub, "track": track, "kind": "primary",
                        "baseline": False, "dataset": dataset, "status": "ok", "reason": None, "partial": False,
                        "scores": scores})
    finish_results(load_config(config, check_files=False), results, entries)
    return results
