"""A fetch volume made an image for swarm nodes (`run.fetch.ship`) on the real Docker engine: the files, modes and
owners the fetch wrote are in the image at /harness-fetched, the image is made once per fill (a re-evaluation
finds it), a refetch (a new record) makes a new one, and the tool that fills the node's volume from it gives the
volume the fetch wrote back. The swarm part (the fill service on a worker, the run reading it) is the lab's:
tests/test_swarm_lab_docker.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from harness.run import network
from harness.run.fetch import cache
from harness.run.fetch.ship import fetched_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

WRITE = ("mkdir -p /v/model && head -c 3000000 /dev/urandom > /v/model/w.bin && echo cfg > /v/model/c.json && "
         "chmod 600 /v/model/c.json && ln -s model /v/latest && chown -R 1234:1234 /v && "
         "sha256sum /v/model/w.bin | cut -c1-64")


@pytest.fixture()
def world() -> Iterator[tuple[object, str, str]]:
    from harness.images.base import ensure_base_image
    from harness.run.docker_backend import docker_api

    api, base = docker_api(), ensure_base_image()
    key = uuid.uuid4().hex * 2
    volume = cache.volume_name(key)
    api.create_volume(volume, labels={cache.LABEL: "1"})
    yield api, base, volume
    for ref in api.images(name=volume, quiet=True):
        api.remove_image(ref, force=True)
    cache.forget(api, volume)


def _sh(api, image: str, script: str, binds: list[str]) -> str:
    cid = api.create_container(image, entrypoint=["sh", "-c", script], user="0:0",
                               host_config=api.create_host_config(binds=binds, network_mode="none"))["Id"]
    try:
        api.start(cid)
        assert api.wait(cid, timeout=300)["StatusCode"] == 0, api.logs(cid)
        return str(api.logs(cid, stdout=True, stderr=False).decode().strip())
    finally:
        api.remove_container(cid, force=True)


def test_the_volume_travels_as_an_image_once_per_fill(world) -> None:
    api, base, volume = world
    key = volume.removeprefix(cache.VOLUME_PREFIX)
    sha = _sh(api, base, WRITE, [f"{volume}:/v"])
    cache.write_record(volume, {"key": key, "bytes": 3_000_000})
    ref = fetched_image(api, api, None, volume, key, base)
    assert ref == f"{volume}:volume"
    first = api.inspect_image(ref)["Id"]
    labels = api.inspect_image(ref)["Config"]["Labels"]  # a commit keeps its container's labels: not the owner's
    assert labels.get("harness") != "1" and not labels.get("harness.pid") and labels[cache.LABEL] == "1"
    inside = _sh(api, ref, "cd /harness-fetched && sha256sum model/w.bin | cut -c1-64 && stat -c '%u:%g %a %n' "
                           "model model/c.json latest . && readlink latest", [])
    assert inside.splitlines() == [sha, "1234:1234 755 model", "1234:1234 600 model/c.json",
                                   "1234:1234 777 latest", "1234:1234 755 .", "model"]
    assert fetched_image(api, api, None, volume, key, base) == ref and api.inspect_image(ref)["Id"] == first
    # the node's side: volume_tool.py unpack fills an empty volume from the image as the fetch left it
    node_volume = f"{volume}-node"
    try:
        from pathlib import Path

        import harness.run.fetch.volume_tool as tool

        script = Path(tool.__file__).read_text()
        cid = api.create_container(ref, entrypoint=["python3", "-c", script, "unpack", "stamp-1"], user="0:0",
                                   host_config=api.create_host_config(binds=[f"{node_volume}:/volume"],
                                                                      network_mode="none"))["Id"]
        # what every harness does when it starts: remove what dead harnesses left; a container made from the
        # image is nobody's leftover
        network.remove_resources(api)
        assert api.containers(all=True, filters={"id": cid}), "a container of the fetched image was swept"
        api.start(cid)
        assert api.wait(cid, timeout=300)["StatusCode"] == 0
        assert api.logs(cid).decode().startswith("filled ")
        api.remove_container(cid, force=True)
        again = _sh(api, base, "cd /n && sha256sum model/w.bin | cut -c1-64 && stat -c '%u:%g %a' . model/c.json "
                               "&& cat .harness-fetch-stamp", [f"{node_volume}:/n:ro"])
        assert again.splitlines() == [sha, "1234:1234 755", "1234:1234 600", "stamp-1"]
    finally:
        api.remove_volume(node_volume, force=True)
    # a refetch writes a new record: a new image
    cache.write_record(volume, {"key": key, "bytes": 3_000_000})
    assert fetched_image(api, api, None, volume, key, base) == ref and api.inspect_image(ref)["Id"] != first
