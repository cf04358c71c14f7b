"""Moving an image from the engine that built it to the harness's engine: `docker save ID | docker load`, streamed.

Used when a swarm's nodes cannot reach the internet (`swarm.build_engine`, `--build-engine`): images are built where
the network is and moved to the manager, which pushes them to the registry by digest as before. Image ids are
content-addressed, so an image the manager already has (same id) is not copied again.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.images import base as images
from harness.images.base import ImageError

DEFAULT_MOVE_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class Moved:
    """An image moved to the harness's engine: its id there and whether its bytes were copied (False: the harness's
    engine had that image already)."""

    id: str
    copied: bool


def move_image(ref: str, source: str, tag: str | None = None, log: Path | None = None,
               timeout_s: float = DEFAULT_MOVE_TIMEOUT_S) -> Moved:
    """Copy image `ref` (tag or id) from engine `source` (see images.docker_env) to the harness's engine (the one
    `$DOCKER_HOST` names) and tag it `tag` there; ImageError (one line) if it cannot be done."""
    found = images.docker(["image", "inspect", "--format", "{{.Id}}", ref], check=False, engine=source)
    if found.returncode != 0:
        raise ImageError(f"image {ref} cannot be moved from engine {source}: "
                         f"{images.last_line(found.stderr or found.stdout)}")
    image_id = found.stdout.decode().strip()
    copied = not images.image_exists(image_id)
    target_id = _stream(image_id, source, timeout_s) if copied else image_id
    if tag:
        images.docker(["tag", target_id, tag])
    if log is not None:
        with log.open("a", encoding="utf-8") as f:
            how = "copied (docker save | docker load)" if copied else "already there, not copied"
            f.write(f"# image {image_id} built on engine {source}, moved to the harness's engine: {how}"
                    f"{f', id there {target_id}' if target_id != image_id else ''}\n")
    return Moved(target_id, copied)


def _stream(image_id: str, source: str, timeout_s: float) -> str:
    """`docker save IMAGE_ID` on `source` piped into `docker load` on the harness's engine; the loaded image's id."""
    what = f"moving image {image_id[:19]} from engine {source} to the harness's engine"
    with tempfile.TemporaryFile() as save_err:
        save = subprocess.Popen(["docker", "save", image_id], stdout=subprocess.PIPE, stderr=save_err,
                                env=images.docker_env(source))
        try:
            load = subprocess.Popen(["docker", "load"], stdin=save.stdout, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, env=images.docker_env())
        except BaseException:
            save.kill()
            save.wait()
            raise
        assert save.stdout is not None
        save.stdout.close()  # the load process holds the pipe now: a load that dies makes the save stop
        try:
            output, _ = load.communicate(timeout=timeout_s)
            save_rc = save.wait(timeout=timeout_s)
        except BaseException as exc:
            for proc in (save, load):
                proc.kill()
                proc.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise ImageError(f"{what} took longer than {timeout_s:.0f} s") from None
            raise
        if save_rc != 0:
            save_err.seek(0)
            raise ImageError(f"{what} failed: docker save: {images.last_line(save_err.read())}")
    if load.returncode != 0:
        raise ImageError(f"{what} failed: docker load: {images.last_line(output)}")
    for line in output.decode("utf-8", "replace").splitlines():
        if line.strip().startswith("Loaded image ID:"):
            return line.split(":", 1)[1].strip()
    return image_id
