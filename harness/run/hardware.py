"""The host a run ran on: CPU model and cores, memory, and GPUs with their driver (from `nvidia-smi`, if any).

`hardware()` never fails: what cannot be read is None (CPU model, memory) or an empty GPU list, recorded as
`"gpu": "none"`. GPUs come from `nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader`.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

GPU_QUERY = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]
NO_GPU = "none"


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo's `model name`, else the platform's processor or machine name)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("model name", "Model")) and ":" in line:
                name = line.split(":", 1)[1].strip()
                if name:
                    return name
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def memory_bytes() -> int | None:
    """Total memory of the host in bytes (/proc/meminfo's MemTotal, else sysconf), or None."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def parse_gpus(text: str) -> list[dict[str, str]]:
    """`nvidia-smi`'s CSV answer (name, driver_version, memory.total per line) as dicts; malformed lines skipped."""
    gpus = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and all(parts):
            gpus.append({"name": parts[0], "driver": parts[1], "memory": parts[2]})
    return gpus


def gpus() -> list[dict[str, str]]:
    """The host's NVIDIA GPUs, [] when there is no `nvidia-smi` or it fails (a host without GPUs)."""
    if not shutil.which(GPU_QUERY[0]):
        return []
    try:
        done = subprocess.run(GPU_QUERY, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_gpus(done.stdout) if done.returncode == 0 else []


def gpu_summary(found: list[dict[str, str]]) -> str:
    """One line for people: `2x NVIDIA H100 80GB HBM3 (driver 550.54.15, 81559 MiB)`, or `none`."""
    if not found:
        return NO_GPU
    groups: dict[tuple[str, str, str], int] = {}
    for g in found:
        key = (g["name"], g["driver"], g["memory"])
        groups[key] = groups.get(key, 0) + 1
    return "; ".join(f"{n}x {name} (driver {driver}, {memory})" for (name, driver, memory), n in groups.items())


def probe() -> dict[str, Any]:
    """The host, measured now (see `hardware` for the cached one)."""
    found, cpu, cores, mem = gpus(), cpu_model(), os.cpu_count(), memory_bytes()
    return {"cpu": cpu, "cpu_count": cores, "memory_bytes": mem, "machine": platform.machine(),
            "kernel": platform.release(), "gpus": found, "gpu": gpu_summary(found),
            "summary": host_summary(cpu, cores, mem, gpu_summary(found))}


def host_summary(cpu: str, cores: int | None, mem: int | None, gpu: str) -> str:
    """One line: `AMD EPYC 7B13, 16 cores, 125.8 GiB; GPU: none`."""
    parts = [cpu, f"{cores} cores" if cores else "", f"{mem / 2**30:.1f} GiB" if mem else ""]
    return ", ".join(p for p in parts if p) + f"; GPU: {gpu}"


@functools.lru_cache(maxsize=1)
def hardware() -> dict[str, Any]:
    """The host (probed once per process): cpu, cpu_count, memory_bytes, machine, kernel, gpus (name, driver,
    memory), gpu (one line, `none` without GPUs) and summary (one line)."""
    return probe()
