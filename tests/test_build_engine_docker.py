"""The swarm's build engine against a real Docker engine: one that does not answer is one line, and moving an image
the engine already has only tags it (the config and command line are tests/test_build_engine.py's; the lab test,
tests/test_swarm_lab_docker.py, moves one across engines)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.docker


def test_an_unreachable_build_engine_is_one_line(tmp_path: Path) -> None:
    """The swarm backend checks the build engine before any build (here: a socket nobody serves)."""
    from harness.batch.scheduler import check_build_engine
    from harness.errors import HarnessError

    sock = tmp_path / "nobody.sock"
    with pytest.raises(HarnessError) as err:
        check_build_engine(f"unix://{sock}")
    assert str(err.value).startswith(f"build engine unix://{sock} does not answer: ")
    assert str(err.value).endswith("(check --build-engine / swarm.build_engine)") and "\n" not in str(err.value)


def test_moving_an_image_the_engine_has_already_copies_nothing_and_tags_it(tmp_path: Path) -> None:
    """Image ids are content-addressed: `local` is this engine too, so the move only tags (a copy between two
    engines is the lab test's)."""
    from harness.images.base import docker, ensure_base_image, inspect_image
    from harness.images.move import move_image

    base = ensure_base_image()
    tag = "harness-test-moved:swarmbuild"
    log = tmp_path / "build.log"
    try:
        moved = move_image(base, "local", tag=tag, log=log)
        assert moved.copied is False and moved.id == inspect_image(base)["Id"] == inspect_image(tag)["Id"]
        assert "built on engine local, moved to the harness's engine: already there, not copied" in log.read_text()
    finally:
        docker(["rmi", tag], check=False)


def test_moving_from_an_engine_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    from harness.images.base import ImageError
    from harness.images.move import move_image

    sock = tmp_path / "nobody.sock"
    with pytest.raises(ImageError) as err:
        move_image("some-image:latest", f"unix://{sock}")
    assert str(err.value).startswith(f"image some-image:latest cannot be moved from engine unix://{sock}: ")
    assert "Cannot connect to the Docker daemon" in str(err.value) and "\n" not in str(err.value)
