"""`harness validate`: the organizer's pipeline on the dev set, for participants, with a readable report.

With Docker it is exactly `harness evaluate` on one submission (same build, same isolation, same scoring) plus
preflight checks: image architecture, image size, start-up time and peak memory. `--no-docker` is the same
`execute_run` on its local backend (`run/local_backend.py`): the submission's command as a local process (working
directory: the submission folder) against a local `harness server`, for quick iterations; commands should
therefore use paths relative to the image's WORKDIR.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import layout
from harness.batch.progress import Progress
from harness.batch.report import tail_lines
from harness.config import TaskConfig
from harness.errors import HarnessError
from harness.run import failures
from harness.runlog import read_records
from harness.text import printable, safe_name

STARTUP_WARN_S = 60.0
MEMORY_WARN_FRACTION = 0.9


@dataclass
class Check:
    """One preflight finding: `level` is ok, warn or fail; `measured` is False when the run left nothing to measure
    (no instance logged: no start-up time; no memory statistics)."""

    level: str
    name: str
    detail: str
    measured: bool = True


@dataclass
class Report:
    """What `harness validate` prints."""

    submission: str
    dataset: str
    status: str
    reason: str | None
    partial: bool
    instances: tuple[int, int]
    scores: dict[str, Any]
    output: Path
    checks: list[Check] = field(default_factory=list)
    track: str | None = None
    client_log_tail: list[str] = field(default_factory=list)
    prepare_s: float | None = None  # the submission's `prepare:` command, before the run (never in latency)

    def ok(self) -> bool:
        return self.ran() and not any(c.level == "fail" for c in self.checks)

    def ran(self) -> bool:
        """Whether the run went through (ok, or partial output); otherwise it failed."""
        return self.status in (failures.OK, failures.PARTIAL)

    def shown_checks(self) -> list[Check]:
        """The preflight checks the report prints: every one after a run that went through; after a failed run only
        those that may explain the failure (a failed check, a measured warning), not the checks that passed nor
        what the failure left unmeasured (`start-up time: unknown`)."""
        if self.ran():
            return self.checks
        return [c for c in self.checks if c.level != "ok" and c.measured]

    def lines(self, primary: list[str]) -> list[str]:
        out = [f"submission   {printable(self.submission)}  (dataset {printable(self.dataset)})",
               f"status       {self.status}" + (f": {printable(self.reason)}" if self.reason else "")
               + ("  [partial output]" if self.partial else ""),
               f"instances    {self.instances[0]}/{self.instances[1]}"]
        if self.prepare_s is not None:
            out.append(f"prepare      {self.prepare_s:.1f} s (before the run; not part of any latency)")
        if self.client_log_tail and self.status != failures.OK:
            out.append("client.log   (last lines of your command's output)")
            out += tail_lines(self.client_log_tail)
        for name in primary:
            rec = self.scores.get(name)
            if isinstance(rec, dict) and rec.get("score") is not None:
                ci = rec.get("ci95")
                ci_text = f"  95% CI [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
                unit = f" {rec['unit']}" if rec.get("unit") else ""
                out.append(f"{name:<12} {rec['score']:.2f}{unit}{ci_text}")
        checks = self.shown_checks()
        if checks:
            out.append("preflight")
            out += [f"  [{c.level:<4}] {c.name}: {c.detail}" for c in checks]
        out.append(f"output       {self.output}")
        return out


def _mb(n: int | float) -> str:
    return f"{n / 1024**2:.0f} MB"


def preflight(manifest_run: dict[str, Any], image: dict[str, Any], memory_limit: int,
              max_image_bytes: int) -> list[Check]:
    """Image architecture and size, start-up time and peak memory, from a run's manifest."""
    from harness.images.base import host_architecture

    checks = []
    arch, host = image.get("architecture"), host_architecture()
    checks.append(Check("ok" if arch == host else "fail", "image architecture", f"{arch} (host {host})"))
    size = int(image.get("size") or 0)
    checks.append(Check("ok" if size <= max_image_bytes else "fail", "image size",
                        f"{_mb(size)} (limit {_mb(max_image_bytes)})"))
    startup = manifest_run.get("startup_estimate_s")
    if startup is not None:
        checks.append(Check("ok" if startup <= STARTUP_WARN_S else "warn", "start-up time",
                            f"{startup:.1f} s from container start to the first request"))
    else:
        checks.append(Check("warn", "start-up time", "unknown (no instance was logged)", measured=False))
    peak = manifest_run.get("peak_memory_bytes")
    if peak:
        frac = peak / memory_limit if memory_limit else 0
        checks.append(Check("ok" if frac <= MEMORY_WARN_FRACTION else "warn", "peak memory",
                            f"{_mb(peak)} of the {_mb(memory_limit)} limit ({100 * frac:.0f}%)"))
    else:
        checks.append(Check("warn", "peak memory", "not measured (the engine reported no memory statistics)",
                            measured=False))
    return checks


def startup_estimate(run_dir: Path, first_instance_s: float | None) -> float | None:
    """Seconds from start to the first request: time to the first logged instance minus that instance's wall time."""
    if first_instance_s is None:
        return None
    try:
        first = read_records(layout.RunDir(run_dir).instances_log)[0]
        wall = float((first.get("timing") or {}).get("wall_s") or 0.0)
    except (HarnessError, ValueError, TypeError, IndexError):
        wall = 0.0
    return max(0.0, first_instance_s - wall)


def quiet_progress() -> Progress:
    """A progress display that shows nothing (validate off a terminal prints only its report)."""
    return Progress(tty=False, stream=open(os.devnull, "w"))  # noqa: SIM115


def validate_docker(folder: Path, config: TaskConfig, dataset: str, output: Path,
                    server_image: str | None = None, build_network: str = "default",
                    progress: Progress | None = None) -> Report:
    """The organizer's pipeline on one submission and one dataset (`output` already checked by the caller, see
    batch/outdir.py); `progress` shows the run as `harness evaluate` does (default: nothing)."""
    from harness.batch.scheduler import EvaluateOptions, evaluate
    from harness.images.checks import DEFAULT_MAX_IMAGE_BYTES
    from harness.intake.discover import SubmissionRef
    from harness.run.sandbox import parse_bytes

    sub_id = safe_name(folder.name)  # the id `harness check` and `load_submission` give it
    opts = EvaluateOptions(submissions=[SubmissionRef(sub_id, folder)], config=config, output=output,
                           datasets=[dataset], workers=1, overwrite=True,
                           server_image=server_image, collect_peak_memory=True, build_network=build_network)
    summary = evaluate(opts, progress or quiet_progress())
    rec = next(r for r in summary["runs"] if r["submission"] == sub_id and r["dataset"] == dataset)
    man = json.loads(layout.ResultsDir(output).submission(sub_id).manifest.read_text(encoding="utf-8"))
    run = man["runs"].get(dataset, {})
    instances = run.get("instances") or {}
    report = Report(sub_id, dataset, rec["status"], rec["reason"], rec["partial"],
                    (instances.get("done", 0), instances.get("expected", 0)), rec["scores"] or {},
                    output / sub_id / dataset, track=rec.get("track"),
                    client_log_tail=list(rec.get("client_log_tail") or ()),
                    prepare_s=(run.get("timings") or {}).get("prepare_s"))
    if "image" in man:
        measured = (run.get("startup") or {}).get("seconds")  # container start → first request (run/compute.py)
        run["startup_estimate_s"] = measured if measured is not None else startup_estimate(
            output / sub_id / dataset, run.get("first_instance_s"))
        report.checks = preflight(run, man["image"], parse_bytes(config.limits.memory), DEFAULT_MAX_IMAGE_BYTES)
    return report


def validate_local(folder: Path, config: TaskConfig, dataset: str, output: Path,
                   progress: Progress | None = None) -> Report:
    """`--no-docker`: the same `execute_run` on the local backend (server and submission as local processes);
    `progress` shows its instance counter (default: nothing)."""
    from harness.batch.results import score_run
    from harness.intake.image_command import local_command
    from harness.intake.submission import load_submission
    from harness.run.execute import execute_run
    from harness.run.local_backend import LocalBackend
    from harness.run.spec import RunSpec
    from harness.scoring.options import track_scoring_options

    try:
        sub = load_submission(folder)
        track = config.track(sub.track)
    except HarnessError as exc:  # the submission's own mistake: its status, as the Docker pipeline reports it
        sub_id = safe_name(folder.name)
        return Report(sub_id, dataset, failures.INVALID_SUBMISSION, str(exc), False, (0, 0), {},
                      output / sub_id / dataset)
    command = local_command(sub)  # an agent server without `command:` runs its Dockerfile's own command
    run_dir = layout.ResultsDir(output).run(sub.id, dataset).path
    spec = RunSpec(submission_image="", command=command, config=config, track=track,
                   dataset=track.dataset(dataset), out_dir=run_dir.resolve(), interface=sub.interface,
                   participant_port=sub.port, prepare=sub.prepare or None)
    shown = progress or quiet_progress()
    shown.add(sub.id, dataset)

    def on_progress(done: int, total: int) -> None:
        shown.update(sub.id, state="running", done=done, total=total)
        shown.render()

    shown.update(sub.id, state="starting")
    shown.render()
    try:
        with shown.ticking():
            result = execute_run(spec, backend=LocalBackend(folder), on_progress=on_progress)
        outcome = result.outcome
        shown.update(sub.id, state=outcome.status, note=outcome.reason, done=result.instances_done,
                     total=result.instances_expected)
    finally:
        shown.close()
    options = track_scoring_options(track, config=config, dataset=track.dataset(dataset))
    from harness.data.domains import domain_map

    domains = domain_map(track, track.dataset(dataset))
    scores = score_run(run_dir, options, outcome.partial or outcome.status != failures.OK, domains) or {}
    return Report(sub.id, dataset, outcome.status, outcome.reason, outcome.partial,
                  (result.instances_done, result.instances_expected), scores, run_dir, track=track.name,
                  client_log_tail=result.client_log_tail, prepare_s=result.timings.get("prepare_s"))


def default_output() -> Path:
    """A fresh folder for validate's results."""
    return Path(tempfile.mkdtemp(prefix="harness-validate-"))
