"""The command an image runs by itself (its Dockerfile's ENTRYPOINT and CMD), as a local process would run it.

`harness validate --no-docker` runs an agent-server submission without building its image; when submission.yaml
names no `command:` the image's own command is read from the Dockerfile here, and its arguments that name a file
under the image's WORKDIR (`/app/agent.py`) become paths relative to the submission folder, where the local
process runs (`agent.py`), when that file is there.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from harness.errors import HarnessError
from harness.intake.submission import Submission

#: WORKDIR of the harness base image (Dockerfile.base), the default of a Dockerfile that sets none
BASE_WORKDIR = "/app"
_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$", re.S)


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined and comments left out."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        if not pending and line.lstrip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        m = _INSTRUCTION.match(pending + line)
        pending = ""
        if m:
            out.append((m.group(1).upper(), m.group(2).strip()))
    return out


def _argv(value: str) -> tuple[list[str], bool]:
    """(argv, exec form?) of an ENTRYPOINT or CMD value: its JSON array, or `/bin/sh -c VALUE`."""
    if value.startswith("["):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(a, str) for a in parsed):
            return parsed, True
    return ["/bin/sh", "-c", value], False


def dockerfile_command(dockerfile: Path) -> tuple[list[str], str] | None:
    """(argv the image runs, its WORKDIR) from the last ENTRYPOINT and CMD of `dockerfile`, or None when it sets
    neither (the base image's own command is no agent server) or cannot be read."""
    try:
        steps = _instructions(dockerfile.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    workdir = BASE_WORKDIR
    for name, value in steps:
        if name == "FROM":
            entrypoint, cmd, workdir = None, None, BASE_WORKDIR
        elif name == "WORKDIR":
            workdir = value if value.startswith("/") else f"{workdir.rstrip('/')}/{value}"
        elif name == "ENTRYPOINT":
            entrypoint = _argv(value)[0]
        elif name == "CMD":
            cmd = _argv(value)[0]
    if entrypoint is None and cmd is None:
        return None
    if entrypoint is not None and entrypoint[:2] == ["/bin/sh", "-c"]:
        return entrypoint, workdir  # a shell-form ENTRYPOINT ignores CMD
    return [*(entrypoint or []), *(cmd or [])], workdir


def local_argv(argv: list[str], workdir: str, folder: Path) -> list[str]:
    """`argv` with every argument naming a file under `workdir` that the submission folder holds made relative
    (`/app/agent.py` → `agent.py`, also inside `--opt=/app/x` and shell commands)."""
    prefix = workdir.rstrip("/") + "/"
    pattern = re.compile(re.escape(prefix) + r"([\w./-]+)")

    def relative(m: re.Match[str]) -> str:
        rel = m.group(1)
        return rel if (folder / rel).exists() else m.group(0)

    return [pattern.sub(relative, arg) for arg in argv]


def shell_line(argv: list[str]) -> str:
    """`argv` as one shell line (for messages and READMEs)."""
    return shlex.join(argv)


def local_command(sub: Submission) -> tuple[str, ...]:
    """The command a local run of `sub` starts: its `command:`, else (an agent server) its Dockerfile's own
    ENTRYPOINT/CMD with WORKDIR paths made local; a HarnessError (a usage error of `--no-docker`, not the run's
    crash nor the submission's fault: Docker runs it) when neither is known."""
    if sub.command:
        return sub.command
    found = dockerfile_command(sub.build.dockerfile) if sub.build.dockerfile is not None else None
    if found is None:
        what = ("its Dockerfile sets no CMD or ENTRYPOINT" if sub.build.dockerfile else
                "its image.tar is not read" if sub.build.image_tar else "its registry image is not read")
        raise HarnessError(f"{sub.yaml_path}: command: --no-docker runs the image's own command as a local "
                              f"process, but {what}; add `command:` (the server's start line, with paths that exist "
                              "in the submission folder) or validate without --no-docker")
    argv, workdir = found
    return tuple(local_argv(argv, workdir, sub.path))
