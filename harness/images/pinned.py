"""A submission's image in a registry, pinned by digest (`build: {image: REGISTRY/TEAM/NAME@sha256:HEX}`): pulled
through the engine exactly at that digest, or taken as it is when the engine has it already (so a re-queued job,
or another dataset of the same submission, pulls nothing), then tagged as every submission's image is.

Credentials: the engine's own (`docker login REGISTRY` of the user the harness runs as), or, when
`$HARNESS_PULL_DOCKER_CONFIG` names a folder, the docker CLI configuration in it for the pull alone (the portal
writes one per evaluation with a pull token it signs itself: harness.portal.pinned). A registry that cannot be
reached or refuses the harness's credentials is an `infra_error` (not the team's fault); an image the registry
does not have is the team's `build_error`.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from harness.errors import HarnessError
from harness.images import base as images

#: a folder holding a docker CLI `config.json` used for the pull of a pinned image (and nothing else)
PULL_CONFIG_VARIABLE = "HARNESS_PULL_DOCKER_CONFIG"
#: what docker says when the registry cannot be reached, or refuses the harness's own credentials
_UNREACHABLE = re.compile(r"no such host|dial tcp|lookup |connection refused|network is unreachable|i/o timeout|"
                          r"TLS handshake timeout|Client\.Timeout|server gave HTTP response to HTTPS client", re.I)
_REFUSED = re.compile(r"unauthorized|authentication required|denied|no basic auth credentials", re.I)


class PullError(HarnessError):
    """The registry has no such image (the submission's fault: `build_error`)."""


class RegistryUnreachable(HarnessError):
    """The registry did not answer or refused the harness's credentials (the organizer's side: the batch records
    it as `infra_error`)."""


def env_with_config(config: Path | str | None, engine: str | None = None) -> dict[str, str]:
    """The docker CLI's environment for `engine` (images.docker_env) with `DOCKER_CONFIG` set to `config` (when
    given). The CLI's current context lives in the configuration it replaces, so the engine it names is kept as
    `DOCKER_HOST` (unless the environment names one already)."""
    env = images.docker_env(engine)
    if config is None:
        return env
    if "DOCKER_HOST" not in env and engine != images.LOCAL_ENGINE:
        host = subprocess.run(["docker", "context", "inspect", "--format", "{{.Endpoints.docker.Host}}"],
                              capture_output=True, text=True, timeout=60, env=env)
        if host.returncode == 0 and host.stdout.strip():
            env["DOCKER_HOST"] = host.stdout.strip()
    env["DOCKER_CONFIG"] = str(config)
    return env


def pull_pinned(ref: str, log: Path, tag: str, timeout_s: float, engine: str | None = None) -> str:
    """The id of the image `ref` (pinned by digest) on `engine`, pulled unless it is there already, tagged `tag`;
    docker's output is appended to `log`."""
    with log.open("a", encoding="utf-8") as f:
        if images.image_exists(ref, engine):
            f.write(f"# {ref}: on this engine already (the same digest): not pulled again\n")
            pulled = False
        else:
            f.write(f"$ docker pull {ref}\n")
            pulled = True
    if pulled:
        config = os.environ.get(PULL_CONFIG_VARIABLE) or None
        start = log.stat().st_size
        with log.open("ab") as out:
            try:
                proc = subprocess.run(["docker", "pull", ref], stdout=out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, timeout=timeout_s, env=env_with_config(config, engine))
            except subprocess.TimeoutExpired:
                raise RegistryUnreachable(f"{ref}: docker pull took longer than {timeout_s:.0f} s") from None
        with log.open("rb") as f:
            f.seek(start)
            said = images.last_line(f.read())
        if proc.returncode != 0:
            if _UNREACHABLE.search(said) or _REFUSED.search(said):
                raise RegistryUnreachable(f"{ref}: the registry did not give the image: {said}")
            raise PullError(f"{ref}: docker pull failed: {said}")
    image_id = images.inspect_image(ref, engine)["Id"]
    images.docker(["tag", image_id, tag], engine=engine)
    return str(image_id)
