"""Batch evaluation: every submission of a folder × the chosen datasets, in isolation, scored, summarized.

Per submission (one worker each, `--workers N` at a time, each run on its own network): load and check
`submission.yaml` (→ invalid_submission), build or load the image (→ build_error, build.log), then per dataset
one isolated run (`run.execute_run`, retried once on infra_error only), scoring of whatever instances were
logged (flagged partial when the run did not finish cleanly), `run.json` with the resume key, and
`manifest.json`. `--resume` skips a run whose `run.json` holds the same content key (`manifest.content_key`: image
digest, command, server image, harness version, config, limits and data hashes) and a final status; a run that
was interrupted (no final status) starts over from its first instance, because 2020-style clients iterate over
every sentence and cannot skip the ones already logged. Every attempt's status and reason stay in the manifest
(`attempt_outcomes`); its `timings.total_s` covers the last attempt and the scoring (`score_s`).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import __version__, layout
from harness.config import TaskConfig, load_config
from harness.errors import HarnessError, SubmissionError
from harness.orchestrator import failures, manifest
from harness.orchestrator.run import RunInterrupted, RunSpec, count_instances, execute_run
from harness.runlog import read_statuses
from harness.text import printable


@dataclass
class EvaluateOptions:
    """Everything `harness evaluate` (and `harness validate`) needs."""

    submissions: list[Path]
    config: TaskConfig
    output: Path
    datasets: list[str]
    workers: int = 1
    resume: bool = False
    server_image: str | None = None
    collect_peak_memory: bool = False
    #: network of the Dockerfile's RUN steps. Builds get the engine's default network: no hidden data exists at
    #: build time, and Dockerfiles routinely install packages (the baselines apt-get Apertium); "none" forbids it.
    build_network: str = "default"
    stop: threading.Event = field(default_factory=threading.Event)


def discover(folder: Path) -> list[Path]:
    """The submission folders inside `folder` (every non-hidden sub-folder), sorted by name."""
    if not folder.is_dir():
        raise HarnessError(f"{folder}: not a folder of submissions")
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if not subs:
        raise HarnessError(f"{folder}: no submission folders inside")
    return subs


def configured_baseline(config: TaskConfig, track: str | None, sub_id: str) -> bool:
    """Whether the task config names `sub_id` as the baseline of `track` (`tracks[].baseline`). A submission's own
    `baseline:` field is ignored: any participant could set it."""
    return any(t.name == track and t.baseline == sub_id for t in config.tracks)


def _record(sub_id: str, meta: dict[str, Any], dataset: str, outcome: failures.Outcome,
            scores: dict[str, Any] | None, config: TaskConfig) -> dict[str, Any]:
    return {"submission": sub_id, "team": meta.get("team"), "system": meta.get("system"),
            "track": meta.get("track"), "kind": meta.get("kind"),
            "baseline": configured_baseline(config, meta.get("track"), sub_id),
            "dataset": dataset, "status": outcome.status, "reason": outcome.reason, "partial": outcome.partial,
            "scores": scores or {}}


def _submission_meta(sub: Any) -> dict[str, Any]:
    return {k: getattr(sub, k, None) for k in ("team", "system", "track", "kind", "baseline", "contact")}


def score_run(run_dir: Path, track: Any, partial: bool) -> dict[str, Any] | None:
    """Score what the run logged (None when nothing was logged); writes scores.json."""
    from harness.scoring import score_path, write_scores

    log = layout.RunDir(run_dir).instances_log
    if not read_statuses(log):
        return None
    scores = score_path(log, tokenizer=track.tokenizer, computation_aware=track.computation_aware)
    if isinstance(scores.get("info"), dict):
        scores["info"]["partial"] = partial
    write_scores(log, scores)
    return scores


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(obj, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class SubmissionJob:
    """Evaluates one submission folder on every requested dataset; returns summary records."""

    def __init__(self, folder: Path, opts: EvaluateOptions, progress: Progress, server_image: str) -> None:
        self.folder, self.opts, self.progress, self.server_image = folder, opts, progress, server_image
        self.sub_id = folder.name
        self.out = opts.output / self.sub_id
        self.man = manifest.base_manifest(self.sub_id, opts.config)

    def _server_image_id(self) -> str:
        """The engine's id of the server image (part of the resume key: the server's code can change a result)."""
        from harness.orchestrator.run import docker_api

        try:
            return str(docker_api().inspect_image(self.server_image)["Id"])
        except Exception:  # noqa: BLE001 - the run itself reports a missing server image
            return self.server_image

    def _fail_all(self, meta: dict[str, Any], outcome: failures.Outcome) -> list[dict[str, Any]]:
        for ds in self.opts.datasets:
            self.man["runs"][ds] = {"status": outcome.status, "reason": outcome.reason}
        self.progress.update(self.sub_id, state=outcome.status, note=outcome.reason)
        return [_record(self.sub_id, meta, ds, outcome, None, self.opts.config) for ds in self.opts.datasets]

    def __call__(self) -> list[dict[str, Any]]:
        from harness.orchestrator.submissions import build_submission_image, load_submission

        self.out.mkdir(parents=True, exist_ok=True)
        try:
            return self._evaluate(load_submission, build_submission_image)
        except RunInterrupted:
            raise
        except Exception as exc:  # noqa: BLE001 - a harness fault must not stop the other submissions
            line = f"{type(exc).__name__}: {exc}".splitlines()[0]
            return self._fail_all(self.man.get("submission_yaml") or {}, failures.Outcome(failures.INFRA_ERROR, line))
        finally:
            manifest.write_manifest(layout.SubmissionDir(self.out).manifest, self.man)

    def _evaluate(self, load_submission: Callable[..., Any], build: Callable[..., Any]) -> list[dict[str, Any]]:
        cfg = self.opts.config
        self.progress.update(self.sub_id, state="checking")
        try:
            sub = load_submission(self.folder)
        except HarnessError as exc:
            return self._fail_all({}, failures.Outcome(failures.INVALID_SUBMISSION, str(exc)))
        meta = _submission_meta(sub)
        self.man["submission_yaml"] = meta
        if meta.get("baseline"):
            self.man.setdefault("warnings", []).append(
                "submission.yaml: baseline: ignored; only the task config names baselines (tracks[].baseline)")
        try:
            track = cfg.track(meta.get("track"))
        except HarnessError as exc:
            return self._fail_all(meta, failures.Outcome(failures.INVALID_SUBMISSION, str(exc)))
        self.progress.update(self.sub_id, state="building")
        t0 = time.monotonic()
        try:
            info = build(sub, layout.SubmissionDir(self.out).build_log, network=self.opts.build_network)
        except Exception as exc:  # noqa: BLE001 - every other build fault is the submission's build_error
            self.man["timings"] = {"build_s": round(time.monotonic() - t0, 3)}
            line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            kind = failures.INVALID_SUBMISSION if isinstance(exc, SubmissionError) else failures.BUILD_ERROR
            return self._fail_all(meta, failures.Outcome(kind, line))
        self.man["image"] = {"tag": info.tag, "id": info.id, "digest": info.digest, "size": info.size,
                             "architecture": info.architecture}
        self.man["timings"] = {"build_s": round(getattr(info, "build_s", 0.0) or (time.monotonic() - t0), 3)}
        datasets = [ds for ds in self.opts.datasets if ds in track.datasets]
        if not datasets:
            return self._fail_all(meta, failures.Outcome(
                failures.INVALID_SUBMISSION, f"track {track.name!r} has no dataset {', '.join(self.opts.datasets)}"))
        records = []
        for ds in datasets:
            if self.opts.stop.is_set():
                raise RunInterrupted()
            records.append(self._run_dataset(sub, meta, track, ds, info))
        return records

    def _run_dataset(self, sub: Any, meta: dict[str, Any], track: Any, ds_name: str, info: Any) -> dict[str, Any]:
        cfg = self.opts.config
        ds = track.dataset(ds_name)
        hashes = manifest.dataset_hashes(ds, track.modality)
        key = manifest.content_key(info.digest, cfg, track.name, ds_name, hashes, command=sub.command,
                                   server_image_id=self._server_image_id())
        run = layout.SubmissionDir(self.out).run(ds_name)
        run_dir = run.path
        prev = _read_json(run.run_meta) if self.opts.resume else None
        entry: dict[str, Any] = {"content_key": key, "dataset_sha256": hashes,
                                 "sacrebleu_signature": manifest.sacrebleu_signature(track.tokenizer,
                                                                                     len(ds.references))}
        self.man["runs"][ds_name] = entry
        expected = count_instances(cfg, track.name, ds_name)
        if prev and prev.get("content_key") == key and prev.get("finished"):
            outcome = failures.Outcome(prev["status"], prev.get("reason"), bool(prev.get("partial")))
            scores = _read_json(run.scores) if run.scores.exists() else None
            entry.update(prev.get("manifest") or {}, resumed=True)
            self.progress.update(self.sub_id, dataset=ds_name, state=f"{outcome.status} (resumed)",
                                 done=len(read_statuses(run.instances_log)), total=expected)
            return _record(self.sub_id, meta, ds_name, outcome, scores, cfg)
        if run_dir.exists():  # an unfinished or outdated run starts over (see the module docstring)
            shutil.rmtree(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        _write_json(run.run_meta, {"content_key": key, "finished": False})
        attempt = 0
        attempts: list[dict[str, Any]] = []
        while True:
            self.progress.update(self.sub_id, dataset=ds_name, state="starting" if attempt == 0 else "retrying",
                                 done=len(read_statuses(run.instances_log)), total=expected)
            spec = RunSpec(submission_image=info.id, command=sub.command, config=cfg, track=track.name,
                           dataset=ds_name, out_dir=run_dir.resolve(), server_image=self.server_image,
                           collect_peak_memory=self.opts.collect_peak_memory)
            result = execute_run(spec, self.opts.stop, on_progress=lambda d, n: self.progress.update(
                self.sub_id, state="running", done=d, total=n))
            attempts.append({"attempt": attempt + 1, "status": result.outcome.status, "reason": result.outcome.reason})
            if not failures.should_retry(result.outcome.status, attempt):
                break
            attempt += 1
        outcome = result.outcome
        t_score = time.monotonic()
        try:
            scores = score_run(run_dir, track, outcome.partial or outcome.status != failures.OK)
        except HarnessError as exc:
            scores = None
            if outcome.status == failures.OK:
                outcome = failures.Outcome(failures.PROTOCOL_VIOLATION, f"log cannot be scored: {exc}", True)
        result.timings["score_s"] = time.monotonic() - t_score
        result.timings["total_s"] = result.timings.get("total_s", 0.0) + result.timings["score_s"]
        run_manifest = {
            "status": outcome.status, "reason": outcome.reason, "partial": outcome.partial,
            "attempts": attempt + 1, "attempt_outcomes": attempts,
            "exit_code": result.exit_code, "oom_killed": result.oom_killed,
            "timed_out": result.timed_out, "client_log_truncated": result.client_log_truncated,
            "instances": {"done": result.instances_done, "expected": result.instances_expected,
                          "by_status": dict(Counter(read_statuses(run.instances_log).values()))},
            "isolation": result.isolation,
            "timings": {k: round(v, 3) for k, v in result.timings.items()},
            "peak_memory_bytes": result.peak_memory_bytes,
            "first_instance_s": None if result.first_instance_s is None else round(result.first_instance_s, 3),
            "window": [round(t, 3) for t in result.window] if result.window else None,
        }
        if scores and isinstance(scores.get("BLEU"), dict) and scores["BLEU"].get("signature"):
            entry["sacrebleu_signature"] = scores["BLEU"]["signature"]
        entry.update(run_manifest)
        _write_json(run.run_meta, {"content_key": key, "finished": True, "status": outcome.status,
                                         "reason": outcome.reason, "partial": outcome.partial,
                                         "manifest": entry})
        self.progress.update(self.sub_id, dataset=ds_name, state=outcome.status, note=outcome.reason,
                             done=result.instances_done, total=expected)
        return _record(self.sub_id, meta, ds_name, outcome, scores, cfg)


def _add_norm_scores(runs: list[dict[str, Any]], config: TaskConfig, output: Path) -> None:
    """NormBLEU against the track's configured baseline submission, where it ran on the same dataset."""
    from harness.scoring import add_norm_scores, write_scores

    for track in config.tracks:
        if not track.baseline:
            continue
        base = {r["dataset"]: r for r in runs if r["submission"] == track.baseline and r["scores"]}
        for r in runs:
            b = base.get(r["dataset"])
            if r["track"] == track.name and r["scores"] and b is not None:
                add_norm_scores(r["scores"], b["scores"], track.baseline)
                write_scores(layout.ResultsDir(output).run(r["submission"], r["dataset"]).instances_log, r["scores"])


def write_summary(config: TaskConfig, output: Path, runs: list[dict[str, Any]]) -> Path:
    """RESULTS/summary.json (docs/formats.md)."""
    summary = {"task": config.task, "harness_version": __version__, "config_sha256": config.sha256,
               "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "runs": sorted(runs, key=lambda r: (r["submission"], r["dataset"]))}
    path = layout.ResultsDir(output).summary
    _write_json(path, summary)
    return path


def evaluate(opts: EvaluateOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Evaluate every submission; writes the results folder and returns the summary object.

    On KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one by the command) every worker tears its run down,
    leftovers of this process are removed, and the interrupt propagates.
    """
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from harness.orchestrator.network import remove_resources
    from harness.orchestrator.run import docker_api

    api = docker_api()
    remove_resources(api)  # leftovers of killed harness processes
    server_image = opts.server_image
    if server_image is None:
        from harness.orchestrator.images import ensure_base_image

        server_image = ensure_base_image()
    opts.output.mkdir(parents=True, exist_ok=True)
    progress = progress or Progress()
    for folder in opts.submissions:
        progress.add(folder.name, opts.datasets[0])
    runs: list[dict[str, Any]] = []
    pool = ThreadPoolExecutor(max_workers=max(1, opts.workers), thread_name_prefix="harness-run")
    futures = {pool.submit(SubmissionJob(f, opts, progress, server_image)): f for f in opts.submissions}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                runs.extend(fut.result())
            if done:  # the summary so far, so an interrupted batch still leaves one
                write_summary(opts.config, opts.output, runs)
            progress.render()
    except BaseException:
        opts.stop.set()
        for fut in futures:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        remove_resources(api, only_pid=os.getpid())
        progress.close()
        raise
    pool.shutdown(wait=True)
    progress.close()
    _add_norm_scores(runs, opts.config, opts.output)
    write_summary(opts.config, opts.output, runs)
    return json.loads(layout.ResultsDir(opts.output).summary.read_text(encoding="utf-8"))


def load_options(submissions_dir: Path, config_path: Path, output: Path, datasets: list[str], workers: int,
                 resume: bool) -> EvaluateOptions:
    """Options for `harness evaluate` from its command-line values."""
    config = load_config(config_path)
    for ds in datasets:
        if not any(ds in t.datasets for t in config.tracks):
            raise HarnessError(f"{config_path}: no track has a dataset {ds!r}")
    return EvaluateOptions(submissions=discover(submissions_dir), config=config, output=output,
                           datasets=datasets, workers=workers, resume=resume)


class Progress:
    """One status line per submission: dataset, state, instance counter, elapsed time, reason.

    On a terminal the block of lines is redrawn in place; otherwise a line is printed whenever a submission's
    state changes (so logs stay readable). Thread-safe: workers call `update`, the main thread `render`.
    """

    def __init__(self, stream: Any = None, tty: bool | None = None) -> None:
        import sys

        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.lines: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.drawn = 0
        self.width = max(len(k) for k in self.lines) if self.lines else 20

    def add(self, sub: str, dataset: str) -> None:
        with self.lock:
            self.lines[sub] = {"dataset": dataset, "state": "queued", "done": 0, "total": 0, "note": None,
                               "t0": time.monotonic(), "printed": None}
            self.width = max(self.width, len(sub))

    def update(self, sub: str, **changes: Any) -> None:
        with self.lock:
            line = self.lines.setdefault(sub, {"dataset": "", "state": "", "done": 0, "total": 0, "note": None,
                                               "t0": time.monotonic(), "printed": None})
            if changes.get("state") in ("checking", "building") and line["state"] == "queued":
                line["t0"] = time.monotonic()
            line.update({k: v for k, v in changes.items() if v is not None or k == "note"})
            final = str(line["state"]).split(" ")[0] in failures.STATUSES
            line["t_end"] = line.get("t_end") or time.monotonic() if final else None
            if not self.tty and line["printed"] != (line["dataset"], line["state"]):
                line["printed"] = (line["dataset"], line["state"])
                self.stream.write(self.format(sub, line) + "\n")
                self.stream.flush()

    def format(self, sub: str, line: dict[str, Any]) -> str:
        counter = f"{line['done']}/{line['total']}" if line["total"] else "-"
        text = (f"{printable(sub):<{self.width}}  {printable(line['dataset']):<6} {printable(line['state']):<18} "
                f"{counter:>9}  {(line.get('t_end') or time.monotonic()) - line['t0']:6.1f}s")
        if line.get("note"):
            text += f"  {printable(line['note'])}"
        return text[:200]

    def render(self) -> None:
        if not self.tty:
            return
        with self.lock:
            out = "".join(f"\x1b[{self.drawn}F" if self.drawn else "")
            out += "".join(f"\x1b[2K{self.format(s, ln)}\n" for s, ln in self.lines.items())
            self.drawn = len(self.lines)
            self.stream.write(out)
            self.stream.flush()

    def close(self) -> None:
        self.render()
