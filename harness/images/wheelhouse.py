"""Wheelhouse: the harness package and its Python dependencies as wheels, built on the host and cached.

Images never run pip against a network: `images/base.py` copies a wheelhouse into the build context and installs with
`pip install --no-index --find-links`. Two caches under `cache_dir()` (default `~/.cache/harness`):

- `wheelhouse/harness-<digest>/`: the harness wheel, keyed by a digest of the package's source files;
- `wheelhouse/deps-<key>/`: dependency wheels for the image's Python (3.11, manylinux, host architecture), keyed by
  the requirement list, so an edit to the harness source does not download anything again.
"""

from __future__ import annotations

import email.parser
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from harness.cache import cache_dir
from harness.errors import HarnessError

#: Python of the base image (Debian bookworm's python3, and python:3.11-slim-bookworm).
IMAGE_PYTHON = "3.11"
#: Files outside `harness/` that go into the wheel or the image, and so into the source digest.
PROJECT_FILES = ("setup.cfg", "pyproject.toml", "Dockerfile.base")
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".swp")


class WheelhouseError(HarnessError):
    """The wheelhouse could not be built (pip failed, or no source checkout)."""


@dataclass(frozen=True)
class Wheelhouse:
    """Wheels ready to copy into an image build context."""

    harness_wheel: Path
    deps_dir: Path
    requirements: tuple[str, ...]
    source_digest: str

    @property
    def digest(self) -> str:
        """Identifies everything installed in the image: the harness source and the dependency set."""
        return hashlib.sha256(f"{self.source_digest}|{self.deps_dir.name}".encode()).hexdigest()


def project_root() -> Path:
    """The source checkout holding the installed `harness` package (needs setup.cfg and Dockerfile.base)."""
    import harness

    root = Path(harness.__file__).resolve().parent.parent
    if not (root / "setup.cfg").is_file():
        raise WheelhouseError(f"{root}: not a harness source checkout (no setup.cfg); install with `pip install -e .`")
    return root


def _package_files(root: Path) -> list[Path]:
    """Files of the harness package plus PROJECT_FILES, sorted, relative to root."""
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root / "harness"):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if not name.endswith(_SKIP_SUFFIXES):
                files.append(Path(dirpath, name).relative_to(root))
    files += [Path(f) for f in PROJECT_FILES if (root / f).is_file()]
    return sorted(files)


def source_digest(root: Path | None = None) -> str:
    """sha256 over the paths and contents of the package files: changes whenever the harness code does."""
    root = root or project_root()
    h = hashlib.sha256()
    for rel in _package_files(root):
        h.update(str(rel).encode() + b"\0")
        h.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return h.hexdigest()


def _pip(args: list[str], log: Path | None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if log is not None:
        with log.open("a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n")
    return proc


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit code {proc.returncode}"


def build_harness_wheel(root: Path | None = None, log: Path | None = None) -> tuple[Path, str]:
    """The harness wheel for the current source, built once per source digest from a clean copy of the tree."""
    root = root or project_root()
    digest = source_digest(root)
    out = cache_dir() / "wheelhouse" / f"harness-{digest[:16]}"
    found = sorted(out.glob("harness-*.whl")) if out.is_dir() else []
    if found:
        return found[0], digest
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-src-", dir=out.parent) as tmp:
        src = Path(tmp, "src")
        for rel in _package_files(root):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, src / rel)
        if (root / "README.md").is_file():
            shutil.copy2(root / "README.md", src / "README.md")
        wheels = Path(tmp, "wheels")
        proc = _pip(["wheel", "--no-deps", "-q", "-w", str(wheels), str(src)], log)
        if proc.returncode != 0:  # offline host: try the host's own setuptools/wheel
            proc = _pip(["wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)], log)
        if proc.returncode != 0:
            raise WheelhouseError(f"building the harness wheel failed: {_last_line(proc)}")
        built = sorted(wheels.glob("harness-*.whl"))
        if not built:
            raise WheelhouseError("building the harness wheel produced no harness-*.whl")
        staging = Path(tmp, "out")
        staging.mkdir()
        shutil.copy2(built[0], staging / built[0].name)
        try:
            staging.rename(out)
        except OSError:  # another process finished first
            pass
    return sorted(out.glob("harness-*.whl"))[0], digest


#: extras of the harness installed in the base image: `media` (PyAV), so that the evaluation server, which runs
#: in the base image, streams talks shipped as MP4 (IWSLT's ACL talks) as it streams WAV
IMAGE_EXTRAS = ("media",)


def wheel_requirements(wheel: Path, extras: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The unconditional `Requires-Dist` entries of a wheel, then those of `extras` (marker dropped), in order."""
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    reqs = []
    for r in meta.get_all("Requires-Dist") or []:
        m = re.search(r";\s*extra\s*==\s*['\"]([^'\"]+)['\"]\s*$", r)
        if m is None:
            reqs.append(r.strip())
        elif m.group(1) in extras:
            reqs.append(r[:m.start()].strip())
    return tuple(reqs)


def _platform_tags() -> list[str]:
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    return [f"manylinux_2_{m}_{machine}" for m in (36, 34, 31, 28, 27, 24, 17)] + [f"manylinux2014_{machine}"]


def download_deps(requirements: tuple[str, ...], log: Path | None = None) -> Path:
    """Binary wheels of `requirements` (and their dependencies) for the image's Python; cached by requirement set."""
    tags = _platform_tags()
    key = hashlib.sha256("\n".join([IMAGE_PYTHON, *tags, *requirements]).encode()).hexdigest()[:16]
    out = cache_dir() / "wheelhouse" / f"deps-{key}"
    if (out / "requirements.txt").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-deps-", dir=out.parent) as tmp:
        staging = Path(tmp, "out")
        staging.mkdir()
        args = ["download", "-q", "--only-binary=:all:", "--python-version", IMAGE_PYTHON,
                "--implementation", "cp", "--abi", f"cp{IMAGE_PYTHON.replace('.', '')}", "--abi", "abi3",
                "--abi", "none", "-d", str(staging)]
        for t in tags:
            args += ["--platform", t]
        proc = _pip([*args, *requirements], log)
        if proc.returncode != 0:
            raise WheelhouseError(f"downloading dependency wheels failed: {_last_line(proc)}")
        (staging / "requirements.txt").write_text("".join(f"{r}\n" for r in requirements), encoding="utf-8")
        try:
            staging.rename(out)
        except OSError:
            pass
    return out


def build_wheelhouse(root: Path | None = None, log: Path | None = None) -> Wheelhouse:
    """The harness wheel and its dependency wheels, from cache where possible."""
    wheel, digest = build_harness_wheel(root, log)
    reqs = wheel_requirements(wheel, IMAGE_EXTRAS)
    deps = download_deps(reqs, log)
    return Wheelhouse(harness_wheel=wheel, deps_dir=deps, requirements=reqs, source_digest=digest)


def prune(keep: int = 5) -> None:
    """Remove all but the `keep` newest cached harness wheels (every code edit makes one)."""
    base = cache_dir() / "wheelhouse"
    olds = sorted(base.glob("harness-*"), key=lambda p: p.stat().st_mtime, reverse=True)[keep:]
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)
