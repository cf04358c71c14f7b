"""Images for swarm services: on a single-node swarm the local image id; with a registry, the image pushed to
`HOST:PORT/harness/...` once per process and named by its digest, so every node runs exactly those bytes."""

from __future__ import annotations

import threading
from typing import Any

from harness.errors import HarnessError
from harness.images.base import RUN_REPO

REGISTRY_TIMEOUT_S = 5.0
_pushed: dict[tuple[str, str], str] = {}
_lock = threading.Lock()


def check_registry(registry: str) -> None:
    """One clear line if the registry does not answer its API root (`/v2/`) over plain HTTP."""
    import requests

    url = f"http://{registry}/v2/"
    try:
        answer = requests.get(url, timeout=REGISTRY_TIMEOUT_S)
    except requests.RequestException as exc:
        raise HarnessError(f"registry {registry} does not answer ({type(exc).__name__}): "
                           "start it, or check --registry / swarm.registry") from None
    if answer.status_code not in (200, 401):
        raise HarnessError(f"registry {registry}: GET {url} answered HTTP {answer.status_code}, not a registry")


def pinned_image(api: Any, image: str, registry: str | None) -> str:
    """The reference a service should run for local `image` (a tag or an id)."""
    image_id = str(api.inspect_image(image)["Id"])
    if registry is None:
        return image_id
    key = (image_id, registry)
    with _lock:
        if key not in _pushed:
            _pushed[key] = _push(api, image_id, registry)
        return _pushed[key]


def _push(api: Any, image_id: str, registry: str) -> str:
    """Tag and push one image; its `registry/repo@sha256:...` digest reference."""
    repo, tag = f"{registry}/{RUN_REPO}", image_id.split(":", 1)[-1][:20]
    api.tag(image_id, repo, tag)
    error = None
    for line in api.push(repo, tag=tag, stream=True, decode=True):
        if isinstance(line, dict) and line.get("error"):
            error = str(line["error"]).splitlines()[0]
    if error:
        raise HarnessError(f"registry {registry}: push of {image_id[:19]} failed: {error}")
    for ref in api.inspect_image(image_id).get("RepoDigests") or []:
        if ref.startswith(f"{repo}@"):
            return str(ref)
    raise HarnessError(f"registry {registry}: push of {image_id[:19]} gave no digest")
