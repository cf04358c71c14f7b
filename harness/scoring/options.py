"""The scoring options, in one typed object: built once from a task's track or from the command line, then passed
whole through every stage that scores a run (joint mode, the server, the results stage, `harness score`).

An option that does not exist is an error, never dropped: a misspelt keyword cannot silently change a score. The
options are complete when built: no stage adds one later (the only derived copy fills in the target language a run
recorded where the options name none, `with_recorded_language`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from harness.config import LONGFORM_ENDS, Dataset, ModelMetric, TaskConfig, Track
from harness.errors import HarnessError
from harness.metric_registry import MODEL_METRICS, OPTIONAL_METRICS
from harness.profiles import DEFAULT_PROFILE, Profile, get_profile

__all__ = ["ScoringOptions", "track_scoring_options", "CHAR_LEVEL_LANGS"]

# targets scored character by character (OmniSTEval's --char_level, sacrebleu's zh/ja-mecab tokenizers)
CHAR_LEVEL_LANGS = ("zh", "ja")


@dataclass(frozen=True)
class ScoringOptions:
    """How a run is scored. `target_lang=None`: not known (METEOR falls back to English modules, SoftSegmenter
    splits no words, as OmniSTEval without `--lang`); `longform_end`: where a recording ends for LongYAAL
    (`reference`: its last reference sentence, as OmniSTEval; `audio`: the end of its audio); `profile`: the campaign
    whose official tool's semantics long-form scoring follows (`harness.profiles`); `target_unit`: the
    long-form target unit (`word`, `char`) given explicitly, which wins over the one `target_lang` implies;
    `resegmentation`: the long-form quality resegmentation (None: the one the records name, else the profile's);
    `model_metrics`: the settings of the neural metrics scored; `source_texts`: the source transcript by index, for
    the neural metrics that read the source of a speech run."""

    tokenizer: str = "13a"
    computation_aware: bool = True
    metrics: tuple[str, ...] | None = None
    also: tuple[str, ...] = ()
    target_lang: str | None = None
    reference_sets: tuple[str, ...] | None = None
    bootstrap: int = 1000
    seed: int = 12345
    resegmentation: str | None = None
    longform_end: str = "reference"
    target_unit: str | None = None
    model_metrics: Mapping[str, ModelMetric] = field(default_factory=dict)
    profile: str = DEFAULT_PROFILE
    source_texts: Sequence[str] | None = None

    def __post_init__(self) -> None:
        for name in ("metrics", "also", "reference_sets"):  # a list given is kept as the tuple it is typed as
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if self.target_unit not in (None, "word", "char"):
            raise HarnessError(f"target_unit: {self.target_unit!r} is not one of word, char")
        get_profile(self.profile)
        if self.longform_end not in LONGFORM_ENDS:
            raise HarnessError(f"longform_end: {self.longform_end!r} is not one of {', '.join(LONGFORM_ENDS)}")

    def with_recorded_language(self, target_lang: str | None) -> ScoringOptions:
        """These options with the target language a run recorded, where they name none (else these options)."""
        return self if self.target_lang is not None or target_lang is None else replace(self, target_lang=target_lang)

    def without_model_metrics(self) -> ScoringOptions:
        """These options without the neural metrics (per-domain scores do not run a model once more per domain)."""
        return replace(self, model_metrics={}, source_texts=None)

    @property
    def language(self) -> str | None:
        """The target's primary language subtag, lower case (`es` of `es-MX`), or None when not known."""
        return self.target_lang.split("-")[0].split("_")[0].lower() if self.target_lang else None

    @property
    def meteor_lang(self) -> str:
        """METEOR's language (English modules when the target language is not known, as before)."""
        return self.target_lang or "en"

    @property
    def campaign(self) -> Profile:
        """The profile's choices."""
        return get_profile(self.profile)

    @property
    def char_level_target(self) -> bool:
        """Whether the target language is written without spaces between words (zh, ja)."""
        return self.language in CHAR_LEVEL_LANGS


def track_scoring_options(track: Track, *, config: TaskConfig | None = None, dataset: Dataset | None = None,
                          metrics: Sequence[str] | None = None, bootstrap: int = 1000) -> ScoringOptions:
    """The options every stage scores a run of `track` with. With the task's `config`: the settings of the neural
    metrics the track lists and, for a `dataset` with a `source_text`, its source transcript (what the batch scores
    with); `metrics` and `bootstrap` narrow a quick look (`harness check`'s primary latency)."""
    model_metrics: dict[str, ModelMetric] = {}
    source_texts = None
    names = [n for n in (*track.quality, track.primary_quality) if n in MODEL_METRICS]
    if config is not None and names:
        model_metrics = {n: config.metrics[n] for n in names if n in config.metrics}
        if dataset is not None and dataset.source_text is not None:
            source_texts = tuple(dataset.source_text.read_text(encoding="utf-8").splitlines())
    return ScoringOptions(
        tokenizer=track.tokenizer,
        computation_aware=track.computation_aware,
        also=tuple([m for m in (*track.quality, *track.latency) if m in OPTIONAL_METRICS]
                   + (["AA"] if track.anticipation else [])),
        target_lang=track.target_lang,
        longform_end=track.longform_end,
        profile=track.profile,
        resegmentation=track.resegmentation,
        metrics=None if metrics is None else tuple(metrics),
        bootstrap=bootstrap,
        model_metrics=model_metrics,
        source_texts=source_texts,
    )
