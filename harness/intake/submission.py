"""`submission.yaml` → typed `Submission` (schema and the files it names; see docs/formats.md).

A submission folder holds `submission.yaml` and either a Dockerfile (built with the folder as context),
`image.tar` (`docker load`-ed) or names an image in a registry pinned by digest (`build: {image:
REGISTRY/TEAM/NAME@sha256:HEX}`: pulled; one named by tag only is refused); `harness.images.submission` gets the
image. A *log submission* names instead its
system logs per dataset (`logs: {dev: FILE, test: FILE}`) and the hardware they were made on (`hardware:`); the
harness scores them without building anything. `models: closed` marks a system built on closed models (ranked
apart). Every error names the file and the field.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import SubmissionError
from harness.fields import not_one_of, unknown_field, unknown_fields
from harness.text import safe_name
from harness.yamlio import read_yaml

__all__ = ["BuildSpec", "PinnedImage", "Submission", "declared_track", "load_submission", "pinned_image",
           "tag_reference"]

SUBMISSION_FILE = "submission.yaml"
KINDS = ("primary", "contrastive")
#: what a system is built on: `closed` (closed-source models) puts it in a table apart, out of the main ranking
MODELS = ("open", "closed")
_FIELDS = ("team", "system", "contact", "track", "kind", "description", "build", "command", "baseline", "interface",
           "port", "speech_processor_config", "logs", "hardware", "models", "prepare", "fetch", "replaces")
#: how the participant talks to the harness: `harness` (it runs our client) or an IWSLT 2023-26 agent server
INTERFACES = ("harness", "simuleval-agent-server", "simulstream-http")
DEFAULT_PORTS = {"simuleval-agent-server": 2023, "simulstream-http": 8080}
#: the longest value of each text field: these strings reach terminals, summary.json and every leaderboard page
MAX_CHARS = {"team": 64, "system": 64, "track": 100, "kind": 20, "contact": 200, "description": 2000,
             "hardware": 200, "replaces": 255}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class BuildSpec:
    """How to get the image: exactly one of `dockerfile` (built, context = the submission folder), `image_tar` or
    `image_ref` (an image in a registry pinned by digest, `REGISTRY/TEAM/NAME@sha256:HEX`: pulled)."""

    dockerfile: Path | None = None
    image_tar: Path | None = None
    image_ref: str | None = None


#: an image reference pinned by digest (Docker's grammar): [DOMAIN[:PORT]/]PATH@sha256:HEX, the path's components
#: lowercase letters and digits separated by one `.`, one or two `_` or any number of `-`
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
PINNED = re.compile(rf"^(?:(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*"
                    rf"[A-Za-z0-9])?)*(?::[0-9]+)?)/)?(?P<path>{_COMPONENT}(?:/{_COMPONENT})*)"
                    rf"@(?P<digest>sha256:[0-9a-f]{{64}})$")
_TAGGED = re.compile(rf"^(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?$")
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")


@dataclass(frozen=True)
class PinnedImage:
    """An image reference pinned by digest, split: `domain` (the registry; "" for Docker Hub), `path`
    (`TEAM/NAME`), `digest` (`sha256:HEX`)."""

    domain: str
    path: str
    digest: str

    @property
    def reference(self) -> str:
        return f"{self.domain}/{self.path}@{self.digest}" if self.domain else f"{self.path}@{self.digest}"


def pinned_image(value: str) -> PinnedImage | None:
    """`value` as an image reference pinned by digest, or None when it is not one. A first component with a `.` or
    a `:` (or `localhost`) is the registry's address, as Docker reads it."""
    found = PINNED.match(value.strip())
    if found is None:
        return None
    domain, path = found["domain"] or "", found["path"]
    if domain and not ("." in domain or ":" in domain or domain == "localhost"):  # `alpha/asr@...`: a path
        domain, path = "", f"{domain}/{path}"
        if not re.fullmatch(rf"{_COMPONENT}(?:/{_COMPONENT})*", path):
            return None
    return PinnedImage(domain, path, found["digest"])


def tag_reference(value: str) -> bool:
    """Whether `value` reads as an image named by tag (`alpha/asr:1`, `asr`) rather than as an archive's file name."""
    text = value.strip()
    return "@" not in text and not text.endswith(_ARCHIVE_SUFFIXES) and _TAGGED.match(text) is not None


@dataclass(frozen=True)
class Submission:
    """A validated submission folder. `command` is the container's argv (a YAML string runs under /bin/sh -c)."""

    path: Path
    id: str  # the folder's name made safe (`harness.text.safe_name`); a batch gives it the submission id
    team: str
    system: str
    track: str
    build: BuildSpec
    command: tuple[str, ...]
    kind: str = "primary"
    contact: str = ""
    description: str = ""
    baseline: bool = False
    interface: str = "harness"
    port: int | None = None  # the agent server's port (agent-server interfaces)
    speech_processor_config: str | None = None  # simulstream-http: the config its command serves (recorded)
    logs: dict[str, Path] = field(default_factory=dict)  # a log submission: {dataset name: its system log}
    hardware: str = ""  # a log submission: the hardware its logs were made on, as declared
    log_configs: dict[str, Path] = field(default_factory=dict)  # {dataset: the SimulStream eval config of its log}
    log_tokenizers: dict[str, Path] = field(default_factory=dict)  # {dataset: the model's tokenizer for its log}
    models: str = "open"  # `closed`: built on closed-source models (ranked apart)
    prepare: tuple[str, ...] = ()  # run once before the streamed run (network off), writing $HARNESS_PREPARED_DIR
    #: run once per image and command before any data is seen (egress only to the task's allowed hosts), writing
    #: $HARNESS_FETCH_DIR, which prepare and the run get read-only (harness.run.fetch)
    fetch: tuple[str, ...] = ()
    replaces: str = ""  # the id of the team's earlier submission this one is a new version of (harness.batch.history)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_log(self) -> bool:
        """A log submission: scored from the logs it names; nothing is built or run."""
        return bool(self.logs)

    @property
    def is_agent_server(self) -> bool:
        """The participant is a server the harness drives (it runs its own command, not our client)."""
        return self.interface != "harness"

    @property
    def yaml_path(self) -> Path:
        return self.path / SUBMISSION_FILE


# ---------------------------------------------------------------------------------------------------- loading

def load_submission(path: str | Path) -> Submission:
    """Read and validate `PATH/submission.yaml` (or PATH itself when it names the file)."""
    p = Path(path)
    folder = p.parent if p.name == SUBMISSION_FILE and p.is_file() else p
    yml = folder / SUBMISSION_FILE
    if not folder.is_dir():
        raise SubmissionError(f"{folder}: submission folder not found")
    raw = read_yaml(yml, SubmissionError, missing=f"file not found (every submission needs a {SUBMISSION_FILE})")
    return _parse(yml, folder.resolve(), raw)


def declared_track(path: str | Path) -> str | None:
    """The `track:` that `PATH/submission.yaml` names, read on its own (None when it names none as a string, or the
    file cannot be read): what `harness check --config` still checks when other fields of the file are wrong."""
    p = Path(path)
    yml = p if p.name == SUBMISSION_FILE else p / SUBMISSION_FILE
    try:
        raw = read_yaml(yml, SubmissionError)
    except SubmissionError:
        return None
    track = raw.get("track") if isinstance(raw, dict) else None
    return track.strip() if isinstance(track, str) and track.strip() else None


def _parse(yml: Path, folder: Path, raw: Any) -> Submission:
    """The Submission of `raw`; a SubmissionError naming the first problem, with every problem found in its
    `problems` (each field is read on past another's mistake)."""
    def fail(where: str, message: str) -> SubmissionError:
        return SubmissionError(f"{yml}: {where}: {message}")

    if not isinstance(raw, dict):
        raise fail("top level", f"expected a mapping, got {type(raw).__name__}")
    found = [str(fail(*bad)) for bad in unknown_fields(raw, _FIELDS)]

    def take(read: Any, default: Any = None) -> Any:
        try:
            return read()
        except SubmissionError as exc:
            found.extend(exc.problems)
            return default

    def text(key: str, required: bool = True, pattern: re.Pattern[str] | None = None) -> str:
        value = raw.get(key)
        if value is None or value == "":
            if required:
                raise fail(key, "missing required field")
            return ""
        if not isinstance(value, str):
            raise fail(key, f"expected a string, got {type(value).__name__} {str(value)[:80]!r}")
        if len(value) > MAX_CHARS[key]:
            raise fail(key, f"{len(value)} characters; at most {MAX_CHARS[key]} (it is shown on the leaderboard)")
        if pattern is not None and not pattern.match(value):
            raise fail(key, f"{value!r} must be letters, digits, '.', '_' or '-'")
        return value.strip()

    sub = take(lambda: _fields(folder, raw, fail, lambda key, *a, **k: take(lambda: text(key, *a, **k), ""),
                               take))
    if found:
        raise SubmissionError(found[0], tuple(found))
    assert sub is not None
    return sub


def _raise(exc: SubmissionError) -> None:
    raise exc


def _fields(folder: Path, raw: dict[str, Any], fail: Any, text: Any, take: Any) -> Submission:
    """The Submission of a mapping whose problems `take` collects (`text`: a text field, "" when it is wrong)."""
    def kind_of() -> str:
        kind = text("kind", required=False) or "primary"
        if kind not in KINDS:
            raise fail("kind", not_one_of(kind, KINDS))
        return str(kind)

    def baseline_of() -> bool:
        baseline = raw.get("baseline", False)
        if not isinstance(baseline, bool):
            raise fail("baseline", f"expected true or false, got {baseline!r}")
        return baseline

    def models_of() -> str:
        models = raw.get("models", "open")
        if models not in MODELS:
            raise fail("models", not_one_of(models if isinstance(models, str) else repr(models), MODELS))
        return str(models)

    kind, baseline = take(kind_of, "primary"), take(baseline_of, False)
    interface, port, spc = take(lambda: _interface(raw, fail), ("harness", None, None))
    models = take(models_of, "open")
    if raw.get("logs") is not None:
        return _log_submission(folder, raw, fail, text, kind, baseline, models, take)
    if raw.get("hardware") is not None:
        take(lambda: _raise(fail("hardware", "only log submissions (logs:) declare their hardware; the harness "
                                             "records its own")))
    return Submission(
        path=folder,
        id=safe_name(folder.name),
        team=text("team", pattern=_NAME),
        system=text("system", pattern=_NAME),
        track=text("track"),
        build=take(lambda: _build_spec(raw.get("build"), folder, fail), BuildSpec()),
        command=take(lambda: _command(raw.get("command"), fail, optional=interface != "harness"), ()),
        kind=kind,
        contact=text("contact", required=False),
        description=text("description", required=False),
        baseline=baseline,
        interface=interface,
        port=port,
        speech_processor_config=spc,
        models=models,
        prepare=take(lambda: _step(raw.get("prepare"), fail, "prepare"), ()),
        fetch=take(lambda: _step(raw.get("fetch"), fail, "fetch"), ()),
        replaces=text("replaces", required=False, pattern=_NAME),
        raw=raw,
    )


def _interface(raw: dict[str, Any], fail: Any) -> tuple[str, int | None, str | None]:
    """(interface, port, speech_processor_config): how the participant talks to the harness."""
    interface = raw.get("interface", "harness")
    if interface not in INTERFACES:
        raise fail("interface", not_one_of(str(interface), INTERFACES))
    port = raw.get("port")
    if interface == "harness":
        for key in ("port", "speech_processor_config"):
            if raw.get(key) is not None:
                raise fail(key, "only agent-server interfaces (simuleval-agent-server, simulstream-http) have one")
    else:
        port = DEFAULT_PORTS[interface] if port is None else port
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise fail("port", f"expected a TCP port (1-65535), got {port!r}")
    spc = raw.get("speech_processor_config")
    if spc is not None and (interface != "simulstream-http" or not isinstance(spc, str) or not spc.strip()):
        raise fail("speech_processor_config", "a path inside the image, for interface: simulstream-http only")
    return interface, port, spc


def _log_submission(folder: Path, raw: dict[str, Any], fail: Any, text: Any, kind: str,
                    baseline: bool, models: str, take: Any) -> Submission:
    """A submission of system logs: `logs:` and `hardware:`, no image (no build, command or interface)."""
    for key in ("build", "command", "interface", "port", "speech_processor_config", "prepare", "fetch"):
        if raw.get(key) is not None:
            take(lambda key=key: _raise(fail(key, "a log submission (logs:) has no image: leave out build, command, "
                                                  "interface, prepare and fetch")))
    hardware, given = text("hardware", required=False), raw.get("hardware")
    if given is None or (isinstance(given, str) and not given.strip()):  # (a wrong one is text's to name)
        take(lambda: _raise(fail("hardware", 'missing required field for a log submission (e.g. "1x A100 80GB, '
                                             '64 GB RAM")')))
    return Submission(path=folder, id=safe_name(folder.name), team=text("team", pattern=_NAME),
                      system=text("system", pattern=_NAME), track=text("track"), build=BuildSpec(), command=(),
                      kind=kind, contact=text("contact", required=False),
                      description=text("description", required=False), baseline=baseline,
                      replaces=text("replaces", required=False, pattern=_NAME),
                      logs=_logs(raw["logs"], folder, fail, take), hardware=hardware, models=models, raw=raw,
                      log_configs=take(lambda: _log_extras(raw["logs"], folder, fail, "config"), {}),
                      log_tokenizers=take(lambda: _log_extras(raw["logs"], folder, fail, "tokenizer"), {}))


def _logs(value: Any, folder: Path, fail: Any, take: Any) -> dict[str, Path]:
    """{dataset: log file inside the submission folder} of `logs:` (each entry's problem collected by `take`)."""
    if not isinstance(value, dict) or not value:
        take(lambda: _raise(fail("logs", f"expected a mapping of dataset name to log file ({{dev: dev.log, test: "
                                         f"test.log}}), got {value!r}")))
        return {}
    out: dict[str, Path] = {}
    for name, rel in value.items():
        if not isinstance(name, str) or not name:
            take(lambda name=name: _raise(fail("logs", f"dataset names are strings, got {name!r}")))
            continue
        if isinstance(rel, dict):  # {file: LOG, config: EVAL_YAML, tokenizer: PATH}: how a SimulStream log was written
            bad = unknown_field(rel, LOG_KEYS)
            if bad is not None:
                take(lambda name=name, bad=bad: _raise(fail(f"logs.{name}.{bad[0]}", bad[1])))
                continue
            path = take(lambda name=name, rel=rel: _inside(rel.get("file"), folder, fail, f"logs.{name}.file"))
        else:
            path = take(lambda name=name, rel=rel: _inside(rel, folder, fail, f"logs.{name}"))
        if path is not None:
            out[name] = path
    return out


#: the keys of a `logs:` entry given as a mapping: the log, its SimulStream eval config, the model's tokenizer
LOG_KEYS = ("file", "config", "tokenizer")


def _log_extras(value: dict[str, Any], folder: Path, fail: Any, key: str) -> dict[str, Path]:
    """{dataset: its log's `config` (a file) or `tokenizer` (a tokenizer.json or folder)} of the `logs:` entries
    that name one."""
    if not isinstance(value, dict):
        return {}  # `logs:` itself is wrong: _logs says so
    return {name: _inside(rel[key], folder, fail, f"logs.{name}.{key}", folder_ok=key == "tokenizer")
            for name, rel in value.items() if isinstance(rel, dict) and rel.get(key) is not None}


def _inside(rel: Any, folder: Path, fail: Any, where: str, *, folder_ok: bool = False) -> Path:
    """An existing file (or, `folder_ok`, folder) named relative to the submission folder, inside it."""
    if not isinstance(rel, str) or not rel.strip():
        raise fail(where, f"expected a file path, got {rel!r}")
    if os.path.isabs(rel):
        raise fail(where, f"{rel!r} must be a path relative to the submission folder")
    target = (folder / rel).resolve()
    if not target.is_relative_to(folder):
        raise fail(where, f"{rel!r} points outside the submission folder")
    if not (target.is_file() or (folder_ok and target.is_dir())):
        raise fail(where, f"file not found: {folder / rel}")
    return target


def _build_spec(value: Any, folder: Path, fail: Any) -> BuildSpec:
    if value is None:
        raise fail("build", "missing required field ({dockerfile: Dockerfile} or {image: image.tar}; or, for a log "
                            "submission, logs: {test: FILE} and hardware:)")
    if not isinstance(value, dict):
        raise fail("build", f"expected a mapping ({{dockerfile: ...}} or {{image: ...}}), got {value!r}")
    bad = unknown_field(value, ("dockerfile", "image"))
    if bad is not None:
        raise fail(f"build.{bad[0]}", bad[1])
    if ("dockerfile" in value) == ("image" in value):
        raise fail("build", "give exactly one of dockerfile or image")
    key = "dockerfile" if "dockerfile" in value else "image"
    if key == "image" and isinstance(value["image"], str) and not (folder / value["image"]).is_file():
        ref = value["image"].strip()
        if "@" in ref:
            pinned = pinned_image(ref)
            if pinned is None:
                raise fail("build.image", f"{ref[:300]!r} is not an image reference pinned by digest "
                                          "(REGISTRY/TEAM/NAME@sha256:<64 hex digits>)")
            return BuildSpec(image_ref=pinned.reference)
        if tag_reference(ref) and not os.path.isabs(ref):
            raise fail("build.image", f"{ref[:300]!r} names an image by tag: pin it by digest "
                                      "(REGISTRY/TEAM/NAME@sha256:...; `harness submit` pushes a local image to the "
                                      "organizer's registry and pins it)")
    target = _inside(value[key], folder, fail, f"build.{key}")
    return BuildSpec(dockerfile=target) if key == "dockerfile" else BuildSpec(image_tar=target)


def _command(value: Any, fail: Any, optional: bool = False) -> tuple[str, ...]:
    """The container's argv; empty for an agent server without `command:` (the image's own command runs)."""
    if value is None and optional:
        return ()
    if isinstance(value, str) and value.strip():
        return ("/bin/sh", "-c", value.strip())
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    if value is None:
        raise fail("command", "missing required field (the client command run inside the container)")
    raise fail("command", f"expected a non-empty string or list of strings, got {value!r}")


_STEPS = {"prepare": "a command run once before the evaluation, in the image, network off",
          "fetch": "a command run once per image before any data is seen, in the image, that downloads into "
                   "$HARNESS_FETCH_DIR through the organizer's allow-listing proxy"}


def _step(value: Any, fail: Any, key: str) -> tuple[str, ...]:
    """The `prepare:` or `fetch:` command's argv (a string runs under /bin/sh -c); empty without one."""
    if value is None:
        return ()
    if isinstance(value, str) and value.strip():
        return ("/bin/sh", "-c", value.strip())
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise fail(key, f"expected a non-empty string or list of strings ({_STEPS[key]}), got {value!r}")
