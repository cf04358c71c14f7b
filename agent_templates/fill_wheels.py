"""Fill `agent_templates/<name>/wheels/` with the wheels a template's image installs (run on the host).

    python3 agent_templates/fill_wheels.py [NAME ...]      (default: every template with requirements-image.txt)
    python3 agent_templates/fill_wheels.py PATH/TO/SUBMISSION   (any folder with a requirements-image.txt)

Pip cannot reach PyPI inside image builds, so each template that needs packages beyond the harness base lists
them in `requirements-image.txt` (one requirement a line; `--no-deps` after a name downloads it without its
dependencies) and its Dockerfile installs them with `pip install --no-index --find-links /tmp/wheels`.
Wheels are for the base image's Python (3.11, manylinux, this machine's architecture); existing ones are kept.
A folder filled for the same requirements and platform (its `wheels/.filled` says which) is left as it is, without
asking pip: a re-run (`scripts/iwslt2026.sh` resumes) costs nothing and needs no network.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON = "3.11"
#: in a filled `wheels/`: what it was filled for (the requirements file's text, the Python and the architecture)
STAMP = ".filled"


def requirements(path: Path) -> list[tuple[str, bool]]:
    """(requirement, with dependencies) for every non-comment line."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append((line.replace("--no-deps", "").strip(), "--no-deps" not in line))
    return out


def filled_for(template: Path) -> str:
    """What a filled `wheels/` of `template` records: its requirements, the Python and this machine's architecture."""
    text = (template / "requirements-image.txt").read_text(encoding="utf-8")
    return f"python {PYTHON}\nmachine {platform.machine()}\n{text}"


def fill(template: Path) -> int:
    """Download the wheels of one template (unless they were filled for the same requirements); returns pip's exit
    status (first failure)."""
    wheels = template / "wheels"
    stamp = wheels / STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == filled_for(template) and any(wheels.glob("*.whl")):
        print(f"fill_wheels: {wheels} up to date")
        return 0
    wheels.mkdir(exist_ok=True)
    stamp.unlink(missing_ok=True)
    machine = platform.machine()
    reqs = requirements(template / "requirements-image.txt")
    # one pip per kind (with and without dependencies): the image installs them together, so they are resolved
    # together, and pip starts once, not once a line
    for deps in (True, False):
        group = [req for req, with_deps in reqs if with_deps == deps]
        if not group:
            continue
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", str(wheels),
               "--only-binary=:all:", "--python-version", PYTHON, "--implementation", "cp",
               "--platform", f"manylinux2014_{machine}", "--platform", f"manylinux_2_28_{machine}",
               "--platform", f"manylinux_2_17_{machine}", "--platform", "any", *group]
        if not deps:
            cmd.insert(4, "--no-deps")
        rc = subprocess.run(cmd).returncode
        if rc != 0:
            print(f"fill_wheels: {template.name}: pip download {' '.join(group)} failed", file=sys.stderr)
            return rc
    stamp.write_text(filled_for(template), encoding="utf-8")
    print(f"fill_wheels: {wheels} ({len(list(wheels.glob('*.whl')))} wheels)")
    return 0


def folder_of(name: str) -> Path:
    """A template's folder (`whisper_longform`), or any submission folder given as a path (`examples/x/sub`)."""
    return Path(name) if "/" in name or name.startswith(".") else HERE / name


def main(argv: list[str]) -> int:
    names = argv or sorted(p.parent.name for p in HERE.glob("*/requirements-image.txt"))
    for name in names:
        if not (folder_of(name) / "requirements-image.txt").is_file():
            print(f"fill_wheels: {name}: no requirements-image.txt", file=sys.stderr)
            return 2
        rc = fill(folder_of(name))
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
