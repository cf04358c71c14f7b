"""The portal's queue: picks queued jobs fairly (fairness.py) and evaluates them with `harness evaluate` into
`STATE/results`, one evaluation at a time (several submissions of one dataset in one, `--workers` of them), so the
results folder is written exactly as the command writes it. Each job's state follows the evaluation's progress
lines; its end comes from `summary.json`. The evaluation dies with the portal (PR_SET_PDEATHSIG), and a portal
started again queues what was at work (`Store.requeue_interrupted`); `--resume` redoes only unfinished runs."""

from __future__ import annotations

import ctypes
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness import layout
from harness.errors import HarnessError
from harness.images.pinned import PULL_CONFIG_VARIABLE
from harness.jsonio import read_json_or_none
from harness.portal.fairness import pick_fair
from harness.portal.lifecycle import OUR_FAULT, JobState, can_move, outcome
from harness.portal.pinned import pull_config, remove_pull_config
from harness.portal.store import Job, Store

#: the instance counter of a progress line of `harness evaluate` (printed when not on a terminal)
COUNTS = re.compile(r"^\d+/\d+$")
_STATE_OF_WORD = {"checking": JobState.BUILDING, "building": JobState.BUILDING, "fetching": JobState.BUILDING,
                  "starting": JobState.RUNNING, "running": JobState.RUNNING, "scoring": JobState.SCORING}


@dataclass
class Batch:
    """One `harness evaluate` at work: its jobs by submission id, and the ones cancelled while it ran."""

    dataset: str
    jobs: dict[str, Job]
    redo: bool = False  # evaluated anew (`--overwrite`: a finished run's folder is kept under versions/)
    process: subprocess.Popen[str] | None = None
    cancelled: set[str] = field(default_factory=set)
    stderr: list[str] = field(default_factory=list)  # its last lines on standard error (no progress lines)


class Queue:
    """Evaluates queued jobs in the background; `wake()` after a change, `stop()` at shutdown."""

    def __init__(self, store: Store, state: Path, config: Path, per_team: int = 2, workers: int = 2,
                 extra_args: tuple[str, ...] = (), registry: str | None = None) -> None:
        self.store, self.state, self.config = store, state, config
        self.registry = registry  # the organizer's registry: its images are pulled with a token the portal signs
        self.per_team, self.workers, self.extra_args = per_team, workers, extra_args
        self.results = state / "results"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._batch: Batch | None = None
        self._served: dict[str, int] = {}
        self._turn = 0
        self._thread = threading.Thread(target=self._loop, name="portal-queue", daemon=True)
        self.idle = threading.Event()  # set whenever the queue has nothing to start and nothing at work
        self.after_batch: Callable[[str], object] | None = None  # called with the dataset of each finished batch

    def start(self) -> None:
        self.store.requeue_interrupted()
        self._thread.start()

    def wake(self) -> None:
        self.idle.clear()
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        with self._lock:
            batch = self._batch
        if batch is not None and batch.process is not None and batch.process.poll() is None:
            batch.process.send_signal(signal.SIGTERM)
        self._thread.join(timeout=120)

    def at_work(self) -> dict[str, int]:
        """Each team's jobs in the evaluation at work now."""
        with self._lock:
            batch = self._batch
        counts: dict[str, int] = {}
        for job in batch.jobs.values() if batch is not None else ():
            counts[job.team] = counts.get(job.team, 0) + 1
        return counts

    def cancel(self, job: Job, who: str) -> Job:
        """Cancel a job: a queued one at once; one at work by stopping its evaluation (the batch's other jobs are
        queued again, in their place, and count against nothing)."""
        with self._lock:
            batch = self._batch
            at_work = batch is not None and job.submission in batch.jobs
            if at_work and batch is not None:
                batch.cancelled.add(job.submission)
                if batch.process is not None and batch.process.poll() is None:
                    batch.process.send_signal(signal.SIGTERM)
        if not at_work:
            job = self.store.move(job.id, JobState.CANCELLED, who=who, reason=f"cancelled by {who}")
        self.wake()
        return job

    # ------------------------------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while not self._stop.is_set():
            batch = self._next_batch()
            if batch is None:
                self.idle.set()
                self._wake.wait(timeout=5)
                self._wake.clear()
                continue
            self._run(batch)

    def _next_batch(self) -> Batch | None:
        queued = self.store.jobs(states=(JobState.QUEUED,))
        if not queued:
            return None
        first = min(queued, key=lambda j: j.seq)
        redo = first.attempts > 0  # re-queued or interrupted: evaluated anew (--overwrite), alone
        same = [j for j in queued if j.dataset == first.dataset and (j.attempts > 0) == redo]
        chosen = pick_fair(same, Counter(), set(), self.per_team, 1 if redo else self.workers, self._served)
        jobs = {j.submission: j for j in chosen if isinstance(j, Job)}
        for job in jobs.values():
            self._turn += 1
            self._served[job.team] = self._turn
        return Batch(first.dataset, jobs, redo=redo) if jobs else None

    def _run(self, batch: Batch) -> None:
        for job in batch.jobs.values():
            self.store.move(job.id, JobState.BUILDING)
        args = [sys.executable, "-m", "harness", "evaluate",
                *(f"{sub}={self.store_folder(sub)}" for sub in batch.jobs), "--config", str(self.config),
                "--output", str(self.results), "--dataset", batch.dataset, "--overwrite" if batch.redo else "--resume",
                "--workers", str(len(batch.jobs)), *self.extra_args]
        try:  # images in the organizer's registry are pulled with a token of the portal's (harness.portal.pinned)
            pulls = pull_config(self.state, self.registry, [self.store_folder(sub) for sub in batch.jobs])
        except HarnessError as exc:  # then the engine's own login is tried
            print(f"harness portal: no pull token for the registry: {exc}", file=sys.stderr, flush=True)
            pulls = None
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **({PULL_CONFIG_VARIABLE: str(pulls)} if pulls else {})}
        try:
            log_path = self.evaluation_log()  # a file, not a pipe: a pipe would break with a killed portal, and
            with log_path.open("w", encoding="utf-8") as log, self._lock:  # the evaluation's teardown with it
                batch.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, text=True,
                                                 stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent, env=env)
                self._batch = batch
            ended = threading.Event()
            counting = threading.Thread(target=self._count, args=(batch, ended), daemon=True)
            counting.start()
            self._follow(batch, _tail(log_path, batch.process))
            code = batch.process.wait()
        finally:
            remove_pull_config(pulls)
        ended.set()
        counting.join(timeout=30)
        with self._lock:
            self._batch = None
        self._finish(batch, code)
        if self.after_batch is not None:
            try:
                self.after_batch(batch.dataset)
            except Exception as exc:  # a board that cannot be rendered stops no evaluation: say so
                print(f"harness portal: after {batch.dataset}: {exc}", file=sys.stderr, flush=True)

    def evaluation_log(self) -> Path:
        """A new file for one evaluation's output (its progress lines and its last words), kept in STATE/logs/."""
        folder = self.state / "logs"
        folder.mkdir(exist_ok=True)
        return folder / f"evaluate-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}.log"

    def store_folder(self, submission: str) -> Path:
        sub = self.store.submission(submission)
        assert sub is not None
        return Path(sub.folder)

    def _follow(self, batch: Batch, lines: Iterable[str]) -> None:
        """Move each job along as the evaluation's progress lines say ("ID DATASET STATE [DONE/TOTAL] TIME"); the
        other lines are kept (the last one is the reason when the evaluation fails)."""
        for line in lines:
            parts = line.split()
            if len(parts) < 3 or parts[0] not in batch.jobs:
                batch.stderr.append(line)
                del batch.stderr[:-50]
            if len(parts) < 3 or parts[0] not in batch.jobs or parts[1] != batch.dataset:
                continue
            current = self.store.job(batch.jobs[parts[0]].id)
            if current is None:
                continue
            counts = next((p for p in parts[3:] if COUNTS.match(p)), None)
            if counts is not None:  # never below what instances.log already showed
                done, total = counts.split("/")
                self.store.progress(current.id, max(int(done), current.done), int(total))
            new = _STATE_OF_WORD.get(parts[2])
            if new is not None and current.state != new and can_move(current.state, new):
                self.store.move(current.id, new)

    def _count(self, batch: Batch, ended: threading.Event, every_s: float = 1.0) -> None:
        """Instances done, from each run's instances.log (a record is written when its instance ends), until the
        evaluation ends."""
        results = layout.ResultsDir(self.results)
        while not ended.wait(every_s):
            for sub, job in batch.jobs.items():
                done = _lines(results.run(sub, batch.dataset).instances_log)
                current = self.store.job(job.id)
                if current is not None and current.state == JobState.RUNNING and done > current.done:
                    self.store.progress(job.id, done, max(current.total, done))

    def _finish(self, batch: Batch, code: int) -> None:
        """Each job's end: cancelled ones cancelled, the others from summary.json (or, when the evaluation could
        not start or was stopped, queued again or failed through our fault with its one line)."""
        summary = read_json_or_none(layout.ResultsDir(self.results).summary)
        runs = {(r.get("submission"), r.get("dataset")): r for r in
                (summary.get("runs") or [] if isinstance(summary, dict) else []) if isinstance(r, dict)}
        stopped = self._stop.is_set()
        for sub, job in batch.jobs.items():
            if sub in batch.cancelled:
                reason = self.store.withdrawn(sub)[0]
                self.store.move(job.id, JobState.WITHDRAWN if reason else JobState.CANCELLED, who="portal",
                                reason=reason or "cancelled while it ran")
                continue
            run = runs.get((sub, batch.dataset))
            if stopped or (batch.cancelled and (run is None or _unfinished(run))):
                self.store.move(job.id, JobState.QUEUED)  # not its fault: again, in its place
                continue
            if run is None or code not in (0, 1):
                why = batch.stderr[-1].strip() if batch.stderr else f"harness evaluate exited {code}"
                self.store.move(job.id, JobState.FAILED, failure=sorted(OUR_FAULT)[0], reason=why[:500])
                continue
            state, failure = outcome(str(run.get("status")))
            self.store.move(job.id, state, failure=failure, reason=run.get("reason"))
        self.wake()


def _unfinished(run: dict) -> bool:
    return run.get("status") is None


def _lines(path: Path) -> int:
    """The number of whole lines of a file (0 when it is not there yet)."""
    try:
        with path.open("rb") as f:
            return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return 0


def _tail(path: Path, process: subprocess.Popen[str], every_s: float = 0.1) -> Iterator[str]:
    """The lines of `path` as `process` writes them, until it has ended and all of them are read."""
    with path.open(encoding="utf-8", errors="replace") as f:
        pending = ""
        while True:
            pending += f.readline()
            if pending.endswith("\n"):
                yield pending
                pending = ""
            elif process.poll() is not None:
                rest = pending + f.read()  # what it wrote between the last read and its end
                yield from (line + "\n" for line in rest.splitlines())
                return
            else:
                time.sleep(every_s)


def _die_with_parent() -> None:
    """In the child: SIGTERM when the portal dies (even by SIGKILL), so its runs are torn down."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass
