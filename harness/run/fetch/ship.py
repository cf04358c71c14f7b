"""Shipping a filled fetch volume to swarm nodes as an image, the way submission images travel.

A volume lives on one Docker engine: the one the fetch ran on (the build engine where the nodes have no internet,
`--build-engine`, else the manager). For a node that runs the submission it is copied into a *fetched image*:
the harness's base image plus one layer holding the volume's files at `SOURCE_ROOT` (`docker cp` from the volume
into a created container, streamed, then `docker commit`), moved to the manager (`images.move`) and pushed to the
registry by digest (`swarm.registry`) like any image. On the node, `run.swarm.fetch_fill` unpacks it into a volume
of the same name, once per node and fill. The image is made once per fill of the volume (its record's
`finished_at`, a label): a re-evaluation finds it, a `--refetch` makes a new one.
"""

from __future__ import annotations

from typing import Any

from harness.run import failures, network
from harness.run.fetch import cache

SOURCE_ROOT = "/harness-fetched"
STAMP_LABEL = f"{cache.LABEL}.stamp"
TAG = "volume"


def image_repo(volume: str) -> str:
    return volume  # `harness-fetch-<key>`: a valid repository name


def fetched_image(fetch_api: Any, harness_api: Any, engine: str | None, volume: str, key: str,
                  helper_image: str) -> str:
    """The local reference (on the harness's engine) of the image carrying `volume`'s files, made now unless the
    harness's engine has it for this fill already; `failures.InfraError` (one line) when it cannot be made."""
    rec = cache.read_record(volume, key) or {}
    stamp = str(rec.get("finished_at") or "")
    ref = f"{image_repo(volume)}:{TAG}"
    if stamp and _stamp_of(harness_api, ref) == stamp:
        return ref
    made = _commit(fetch_api, volume, key, stamp, helper_image, ref)
    if engine is not None:  # made on the build engine: moved to the harness's engine as submission images are
        from harness.images.base import ImageError
        from harness.images.move import move_image

        try:
            move_image(made, engine, tag=ref)
        except ImageError as exc:
            raise failures.InfraError(f"fetch: the fetched files cannot be shipped: {exc}") from None
    return ref


def _stamp_of(api: Any, ref: str) -> str | None:
    import docker.errors

    try:
        labels = (api.inspect_image(ref).get("Config") or {}).get("Labels") or {}
    except docker.errors.ImageNotFound:
        return None
    return labels.get(STAMP_LABEL)


def _commit(api: Any, volume: str, key: str, stamp: str, helper_image: str, ref: str) -> str:
    """`docker cp` the volume into a container of the helper image (streamed, never on disk here), committed as
    `ref`; the new image's id."""
    import docker.errors

    made: list[str] = []
    # owned by this process: another harness's start-up sweep removes only what a dead harness left
    owned = {**network.labels(volume, "fetch-ship"), cache.LABEL: "1"}
    # the image must not carry the helpers' ownership (a commit keeps the container's labels): a container made
    # from it later would look like a dead harness's leftover to every sweep
    unowned = {name: "" for name in network.labels(volume, "fetch-ship")}
    try:
        src = api.create_container(helper_image, command=["true"], network_disabled=True, labels=owned,
                                   host_config=api.create_host_config(binds=[f"{volume}:{SOURCE_ROOT}:ro"],
                                                                      network_mode="none"))["Id"]
        made.append(src)
        dst = api.create_container(helper_image, command=["true"], network_disabled=True, labels=owned,
                                   host_config=api.create_host_config(network_mode="none"))["Id"]
        made.append(dst)
        stream, _stat = api.get_archive(src, SOURCE_ROOT)
        if not api.put_archive(dst, "/", stream):
            raise failures.InfraError(f"fetch: the files of {volume} could not be copied into an image")
        repo, _, tag = ref.partition(":")
        image = api.commit(dst, repository=repo, tag=tag, conf={
            "Labels": {**unowned, cache.LABEL: "1", f"{cache.LABEL}.key": key, STAMP_LABEL: stamp},
            "Cmd": ["true"]})
        return str(image["Id"])
    except docker.errors.APIError as exc:
        detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
        raise failures.InfraError(f"fetch: the files of {volume} could not be made an image: {detail}") from None
    finally:
        for cid in made:
            try:
                api.remove_container(cid, force=True)
            except docker.errors.APIError:
                pass
