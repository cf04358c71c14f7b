"""The organizer's Docker registry with the portal as its token server, all real and on loopback: `harness
portal` (its token endpoint), Debian's docker-registry started with the config `harness portal registry-config`
writes, and the docker CLI logging in with a team's portal token (its credentials in a temporary DOCKER_CONFIG,
never ~/.docker). A team pushes its own repository, is denied another team's, a revoked token cannot log in, and
the organizer pulls what a team pushed."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.portal_support import Campaign, PortalProcess, make_campaign
from tests.registry_support import RegistryProcess, free_port, remove_images

pytestmark = [pytest.mark.docker, pytest.mark.registry, pytest.mark.slow]


@dataclass
class Setup:
    campaign: Campaign
    portal: PortalProcess
    registry: str  # 127.0.0.1:PORT
    tokens: dict[str, str]
    root: Path

    def docker(self, who: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """The docker CLI with `who`'s own credentials folder."""
        config = self.root / f"docker-config-{who}"
        config.mkdir(exist_ok=True)
        return subprocess.run(["docker", *args], input=stdin, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "DOCKER_CONFIG": str(config)})

    def login(self, who: str, token: str) -> subprocess.CompletedProcess[str]:
        return self.docker(who, "login", self.registry, "-u", "organizer" if who == "organizer" else who,
                           "--password-stdin", stdin=token + "\n")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("registry")
    campaign = make_campaign(root / "campaign")
    tokens = {owner: campaign.token(owner) for owner in ("alpha", "organizer")}
    portal = PortalProcess(campaign)
    address = f"127.0.0.1:{free_port()}"
    try:
        registry = RegistryProcess(campaign, portal.url, address, root / "images", root / "registry.log")
    except BaseException:
        portal.stop()
        raise
    assert f"docker-registry serve {registry.config}" in registry.stdout
    made = Setup(campaign, portal, address, tokens, root)
    try:
        first = registry.first
        assert first.status_code == 401
        assert first.headers["WWW-Authenticate"].startswith(f'Bearer realm="{portal.url}/api/v1/registry/token"')
        yield made
    finally:
        registry.stop()
        portal.stop()
        remove_images(address)  # every tiny image made here, untagged ones too


def _one_file_image(ref: str) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"hello\n"))
    subprocess.run(["docker", "import", "-", ref], input=data.getvalue(), check=True, capture_output=True,
                   timeout=120)


def _said(proc: subprocess.CompletedProcess[str]) -> str:
    return (proc.stdout + proc.stderr).strip()


def _alpha_pushes(setup: Setup) -> subprocess.CompletedProcess[str]:
    """alpha logs in and pushes the tiny image to alpha/tiny:1 (again: the same digest)."""
    login = setup.login("alpha", setup.tokens["alpha"])
    assert login.returncode == 0 and "Login Succeeded" in login.stdout, _said(login)
    _one_file_image(f"{setup.registry}/alpha/tiny:1")
    return setup.docker("alpha", "push", f"{setup.registry}/alpha/tiny:1")


def test_a_team_logs_in_with_its_token_and_pushes_its_own_repository(setup: Setup) -> None:
    push = _alpha_pushes(setup)
    assert push.returncode == 0, _said(push)
    assert "digest: sha256:" in push.stdout
    assert setup.registry in (setup.root / "docker-config-alpha" / "config.json").read_text()  # not ~/.docker


def test_a_push_to_another_teams_repository_is_denied(setup: Setup) -> None:
    assert _alpha_pushes(setup).returncode == 0  # its layer is in the registry: a mount from alpha is tried too
    ours, theirs = f"{setup.registry}/alpha/tiny:1", f"{setup.registry}/beta/tiny:1"
    subprocess.run(["docker", "tag", ours, theirs], check=True, capture_output=True, timeout=60)
    push = setup.docker("alpha", "push", theirs)
    assert push.returncode != 0, _said(push)
    assert "denied" in _said(push), _said(push)
    print(f"\ndocker push {theirs} as alpha: {_said(push).splitlines()[-1]}")


def test_a_revoked_token_cannot_log_in(setup: Setup) -> None:
    token = setup.campaign.token("beta")
    setup.campaign.token("beta", "--revoke")
    login = setup.login("beta", token)
    assert login.returncode != 0, _said(login)
    said = _said(login)
    assert len(said.splitlines()) == 1 and "revoked token" in said, said
    print(f"\ndocker login as beta with a revoked token: {said}")


def test_the_organizer_pulls_a_teams_image_and_pushes_nothing(setup: Setup) -> None:
    ref = f"{setup.registry}/alpha/tiny:1"
    assert _alpha_pushes(setup).returncode == 0
    login = setup.login("organizer", setup.tokens["organizer"])
    assert login.returncode == 0, _said(login)
    subprocess.run(["docker", "rmi", "-f", ref], capture_output=True, timeout=120)
    pull = setup.docker("organizer", "pull", ref)
    assert pull.returncode == 0, _said(pull)
    assert subprocess.run(["docker", "image", "inspect", ref], capture_output=True, timeout=60).returncode == 0
    push = setup.docker("organizer", "push", ref)
    assert push.returncode != 0 and "denied" in _said(push), _said(push)
