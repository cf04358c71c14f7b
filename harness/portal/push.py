"""`harness submit` of an image: a folder whose `build: {image: ...}` names an `image.tar` in it or an image on the
local Docker engine (by tag) is handed in through the organizer's registry (`registry` of `GET /api/v1/me`).

1. The folder is checked as it will be uploaded (the image named by a placeholder digest), and the image's size
   (uncompressed, as `docker image inspect` says) against the portal's cap (`max_image_gb`): nothing moves
   before both pass. An image.tar is `docker load`-ed first.
2. The image is tagged `REGISTRY/TEAM/SYSTEM:submit-<12 hex of its id>` and pushed with the team's token
   (`docker login REGISTRY -u TEAM`, in a temporary DOCKER_CONFIG: ~/.docker is never touched), docker's
   progress shown; layers the registry has already are not sent again ("Layer already exists").
3. The folder is uploaded without the image.tar and with `build.image` rewritten to
   `REGISTRY/TEAM/SYSTEM@sha256:...`, the digest the push reported: the portal checks that the registry has it.

A push alone is no submission. `--push-only` stops after step 2 and prints the reference: a folder naming it
(`build: {image: REGISTRY/TEAM/SYSTEM@sha256:...}`) can be submitted later, from anywhere; the image stays in the
registry whatever happens to the portal meanwhile.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.errors import HarnessError
from harness.images import base as images
from harness.images.checks import check_submission
from harness.images.pinned import env_with_config
from harness.intake.submission import SUBMISSION_FILE, pinned_image, tag_reference
from harness.yamlio import read_yaml

#: a placeholder digest: the folder is checked as it will be uploaded before anything is pushed
_PLACEHOLDER = "sha256:" + "0" * 64
_DIGEST = re.compile(r"digest: (sha256:[0-9a-f]{64})")
PUSH_TIMEOUT_S = 6 * 3600


@dataclass(frozen=True)
class LocalImage:
    """What a folder's `build.image` names on this machine: an archive in the folder (`tar`) or a tag (`tag`)."""

    kind: str  # "tar" | "tag"
    value: str  # as written in submission.yaml
    path: Path | None = None  # the archive


def local_image(folder: Path) -> LocalImage | None:
    """The local image `folder`'s submission.yaml names in `build.image` (None: a Dockerfile, a reference pinned
    by digest, a log submission, or a file that cannot be read: `harness check` says what is wrong)."""
    try:
        raw = read_yaml(Path(folder) / SUBMISSION_FILE)
    except HarnessError:
        return None
    build = raw.get("build") if isinstance(raw, dict) else None
    value = build.get("image") if isinstance(build, dict) else None
    if not isinstance(value, str) or not value.strip() or pinned_image(value) is not None:
        return None
    path = Path(folder) / value
    if path.is_file():
        return LocalImage("tar", value, path)
    return LocalImage("tag", value.strip()) if tag_reference(value) else None


def repository_component(name: str) -> str:
    """`name` as one path component of a repository (lowercase letters and digits, `.`, `_`, `-` between them)."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return text or "image"


def push_image(folder: Path, local: LocalImage, client: Any, me: dict[str, Any], tmp: Path,
               out: Callable[[str], None], push_only: bool = False) -> Path | None:
    """Push `local` to the portal's registry; the folder to upload (a copy under `tmp` naming the pushed digest),
    None with `push_only`. Without a registry an image.tar goes up in the folder as before."""
    registry = me.get("registry")
    if not registry:
        if local.kind == "tar" and not push_only:
            return folder
        raise HarnessError(f"{client.base}: this portal has no registry for images: hand in an image.tar "
                           f"(`docker save`) or a Dockerfile")
    raw = read_yaml(Path(folder) / SUBMISSION_FILE)
    team = str(me["owner"])
    repository = f"{registry}/{team}/{repository_component(str(raw.get('system') or 'image'))}"
    staged = _staged(folder, local, raw, tmp / "submission", f"{repository}@{_PLACEHOLDER}")
    check_here(staged, out)  # everything but the image, before the image moves
    if not _docker_answers():
        raise HarnessError(f"build.image: {local.value}: no Docker engine answers here: `harness submit` pushes "
                           f"the image with the docker command")
    image_id = _image_id(local, out)
    info = images.inspect_image(image_id)
    size, cap_gb = int(info.get("Size") or 0), me.get("max_image_gb")
    if isinstance(cap_gb, (int, float)) and size > cap_gb * 1e9:
        raise HarnessError(f"build.image: {local.value}: {size / 1e9:.2f} GB, over the portal's image size cap of "
                           f"{cap_gb:g} GB: nothing was pushed")
    target = f"{repository}:submit-{image_id.removeprefix('sha256:')[:12]}"
    images.docker(["tag", image_id, target])
    out(f"harness submit: pushing {local.value} ({size / 1e9:.2f} GB) as {target}")
    digest = _login_and_push(registry, team, client.token, target)
    pinned = f"{repository}@{digest}"
    out(f"harness submit: pushed {pinned}")
    if push_only:
        out(f"harness submit: name it in submission.yaml to submit it: build: {{image: {pinned}}}")
        return None
    (staged / SUBMISSION_FILE).write_text(_yaml_with(raw, pinned), encoding="utf-8")
    return staged


def check_here(folder: Path, out: Callable[[str], None]) -> None:
    """`harness check` of the folder, without Docker: a HarnessError after its errors, one line each."""
    report = check_submission(folder, None, use_docker=False)
    if not report.ok:
        for finding in report.errors:
            out(f"harness submit: {finding.message}")
        raise HarnessError(f"{folder}: fix the problems above first (`harness check {folder}`)")


def _staged(folder: Path, local: LocalImage, raw: dict[str, Any], dest: Path, reference: str) -> Path:
    """A copy of `folder` without the image archive, its submission.yaml naming `reference`."""
    skip = local.path.resolve() if local.path is not None else None

    def ignored(where: str, names: list[str]) -> set[str]:
        return {n for n in names if skip is not None and (Path(where) / n).resolve() == skip}

    shutil.copytree(folder, dest, symlinks=True, ignore=ignored)
    (dest / SUBMISSION_FILE).write_text(_yaml_with(raw, reference), encoding="utf-8")
    return dest


def _yaml_with(raw: dict[str, Any], reference: str) -> str:
    return yaml.safe_dump({**raw, "build": {"image": reference}}, sort_keys=False, allow_unicode=True, width=120)


def _docker_answers() -> bool:
    try:
        return images.docker(["version", "--format", "{{.Server.Version}}"], check=False, timeout=30).returncode == 0
    except HarnessError:
        return False


def _image_id(local: LocalImage, out: Callable[[str], None]) -> str:
    """The id of the image `local` names on this engine (an image.tar is loaded first)."""
    if local.kind == "tag":
        if not images.image_exists(local.value):
            raise HarnessError(f"build.image: {local.value!r} is no image on this engine (`docker image ls` lists "
                               f"them) and no file in the folder")
        return str(images.inspect_image(local.value)["Id"])
    assert local.path is not None
    out(f"harness submit: docker load -i {local.path}")
    proc = images.docker(["load", "-i", str(local.path)], check=False, timeout=3600)
    said = proc.stdout.decode("utf-8", "replace")
    loaded = re.findall(r"^Loaded image(?: ID)?:\s*(\S+)", said, re.M)
    if proc.returncode != 0 or not loaded:
        raise HarnessError(f"build.image: {local.path}: docker load failed: "
                           f"{images.last_line(proc.stderr or proc.stdout)}")
    if len(set(loaded)) != 1:
        raise HarnessError(f"build.image: {local.path}: holds {len(set(loaded))} images; expected exactly one")
    return str(images.inspect_image(loaded[0])["Id"])


def _login_and_push(registry: str, team: str, token: str, target: str) -> str:
    """`docker login` with the team's token in a temporary DOCKER_CONFIG, then `docker push TARGET` with its
    progress on standard error; the pushed manifest's digest."""
    with tempfile.TemporaryDirectory(prefix="harness-docker-") as config:
        env = env_with_config(config)
        login = subprocess.run(["docker", "login", registry, "-u", team, "--password-stdin"], input=token + "\n",
                               capture_output=True, text=True, timeout=300, env=env)
        if login.returncode != 0:
            raise HarnessError(f"{registry}: docker login as {team} failed: "
                               f"{images.last_line(login.stderr or login.stdout)}")
        proc = subprocess.Popen(["docker", "push", target], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, env=env)
        assert proc.stdout is not None
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line.rstrip("\n"))
                sys.stderr.write(line)
                sys.stderr.flush()
            code = proc.wait(timeout=PUSH_TIMEOUT_S)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    said = "\n".join(lines)
    if code != 0:
        raise HarnessError(f"{target}: docker push failed: {images.last_line(said)}")
    found = _DIGEST.findall(said)
    if not found:
        raise HarnessError(f"{target}: docker push reported no digest: {images.last_line(said)}")
    return str(found[-1])
