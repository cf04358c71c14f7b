"""One submission of a batch: intake (submission.yaml, track) → image → one run per dataset → records.

Each failure becomes that submission's status on every dataset (invalid_submission, build_error, or infra_error
for a fault of the harness itself); a run is retried once on infra_error only (every attempt's status and reason
stay in the manifest's `attempt_outcomes`; each run also records the host's hardware, the participant's start-up
time and its compute time over the source: run/compute.py); whatever instances a run logged are scored (flagged
partial when it did not finish cleanly; `timings.total_s` covers the last attempt and the scoring, `score_s`);
`run.json` carries the resume key (batch/resume.py) and `manifest.json` what was run, on what, with which
isolation. Only the task config names baselines (`results.configured_baseline`); a submission's own `baseline:`
is ignored with a warning.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from harness import layout
from harness.batch import history, manifest, resume
from harness.batch.options import EvaluateOptions, backend_name, build_engine_of, registry_of
from harness.batch.progress import Progress
from harness.batch.results import configured_baseline, score_run
from harness.config import Dataset, TaskConfig, Track
from harness.data.domains import domain_map
from harness.errors import HarnessError, MetricSetupError, SubmissionError
from harness.intake.discover import SubmissionRef
from harness.jsonio import read_json_or_none
from harness.run import failures
from harness.run.execute import Backend, execute_run
from harness.run.spec import RunInterrupted, RunResult, RunSpec, count_instances
from harness.runlog import read_statuses

if TYPE_CHECKING:
    from harness.data.domains import DomainMap
    from harness.images.base import ImageInfo
    from harness.intake.submission import Submission
    from harness.scoring.options import ScoringOptions

_META = ("team", "system", "track", "kind", "baseline", "contact", "interface", "port", "speech_processor_config",
         "models", "hardware", "prepare", "fetch", "replaces")


class _Failed(Exception):
    """The submission cannot be run: `outcome` is its status on every requested dataset."""

    def __init__(self, outcome: failures.Outcome) -> None:
        super().__init__(outcome.reason)
        self.outcome = outcome


def _engine_api(engine: str | None) -> Any:
    """A Docker API client of `engine` (see images.docker_env; None: the harness's own engine)."""
    from harness.run.docker_backend import docker_api

    if engine is None:
        return docker_api()
    import docker

    from harness.images.base import docker_env

    try:
        return docker.from_env(environment=docker_env(engine), timeout=120).api
    except Exception as exc:  # noqa: BLE001
        raise failures.InfraError(f"fetch: build engine {engine} does not answer: {exc}".splitlines()[0]) from None


def record(sub_id: str, meta: dict[str, Any], dataset: str, outcome: failures.Outcome,
           scores: dict[str, Any] | None, config: TaskConfig, client_log_tail: list[str] | None = None
           ) -> dict[str, Any]:
    """One run's line of summary.json; a run that is not ok carries the last lines of its client.log."""
    rec = {"submission": sub_id, "team": meta.get("team"), "system": meta.get("system"),
           "track": meta.get("track"), "kind": meta.get("kind"),
           "baseline": configured_baseline(config, meta.get("track"), sub_id),
           "dataset": dataset, "status": outcome.status, "reason": outcome.reason, "partial": outcome.partial,
           "scores": scores or {}}
    if meta.get("replaces"):  # a new version of the team's earlier submission (batch/history.py)
        rec["replaces"] = meta["replaces"]
    if meta.get("models") == "closed":  # ranked apart (leaderboard, significance)
        rec["models"] = "closed"
    if meta.get("log"):  # scored from the participant's log: its computation-aware latency is not ours
        rec["log"], rec["hardware"] = True, meta.get("hardware")
    if client_log_tail:
        rec["client_log_tail"] = list(client_log_tail)
    return rec


def run_manifest(result: RunResult, attempts: list[dict[str, Any]], run: layout.RunDir) -> dict[str, Any]:
    """The manifest entry of a finished run (what happened, read back, timed); `attempts` holds every attempt's
    status and reason."""
    return {
        "status": result.outcome.status, "reason": result.outcome.reason, "partial": result.outcome.partial,
        "attempts": len(attempts), "attempt_outcomes": attempts,
        "exit_code": result.exit_code, "oom_killed": result.oom_killed,
        "timed_out": result.timed_out, "client_log_truncated": result.client_log_truncated,
        "client_log_tail": result.client_log_tail,
        "instances": {"done": result.instances_done, "expected": result.instances_expected,
                      "by_status": dict(Counter(read_statuses(run.instances_log).values()))},
        "isolation": result.isolation,
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
        "peak_memory_bytes": result.peak_memory_bytes,
        "first_instance_s": None if result.first_instance_s is None else round(result.first_instance_s, 3),
        "window": [round(t, 3) for t in result.window] if result.window else None,
        "startup": result.startup, "compute": result.compute, "hardware": manifest.hardware(),
    }


def scored(run: layout.RunDir, options: ScoringOptions, outcome: failures.Outcome, domains: DomainMap | None = None
           ) -> tuple[failures.Outcome, dict[str, Any] | None]:
    """Score what the run logged; a clean run whose log cannot be scored is a protocol violation. A metric that
    cannot be computed here (MetricSetupError: no comet extra, checkpoint or GPU) is the organizer's to fix and
    stops the batch."""
    try:
        return outcome, score_run(run.path, options, outcome.partial or outcome.status != failures.OK, domains)
    except MetricSetupError:
        raise
    except HarnessError as exc:
        if outcome.status == failures.OK:
            outcome = failures.Outcome(failures.PROTOCOL_VIOLATION, f"log cannot be scored: {exc}", True)
        return outcome, None


class SubmissionJob:
    """Evaluates one submission on every requested dataset (called by a worker); returns summary records."""

    def __init__(self, ref: SubmissionRef, opts: EvaluateOptions, progress: Progress, server_image: str) -> None:
        self.ref, self.opts, self.progress, self.server_image = ref, opts, progress, server_image
        self.sub_id = ref.id
        self.out = layout.SubmissionDir(opts.output / ref.id)
        self.man = manifest.base_manifest(self.sub_id, opts.config)
        # the runs of datasets not evaluated now stay in the manifest (each entry names its image digest)
        previous = read_json_or_none(self.out.manifest) if self.out.manifest.exists() else None
        if previous and isinstance(previous.get("runs"), dict):
            self.man["runs"].update({ds: e for ds, e in previous["runs"].items() if ds not in opts.datasets})
        self.meta: dict[str, Any] = {}
        self.fetched: str | failures.Outcome | None = None  # the fetch volume, or why the fetch failed
        self.fetch_image: str | None = None  # its files as an image, for swarm nodes (run.fetch.ship)

    def __call__(self) -> list[dict[str, Any]]:
        self.out.path.mkdir(parents=True, exist_ok=True)
        try:
            return self._evaluate()
        except RunInterrupted:
            raise
        except _Failed as failed:
            return self._fail_all(failed.outcome)
        except Exception as exc:  # noqa: BLE001 - a harness fault must not stop the other submissions
            return self._fail_all(failures.Outcome(failures.INFRA_ERROR,
                                                   f"{type(exc).__name__}: {exc}".splitlines()[0]))
        finally:
            manifest.write_manifest(self.out.manifest, self.man)

    def _fail_all(self, outcome: failures.Outcome) -> list[dict[str, Any]]:
        for ds in self.opts.datasets:
            self.man["runs"][ds] = {"status": outcome.status, "reason": outcome.reason}
        self.progress.update(self.sub_id, state=outcome.status, note=outcome.reason)
        return [record(self.sub_id, self.meta, ds, outcome, None, self.opts.config) for ds in self.opts.datasets]

    def _evaluate(self) -> list[dict[str, Any]]:
        sub, track = self._intake()
        self.man["kind"] = "log" if sub.is_log else "image"
        if sub.is_log:
            return self._log_datasets(sub, track)
        info = self._image(sub)
        datasets = [ds for ds in self.opts.datasets if ds in track.datasets]
        if not datasets:
            raise _Failed(failures.Outcome(failures.INVALID_SUBMISSION,
                                           f"track {track.name!r} has no dataset {', '.join(self.opts.datasets)}"))
        records = []
        for name in datasets:
            if self.opts.stop.is_set():
                raise RunInterrupted()
            records.append(self._dataset(sub, track, track.dataset(name), info))
        return records

    def _intake(self) -> tuple[Submission, Track]:
        """submission.yaml and its track, the submission named by its id in the batch (what its image's tag and
        labels carry, not its folder's name); `_Failed` (invalid_submission) naming the fault."""
        from dataclasses import replace

        from harness.intake.submission import load_submission

        self.progress.update(self.sub_id, state="checking")
        try:
            sub = replace(load_submission(self.ref.path), id=self.sub_id)
            self.meta = {k: getattr(sub, k, None) for k in _META}
            if sub.is_log:
                self.meta["log"] = True
            self.man["submission_yaml"] = self.meta
            if sub.baseline:
                self.man.setdefault("warnings", []).append(
                    "submission.yaml: baseline: ignored; only the task config names baselines (tracks[].baseline)")
            return sub, self.opts.config.track(sub.track)
        except HarnessError as exc:
            raise _Failed(failures.Outcome(failures.INVALID_SUBMISSION, str(exc))) from None

    def _image(self, sub: Submission) -> ImageInfo:
        """The submission's image, built or loaded; `_Failed` (build_error / invalid_submission) otherwise."""
        from harness.images.pinned import RegistryUnreachable
        from harness.images.submission import build_submission_image

        self.progress.update(self.sub_id, state="building")
        t0 = time.monotonic()
        try:
            info = build_submission_image(sub, self.out.build_log, network=self.opts.build_network,
                                          engine=build_engine_of(self.opts))
        except Exception as exc:  # noqa: BLE001 - every other build fault is the submission's build_error
            self.man["timings"] = {"build_s": round(time.monotonic() - t0, 3)}
            line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            kind = (failures.INVALID_SUBMISSION if isinstance(exc, SubmissionError) else
                    failures.INFRA_ERROR if isinstance(exc, RegistryUnreachable) else failures.BUILD_ERROR)
            raise _Failed(failures.Outcome(kind, line)) from None
        self.man["image"] = {"tag": info.tag, "id": info.id, "digest": info.digest, "size": info.size,
                             "architecture": info.architecture}
        if sub.build.image_ref is not None:  # pulled from a registry, pinned by this digest
            self.man["image"]["reference"] = sub.build.image_ref
        if info.build_engine is not None:  # built where the network is, then moved to the harness's engine
            self.man["image"]["built_on"] = {"engine": info.build_engine, "moved": True, "copied": info.copied}
        self.man["timings"] = {"build_s": round(getattr(info, "build_s", 0.0) or (time.monotonic() - t0), 3)}
        return info

    def _dataset(self, sub: Submission, track: Track, ds: Dataset, info: ImageInfo) -> dict[str, Any]:
        """One dataset: resumed when already finished with the same key, else run, scored and recorded."""
        run = self.out.run(ds.name)
        how = [*sub.command, f"interface={sub.interface}", f"port={sub.port}"] if sub.is_agent_server else sub.command
        if sub.prepare:  # another preprocessing is another run
            how = [*how, "prepare=", *sub.prepare]
        if sub.fetch:  # and so is another download
            how = [*how, "fetch=", *sub.fetch]
        key, hashes = resume.run_key(info.digest, self.opts.config, track, ds, command=how,
                                     server_image_id=self._server_image_id())
        entry: dict[str, Any] = {"content_key": key, "image_digest": info.digest, "dataset_sha256": hashes,
                                 "sacrebleu_signature": manifest.sacrebleu_signature(track.tokenizer,
                                                                                     len(ds.references))}
        self.man["runs"][ds.name] = entry
        expected = count_instances(track, ds)
        prev = resume.finished_run(run, key) if self.opts.resume else None
        if prev:
            return self._resumed(run, ds.name, prev, entry, expected)
        # an unfinished run starts over; a finished one of an older version is kept (batch/resume.py, history.py)
        history.keep_previous(self.out, run, ds.name)
        run.path.mkdir(parents=True, exist_ok=True)
        resume.mark_started(run, key)
        volume = self._fetch(sub, info)
        if isinstance(volume, failures.Outcome):  # no run without what the fetch step was to download
            return self._not_run(run, ds.name, key, entry, volume)
        result, attempts = self._execute(sub, track, ds, info, run, expected, volume)
        t_score = time.monotonic()
        outcome, scores = scored(run, self._scoring_options(track, ds), result.outcome, domain_map(track, ds))
        result.timings["score_s"] = time.monotonic() - t_score
        result.timings["total_s"] = result.timings.get("total_s", 0.0) + result.timings["score_s"]
        if scores and isinstance(scores.get("BLEU"), dict) and scores["BLEU"].get("signature"):
            entry["sacrebleu_signature"] = scores["BLEU"]["signature"]
        entry.update(run_manifest(result, attempts, run), status=outcome.status, reason=outcome.reason,
                     partial=outcome.partial)
        resume.mark_finished(run, key, outcome, entry)
        self.progress.update(self.sub_id, dataset=ds.name, state=outcome.status, note=outcome.reason,
                             done=result.instances_done, total=expected)
        return record(self.sub_id, self.meta, ds.name, outcome, scores, self.opts.config,
                      result.client_log_tail if outcome.status != failures.OK else None)

    def _fetch(self, sub: Submission, info: ImageInfo) -> str | failures.Outcome | None:
        """The submission's filled fetch volume (fetched once per job, before its first run; cached across jobs),
        the outcome of a fetch that failed, or None without `fetch:`. Never part of a run or of its latency. On a
        swarm it runs where the network is (the build engine, else the manager) and, where the runs' nodes do not
        have that volume, its files are made an image for them (`run.fetch.ship`)."""
        if not sub.fetch or self.fetched is not None:
            return self.fetched
        from harness.run.fetch.step import FetchRequest, ensure_fetched

        self.progress.update(self.sub_id, state="fetching")
        engine = build_engine_of(self.opts) if backend_name(self.opts) == "swarm" else None
        req = FetchRequest(image_id=info.id, image_digest=info.digest, command=sub.fetch, image_user=None,
                           config=self.opts.config, helper_image=self.server_image, log=self.out.fetch_log,
                           proxy_log=self.out.fetch_proxy_log, refetch=self.opts.refetch)
        try:
            api = _engine_api(engine)
            if engine is not None:  # the image's id there (moved images keep their content, not always their id)
                req.image_id = str(api.inspect_image(info.tag or info.id)["Id"])
            fetched = ensure_fetched(api, req)
            self.fetch_image = self._ship(api, engine, fetched.volume, fetched.key)
        except failures.FetchFailed as exc:
            self.fetched = failures.Outcome(exc.status, str(exc))
        except failures.InfraError as exc:
            self.fetched = failures.Outcome(failures.INFRA_ERROR, str(exc))
        else:
            self.man["fetch"] = fetched.manifest(req)
            if engine is not None:
                self.man["fetch"]["engine"] = engine
            if self.fetch_image is not None:
                self.man["fetch"]["shipped_as"] = self.fetch_image
            if not fetched.cached:
                self.man.setdefault("timings", {})["fetch_s"] = round(fetched.fetch_s, 3)
            self.fetched = fetched.volume
            return self.fetched
        self.man["fetch"] = {"command": list(sub.fetch), "status": self.fetched.status,
                             "reason": self.fetched.reason}
        return self.fetched

    def _ship(self, fetch_api: Any, engine: str | None, volume: str, key: str) -> str | None:
        """On a swarm whose runs may go to another node than the volume's (several nodes, or the fetch ran on the
        build engine): the image carrying the volume's files, on the harness's engine; else None."""
        if backend_name(self.opts) != "swarm":
            return None
        from harness.run.docker_backend import docker_api
        from harness.run.fetch.ship import fetched_image

        harness_api = docker_api() if engine is not None else fetch_api
        nodes = int(((harness_api.info().get("Swarm") or {}).get("Nodes")) or 1)
        if engine is None and nodes <= 1:
            return None
        return fetched_image(fetch_api, harness_api, engine, volume, key, self.server_image)

    def _not_run(self, run: layout.RunDir, ds_name: str, key: str, entry: dict[str, Any],
                 outcome: failures.Outcome) -> dict[str, Any]:
        """A dataset whose run never started (its submission's fetch failed): its status and reason recorded."""
        entry.update(status=outcome.status, reason=outcome.reason, partial=False)
        resume.mark_finished(run, key, outcome, entry)
        self.progress.update(self.sub_id, dataset=ds_name, state=outcome.status, note=outcome.reason)
        return record(self.sub_id, self.meta, ds_name, outcome, None, self.opts.config)

    def _log_datasets(self, sub: Submission, track: Track) -> list[dict[str, Any]]:
        """A log submission: each requested dataset it has a log for, scored from that log (nothing is built)."""
        from harness.batch.logsub import unknown_dataset

        for name in sub.logs:
            if (problem := unknown_dataset(name, track)) is not None:
                raise _Failed(failures.Outcome(failures.INVALID_SUBMISSION, f"{sub.yaml_path}: logs.{name}: "
                                               f"{problem}"))
        self.man["hardware"] = {"declared": sub.hardware}  # the host's is not what made the logs
        chosen = [ds for ds in self.opts.datasets if ds in sub.logs]
        if not chosen:
            raise _Failed(failures.Outcome(failures.INVALID_SUBMISSION, f"{sub.yaml_path}: logs: no log for dataset "
                                           f"{', '.join(self.opts.datasets)}"))
        return [self._log_dataset(sub, track, track.dataset(name)) for name in chosen]

    def _log_dataset(self, sub: Submission, track: Track, ds: Dataset) -> dict[str, Any]:
        """One dataset of a log submission: resumed when the same log was scored already, else converted to the
        harness's instances.log (checked against the dataset), scored and recorded."""
        from harness.batch.logsub import log_format, log_records, write_records
        from harness.digest import sha256_file

        run, log = self.out.run(ds.name), sub.logs[ds.name]
        digest, fmt = f"sha256:{sha256_file(log)}", log_format(log, track)
        config, tokenizer = sub.log_configs.get(ds.name), sub.log_tokenizers.get(ds.name)  # how the log is read
        how = [f"log_config:sha256:{sha256_file(config)}"] if config else []
        how += [f"log_tokenizer:{tokenizer.relative_to(sub.path)}"] if tokenizer else []
        key, hashes = resume.run_key(digest, self.opts.config, track, ds, command=("log", fmt, *how))
        entry: dict[str, Any] = {"kind": "log", "content_key": key, "dataset_sha256": hashes,
                                 "log": {"file": str(log.relative_to(sub.path)), "sha256": digest, "format": fmt},
                                 "hardware": {"declared": sub.hardware}}
        self.man["runs"][ds.name] = entry
        prev = resume.finished_run(run, key) if self.opts.resume else None
        if prev:
            return self._resumed(run, ds.name, prev, entry, count_instances(track, ds))
        history.keep_previous(self.out, run, ds.name)  # an earlier version's finished run is kept
        run.path.mkdir(parents=True, exist_ok=True)
        resume.mark_started(run, key)
        self.progress.update(self.sub_id, dataset=ds.name, state="scoring log")
        t0 = time.monotonic()
        try:
            records = log_records(log, track, ds, f"{sub.yaml_path}: logs.{ds.name}", config=config,
                                  tokenizer=tokenizer)
        except HarnessError as exc:
            outcome, scores, records = failures.Outcome(failures.INVALID_SUBMISSION, str(exc)), None, []
        else:
            write_records(run.path, records)
            outcome, scores = scored(run, self._scoring_options(track, ds), failures.Outcome(failures.OK),
                                     domain_map(track, ds))
        entry.update(status=outcome.status, reason=outcome.reason, partial=outcome.partial,
                     instances={"done": len(records), "expected": len(records)},
                     timings={"score_s": round(time.monotonic() - t0, 3)})
        resume.mark_finished(run, key, outcome, entry)
        self.progress.update(self.sub_id, dataset=ds.name, state=outcome.status, note=outcome.reason,
                             done=len(records), total=len(records))
        return record(self.sub_id, self.meta, ds.name, outcome, scores, self.opts.config)

    def _scoring_options(self, track: Track, ds: Dataset) -> ScoringOptions:
        """The options a run of `track` on `ds` is scored with: the track's, the task's neural metrics and the
        dataset's source transcript."""
        from harness.scoring.options import track_scoring_options

        return track_scoring_options(track, config=self.opts.config, dataset=ds)

    def _server_image_id(self) -> str:
        """The engine's id of the server image (part of the resume key: the server's code can change a result)."""
        from harness.run.docker_backend import docker_api

        try:
            return str(docker_api().inspect_image(self.server_image)["Id"])
        except Exception:  # noqa: BLE001 - the run itself reports a missing server image
            return self.server_image

    def _resumed(self, run: layout.RunDir, ds_name: str, prev: dict[str, Any], entry: dict[str, Any],
                 expected: int) -> dict[str, Any]:
        outcome = failures.Outcome(prev["status"], prev.get("reason"), bool(prev.get("partial")))
        scores = read_json_or_none(run.scores) if run.scores.exists() else None
        entry.update(prev.get("manifest") or {}, resumed=True)
        self.progress.update(self.sub_id, dataset=ds_name, state=f"{outcome.status} (resumed)",
                             done=len(read_statuses(run.instances_log)), total=expected)
        tail = entry.get("client_log_tail") if outcome.status != failures.OK else None
        return record(self.sub_id, self.meta, ds_name, outcome, scores, self.opts.config, tail)

    def _backend(self) -> Backend | None:
        """A fresh backend for one run attempt (None: execute_run's default, the local Docker engine)."""
        if backend_name(self.opts) != "swarm":
            return None
        from harness.run.swarm.backend import SwarmBackend

        return SwarmBackend(registry_of(self.opts), self.opts.config.swarm.data_label)

    def _execute(self, sub: Submission, track: Track, ds: Dataset, info: ImageInfo, run: layout.RunDir,
                 expected: int, fetch_volume: str | None = None) -> tuple[RunResult, list[dict[str, Any]]]:
        """The isolated run, retried once on infra_error; (result, every attempt's status and reason)."""
        attempt = 0
        attempts: list[dict[str, Any]] = []
        while True:
            self.progress.update(self.sub_id, dataset=ds.name, state="starting" if attempt == 0 else "retrying",
                                 done=len(read_statuses(run.instances_log)), total=expected)
            spec = RunSpec(submission_image=info.id, command=sub.command, config=self.opts.config, track=track,
                           dataset=ds, out_dir=run.path.resolve(), server_image=self.server_image,
                           collect_peak_memory=self.opts.collect_peak_memory, interface=sub.interface,
                           participant_port=sub.port, prepare=sub.prepare or None, fetch_volume=fetch_volume,
                           fetch_image=self.fetch_image if fetch_volume else None)
            result = execute_run(spec, self.opts.stop, on_progress=lambda d, n: self.progress.update(
                self.sub_id, state="running", done=d, total=n), backend=self._backend())
            attempts.append({"attempt": attempt + 1, "status": result.outcome.status,
                             "reason": result.outcome.reason})
            if not failures.should_retry(result.outcome.status, attempt):
                return result, attempts
            attempt += 1
