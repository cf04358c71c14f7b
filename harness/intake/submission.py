"""Submissions: `submission.yaml` → typed `Submission`, and the submission's image (built or loaded).

A submission folder holds `submission.yaml` (see docs/formats.md) and either a Dockerfile (built with the folder
as context) or `image.tar` (`docker load`-ed). Every error names the file and the field. Builds stream the context
to `docker build -` as a tar made here, so the context size cap and the symlink check apply to exactly what the
engine receives (`.dockerignore` is honoured); `RUN` steps get the network the caller names
(`harness evaluate`: the engine's default).
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from harness import __version__
from harness.errors import HarnessError, SubmissionError
from harness.images import base as images
from harness.images.base import ImageInfo

__all__ = ["BuildError", "BuildSpec", "ContextScan", "ImageInfo", "Submission", "build_submission_image",
           "load_submission", "scan_context", "submission_tag", "read_image_tar"]

SUBMISSION_FILE = "submission.yaml"
KINDS = ("primary", "contrastive")
#: Largest build context (bytes after .dockerignore) and largest image.tar accepted; `$HARNESS_MAX_CONTEXT_BYTES`.
DEFAULT_MAX_CONTEXT_BYTES = 4 * 1024**3
DEFAULT_BUILD_TIMEOUT_S = 3600.0
LABEL_SUBMISSION = "org.harness.submission"
_FIELDS = ("team", "system", "contact", "track", "kind", "description", "build", "command", "baseline")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class BuildError(HarnessError):
    """The submission's image could not be built or loaded (failure class `build_error`); see build.log."""


@dataclass(frozen=True)
class BuildSpec:
    """How to get the image: exactly one of `dockerfile` (built, context = the submission folder) or `image_tar`."""

    dockerfile: Path | None = None
    image_tar: Path | None = None


@dataclass(frozen=True)
class Submission:
    """A validated submission folder. `command` is the container's argv (a YAML string runs under /bin/sh -c)."""

    path: Path
    id: str
    team: str
    system: str
    track: str
    build: BuildSpec
    command: tuple[str, ...]
    kind: str = "primary"
    contact: str = ""
    description: str = ""
    baseline: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def yaml_path(self) -> Path:
        return self.path / SUBMISSION_FILE


def submission_tag(sub: Submission) -> str:
    """The engine tag of a submission's image: `harness-submission/<id>:latest` (id lowercased and sanitized)."""
    safe = re.sub(r"[^a-z0-9._-]+", "-", sub.id.lower()).strip("-._") or "submission"
    return f"harness-submission/{safe}:latest"


# ---------------------------------------------------------------------------------------------------- loading

def load_submission(path: str | Path) -> Submission:
    """Read and validate `PATH/submission.yaml` (or PATH itself when it names the file)."""
    p = Path(path)
    folder = p.parent if p.name == SUBMISSION_FILE and p.is_file() else p
    yml = folder / SUBMISSION_FILE
    if not folder.is_dir():
        raise SubmissionError(f"{folder}: submission folder not found")
    try:
        text = yml.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SubmissionError(f"{yml}: file not found (every submission needs a {SUBMISSION_FILE})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmissionError(f"{yml}: cannot read: {exc}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        raise SubmissionError(f"{yml}:{line} invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    return _parse(yml, folder.resolve(), raw)


def _parse(yml: Path, folder: Path, raw: Any) -> Submission:
    def fail(where: str, message: str) -> SubmissionError:
        return SubmissionError(f"{yml}: {where}: {message}")

    if not isinstance(raw, dict):
        raise fail("top level", f"expected a mapping, got {type(raw).__name__}")
    for key in raw:
        if key not in _FIELDS:
            raise fail(str(key), f"unknown field (known: {', '.join(_FIELDS)})")

    def text(key: str, required: bool = True, pattern: re.Pattern[str] | None = None) -> str:
        value = raw.get(key)
        if value is None or value == "":
            if required:
                raise fail(key, "missing required field")
            return ""
        if not isinstance(value, str):
            raise fail(key, f"expected a string, got {type(value).__name__} {value!r}")
        if pattern is not None and not pattern.match(value):
            raise fail(key, f"{value!r} must be letters, digits, '.', '_' or '-'")
        return value.strip()

    kind = text("kind", required=False) or "primary"
    if kind not in KINDS:
        raise fail("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    baseline = raw.get("baseline", False)
    if not isinstance(baseline, bool):
        raise fail("baseline", f"expected true or false, got {baseline!r}")
    return Submission(
        path=folder,
        id=folder.name,
        team=text("team", pattern=_NAME),
        system=text("system", pattern=_NAME),
        track=text("track"),
        build=_build_spec(raw.get("build"), folder, fail),
        command=_command(raw.get("command"), fail),
        kind=kind,
        contact=text("contact", required=False),
        description=text("description", required=False),
        baseline=baseline,
        raw=raw,
    )


def _build_spec(value: Any, folder: Path, fail: Any) -> BuildSpec:
    if value is None:
        raise fail("build", "missing required field ({dockerfile: Dockerfile} or {image: image.tar})")
    if not isinstance(value, dict):
        raise fail("build", f"expected a mapping ({{dockerfile: ...}} or {{image: ...}}), got {value!r}")
    unknown = [k for k in value if k not in ("dockerfile", "image")]
    if unknown:
        raise fail(f"build.{unknown[0]}", "unknown field (known: dockerfile, image)")
    if ("dockerfile" in value) == ("image" in value):
        raise fail("build", "give exactly one of dockerfile or image")
    key = "dockerfile" if "dockerfile" in value else "image"
    rel = value[key]
    if not isinstance(rel, str) or not rel.strip():
        raise fail(f"build.{key}", f"expected a file path, got {rel!r}")
    if os.path.isabs(rel):
        raise fail(f"build.{key}", f"{rel!r} must be a path relative to the submission folder")
    target = (folder / rel).resolve()
    if not target.is_relative_to(folder):
        raise fail(f"build.{key}", f"{rel!r} points outside the submission folder")
    if not target.is_file():
        raise fail(f"build.{key}", f"file not found: {folder / rel}")
    return BuildSpec(dockerfile=target) if key == "dockerfile" else BuildSpec(image_tar=target)


def _command(value: Any, fail: Any) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return ("/bin/sh", "-c", value.strip())
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    if value is None:
        raise fail("command", "missing required field (the client command run inside the container)")
    raise fail("command", f"expected a non-empty string or list of strings, got {value!r}")


# ------------------------------------------------------------------------------------------------ build context

@dataclass(frozen=True)
class ContextScan:
    """What `docker build` would receive: paths (relative, in tar order) and their total size in bytes."""

    root: Path
    paths: tuple[str, ...]
    size: int


def _compile_pattern(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern (Go filepath.Match plus `**`) as a regex over slash-separated relative paths."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            if pattern[i + 2:i + 3] == "/":
                out, i = out + "(?:.*/)?", i + 3
            else:
                out, i = out + ".*", i + 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and "]" in pattern[i + 1:]:
            j = pattern.index("]", i + 1)
            body = pattern[i + 1:j]
            out += "[" + ("^" + body[1:] if body.startswith("^") else body).replace("\\", "\\\\") + "]"
            i = j
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        else:
            out += re.escape(c)
        i += 1
    return re.compile(f"^{out}$")


def _dockerignore(root: Path) -> list[tuple[bool, re.Pattern[str]]]:
    """(negated, regex) per line of root/.dockerignore, in order."""
    path = root / ".dockerignore"
    if not path.is_file():
        return []
    rules = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pat = os.path.normpath(line[1:].strip() if negated else line).lstrip("/")
        if pat in ("", "."):
            continue
        rules.append((negated, _compile_pattern(pat)))
    return rules


def _ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    parents = [rel[:i] for i, ch in enumerate(rel) if ch == "/"]
    excluded = False
    for negated, rx in rules:
        if rx.match(rel) or any(rx.match(p) for p in parents):
            excluded = not negated
    return excluded


def scan_context(root: Path, max_bytes: int | None = None, always: tuple[str, ...] = ()) -> ContextScan:
    """Walk a build context without following links: SubmissionError if a link escapes it, a file is neither
    regular, directory nor link, or the size after `.dockerignore` exceeds `max_bytes`. `always` stays in."""
    root = root.resolve()
    max_bytes = max_context_bytes() if max_bytes is None else max_bytes
    rules = _dockerignore(root)
    can_prune = not any(neg for neg, _ in rules)
    keep = set(always) | {".dockerignore"}
    paths: list[str] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        entries = sorted(dirnames + filenames)
        dirnames[:] = []
        for name in entries:
            full = Path(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            st = full.lstat()
            ignored = rel not in keep and _ignored(rel, rules)
            if stat.S_ISDIR(st.st_mode):
                if not (ignored and can_prune):
                    dirnames.append(name)
                if not ignored:
                    paths.append(rel)
                continue
            if ignored:
                continue
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                resolved = Path(os.path.realpath(full))
                if not resolved.is_relative_to(root):
                    raise SubmissionError(f"{full}: symbolic link to {target!r} escapes the submission folder")
            elif not stat.S_ISREG(st.st_mode):
                raise SubmissionError(f"{full}: not a regular file, directory or link; remove it")
            else:
                total += st.st_size
                if total > max_bytes:
                    raise SubmissionError(f"{root}: build context exceeds the cap of {human_size(max_bytes)} "
                                          f"(list big files in .dockerignore)")
            paths.append(rel)
        dirnames.sort()
    return ContextScan(root=root, paths=tuple(paths), size=total)


def max_context_bytes() -> int:
    env = os.environ.get("HARNESS_MAX_CONTEXT_BYTES")
    return int(env) if env and env.isdigit() else DEFAULT_MAX_CONTEXT_BYTES


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _write_context(scan: ContextScan, stream: Any) -> None:
    """Stream the scanned context as a tar (owner root, links as links).

    The first entry is a plain ustar header for "." so that the docker CLI, which sniffs the first 512 bytes of
    stdin, recognises an archive; whole-second mtimes keep PAX headers to the entries that really need them."""
    with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        top = tarfile.TarInfo(".")
        top.type, top.mode, top.mtime = tarfile.DIRTYPE, 0o755, int(time.time())
        tar.addfile(top)
        for rel in scan.paths:
            info = tar.gettarinfo(str(scan.root / rel), arcname=rel)
            info.mtime = int(info.mtime)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if info.isreg():
                with open(scan.root / rel, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)


# ----------------------------------------------------------------------------------------------------- images

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
                           timeout_s: float = DEFAULT_BUILD_TIMEOUT_S) -> ImageInfo:
    """Build (Dockerfile) or load (image.tar) the submission's image; docker's output goes to `build_log`.

    Raises SubmissionError for an invalid folder (context too big, escaping link, foreign architecture) and
    BuildError when docker fails. `network` is the network of RUN steps ("none" by default).
    """
    tag = tag or submission_tag(sub)
    build_log = Path(build_log)
    build_log.parent.mkdir(parents=True, exist_ok=True)
    build_log.write_text(f"# harness {__version__}: image of submission {sub.id} → {tag}\n", encoding="utf-8")
    started = time.monotonic()
    if sub.build.dockerfile is not None:
        _build(sub, sub.build.dockerfile, build_log, tag, max_context_bytes, network, timeout_s)
    else:
        assert sub.build.image_tar is not None
        _load(sub.build.image_tar, build_log, tag, max_context_bytes, timeout_s)
    info = images.image_info(tag, tag=tag, build_s=round(time.monotonic() - started, 3))
    with build_log.open("a", encoding="utf-8") as f:
        f.write(f"# image {info.id} ({info.architecture}, {info.size} bytes) in {info.build_s:.1f} s\n")
    if info.architecture and info.architecture != images.host_architecture():
        raise SubmissionError(f"{sub.yaml_path}: build: image architecture {info.architecture} does not run on "
                              f"this {images.host_architecture()} host")
    return info


def _build(sub: Submission, dockerfile: Path, log: Path, tag: str, max_bytes: int | None, network: str,
           timeout_s: float) -> None:
    rel_dockerfile = dockerfile.relative_to(sub.path).as_posix()
    scan = scan_context(sub.path, max_bytes, always=(rel_dockerfile,))
    if uses_base_image(dockerfile):
        with log.open("a", encoding="utf-8") as f:
            f.write(f"# base image: {images.ensure_base_image()}\n")
    cmd = ["docker", "build", "--force-rm", "-f", rel_dockerfile, "-t", tag, "--label", f"{LABEL_SUBMISSION}={sub.id}",
           "--network", network, "-"]
    with log.open("a", encoding="utf-8") as f:
        f.write(f"# context: {len(scan.paths)} entries, {scan.size} bytes\n$ {' '.join(cmd)}\n")
    rc = _pipe_into(cmd, lambda stdin: _write_context(scan, stdin), log, timeout_s,
                    f"{dockerfile}: build took longer than {timeout_s:.0f} s (see {log})")
    if rc != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise BuildError(f"{dockerfile}: docker build failed: {images.last_line(tail)} (see {log})")


def _pipe_into(cmd: list[str], produce: Callable[[IO[bytes]], None], log: Path, timeout_s: float,
               timeout_message: str) -> int:
    """Run a docker command whose stdin `produce` writes, its output appended to `log`; its exit code.

    The command is killed on timeout (BuildError with `timeout_message`) and on any interruption."""
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                env=images.docker_env())
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


def _load(tar_path: Path, log: Path, tag: str, max_bytes: int | None, timeout_s: float) -> None:
    """`docker load` the archive with its tags stripped (so it cannot overwrite harness-base or any other tag),
    then tag the loaded image ourselves."""
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
                    f"{tar_path}: docker load took longer than {timeout_s:.0f} s")
    with log.open("rb") as f:
        f.seek(start)
        output = f.read().decode("utf-8", "replace")
    if rc != 0:
        raise BuildError(f"{tar_path}: docker load failed: {images.last_line(output)}")
    loaded = list(_loaded_refs(output))
    if not loaded:
        raise BuildError(f"{tar_path}: docker load reported no image")
    images.docker(["tag", loaded[-1], tag])


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
