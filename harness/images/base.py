"""The harness base image (`Dockerfile.base`): Python + the harness package, built once and cached.

Two ways to get the Debian + Python layer under it:

- a registry answers: `FROM python:3.11-slim-bookworm`;
- air-gapped (`--air-gapped`, or automatically when no registry answers): `debootstrap --variant=minbase` builds a
  root filesystem from Debian packages (this host's apt mirror), whose tarball is cached on the host and
  `docker import`-ed.

Either way the harness and its dependencies are installed from a wheelhouse built on the host (`wheelhouse.py`)
with `pip install --no-index`: no container ever reaches a package index. The image carries labels with the
harness version and a digest of everything installed, so a changed harness triggers a rebuild and an unchanged
one is a cache hit.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness import __version__
from harness.cache import cache_dir
from harness.config import LOCAL_ENGINE
from harness.digest import sha256_file
from harness.errors import HarnessError
from harness.images import wheelhouse

#: the base image tag; `HARNESS_BASE_TAG` overrides it (e.g. to keep parallel checkouts from sharing one image)
DEFAULT_TAG = os.environ.get("HARNESS_BASE_TAG") or "harness-base:latest"
REGISTRY_BASE = "python:3.11-slim-bookworm"
#: the repository (under the organizer's registry) the swarm backend pushes run images to (run.swarm.registry)
RUN_REPO = "harness/run"
SUITE = "bookworm"
INCLUDE = ("python3", "python3-venv")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
PARTICIPANT_UID = 10001
PARTICIPANT_USER = "participant"
LABEL_VERSION = "org.harness.version"
LABEL_DIGEST = "org.harness.image-digest"
LABEL_MODE = "org.harness.base-mode"
#: Parts of the debootstrap tree an image never needs (apt caches and lists, docs, man pages, translations).
ROOTFS_PRUNE = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info",
                "usr/share/locale")

_thread_lock = threading.Lock()


class ImageError(HarnessError):
    """An image could not be built, imported, loaded or inspected."""


@dataclass(frozen=True)
class ImageInfo:
    """What the harness records about an image: its tag, content digest, size and platform."""

    tag: str
    id: str
    digest: str
    size: int
    architecture: str
    os: str = "linux"
    build_s: float = 0.0
    #: the engine the image was built on when not the harness's own (then moved: `images.move`), and whether its
    #: bytes were copied (False: the harness's engine had that image already)
    build_engine: str | None = None
    copied: bool | None = None


# ----------------------------------------------------------------------------------------------- docker helpers

def docker_env(engine: str | None = None) -> dict[str, str]:
    """Environment for the docker CLI: the legacy builder where the buildx plugin is missing (as on Debian).

    `engine` picks the Docker engine: None, the one `$DOCKER_HOST` names (the harness's engine); `local`, the one
    the CLI reaches without `$DOCKER_HOST`; else a host URL (`unix://...`, `tcp://...`, `ssh://...`)."""
    env = dict(os.environ)
    if engine == LOCAL_ENGINE:
        env.pop("DOCKER_HOST", None)
    elif engine is not None:
        env["DOCKER_HOST"] = engine
    if "DOCKER_BUILDKIT" not in env and shutil.which("docker") and not _has_buildx():
        env["DOCKER_BUILDKIT"] = "0"
    return env


_buildx: bool | None = None


def _has_buildx() -> bool:
    global _buildx
    if _buildx is None:
        proc = subprocess.run(["docker", "buildx", "version"], capture_output=True, text=True)
        _buildx = proc.returncode == 0
    return _buildx


def docker(args: Sequence[str], *, check: bool = True, timeout: float | None = None,
           input: bytes | None = None, engine: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `docker ARGS` on `engine` (see docker_env); on failure (with check) an ImageError carrying docker's last
    line of output."""
    try:
        proc = subprocess.run(["docker", *args], capture_output=True, timeout=timeout, input=input,
                              env=docker_env(engine))
    except FileNotFoundError:
        raise ImageError("the docker command is not installed") from None
    except subprocess.TimeoutExpired:
        raise ImageError(f"docker {args[0]} took longer than {timeout:.0f} s") from None
    if check and proc.returncode != 0:
        raise ImageError(f"docker {' '.join(args[:2])} failed: {last_line(proc.stderr or proc.stdout)}")
    return proc


def last_line(output: bytes | str) -> str:
    """The last non-empty line of a command's output (for one-line errors)."""
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def image_exists(ref: str, engine: str | None = None) -> bool:
    """True if the engine has an image called `ref` (tag or id)."""
    return docker(["image", "inspect", "--format", "{{.Id}}", ref], check=False, engine=engine).returncode == 0


def inspect_image(ref: str, engine: str | None = None) -> dict:
    """`docker image inspect REF` as a dict (ImageError if absent)."""
    proc = docker(["image", "inspect", ref], check=False, engine=engine)
    if proc.returncode != 0:
        raise ImageError(f"no such image: {ref}")
    return json.loads(proc.stdout)[0]


def image_info(ref: str, tag: str | None = None, build_s: float = 0.0, engine: str | None = None) -> ImageInfo:
    """ImageInfo of an image on the engine. `digest` is the registry digest if any, else the content-addressed id;
    the digest of the harness's own push for swarm nodes (`RUN_REPO`) is not one: it would change the image's
    resume and fetch-cache keys once the swarm ran it."""
    data = inspect_image(ref, engine)
    repo_digests = [d for d in data.get("RepoDigests") or [] if not d.split("@", 1)[0].endswith(f"/{RUN_REPO}")]
    return ImageInfo(
        tag=tag or ref,
        id=data["Id"],
        digest=repo_digests[0].split("@", 1)[1] if repo_digests else data["Id"],
        size=int(data.get("Size") or 0),
        architecture=data.get("Architecture") or "",
        os=data.get("Os") or "",
        build_s=build_s,
    )


def image_labels(ref: str, engine: str | None = None) -> dict[str, str]:
    """Labels of an image ({} if the image does not exist)."""
    try:
        return (inspect_image(ref, engine).get("Config") or {}).get("Labels") or {}
    except ImageError:
        return {}


def host_architecture() -> str:
    """This host's architecture in Docker's (GOARCH) spelling: amd64, arm64, ..."""
    m = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "i686": "386", "i386": "386"}.get(m, m)


# ------------------------------------------------------------------------------------------ air-gapped rootfs

#: how long the engine may take to hear from the registry before the base image is built from Debian packages
REGISTRY_ANSWER_S = 10.0


def registry_answers(ref: str = REGISTRY_BASE, answer_s: float = REGISTRY_ANSWER_S, pull_s: float = 900.0,
                     engine: str | None = None) -> bool:
    """True if `ref` is on the engine already or a registry lets us pull it; `$HARNESS_AIR_GAPPED=1` says no, `0`
    says yes without asking. A registry that has not answered within `answer_s` counts as none."""
    forced = air_gapped_setting()
    if forced is True:
        return False
    if image_exists(ref, engine):
        return True
    if forced is False:
        return True
    return _pull_if_answered(ref, answer_s, pull_s, engine)


def air_gapped_setting() -> bool | None:
    """`$HARNESS_AIR_GAPPED` as a decision: True (`1`), False (`0`), or None (unset: ask the registry)."""
    value = os.environ.get("HARNESS_AIR_GAPPED", "").strip().lower()
    return True if value in ("1", "true", "yes") else False if value in ("0", "false", "no") else None


def _pull_if_answered(ref: str, answer_s: float, pull_s: float, engine: str | None) -> bool:
    """Pull `ref`, but give up unless the engine prints its first line (the registry answered, or refused) within
    `answer_s`: a host whose registry traffic is dropped would otherwise wait for the engine's own time-outs."""
    try:
        proc = subprocess.Popen(["docker", "pull", ref], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=docker_env(engine))
    except FileNotFoundError:
        return False
    assert proc.stdout is not None
    with proc:
        if not select.select([proc.stdout], [], [], answer_s)[0]:
            proc.kill()
            return False
        try:
            proc.communicate(timeout=pull_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            return False
    return proc.returncode == 0


def debian_mirror() -> str:
    """The Debian mirror of this host's apt sources (`$HARNESS_DEBIAN_MIRROR` wins), else deb.debian.org."""
    env = os.environ.get("HARNESS_DEBIAN_MIRROR")
    if env:
        return env
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for uri in _debian_uris(text):
            return uri
    return DEFAULT_MIRROR


def _debian_uris(text: str) -> Iterator[str]:
    """Main-archive URIs (not security, not third party) in a one-line or deb822 apt source file."""
    for m in re.finditer(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", text, re.M):
        if _is_main_archive(m.group(1), m.group(2).split()):
            yield m.group(1).rstrip("/")
    for stanza in re.split(r"\n\s*\n", text):
        fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
        if "URIs" in fields and "deb" in fields.get("Types", "").split():
            for uri in fields["URIs"].split():
                if _is_main_archive(uri, fields.get("Suites", "").split()):
                    yield uri.rstrip("/")


def _is_main_archive(uri: str, suites: list[str]) -> bool:
    return uri.startswith(("http://", "https://")) and "security" not in uri and any(
        s.split("/")[0].split("-")[0] == SUITE for s in suites) and "debian" in uri


def rootfs_key() -> str:
    """Cache key of the debootstrap tree: suite, variant, packages, architecture (the mirror does not matter)."""
    return f"{SUITE}-minbase-{'-'.join(INCLUDE)}-{host_architecture()}"


def rootfs_tarball(mirror: str | None = None, log: Path | None = None) -> Path:
    """The cached root filesystem tarball, made with debootstrap on a cache miss (a minute or two).

    debootstrap and tar run as root (through `sudo -n` when the harness is not root)."""
    out = cache_dir() / f"rootfs-{rootfs_key()}.tar.gz"
    if out.is_file():
        return out
    if shutil.which("debootstrap") is None and not Path("/usr/sbin/debootstrap").is_file():
        raise ImageError("air-gapped build needs debootstrap (apt-get install debootstrap)")
    mirror = mirror or debian_mirror()
    with tempfile.TemporaryDirectory(prefix="harness-rootfs-", dir=out.parent, ignore_cleanup_errors=True) as tmp:
        root = Path(tmp, "rootfs")
        try:
            _run_logged(_as_root(["debootstrap", "--variant=minbase", f"--include={','.join(INCLUDE)}", SUITE,
                                  str(root), mirror]), log, "debootstrap")
            pruned = [str(root / rel) for rel in ROOTFS_PRUNE]
            _run_logged(_as_root(["rm", "-rf", *pruned]), log, "pruning the root filesystem")
            _run_logged(_as_root(["mkdir", "-p", *pruned]), log, "pruning the root filesystem")
            partial = Path(tmp, "rootfs.tar.gz")
            _run_logged(_as_root(["tar", "-C", str(root), "--numeric-owner", "-czf", str(partial), "."]), log, "tar")
            os.replace(partial, out)
        finally:
            subprocess.run(_as_root(["rm", "-rf", str(root)]), capture_output=True)
    return out


def _as_root(cmd: list[str]) -> list[str]:
    """`cmd`, prefixed with `sudo -n` when this process is not root."""
    return cmd if os.geteuid() == 0 or shutil.which("sudo") is None else ["sudo", "-n", *cmd]


def rootfs_image_tag(tarball: Path) -> str:
    """Tag of the image imported from a rootfs tarball: the cache key plus the tarball's content hash."""
    return f"harness-rootfs:{rootfs_key()}-{_file_sha256(tarball)[:12]}"


def import_rootfs(tarball: Path, log: Path | None = None, engine: str | None = None) -> str:
    """`docker import` the tarball once (per tarball content); returns the imported image's tag."""
    tag = rootfs_image_tag(tarball)
    if image_exists(tag, engine):
        return tag
    with tarball.open("rb") as f:
        proc = subprocess.run(["docker", "import", "--change", "CMD [\"/bin/bash\"]", "-", tag], stdin=f,
                              capture_output=True, env=docker_env(engine))
    _append(log, f"$ docker import - {tag} < {tarball}\n" + (proc.stdout + proc.stderr).decode("utf-8", "replace"))
    if proc.returncode != 0:
        raise ImageError(f"docker import of {tarball} failed: {last_line(proc.stderr)}")
    return tag


def _file_sha256(path: Path) -> str:
    """sha256 of a file, remembered next to it (`PATH.sha256`) while the file keeps its size and mtime."""
    st = path.stat()
    memo = path.with_name(path.name + ".sha256")
    stamp = f"{st.st_size} {st.st_mtime_ns}"
    try:
        saved_stamp, saved = memo.read_text(encoding="utf-8").split("\n")[:2]
        if saved_stamp == stamp:
            return saved
    except (OSError, ValueError):
        pass
    digest = sha256_file(path)
    memo.write_text(f"{stamp}\n{digest}\n", encoding="utf-8")
    return digest


# ------------------------------------------------------------------------------------------------- base image

def base_dockerfile() -> Path:
    """Dockerfile.base of the source checkout."""
    path = wheelhouse.project_root() / "Dockerfile.base"
    if not path.is_file():
        raise ImageError(f"{path}: not found")
    return path


def ensure_base_image(air_gapped: bool | None = None, rebuild: bool = False, tag: str = DEFAULT_TAG,
                      log: Path | None = None, engine: str | None = None) -> str:
    """The base image's tag on `engine` (see docker_env), building it only if missing, built from another harness,
    or `rebuild`.

    `air_gapped=None` picks air-gapped when no registry answers (or `$HARNESS_AIR_GAPPED=1`). Safe to call from
    several threads and processes at once: builds are serialized by a lock file in the cache folder.
    """
    log = log or cache_dir() / "logs" / "base-image.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if log.is_file() and log.stat().st_size > 8 * 1024**2:  # keep the shared log from growing without bound
        log.write_text("", encoding="utf-8")
    with _build_lock():
        wh = wheelhouse.build_wheelhouse(log=log)
        digest = wh.digest
        if not rebuild and image_labels(tag, engine).get(LABEL_DIGEST) == digest:
            return tag
        if air_gapped is None:
            air_gapped = not registry_answers(engine=engine)
            _say_which_base(air_gapped)
        started = time.monotonic()
        _append(log, f"# {time.strftime('%Y-%m-%d %H:%M:%S')}: building {tag} (harness {__version__}, "
                     f"{'air-gapped' if air_gapped else 'registry'})\n")
        previous = inspect_image(tag, engine)["Id"] if image_exists(tag, engine) else None
        base = import_rootfs(rootfs_tarball(log=log), log, engine) if air_gapped else REGISTRY_BASE
        _build_base(tag, base, wh, digest, "air-gapped" if air_gapped else "registry", log, engine)
        _append(log, f"base image {tag} built in {time.monotonic() - started:.1f} s\n")
        if previous and previous != inspect_image(tag, engine)["Id"]:  # drop the old one unless something uses it
            docker(["rmi", previous], check=False, engine=engine)
        wheelhouse.prune()
    return tag


def _say_which_base(air_gapped: bool) -> None:
    """One line on standard error: where the base image is built from, and why."""
    forced = air_gapped_setting()
    if forced is not None:
        why = f"HARNESS_AIR_GAPPED={os.environ['HARNESS_AIR_GAPPED'].strip()}"
    elif air_gapped:
        why = (f"no registry answered for {REGISTRY_BASE} within {REGISTRY_ANSWER_S:.0f} s; "
               "HARNESS_AIR_GAPPED=0 forces it")
    else:
        why = "a registry answered; HARNESS_AIR_GAPPED=1 builds from Debian packages instead"
    source = "Debian packages (debootstrap)" if air_gapped else REGISTRY_BASE
    print(f"harness: building the base image from {source} ({why})", file=sys.stderr)


def _build_base(tag: str, base: str, wh: wheelhouse.Wheelhouse, digest: str, mode: str, log: Path,
                engine: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-base-ctx-") as tmp:
        ctx = Path(tmp)
        shutil.copy2(base_dockerfile(), ctx / "Dockerfile")
        (ctx / "wheels" / "harness").mkdir(parents=True)
        shutil.copytree(wh.deps_dir, ctx / "wheels" / "deps")
        shutil.copy2(wh.harness_wheel, ctx / "wheels" / "harness" / wh.harness_wheel.name)
        cmd = ["docker", "build", "--force-rm", "--build-arg", f"BASE={base}",
               "--label", f"{LABEL_VERSION}={__version__}", "--label", f"{LABEL_DIGEST}={digest}",
               "--label", f"{LABEL_MODE}={mode}", "-t", tag, str(ctx)]
        _run_logged(cmd, log, "docker build of the base image", env=docker_env(engine))


@contextmanager
def _build_lock() -> Iterator[None]:
    path = cache_dir() / "base-image.lock"
    with _thread_lock, path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _append(log: Path | None, text: str) -> None:
    if log is not None:
        with log.open("a", encoding="utf-8") as f:
            f.write(text)


def _run_logged(cmd: list[str], log: Path | None, what: str, env: dict[str, str] | None = None) -> None:
    """Run a command with its output appended to `log`; ImageError with the last line on failure."""
    _append(log, f"$ {' '.join(cmd)}\n")
    with (log.open("ab") if log is not None else open(os.devnull, "wb")) as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:] if log is not None else ""
        where = f" (see {log})" if log is not None else ""
        raise ImageError(f"{what} failed: {last_line(tail) if tail else proc.returncode}{where}")
