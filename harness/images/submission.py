"""A submission's image: built from its Dockerfile, loaded from its `image.tar` or pulled by its digest
(`harness.images.pinned`), tagged, checked.

Builds stream the context (`harness.images.context`) to `docker build -`, so the size cap and the link check apply
to exactly what the engine receives; `RUN` steps get the network the caller names (`harness evaluate`: the
engine's default). `image.tar` is loaded with its tags stripped, so it cannot take over another image's name.
With a build engine (`swarm.build_engine`, for swarm nodes without internet) both happen there and the image is then
moved to the harness's engine (`harness.images.move`).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from harness import __version__
from harness.errors import HarnessError, SubmissionError
from harness.images import base as images
from harness.images.base import ImageInfo
from harness.images.context import (
    ContextScan,
    context_digest,
    human_size,
    max_context_bytes,
    scan_context,
    write_context,
)
from harness.images.move import move_image
from harness.intake.submission import Submission

DEFAULT_BUILD_TIMEOUT_S = 3600.0
LABEL_SUBMISSION = "org.harness.submission"
#: the digest of everything a build starts from (`build_input`): an image with the same one is reused, not rebuilt
LABEL_BUILD_INPUT = "org.harness.build-input"


class BuildError(HarnessError):
    """The submission's image could not be built or loaded (failure class `build_error`); see build.log."""


#: a path component of an image reference (Docker's grammar): lowercase letters and digits, separated by one `.`,
#: one or two `_`, or any number of `-`
_TAG_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")


def submission_tag(sub: Submission) -> str:
    """The engine tag of a submission's image: `harness-submission/<id>:latest`, by its submission id (a batch's
    id, else its folder's name). An id that is no tag as it is (upper case, control characters, other signs) is
    lowercased (and, if still no tag, every run of other characters replaced by `-`), cut to 100 characters, then
    ends in 8 hex digits of its hash, so two ids never share a tag (`Team-A` and `team-a`)."""
    safe = sub.id.lower()
    if not _TAG_COMPONENT.fullmatch(safe):
        safe = re.sub(r"[^a-z0-9]+", "-", safe).strip("-") or "submission"
    if safe != sub.id or len(safe) > 100:
        digest = hashlib.sha256(sub.id.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        safe = f"{safe[:100].rstrip('._-')}-{digest}"
    return f"harness-submission/{safe}:latest"


def from_images(dockerfile: Path) -> list[str]:
    """Images named by the FROM lines of a Dockerfile (stage names and --platform left out)."""
    stages: set[str] = set()
    refs = []
    text = dockerfile.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    for m in re.finditer(r"^\s*FROM\s+(.+)$", text, re.M | re.I):
        words = [w for w in m.group(1).split() if not w.startswith("--")]
        if not words:
            continue
        if words[0].lower() not in stages:
            refs.append(words[0])
        if len(words) >= 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
    return refs


def uses_base_image(dockerfile: Path) -> bool:
    """True if a FROM line names the harness base image."""
    base_repo = images.DEFAULT_TAG.split(":")[0]
    return any(ref.split(":")[0].split("@")[0] == base_repo for ref in from_images(dockerfile))


def build_submission_image(sub: Submission, build_log: Path, tag: str | None = None,
                           max_context_bytes: int | None = None, network: str = "none",
                           timeout_s: float = DEFAULT_BUILD_TIMEOUT_S, engine: str | None = None) -> ImageInfo:
    """Build (Dockerfile), load (image.tar) or pull (a reference pinned by digest) the submission's image; docker's
    output goes to `build_log`.

    Raises SubmissionError for an invalid folder (context too big, escaping link, foreign architecture) and
    BuildError when docker fails. `network` is the network of RUN steps ("none" by default). With `engine` (a
    build engine, see images.docker_env) the image and the base image it is built FROM are made there, then moved
    to the harness's engine (`images.move`) and tagged there too.
    """
    tag = tag or submission_tag(sub)
    build_log = Path(build_log)
    build_log.parent.mkdir(parents=True, exist_ok=True)
    build_log.write_text(f"# harness {__version__}: image of submission {sub.id} → {tag}\n", encoding="utf-8")
    started = time.monotonic()
    if engine is not None:
        with build_log.open("a", encoding="utf-8") as f:
            f.write(f"# built on engine {engine}, then moved to the harness's engine\n")
    # the image is named by its id from here on: another build of the same tag at the same time cannot swap it
    reused = False
    if sub.build.dockerfile is not None:
        image_id, reused = _build(sub, sub.build.dockerfile, build_log, tag, max_context_bytes, network, timeout_s,
                                  engine)
    elif sub.build.image_ref is not None:
        from harness.images.pinned import pull_pinned

        image_id = pull_pinned(sub.build.image_ref, build_log, tag, timeout_s, engine)
    else:
        assert sub.build.image_tar is not None
        image_id = _load(sub.build.image_tar, build_log, tag, max_context_bytes, timeout_s, engine)
    moved = None
    if engine is not None and not reused:
        try:
            moved = move_image(image_id, engine, tag=tag, log=build_log, timeout_s=timeout_s)
        except images.ImageError as exc:
            raise BuildError(f"{exc} (see {build_log})") from None
        image_id = moved.id
    info = images.image_info(image_id, tag=tag, build_s=round(time.monotonic() - started, 3))
    if sub.build.image_ref is not None:  # its digest is the one it is pinned by, whatever else the engine knows
        info = replace(info, digest=sub.build.image_ref.rpartition("@")[2])
    if moved is not None:
        info = replace(info, build_engine=engine, copied=moved.copied)
    with build_log.open("a", encoding="utf-8") as f:
        f.write(f"# image {info.id} ({info.architecture}, {info.size} bytes) in {info.build_s:.1f} s\n")
    if info.architecture and info.architecture != images.host_architecture():
        raise SubmissionError(f"{sub.yaml_path}: build: image architecture {info.architecture} does not run on "
                              f"this {images.host_architecture()} host")
    return info


def _build(sub: Submission, dockerfile: Path, log: Path, tag: str, max_bytes: int | None, network: str,
           timeout_s: float, engine: str | None) -> tuple[str, bool]:
    """Build the image (on `engine`) and tag it: (its id, False); (the id, True) when an image of the same build input
    on the harness's engine was tagged instead (see `build_input`)."""
    rel_dockerfile = dockerfile.relative_to(sub.path).as_posix()
    scan = scan_context(sub.path, max_bytes, always=(rel_dockerfile,))
    if uses_base_image(dockerfile):
        with log.open("a", encoding="utf-8") as f:
            f.write(f"# base image: {images.ensure_base_image(engine=engine)}\n")
    key = build_input(sub, scan, rel_dockerfile, network, engine)
    earlier = _built_from(key) if key else None
    # removed since it was listed (another harness's clean-up): then it is built, as if it had never been
    if earlier is not None and images.docker(["tag", earlier, tag], check=False).returncode == 0:
        with log.open("a", encoding="utf-8") as f:
            f.write(f"# build input {key}: the same context, Dockerfile, FROM images and network as image {earlier}, "
                    f"which is reused, not rebuilt\n")
        return earlier, True
    labels = ["--label", f"{LABEL_SUBMISSION}={sub.id}", *(["--label", f"{LABEL_BUILD_INPUT}={key}"] if key else [])]
    cmd = ["docker", "build", "--force-rm", "-f", rel_dockerfile, "-t", tag, *labels, "--network", network, "-"]
    with log.open("a", encoding="utf-8") as f:
        f.write(f"# context: {len(scan.paths)} entries, {scan.size} bytes\n$ {' '.join(cmd)}\n")
    with tempfile.TemporaryDirectory(prefix="harness-build-") as tmp:
        iidfile = Path(tmp) / "image-id"  # the id of the image this build made, whatever the tag names meanwhile
        rc = _pipe_into([*cmd[:-1], "--iidfile", str(iidfile), "-"], lambda stdin: write_context(scan, stdin), log,
                        timeout_s, f"{dockerfile}: build took longer than {timeout_s:.0f} s (see {log})", engine)
        image_id = iidfile.read_text(encoding="utf-8").strip() if rc == 0 and iidfile.is_file() else ""
    if rc != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        missing = missing_base_image(dockerfile, tail, engine)
        if missing:
            raise BuildError(f"{dockerfile}: {missing} (see {log})")
        raise BuildError(f"{dockerfile}: docker build failed: {images.last_line(tail)} (see {log})")
    if not image_id:
        raise BuildError(f"{dockerfile}: docker build reported no image id (see {log})")
    return image_id, False


def build_input(sub: Submission, scan: ContextScan, rel_dockerfile: str, network: str,
                engine: str | None = None) -> str | None:
    """The digest of everything a build starts from: the submission's id (its image's label), the context's content,
    which file is the Dockerfile, the image ids of its FROM images on `engine`, the harness version and the build's
    network. None when a FROM image is not on the engine yet (or is named by a build argument): then it is built.

    Docker's build cache cannot stand in for this: when two builds ran the same step at once, a later build may pick
    either's layer and make an image with another digest from the same sources, and the runs of the first one would
    then be evaluated again under `--resume`."""
    ids = []
    for ref in from_images(scan.root / rel_dockerfile):
        if ref.lower() == "scratch":
            ids.append(ref)
            continue
        if "$" in ref or not images.image_exists(ref, engine):
            return None
        ids.append(images.inspect_image(ref, engine)["Id"])
    payload = json.dumps({"submission": sub.id, "context": context_digest(scan), "dockerfile": rel_dockerfile,
                          "from": ids, "network": network, "harness": __version__}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _built_from(key: str) -> str | None:
    """The id of the newest image on the harness's engine built from build input `key`, if any."""
    proc = images.docker(["images", "-q", "--no-trunc", "--filter", f"label={LABEL_BUILD_INPUT}={key}"], check=False)
    ids = proc.stdout.decode().split() if proc.returncode == 0 else []
    return ids[0] if ids else None


#: What docker says when no registry can be reached, and when a registry has no such image.
_NO_REGISTRY = re.compile(r"no such host|dial tcp|lookup |connection refused|network is unreachable|i/o timeout|"
                          r"TLS handshake timeout|Client.Timeout", re.I)
_NO_SUCH_IMAGE = re.compile(r"pull access denied|manifest unknown|not found|repository does not exist", re.I)
#: Tags never offered as suggestions: other participants' images are not this participant's business.
_PRIVATE_REPOS = ("harness-submission/",)


def missing_base_image(dockerfile: Path, build_output: str, engine: str | None = None) -> str | None:
    """After a failed build: "base image 'X' not found (why; images available here: ...)" when a FROM image is
    neither on the building engine nor could be pulled, else None."""
    absent = [ref for ref in from_images(dockerfile)
              if ref.lower() != "scratch" and "$" not in ref and not images.image_exists(ref, engine)]
    if not absent:
        return None
    ref = absent[0]
    if _NO_REGISTRY.search(build_output):
        why = "not on this engine, and no registry is reachable"
    elif _NO_SUCH_IMAGE.search(build_output):
        why = "not on this engine, and the registry has no such image"
    else:
        why = f"not on this engine, and it could not be pulled: {images.last_line(build_output)}"
    return (f"base image {ref!r} not found ({why}; images available here: "
            f"{', '.join(suggested_images(ref, engine=engine))})")


def suggested_images(ref: str, n: int = 4, engine: str | None = None) -> list[str]:
    """The harness base image, then the engine's tags closest to `ref` (never another submission's image)."""
    import difflib

    out = images.docker(["image", "ls", "--format", "{{.Repository}}:{{.Tag}}"], check=False, engine=engine).stdout
    tags = [t for t in out.decode("utf-8", "replace").split()
            if "<none>" not in t and not t.startswith(_PRIVATE_REPOS)]
    close = difflib.get_close_matches(ref, tags, n=n, cutoff=0.6)
    first = [images.DEFAULT_TAG] if images.DEFAULT_TAG in tags else []
    return list(dict.fromkeys(first + close))[:n] or ["none"]


def _pipe_into(cmd: list[str], produce: Callable[[IO[bytes]], None], log: Path, timeout_s: float,
               timeout_message: str, engine: str | None = None) -> int:
    """Run a docker command (on `engine`) whose stdin `produce` writes, its output appended to `log`; its exit code.

    The command is killed on timeout (BuildError with `timeout_message`) and on any interruption."""
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                env=images.docker_env(engine))
        try:
            assert proc.stdin is not None
            try:
                produce(proc.stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise BuildError(timeout_message) from None
        except BaseException:
            proc.kill()
            proc.wait()
            raise


def read_image_tar(path: Path) -> list[dict[str, str]]:
    """Images in a `docker save` tar without loading it: [{"tags": ..., "architecture": ..., "os": ...}].

    SubmissionError if the file is not such a tar."""
    try:
        with tarfile.open(path, "r:*") as tar:
            names = {m.name.lstrip("./"): m for m in tar.getmembers() if m.isfile()}
            if "manifest.json" not in names:
                raise SubmissionError(f"{path}: not a `docker save` archive (no manifest.json)")
            manifest = json.load(tar.extractfile(names["manifest.json"]))  # type: ignore[arg-type]
            out = []
            for entry in manifest:
                config_name = str(entry.get("Config", "")).lstrip("./")
                config = json.load(tar.extractfile(names[config_name])) if config_name in names else {}  # type: ignore[arg-type]
                out.append({"tags": ",".join(entry.get("RepoTags") or []),
                            "architecture": config.get("architecture", ""), "os": config.get("os", "")})
            return out
    except (tarfile.TarError, OSError, ValueError, KeyError) as exc:
        raise SubmissionError(f"{path}: cannot read image archive: {exc}") from None


def _load(tar_path: Path, log: Path, tag: str, max_bytes: int | None, timeout_s: float, engine: str | None) -> str:
    """`docker load` the archive with its tags stripped (so it cannot overwrite harness-base or any other tag),
    then tag the loaded image ourselves; its id."""
    max_bytes = max_context_bytes() if max_bytes is None else max_bytes
    size = tar_path.stat().st_size
    if size > max_bytes:
        raise SubmissionError(f"{tar_path}: {human_size(size)} exceeds the cap of {human_size(max_bytes)}")
    found = read_image_tar(tar_path)
    if len(found) != 1:
        raise SubmissionError(f"{tar_path}: holds {len(found)} images; expected exactly one")
    with log.open("a", encoding="utf-8") as f:
        f.write(f"$ docker load < {tar_path} (tags stripped)\n")
    start = log.stat().st_size
    rc = _pipe_into(["docker", "load"], lambda stdin: _untagged_copy(tar_path, stdin), log, timeout_s,
                    f"{tar_path}: docker load took longer than {timeout_s:.0f} s", engine)
    with log.open("rb") as f:
        f.seek(start)
        output = f.read().decode("utf-8", "replace")
    if rc != 0:
        raise BuildError(f"{tar_path}: docker load failed: {images.last_line(output)}")
    loaded = list(_loaded_refs(output))
    if not loaded:
        raise BuildError(f"{tar_path}: docker load reported no image")
    images.docker(["tag", loaded[-1], tag], engine=engine)
    return loaded[-1]


#: Members of a `docker save` archive that name tags; dropped (index.json / oci-layout: OCI tags for new engines).
_TAG_MEMBERS = {"repositories", "index.json", "oci-layout"}


def _untagged_copy(src: Path, stream: Any) -> None:
    """Copy a `docker save` archive to `stream` with `RepoTags` emptied and tag-bearing members left out."""
    with tarfile.open(src, "r:*") as tin, tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tout:
        for member in tin:
            name = member.name.lstrip("./") if member.name not in (".", "./") else "."
            if name in _TAG_MEMBERS:
                continue
            if name == "manifest.json" and member.isfile():
                manifest = json.load(tin.extractfile(member))  # type: ignore[arg-type]
                for entry in manifest:
                    entry["RepoTags"] = None
                data = json.dumps(manifest).encode()
                info = tarfile.TarInfo(member.name)
                info.size, info.mode, info.mtime = len(data), 0o644, int(member.mtime)
                tout.addfile(info, io.BytesIO(data))
            elif member.isfile():
                tout.addfile(member, tin.extractfile(member))
            else:
                tout.addfile(member)


def _loaded_refs(output: str) -> Iterator[str]:
    for line in output.splitlines():
        m = re.match(r"^Loaded image(?: ID)?:\s*(\S+)", line.strip())
        if m:
            yield m.group(1)
