"""Run a submission's `fetch:` command into its cache volume (or find it cached), on this host's Docker engine.

The containers, all labelled as the run's (a killed harness's leftovers go at the next start):
  proxy    the harness base image running `proxy.py`: on the fetch's internal network (alias `proxy`) and on
           `fetch.network`, the one way out; unprivileged, read-only, small limits
  guard    the base image running `volume_tool.py watch`: the volume read-only, no network; it ends the fetch
           when the volume holds more than `limits.fetch_bytes` (checked every half second, and once at the end)
  fetch    the submission's image with its `fetch:` command, under the run's sandbox policy (user, limits,
           GPUs), on the internal network only, the volume writable at `/fetched`, `HTTP(S)_PROXY` set and the
           organizer's secrets in its environment; no data, no server, no run folder
Its output goes to fetch.log and the proxy's to fetch-proxy.log, secrets masked; a host the proxy refused is
named in the failure's reason. A fetch that does not end well leaves no volume behind.
"""

from __future__ import annotations

import fcntl
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config import TaskConfig
from harness.run import failures, network
from harness.run.fetch import FETCH_ENV, FETCH_ROOT, cache
from harness.run.fetch.secrets import mask, mask_bytes, secret_values
from harness.run.sandbox import NOBODY, SandboxPolicy, participant_user
from harness.run.spec import participant_argv
from harness.run.tail import log_tail
from harness.sizes import parse_bytes

PROXY_ALIAS = "proxy"
PROXY_PORT = 3128
PROXY_READY_S = 60.0
LOG_MAX_BYTES = 1_000_000
_HERE = Path(__file__).resolve().parent
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass
class FetchRequest:
    """What one fetch needs: the submission's image and command, the task config (limits, allow-list, secrets),
    the harness's base image for the proxy and guard, and where its logs go."""

    image_id: str
    image_digest: str
    command: tuple[str, ...]
    image_user: str | None
    config: TaskConfig
    helper_image: str
    log: Path
    proxy_log: Path
    refetch: bool = False
    run_id: str = ""


@dataclass
class FetchResult:
    """A filled cache volume: fetched now or found cached (then bytes and seconds are the earlier fetch's)."""

    volume: str
    key: str
    cached: bool
    bytes: int
    fetch_s: float
    refused: list[str] = field(default_factory=list)

    def manifest(self, req: FetchRequest) -> dict[str, Any]:
        return {"command": list(req.command), "volume": self.volume, "key": self.key, "cached": self.cached,
                "bytes": self.bytes, "fetch_s": round(self.fetch_s, 3), "mount": FETCH_ROOT,
                "allow": list(req.config.fetch.allow), "network": req.config.fetch.network,
                "secrets": list(req.config.secrets), "refused": self.refused}


def _thread_lock(key: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


@contextmanager
def _locked(key: str) -> Iterator[None]:
    """One fetch of `key` at a time: among this harness's threads (a lock) and among the harness processes of this
    host (a lock file beside the cache's records), so that a second one waits and then finds the first one's volume."""
    folder = cache.lock_folder()
    with _thread_lock(key), open(folder / f"{cache.volume_name(key)}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_fetched(api: Any, req: FetchRequest) -> FetchResult:
    """The submission's filled volume: cached (same image digest and command, fetch finished) unless
    `req.refetch`, else fetched now. `failures.FetchFailed` when the fetch fails, `failures.InfraError` when the
    harness cannot run it."""
    key = cache.cache_key(req.image_digest, req.command)
    volume = cache.volume_name(key)
    with _locked(key):
        if req.refetch:
            cache.forget(api, volume)
        rec = cache.read_record(volume, key)
        if rec is not None and _volume_exists(api, volume):
            return FetchResult(volume, key, True, int(rec.get("bytes") or 0), float(rec.get("fetch_s") or 0.0))
        cache.forget(api, volume)  # an interrupted fetch's leftovers
        api.create_volume(volume, labels=cache.volume_labels(key, req.image_digest, req.image_id, req.command))
        try:
            result = _Fetch(api, req, volume, key).run()
        except BaseException:
            _quietly(cache.forget, api, volume)
            raise
        cache.write_record(volume, {"key": key, "image": req.image_digest, "command": list(req.command),
                                    "bytes": result.bytes, "fetch_s": round(result.fetch_s, 3),
                                    "allow": list(req.config.fetch.allow)})
        return result


def _volume_exists(api: Any, volume: str) -> bool:
    import docker.errors

    try:
        api.inspect_volume(volume)
        return True
    except docker.errors.NotFound:
        return False


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - cleanup: the next start removes what is left
        pass


def _script(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


def _helper_host_config(api: Any, volume: str, read_only: bool, caps: list[str]) -> Any:
    from docker.types import LogConfig

    return api.create_host_config(
        binds=[f"{volume}:/volume:{'ro' if read_only else 'rw'}"], network_mode="none", cap_drop=["ALL"],
        cap_add=caps, security_opt=["no-new-privileges:true"], read_only=True, mem_limit=256 * 1024**2,
        pids_limit=32, log_config=LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}))


class _Fetch:
    """One fetch into a fresh volume: network, proxy, guard, the fetch container, then everything removed."""

    def __init__(self, api: Any, req: FetchRequest, volume: str, key: str) -> None:
        self.api, self.req, self.volume, self.key = api, req, volume, key
        self.run_id = req.run_id or key[:12]
        self.containers: list[str] = []
        self.net: dict[str, Any] | None = None
        self.proxy = ""  # the proxy's container, once made
        self.secrets = secret_values(req.config)
        self.limit = parse_bytes(req.config.limits.fetch_bytes)

    def run(self) -> FetchResult:
        try:
            user = self._user()
            self._helper(["init", *user.split(":")[:2]], read_only=False, caps=["CHOWN"])
            self.net = network.create_network(self.api, f"harness-{self.run_id}-fetch-net", self.run_id)
            self._start_proxy()
            guard = self._create(self.req.helper_image, ["python3", "-c", _script("volume_tool.py"), "watch",
                                                         str(self.limit)], "0:0", "fetch-guard",
                                 _helper_host_config(self.api, self.volume, True, ["DAC_READ_SEARCH"]))
            self.api.start(guard)
            fetch = self._create_fetch(user)
            t0 = time.monotonic()
            self._start_fetch(fetch)
            code, over = self._wait(fetch, guard)
            fetch_s = time.monotonic() - t0
            state = self.api.inspect_container(fetch)["State"]
            self._save_logs(fetch)
            refused = self._refused()
            self._verdict(code, over, bool(state.get("OOMKilled")), refused)
            used = self._measure()
            if used > self.limit:
                self._verdict(0, used, False, refused)
            return FetchResult(self.volume, self.key, False, used, fetch_s, refused)
        finally:
            self._teardown()

    def _user(self) -> str:
        if self.req.image_user is not None:
            return participant_user(self.req.image_user)
        return participant_user(self.api.inspect_image(self.req.image_id)["Config"].get("User"))

    def _create(self, image: str, argv: list[str], user: str, role: str, host_config: Any,
                environment: dict[str, str] | None = None, alias_net: str | None = None) -> str:
        networking = None
        if alias_net is not None:
            networking = self.api.create_networking_config(
                {alias_net: self.api.create_endpoint_config(aliases=[PROXY_ALIAS])})
        cid = self.api.create_container(
            image, entrypoint=argv[:1], command=argv[1:], user=user, environment=environment or {},
            name=f"harness-{self.run_id}-{role}-{len(self.containers)}", labels=network.labels(self.run_id, role),
            host_config=host_config, networking_config=networking)["Id"]
        self.containers.append(cid)
        return str(cid)

    def _helper(self, args: list[str], read_only: bool, caps: list[str]) -> str:
        """Run `volume_tool.py ARGS` to its end; its output (InfraError when it fails)."""
        from harness.run.docker_backend import wait_exit

        cid = self._create(self.req.helper_image, ["python3", "-c", _script("volume_tool.py"), *args], "0:0",
                           "fetch-helper", _helper_host_config(self.api, self.volume, read_only, caps))
        self.api.start(cid)
        code = wait_exit(self.api, cid, 300)
        out = self.api.logs(cid, stdout=True, stderr=True).decode("utf-8", "replace").strip()
        if code != 0:
            raise failures.InfraError(f"fetch: the volume helper ({args[0]}) failed: {out[-200:]}")
        return str(out)

    def _start_proxy(self) -> None:
        """The proxy on the internal network (alias `proxy`) and on `fetch.network`; returns once it listens."""
        import docker.errors
        from docker.types import LogConfig

        assert self.net is not None
        egress = self.req.config.fetch.network
        try:
            self.api.inspect_network(egress)
        except docker.errors.NotFound:
            raise failures.InfraError(f"fetch: fetch.network {egress!r}: no such Docker network") from None
        allow = [a for entry in self.req.config.fetch.allow for a in ("--allow", entry)]
        hc = self.api.create_host_config(
            network_mode=self.net["Name"], cap_drop=["ALL"], security_opt=["no-new-privileges:true"],
            read_only=True, mem_limit=256 * 1024**2, pids_limit=64, init=True,
            log_config=LogConfig(type="json-file", config={"max-size": "5m", "max-file": "1"}))
        self.proxy = self._create(self.req.helper_image, ["python3", "-c", _script("proxy.py"), "--port",
                                                          str(PROXY_PORT), *allow], NOBODY, "fetch-proxy", hc,
                                  alias_net=self.net["Name"])
        self.api.connect_container_to_network(self.proxy, egress)
        self.api.start(self.proxy)
        deadline = time.monotonic() + PROXY_READY_S
        while b'"listening"' not in self.api.logs(self.proxy, stdout=True, stderr=False):
            state = self.api.inspect_container(self.proxy)["State"]
            if not state.get("Running") or time.monotonic() > deadline:
                tail = self.api.logs(self.proxy, stdout=True, stderr=True).decode("utf-8", "replace")[-200:]
                raise failures.InfraError(f"fetch: the proxy did not start: {' '.join(tail.split())}")
            time.sleep(0.1)

    def _create_fetch(self, user: str) -> str:
        assert self.net is not None
        policy = SandboxPolicy.from_limits(self.req.config.limits)
        host_args = policy.host_config_args(self.net["Name"])
        host_args["binds"] = [f"{self.volume}:{FETCH_ROOT}:rw"]
        url = f"http://{PROXY_ALIAS}:{PROXY_PORT}"
        env = {k: v for k, v in policy.environment("", "", 0).items() if not k.startswith(("HARNESS_SERVER",
                                                                                          "SERVER"))}
        env.update({FETCH_ENV: FETCH_ROOT, "HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url,
                    "https_proxy": url, "NO_PROXY": "", "no_proxy": ""}, **self.secrets)
        return self._create(self.req.image_id, participant_argv(list(self.req.command)), user, "fetch",
                            self.api.create_host_config(**host_args), environment=env)

    def _start_fetch(self, cid: str) -> None:
        import docker

        try:
            self.api.start(cid)
        except docker.errors.APIError as exc:
            reason = failures.start_failure(str(exc))
            detail = mask(str(getattr(exc, "explanation", None) or exc).splitlines()[0], self.secrets)
            if reason is None:
                raise failures.InfraError(f"fetch: the engine could not start it: {detail}") from None
            raise failures.FetchFailed(failures.CRASH, f"fetch: {mask(reason, self.secrets)}") from None

    def _wait(self, fetch: str, guard: str) -> tuple[int | None, int | None]:
        """(the fetch's exit code, None when it outlived its limit; the bytes the guard saw past the quota)."""
        deadline = time.monotonic() + self.req.config.limits.fetch_timeout_s
        while True:
            state = self.api.inspect_container(fetch)["State"]
            if not state.get("Running") and state.get("Status") in ("exited", "dead"):
                return int(state.get("ExitCode", -1)), None
            guard_state = self.api.inspect_container(guard)["State"]
            if not guard_state.get("Running") and guard_state.get("ExitCode") == 3:
                self._kill(fetch)
                words = self.api.logs(guard, stdout=True, stderr=False).decode("ascii", "replace").split()
                return -1, int(words[-1]) if words and words[-1].isdigit() else self.limit + 1
            if time.monotonic() > deadline:
                self._kill(fetch)
                return None, None
            time.sleep(0.2)

    def _kill(self, cid: str) -> None:
        _quietly(self.api.kill, cid)

    def _save_logs(self, fetch: str) -> None:
        data = self.api.logs(fetch, stdout=True, stderr=True)[-LOG_MAX_BYTES:]
        self.req.log.parent.mkdir(parents=True, exist_ok=True)
        self.req.log.write_bytes(mask_bytes(data, self.secrets))
        proxy = self.api.logs(self.proxy, stdout=True, stderr=True)[-LOG_MAX_BYTES:] if self.proxy else b""
        self.req.proxy_log.write_bytes(mask_bytes(proxy, self.secrets))

    def _refused(self) -> list[str]:
        """`HOST:PORT` of every request the proxy refused (in order, once each)."""
        out: list[str] = []
        for line in self.req.proxy_log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "refused":
                where = f"{event.get('host', '?')}:{event.get('port', '?')}"
                if where not in out:
                    out.append(where)
        return out

    def _verdict(self, code: int | None, over: int | None, oom: bool, refused: list[str]) -> None:
        """Raise the fetch's failure, if it failed (every text masked)."""
        limits = self.req.config.limits
        tail = mask(log_tail(self.req.log), self.secrets)
        after = f": {tail}" if tail else ""
        why = (f" (the proxy refused {', '.join(refused[:3])}{' …' if len(refused) > 3 else ''}: not in "
               f"fetch.allow)") if refused else ""
        if over is not None:
            raise failures.FetchFailed(failures.CRASH, f"fetch: wrote more than limits.fetch_bytes "
                                                        f"({limits.fetch_bytes}): {over} bytes")
        if code is None:
            raise failures.FetchFailed(failures.TIMEOUT, f"fetch: did not finish within limits.fetch_timeout_s "
                                                          f"({limits.fetch_timeout_s:g} s){why}")
        if oom:
            raise failures.FetchFailed(failures.OOM, f"fetch: ran out of memory (exit code {code}){why}{after}")
        if code != 0:
            raise failures.FetchFailed(failures.CRASH, f"fetch: exited with code {code}{why}{after}")

    def _measure(self) -> int:
        out = self._helper(["measure"], read_only=True, caps=["DAC_READ_SEARCH"])
        words = out.split()
        if len(words) < 2 or words[0] != "bytes" or not words[1].isdigit():
            raise failures.InfraError(f"fetch: cannot measure the volume: {out[-200:]}")
        return int(words[1])

    def _teardown(self) -> None:
        for cid in self.containers:
            _quietly(lambda c: self.api.remove_container(c, force=True, v=True), cid)
        if self.net is not None:
            _quietly(self.api.remove_network, self.net["Id"])
