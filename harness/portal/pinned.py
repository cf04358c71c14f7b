"""Submissions that name an image in the organizer's registry, pinned by digest (`build: {image:
REGISTRY/TEAM/NAME@sha256:HEX}`), as `harness submit` writes them after pushing a team's image.

Intake takes such a submission only when the reference is in the portal's own registry (`portal.registry`), under
the team's own repositories (`TEAM/...`), and the registry has that manifest: the portal asks it with a pull token
it signs itself (STATE/registry/token.key), so nobody's password is kept. Its layers (compressed) must fit under
`portal.max_image_gb`. The queue's evaluations pull with such a token too: a docker CLI configuration holding a
`registrytoken` for the registry, in a folder of its own named by `$HARNESS_PULL_DOCKER_CONFIG`
(harness.images.pinned), removed when the evaluation ends; the organizer's engine needs no `docker login`.

A push to the registry is not a submission: nothing listens for pushes; only an upload that names the digest is.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

import requests

from harness.errors import HarnessError
from harness.intake.submission import PinnedImage, pinned_image
from harness.portal.phases import PortalSettings
from harness.portal.teams import ORGANIZER

#: the manifest types a registry may hold for an image (Docker's v2 and OCI, single or multi-platform)
MANIFEST_TYPES = ", ".join((
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
))
#: how long the pull token of one evaluation lives (its pulls happen as its submissions' images are needed)
PULL_TOKEN_TTL_S = 6 * 3600
#: a manifest is small; a larger answer is not one
MAX_MANIFEST_BYTES = 4 * 1024**2


def pull_token(state: Path, repositories: list[str], ttl_s: int) -> str:
    """A registry token the portal signs for itself: `pull` on `repositories` (as the organizer may), for `ttl_s`."""
    from harness.portal.registry import Scope, issue, signing_key

    scopes = [Scope("repository", name, ("pull",)) for name in repositories]
    return str(issue(signing_key(state), ORGANIZER, scopes, ttl_s=ttl_s)["token"])


def check_pinned(settings: PortalSettings, state: Path, reference: str, team: str, timeout_s: float = 30.0) -> None:
    """A HarnessError with one line unless `reference` is an image of `team` in the portal's registry that the
    registry has, within the portal's image size cap."""
    pinned = pinned_image(reference)
    assert pinned is not None  # the schema took it as one
    where = f"build.image: {reference}"
    if settings.registry is None:
        raise HarnessError(f"{where}: this portal has no registry: hand in a Dockerfile or an image.tar")
    if pinned.domain != settings.registry:
        raise HarnessError(f"{where}: not in the organizer's registry ({settings.registry}): `harness submit` pushes "
                           f"a local image there and names it by digest")
    if not pinned.path.startswith(f"{team}/"):
        raise HarnessError(f"{where}: not one of your team's repositories ({settings.registry}/{team}/...)")
    manifest = _manifest(settings, state, pinned, timeout_s, where)
    cap = settings.max_image_bytes
    size = _compressed_size(manifest)
    if cap is not None and size is not None and size > cap:
        raise HarnessError(f"{where}: its layers are {size / 1e9:.2f} GB compressed, over the portal's image size "
                           f"cap of {cap / 1e9:g} GB")


def _manifest(settings: PortalSettings, state: Path, pinned: PinnedImage, timeout_s: float,
              where: str) -> dict[str, Any]:
    """The registry's manifest of `pinned` (fetched by digest: the registry checks the digest of what it serves)."""
    try:
        token = pull_token(state, [pinned.path], 300)
    except HarnessError as exc:
        raise HarnessError(f"{where}: the portal cannot sign for its registry ({exc}): ask the organizer") from None
    url = f"{settings.registry_api()}/v2/{pinned.path}/manifests/{pinned.digest}"
    try:
        answer = requests.get(url, headers={"Authorization": f"Bearer {token}", "Accept": MANIFEST_TYPES},
                              timeout=timeout_s, stream=True)
        body = answer.raw.read(MAX_MANIFEST_BYTES + 1, decode_content=True) if answer.status_code == 200 else b""
    except requests.RequestException as exc:
        raise HarnessError(f"{where}: the organizer's registry does not answer ({type(exc).__name__}): try again "
                           f"later") from None
    if answer.status_code == 404:
        raise HarnessError(f"{where}: the organizer's registry has no such image: push it first (`harness submit` "
                           f"pushes a local image and names it by digest)")
    if answer.status_code != 200:
        raise HarnessError(f"{where}: the organizer's registry answered HTTP {answer.status_code}: try again later")
    try:
        manifest = json.loads(body) if len(body) <= MAX_MANIFEST_BYTES else None
    except ValueError:
        manifest = None
    if not isinstance(manifest, dict):
        raise HarnessError(f"{where}: the registry's manifest of it is not one")
    return manifest


def _compressed_size(manifest: dict[str, Any]) -> int | None:
    """The bytes of an image manifest's config and layers (None for an index of several platforms)."""
    layers = manifest.get("layers")
    if not isinstance(layers, list):
        return None
    blobs = [manifest.get("config") or {}, *layers]
    return sum(int(b.get("size") or 0) for b in blobs if isinstance(b, dict))


def pull_config(state: Path, registry: str | None, folders: list[Path]) -> Path | None:
    """A new folder under STATE/registry/ holding a docker CLI `config.json` with a pull token for the images of
    the submissions in `folders` that are in `registry`; None when none is (or the portal has no registry or no
    signing key). The caller removes it (`remove_pull_config`)."""
    from harness.intake.submission import load_submission

    if registry is None or not (state / "registry" / "token.key").is_file():
        return None
    repositories = []
    for folder in folders:
        try:
            ref = load_submission(folder).build.image_ref
        except HarnessError:
            continue  # the evaluation says what is wrong with it
        pinned = pinned_image(ref) if ref else None
        if pinned is not None and pinned.domain == registry:
            repositories.append(pinned.path)
    if not repositories:
        return None
    token = pull_token(state, sorted(set(repositories)), PULL_TOKEN_TTL_S)
    folder = state / "registry" / f"pull-{secrets.token_hex(8)}"
    folder.mkdir(mode=0o700, parents=True)
    fd = os.open(folder / "config.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"auths": {registry: {"registrytoken": token}}}, f)
    return folder


def remove_pull_config(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
