"""The confinement of a run's containers, and reading back what Docker actually applied.

The participant's policy is data (`SandboxPolicy`), turned into Docker API arguments by `host_config_args`;
`applied_isolation` reads the same flags back from `docker inspect`, which is what the manifest records (never the
request).

The server container is confined too (`server_host_config`; it is harness code, but every byte it holds comes from
the participant): its own memory and pids limits (`limits.server_memory`, `limits.server_pids`), an unprivileged
user (`SERVER_UID` when the harness runs as root, which gives it the run folder), no capabilities, no new
privileges, a read-only root, the data read-only (`data_paths`) and write access to its run's folder only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.config import Limits, TaskConfig, data_files
from harness.sizes import parse_bytes

if TYPE_CHECKING:
    from harness.run.spec import RunSpec

NOBODY = "65534:65534"
#: Names whose uid is known: the base image's own non-root user (Dockerfile.base).
KNOWN_USERS = {"participant": "10001:10001"}
TMPFS_OPTIONS = "rw,nosuid,nodev,size={size}"  # exec allowed: JIT compilers load code from /tmp
#: The server's user when the harness runs as root: unprivileged and not the base image's participant (10001).
SERVER_UID = 10002
SERVER_TMPFS = "rw,nosuid,nodev,size=64m"
SERVER_LOG_MAX_SIZE = "20m"


def participant_user(image_user: str | None) -> str:
    """The user the participant runs as: the image's own user if it is a numeric non-root uid, else nobody.

    Names are not trusted (a name could map to uid 0 inside the image), so only numbers are kept, and the base
    image's `participant` (uid 10001).
    """
    u = (image_user or "").strip()
    if u in KNOWN_USERS:
        return KNOWN_USERS[u]
    m = re.fullmatch(r"(\d+)(?::(\d+))?", u)
    if m and int(m.group(1)) != 0:
        return u if m.group(2) is not None else f"{m.group(1)}:{m.group(1)}"
    return NOBODY


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything that confines a participant container."""

    memory: int
    cpus: float
    pids: int
    shm_size: int
    gpus: tuple[str, ...] = ()
    tmpfs_size: str = "128m"
    nofile: int = 4096
    log_max_size: str = "20m"
    env_extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_limits(cls, limits: Limits) -> SandboxPolicy:
        """The policy for a task config's `limits:`."""
        return cls(
            memory=parse_bytes(limits.memory),
            cpus=float(limits.cpus),
            pids=int(limits.pids),
            shm_size=parse_bytes(limits.shm_size),
            gpus=tuple(limits.gpus),
        )

    def host_config_args(self, network: str) -> dict[str, Any]:
        """Keyword arguments for `docker.APIClient.create_host_config` (network attached, nothing mounted)."""
        from docker.types import DeviceRequest, LogConfig, Ulimit

        args: dict[str, Any] = {
            "network_mode": network,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true"],
            "read_only": True,
            "tmpfs": {"/tmp": TMPFS_OPTIONS.format(size=self.tmpfs_size)},
            "mem_limit": self.memory,
            "memswap_limit": self.memory,  # no swap: the limit is the limit
            "nano_cpus": int(self.cpus * 1e9),
            "pids_limit": self.pids,
            "shm_size": self.shm_size,
            "ipc_mode": "private",
            "ulimits": [Ulimit(name="nofile", soft=self.nofile, hard=self.nofile)],
            "log_config": LogConfig(type="json-file", config={"max-size": self.log_max_size, "max-file": "1"}),
            "privileged": False,
        }
        if self.gpus:
            args["device_requests"] = [DeviceRequest(driver="nvidia", device_ids=list(self.gpus),
                                                     capabilities=[["gpu"]])]
        return args

    def environment(self, server_url: str, host: str, port: int) -> dict[str, str]:
        """The participant's environment: the server URL under the harness name and the 2020 names."""
        return {
            "HARNESS_SERVER_URL": server_url,
            "SERVER_URL": server_url,
            "SERVER_HOST": host,
            "SERVER_PORT": str(port),
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "XDG_CACHE_HOME": "/tmp/.cache",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            **self.env_extra,
        }


def data_paths(config: TaskConfig) -> list[Path]:
    """Files and folders the server needs, to be mounted read-only at their own absolute paths: every file of
    every dataset (`harness.config.data_files`), a speech recording by its folder."""
    paths: set[Path] = {config.path}
    for track in config.tracks:
        for ds in track.datasets.values():
            for f in data_files(ds, track.is_speech):
                if f.kind == "audio":
                    paths.add(f.path.parent)
                elif f.path.exists():
                    paths.add(f.path)
    paths = {p for p in paths if p.exists()}
    dirs = sorted(p for p in paths if p.is_dir())
    keep = [d for d in dirs if not any(d != o and o in d.parents for o in dirs)]
    return keep + sorted(p for p in paths if p.is_file() and not any(d in p.parents for d in keep))


def server_user() -> str:
    """The server container's user: `SERVER_UID` when the harness is root, else the harness's own (non-root) uid."""
    if os.getuid() == 0:
        return f"{SERVER_UID}:{SERVER_UID}"
    return f"{os.getuid()}:{os.getgid()}"


def give_run_folder_to_server(run_dir: Path) -> None:
    """Let the server's user write the run folder (and a resumed instances.log): chown when the harness is root."""
    if os.getuid() != 0:
        return
    for root, dirs, files in os.walk(run_dir):
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), SERVER_UID, SERVER_UID, follow_symlinks=False)
    os.chown(run_dir, SERVER_UID, SERVER_UID)


def server_host_config(api: Any, spec: RunSpec, network_name: str) -> Any:
    """The server container's confinement: own memory/pids limits, no capabilities, read-only root, the data
    read-only and only the run folder writable."""
    from docker.types import LogConfig

    limits = spec.config.limits
    memory = parse_bytes(limits.server_memory)
    mounts = [f"{p}:{p}:ro" for p in data_paths(spec.config)] + [f"{spec.out_dir}:{spec.out_dir}:rw"]
    return api.create_host_config(
        binds=mounts, network_mode=network_name, init=True, mem_limit=memory, memswap_limit=memory,
        pids_limit=int(limits.server_pids), cap_drop=["ALL"], security_opt=["no-new-privileges:true"],
        read_only=True, tmpfs={"/tmp": SERVER_TMPFS}, privileged=False,
        log_config=LogConfig(type="json-file", config={"max-size": SERVER_LOG_MAX_SIZE, "max-file": "1"}))


def applied_isolation(container: dict[str, Any], network: dict[str, Any] | None) -> dict[str, Any]:
    """The isolation flags as Docker reports them (`docker inspect` of the container and of its network)."""
    hc = container.get("HostConfig") or {}
    cfg = container.get("Config") or {}
    devices = hc.get("DeviceRequests") or []
    gpus = [d for req in devices for d in (req.get("DeviceIDs") or [])]
    net_opts = (network or {}).get("Options") or {}
    return {
        "user": cfg.get("User") or "",
        "cap_drop": hc.get("CapDrop") or [],
        "cap_add": hc.get("CapAdd") or [],
        "security_opt": hc.get("SecurityOpt") or [],
        "privileged": bool(hc.get("Privileged")),
        "read_only_rootfs": bool(hc.get("ReadonlyRootfs")),
        "tmpfs": hc.get("Tmpfs") or {},
        "mounts": [{"source": m.get("Source"), "destination": m.get("Destination"), "rw": m.get("RW")}
                   for m in container.get("Mounts") or []],
        "memory_bytes": hc.get("Memory"),
        "memory_swap_bytes": hc.get("MemorySwap"),
        "nano_cpus": hc.get("NanoCpus"),
        "pids_limit": hc.get("PidsLimit"),
        "shm_size_bytes": hc.get("ShmSize"),
        "ipc_mode": hc.get("IpcMode"),
        "gpus": gpus,
        "network_mode": hc.get("NetworkMode"),
        "network_internal": bool((network or {}).get("Internal")),
        # an overlay network has no interface on the host; a bridge has one unless its IPv4 address is inhibited
        "network_host_address": (network or {}).get("Driver") != "overlay"
                                and net_opts.get("com.docker.network.bridge.inhibit_ipv4") != "true",
        "ulimits": hc.get("Ulimits") or [],
    }
