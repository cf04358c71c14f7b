"""`harness submit` of an image through the organizer's registry, pinned by digest, all real and on loopback: a
portal whose `portal:` section names its registry and an image size cap, Debian's docker-registry with the portal
as its token server, and a team's folder naming an image on the local engine by tag (built FROM the harness's base
image). The image is pushed, the submission names its digest and is scored; the same image again moves no layer; an
image over the cap is refused before any layer moves; a tag-only reference is refused; a plain `docker push` is no
submission; and a push lives in the registry across a portal restart (`--push-only`, then the folder naming the
digest), the evaluation pulling it with the portal's own token."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.portal.upload_client import pack_folder, upload
from tests.evaluate_data.support import make_submission
from tests.portal_support import Campaign, PortalProcess, api, harness, make_campaign, wait_until_ended
from tests.registry_support import RegistryProcess, docker_as, free_port, remove_images

pytestmark = [pytest.mark.docker, pytest.mark.registry, pytest.mark.slow]

SYSTEM = "Probe.Image"  # upper case and a dot: the repository is `alpha/probe-image`


@dataclass
class World:
    campaign: Campaign
    portal: PortalProcess
    registry: RegistryProcess
    port: int  # the portal's, kept across its restart (the registry sends clients there for tokens)
    alpha: str  # alpha's token
    root: Path
    image: str  # the team's image on the local engine, by tag
    big: str  # the same with 120 MB more: over the cap
    cap_gb: float

    def submit(self, folder: Path, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        return subprocess.run(harness("submit", str(folder), "--portal", self.portal.url, *extra),
                              capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "HARNESS_PORTAL_TOKEN": self.alpha})

    def submissions(self) -> list[dict]:
        return list(api(self.portal.url, self.alpha, "submissions").json()["submissions"])

    def folder(self, name: str, image: str) -> Path:
        """alpha's submission folder naming `image` in `build.image` (nothing else in it)."""
        folder = self.root / "folders" / name
        folder.mkdir(parents=True, exist_ok=True)
        doc = {"team": "alpha", "system": SYSTEM, "contact": "a@example.org", "track": "text-en-es",
               "kind": "primary", "build": {"image": image}, "command": "python3 /app/probe_agent.py copy"}
        (folder / "submission.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        return folder


def _build(context: Path, tag: str) -> int:
    """`docker build` of `context` as `tag` (network off); the image's size in bytes."""
    from harness.images.base import docker_env

    subprocess.run(["docker", "build", "-q", "--network", "none", "-t", tag, str(context)], check=True,
                   capture_output=True, timeout=900, env=docker_env())
    size = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", tag], check=True,
                          capture_output=True, text=True, timeout=60).stdout
    return int(size.strip())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from harness.images.base import ensure_base_image

    root = tmp_path_factory.mktemp("images")
    ensure_base_image()
    mark = secrets.token_hex(4)  # an image of this module's own: removing it removes nobody else's
    made = make_submission(root / "build", "probe", "python3 /app/probe_agent.py copy", team="alpha")
    with (made / "Dockerfile").open("a", encoding="utf-8") as f:
        f.write(f"LABEL org.harness.test=portal-images-{mark}\n")
    image, big = f"harness-test-team-image-{mark}:1", f"harness-test-team-image-{mark}:big"
    size = _build(made, image)
    (root / "big").mkdir()
    (root / "big" / "Dockerfile").write_text(f"FROM {image}\nUSER root\nRUN head -c 120000000 /dev/zero > /ballast\n"
                                             "USER participant\n", encoding="utf-8")
    _build(root / "big", big)
    ids = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", image, big], check=True,
                         capture_output=True, text=True, timeout=60).stdout.split()
    cap_gb = round((size + 60_000_000) / 1e9, 3)

    campaign = make_campaign(root / "campaign")
    address = f"127.0.0.1:{free_port()}"
    task = campaign.config.read_text(encoding="utf-8")
    task = task.replace("portal:\n", f"portal:\n  registry: {address}\n  max_image_gb: {cap_gb}\n")
    campaign.config.write_text(task.replace("per_day: 2, total: 10, at_once: 2",
                                            "per_day: 20, total: 50, at_once: 5"), encoding="utf-8")
    alpha = campaign.token("alpha")
    port = free_port()
    portal = PortalProcess(campaign, "--listen", f"127.0.0.1:{port}")
    registry: RegistryProcess | None = None
    made: World | None = None
    try:
        registry = RegistryProcess(campaign, portal.url, address, root / "storage", root / "registry.log")
        made = World(campaign, portal, registry, port, alpha, root, image, big, cap_gb)
        yield made
    finally:
        if registry is not None:
            registry.stop()
        (made.portal if made is not None else portal).stop()  # the one started last
        remove_images(address)  # (by id: an image the evaluation pulled has a digest and no tag)
        subprocess.run(["docker", "rmi", "-f", *reversed(ids)], capture_output=True, timeout=120)  # big first


def _said(proc: subprocess.CompletedProcess[str]) -> str:
    return (proc.stdout + proc.stderr).strip()


def _pinned(output: str) -> str:
    found = re.findall(r"harness submit: pushed (\S+@sha256:[0-9a-f]{64})", output)
    assert found, output
    return found[-1]


def _submission_id(output: str) -> str:
    found = re.search(r"^harness submit: submission (\S+) ", output, re.M)
    assert found, output
    return found.group(1)


def test_a_tag_only_reference_is_refused(world: World) -> None:
    tagged = world.folder("tagged", f"{world.registry.address}/alpha/probe:1")
    check = subprocess.run(harness("check", str(tagged)), capture_output=True, text=True, timeout=300)
    assert check.returncode != 0 and "names an image by tag: pin it by digest" in _said(check), _said(check)
    before = len(world.submissions())
    url = f"{world.portal.url}/api/v1/uploads"
    cases = {  # what the portal says of a folder uploaded as it is (not through `harness submit`)
        "tagged": "pin it by digest",
        "theirs": "not one of your team's repositories",
        "absent": "the organizer's registry has no such image",
        "elsewhere": "not in the organizer's registry",
    }
    world.folder("theirs", f"{world.registry.address}/beta/probe@sha256:{'1' * 64}")
    world.folder("absent", f"{world.registry.address}/alpha/probe@sha256:{'2' * 64}")
    world.folder("elsewhere", f"registry.example.org/alpha/probe@sha256:{'3' * 64}")
    for name, line in cases.items():
        archive = pack_folder(world.root / "folders" / name, world.root / f"{name}.tar.gz")
        with pytest.raises(HarnessError) as refused:
            upload(url, archive, world.alpha, {"filename": archive.name})
        said = str(refused.value)
        assert line in said and len(said.splitlines()) == 1, said
        print(f"\n{name}: {said}")
    assert len(world.submissions()) == before


def test_an_image_over_the_cap_is_refused_before_any_layer_moves(world: World) -> None:
    blobs, before = world.registry.blobs(), len(world.submissions())
    proc = world.submit(world.folder("big", world.big))
    assert proc.returncode != 0, _said(proc)
    last = proc.stderr.strip().splitlines()[-1]
    assert re.search(rf"GB, over the portal's image size cap of {world.cap_gb:g} GB: nothing was pushed", last), last
    assert "pushing" not in proc.stdout and "Pushed" not in proc.stderr, _said(proc)
    print(f"\n{last}")
    assert world.registry.blobs() == blobs
    assert len(world.submissions()) == before


def test_a_local_image_is_pushed_pinned_by_digest_and_scored(world: World) -> None:
    proc = world.submit(world.folder("first", world.image), "--wait")
    assert proc.returncode == 0, _said(proc)
    assert "Pushed" in proc.stderr, proc.stderr  # docker's progress, shown
    pinned = _pinned(proc.stdout)
    assert pinned.startswith(f"{world.registry.address}/alpha/probe-image@sha256:")
    sub_id = _submission_id(proc.stdout)
    stored = world.campaign.state / "submissions" / sub_id
    assert yaml.safe_load((stored / "submission.yaml").read_text(encoding="utf-8"))["build"] == {"image": pinned}
    assert sorted(p.name for p in stored.iterdir()) == ["submission.yaml"]
    manifest = json.loads((world.campaign.state / "results" / sub_id / "manifest.json").read_text(encoding="utf-8"))
    digest = pinned.rpartition("@")[2]
    assert manifest["image"]["reference"] == pinned and manifest["image"]["digest"] == digest
    assert manifest["runs"]["dev"]["image_digest"] == digest
    job = api(world.portal.url, world.alpha, f"submissions/{sub_id}").json()["jobs"][0]
    assert job["state"] == "scored" and job["scores"]["BLEU"] > 0, job


def test_the_same_image_again_moves_no_layer(world: World) -> None:
    blobs = world.registry.blobs()
    proc = world.submit(world.folder("again", world.image))
    assert proc.returncode == 0, _said(proc)
    layers = [line for line in proc.stderr.splitlines() if re.match(r"^[0-9a-f]{12}: ", line)]
    final = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in layers}
    assert final and set(final.values()) == {"Layer already exists"}, proc.stderr
    assert "Pushed" not in proc.stderr
    assert world.registry.blobs() == blobs
    print("\n" + "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("upload [")))
    sub_id = _submission_id(proc.stdout)
    cancel = api(world.portal.url, world.alpha, f"submissions/{sub_id}/cancel", "POST")
    assert cancel.status_code == 200 or "ended" in cancel.text, cancel.text


def test_a_plain_docker_push_is_no_submission(world: World) -> None:
    before = len(world.submissions())
    config, ref = world.root / "docker-alpha", f"{world.registry.address}/alpha/plain:1"
    login = docker_as(config, "login", world.registry.address, "-u", "alpha", "--password-stdin",
                      stdin=world.alpha + "\n")
    assert login.returncode == 0, _said(login)
    subprocess.run(["docker", "tag", world.image, ref], check=True, capture_output=True, timeout=60)
    push = docker_as(config, "push", ref)
    assert push.returncode == 0 and "digest: sha256:" in push.stdout, _said(push)
    time.sleep(2)  # were anything listening for pushes, it would have made a submission by now
    assert len(world.submissions()) == before


def test_a_push_survives_a_portal_restart_and_the_evaluation_pulls_it(world: World) -> None:
    before = len(world.submissions())
    pushed = world.submit(world.folder("push-only", world.image), "--push-only")
    assert pushed.returncode == 0, _said(pushed)
    pinned = _pinned(pushed.stdout)
    assert f"build: {{image: {pinned}}}" in pushed.stdout
    assert len(world.submissions()) == before  # a push alone is no submission
    world.portal.stop()
    # the engine forgets it was ever in the registry: the evaluation has to pull it (the image stays by its tag)
    tags = subprocess.run(["docker", "image", "inspect", "--format", "{{json .RepoTags}} {{json .RepoDigests}}",
                           world.image], check=True, capture_output=True, text=True, timeout=60).stdout
    for ref in re.findall(r'"([^"]+)"', tags):  # (a repository's digest goes with its last tag: no check)
        if ref.startswith(world.registry.address + "/"):
            subprocess.run(["docker", "rmi", ref], capture_output=True, timeout=120)
    assert subprocess.run(["docker", "image", "inspect", pinned], capture_output=True, timeout=60).returncode != 0
    world.portal = PortalProcess(world.campaign, "--listen", f"127.0.0.1:{world.port}")

    proc = world.submit(world.folder("pinned", pinned), "--wait")
    assert proc.returncode == 0, _said(proc)
    assert "pushing" not in proc.stdout  # named by digest already: uploaded as it is
    sub_id = _submission_id(proc.stdout)
    sub = wait_until_ended(world.portal.url, world.alpha, sub_id)
    assert sub["jobs"][0]["state"] == "scored", sub
    build_log = (world.campaign.state / "results" / sub_id / "build.log").read_text(encoding="utf-8")
    assert f"$ docker pull {pinned}" in build_log and f"Digest: {pinned.rpartition('@')[2]}" in build_log, build_log
    assert not list((world.campaign.state / "registry").glob("pull-*"))  # the portal's pull token is gone
