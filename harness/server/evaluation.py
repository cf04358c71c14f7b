"""The evaluation of one dataset: sessions by instance, timeouts, and the durable log.

Transport-free: the tornado handlers and the in-process runner both call `step`, so both are timed and
logged the same way. Thread-safe (one lock; the work under it is short). The evaluation records; it does not
score: the layer that builds it may inject a `scorer` (log file → scores) for the 2020 `GET /result`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import layout
from harness.config import Limits, Track
from harness.errors import HarnessError
from harness.protocol import PROTOCOL_VERSION, ProtocolError, StepRequest, StepResponse
from harness.runlog import LogWriter
from harness.runmeta import FIRST_REQUEST, update_run_meta
from harness.server.identity import check_resume, record_identity, run_identity
from harness.server.session import TIMEOUT, Session, SpeechSource, TextSource

MAX_COMPAT_SEGMENT_MS = 60_000
Scorer = Callable[[Path], dict[str, Any]]


class Evaluation:
    """Serves one dataset of one track and records every finished instance."""

    def __init__(self, track: Track, dataset_name: str, dataset: Any, writer: LogWriter, limits: Limits,
                 clock: Callable[[], float] = time.monotonic, scorer: Scorer | None = None,
                 context: list[str] | None = None) -> None:
        self.track = track
        self.context = list(context or [])  # the dataset's context documents, as the participant names them
        self.dataset_name = dataset_name
        self.dataset = dataset
        self.writer = writer
        self.limits = limits
        self.clock = clock
        self.scorer = scorer
        self.max_hypothesis_chars = max(limits.max_hypothesis_chars, 10 * _longest_reference(dataset))
        self.sessions: dict[int, Session] = {}
        self.retired: dict[int, Session] = {}  # the last dropped attempt of an instance (what it served)
        self.finished: set[int] = writer.finished() & set(range(len(dataset)))
        self._lock = threading.RLock()
        self._done = threading.Event()
        self.on_done: list[Callable[[], None]] = []
        self.gate_file: str | None = None  # GET /gate stays closed until this file exists (`--gate-file`)
        self.first_request: dict[str, Any] | None = None  # run.json's `first_request` (see `saw_participant`)
        if self.is_done():
            self._done.set()

    # -- information ----------------------------------------------------------------------------------------
    @property
    def speech(self) -> bool:
        return self.track.is_speech

    @property
    def latency_unit(self) -> str:
        return "ms" if self.speech else self.track.latency_unit

    def pending(self) -> list[int]:
        with self._lock:
            return [i for i in range(len(self.dataset)) if i not in self.finished]

    def info(self) -> dict[str, Any]:
        """What a client may know: sizes and units, never source lengths or references."""
        return {
            "protocol": PROTOCOL_VERSION,
            "track": self.track.name,
            "dataset": self.dataset_name,
            "modality": self.track.modality,
            "source_lang": self.track.source_lang,
            "target_lang": self.track.target_lang,
            "latency_unit": self.latency_unit,
            "segment_size": self.track.segment_size,
            "num_instances": len(self.dataset),
            "pending": self.pending(),
            "context": list(self.context),
        }

    def is_done(self) -> bool:
        return len(self.finished) >= len(self.dataset)

    def wait_done(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def saw_participant(self, by: str = "request") -> None:
        """Note (once, in run.json) when the participant was first heard from, on this server's clock: its first
        request, or for an agent server the driver's first successful probe (`by="probe"`). The start-up time of
        `harness.run.compute` ends here."""
        if self.first_request is not None:
            return
        with self._lock:
            if self.first_request is not None:
                return
            self.first_request = {"at": round(time.time(), 6), "by": by}
            try:
                update_run_meta(layout.RunDir(self.writer.output), {FIRST_REQUEST: self.first_request})
            except (OSError, HarnessError) as exc:  # a measurement only: the participant's request goes on
                print(f"harness server: start-up time not recorded: {exc}".splitlines()[0], file=sys.stderr)

    # -- steps ----------------------------------------------------------------------------------------------
    def check_index(self, index: Any) -> int:
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.dataset):
            raise ProtocolError(f"unknown instance {index!r} (instances are 0..{len(self.dataset) - 1})", 404)
        return index

    def _open(self, index: int, now: float) -> Session:
        old = self.sessions.pop(index, None)
        if old is not None:
            old.retire()
        else:
            old = self.retired.pop(index, None)
        if self.speech:
            source: TextSource | SpeechSource = SpeechSource(self.dataset.open(index), self.track.segment_size)
        else:
            source = TextSource(self.dataset.words(index))
        session = Session(index, source, self.track.latency_unit, now, self.max_hypothesis_chars)
        if old is not None:
            session.inherit(old)
        self.sessions[index] = session
        return session

    def begin(self, index: int, req: StepRequest, t_arrive: float) -> Session:
        """Find (or open) the session of a step that arrived at `t_arrive`; raises ProtocolError."""
        index = self.check_index(index)
        self.saw_participant()
        with self._lock:
            if index in self.finished:
                rec = self.writer.records.get(index, {})
                raise ProtocolError(f"instance {index} already finished (status {rec.get('status', 'ok')})", 409)
            session = self.sessions.get(index)
            if session is not None and not req.start:
                self._expire(session, t_arrive)
                if session.finished:
                    raise ProtocolError(f"instance {index} ended: {session.status} ({session.error})", 409)
            if session is None or req.start:
                session = self._open(index, t_arrive)
            session.arrive(t_arrive)
            return session

    def apply(self, session: Session, req: StepRequest, segment_ms: float | None = None) -> StepResponse:
        """Apply a step to a session returned by `begin`; logs the instance when it ends."""
        with self._lock:
            try:
                response = session.step(req, segment_ms)
            except ProtocolError:
                session.depart(self.clock())
                if session.finished:
                    self._record(session)
                raise
            if session.finished:
                self._record(session)
            return response

    def depart(self, session: Session, t_depart: float) -> None:
        with self._lock:
            session.depart(t_depart)

    def step(self, index: int, req: StepRequest, segment_ms: float | None = None) -> StepResponse:
        """A whole step in-process: arrive, apply, depart (used without HTTP)."""
        session = self.begin(index, req, self.clock())
        response = self.apply(session, req, segment_ms)
        self.depart(session, self.clock())
        return response

    # -- ends -----------------------------------------------------------------------------------------------
    def _record(self, session: Session) -> None:
        if session.index in self.finished:
            return
        rec = session.record(self.dataset.source_info(session.index), self.dataset.reference_texts(session.index),
                             self.latency_unit)
        longform_info = getattr(self.dataset, "longform_info", None)
        if longform_info is not None:  # a whole recording: scoring resegments it onto these sentences
            rec["longform"] = longform_info(session.index, resegmentation=self.track.resegmentation,
                                            target_lang=self.track.target_lang)
        self.writer.write(rec)
        self.finished.add(session.index)
        self.sessions.pop(session.index, None)
        self.retired.pop(session.index, None)
        if self.is_done() and not self._done.is_set():
            self._done.set()
            for callback in list(self.on_done):
                callback()

    def _expire(self, session: Session, now: float) -> None:
        if session.finished or session.busy_since is not None:
            return
        if now - session.created > self.limits.instance_timeout_s:
            session.end(TIMEOUT, f"instance took longer than {self.limits.instance_timeout_s:g} s")
        elif now - session.last_depart > self.limits.idle_timeout_s:
            session.end(TIMEOUT, f"no request for {self.limits.idle_timeout_s:g} s")
        if session.finished:
            self._record(session)

    def expire(self, index: int, reason: str) -> None:
        """End instance `index` as `timeout` with `reason` (joint mode: its agent did not return in time)."""
        self.fail(index, TIMEOUT, reason)

    def fail(self, index: int, status: str, reason: str) -> None:
        """End instance `index` with `status` (a driver's verdict on the participant's answer) and log it."""
        with self._lock:
            if index in self.finished:
                return
            session = self.sessions.get(index) or self._open(index, self.clock())
            session.end(status, reason)
            self._record(session)

    def check_timeouts(self, now: float | None = None) -> None:
        """End every open session that has been idle or running too long (status `timeout`)."""
        now = self.clock() if now is None else now
        with self._lock:
            for session in list(self.sessions.values()):
                self._expire(session, now)

    def reset_unfinished(self) -> None:
        """Drop every unfinished attempt (the 2020 `POST /`); finished instances stay logged, and what was
        served stays served (the next attempt at an instance inherits it, see `Session.inherit`)."""
        with self._lock:
            for index, session in self.sessions.items():
                session.retire()
                self.retired[index] = session
            self.sessions.clear()

    def records(self) -> list[dict[str, Any]]:
        return self.writer.all_records()

    def scores(self) -> dict[str, Any]:
        """Scores of the log file (written and synced first), by the injected scorer; ProtocolError without one."""
        if self.scorer is None:
            raise ProtocolError("this server does not score (no scorer configured)", 501)
        self.writer.sync()
        return self.scorer(self.writer.path)

    def close(self) -> None:
        with self._lock:
            for session in self.sessions.values():
                session.source.close()
            self.sessions.clear()
            self.writer.close()


def _longest_reference(dataset: Any) -> int:
    """Characters of the longest reference of the dataset (any reference set)."""
    return max((len(t) for i in range(len(dataset)) for t in dataset.reference_texts(i).values()), default=0)


def open_evaluation(config_path: str | Path, dataset_name: str, output: str | Path, track_name: str | None = None,
                    resume: bool = False, overwrite: bool = False,
                    system: dict[str, Any] | None = None, context_root: str | None = None) -> Evaluation:
    """Load a config and dataset and open the log writer: everything a server or a joint run needs. `system`
    (a joint run's agent, see `server.identity`) joins the run's identity, so a resume by another one is refused.
    The dataset's context documents are named under `context_root` (the participant's mount), else by their
    host paths."""
    from harness.config import load_config, require_dataset_files
    from harness.data.context import context_paths
    from harness.data.domains import require_domains
    from harness.data.loader import load_dataset

    config = load_config(config_path, check_files=False)  # only this dataset's files need to exist
    track = config.track(track_name)
    ds = track.dataset(dataset_name)
    require_dataset_files(config, track, dataset_name)
    require_domains(config, track, dataset_name)
    dataset = load_dataset(track.modality, ds.source, ds.references, ds.segmentation, ds.transcripts)
    run = layout.RunDir(Path(output))
    identity = run_identity(config, track, dataset_name, system)
    if resume:
        check_resume(run, identity)
    writer = LogWriter(Path(output), resume=resume, overwrite=overwrite)
    record_identity(run, identity)
    # what a live viewer counts against, and the language scoring needs (`harness score RUN` reads it); the start-up
    # time of an earlier server of this folder is not this one's
    update_run_meta(run, {"expected_instances": len(dataset), "target_lang": track.target_lang},
                    remove=(FIRST_REQUEST,))
    return Evaluation(track, dataset_name, dataset, writer, config.limits, context=context_paths(ds, context_root))
