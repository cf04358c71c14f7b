"""Static checks of a submission folder (`harness check`): nothing is built or run.

Checks, in order: `submission.yaml` schema and the files it names; the track against a task config (if given);
the build context (size cap, links escaping the folder) and the Dockerfile's FROM lines, or the `image.tar`
archive's images and architecture (an image in a registry, pinned by digest, is taken as named: it is pulled at
the evaluation); and, if the image is already on the engine, its architecture and size.
Each finding is one line naming the file and field at fault.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from harness.config import TaskConfig
from harness.errors import HarnessError, SubmissionError
from harness.images import base as images
from harness.images import context
from harness.images import submission as image_of
from harness.intake.submission import SUBMISSION_FILE, Submission, declared_track, load_submission

ERROR, WARNING, OK = "error", "warning", "ok"
DEFAULT_MAX_IMAGE_BYTES = 10 * 1024**3


@dataclass(frozen=True)
class Finding:
    """One line of a check report."""

    level: str
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.message}"


@dataclass
class CheckReport:
    """All findings for one submission folder."""

    path: Path
    submission: Submission | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.level == ERROR for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == ERROR]

    def add(self, level: str, message: str) -> None:
        self.findings.append(Finding(level, message))


def check_submission(path: str | Path, config: TaskConfig | None = None, max_context_bytes: int | None = None,
                     max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES, use_docker: bool = True) -> CheckReport:
    """Every static check of a submission folder; never raises for a problem of the submission."""
    report = CheckReport(Path(path))
    try:
        sub = load_submission(path)
    except SubmissionError as exc:  # every mistake of submission.yaml, one line each
        for line in exc.problems:
            report.add(ERROR, line)
        if config is not None:  # a wrong track is one more mistake, whatever else is wrong
            _check_declared_track(report, Path(path), config, exc.problems)
        return report
    except HarnessError as exc:
        report.add(ERROR, str(exc))
        return report
    report.submission = sub
    report.add(OK, f"{sub.yaml_path}: team {sub.team}, system {sub.system}, track {sub.track}, {sub.kind}")
    if not sub.contact:
        report.add(WARNING, f"{sub.yaml_path}: contact: empty; organizers cannot reach you about problems")
    if sub.baseline:
        report.add(WARNING, f"{sub.yaml_path}: baseline: ignored; only the task config names baselines "
                            "(tracks[].baseline)")
    if config is not None:
        _check_track(report, sub, config)
    if sub.is_log:  # nothing to build: its logs are checked against the datasets (`harness check --config`)
        report.add(OK, f"{sub.yaml_path}: log submission ({', '.join(sub.logs)}) on declared hardware "
                       f"{sub.hardware!r}")
        return report
    docker_ok = use_docker and _docker_answers()
    if use_docker and not docker_ok:
        report.add(WARNING, "no Docker engine answers: image checks skipped")
    if sub.build.dockerfile is not None:
        _check_dockerfile(report, sub, sub.build.dockerfile, max_context_bytes, docker_ok)
    elif sub.build.image_tar is not None:
        _check_image_tar(report, sub, sub.build.image_tar, max_context_bytes)
    elif sub.build.image_ref is not None:
        report.add(OK, f"{sub.yaml_path}: build: image {sub.build.image_ref}, pinned by digest (pulled for the "
                       f"evaluation)")
    if docker_ok:
        _check_built_image(report, sub, max_image_bytes)
    return report


def _check_track(report: CheckReport, sub: Submission, config: TaskConfig) -> None:
    """The submission's track is one of the config's."""
    _track_finding(report, sub.yaml_path, sub.track, config)


def _check_declared_track(report: CheckReport, path: Path, config: TaskConfig, problems: tuple[str, ...]) -> None:
    """The `track:` of a submission.yaml with other mistakes, checked against the config unless `track:` itself is
    one of them (or the file names none)."""
    track = declared_track(path)
    yml = path if path.name == SUBMISSION_FILE else path / SUBMISSION_FILE
    if track is not None and not any(line.startswith(f"{yml}: track:") for line in problems):
        _track_finding(report, yml, track, config)


def _track_finding(report: CheckReport, yml: Path, track: str, config: TaskConfig) -> None:
    """OK when `track` is a track of the config, else an error naming `yml`'s `track:` and the config's tracks."""
    names = [t.name for t in config.tracks]
    if track in names:
        report.add(OK, f"{yml}: track {track!r} is a track of {config.path.name}")
    else:
        report.add(ERROR, f"{yml}: track: {track!r} is not a track of {config.path} (has: {', '.join(names)})")


def _check_dockerfile(report: CheckReport, sub: Submission, dockerfile: Path, max_bytes: int | None,
                      docker_ok: bool) -> None:
    rel = os.path.relpath(dockerfile, sub.path)
    try:
        scan = context.scan_context(sub.path, max_bytes, always=(rel,))
        report.add(OK, f"{sub.path}: build context {len(scan.paths)} entries, {context.human_size(scan.size)}")
    except HarnessError as exc:
        report.add(ERROR, str(exc))
    else:
        for line_no, instr, src in copy_sources(dockerfile):
            if not _in_context(src, scan.paths):
                report.add(ERROR, f"{dockerfile}:{line_no}: {instr} {src}: not in the build context "
                                  f"(missing, or excluded by .dockerignore)")
    refs = image_of.from_images(dockerfile)
    if not refs:
        report.add(ERROR, f"{dockerfile}: no FROM line")
        return
    for ref in refs:
        if ref.lower() == "scratch" or ref.split(":")[0] == images.DEFAULT_TAG.split(":")[0]:
            continue
        if "$" in ref:
            report.add(WARNING, f"{dockerfile}: FROM {ref}: build arguments in FROM cannot be checked")
        elif docker_ok and not images.image_exists(ref):
            report.add(WARNING, f"{dockerfile}: FROM {ref}: not on this engine, and evaluation machines may "
                                f"reach no registry; build FROM {images.DEFAULT_TAG} or hand in image.tar")


def _check_image_tar(report: CheckReport, sub: Submission, tar: Path, max_bytes: int | None) -> None:
    cap = context.max_context_bytes() if max_bytes is None else max_bytes
    size = tar.stat().st_size
    if size > cap:
        report.add(ERROR, f"{tar}: {context.human_size(size)} exceeds the cap of {context.human_size(cap)}")
    try:
        found = image_of.read_image_tar(tar)
    except HarnessError as exc:
        report.add(ERROR, str(exc))
        return
    if len(found) != 1:
        report.add(ERROR, f"{tar}: holds {len(found)} images; expected exactly one")
        return
    _check_platform(report, str(tar), found[0]["architecture"], found[0]["os"])


def _check_platform(report: CheckReport, where: str, arch: str, os_name: str) -> None:
    host = images.host_architecture()
    if arch and arch != host:
        report.add(ERROR, f"{where}: image architecture {arch} does not run on the {host} evaluation machines")
    elif os_name and os_name != "linux":
        report.add(ERROR, f"{where}: image OS {os_name}; expected linux")
    else:
        report.add(OK, f"{where}: image architecture {arch or 'unknown'} ({os_name or 'linux'})")


def _check_built_image(report: CheckReport, sub: Submission, max_image_bytes: int) -> None:
    tag = image_of.submission_tag(sub)
    if not images.image_exists(tag):
        report.add(WARNING, f"image {tag} not built yet: architecture and size not checked "
                            f"(`harness validate` builds it)")
        return
    info = images.image_info(tag)
    _check_platform(report, f"image {tag}", info.architecture, info.os)
    if info.size > max_image_bytes:
        report.add(ERROR, f"image {tag}: {context.human_size(info.size)} exceeds the size cap of "
                          f"{context.human_size(max_image_bytes)}")
    else:
        cap = context.human_size(max_image_bytes)
        report.add(OK, f"image {tag}: {context.human_size(info.size)} (cap {cap})")


def _docker_answers() -> bool:
    try:
        return images.docker(["version", "--format", "{{.Server.Version}}"], check=False, timeout=20).returncode == 0
    except HarnessError:
        return False


def copy_sources(dockerfile: Path) -> list[tuple[int, str, str]]:
    """(line, COPY|ADD, source) for every local source of COPY/ADD (not --from=, URLs or $variables)."""
    found: list[tuple[int, str, str]] = []
    lines = dockerfile.read_text(encoding="utf-8", errors="replace").splitlines()
    i = 0
    while i < len(lines):
        start, text = i + 1, lines[i]
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i]
        i += 1
        words = text.strip().split(None, 1)
        if len(words) < 2 or words[0].upper() not in ("COPY", "ADD"):
            continue
        args = _instruction_args(words[1])
        if any(a.startswith("--from") for a in args):
            continue
        for src in [a for a in args if not a.startswith("--")][:-1]:
            if "://" not in src and "$" not in src and not src.startswith(("git@", "<<")):
                found.append((start, words[0].upper(), src))
    return found


def _instruction_args(rest: str) -> list[str]:
    rest = rest.strip()
    if rest.startswith("["):
        try:
            value = json.loads(rest)
            if isinstance(value, list):
                return [str(v) for v in value]
        except ValueError:
            pass
    try:
        return shlex.split(rest)
    except ValueError:
        return rest.split()


def _in_context(src: str, paths: tuple[str, ...]) -> bool:
    """True if a COPY source (file, folder or wildcard, relative to the context) matches something sent."""
    pattern = os.path.normpath(src).lstrip("/")
    if pattern in ("", "."):
        return True
    for p in paths:
        parts = p.split("/")
        if any(fnmatch.fnmatchcase("/".join(parts[:n]), pattern) for n in range(1, len(parts) + 1)):
            return True
    return False
