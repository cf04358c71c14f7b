"""The local backend of `execute_run`: server and participant as processes on this host, no isolation
(`harness validate --no-docker`, for quick iterations). The participant's working directory is the submission
folder, so its command should use paths relative to the image's WORKDIR."""

from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

from harness import layout
from harness.data.context import CONTEXT_ENV, PREPARED_ENV, host_context_list
from harness.protocol import LISTENING_LINE
from harness.run import failures
from harness.run.sandbox import SandboxPolicy
from harness.run.spec import RunResult, RunSpec, participant_argv, server_command
from harness.run.tail import log_tail
from harness.run.watch import SERVER_READY_TIMEOUT_S, LogPump, ServerOutput

HOST = "127.0.0.1"
SERVER_LOG_MAX_BYTES = 5_000_000
#: the sandbox's container-only variables (paths inside the image) are left out of a local environment
_CONTAINER_ONLY = ("HOME", "TMPDIR", "XDG_CACHE_HOME")


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _pump(proc: subprocess.Popen[bytes], path: Path, max_bytes: int, watch_for: str | None = None) -> LogPump:
    assert proc.stdout is not None
    out = cast(io.BufferedReader, proc.stdout)  # unbuffered pipes of Popen are BufferedReaders
    pump = LogPump(lambda: iter(lambda: out.read1(65536), b""), path, max_bytes, drain=True, watch_for=watch_for)
    pump.start()
    return pump


class _Process:
    """The participant process (its own session, so its children die with it) as the watchdog sees it."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def wait(self, seconds: float) -> int | None:
        try:
            return self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class LocalBackend:
    """One run as local processes; `workdir` is the participant's working directory (the submission folder)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.server: subprocess.Popen[bytes] | None = None
        self.server_pump: LogPump | None = None
        self.client: _Process | None = None
        self.started: float | None = None  # epoch seconds the participant's process was launched
        self.client_pump: LogPump | None = None
        self.extra_env: dict[str, str] = {}  # the context list and the prepared folder (see `prepare`)
        self.stage: Path | None = None

    def start_server(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        argv = [sys.executable, "-m", *server_command(spec, self.port, HOST, participant_host=HOST,
                                                              context_root=None)]
        self.server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        self.server_pump = _pump(self.server, run_dir.server_log, SERVER_LOG_MAX_BYTES, watch_for=LISTENING_LINE)

    def prepare(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        """The context as a list of host paths and `prepare:` as a local process in the submission folder (no
        isolation: the network is not turned off here), killed at `limits.prepare_timeout_s`."""
        self.extra_env = {}
        if spec.dataset.context is None and not spec.prepare:
            return
        self.stage = Path(tempfile.mkdtemp(prefix=f"harness-{spec.run_id}-context-"))
        if spec.dataset.context is not None:
            self.extra_env[CONTEXT_ENV] = str(host_context_list(spec.dataset, self.stage / "context"))
        if spec.prepare:
            prepared = self.stage / "prepared"
            prepared.mkdir()
            self.extra_env[PREPARED_ENV] = str(prepared)
            self._run_prepare(spec, run_dir, timings)

    def _run_prepare(self, spec: RunSpec, run_dir: layout.RunDir, timings: dict[str, float]) -> None:
        limits = spec.config.limits
        t0 = time.monotonic()
        with open(run_dir.prepare_log, "wb") as log:
            proc = subprocess.Popen(participant_argv(list(spec.prepare or ())), cwd=self.workdir,
                                    env={**os.environ, **self.extra_env}, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            code = _Process(proc).wait(limits.prepare_timeout_s)
            if code is None:
                _Process(proc).kill()
                proc.wait()
        timings["prepare_s"] = time.monotonic() - t0
        failed = failures.prepare_outcome(code, False, limits.prepare_timeout_s, log_tail(run_dir.prepare_log))
        if failed is not None:
            raise failed

    def prepare_participant(self, spec: RunSpec) -> None:
        return None

    def wait_server_ready(self, run_dir: layout.RunDir) -> None:
        assert self.server is not None
        assert self.server_pump is not None
        if not self.server_pump.wait_for_line(SERVER_READY_TIMEOUT_S) or self.server.poll() is not None:
            raise failures.InfraError(f"local server not healthy (see {run_dir.server_log})")

    def start_participant(self, spec: RunSpec, run_dir: layout.RunDir) -> _Process:
        url = f"http://{HOST}:{self.port}"
        env = SandboxPolicy.from_limits(spec.config.limits).environment(url, HOST, self.port)
        env = {**os.environ, **{k: v for k, v in env.items() if k not in _CONTAINER_ONLY}, **self.extra_env}
        if not spec.command:
            raise failures.ParticipantStartError("without Docker an agent-server submission needs a command: in "
                                                 "submission.yaml (the image's own command is not known here)")
        argv = participant_argv(spec.command)
        self.started = time.time()
        try:
            proc = subprocess.Popen(argv, cwd=self.workdir, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except FileNotFoundError:
            raise failures.ParticipantStartError(f"executable file not found: {argv[0]}") from None
        except PermissionError:
            raise failures.ParticipantStartError(f"not executable: {argv[0]}") from None
        self.client = _Process(proc)
        self.client_pump = _pump(proc, run_dir.client_log, spec.config.limits.client_log_max_bytes)
        return self.client

    def participant_started_at(self) -> float | None:
        """When the participant's process was launched, epoch seconds."""
        return self.started

    def server_output(self) -> ServerOutput:
        assert self.server_pump is not None
        return self.server_pump

    def collect(self, result: RunResult, run_dir: layout.RunDir) -> None:
        assert self.client_pump is not None and self.server is not None
        self.client_pump.join(5)
        result.client_log_truncated = self.client_pump.truncated

    def server_exit(self) -> str | None:
        assert self.server is not None
        code = self.server.poll()
        return None if code is None else f"exited with code {code}"

    def teardown(self) -> None:
        if self.client is not None and self.client.proc.poll() is None:
            self.client.kill()
            self.client.proc.wait()
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        if self.server_pump is not None:
            self.server_pump.join(2)
        if self.stage is not None:
            shutil.rmtree(self.stage, ignore_errors=True)
