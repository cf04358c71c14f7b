"""The TCP ports a container's own processes listen on, read from /proc (for the wrong-`port:` hint)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["tcp_listening_ports"]


def tcp_listening_ports(pid: int) -> list[int]:
    """TCP ports that the processes of `pid`'s container listen on: the listening sockets (state 0A) of its network
    namespace (/proc/PID/net/tcp and tcp6) that one of the processes in its PID namespace holds open. Sockets that
    others put there do not count: Docker's embedded DNS resolver listens on 127.0.0.11 in every container of a
    user-defined network, but dockerd holds it. Needs the harness to be root (else [])."""
    owned = _socket_inodes(_pid_namespace(pid))
    ports: set[int] = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and fields[9] in owned:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def _pid_namespace(pid: int) -> list[int]:
    """The processes (host PIDs) in the PID namespace of `pid`."""
    try:
        ns = os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return []
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.readlink(f"/proc/{entry.name}/ns/pid") == ns:
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def _socket_inodes(pids: list[int]) -> set[str]:
    """Inode numbers (as /proc/net/tcp writes them) of the sockets that `pids` hold open."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            fds = os.scandir(f"/proc/{pid}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    target = os.readlink(fd.path)
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    return inodes
