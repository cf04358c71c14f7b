"""Every artifact's name and place: the one module that knows how a run folder and a results folder look.

```
RESULTS/summary.json                          every submission × dataset × metric, with status
RESULTS/significance/<track>/<dataset>.json   paired bootstrap of every run against the best one (scoring stage)
RESULTS/<submission>/manifest.json            image digest, versions, hashes, isolation flags, hardware, timings
RESULTS/<submission>/build.log
RESULTS/<submission>/fetch.log                the output of its `fetch:` command (secrets masked)
RESULTS/<submission>/fetch-proxy.log          the fetch proxy's events: hosts allowed and refused
RESULTS/<submission>/<dataset>/               one run folder (below)

RUN/instances.log          one JSON line per finished instance (harness.runlog owns reading and writing it)
RUN/scores.json            corpus scores with signatures and intervals
RUN/instance_scores.jsonl  per-instance latency metrics, one line per instance (scoring stage)
RUN/run.json               what the run is (track, dataset, hashes, resume key) and how it ended
RUN/client.log, RUN/server.log
RUN/prepare.log            the output of the submission's `prepare:` command (when it has one)
```

Other modules ask here for paths and never spell a file name themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

INSTANCES_LOG = "instances.log"
SCORES = "scores.json"
INSTANCE_SCORES = "instance_scores.jsonl"
RUN_META = "run.json"
CLIENT_LOG = "client.log"
SERVER_LOG = "server.log"
PREPARE_LOG = "prepare.log"
DRIVER_REPORT = "driver.json"
START_GATE = ".start-gate"
STOP_NOTE = ".harness-stop"
MANIFEST = "manifest.json"
BUILD_LOG = "build.log"
FETCH_LOG = "fetch.log"
FETCH_PROXY_LOG = "fetch-proxy.log"
#: a submission's earlier versions: `versions.json` (their list) and `versions/<N>-<dataset>/` (their run folders)
VERSIONS = "versions.json"
VERSIONS_DIR = "versions"
SUMMARY = "summary.json"
SIGNIFICANCE_DIR = "significance"
ANTICIPATION_DIR = "anticipation"
HUMAN_DIR = "human"


@dataclass(frozen=True)
class RunDir:
    """The folder of one run (one submission × one dataset, or one `harness run`/`harness server`)."""

    path: Path

    @property
    def instances_log(self) -> Path:
        return self.path / INSTANCES_LOG

    @property
    def scores(self) -> Path:
        return self.path / SCORES

    @property
    def instance_scores(self) -> Path:
        return self.path / INSTANCE_SCORES

    @property
    def run_meta(self) -> Path:
        return self.path / RUN_META

    @property
    def client_log(self) -> Path:
        return self.path / CLIENT_LOG

    @property
    def server_log(self) -> Path:
        return self.path / SERVER_LOG

    @property
    def prepare_log(self) -> Path:
        """The output of the submission's `prepare:` command."""
        return self.path / PREPARE_LOG

    @property
    def start_gate(self) -> Path:
        """Exists while a participant started early may run (`run/gate.py`); removed when the run ends."""
        return self.path / START_GATE

    @property
    def harness_stop(self) -> Path:
        """Written by the harness (its reason inside) just before it kills the participant on a total or idle
        timeout, so that the driver marks the instance it cuts as cut by the harness (`runmeta.harness_stop`)."""
        return self.path / STOP_NOTE

    @property
    def driver_report(self) -> Path:
        """What a driver (agent-server interfaces) says about the participant: ready or not, gone or not."""
        return self.path / DRIVER_REPORT


@dataclass(frozen=True)
class SubmissionDir:
    """`RESULTS/<submission>/`: the manifest, the build log and one run folder per dataset."""

    path: Path

    @property
    def manifest(self) -> Path:
        return self.path / MANIFEST

    @property
    def build_log(self) -> Path:
        return self.path / BUILD_LOG

    @property
    def fetch_log(self) -> Path:
        """The output of the submission's `fetch:` command (secrets masked)."""
        return self.path / FETCH_LOG

    @property
    def fetch_proxy_log(self) -> Path:
        """The fetch proxy's events, one JSON line each (hosts allowed and refused; never a path or header)."""
        return self.path / FETCH_PROXY_LOG

    def run(self, dataset: str) -> RunDir:
        return RunDir(self.path / dataset)

    @property
    def versions(self) -> Path:
        """The list of the submission's earlier versions (`harness.batch.history`)."""
        return self.path / VERSIONS

    def version_run(self, number: int, dataset: str) -> RunDir:
        """Where version `number`'s run of `dataset` was kept when a newer version replaced it."""
        return RunDir(self.path / VERSIONS_DIR / f"{number}-{dataset}")


@dataclass(frozen=True)
class ResultsDir:
    """`RESULTS/`, the output of `harness evaluate` and the input of `harness leaderboard`."""

    path: Path

    @property
    def summary(self) -> Path:
        return self.path / SUMMARY

    def submission(self, submission_id: str) -> SubmissionDir:
        return SubmissionDir(self.path / submission_id)

    def run(self, submission_id: str, dataset: str) -> RunDir:
        return self.submission(submission_id).run(dataset)

    def significance(self, track: str, dataset: str) -> Path:
        return self.path / SIGNIFICANCE_DIR / track / f"{dataset}.json"

    @property
    def human(self) -> HumanDir:
        """Human judgments: the blind sheet's key, the imported ratings and their summary (`harness human`)."""
        return HumanDir(self.path / HUMAN_DIR)

    def anticipation(self, track: str, dataset: str) -> Path:
        """Average Anticipation of a dataset's reference sets (tracks with `anticipation: true`)."""
        return self.path / ANTICIPATION_DIR / track / f"{dataset}.json"


@dataclass(frozen=True)
class HumanDir:
    """RESULTS/human/: `harness human sample` writes the key, `harness human import` the ratings and summary."""

    path: Path

    @property
    def key(self) -> Path:
        return self.path / "key.json"

    @property
    def ratings(self) -> Path:
        return self.path / "ratings.jsonl"

    @property
    def summary(self) -> Path:
        return self.path / SUMMARY


def run_dir(path: str | Path) -> RunDir:
    """The run folder named by `path`: the folder itself, or the folder of an instances.log given directly."""
    p = Path(path)
    if p.name == INSTANCES_LOG or p.is_file():
        return RunDir(p.parent)
    return RunDir(p)


def log_path(path: str | Path) -> Path:
    """The instances.log named by `path`: a run folder or any log file itself (SimulEval's included)."""
    p = Path(path)
    return p / INSTANCES_LOG if p.is_dir() else p
