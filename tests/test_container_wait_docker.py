"""How the Docker backend waits on a participant's container, on a real engine: it finds the exit code, and asks the
engine for the container's state a bounded number of times (each answer costs the engine and the harness CPU, for
every running participant)."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytestmark = pytest.mark.docker


class _CountingApi:
    """The real Docker API client, counting the `inspect_container` calls made through it."""

    def __init__(self, api: Any) -> None:
        self.api, self.inspects = api, 0

    def inspect_container(self, cid: str) -> dict:
        self.inspects += 1
        return self.api.inspect_container(cid)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


def test_a_watchdog_poll_asks_once_and_a_long_wait_every_quarter_second() -> None:
    from harness.images.base import DEFAULT_TAG, ensure_base_image
    from harness.run.docker_backend import INSPECT_EVERY_S, _Container, docker_api, wait_exit

    api = docker_api()
    ensure_base_image()
    cid = api.create_container(DEFAULT_TAG, ["sleep", "600"], labels={"harness.test": "container-wait"},
                               host_config=api.create_host_config(network_mode="none"))["Id"]
    try:
        api.start(cid)
        counting = _CountingApi(api)
        participant = _Container(counting, cid)
        for _ in range(5):  # the watchdog's polls while it runs: one question each
            assert participant.wait(INSPECT_EVERY_S) is None
        assert counting.inspects == 5
        counting.inspects = 0
        seconds = 1.0
        assert wait_exit(counting, cid, seconds) is None
        # asked at once, then after each sleep of INSPECT_EVERY_S and at the end (fewer on a slow machine)
        assert 2 <= counting.inspects <= math.ceil(seconds / INSPECT_EVERY_S) + 1
        api.kill(cid)
        assert participant.wait(30) == 137  # killed: SIGKILL's code, found by the wait
        assert participant.wait(INSPECT_EVERY_S) == 137
    finally:
        api.remove_container(cid, force=True)
    assert wait_exit(api, cid, 1.0) == -1  # removed: ended, with no code left to read


class _CountingSwarmApi(_CountingApi):
    """The real Docker API client, counting the swarm `tasks` lists asked for through it."""

    def tasks(self, filters: dict | None = None) -> list:
        self.inspects += 1
        return self.api.tasks(filters=filters)


def test_a_swarm_task_is_asked_for_as_a_container_is(swarm) -> None:
    import threading

    import docker

    from harness.images.base import DEFAULT_TAG, ensure_base_image
    from harness.run.docker_backend import INSPECT_EVERY_S, docker_api
    from harness.run.swarm.backend import _Task, wait_task_running

    api = docker_api()
    ensure_base_image()
    spec = docker.types.TaskTemplate(container_spec=docker.types.ContainerSpec(DEFAULT_TAG, ["sleep", "600"]),
                                     restart_policy=docker.types.RestartPolicy(condition="none"))
    service = api.create_service(spec, name="harness-test-task-wait", labels={"harness.test": "container-wait"},
                                 endpoint_spec=docker.types.EndpointSpec(mode="dnsrr"))["ID"]
    try:
        wait_task_running(api, service, "test", 120)
        counting = _CountingSwarmApi(api)
        participant = _Task(counting, service, threading.Event())
        for _ in range(5):
            assert participant.wait(INSPECT_EVERY_S) is None
        assert counting.inspects == 5
        counting.inspects = 0
        assert participant.wait(1.0) is None
        assert 2 <= counting.inspects <= math.ceil(1.0 / INSPECT_EVERY_S) + 1
        participant.kill()
        assert participant.wait(60) == 137 and participant.ended.is_set()
    finally:
        try:
            api.remove_service(service)
        except docker.errors.NotFound:
            pass
