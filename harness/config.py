"""Task config: YAML → typed, validated dataclasses.

Every error names the config file and the field (`configs/demo.yaml: tracks[0].latency_unit: ...`). Paths in the
config are relative to the config file's folder and are resolved here, once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import ConfigError
from harness.fields import name_hint, not_one_of, unknown_fields
from harness.metric_registry import (
    ALL_LATENCY_METRICS,
    LATENCY_METRICS,
    LONGFORM_LATENCY_METRICS,
    MODEL_METRICS,
    OPTIONAL_METRICS,
    QUALITY_METRICS,
    SCORED_QUALITY,
)
from harness.profiles import DEFAULT_PROFILE, PROFILES
from harness.sizes import parse_bytes
from harness.yamlio import parse_yaml, read_text

MODALITIES = ("text", "speech")
LATENCY_UNITS = ("word", "char")
TOKENIZERS = ("13a", "zh", "char", "ja-mecab", "intl", "none")
SEGMENTATIONS = ("shortform", "longform")
RESEGMENTATIONS = ("softsegmenter", "mwersegmenter")
# where a recording ends for LongYAAL: at its last reference sentence (OmniSTEval's cut) or at the end of its audio
LONGFORM_ENDS = ("reference", "audio")
LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")

# The keys each YAML mapping may hold (limits: the fields of `Limits`); anything else is a one-line error.
#: `portal:` is read by `harness portal` alone (harness/portal/phases.py): the stages below never see it
_TOP_FIELDS = ("task", "tracks", "limits", "backend", "swarm", "metrics", "fetch", "secrets", "portal")
BACKENDS = ("local", "swarm")
_SWARM_FIELDS = ("registry", "data_label", "build_engine")
_FETCH_FIELDS = ("allow", "network")
#: a `fetch.allow` entry: a host name or address (`*.` for every subdomain), optionally `:PORT`
_ALLOW_ENTRY = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?")
#: a `secrets:` entry: an environment variable's name
_SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: `swarm.build_engine` / `--build-engine` word for the engine the docker CLI reaches without `$DOCKER_HOST`
LOCAL_ENGINE = "local"
_ENGINE_URL = re.compile(r"(unix|tcp|ssh|npipe)://\S+")
_TRACK_FIELDS = ("name", "modality", "source_lang", "target_lang", "latency_unit", "tokenizer", "segment_size",
                 "computation_aware", "quality", "latency", "primary", "regimes", "datasets", "baseline",
                 "segmentation", "resegmentation", "longform_end", "anticipation", "regime_from", "profile")
_PRIMARY_FIELDS = ("quality", "latency")
_REGIME_FIELDS = ("name", "min_latency", "max_latency")
_DATASET_FIELDS = ("source", "references", "segmentation", "transcripts", "source_text", "context", "domains")
_DOMAINS_FIELDS = ("file", "name", "optional")
#: a domain's name (in `domains:` and in a domain file): letters, digits, `.`, `_`, `-`
DOMAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_MODEL_METRIC_FIELDS = ("model", "batch_size", "precision", "gpus", "optional")
#: the Python package each neural metric needs (its extra), checked for `optional: true` metrics
_METRIC_PACKAGES = {"COMET": "comet", "XCOMET": "comet", "BLEURT": "bleurt_pytorch"}
PRECISIONS = ("fp16", "fp32")
#: each neural metric's reference scorer's precision: comet-score halves the model, bleurt-pytorch does not
_PRECISION_DEFAULTS = {"BLEURT": "fp32"}
T = TypeVar("T")


def default_precision(metric: str) -> str:
    """The precision a neural metric runs in when the config does not say (its reference scorer's)."""
    return _PRECISION_DEFAULTS.get(metric, "fp16")


@dataclass(frozen=True)
class Dataset:
    """One split of a track: the source (text lines or a list of audio files) and named reference sets.

    Long-form splits add the reference segmentation (YAML, `{wav, offset, duration}` per sentence) to which the
    reference lines are aligned, and optionally the source transcripts of those sentences.
    """

    name: str
    source: Path
    references: dict[str, Path]
    segmentation: Path | None = None
    transcripts: Path | None = None
    source_text: Path | None = None  # speech: the transcript of the source, line-aligned (COMET's `src`)
    context: Path | None = None  # extra context: a list of documents, one path a line (relative to the list)
    domains: Domains | None = None  # the domain of each recording (per-domain scores), None: no domains


@dataclass(frozen=True)
class Domains:
    """A dataset's domains: one `name` for every recording, or a `file` naming each recording's domain
    (`harness.data.domains` reads it); `optional`: the domains shown apart, out of the main ranking."""

    file: Path | None = None
    name: str | None = None
    optional: tuple[str, ...] = ()


@dataclass(frozen=True)
class Regime:
    """A latency regime: submissions whose primary latency is at most `max_latency` (and, with `min_latency`, above
    it: IWSLT 2026's disjoint bands, low 0–2 s and high 2–4 s) compete inside it."""

    name: str
    max_latency: float
    min_latency: float | None = None

    def holds(self, latency: float) -> bool:
        """True if `latency` falls in this regime: `min_latency < latency <= max_latency`."""
        return latency <= self.max_latency and (self.min_latency is None or latency > self.min_latency)


@dataclass(frozen=True)
class Track:
    """One track of the task (e.g. text en→es)."""

    name: str
    modality: str
    source_lang: str
    target_lang: str
    latency_unit: str
    quality: tuple[str, ...]
    latency: tuple[str, ...]
    primary_quality: str
    primary_latency: str
    regimes: tuple[Regime, ...]
    datasets: dict[str, Dataset]
    tokenizer: str = "13a"
    segment_size: int = 1
    computation_aware: bool = True
    baseline: str | None = None
    segmentation: str = "shortform"
    resegmentation: str = "softsegmenter"
    longform_end: str = "reference"  # LongYAAL's end of a recording: its last reference sentence, or its audio's end
    profile: str = DEFAULT_PROFILE  # the campaign profile long-form runs are scored under (harness.profiles)
    anticipation: bool = False  # Average Anticipation of the references and of every run (text tracks)
    #: the dataset whose run decides a submission's latency regime on every dataset (None: each run's own latency)
    regime_from: str | None = None

    @property
    def is_longform(self) -> bool:
        """Whether an instance is a whole recording, resegmented onto the reference sentences for scoring."""
        return self.segmentation == "longform"

    @property
    def is_speech(self) -> bool:
        """Whether the source is audio (the one place that asks "is this speech?")."""
        return self.modality == "speech"

    def regime_for(self, latency: float) -> Regime | None:
        """The regime a primary latency competes in (the tightest that holds it), or None when none does."""
        return next((g for g in sorted(self.regimes, key=lambda g: g.max_latency) if g.holds(latency)), None)

    def dataset(self, name: str) -> Dataset:
        """The dataset called `name`, or a ConfigError listing the ones that exist."""
        if name not in self.datasets:
            raise ConfigError(f"track {self.name!r} has no dataset {name!r}{name_hint(name, self.datasets)}")
        return self.datasets[name]


@dataclass(frozen=True)
class Limits:
    """Resource limits for participant containers and timeouts for runs."""

    cpus: float = 1.0
    memory: str = "2g"
    pids: int = 256
    shm_size: str = "256m"
    gpus: tuple[str, ...] = ()
    instance_timeout_s: float = 120.0
    idle_timeout_s: float = 60.0
    total_timeout_s: float = 3600.0
    client_log_max_bytes: int = 1_000_000
    max_body_bytes: int = 1_000_000
    max_hypothesis_chars: int = 20_000
    """Cap on one instance's hypothesis (and on the total of its revisions, times `REVISION_BUDGET`).

    20,000 characters is over 40x the longest sentence-level reference of the bundled data and of IWSLT test
    sets (a few hundred characters); the server raises it to 10x the dataset's longest reference, so long-form
    references never hit it. Past it the instance ends as `protocol_violation` with the text truncated.
    """
    startup_timeout_s: float = 120.0  # an agent-server participant must listen within this (see harness.drivers)
    prepare_timeout_s: float = 1800.0  # a submission's `prepare:` command (run once before the streamed run)
    fetch_timeout_s: float = 3600.0  # a submission's `fetch:` command (run once per image and command, cached)
    fetch_bytes: str = "200g"  # the most a `fetch:` command may write into its volume (checked while it runs)
    server_memory: str = "2g"  # the evaluation server's container (harness code, but fed by the participant)
    server_pids: int = 128


@dataclass(frozen=True)
class SwarmSettings:
    """Where runs go on a Docker Swarm (`backend: swarm`): the registry every node pulls submission images from
    (None: a single-node swarm, images are already on the node), the node label of the node that holds the
    hidden data and the results folder (`LABEL=VALUE` or `LABEL`, meaning `LABEL=true`; None: the manager), and
    the engine images are built on before they are moved to the manager (`local` or a Docker host URL; None: the
    manager's own engine, which then needs the network the Dockerfiles' RUN steps use)."""

    registry: str | None = None
    data_label: str | None = None
    build_engine: str | None = None


@dataclass(frozen=True)
class FetchSettings:
    """Where a submission's `fetch:` step may go: the hosts its allow-listing proxy lets through (`host`,
    `host:port`, `*.domain`; nothing else) and the Docker network the proxy reaches them on (`bridge`: the
    engine's default, with the host's route out)."""

    allow: tuple[str, ...] = ()
    network: str = "bridge"


@dataclass(frozen=True)
class ModelMetric:
    """How a neural metric (COMET, XCOMET, BLEURT) is computed: its checkpoint and inference settings.

    `model` is a COMET model folder (`checkpoints/model.ckpt` beside `hparams.yaml`, as on Hugging Face) or the
    `.ckpt` file itself; for BLEURT, a bleurt-pytorch checkpoint folder (`config.json`, weights, tokenizer). The
    defaults are the reference scorer's (batch 16; half precision for COMET as comet-score, full for BLEURT);
    `gpus: 1` runs on the GPU given to scoring, `0` on the CPU.
    """

    name: str
    model: Path
    batch_size: int = 16
    precision: str = "fp16"
    gpus: int = 0
    where: str = ""  # where it was set, for error lines: `FILE: metrics.COMET` or `--comet-model`


@dataclass(frozen=True)
class TaskConfig:
    """A whole task config file."""

    path: Path
    task: str
    tracks: tuple[Track, ...]
    limits: Limits = field(default_factory=Limits)
    sha256: str = ""
    backend: str = "local"
    swarm: SwarmSettings = field(default_factory=SwarmSettings)
    metrics: dict[str, ModelMetric] = field(default_factory=dict)
    fetch: FetchSettings = field(default_factory=FetchSettings)
    #: names of the organizer's environment variables that reach a submission's `fetch:` step only (tokens)
    secrets: tuple[str, ...] = ()
    #: what the config left out, one line each (an `optional: true` metric with no checkpoint or extra here)
    notes: tuple[str, ...] = ()

    def track(self, name: str | None = None) -> Track:
        """The track called `name`; without a name, the only track (error if there are several)."""
        if name is None:
            if len(self.tracks) != 1:
                names = ", ".join(t.name for t in self.tracks)
                raise ConfigError(f"{self.path}: several tracks ({names}); name one")
            return self.tracks[0]
        for t in self.tracks:
            if t.name == name:
                return t
        raise ConfigError(f"{self.path}: no track {name!r} (has: {', '.join(t.name for t in self.tracks)})")


class _LeftOut(Exception):
    """A part of the config (a track, a dataset) had a field that could not be read: each problem is already noted,
    and the part is left out of the config read so far (raised only when collecting problems)."""


class _Reader:
    """Reads typed fields out of nested YAML mappings, naming `file: path.to.field` in every error.

    With a `problems` list it reads on past a bad field, track, dataset or missing file and lists each problem there
    (`harness check-config`); without one the first problem is raised."""

    def __init__(self, path: Path, problems: list[str] | None = None) -> None:
        self.path = path
        self.problems = problems
        self.failed = False  # a field of the part being read (`part`) could not be read

    def fail(self, where: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {where}: {message}")

    def collect(self, exc: ConfigError) -> None:
        """Note `exc` when collecting problems; raise it otherwise."""
        if self.problems is None:
            raise exc
        self.problems.append(str(exc))

    def note(self, exc: ConfigError) -> None:
        """A field that cannot be read: noted, its part marked failed (left out), when collecting; raised otherwise."""
        self.collect(exc)
        self.failed = True

    def attempt(self, read: Callable[[], T], default: T) -> T:
        """`read()` of one field; when collecting, `default` after noting its problem (`note`), so that the fields
        after it are still read."""
        try:
            return read()
        except ConfigError as exc:
            self.note(exc)
            return default

    def part(self, read: Callable[[], T]) -> T:
        """`read()` of a part (a track, a dataset) whose fields are each read with `attempt`: `_LeftOut` when one
        of them failed (every problem is noted by then); a failed part leaves its enclosing part whole."""
        outer, self.failed = self.failed, False
        try:
            value = read()
            if self.failed:
                raise _LeftOut
            return value
        finally:
            self.failed = outer

    def mapping(self, value: Any, where: str, known: tuple[str, ...] | None = None) -> dict[str, Any]:
        """`value` as a mapping; with `known`, an error for a key not in it (with a did-you-mean): the first raised,
        or each noted when collecting."""
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key, message in unknown_fields(value, known) if known is not None else []:
            # collecting: each unknown key is one line and the rest of the mapping is still read
            self.collect(self.fail(f"{where}.{key}" if where != "top level" else key, message))
        return value

    def get(self, m: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        loc = f"{where}.{key}" if where else key
        if key not in m or m[key] is None:
            if default is ...:
                raise self.fail(loc, "missing required field")
            return default
        value = m[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and kind is not bool:
            raise self.fail(loc, f"expected {getattr(kind, '__name__', kind)}, got a boolean")
        if not isinstance(value, kind):
            name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(loc, f"expected {name}, got {type(value).__name__} {value!r}")
        return value

    def choice(self, m: dict[str, Any], key: str, where: str, choices: tuple[str, ...], default: Any = ...) -> str:
        value = self.get(m, key, where, str, default)
        if value not in choices:
            raise self.fail(f"{where}.{key}" if where else key, not_one_of(value, choices))
        return value

    def names(self, m: dict[str, Any], key: str, where: str, choices: tuple[str, ...], default: Any) -> tuple[str, ...]:
        """A list of names out of `choices`: each one that is not noted (`note`), the others kept."""
        values = self.get(m, key, where, list, default)
        for i, v in enumerate(values):
            if v not in choices:
                self.note(self.fail(f"{where}.{key}[{i}]", not_one_of(v, choices)))
        return tuple(v for v in values if v in choices)

    def file(self, value: Any, where: str, must_exist: bool) -> Path:
        if not isinstance(value, str) or not value:
            raise self.fail(where, "expected a file path")
        p = Path(value)
        if not p.is_absolute():
            p = (self.path.parent / p).resolve()
        if must_exist and not p.is_file():
            self.collect(self.fail(where, f"file not found: {p}"))
        elif must_exist and p.stat().st_size == 0:
            self.collect(self.fail(where, f"empty file: {p}"))
        return p

    def language(self, m: dict[str, Any], key: str, where: str) -> str:
        """A language code (ISO 639: `en`, `es`, `zh`, optionally with a region or script: `pt-BR`)."""
        value = self.get(m, key, where, str)
        if not LANGUAGE_CODE.fullmatch(value):
            self.collect(self.fail(f"{where}.{key}", f"{value!r} is not a language code (ISO 639, e.g. en, es, "
                                   "zh, pt-BR)"))
        return value


def _dataset(r: _Reader, name: str, raw: Any, where: str, check_files: bool, longform: bool | None) -> Dataset:
    """One dataset of a track, each field read past another's problem (`longform` None: the track's segmentation
    could not be read, so the fields that depend on it are not judged)."""
    m = r.mapping(raw, where, _DATASET_FIELDS)
    extra: dict[str, Path | None] = {}
    for key in ("segmentation", "transcripts"):
        value, extra[key] = m.get(key), None
        if value is not None and longform is False:
            r.note(r.fail(f"{where}.{key}", "only long-form tracks (segmentation: longform) have one"))
        elif value is not None:
            extra[key] = r.attempt(partial(r.file, value, f"{where}.{key}", check_files), None)
    if longform and m.get("segmentation") is None:
        r.note(r.fail(f"{where}.segmentation", "missing required field (a long-form dataset needs the reference "
                      "segmentation YAML)"))
    source = r.attempt(lambda: r.file(r.get(m, "source", where, str), f"{where}.source", check_files), Path())
    refs: dict[str, Path] = r.attempt(lambda: _references(r, m, where, check_files), {})
    text = r.attempt(lambda: r.get(m, "source_text", where, str, None), None)
    source_text = None if text is None else r.attempt(partial(r.file, text, f"{where}.source_text", check_files),
                                                      None)
    context = r.attempt(lambda: _context(r, m, where, check_files), None)
    domains = r.attempt(lambda: _domains(r, m["domains"], f"{where}.domains", check_files), None) \
        if m.get("domains") is not None else None
    return Dataset(name=name, source=source, references=refs, source_text=source_text, context=context,
                   domains=domains, **extra)  # (with a field left unread, `part` leaves it out)


def _references(r: _Reader, m: dict[str, Any], where: str, check_files: bool) -> dict[str, Path]:
    """A dataset's reference sets (`references: FILE` is `{orig: FILE}`), each file checked on its own."""
    refs_raw = r.get(m, "references", where, (dict, str))
    if isinstance(refs_raw, str):
        refs_raw = {"orig": refs_raw}
    if not refs_raw:
        raise r.fail(f"{where}.references", "at least one reference set is required")
    refs = {str(k): r.attempt(partial(r.file, v, f"{where}.references.{k}", check_files), None)
            for k, v in refs_raw.items()}
    return {k: v for k, v in refs.items() if v is not None}


def _domains(r: _Reader, raw: Any, where: str, check_files: bool) -> Domains:
    """`domains: NAME`, `{name: NAME, optional: BOOL}` or `{file: FILE, optional: [NAME, ...]}`."""
    m = {"name": raw} if isinstance(raw, str) else r.mapping(raw, where, _DOMAINS_FIELDS)
    if ("file" in m) == ("name" in m):
        raise r.fail(where, "give either `name` (one domain for the whole dataset) or `file` (each recording's "
                            "domain)")
    optional: Any = m.get("optional", False if "name" in m else [])
    if "name" in m:
        name = r.get(m, "name", where, str)
        if not DOMAIN_NAME.fullmatch(name):
            raise r.fail(f"{where}.name", f"{name!r} is not a domain name (letters, digits, '.', '_', '-')")
        if not isinstance(optional, bool):
            raise r.fail(f"{where}.optional", f"expected true or false with `name`, got {optional!r}")
        return Domains(name=name, optional=(name,) if optional else ())
    if not isinstance(optional, list) or not all(isinstance(o, str) for o in optional):
        raise r.fail(f"{where}.optional", f"expected a list of domain names with `file`, got {optional!r}")
    return Domains(file=r.file(m["file"], f"{where}.file", check_files), optional=tuple(optional))


def _context(r: _Reader, m: dict[str, Any], where: str, check_files: bool) -> Path | None:
    """The dataset's context list (`context: FILE`), with each document it names checked when files are."""
    value = r.get(m, "context", where, str, None)
    if value is None:
        return None
    path = r.file(value, f"{where}.context", check_files)
    if check_files and path.is_file() and path.stat().st_size > 0:
        for problem in context_problems(path):
            r.collect(r.fail(f"{where}.context", problem))
    return path


def context_documents(list_file: Path) -> list[Path]:
    """The documents a context list names, in its order: one path a line (blank lines skipped), relative to the
    list's folder unless absolute."""
    lines = list_file.read_text(encoding="utf-8").splitlines()
    return [(list_file.parent / line.strip()).resolve() for line in lines if line.strip()]


def context_problems(list_file: Path) -> list[str]:
    """One line per document of a context list that is missing or empty (none when all are there)."""
    try:
        docs = context_documents(list_file)
    except (OSError, UnicodeDecodeError) as exc:
        return [f"cannot read the context list {list_file}: {exc}"]
    if not docs:
        return [f"the context list {list_file} names no document"]
    out = []
    for doc in docs:
        if not doc.is_file():
            out.append(f"context document not found: {doc} (named in {list_file})")
        elif doc.stat().st_size == 0:
            out.append(f"empty context document: {doc} (named in {list_file})")
    return out


def _segmentation(r: _Reader, m: dict[str, Any], where: str,
                  modality: str | None) -> tuple[str | None, str, str]:
    """(segmentation, resegmentation, longform_end) of a track; the last two only for long-form tracks (a
    segmentation that cannot be read is None: what depends on it is not judged; nor is what depends on a modality
    that cannot be read, None)."""
    segmentation = r.attempt(lambda: r.choice(m, "segmentation", where, SEGMENTATIONS, "shortform"), None)
    longform = None if segmentation is None else segmentation == "longform"
    if longform and modality not in (None, "speech"):
        r.note(r.fail(f"{where}.segmentation", "long-form tracks have a speech source (modality: speech)"))
    resegmentation = r.attempt(lambda: r.choice(m, "resegmentation", where, RESEGMENTATIONS, "softsegmenter"),
                               "softsegmenter")
    if "resegmentation" in m and longform is False:
        r.note(r.fail(f"{where}.resegmentation", "only long-form tracks (segmentation: longform) are resegmented"))
    longform_end = r.attempt(lambda: r.choice(m, "longform_end", where, LONGFORM_ENDS, "reference"), "reference")
    if "longform_end" in m and longform is False:
        r.note(r.fail(f"{where}.longform_end", "only long-form tracks (segmentation: longform) have recordings"))
    return segmentation, resegmentation, longform_end


def _regimes(r: _Reader, m: dict[str, Any], where: str) -> list[Regime]:
    """The track's latency regimes, each field read past another's problem (a regime with one is left out)."""
    regimes: list[Regime] = []
    listed: list[Any] = r.attempt(lambda: r.get(m, "regimes", where, list, []), [])
    for i, reg in enumerate(listed):
        regime = _regime(r, reg, f"{where}.regimes[{i}]")
        if regime is None:
            continue
        if regime.min_latency is not None and regime.min_latency >= regime.max_latency:
            r.collect(r.fail(f"{where}.regimes[{i}].min_latency", f"{regime.min_latency:g} is not below "
                                                                  f"max_latency {regime.max_latency:g}"))
            continue
        if any(regime.name == other.name for other in regimes):
            r.collect(r.fail(f"{where}.regimes[{i}].name", f"duplicate regime name {regime.name!r}"))
            continue
        regimes.append(regime)
    return regimes


def _regime(r: _Reader, raw: Any, where: str) -> Regime | None:
    """One regime (`{name, max_latency, min_latency}`), or None after noting why it cannot be read."""
    rm = r.attempt(lambda: r.mapping(raw, where, _REGIME_FIELDS), None)
    if rm is None:
        return None
    name = r.attempt(lambda: r.get(rm, "name", where, str), None)
    max_latency = r.attempt(lambda: r.get(rm, "max_latency", where, float), None)
    min_latency = r.attempt(lambda: r.get(rm, "min_latency", where, float, None), None)
    if name is None or max_latency is None:
        return None
    return Regime(name, max_latency, min_latency)


def _datasets(r: _Reader, m: dict[str, Any], where: str, check_files: bool,
              longform: bool | None) -> dict[str, Dataset]:
    """The track's datasets; one with a problem is left out (each problem noted), the track still read."""
    ds_raw: dict[str, Any] = r.attempt(lambda: r.mapping(r.get(m, "datasets", where, dict), f"{where}.datasets"),
                                       {})
    datasets: dict[str, Dataset] = {}
    for k, v in ds_raw.items():
        try:
            datasets[str(k)] = r.part(partial(_dataset, r, str(k), v, f"{where}.datasets.{k}", check_files, longform))
        except _LeftOut:
            continue
        except ConfigError as exc:
            r.collect(exc)
    return datasets


def _track(r: _Reader, raw: Any, where: str, check_files: bool) -> Track:
    """One track, each field read past another's problem (`r.part` leaves a track with one out)."""
    m = r.mapping(raw, where, _TRACK_FIELDS)
    name = r.attempt(lambda: r.get(m, "name", where, str), "")
    modality = r.attempt(lambda: r.choice(m, "modality", where, MODALITIES), None)
    segmentation, resegmentation, longform_end = _segmentation(r, m, where, modality)
    longform = None if segmentation is None else segmentation == "longform"
    profile = _profile(r, m, where, longform)
    if "resegmentation" not in m and PROFILES[profile].quality_resegmentation:
        resegmentation = PROFILES[profile].quality_resegmentation or resegmentation  # the campaign's own default
    latency_names = {True: LONGFORM_LATENCY_METRICS, False: ALL_LATENCY_METRICS,
                     None: ALL_LATENCY_METRICS + LONGFORM_LATENCY_METRICS}[longform]
    default_quality = tuple(q for q in QUALITY_METRICS if q not in OPTIONAL_METRICS)
    quality = r.attempt(lambda: r.names(m, "quality", where, SCORED_QUALITY, list(default_quality)), default_quality)
    default_latency = tuple(n for n in latency_names if n in (LATENCY_METRICS + LONGFORM_LATENCY_METRICS))
    latency = r.attempt(lambda: r.names(m, "latency", where, latency_names, list(default_latency)), default_latency)
    pq, pl = _primary(r, m, where, quality, latency, latency_names, longform)
    regimes = _regimes(r, m, where)
    datasets = _datasets(r, m, where, check_files, longform)
    default_seg = 320 if modality == "speech" else 1
    segment_size = r.attempt(lambda: r.get(m, "segment_size", where, int, default_seg), default_seg)
    if segment_size <= 0:
        r.note(r.fail(f"{where}.segment_size", "must be positive"))
    target = str(m.get("target_lang") or "").split("-")[0].split("_")[0].lower()
    return Track(
        name=name,
        modality=modality or "",  # (a track with a field left unread is left out: `r.part`)
        source_lang=r.attempt(lambda: r.language(m, "source_lang", where), ""),
        target_lang=r.attempt(lambda: r.language(m, "target_lang", where), ""),
        latency_unit=r.attempt(lambda: r.choice(m, "latency_unit", where, LATENCY_UNITS, "word"), "word"),
        quality=quality,
        latency=latency,
        primary_quality=pq,
        primary_latency=pl,
        regimes=tuple(regimes),
        datasets=datasets,
        tokenizer=r.attempt(lambda: r.choice(m, "tokenizer", where, TOKENIZERS,
                                             PROFILES[profile].tokenizer_for(target)), "13a"),
        segment_size=segment_size,
        computation_aware=r.attempt(lambda: r.get(m, "computation_aware", where, bool, True), True),
        baseline=r.attempt(lambda: r.get(m, "baseline", where, str, None), None),
        segmentation=segmentation or "shortform",
        resegmentation=resegmentation,
        longform_end=longform_end,
        profile=profile,
        anticipation=_anticipation(r, m, where, modality),
        regime_from=_regime_from(r, m, where, datasets),
    )


def _primary(r: _Reader, m: dict[str, Any], where: str, quality: tuple[str, ...], latency: tuple[str, ...],
             latency_names: tuple[str, ...], longform: bool | None) -> tuple[str, str]:
    """(primary quality, primary latency) of `primary: {quality, latency}`, each a metric of the track's lists."""
    primary: dict[str, Any] = r.attempt(lambda: r.mapping(r.get(m, "primary", where, dict, {}), f"{where}.primary",
                                                          _PRIMARY_FIELDS), {})
    pq = r.attempt(lambda: r.choice(primary, "quality", f"{where}.primary", SCORED_QUALITY,
                                    quality[0] if quality else "BLEU"), None)
    pl = r.attempt(lambda: r.choice(primary, "latency", f"{where}.primary", latency_names,
                                    "LongYAAL" if longform else "LAAL"), None)
    for kind, chosen, listed in (("quality", pq, quality), ("latency", pl, latency)):
        if kind in primary and chosen is not None and chosen not in listed:  # scored and shown with its list's
            r.collect(r.fail(f"{where}.primary.{kind}", f"{chosen} is not in the track's {kind} list "
                                                       f"[{', '.join(listed)}]: add it there or pick one of those"))
    return pq or "", pl or ""


def _profile(r: _Reader, m: dict[str, Any], where: str, longform: bool | None) -> str:
    """`profile: iwslt2025`: the campaign whose official tool's semantics score this long-form track."""
    profile = r.attempt(lambda: r.choice(m, "profile", where, tuple(PROFILES), DEFAULT_PROFILE), DEFAULT_PROFILE)
    if "profile" in m and longform is False:
        r.note(r.fail(f"{where}.profile", "only long-form tracks (segmentation: longform) are scored under a "
                                          "profile"))
    return profile


def _regime_from(r: _Reader, m: dict[str, Any], where: str, datasets: dict[str, Dataset]) -> str | None:
    """`regime_from: dev`: the dataset (of this track) whose primary latency decides every submission's regime."""
    value = r.attempt(lambda: r.get(m, "regime_from", where, str, None), None)
    if value is not None and datasets and value not in datasets:
        r.collect(r.fail(f"{where}.regime_from", f"{not_one_of(value, tuple(datasets))} (the track's datasets)"))
        return None
    return value


def _anticipation(r: _Reader, m: dict[str, Any], where: str, modality: str | None) -> bool:
    """`anticipation: true`: Average Anticipation, for text tracks (a modality that cannot be read is not judged)."""
    value = r.attempt(lambda: r.get(m, "anticipation", where, bool, False), False)
    if value and modality not in (None, "text"):
        r.note(r.fail(f"{where}.anticipation", "needs source words: text tracks only"))
    return value


def _size(r: _Reader, m: dict[str, Any], key: str, default: str) -> str:
    """A byte size such as `2g` or `256m`, checked here so a typo fails at load time, not after a Docker run."""
    value = r.get(m, key, "limits", (str, int), default)
    try:
        size = parse_bytes(value)
    except ValueError as exc:
        raise r.fail(f"limits.{key}", str(exc)) from None
    if size <= 0:
        raise r.fail(f"limits.{key}", f"must be a positive size, got {value!r}")
    return str(value)


def _positive(r: _Reader, m: dict[str, Any], key: str, default: float) -> float:
    value = r.get(m, key, "limits", float, default)
    if value <= 0:
        raise r.fail(f"limits.{key}", f"must be a positive number of seconds, got {value!r}")
    return float(value)


def _limits(r: _Reader, raw: Any) -> Limits:
    """The `limits:` block, each field read past another's problem (the default kept for a wrong one)."""
    m = r.mapping(raw, "limits", tuple(f.name for f in fields(Limits)))
    d = Limits()

    def number(key: str, kind: type) -> Any:
        return r.attempt(lambda: r.get(m, key, "limits", kind, getattr(d, key)), getattr(d, key))

    def size(key: str) -> str:
        return r.attempt(lambda: _size(r, m, key, getattr(d, key)), getattr(d, key))

    def seconds(key: str) -> float:
        return r.attempt(lambda: _positive(r, m, key, getattr(d, key)), getattr(d, key))

    gpus = r.attempt(lambda: r.get(m, "gpus", "limits", (int, list, str), 0), 0)
    if isinstance(gpus, int):
        gpus_t: tuple[str, ...] = tuple(str(i) for i in range(gpus))
    elif isinstance(gpus, str):
        gpus_t = tuple(g.strip() for g in gpus.split(",") if g.strip())
    else:
        gpus_t = tuple(str(g) for g in gpus)
    return Limits(
        cpus=number("cpus", float),
        memory=size("memory"),
        pids=number("pids", int),
        shm_size=size("shm_size"),
        gpus=gpus_t,
        instance_timeout_s=number("instance_timeout_s", float),
        idle_timeout_s=number("idle_timeout_s", float),
        total_timeout_s=number("total_timeout_s", float),
        startup_timeout_s=number("startup_timeout_s", float),
        prepare_timeout_s=seconds("prepare_timeout_s"),
        fetch_timeout_s=seconds("fetch_timeout_s"),
        fetch_bytes=size("fetch_bytes"),
        client_log_max_bytes=number("client_log_max_bytes", int),
        max_body_bytes=number("max_body_bytes", int),
        max_hypothesis_chars=number("max_hypothesis_chars", int),
        server_memory=size("server_memory"),
        server_pids=number("server_pids", int),
    )


def load_config(path: str | Path, check_files: bool = True, problems: list[str] | None = None) -> TaskConfig:
    """Read and validate a task config. `check_files=False` skips existence checks (e.g. hidden test data; a
    command then checks the files of the dataset it runs with `require_dataset_files`). With a `problems` list,
    every problem found is appended there, one line each, and the config is read on past the ones it can skip
    (a bad track or dataset is left out); YAML and top-level errors are still raised."""
    p = Path(path)
    text = read_text(p, ConfigError, missing="config file not found")
    raw = parse_yaml(text, p, ConfigError)
    r = _Reader(p, problems)
    m = r.mapping(raw, "top level", _TOP_FIELDS)
    tracks_raw = r.get(m, "tracks", "", list)
    if not tracks_raw:
        raise r.fail("tracks", "at least one track is required")
    tracks: list[Track] = []
    indices: list[int] = []  # each track's index in the file (a track left out while collecting shifts them)
    for i, t in enumerate(tracks_raw):
        try:
            track = r.part(partial(_track, r, t, f"tracks[{i}]", check_files))
        except _LeftOut:  # each of its problems is noted
            continue
        except ConfigError as exc:
            r.collect(exc)
            continue
        if any(track.name == other.name for other in tracks):
            r.collect(r.fail(f"tracks[{i}].name", f"duplicate track name {track.name!r}"))
            continue
        tracks.append(track)
        indices.append(i)
    limits = _collected(r, lambda: _limits(r, m.get("limits") or {}), Limits())
    backend = _collected(r, lambda: r.choice(m, "backend", "", BACKENDS, "local"), "local")
    metrics, left_out = _collected(r, lambda: _model_metrics(r, m.get("metrics") or {}, check_files), ({}, {}))
    tracks = [_without(t, left_out) for t in tracks]
    for i, t in zip(indices, tracks, strict=True):
        if t.primary_quality in left_out:
            r.collect(r.fail(f"tracks[{i}].primary.quality", f"{t.primary_quality} is optional and left out here "
                                                               f"({left_out[t.primary_quality]}): rank by a metric "
                                                               "every organizer has"))
        for j, name in enumerate((*t.quality, t.primary_quality)):
            if name in MODEL_METRICS and name not in metrics:
                where = f"tracks[{i}].quality[{j}]" if j < len(t.quality) else f"tracks[{i}].primary.quality"
                r.collect(r.fail(where, f"{name} needs a checkpoint: add `metrics: {{{name}: {{model: PATH}}}}`"))
                break
    return TaskConfig(
        path=p.resolve(),
        task=_collected(r, lambda: r.get(m, "task", "", str), ""),
        tracks=tuple(tracks),
        limits=limits,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        backend=backend,
        swarm=_collected(r, lambda: _swarm(r, m.get("swarm") or {}), SwarmSettings()),
        metrics=metrics,
        fetch=_collected(r, lambda: _fetch(r, m.get("fetch") or {}), FetchSettings()),
        secrets=_collected(r, lambda: _secrets(r, m.get("secrets")), ()),
        notes=tuple(f"{r.path}: metrics.{name}: left out ({why})" for name, why in left_out.items()),
    )


def _without(track: Track, left_out: dict[str, str]) -> Track:
    """`track` with the optional metrics that are left out removed from its quality list."""
    if not any(q in left_out for q in track.quality):
        return track
    return replace(track, quality=tuple(q for q in track.quality if q not in left_out))


def _collected(r: _Reader, read: Any, default: Any) -> Any:
    """`read()`, or `default` after noting its problem when collecting (raised otherwise)."""
    try:
        return read()
    except ConfigError as exc:
        r.collect(exc)
        return default


@dataclass(frozen=True)
class DataFile:
    """One file a run of a dataset reads: a field of the config (`key`: `source`, `references.orig`,
    `segmentation`, `transcripts`, `source_text`, `context`, `domains.file`), or a file one of those lists names
    (`kind` `audio`: a recording of a speech list; `document`: a context document). `label` names it in messages."""

    label: str
    path: Path
    kind: str = "field"  # field | audio | document
    key: str | None = None  # the dataset's field (`references.orig`) for a file the config names


def _listed(list_file: Path) -> list[Path]:
    """The files a list file names, one path a line (blank lines skipped), relative to the list unless absolute;
    none when the list cannot be read (its own check reports that)."""
    try:
        lines = list_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [(list_file.parent / line.strip()).resolve() for line in lines if line.strip()]


def data_files(ds: Dataset, speech: bool) -> list[DataFile]:
    """Every file a run of `ds` reads, in one place (the resume key, the run's identity, the server's read-only
    mounts and the checks of missing files all take it from here): the config's fields (source, reference sets,
    segmentation, transcripts, source_text, context list, domain file), the documents the context list names and,
    for a speech track, every recording its list names."""
    out = [DataFile("source", ds.source, key="source")]
    out += [DataFile(f"reference {k}", v, key=f"references.{k}") for k, v in ds.references.items()]
    for key, label in (("segmentation", "segmentation"), ("transcripts", "transcripts"),
                       ("source_text", "source text"), ("context", "context list")):
        path = getattr(ds, key)
        if path is not None:
            out.append(DataFile(label, path, key=key))
    if ds.domains is not None and ds.domains.file is not None:
        out.append(DataFile("domain file", ds.domains.file, key="domains.file"))
    if ds.context is not None:
        out += [DataFile(f"context document {doc.name}", doc, "document") for doc in _listed(ds.context)]
    if speech:
        out += [DataFile(f"recording {wav}", wav, "audio") for wav in _listed(ds.source)]
    return out


def dataset_files(track: Track, name: str) -> list[tuple[str, Path]]:
    """(field, path) of every file the config names for one dataset of `track` (`datasets.dev.source`,
    `datasets.dev.references.orig`, ...), relative to the track."""
    return [(f"datasets.{name}.{f.key}", f.path) for f in data_files(track.dataset(name), False)
            if f.key is not None]


def require_dataset_files(config: TaskConfig, track: Track, name: str) -> None:
    """A ConfigError naming the first missing file of `track`'s dataset `name` (or of the checkpoints its metrics
    need): what a command that runs only this dataset checks, so missing files of other datasets do not stop it."""
    i = config.tracks.index(track)
    for where, path in dataset_files(track, name):
        if not path.is_file():
            raise ConfigError(f"{config.path}: tracks[{i}].{where}: file not found: {path}")
        if path.stat().st_size == 0:
            raise ConfigError(f"{config.path}: tracks[{i}].{where}: empty file: {path}")
    ds = track.dataset(name)
    if ds.context is not None:
        problems = context_problems(ds.context)
        if problems:
            raise ConfigError(f"{config.path}: tracks[{i}].datasets.{name}.context: {problems[0]}")
    for metric in track.quality:
        m = config.metrics.get(metric)
        if m is not None and not m.model.exists():
            raise ConfigError(f"{m.where}.model: no such checkpoint folder or file: {m.model}")


def _model_metrics(r: _Reader, raw: Any, check_files: bool) -> tuple[dict[str, ModelMetric], dict[str, str]]:
    """The `metrics:` block: per neural metric, its checkpoint (a folder or a .ckpt file) and settings; and the
    `optional: true` metrics left out here, with why ({name: why})."""
    m = r.mapping(raw, "metrics", MODEL_METRICS)
    out: dict[str, ModelMetric] = {}
    left_out: dict[str, str] = {}
    for name, block in m.items():
        where = f"metrics.{name}"
        b = r.mapping(block, where, _MODEL_METRIC_FIELDS)
        written = r.get(b, "model", where, str)
        if r.get(b, "optional", where, bool, False):
            why = _unavailable(name, written, r.path.parent)
            if why:
                left_out[name] = why
                continue
        model = Path(os.path.expandvars(written))
        if not model.is_absolute():
            model = (r.path.parent / model).resolve()
        if check_files and not model.exists():
            raise r.fail(f"{where}.model", f"no such checkpoint folder or file: {model}")
        batch_size = r.get(b, "batch_size", where, int, 16)
        if batch_size <= 0:
            raise r.fail(f"{where}.batch_size", "must be positive")
        gpus = r.get(b, "gpus", where, int, 0)
        if gpus not in (0, 1):
            raise r.fail(f"{where}.gpus", f"expected 0 (CPU) or 1 (the GPU given to scoring), got {gpus}")
        precision = r.choice(b, "precision", where, PRECISIONS, default_precision(name))
        out[name] = ModelMetric(name, model, batch_size, precision, gpus, f"{r.path}: {where}")
    return out, left_out


def _unavailable(name: str, written: str, base: Path) -> str | None:
    """Why an optional metric cannot run here (its `model` names an unset variable or a missing checkpoint, or
    its extra is not installed), else None."""
    expanded = os.path.expandvars(written)
    unset = re.findall(r"\$\{?(\w+)\}?", expanded)
    if unset or not expanded.strip():
        return f"${unset[0]} is not set" if unset else "no model named"
    model = Path(expanded) if Path(expanded).is_absolute() else (base / expanded).resolve()
    if not model.exists():
        return f"no checkpoint at {model}"
    package = _METRIC_PACKAGES.get(name)
    if package and importlib.util.find_spec(package) is None:
        return f"its Python package {package!r} is not installed"
    return None


def _swarm(r: _Reader, raw: Any) -> SwarmSettings:
    m = r.mapping(raw, "swarm", _SWARM_FIELDS)
    registry = r.get(m, "registry", "swarm", str, None)
    if registry is not None and not re.fullmatch(r"[A-Za-z0-9.-]+(:\d{1,5})?", registry):
        raise r.fail("swarm.registry", f"expected HOST:PORT, got {registry!r}")
    label = r.get(m, "data_label", "swarm", str, None)
    if label is not None and not re.fullmatch(r"[A-Za-z0-9._-]+(=[A-Za-z0-9._-]+)?", label):
        raise r.fail("swarm.data_label", f"expected LABEL or LABEL=VALUE, got {label!r}")
    engine = r.get(m, "build_engine", "swarm", str, None)
    if engine is not None and (problem := engine_problem(engine)):
        raise r.fail("swarm.build_engine", problem)
    return SwarmSettings(registry=registry, data_label=label, build_engine=engine)


def _fetch(r: _Reader, raw: Any) -> FetchSettings:
    m = r.mapping(raw, "fetch", _FETCH_FIELDS)
    allow = r.get(m, "allow", "fetch", list, [])
    for i, entry in enumerate(allow):
        if not isinstance(entry, str) or not _ALLOW_ENTRY.fullmatch(entry):
            raise r.fail(f"fetch.allow[{i}]", f"expected HOST, HOST:PORT or *.DOMAIN, got {entry!r}")
    network = r.get(m, "network", "fetch", str, "bridge")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", network):
        raise r.fail("fetch.network", f"expected a Docker network name, got {network!r}")
    return FetchSettings(allow=tuple(e.lower() for e in allow), network=network)


def _secrets(r: _Reader, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise r.fail("secrets", f"expected a list of environment variable names, got {type(raw).__name__}")
    for i, name in enumerate(raw):
        if not isinstance(name, str) or not _SECRET_NAME.fullmatch(name) or name.startswith("HARNESS_"):
            raise r.fail(f"secrets[{i}]", f"expected an environment variable's name (not HARNESS_*), got {name!r}")
    return tuple(raw)


def engine_problem(engine: str) -> str | None:
    """Why `engine` is not a build engine (`local` or a Docker host URL), or None."""
    if engine == LOCAL_ENGINE or _ENGINE_URL.fullmatch(engine):
        return None
    return (f"expected {LOCAL_ENGINE} or a Docker host URL (unix:///var/run/docker.sock, tcp://HOST:PORT, "
            f"ssh://USER@HOST), got {engine!r}")
